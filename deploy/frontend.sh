#!/usr/bin/env bash
# The frontends of this host: start|run PORT|stop|restart|status|ready|fetch|rotate-admin-key [finish] (see
# deploy/lib.sh; `restart` goes one port at a time, so nginx always has one; rotate-admin-key in docs/operations.md); `start` runs each under
# its supervisor (deploy/supervise.sh: restarted when it exits), `run` one in the foreground for systemd (logging to
# stderr). One frontend per port in $SAND_FRONTEND_PORTS (default "8081 8082"), id $SAND_FRONTEND_ID_PREFIX-<port>
# (the prefix is fe; in a cluster fe-<host>, so ids are unique across hosts), pid file frontend-<port>, log
# frontend-<port>.log (written and rolled by the frontend itself; its console output in frontend-<port>.out);
# nginx ($SAND_NGINX_PORT) load-balances over them. They need Kafka and Cassandra.
source "$(dirname "$0")/lib.sh"

COMP=frontend
JAR="$SAND_ROOT/frontend/target/frontend-0.1.0-SNAPSHOT.jar"
export SAND_FRONTEND_HOST="$SAND_BIND"
# the web console the install step built (docs/console.md), at /console/; an operator's own setting wins
export SAND_FRONTEND_CONSOLE_DIR="${SAND_FRONTEND_CONSOLE_DIR-$SAND_ROOT/console/dist}"
ID_PREFIX="${SAND_FRONTEND_ID_PREFIX:-fe}"

ready_one() { curl -fsS --max-time 2 "http://$SAND_BIND:$1/healthz" >/dev/null 2>&1; }
ready() {
  local p
  for p in $SAND_FRONTEND_PORTS; do ready_one "$p" || return 1; done
}

# The frontend's command line. Its heap is SAND_FRONTEND_HEAP_MB (default 384); it exits on OutOfMemoryError (its
# supervisor, or systemd, starts it again) rather than answering with threads that died of it. `frontend_cmd PORT`:
# it writes and rolls $SAND_LOGS/frontend-PORT.log itself (common's logback-file.xml); without a port it logs to
# stderr (systemd's journal).
frontend_cmd() {
  local logging=()
  if [ -n "${1:-}" ]; then logging=(-Dlogback.configurationFile=logback-file.xml "-Dsand.log.file=$(logfile "$COMP-$1")"); fi
  FRONTEND_CMD=("$JAVA" -Xms64m "-Xmx${SAND_FRONTEND_HEAP_MB:-384}m" -XX:+UseSerialGC -XX:+ExitOnOutOfMemoryError
    "${logging[@]}" -cp "$JAR:$SAND_ROOT/frontend/target/lib/*" sand.frontend.Frontend)
}

start_one() {
  local port="$1" comp="$COMP-$1"
  if is_running "$comp" && ready_one "$port"; then echo "    $comp already running"; return 0; fi
  if is_running "$comp"; then # its supervisor is (re)starting it: wait, never start a second one
    progress "Waiting for frontend $ID_PREFIX-$port (started, not ready yet$(supervisor_note "$comp"))"
    wait_until "$comp" 90 ready_one "$port"
    done_step
    return 0
  fi
  require_port_free "$comp" "$port"
  progress "Starting frontend $ID_PREFIX-$port on $SAND_BIND:$port"
  SAND_FRONTEND_ADMIN_KEY="$(admin_key)"
  SAND_FRONTEND_ADMIN_KEY_PREVIOUS="$(admin_key_previous)"
  export SAND_FRONTEND_ADMIN_KEY SAND_FRONTEND_ADMIN_KEY_PREVIOUS
  frontend_cmd "$port"
  SAND_FRONTEND_PORT="$port" SAND_FRONTEND_ID="$ID_PREFIX-$port" start_supervised "$comp" "${FRONTEND_CMD[@]}"
  wait_until "$comp" 90 ready_one "$port"
  done_step
}

# restart_each: the frontends one at a time, each stopped gracefully: nginx sends requests to the others meanwhile.
restart_each() {
  local p
  for p in $SAND_FRONTEND_PORTS; do stop_pid "$COMP-$p" 30; start_one "$p"; nginx_takes_back; done
}

case "${1:-}" in
  fetch) [ -f "$JAR" ] || die "$COMP" - "$JAR is missing; run deploy/install.sh" ;;
  start) for p in $SAND_FRONTEND_PORTS; do start_one "$p"; done ;;
  run) # run PORT: that frontend in the foreground, for a service manager (deploy/systemd/sand-frontend@.service)
    port="${2:?usage: $0 run PORT}"
    SAND_FRONTEND_ADMIN_KEY="$(admin_key)"
    SAND_FRONTEND_ADMIN_KEY_PREVIOUS="$(admin_key_previous)"
    export SAND_FRONTEND_ADMIN_KEY SAND_FRONTEND_ADMIN_KEY_PREVIOUS SAND_FRONTEND_PORT="$port" SAND_FRONTEND_ID="$ID_PREFIX-$port"
    frontend_cmd
    write_pidfile "$COMP-$port" $$ # so `start` and `status` see it running (exec keeps the pid)
    exec "${FRONTEND_CMD[@]}"
    ;;
  stop) for p in $SAND_FRONTEND_PORTS; do stop_pid "$COMP-$p" 30; done ;;
  restart) restart_each ;;
  rotate-admin-key) # [finish]: a new admin key, the old one accepted as well until `finish` (docs/operations.md)
    rotate_admin_key_files "${2:-begin}"
    restart_each
    if [ "${2:-begin}" = begin ]; then
      echo "Every frontend takes the new admin key ($SAND_HOME/admin-key) and the old one; give clients the new key, then: $0 rotate-admin-key finish"
    fi
    ;;
  status)
    rc=0
    for p in $SAND_FRONTEND_PORTS; do
      if is_running "$COMP-$p" && ready_one "$p"; then
        status_line "$ID_PREFIX-$p" running "http://$SAND_BIND:$p" "pid $(cat "$(pidfile "$COMP-$p")")$(
          supervisor_note "$COMP-$p")"
      elif is_running "$COMP-$p"; then
        status_line "$ID_PREFIX-$p" starting "http://$SAND_BIND:$p" "pid $(cat "$(pidfile "$COMP-$p")")$(
          supervisor_note "$COMP-$p") (not ready: read $(logfile "$COMP-$p"))"; rc=3
      else
        status_line "$ID_PREFIX-$p" stopped; rc=3
      fi
    done
    exit "$rc"
    ;;
  ready) ready ;;
  *) echo "usage: $0 fetch|start|run PORT|stop|restart|status|ready|rotate-admin-key [finish]" >&2; exit 2 ;;
esac
