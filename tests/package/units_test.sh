#!/usr/bin/env bash
# systemd-analyze verify accepts both packaged units. It runs offline with
# --root: a root made of the extracted package plus the host's own system
# units (sysinit.target and the like, which the package does not ship) and
# /bin/kill (ExecReload), so ExecStart=/usr/bin/seatwatch is the packaged
# binary, and the test needs neither the package installed nor systemd
# running as PID 1. The template is verified as an instance
# (seatwatch@booking.service). A broken copy must be rejected, or the
# verification proves nothing. Then the settings the daemon depends on are
# checked as written: Type=notify, the watchdog, the hardening.
set -euo pipefail
# shellcheck source=tests/package/package_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/package_lib.sh"
need_deb

work=$(mktemp -d /tmp/seatwatch-pkg-units.XXXXXX)
trap 'rm -rf "$work"' EXIT
root="$work/root"
dpkg-deb -x "$deb" "$root"
units="$root/lib/systemd/system"
cp -a --no-clobber /lib/systemd/system/. "$units/"
mkdir -p "$root/bin" "$root/etc/systemd/system"
cp /bin/kill "$root/bin/kill"

verify() {  # verify UNIT_PATH: prints systemd-analyze's output, fails like it
  SYSTEMD_LOG_LEVEL=notice systemd-analyze verify --root="$root" --man=no "$1" 2>&1
}
for unit in "$units/seatwatch.service" "$units/seatwatch@booking.service"; do
  name=$(basename "$unit")
  out=$(verify "$unit") || { echo "$out"; fail "systemd-analyze verify rejects $name"; }
  # verify exits 0 on some problems it only prints (an unknown key is
  # ignored): any line at all about the unit is a failure.
  if grep -F "${name%%@*}" <<<"$out"; then fail "systemd-analyze verify complains about $name"; fi
  echo "systemd-analyze verify: $name OK"
done
# The control: a missing binary and an unknown key are caught.
sed -e 's#^ExecStart=/usr/bin/seatwatch #ExecStart=/usr/bin/seatwatch-missing #' \
    -e 's#^Type=notify$#Type=notify\nBogusKey=1#' "$units/seatwatch.service" > "$root/etc/systemd/system/broken.service"
if out=$(verify "$root/etc/systemd/system/broken.service"); then fail "a broken unit passed: $out"; fi
grep -q "seatwatch-missing is not executable" <<<"$out" || fail "the missing binary was not noticed: $out"
grep -q "Unknown key 'BogusKey'" <<<"$out" || fail "the unknown key was not noticed: $out"
echo "systemd-analyze verify: a broken copy is rejected"

# systemd's own rating of the sandbox, offline against the same root: at
# most 2.0 ("OK"; 0 is the best, 10 the worst). The remaining exposure is
# what seatwatch needs: the network, AF_UNIX/INET sockets, /proc/stat.
for name in seatwatch.service seatwatch@booking.service; do
  rating=$(systemd-analyze security --offline=true --root="$root" --no-pager "$name" 2>&1 | grep 'Overall exposure level') \
    || fail "systemd-analyze security cannot rate $name"
  echo "systemd-analyze security: $name: ${rating#*: }"
  systemd-analyze security --offline=true --root="$root" --threshold=20 "$name" > /dev/null 2>&1 \
    || fail "$name is exposed more than 2.0: $rating"
done

# The service's effective settings, as systemd parsed them (offline).
for key in 'Type=notify' 'WatchdogSec=2min' 'ExecReload=/bin/kill -HUP $MAINPID' 'Restart=on-failure' \
           'EnvironmentFile=-/etc/default/seatwatch' 'DynamicUser=yes' 'NoNewPrivileges=yes' \
           'ProtectSystem=strict' 'ProtectHome=yes' 'PrivateTmp=yes' 'PrivateDevices=yes' \
           'CapabilityBoundingSet=' 'RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX' \
           'SystemCallFilter=@system-service' 'SystemCallArchitectures=native'; do
  grep -qxF "$key" "$units/seatwatch.service" || fail "seatwatch.service lacks $key"
  grep -qxF "$key" "$units/seatwatch@.service" || fail "seatwatch@.service lacks $key"
done
grep -qE '^MemoryMax=[0-9]+[KMG]$' "$units/seatwatch.service" || fail "seatwatch.service lacks MemoryMax"
grep -qxF 'ExecStart=/usr/bin/seatwatch --config /etc/seatwatch/%i.toml' "$units/seatwatch@.service" \
  || fail "the template does not read /etc/seatwatch/%i.toml"
grep -qxF 'EnvironmentFile=-/etc/default/seatwatch-%i' "$units/seatwatch@.service" \
  || fail "the template does not read /etc/default/seatwatch-%i"
echo "ok: both units verified"
