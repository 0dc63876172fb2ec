#!/usr/bin/env bash
# The packaged daemon stays inside what its units allow, seen with strace
# (there is no systemd as PID 1 here to run the unit itself): the extracted
# binary and config poll the scratch database, serve /metrics and the status
# page, reload on SIGHUP and stop on SIGTERM, and over the whole run
#   - every system call it makes is in the unit's SystemCallFilter
#     (@system-service minus @privileged, as systemd-analyze expands them),
#   - every socket is AF_INET, AF_INET6 or AF_UNIX (RestrictAddressFamilies),
#   - no mapping is made writable and executable (MemoryDenyWriteExecute).
# As root the packaged config runs as it is (the extracted /usr/share laid
# over the host's in a private mount namespace, as in package.check_config);
# otherwise on a copy with its paths mapped. Skipped (77) when strace cannot
# trace here.
# Needs TEST_PG_DIR, SEATWATCH_SOURCE_DIR and SEATWATCH_BUILD_DIR (set by CTest).
set -euo pipefail
# shellcheck source=tests/package/package_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/package_lib.sh"
# shellcheck source=tests/support/seatwatch_harness.sh
source "${SEATWATCH_SOURCE_DIR:?}/tests/support/seatwatch_harness.sh"
need_deb

pgdir=${TEST_PG_DIR:?}
db=sw_package_sandbox
work=$(mktemp -d /tmp/seatwatch-pkg-sandbox.XXXXXX)
pid=""
daemon=""
# shellcheck disable=SC1091
source "$pgdir/env"
psql_admin() { PGOPTIONS="-c client_min_messages=warning" psql -X -q -v ON_ERROR_STOP=1 -d postgres "$@"; }
cleanup() {
  # The daemon first: strace outlives a SIGTERM of its own.
  if [ -n "$daemon" ]; then kill "$daemon" 2> /dev/null || true; fi
  if [ -n "$pid" ]; then kill "$pid" 2> /dev/null || true; wait "$pid" 2> /dev/null || true; fi
  psql_admin -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" > /dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

strace -f -qq -o /dev/null true 2> /dev/null || { echo "strace cannot trace here; skipped"; exit 77; }
# A sanitizer build (scripts/test --sanitize, --tsan) is not what ships: its
# runtime makes calls of its own (LeakSanitizer ptraces the process at exit).
if readelf -d "$build/daemon/seatwatch" | grep -Eq 'NEEDED.*lib(a|t|ub|l)san'; then
  echo "a sanitizer build; the sandbox is checked on release builds only; skipped"; exit 77
fi

psql_admin -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" > /dev/null
psql_admin -c "CREATE DATABASE $db" > /dev/null
psql -X -q -v ON_ERROR_STOP=1 -d "$db" -f "$SEATWATCH_SOURCE_DIR/queries/booking/schema.sql" > /dev/null
psql -X -q -v ON_ERROR_STOP=1 -d "$db" -c \
  "INSERT INTO seats (event_id, seat) SELECT 1, 'A' || n FROM generate_series(1, 10) n" > /dev/null

x="$work/root"
dpkg -x "$deb" "$x"
port=$(free_port)
# Over TCP, as most production setups; the listener is AF_INET too.
export SEATWATCH_DSN="host=127.0.0.1 port=$(cat "$pgdir/port") user=$PGUSER dbname=$db"
trace="$work/trace"
run=("$x/usr/bin/seatwatch" --config "$x/etc/seatwatch/seatwatch.toml" --listen "127.0.0.1:$port")
if [ "$(id -u)" -eq 0 ] && unshare --mount --propagation private true 2> /dev/null; then
  # shellcheck disable=SC2016
  unshare --mount --propagation private sh -ec '
    mount -t overlay overlay -o "lowerdir=$1/usr/share:/usr/share" /usr/share
    trace=$2; shift 2
    exec strace -f -qq -o "$trace" "$@"' sh "$x" "$trace" "${run[@]}" > "$work/seatwatch.log" 2>&1 &
else
  sed "s#\"/usr/share/seatwatch/#\"$x/usr/share/seatwatch/#g" "$x/etc/seatwatch/seatwatch.toml" > "$work/seatwatch.toml"
  run[2]="$work/seatwatch.toml"
  strace -f -qq -o "$trace" "${run[@]}" > "$work/seatwatch.log" 2>&1 &
fi
pid=$!
base="http://127.0.0.1:$port"
# The daemon's pid: strace's child (directly, or under unshare's sh).
wait_for 30 pgrep -f -n "^$x/usr/bin/seatwatch " > /dev/null || fail "no seatwatch process"
daemon=$(pgrep -f -n "^$x/usr/bin/seatwatch ")
# grep reads the whole scrape: with -q it would stop at the match, and under
# pipefail curl's broken pipe (exit 23) would fail the check.
up() { curl -sf "$base/metrics" | grep -x 'seatwatch_up 1' > /dev/null; }
wait_for 60 up || { cat "$work/seatwatch.log"; fail "seatwatch_up never 1"; }
curl -sf "$base/" -o /dev/null || fail "no status page"
kill -HUP "$daemon"
wait_for 30 grep -q 'configuration reloaded' "$work/seatwatch.log" || fail "no reload"
curl -sf "$base/metrics" -o /dev/null || fail "no scrape after the reload"
kill -TERM "$daemon"
wait "$pid" || fail "seatwatch (under strace) exited $?"
pid=""
daemon=""
grep -q 'seatwatch stopped' "$work/seatwatch.log" || fail "no clean stop"

# The filter as systemd expands it: groups within groups.
expand() {
  local name
  while read -r name _; do
    case "$name" in
      ''|'#'*) ;;
      @*) [ "$name" = "$1" ] || expand "$name" ;;
      *) echo "$name" ;;
    esac
  done < <(systemd-analyze syscall-filter "$1")
}
allowed=$(comm -23 <(expand @system-service | sort -u) <(expand @privileged | sort -u))
used=$(grep -oE '^[0-9]+ +[a-z0-9_]+\(' "$trace" | awk '{print $2}' | tr -d '(' | sort -u)
[ -n "$used" ] || fail "nothing traced"
outside=$(comm -23 <(echo "$used") <(echo "$allowed"))
[ -z "$outside" ] || fail "system calls outside SystemCallFilter=@system-service ~@privileged: $outside"
echo "system calls: $(wc -l <<<"$used"), all in @system-service ~@privileged: $(tr '\n' ' ' <<<"$used")"

families=$(grep -oE '(socket|socketpair)\(AF_[A-Z0-9]+' "$trace" | sed 's/.*(//' | sort -u)
for family in $families; do
  case "$family" in AF_INET|AF_INET6|AF_UNIX) ;; *) fail "a socket of $family, outside RestrictAddressFamilies" ;; esac
done
echo "socket families: $(tr '\n' ' ' <<<"$families")"
if grep -E '(mmap|mprotect|pkey_mprotect)\(.*PROT_(READ\|)?(WRITE\|EXEC|EXEC\|WRITE)' "$trace"; then
  fail "a writable and executable mapping (MemoryDenyWriteExecute)"
fi
echo "ok: the packaged daemon stays within the units' system call filter, address families and W^X"
