#!/usr/bin/env bash
# TLS and Basic auth end to end, with certificates made here by openssl (a
# CA, server certificates with SAN 127.0.0.1, a client CA and client
# certificates) and a bcrypt hash made by htpasswd, against the daemon on the
# scratch PostgreSQL:
#   1. TLS + auth: curl succeeds with the CA and fails without it; plain HTTP
#      to the TLS port gets no metrics; no or a wrong password gets a 401 with
#      the challenge, the right one a 200; the probes answer without
#      credentials; a real Prometheus scrapes over https with basic_auth and
#      tls_config.ca_file and has up == 1; rotation: new files + SIGHUP and
#      openssl s_client sees the new serial; a bad new certificate (also an
#      expired or not yet valid one) is logged and the old serial still
#      served; a changed listen is logged as needing a restart; the served
#      certificate's notAfter is exported and, being 2 days away, warned
#      about; --check-config and a start refuse an expired certificate.
#   2. A restart with tls_client_ca_file, tls_min_version = "1.3" and
#      auth_exempt_probes = false: no client certificate, or one from another
#      CA, is refused, the right one served (Prometheus too, with
#      cert_file/key_file); curl --tls-max 1.2 is refused; the probes need
#      credentials.
# Needs TEST_PG_DIR, SEATWATCH_SOURCE_DIR and SEATWATCH_BINARY (set by CTest).
set -euo pipefail

src=${SEATWATCH_SOURCE_DIR:?}
bin=${SEATWATCH_BINARY:?}
pgdir=${TEST_PG_DIR:?}
work=$(mktemp -d /tmp/seatwatch-tls-e2e.XXXXXX)
certs=$work/certs
mkdir "$certs"
pids=()
db=sw_tls_e2e
sw_pid=""

cleanup() { end_e2e; }
trap cleanup EXIT

# shellcheck source=tests/support/seatwatch_harness.sh
source "$(dirname "${BASH_SOURCE[0]}")/../support/seatwatch_harness.sh"

for tool in openssl curl htpasswd prometheus; do
  command -v "$tool" > /dev/null || fail "$tool is not installed (scripts/lib/deps.sh)"
done

# shellcheck disable=SC1091
source "$pgdir/env"
psql_admin -c "DROP DATABASE IF EXISTS sw_tls_e2e WITH (FORCE)" >/dev/null
psql_admin -c "CREATE DATABASE sw_tls_e2e" >/dev/null
psql -X -q -v ON_ERROR_STOP=1 -d sw_tls_e2e -f "$src/queries/booking/schema.sql" >/dev/null

# --- certificates -----------------------------------------------------------
quiet() { "$@" > "$work/openssl.log" 2>&1 || { cat "$work/openssl.log"; fail "$*"; }; }
make_ca() {  # make_ca NAME
  quiet openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
    -subj "/CN=seatwatch test $1" -keyout "$certs/$1.key" -out "$certs/$1.crt"
}
make_cert() {  # make_cert NAME CA SERIAL EXTENSIONS
  quiet openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$1" \
    -keyout "$certs/$1.key" -out "$certs/$1.csr"
  printf '%b\n' "$4" > "$certs/$1.ext"
  quiet openssl x509 -req -in "$certs/$1.csr" -CA "$certs/$2.crt" -CAkey "$certs/$2.key" \
    -set_serial "$3" -days 2 -extfile "$certs/$1.ext" -out "$certs/$1.crt"
}
# make_dated_cert NAME CA SERIAL START END: openssl x509 dates a certificate
# from now only; openssl ca takes any dates (YYYYMMDDHHMMSSZ).
make_dated_cert() {
  quiet openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$1" \
    -keyout "$certs/$1.key" -out "$certs/$1.csr"
  mkdir -p "$certs/ca-db"
  touch "$certs/ca-db/index.txt"
  echo "$3" > "$certs/ca-db/serial"
  printf '%s\n' '[ca]' 'default_ca = test_ca' '[test_ca]' "database = $certs/ca-db/index.txt" \
    "new_certs_dir = $certs/ca-db" "serial = $certs/ca-db/serial" 'default_md = sha256' \
    'policy = any' 'unique_subject = no' '[any]' 'commonName = supplied' > "$certs/ca.cnf"
  quiet openssl ca -batch -config "$certs/ca.cnf" -cert "$certs/$2.crt" -keyfile "$certs/$2.key" \
    -in "$certs/$1.csr" -out "$certs/$1.crt" -startdate "$4" -enddate "$5" -notext
}
server_ext='subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth'
client_ext='extendedKeyUsage=clientAuth'
make_ca ca
make_ca clientca
make_ca otherca
make_cert server1 ca 0x5EA71001 "$server_ext"
make_cert server2 ca 0x5EA71002 "$server_ext"
make_cert client clientca 0x0C1 "$client_ext"
make_cert stranger otherca 0x0C2 "$client_ext"
make_dated_cert expired ca 5EA71003 20200101000000Z 20200201000000Z
make_dated_cert early ca 5EA71004 20990101000000Z 20990201000000Z

password='correct horse battery staple'
hash=$(htpasswd -nbBC 10 prometheus "$password" | head -1 | cut -d: -f2-)
case "$hash" in '$2y$10$'*) ;; *) fail "htpasswd made no bcrypt hash: $hash" ;; esac

# The files the daemon serves; rotation replaces them.
cp "$certs/server1.crt" "$work/tls.crt"
cp "$certs/server1.key" "$work/tls.key"

# --- the daemon -------------------------------------------------------------
# write_config FILE PORT EXTRA_HTTP_KEYS: the shipped config on the scratch
# database, TLS files relative to the config's folder.
write_config() {
  sed -e "s#\"\\.\\./queries/#\"$src/queries/#g" \
      -e 's#interval = "10s"#interval = "1s"#' \
      -e "s#^listen = \"127.0.0.1:9646\"#listen = \"127.0.0.1:$2\"\\ntls_cert_file = \"tls.crt\"\\ntls_key_file = \"tls.key\"$3#" \
      "$src/config/seatwatch.toml" > "$1"
  printf '\n[http.basic_auth]\nusers = { prometheus = "%s" }\n' "$hash" >> "$1"
}
start_daemon() {  # start_daemon CONFIG LOG
  SEATWATCH_DSN="host=$PGHOST port=$PGPORT user=postgres dbname=sw_tls_e2e" \
    "$bin" --config "$1" > "$2" 2>&1 &
  sw_pid=$!
  pids+=("$sw_pid")
}
stop_daemon() {
  kill "$sw_pid"
  wait "$sw_pid" || true
}

port_a=$(free_port)
port_b=$(free_port)
[ "$port_a" != "$port_b" ] || port_b=$(free_port)
write_config "$work/seatwatch.toml" "$port_a" ""
SEATWATCH_DSN="host=$PGHOST port=$PGPORT user=postgres dbname=sw_tls_e2e" \
  "$bin" --config "$work/seatwatch.toml" --check-config > "$work/check.txt" 2>&1 \
  || { cat "$work/check.txt"; fail "--check-config refused the TLS config"; }
grep -q "^http: 127.0.0.1:$port_a over HTTPS (TLS 1.2 and later, certificate serial 5EA71001 /CN=server1 until .*), basic auth: 1 user (/healthz and /readyz exempt)$" "$work/check.txt" \
  || { cat "$work/check.txt"; fail "--check-config does not describe TLS and auth"; }
echo "ok: --check-config: $(grep '^http: ' "$work/check.txt")"
# The certificates are made for 2 days: less than the 14 days that warrant a warning.
grep -q "^warning: http.tls_cert_file: $work/tls.crt expires at 20[0-9-]*T[0-9:]*Z, in [12] days*: renew it" "$work/check.txt" \
  || { cat "$work/check.txt"; fail "--check-config does not warn of a certificate that expires in 2 days"; }
echo "ok: --check-config: $(grep '^warning: http' "$work/check.txt")"

# An expired certificate: --check-config and a start refuse it (exit 2, as any config error),
# naming the file and its dates.
sed "s#tls_cert_file = \"tls.crt\"#tls_cert_file = \"certs/expired.crt\"#; s#tls_key_file = \"tls.key\"#tls_key_file = \"certs/expired.key\"#" \
  "$work/seatwatch.toml" > "$work/expired.toml"
expired_error="http.tls_cert_file: $certs/expired.crt expired at 2020-02-01T00:00:00Z (valid from 2020-01-01T00:00:00Z until 2020-02-01T00:00:00Z)"
for mode in --check-config start; do
  status=0
  if [ $mode = start ]; then
    SEATWATCH_DSN="host=$PGHOST port=$PGPORT user=postgres dbname=sw_tls_e2e" \
      timeout 20 "$bin" --config "$work/expired.toml" > "$work/expired.txt" 2>&1 || status=$?
  else
    SEATWATCH_DSN="host=$PGHOST port=$PGPORT user=postgres dbname=sw_tls_e2e" \
      "$bin" --config "$work/expired.toml" --check-config > "$work/expired.txt" 2>&1 || status=$?
  fi
  [ $status = 2 ] || { cat "$work/expired.txt"; fail "$mode with an expired certificate exited $status, not 2"; }
  grep -qF "$expired_error" "$work/expired.txt" || { cat "$work/expired.txt"; fail "$mode does not name the expired certificate and its dates"; }
done
echo "ok: --check-config and a start refuse an expired certificate: $(grep -o 'http.tls_cert_file: .*' "$work/expired.txt")"
start_daemon "$work/seatwatch.toml" "$work/seatwatch.log"
base="https://127.0.0.1:$port_a"
tls_curl() { curl -sS --max-time 10 --cacert "$certs/ca.crt" "$@"; }
wait_for 30 tls_curl -f "$base/readyz" -o /dev/null 2> /dev/null \
  || { cat "$work/seatwatch.log"; fail "seatwatch not ready over https"; }

# --- 1. TLS and Basic auth --------------------------------------------------
tls_curl -f -u "prometheus:$password" "$base/metrics" -o "$work/metrics.txt"
grep -q '^seatwatch_up ' "$work/metrics.txt" || fail "no seatwatch_up in the https scrape"
echo "ok: curl over TLS with the CA and the right password gets the metrics"

# expiry_of CERT: its notAfter in unix seconds, as the metric says it.
expiry_of() { date -u -d "$(openssl x509 -in "$1" -noout -enddate | cut -d= -f2)" +%s; }
exported_expiry() {
  tls_curl -sf -u "prometheus:$password" "$base/metrics" \
    | sed -n 's/^seatwatch_tls_certificate_expiry_timestamp_seconds \([0-9e.+]*\)$/\1/p' \
    | python3 -c 'import sys; print(int(float(sys.stdin.read())))'
}
[ "$(exported_expiry)" = "$(expiry_of "$certs/server1.crt")" ] \
  || fail "seatwatch_tls_certificate_expiry_timestamp_seconds is $(exported_expiry), not server1's notAfter $(expiry_of "$certs/server1.crt")"
grep -q 'level=warn msg="TLS certificate expires soon: renew it, then send SIGHUP".*serial=5EA71001.*expires_in="[12] days*"' "$work/seatwatch.log" \
  || { grep TLS "$work/seatwatch.log"; fail "no warning at start of a certificate that expires in 2 days"; }
echo "ok: seatwatch_tls_certificate_expiry_timestamp_seconds is the served certificate's notAfter, and its nearness warned about"

if curl -sS --max-time 10 -u "prometheus:$password" "$base/metrics" -o /dev/null 2> "$work/curl.err"; then
  fail "curl without the CA accepted the certificate"
fi
grep -qi 'certificate' "$work/curl.err" || { cat "$work/curl.err"; fail "curl without the CA failed for another reason"; }
echo "ok: curl without the CA refuses the certificate ($(head -1 "$work/curl.err"))"

plain=$(curl -s --max-time 10 -u "prometheus:$password" "http://127.0.0.1:$port_a/metrics" || true)
if grep -q 'seatwatch_' <<< "$plain"; then fail "plain HTTP to the TLS port got metrics"; fi
echo "ok: plain HTTP to the TLS port gets no metrics"

# A socket that never starts its handshake must not keep a worker: it is
# closed by the request timeout (2 s; 20 s allowed for a loaded machine).
python3 - "$port_a" <<'PY' || fail "a silent socket on the TLS port was not closed"
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.settimeout(20)
try:
    sys.exit(0 if s.recv(1) == b"" else 1)
except ConnectionResetError:
    sys.exit(0)
PY
echo "ok: a socket that sends no ClientHello is closed"

status_of() { tls_curl -s -o /dev/null -w '%{http_code}' "$@"; }
tls_curl -s -D "$work/401.headers" -o /dev/null -u "prometheus:wrong" "$base/metrics"
head -1 "$work/401.headers" | grep -q ' 401' || { cat "$work/401.headers"; fail "a wrong password did not get a 401"; }
grep -qi '^WWW-Authenticate: Basic realm="seatwatch", charset="UTF-8"' "$work/401.headers" \
  || { cat "$work/401.headers"; fail "the 401 has no WWW-Authenticate: Basic challenge"; }
[ "$(status_of "$base/metrics")" = 401 ] || fail "no credentials did not get a 401"
[ "$(status_of -u "grafana:$password" "$base/metrics")" = 401 ] || fail "an unknown user did not get a 401"
[ "$(status_of -u "prometheus:$password" "$base/metrics")" = 200 ] || fail "the right password did not get a 200"
[ "$(status_of -u "prometheus:$password" "$base/api/invariants")" = 200 ] || fail "/api/invariants with the password"
[ "$(status_of "$base/api/invariants")" = 401 ] || fail "/api/invariants without credentials is not a 401"
echo "ok: no, unknown or wrong credentials get 401 with the challenge; the right password 200"

[ "$(status_of "$base/healthz")" = 200 ] || fail "/healthz is not exempt"
[ "$(status_of "$base/readyz")" = 200 ] || fail "/readyz is not exempt"
echo "ok: /healthz and /readyz answer without credentials (auth_exempt_probes default)"

[ "$(status_of --tls-max 1.2 -u "prometheus:$password" "$base/metrics")" = 200 ] \
  || fail "TLS 1.2 was refused with tls_min_version at its default 1.2"
# CivetWeb sets OpenSSL 1.1 option bits that mean "no extended master
# secret" (among others) in OpenSSL 3; seatwatch resets them.
openssl s_client -connect "127.0.0.1:$port_a" -tls1_2 -CAfile "$certs/ca.crt" < /dev/null > "$work/s_client.txt" 2>&1 || true
grep -q 'Extended master secret: yes' "$work/s_client.txt" || { cat "$work/s_client.txt"; fail "TLS 1.2 without extended master secret"; }
echo "ok: TLS 1.2 is served by default, with extended master secret"

# --- Prometheus over https --------------------------------------------------
prom_port=$(free_port)
cat > "$work/prometheus.yml" <<YAML
global:
  scrape_interval: 1s
scrape_configs:
  - job_name: seatwatch-tls
    scheme: https
    basic_auth:
      username: prometheus
      password: "$password"
    tls_config:
      ca_file: $certs/ca.crt
    static_configs:
      - targets: ["127.0.0.1:$port_a"]
  - job_name: seatwatch-mtls
    scheme: https
    basic_auth:
      username: prometheus
      password: "$password"
    tls_config:
      ca_file: $certs/ca.crt
      cert_file: $certs/client.crt
      key_file: $certs/client.key
    static_configs:
      - targets: ["127.0.0.1:$port_b"]
YAML
launch_prometheus
up_of() {  # prints the value of up{job=$1}, or nothing
  curl -sf --get "$prom/api/v1/query" --data-urlencode "query=up{job=\"$1\"}" | python3 -c '
import json, sys
for r in json.load(sys.stdin)["data"]["result"]:
    print(r["value"][1])'
}
job_up() { [ "$(up_of "$1")" = 1 ]; }
target_error() {
  curl -sf "$prom/api/v1/targets" | python3 -c '
import json, sys
for t in json.load(sys.stdin)["data"]["activeTargets"]:
    print(t["labels"]["job"], t["health"], t["lastError"])'
}
wait_for 60 job_up seatwatch-tls || { target_error; fail "Prometheus did not scrape over https (up != 1)"; }
echo "ok: Prometheus scrapes over scheme https with basic_auth and tls_config.ca_file: up == 1"

# --- rotation ---------------------------------------------------------------
served_serial() {
  openssl s_client -connect "127.0.0.1:$port_a" -servername localhost -CAfile "$certs/ca.crt" \
    < /dev/null 2> /dev/null | openssl x509 -noout -serial 2> /dev/null
}
[ "$(served_serial)" = "serial=5EA71001" ] || fail "the first certificate is not served: $(served_serial)"
cp "$certs/server2.crt" "$work/tls.crt.new" && mv "$work/tls.crt.new" "$work/tls.crt"
cp "$certs/server2.key" "$work/tls.key.new" && mv "$work/tls.key.new" "$work/tls.key"
kill -HUP "$sw_pid"
serial_is() { [ "$(served_serial)" = "serial=$1" ]; }
wait_for 20 serial_is 5EA71002 || { tail -5 "$work/seatwatch.log"; fail "after SIGHUP the new serial is not served: $(served_serial)"; }
grep -q 'msg="TLS certificate reloaded".*serial=5EA71002' "$work/seatwatch.log" \
  || { tail -5 "$work/seatwatch.log"; fail "the reload is not logged with the new serial"; }
[ "$(status_of -u "prometheus:$password" "$base/metrics")" = 200 ] || fail "no scrape after the rotation"
[ "$(exported_expiry)" = "$(expiry_of "$certs/server2.crt")" ] || fail "the exported expiry is not server2's after the rotation"
echo "ok: rotation: new files + SIGHUP, s_client sees serial 5EA71002 without a restart"

# A bad new certificate: a key of another certificate, no PEM at all, an
# expired certificate, one not valid yet.
reloads_failed() { grep -c 'msg="reload failed; keeping the running configuration"' "$work/seatwatch.log" || true; }
for bad in key junk expired early; do
  before=$(reloads_failed)
  if [ $bad = key ]; then
    cp "$certs/server1.key" "$work/tls.key"
  elif [ $bad = junk ]; then
    cp "$certs/server2.key" "$work/tls.key"
    echo "not a certificate" > "$work/tls.crt"
  else
    cp "$certs/$bad.crt" "$work/tls.crt"
    cp "$certs/$bad.key" "$work/tls.key"
  fi
  kill -HUP "$sw_pid"
  more_failed() { [ "$(reloads_failed)" -gt "$before" ]; }
  wait_for 20 more_failed || { tail -5 "$work/seatwatch.log"; fail "a bad certificate ($bad) was not refused"; }
  [ "$(served_serial)" = "serial=5EA71002" ] || fail "after a bad certificate ($bad) the old serial is not served"
  [ "$(status_of -u "prometheus:$password" "$base/metrics")" = 200 ] || fail "no scrape after a bad certificate"
done
grep 'msg="reload failed' "$work/seatwatch.log" | grep -q 'http.tls_key_file.*does not match the certificate' \
  || fail "the mismatched key is not named in the log"
grep 'msg="reload failed' "$work/seatwatch.log" | grep -q 'http.tls_cert_file.*holds no PEM certificate' \
  || fail "the broken certificate is not named in the log"
grep 'level=error msg="reload failed' "$work/seatwatch.log" \
  | grep -qF "http.tls_cert_file: $work/tls.crt expired at 2020-02-01T00:00:00Z (valid from 2020-01-01T00:00:00Z until 2020-02-01T00:00:00Z)" \
  || fail "the expired certificate is not logged at error with its file and dates"
grep 'level=error msg="reload failed' "$work/seatwatch.log" \
  | grep -qF "http.tls_cert_file: $work/tls.crt is not valid before 2099-01-01T00:00:00Z" \
  || fail "the certificate not valid yet is not logged at error with its file and dates"
grep -q 'msg="TLS certificate reloaded".*serial=5EA7100[34]' "$work/seatwatch.log" \
  && fail "an expired or not yet valid certificate was logged as reloaded"
[ "$(exported_expiry)" = "$(expiry_of "$certs/server2.crt")" ] || fail "the exported expiry changed with a refused certificate"
echo "ok: a bad new certificate (also expired, or not valid yet) is logged (file:line:key, dates) and the old serial kept"

# New users on SIGHUP: the old password stops working at once (remembered
# credentials are forgotten), the new one works.
new_password='rotated password'
new_hash=$(htpasswd -nbBC 10 prometheus "$new_password" | head -1 | cut -d: -f2-)
sed -i "s#^users = { prometheus = \".*\" }#users = { prometheus = \"$new_hash\" }#" "$work/seatwatch.toml"
grep -qF "$new_hash" "$work/seatwatch.toml" || fail "the test could not write the new hash"
cp "$certs/server2.crt" "$work/tls.crt"
cp "$certs/server2.key" "$work/tls.key"
kill -HUP "$sw_pid"
new_users() { [ "$(status_of -u "prometheus:$new_password" "$base/metrics")" = 200 ]; }
wait_for 20 new_users || { tail -5 "$work/seatwatch.log"; fail "the new password is not accepted after SIGHUP"; }
[ "$(status_of -u "prometheus:$password" "$base/metrics")" = 401 ] || fail "the old password still works after SIGHUP"
echo "ok: SIGHUP reloads the users: the new password gets 200, the old one 401"

# A changed listen needs a restart: logged, and the old port still served.
cp "$certs/server2.crt" "$work/tls.crt"
cp "$certs/server2.key" "$work/tls.key"
sed -i "s#^listen = \"127.0.0.1:$port_a\"#listen = \"127.0.0.1:$port_b\"#" "$work/seatwatch.toml"
kill -HUP "$sw_pid"
restart_logged() { grep -q 'msg="http.listen changed: takes effect after a restart' "$work/seatwatch.log"; }
wait_for 20 restart_logged || { tail -5 "$work/seatwatch.log"; fail "a changed listen is not logged as needing a restart"; }
[ "$(status_of -u "prometheus:$new_password" "$base/metrics")" = 200 ] || fail "the old port stopped serving"
echo "ok: a changed listen is logged as needing a restart; the running port keeps serving"
stop_daemon

# --- 2. client certificates, TLS 1.3, probes not exempt ---------------------
write_config "$work/seatwatch-mtls.toml" "$port_b" \
  "\\ntls_client_ca_file = \"certs/clientca.crt\"\\ntls_min_version = \"1.3\"\\nauth_exempt_probes = false"
start_daemon "$work/seatwatch-mtls.toml" "$work/seatwatch-mtls.log"
base="https://127.0.0.1:$port_b"
with_client() { tls_curl --cert "$certs/client.crt" --key "$certs/client.key" "$@"; }
wait_for 30 with_client -f -u "prometheus:$password" "$base/readyz" -o /dev/null 2> /dev/null \
  || { cat "$work/seatwatch-mtls.log"; fail "seatwatch with client certificates not ready"; }

[ "$(with_client -s -o /dev/null -w '%{http_code}' -u "prometheus:$password" "$base/metrics")" = 200 ] \
  || fail "the right client certificate was not served"
out=$(tls_curl -s -u "prometheus:$password" "$base/metrics" 2>&1 || true)
if grep -q 'seatwatch_' <<< "$out"; then fail "no client certificate was served metrics"; fi
out=$(tls_curl -s --cert "$certs/stranger.crt" --key "$certs/stranger.key" -u "prometheus:$password" \
  "$base/metrics" 2>&1 || true)
if grep -q 'seatwatch_' <<< "$out"; then fail "a client certificate of another CA was served metrics"; fi
echo "ok: with tls_client_ca_file, no client certificate or one of another CA is refused, the right one served"

if with_client -s --tls-max 1.2 -o /dev/null -u "prometheus:$password" "$base/metrics" 2> "$work/curl.err"; then
  fail "TLS 1.2 was served with tls_min_version = \"1.3\""
fi
echo "ok: tls_min_version 1.3 refuses curl --tls-max 1.2 ($(head -1 "$work/curl.err"))"

[ "$(with_client -s -o /dev/null -w '%{http_code}' "$base/healthz")" = 401 ] || fail "/healthz is exempt with auth_exempt_probes = false"
[ "$(with_client -s -o /dev/null -w '%{http_code}' "$base/readyz")" = 401 ] || fail "/readyz is exempt with auth_exempt_probes = false"
[ "$(with_client -s -o /dev/null -w '%{http_code}' -u "prometheus:$password" "$base/healthz")" = 200 ] \
  || fail "/healthz with credentials"
echo "ok: with auth_exempt_probes = false the probes need credentials"

wait_for 60 job_up seatwatch-mtls || { target_error; fail "Prometheus did not scrape with its client certificate"; }
echo "ok: Prometheus scrapes with basic_auth, ca_file and a client certificate: up == 1"
echo "tls end-to-end: OK"
