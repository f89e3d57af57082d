#!/usr/bin/env bash
# The host agent of this host: start|run|stop|status|ready|fetch (see deploy/lib.sh). `start` runs it under its
# supervisor (deploy/supervise.sh: restarted when it exits), writing and rolling $SAND_LOGS/hostagent.log itself;
# `run` execs it in the foreground for systemd, logging to stderr.
# It embeds the local bus (TCP 9190 + per-application Unix sockets) and the local data layer (9191), serves
# the gate frontends hand requests to (9192),
# serves Prometheus metrics on 9100, and needs Kafka, Cassandra, Docker and the sandbox image.
source "$(dirname "$0")/lib.sh"

COMP=hostagent
SAND_HOSTAGENT_BUS_PORT="${SAND_HOSTAGENT_BUS_PORT:-9190}"
SAND_DATALAYER_PORT="${SAND_DATALAYER_PORT:-9191}"
SAND_HOSTAGENT_METRICS_PORT="${SAND_HOSTAGENT_METRICS_PORT:-9100}"
SAND_HOSTAGENT_GATE_PORT="${SAND_HOSTAGENT_GATE_PORT:-9192}"
export SAND_HOSTAGENT_BUS_PORT SAND_DATALAYER_PORT SAND_HOSTAGENT_METRICS_PORT SAND_HOSTAGENT_GATE_PORT
export SAND_HOSTAGENT_BUS_HOST="$SAND_BIND" SAND_DATALAYER_HOST="$SAND_BIND"
export SAND_DATALAYER_CASSANDRA_CONTACT="${SAND_DATALAYER_CASSANDRA_CONTACT:-$SAND_BIND:$SAND_CASSANDRA_PORT}"
export SAND_HOSTAGENT_SANDBOX_IMAGE="${SAND_HOSTAGENT_SANDBOX_IMAGE:-$SAND_SANDBOX_IMAGE:latest}"
export SAND_HOSTAGENT_SANDBOX_STATE_DIR="${SAND_HOSTAGENT_SANDBOX_STATE_DIR:-$SAND_DATA/hostagent}"
# Dependency installs may reach the package index this host's pip uses, unless the operator says otherwise
# (SAND_HOSTAGENT_SANDBOX_PIP_ALLOWED_HOSTS="" would allow none).
if [ -z "${SAND_HOSTAGENT_SANDBOX_PIP_ALLOWED_HOSTS+set}" ] && [ "${1:-}" = start ]; then
  while IFS='=' read -r key value; do
    case "$key" in SAND_HOSTAGENT_SANDBOX_PIP_*) [ -n "${!key+set}" ] || export "$key=$value" ;; esac
  done < <("$(dirname "$0")/pip-index.sh" 2>/dev/null)
fi
export SAND_HOSTAGENT_HOST_ID="${SAND_HOSTAGENT_HOST_ID:-$(hostname | tr -c 'A-Za-z0-9_.\n-' '-')}"
JAR="$SAND_ROOT/hostagent/target/hostagent-0.1.0-SNAPSHOT.jar"

# heap_mb: the -Xmx the agent's quotas need (it computes it from the same settings it will run with), or
# SAND_HOSTAGENT_HEAP_MB. Refuses quotas that would take more than half of this host's memory.
heap_mb() {
  local need total
  if [ -n "${SAND_HOSTAGENT_HEAP_MB:-}" ]; then echo "$SAND_HOSTAGENT_HEAP_MB"; return; fi
  need="$("$JAVA" -cp "$JAR:$SAND_ROOT/hostagent/target/lib/*" sand.hostagent.HostAgent --heap-mb 2>>"$(outfile "$COMP")")" \
    || die "$COMP" "$(outfile "$COMP")" "bad host agent settings"
  total="$(awk '/^MemTotal:/ { printf "%d", $2 / 1024 }' /proc/meminfo)"
  if [ "$need" -gt $((total / 2)) ]; then
    die "$COMP" - "the quotas need a ${need} MB heap but this host has ${total} MB: lower SAND_HOSTAGENT_BUS_QUEUED_MAX_BYTES or SAND_DATALAYER_MAX_BYTES (or set SAND_HOSTAGENT_HEAP_MB)"
  fi
  echo "$need"
}

# Metrics are served once the bus, data layer, gate and bridge are up (HostAgent.start); the bus port is checked
# too in case another process answers on the metrics port. (Not the log: a supervised log is rotated by size.)
ready() {
  curl -fsS --max-time 2 "http://$SAND_BIND:$SAND_HOSTAGENT_METRICS_PORT/metrics" >/dev/null 2>&1 \
    && port_open "$SAND_HOSTAGENT_BUS_PORT"
}

# The agent's command line: -Xmx from its quotas (heap_mb), and it exits on OutOfMemoryError (its supervisor, or
# systemd, starts it again) rather than limping on with threads that died of it. `agent_cmd file`: it writes and
# rolls $SAND_LOGS/hostagent.log itself (common's logback-file.xml); else it logs to stderr (systemd's journal).
agent_cmd() {
  local heap; heap="$(heap_mb)" || exit 1
  local logging=()
  if [ "${1:-}" = file ]; then logging=(-Dlogback.configurationFile=logback-file.xml "-Dsand.log.file=$(logfile "$COMP")"); fi
  AGENT_CMD=("$JAVA" -Xms64m "-Xmx${heap}m" -XX:+UseSerialGC -XX:+ExitOnOutOfMemoryError "${logging[@]}"
    -cp "$JAR:$SAND_ROOT/hostagent/target/lib/*" sand.hostagent.HostAgent)
}

case "${1:-}" in
  fetch) [ -f "$JAR" ] || die "$COMP" - "$JAR is missing; run deploy/install.sh" ;;
  start)
    if is_running "$COMP" && ready; then echo "    $COMP already running"; exit 0; fi
    if is_running "$COMP"; then # its supervisor is (re)starting it: wait, never start a second one
      progress "Waiting for the host agent (started, not ready yet$(supervisor_note "$COMP"))"
      wait_until "$COMP" 90 ready
      done_step
      exit 0
    fi
    for p in "$SAND_HOSTAGENT_BUS_PORT" "$SAND_DATALAYER_PORT" "$SAND_HOSTAGENT_METRICS_PORT" "$SAND_HOSTAGENT_GATE_PORT"; do
      [ "$p" -gt 0 ] 2>/dev/null || continue  # 0 or less, or not a number: that port is off
      require_port_free "$COMP" "$p"
    done
    progress "Starting the host agent ($SAND_HOSTAGENT_HOST_ID) on $SAND_BIND:$SAND_HOSTAGENT_BUS_PORT"
    mkdir -p "$SAND_HOSTAGENT_SANDBOX_STATE_DIR"
    agent_cmd file
    start_supervised "$COMP" "${AGENT_CMD[@]}"
    wait_until "$COMP" 90 ready
    done_step
    ;;
  run) # in the foreground, for a service manager (deploy/systemd/sand-hostagent.service): it restarts and logs
    mkdir -p "$SAND_HOSTAGENT_SANDBOX_STATE_DIR"
    agent_cmd
    write_pidfile "$COMP" $$ # so `start` and `status` see it running (exec keeps the pid)
    exec "${AGENT_CMD[@]}"
    ;;
  stop) stop_pid "$COMP" 60 ;;
  status)
    if is_running "$COMP" && ready; then
      status_line "$COMP" running "$SAND_BIND:$SAND_HOSTAGENT_BUS_PORT" "pid $(cat "$(pidfile "$COMP")")$(
        supervisor_note "$COMP"), metrics :$SAND_HOSTAGENT_METRICS_PORT"
    elif is_running "$COMP"; then
      status_line "$COMP" starting "$SAND_BIND:$SAND_HOSTAGENT_BUS_PORT" "pid $(cat "$(pidfile "$COMP")")$(
        supervisor_note "$COMP") (not ready: read $(logfile "$COMP"))"; exit 3
    else
      status_line "$COMP" stopped; exit 3
    fi
    ;;
  ready) ready ;;
  *) echo "usage: $0 fetch|start|run|stop|status|ready" >&2; exit 2 ;;
esac
