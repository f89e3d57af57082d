#!/usr/bin/env bash
# Docker Engine for the SAND sandboxes.
#   deploy/docker.sh fetch|start|stop|status|ready
#
# dockerd is a machine-wide daemon (one per /var/run/docker.sock), so we only start one when no
# daemon answers there. A daemon someone else started (by hand, systemd, ...) is used as it is and
# never gets a pid file, so `stop` can never kill a daemon we did not start.
source "$(dirname "$0")/lib.sh"

COMP=docker
DOCKERD="${SAND_DOCKERD:-/usr/sbin/dockerd}"
DOCKER_SOCK="${SAND_DOCKER_SOCK:-/var/run/docker.sock}"
# The pid file dockerd itself writes (its default); only read, to describe a foreign daemon.
DOCKERD_SYS_PIDFILE="${SAND_DOCKERD_PIDFILE:-/var/run/docker.pid}"
# Where dockerd keeps its runtime state (and its containerd's pid file); dockerd's default.
DOCKER_EXEC_ROOT="${SAND_DOCKER_EXEC_ROOT:-/var/run/docker}"
DOCKER_HOST="unix://$DOCKER_SOCK"
export DOCKER_HOST
START_TIMEOUT="${SAND_DOCKER_START_TIMEOUT:-60}"
# Every container's stdout/stderr is rotated by the daemon we start (json-file would grow without end): the host
# agent sets the same per container (sandbox.log.max.mb/.files), this covers anything else run on this daemon.
DOCKER_LOG_MAX_SIZE="${SAND_DOCKER_LOG_MAX_SIZE:-10m}"
DOCKER_LOG_MAX_FILE="${SAND_DOCKER_LOG_MAX_FILE:-3}"

# Answers the Engine API's _ping with OK (curl), or the docker client reaches the server.
ping_engine() {
  if command -v curl >/dev/null 2>&1; then
    [ "$(curl -fsS --max-time 5 --unix-socket "$DOCKER_SOCK" http://localhost/_ping 2>/dev/null)" = "OK" ]
  else
    timeout 10 docker version --format '{{.Server.Version}}' >/dev/null 2>&1
  fi
}

# ready: the API answers AND the docker client on PATH can talk to it (it is newer than the
# daemon, so it must negotiate the API version down; a client too new to do so fails here).
ready() {
  ping_engine || return 1
  timeout 10 docker version --format '{{.Server.APIVersion}}' >/dev/null 2>&1
}

# pid of a live dockerd named by dockerd's own pid file, or empty. A kill -9'd dockerd leaves that
# file behind, and its pid can stay a zombie for a while (or be reused): check state and name.
foreign_pid() {
  local pid
  pid="$(cat "$DOCKERD_SYS_PIDFILE" 2>/dev/null || true)"
  if [ -n "$pid" ] && live_named "$pid" dockerd; then echo "$pid"; fi
}

# live_named <pid> <name>: the process exists, is not a zombie, and is called <name>.
live_named() {
  [ "$(ps -o stat=,comm= -p "$1" 2>/dev/null | awk '$1 !~ /^Z/ { print $2 }')" = "$2" ]
}

engine_desc() {
  timeout 10 docker version --format 'engine {{.Server.Version}} api {{.Server.APIVersion}} (client {{.Client.Version}})' 2>/dev/null \
    || echo "engine ?"
}

cmd_fetch() { :; }   # dockerd comes from the docker.io Debian package; nothing to download.

cmd_start() {
  if is_running "$COMP" && ready; then
    echo "    $COMP already running"
    return 0
  fi
  if ! is_running "$COMP" && ready; then
    echo "    $COMP already running (not started by SAND, pid $(foreign_pid || true); left alone by stop)"
    return 0
  fi

  progress "Starting Docker Engine"
  if is_running "$COMP"; then
    # Our daemon is alive but not answering yet (still starting): just wait for it.
    wait_until "$COMP" "$START_TIMEOUT" ready
    done_step
    return 0
  fi
  local fpid; fpid="$(foreign_pid || true)"
  if [ -n "$fpid" ]; then
    # Someone else's dockerd is alive but not answering (starting up, or wedged): starting a
    # second one would fail on its pid file, so wait for theirs and do not take ownership.
    local deadline=$(( $(date +%s) + START_TIMEOUT ))
    until ready; do
      if [ "$(date +%s)" -ge "$deadline" ]; then
        die "$COMP" - "a dockerd not started by SAND (pid $fpid) holds $DOCKERD_SYS_PIDFILE but does not answer on $DOCKER_SOCK after ${START_TIMEOUT}s"
      fi
      sleep 0.5
    done
    echo "    (dockerd pid $fpid was not started by SAND; left alone by stop)"
    done_step
    return 0
  fi
  [ -x "$DOCKERD" ] || die "$COMP" - "$DOCKERD not found (apt-get install docker.io)"
  # No live dockerd owns dockerd's pid file (checked just above): it is stale, from a daemon
  # that was killed. dockerd refuses to start while it names a pid that still exists (a zombie).
  rm -f "$DOCKERD_SYS_PIDFILE"
  # Same for the pid file of the containerd it manages: dockerd would wait on a dead one's socket.
  local cpidf="$DOCKER_EXEC_ROOT/containerd/containerd.pid" cpid
  cpid="$(cat "$cpidf" 2>/dev/null || true)"
  if [ -n "$cpid" ] && ! live_named "$cpid" containerd; then rm -f "$cpidf"; fi
  local -a extra=()
  read -ra extra <<<"${SAND_DOCKERD_ARGS:-}"   # e.g. "--data-root /big/disk"
  start_bg "$COMP" "$DOCKERD" -H "$DOCKER_HOST" --pidfile "$DOCKERD_SYS_PIDFILE" \
    --exec-root "$DOCKER_EXEC_ROOT" --log-driver json-file --log-opt "max-size=$DOCKER_LOG_MAX_SIZE" \
    --log-opt "max-file=$DOCKER_LOG_MAX_FILE" "${extra[@]}"
  wait_until "$COMP" "$START_TIMEOUT" ready
  done_step
}

cmd_stop() {
  local stale   # read before is_running, which deletes a stale pid file
  stale="$(cat "$(pidfile "$COMP")" 2>/dev/null || true)"
  if ! is_running "$COMP"; then
    # Our dockerd died (kill -9): the containerd it started (own process group) lives on,
    # orphaned. Stop it too, but only if it really is that containerd and nothing answers.
    if [ -n "$stale" ] && ! ping_engine; then
      local cpid; cpid="$(cat "$DOCKER_EXEC_ROOT/containerd/containerd.pid" 2>/dev/null || true)"
      if [ -n "$cpid" ] && live_named "$cpid" containerd \
        && [ "$(ps -o ppid= -p "$cpid" 2>/dev/null | tr -d ' ')" = "1" ] \
        && tr '\0' ' ' <"/proc/$cpid/cmdline" 2>/dev/null | grep -q "^containerd --config $DOCKER_EXEC_ROOT/"; then
        kill -TERM "$cpid" 2>/dev/null || true
      fi
    fi
    rm -f "$(pidfile "$COMP")"
    return 0
  fi
  local pid; pid="$(cat "$(pidfile "$COMP")")"
  progress "Stopping Docker Engine"
  # TERM dockerd alone first: it stops its containers and then its own containerd. TERMing the
  # whole group at once (stop_pid) would kill containerd under it mid-shutdown.
  kill -TERM "$pid" 2>/dev/null || true
  local i=0
  while is_running "$COMP" && [ "$i" -lt 400 ]; do sleep 0.1; i=$((i + 1)); done
  stop_pid "$COMP" 10   # whatever is left of the group (or dockerd itself, if it hung)
  done_step
}

cmd_status() {
  if is_running "$COMP" && ready; then
    status_line "$COMP" running "$DOCKER_HOST" "pid $(cat "$(pidfile "$COMP")"), started by SAND, $(engine_desc)"
    return 0
  fi
  if ready; then
    status_line "$COMP" running "$DOCKER_HOST" "pid $(foreign_pid || echo '?'), not started by SAND, $(engine_desc)"
    return 0
  fi
  if is_running "$COMP"; then
    echo "$COMP  starting  $DOCKER_HOST  pid $(cat "$(pidfile "$COMP")")  not answering yet"
    return 3
  fi
  status_line "$COMP" stopped
  return 3
}

case "${1:-}" in
  fetch) cmd_fetch ;;
  start) cmd_start ;;
  stop) cmd_stop ;;
  status) cmd_status ;;
  ready) ready ;;
  *) echo "usage: $0 fetch|start|stop|status|ready" >&2; exit 2 ;;
esac
