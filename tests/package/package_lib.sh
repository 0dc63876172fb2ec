# shellcheck shell=bash
# Shared by the package tests: sourced, never run. Needs SEATWATCH_BUILD_DIR
# (set by CTest); package.build makes the .deb there, the others read it.

fail() { echo "FAIL: $*" >&2; exit 1; }

build=${SEATWATCH_BUILD_DIR:?}
pkg_dir="$build/package"
version=$(sed -n 's/^CPACK_PACKAGE_VERSION "\(.*\)"$/\1/p; s/^set(CPACK_PACKAGE_VERSION "\(.*\)")$/\1/p' \
  "$build/CPackConfig.cmake" | head -n1)
[ -n "$version" ] || fail "no CPACK_PACKAGE_VERSION in $build/CPackConfig.cmake"
deb="$pkg_dir/seatwatch_${version}_$(dpkg --print-architecture).deb"

need_deb() { [ -f "$deb" ] || fail "$deb not built (package.build makes it)"; }
