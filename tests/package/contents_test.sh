#!/usr/bin/env bash
# What the package holds (dpkg-deb -c) and declares (dpkg-deb -I): the files
# an SRE looks for, the conffiles, and Depends computed by dpkg-shlibdeps
# from the binary's libraries plus libssl-dev for CivetWeb's TLS.
set -euo pipefail
# shellcheck source=tests/package/package_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/package_lib.sh"
need_deb

listing=$(dpkg-deb -c "$deb")
files=$(awk '{print $6}' <<<"$listing" | sed 's#^\./#/#')
expect_file() {
  grep -qx "$1" <<<"$files" || fail "dpkg-deb -c lacks $1"
}
for f in /usr/bin/seatwatch \
         /etc/seatwatch/seatwatch.toml \
         /etc/default/seatwatch \
         /lib/systemd/system/seatwatch.service \
         /lib/systemd/system/seatwatch@.service \
         /usr/share/seatwatch/queries/booking/reconciliation.sql \
         /usr/share/seatwatch/queries/booking/schema.sql \
         /usr/share/seatwatch/queries/booking/detail/fan_over_limit.sql \
         /usr/share/seatwatch/queries/capacity/invariants.sql \
         /usr/share/seatwatch/dashboards/seatwatch-overview.json \
         /usr/share/seatwatch/alerts/seatwatch.rules.yml \
         /usr/share/doc/seatwatch/README.md \
         /usr/share/doc/seatwatch/runbook.md \
         /usr/share/doc/seatwatch/copyright \
         /usr/share/doc/seatwatch/changelog.gz \
         /usr/share/man/man1/seatwatch.1.gz; do
  expect_file "$f"
done
# Every query file of the source tree is packaged, and nothing of the tests.
while IFS= read -r sql; do
  expect_file "/usr/share/seatwatch/queries/${sql#./}"
done < <(cd "${SEATWATCH_SOURCE_DIR:?}/queries" && find . -type f)
if grep -q '/alerts/tests/' <<<"$files"; then fail "the alert rules' promtool tests are packaged"; fi
grep -E '^-rwxr-xr-x root/root .* \./usr/bin/seatwatch$' <<<"$listing" > /dev/null || fail "/usr/bin/seatwatch is not 0755 root:root"
echo "dpkg-deb -c: $(wc -l <<<"$files") entries, every expected file present"

info=$(dpkg-deb -I "$deb")
echo "$info" | sed -n '/^ Package:/,$p'
depends=$(dpkg-deb -f "$deb" Depends)
# One entry per library the binary links: computed, with versions.
for lib in 'libpqxx-[0-9.]+' 'libpq5' 'libcivetweb1' 'libsystemd0' 'libssl3' 'libc6' 'libstdc\+\+6' \
           'zlib1g' 'libcrypt1' 'libprometheus-cpp-core[0-9.]*'; do
  grep -Eq "(^|, )$lib( \(>= [^)]+\))?(,|$)" <<<"$depends" || fail "Depends lacks $lib: $depends"
done
grep -Eq '(^|, )libpq5 \(>= [^)]+\)' <<<"$depends" || fail "libpq5 without a computed version: $depends"
grep -Eq '(^|, )libssl-dev(,|$)' <<<"$depends" || fail "Depends lacks libssl-dev: $depends"
conffiles=$(dpkg-deb --ctrl-tarfile "$deb" | tar -xO ./conffiles)
[ "$conffiles" = "$(printf '/etc/default/seatwatch\n/etc/seatwatch/seatwatch.toml')" ] || fail "conffiles: $conffiles"
echo "ok: Depends: $depends"
