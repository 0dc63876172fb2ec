#!/usr/bin/env bash
# The binary and the config of the package, extracted with dpkg -x, pass
# --check-config against the scratch database: the packaged config's
# queries (/usr/share/seatwatch/queries/...) exist in the package and return
# their configured columns on the booking schema.
#
# The config names absolute paths, so the extracted /usr/share is laid over
# the host's in a private mount namespace (unshare + a read-only overlay, as
# root): the packaged config is run as it is, unmodified. Without root the
# same check runs on a copy with /usr/share/seatwatch mapped to the
# extracted tree (said so in the output).
# Needs TEST_PG_DIR, SEATWATCH_SOURCE_DIR and SEATWATCH_BUILD_DIR (set by CTest).
set -euo pipefail
# shellcheck source=tests/package/package_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/package_lib.sh"
need_deb

src=${SEATWATCH_SOURCE_DIR:?}
pgdir=${TEST_PG_DIR:?}
db=sw_package_check
work=$(mktemp -d /tmp/seatwatch-pkg-check.XXXXXX)
# shellcheck disable=SC1091
source "$pgdir/env"
psql_admin() { PGOPTIONS="-c client_min_messages=warning" psql -X -q -v ON_ERROR_STOP=1 -d postgres "$@"; }
cleanup() {
  psql_admin -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" > /dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

psql_admin -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" > /dev/null
psql_admin -c "CREATE DATABASE $db" > /dev/null
psql -X -q -v ON_ERROR_STOP=1 -d "$db" -f "$src/queries/booking/schema.sql" > /dev/null

x="$work/root"
dpkg -x "$deb" "$x"
config="$x/etc/seatwatch/seatwatch.toml"
# Every path the packaged config names is in the package.
paths=$(grep -o '"/usr/share/seatwatch/[^"]*"' "$config" | tr -d '"' | sort -u)
[ -n "$paths" ] || fail "the packaged config names no /usr/share/seatwatch path"
while IFS= read -r p; do [ -f "$x$p" ] || fail "the packaged config names $p, not in the package"; done <<<"$paths"
if grep -q '"\.\./' "$config"; then fail "the packaged config has relative paths"; fi

export SEATWATCH_DSN="host=$PGHOST port=$PGPORT user=$PGUSER dbname=$db"
if [ "$(id -u)" -eq 0 ] && unshare --mount --propagation private true 2> /dev/null; then
  mode="packaged config as is, /usr/share overlaid in a mount namespace"
  # shellcheck disable=SC2016
  out=$(unshare --mount --propagation private sh -ec '
    mount -t overlay overlay -o "lowerdir=$1/usr/share:/usr/share" /usr/share
    exec "$1/usr/bin/seatwatch" --config "$1/etc/seatwatch/seatwatch.toml" --check-config' sh "$x" 2>&1) \
    || { echo "$out"; fail "--check-config failed ($mode)"; }
else
  mode="a copy of the packaged config with /usr/share/seatwatch mapped to the extracted tree (not root)"
  sed "s#\"/usr/share/seatwatch/#\"$x/usr/share/seatwatch/#g" "$config" > "$work/seatwatch.toml"
  out=$("$x/usr/bin/seatwatch" --config "$work/seatwatch.toml" --check-config 2>&1) \
    || { echo "$out"; fail "--check-config failed ($mode)"; }
fi
echo "$out"
grep -q 'every query runs and returns its configured columns' <<<"$out" \
  || fail "--check-config did not verify the queries against the database ($mode)"
echo "ok: --check-config with $mode"
