#!/usr/bin/env bash
# supervise.sh <component> <cmd...>: run cmd and start it again whenever it exits, until this supervisor is told to
# stop (TERM/INT/HUP: what stop_pid sends). Started by start_supervised (deploy/lib.sh) in a session of its own, so
# the pid file names this supervisor and the command shares its process group.
#
# - back-off: 1 s before the first restart, doubling up to 60 s while the command keeps dying within a minute of
#   its start; back to 1 s after a run of a minute or more. It never gives up (a host agent that crash-loops on a
#   poison event stops doing so by itself: hostagent.poison.deaths, PoisonLedger).
# - state: $SAND_RUN/<component>.supervisor (restarts, last_exit, last_exit_at, child: the command's pid), and
#   $SAND_RUN/<component>.prom, the restart count as a Prometheus text-format metric (node_exporter's textfile
#   collector reads such files), both read by `make status`.
# - logs: the command writes and rolls its own <component>.log (it is never touched here); its console output and
#   this supervisor's lines go to <component>.out, rotated at each start and when it grows past SAND_LOG_MAX_MB
#   (rotate_log). Times are ISO-8601 UTC, like the command's own lines.
source "$(dirname "$0")/lib.sh"
set +e

comp="$1"; shift
log="$(outfile "$comp")"
own_log="$(logfile "$comp")"
state="$SAND_RUN/$comp.supervisor"
max_bytes=$((SAND_LOG_MAX_MB * 1024 * 1024))
restarts=0 last_exit="" last_exit_at="" child="" stopping=0 backoff=1

stop() {
  stopping=1
  if [ -n "$child" ]; then kill -TERM "$child" 2>/dev/null; fi
}
trap stop TERM INT HUP

write_state() {
  printf 'restarts=%s\nlast_exit=%s\nlast_exit_at=%s\nchild=%s\n' "$restarts" "$last_exit" "$last_exit_at" "$child" \
    >"$state.tmp" && mv -f "$state.tmp" "$state"
  printf '# HELP sand_process_restarts_total Times the supervisor restarted this process after it exited.\n# TYPE sand_process_restarts_total counter\nsand_process_restarts_total{component="%s"} %s\n' \
    "$comp" "$restarts" >"$SAND_RUN/$comp.prom.tmp" && mv -f "$SAND_RUN/$comp.prom.tmp" "$SAND_RUN/$comp.prom"
}

# A child that exited stays a zombie until waited for, and kill -0 succeeds on a zombie.
alive() { kill -0 "$1" 2>/dev/null && [ "$(ps -o stat= -p "$1" 2>/dev/null | cut -c1)" != Z ]; }

# sleep_awake N: sleep, but return at once when told to stop (a trapped signal interrupts `wait`).
sleep_awake() {
  sleep "$1" &
  wait $! 2>/dev/null
}

while [ "$stopping" = 0 ]; do
  started=$(date +%s)
  "$@" >>"$log" 2>&1 </dev/null &
  child=$!
  write_state
  while alive "$child"; do
    sleep_awake 2
    if [ "$(stat -c %s "$log" 2>/dev/null || echo 0)" -gt "$max_bytes" ]; then rotate_log "$log"; fi
  done
  wait "$child"
  rc=$?
  child=""
  if [ "$stopping" = 1 ]; then break; fi
  restarts=$((restarts + 1))
  last_exit="$rc"
  last_exit_at="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  if [ $(($(date +%s) - started)) -ge 60 ]; then backoff=1; fi
  line="$(printf '%s supervisor: %s exited with status %s%s; restart %s in %s s' "$(date -u +%Y-%m-%dT%H:%M:%S.%3NZ)" "$comp" \
    "$rc" "$([ "$rc" -gt 128 ] && echo " (signal $((rc - 128)))")" "$restarts" "$backoff")"
  echo "$line" >>"$log"
  rotate_log "$log" # the run that died keeps its own file, <log>.1
  echo "$line (the console output of the run that exited is $log.1; its log goes on in $own_log)" >>"$log"
  write_state
  sleep_awake "$backoff"
  if [ "$stopping" = 1 ]; then break; fi
  backoff=$((backoff * 2 > 60 ? 60 : backoff * 2))
done
write_state
