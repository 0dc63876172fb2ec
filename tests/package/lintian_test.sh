#!/usr/bin/env bash
# lintian (Debian's own package checker) finds no error in the package; its
# warnings and notes are printed for a person to read.
set -euo pipefail
# shellcheck source=tests/package/package_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/package_lib.sh"
need_deb

out=$(lintian --display-info --fail-on none "$deb" 2>&1) || true
echo "$out"
if grep -q '^E: ' <<<"$out"; then fail "lintian reports errors"; fi
if grep -q '^W: ' <<<"$out"; then echo "note: lintian warnings above (not failures)"; fi
echo "ok: lintian $(lintian --version | awk '{print $2}'): no error"
