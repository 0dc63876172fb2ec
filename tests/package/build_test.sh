#!/usr/bin/env bash
# The package builds with CPack from the build tree (the build itself is
# scripts/test's, before CTest): seatwatch_<version>_<arch>.deb, with the
# project's version and a stripped binary.
set -euo pipefail
# shellcheck source=tests/package/package_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/package_lib.sh"

rm -rf "$pkg_dir"
# The binary, the generated files (packaged config, changelog.gz, man page),
# then cpack: up to date after scripts/test's build, so only cpack runs.
cmake --build "$build" --target deb > "$build/cpack.log" 2>&1 || { cat "$build/cpack.log"; fail "the deb target failed"; }
[ -f "$deb" ] || { ls -l "$pkg_dir"; fail "no $deb"; }
echo "built $deb ($(stat -c %s "$deb") bytes)"

[ "$(dpkg-deb -f "$deb" Package)" = seatwatch ] || fail "Package is not seatwatch"
[ "$(dpkg-deb -f "$deb" Version)" = "$version" ] || fail "Version is not $version"
[ "$(dpkg-deb -f "$deb" Architecture)" = "$(dpkg --print-architecture)" ] || fail "wrong Architecture"

work=$(mktemp -d /tmp/seatwatch-pkg-build.XXXXXX)
trap 'rm -rf "$work"' EXIT
dpkg-deb -x "$deb" "$work"
# Stripped: no symbol table and no debug sections left (readelf, binutils).
sections=$(readelf -S -W "$work/usr/bin/seatwatch") || fail "readelf cannot read /usr/bin/seatwatch"
grep -q ' \.text ' <<<"$sections" || fail "readelf shows no .text: $sections"
if grep -Eq ' \.(symtab|debug_[a-z]+) ' <<<"$sections"; then fail "/usr/bin/seatwatch is not stripped"; fi
unstripped=$(readelf -S -W "$build/daemon/seatwatch")
grep -Eq ' \.(symtab|debug_info) ' <<<"$unstripped" || echo "note: the build's own binary has no symbols either"
"$work/usr/bin/seatwatch" --version | grep -qx "seatwatch $version" || fail "the packaged binary is not version $version"
# The changelog's latest entry is this version (lintian does not check it for
# a binary package).
changelog_version=$(zcat "$work/usr/share/doc/seatwatch/changelog.gz" | head -n1 | sed -n 's/^seatwatch (\([^)]*\)).*/\1/p')
[ "$changelog_version" = "$version" ] || fail "changelog.gz's latest entry is $changelog_version, not $version (add an entry to packaging/changelog)"
echo "ok: seatwatch $version, stripped"
