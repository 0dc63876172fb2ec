# shellcheck shell=bash
# The shell harness, shared by the end-to-end and package scripts: sourced,
# never run.

fail() { echo "FAIL: $*" >&2; exit 1; }

# The start of an end-to-end script: src, bin and pgdir from CTest's
# environment, a fresh folder $work, no $pids yet, its database's name $db,
# and the scratch cluster's libpq variables. The script then sets its EXIT
# trap (end_e2e, or a function that ends with it).
begin_e2e() {  # begin_e2e NAME DB
  src=${SEATWATCH_SOURCE_DIR:?}
  bin=${SEATWATCH_BINARY:?}
  pgdir=${TEST_PG_DIR:?}
  work=$(mktemp -d "/tmp/seatwatch-$1-e2e.XXXXXX")
  pids=()
  db=$2
  # shellcheck disable=SC1091
  source "$pgdir/env"
}

# psql on the scratch cluster (its env sourced by the script): psql_admin on
# the postgres database, psql_db on the script's own database $db.
psql_admin() { PGOPTIONS="-c client_min_messages=warning" psql -X -q -v ON_ERROR_STOP=1 -d postgres "$@"; }
psql_db() { psql -X -q -v ON_ERROR_STOP=1 -d "$db" "$@"; }

# For a script's EXIT trap: ends every process it started (their PIDs are in
# $pids), drops its database $db and removes its folder $work.
end_e2e() {
  local pid
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  psql_admin -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1 || true
  rm -rf "$work"
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

wait_for() {  # wait_for SECONDS COMMAND...
  local deadline=$((SECONDS + $1)); shift
  until "$@"; do
    [ $SECONDS -lt $deadline ] || return 1
    sleep 0.5
  done
}

# A real Prometheus scraping seatwatch every second with $work/rules.yml
# loaded, on 127.0.0.1:$prom_port; sets $prom and adds its pid to pids.
# $prom_extra_yaml, if set, is appended to its config (e.g. an alerting:
# section).
start_prometheus() {
  cat > "$work/prometheus.yml" <<YAML
global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files: ["$work/rules.yml"]
scrape_configs:
  - job_name: seatwatch
    static_configs:
      - targets: ["127.0.0.1:$sw_port"]
${prom_extra_yaml:-}
YAML
  launch_prometheus
}

# Starts a real Prometheus with the config already written to
# $work/prometheus.yml, on 127.0.0.1:$prom_port, and waits until it is ready;
# sets $prom and adds its pid to pids.
launch_prometheus() {
  promtool check config "$work/prometheus.yml" > /dev/null
  prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/tsdb" \
    --web.listen-address="127.0.0.1:$prom_port" > "$work/prometheus.log" 2>&1 &
  pids+=($!)
  prom="http://127.0.0.1:$prom_port"
  wait_for 30 curl -sf "$prom/-/ready" -o /dev/null || { cat "$work/prometheus.log"; fail "prometheus not ready"; }
}

# Drops and creates the script's database $db with the booking schema.
create_booking_db() {
  psql_admin -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null
  psql_admin -c "CREATE DATABASE $db" >/dev/null
  psql_db -f "$src/queries/booking/schema.sql" >/dev/null
}

# Writes $work/seatwatch.toml: the shipped config with absolute query paths,
# polling every INTERVAL, listening on 127.0.0.1:$sw_port (a free port it
# picks and sets); SED_ARGS (more -e expressions) are applied after those.
write_shipped_config() {  # write_shipped_config INTERVAL [SED_ARGS...]
  local interval=$1; shift
  sw_port=$(free_port)
  sed -e "s#\"\\.\\./queries/#\"$src/queries/#g" \
      -e "s#interval = \"10s\"#interval = \"$interval\"#" \
      -e "s#listen = \"127.0.0.1:9646\"#listen = \"127.0.0.1:$sw_port\"#" \
      "$@" "$src/config/seatwatch.toml" > "$work/seatwatch.toml"
}

# Starts $bin on $work/seatwatch.toml against $db as USER, its output in
# $work/seatwatch.log, adds its pid to pids and waits until /readyz answers.
start_seatwatch() {  # start_seatwatch USER
  SEATWATCH_DSN="host=$PGHOST port=$PGPORT user=$1 dbname=$db" \
    "$bin" --config "$work/seatwatch.toml" > "$work/seatwatch.log" 2>&1 &
  pids+=($!)
  wait_for 20 curl -sf "http://127.0.0.1:$sw_port/readyz" -o /dev/null ||
    { cat "$work/seatwatch.log"; fail "seatwatch not ready"; }
}
