# shellcheck shell=bash
# Shared helpers for the deploy/ scripts. Source it; do not run it.
#
# Conventions every component script follows:
#   state dir  $SAND_HOME (default: <checkout>/.sand)
#   pid files  $SAND_HOME/run/<component>.pid   (only for processes *we* started)
#   logs       $SAND_HOME/logs/<component>.log   (docs/operations.md "Logs"; <component>.out: its console output
#                                                 when the process writes and rolls its .log itself)
#   data       $SAND_HOME/data/<component>/
#   configs    $SAND_HOME/conf/<component>/      (generated from templates in deploy/)
# Every wait has a timeout; every failure prints one line naming the component and its log.

set -euo pipefail

SAND_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SAND_HOME="${SAND_HOME:-$SAND_ROOT/.sand}"
mkdir -p "$SAND_HOME"
SAND_HOME="$(cd "$SAND_HOME" && pwd)"
export SAND_ROOT SAND_HOME

SAND_RUN="$SAND_HOME/run"
SAND_LOGS="$SAND_HOME/logs"
SAND_DATA="$SAND_HOME/data"
SAND_CONF="$SAND_HOME/conf"
SAND_DIST="${SAND_DIST:-$SAND_HOME/dist}"     # jars fetched from Maven Central (Kafka, Cassandra); shareable
SAND_VENV="${SAND_VENV:-$SAND_ROOT/.venv}"
mkdir -p "$SAND_RUN" "$SAND_LOGS" "$SAND_DATA" "$SAND_CONF" "$SAND_DIST"

# Addresses. Everything binds to loopback; the env overrides exist for parallel checkouts.
SAND_BIND="${SAND_BIND:-127.0.0.1}"
SAND_KAFKA_PORT="${SAND_KAFKA_PORT:-9092}"
SAND_KAFKA_CONTROLLER_PORT="${SAND_KAFKA_CONTROLLER_PORT:-9093}"
SAND_CASSANDRA_PORT="${SAND_CASSANDRA_PORT:-9042}"
SAND_CASSANDRA_STORAGE_PORT="${SAND_CASSANDRA_STORAGE_PORT:-7000}"
SAND_NGINX_PORT="${SAND_NGINX_PORT:-8080}"
# nginx takes a frontend that refused a connection out of its rotation for this long (max_fails=1).
NGINX_FAIL_TIMEOUT_S=2
SAND_FRONTEND_PORTS="${SAND_FRONTEND_PORTS:-8081 8082}"
SAND_SANDBOX_IMAGE="${SAND_SANDBOX_IMAGE:-sand-sandbox}"
export SAND_BIND SAND_KAFKA_PORT SAND_KAFKA_CONTROLLER_PORT SAND_CASSANDRA_PORT SAND_CASSANDRA_STORAGE_PORT SAND_NGINX_PORT SAND_FRONTEND_PORTS SAND_SANDBOX_IMAGE
# Where every host agent and frontend finds the cluster's Kafka and Cassandra (component `cluster`, docs/config.md).
export SAND_CLUSTER_KAFKA_BOOTSTRAP="${SAND_CLUSTER_KAFKA_BOOTSTRAP:-$SAND_BIND:$SAND_KAFKA_PORT}"
export SAND_CLUSTER_CASSANDRA_CONTACT="${SAND_CLUSTER_CASSANDRA_CONTACT:-$SAND_BIND:$SAND_CASSANDRA_PORT}"

# Pinned versions of what we fetch from Maven Central.
KAFKA_VERSION="${KAFKA_VERSION:-4.1.1}"
CASSANDRA_VERSION="${CASSANDRA_VERSION:-5.0.9}"

# ---- output -------------------------------------------------------------------------------------

_t0() { date +%s.%N; }
_elapsed() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1fs", b - a }'; }

# progress "Starting Kafka" ... done   -> "==> Starting Kafka ... (3.2s)"
progress() { _SAND_STEP="$*"; _SAND_STEP_T0="$(_t0)"; printf '==> %s ...\n' "$*"; }
done_step() { printf '    done: %s (%s)\n' "$_SAND_STEP" "$(_elapsed "$_SAND_STEP_T0")"; }

# die <component> <log file or -> <message>: one clear line, non-zero exit.
die() {
  local comp="$1" log="$2"; shift 2
  if [ "$log" = "-" ]; then
    printf 'ERROR [%s] %s\n' "$comp" "$*" >&2
  else
    printf 'ERROR [%s] %s (read %s)\n' "$comp" "$*" "$log" >&2
    if [ -f "$log" ]; then tail -n 5 "$log" | sed 's/^/    | /' >&2; fi
    # A process that writes its own log: what it printed outside it (a JVM that could not start, a crash).
    local out="${log%.log}.out"
    if [ "$out" != "$log" ] && [ -s "$out" ]; then
      printf '  and %s:\n' "$out" >&2
      tail -n 5 "$out" | sed 's/^/    | /' >&2
    fi
  fi
  exit 1
}

# ---- processes ----------------------------------------------------------------------------------

# The operator's admin key (docs/operations.md "The admin key"): $SAND_FRONTEND_ADMIN_KEY when the operator set one,
# else $SAND_HOME/admin-key, created once with mode 600.
admin_key() {
  if [ -n "${SAND_FRONTEND_ADMIN_KEY:-}" ]; then printf '%s' "$SAND_FRONTEND_ADMIN_KEY"; return; fi
  local f="$SAND_HOME/admin-key"
  if [ ! -s "$f" ]; then
    mkdir -p "$SAND_HOME"
    (umask 077 && printf 'sandadm_%s\n' "$(od -An -N24 -tx1 /dev/urandom | tr -d ' \n')" >"$f.tmp" && mv "$f.tmp" "$f")
  fi
  tr -d '\n' <"$f"
}

# nginx_takes_back: wait until nginx may send to a frontend that was just started again. While it was down, nginx
# marked it failed (for NGINX_FAIL_TIMEOUT_S after its last refusal); stopping the next frontend before that
# passes leaves nginx none ("no live upstreams": 20 requests answered 502 in a rotation that did not wait).
nginx_takes_back() { sleep $((NGINX_FAIL_TIMEOUT_S + 1)); }

# The admin key being rotated out (docs/operations.md "Rotating the admin key"), which frontends accept as well
# until the rotation is finished: $SAND_FRONTEND_ADMIN_KEY_PREVIOUS when set (even empty: none), else
# $SAND_HOME/admin-key.previous if a rotation left one, else none.
admin_key_previous() {
  if [ -n "${SAND_FRONTEND_ADMIN_KEY_PREVIOUS+set}" ]; then printf '%s' "$SAND_FRONTEND_ADMIN_KEY_PREVIOUS"; return; fi
  local f="$SAND_HOME/admin-key.previous"
  if [ -s "$f" ]; then tr -d '\n' <"$f"; fi
}

# rotate_admin_key_files begin|finish: the files of a rotation. begin: the admin key becomes the previous one and
# a new one is made (again after an interrupted rotation: nothing changes, the rotation goes on); finish: the
# previous one is forgotten. The frontends read them when they start.
rotate_admin_key_files() {
  local key="$SAND_HOME/admin-key" prev="$SAND_HOME/admin-key.previous"
  if [ -n "${SAND_FRONTEND_ADMIN_KEY:-}" ]; then
    die admin-key - "SAND_FRONTEND_ADMIN_KEY is set: the key is yours, not $key; rotate it by setting the new one there and the old one in SAND_FRONTEND_ADMIN_KEY_PREVIOUS"
  fi
  case "$1" in
    begin)
      if [ ! -s "$prev" ]; then
        [ -s "$key" ] || die admin-key - "no admin key at $key to rotate"
        (umask 077 && cp "$key" "$prev.tmp" && mv "$prev.tmp" "$prev")
        rm -f "$key"
        admin_key >/dev/null
      fi
      ;;
    finish)
      [ -s "$prev" ] || die admin-key - "no rotation under way ($prev does not exist)"
      rm -f "$prev"
      ;;
  esac
}

pidfile() { echo "$SAND_RUN/$1.pid"; }
logfile() { echo "$SAND_LOGS/$1.log"; }
# outfile <component>: the console output (stdout and stderr: a JVM's crash, its supervisor's restart lines) of a
# process that writes and rolls its own <component>.log (host agent, frontends, Kafka, Cassandra, nginx).
outfile() { echo "$SAND_LOGS/$1.out"; }

# is_running <component>: our pid file exists and names a live process. Cleans a stale file.
is_running() {
  local f; f="$(pidfile "$1")"
  [ -n "$(live_pid "$f")" ] && return 0
  rm -f "$f" "$f.start"
  return 1
}

# live_pid <pid file>: the pid it names if that process is alive and is the one the file was written for, else
# nothing. A pid outlives its process in the file (kill -9 of a host's processes leaves every pid file behind) and
# the kernel gives the number to a later process or thread, which kill -0 would take for ours (a frontend's start
# waited 90 s for a Cassandra thread to answer), so write_pidfile records the process's start time beside it.
live_pid() {
  local pid want
  pid="$(cat "$1" 2>/dev/null)" || return 0
  # kill -0 also succeeds on a zombie, and a killed orphan can stay one for seconds until init reaps it.
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && [ "$(ps -o stat= -p "$pid" 2>/dev/null | cut -c1)" != "Z" ]; then
    want="$(cat "$1.start" 2>/dev/null || true)"
    if [ -z "$want" ] || [ "$want" = "$(proc_start "$pid")" ]; then echo "$pid"; fi
  fi
  return 0
}

# proc_start <pid>: when the process (or thread) started, in clock ticks since boot (/proc/<pid>/stat, field 22;
# the command name before it, in parentheses, may hold spaces).
proc_start() {
  local stat
  stat="$(cat "/proc/$1/stat" 2>/dev/null)" || return 0
  stat="${stat##*) }"
  # shellcheck disable=SC2086 # split into the fields after the name: state is the first, start time the 20th
  set -- $stat
  echo "${20:-}"
}

# write_pidfile <component> <pid>: the pid file, and the start time that tells this process from a later one.
write_pidfile() {
  local f; f="$(pidfile "$1")"
  echo "$2" >"$f"
  proc_start "$2" >"$f.start"
}

# Logs are kept and bounded (docs/operations.md "Logs"). SAND's Java processes, Kafka, Cassandra and nginx write
# their own <component>.log and roll it: a new file past SAND_LOG_MAX_MB (default 64) or at a new UTC day, rolled
# files deleted after SAND_LOG_DAYS (default 14) or beyond SAND_LOG_TOTAL_MB (default (keep + 1) x max) a component.
# What a process prints outside its logger goes to <component>.out (or to <component>.log for processes that have no
# logger of their own: dockerd), which start_bg and the supervisor rotate: at each start the last one moves to .1
# (.1 to .2, ...; SAND_LOG_KEEP, default 5, are kept) and, under a supervisor, also when it passes SAND_LOG_MAX_MB.
# SAND_LOG_FORMAT=json makes the Java processes write JSON lines; SAND_LOG_LEVEL sets their own loggers' level.
SAND_LOG_KEEP="${SAND_LOG_KEEP:-5}"
SAND_LOG_MAX_MB="${SAND_LOG_MAX_MB:-64}"
SAND_LOG_DAYS="${SAND_LOG_DAYS:-14}"
SAND_LOG_TOTAL_MB="${SAND_LOG_TOTAL_MB:-$((SAND_LOG_MAX_MB * (SAND_LOG_KEEP + 1)))}"
SAND_LOG_FORMAT="${SAND_LOG_FORMAT:-text}"
SAND_LOG_LEVEL="${SAND_LOG_LEVEL:-INFO}"
for _v in SAND_LOG_KEEP SAND_LOG_MAX_MB SAND_LOG_DAYS SAND_LOG_TOTAL_MB; do
  case "${!_v}" in
    '' | *[!0-9]*) die logs - "$_v must be a whole number, not '${!_v}'" ;;
  esac
done
[ "$SAND_LOG_MAX_MB" -ge 1 ] || die logs - "SAND_LOG_MAX_MB must be at least 1, not '$SAND_LOG_MAX_MB'"
[ "$SAND_LOG_DAYS" -ge 1 ] || die logs - "SAND_LOG_DAYS must be at least 1, not '$SAND_LOG_DAYS'"
case "$SAND_LOG_FORMAT" in text | json) ;; *) die logs - "SAND_LOG_FORMAT must be text or json, not '$SAND_LOG_FORMAT'" ;; esac
case "$SAND_LOG_LEVEL" in TRACE | DEBUG | INFO | WARN | ERROR) ;; *)
  die logs - "SAND_LOG_LEVEL must be TRACE, DEBUG, INFO, WARN or ERROR, not '$SAND_LOG_LEVEL'" ;;
esac
export SAND_LOG_MAX_MB SAND_LOG_DAYS SAND_LOG_TOTAL_MB SAND_LOG_FORMAT SAND_LOG_LEVEL

# rotate_log <log file>: shift <log>.1.. up by one (the last is dropped), copy <log> to <log>.1 and empty it. The
# writer keeps its file (opened with O_APPEND: its next line goes to the new start); a line written between the
# copy and the truncation is lost, the price of rotating under a running process without its help. Only files
# processes write little to come here (.out files, dockerd's log); logs proper are rolled by their writers.
rotate_log() {
  local log="$1" i
  [ -s "$log" ] || return 0
  for ((i = SAND_LOG_KEEP; i > 1; i--)); do
    if [ -f "$log.$((i - 1))" ]; then mv -f "$log.$((i - 1))" "$log.$i"; fi
  done
  if [ "$SAND_LOG_KEEP" -ge 1 ]; then cp "$log" "$log.1"; fi
  : >"$log"
}

# start_bg <component> <cmd...>: start detached (own session), record its pid, and send its output to its log file
# (the last one rotated), or with OWN_LOG=1 (a process that writes its own .log) to its .out file.
start_bg() {
  local comp="$1"; shift
  local log
  if [ "${OWN_LOG:-0}" = 1 ]; then log="$(outfile "$comp")"; else log="$(logfile "$comp")"; fi
  rotate_log "$log"
  setsid "$@" >>"$log" 2>&1 </dev/null &
  write_pidfile "$comp" $!
}

# start_supervised <component> <cmd...>: start_bg under deploy/supervise.sh, which restarts the command when it
# exits (not after stop_pid) with back-off, counts the restarts and rotates its .out by size (the command writes and
# rolls its own .log: the host agent's and frontends' logback-file.xml). The pid file names the
# supervisor (stop_pid stops both: they share a process group); the supervisor's state (restarts, last exit, the
# command's own pid) is in $SAND_RUN/<component>.supervisor.
start_supervised() {
  local comp="$1"; shift
  rm -f "$SAND_RUN/$comp.supervisor"
  OWN_LOG=1 start_bg "$comp" bash "$SAND_ROOT/deploy/supervise.sh" "$comp" "$@"
}

# supervisor_state <component> <key>: a value of the supervisor's state (restarts, last_exit, last_exit_at, child).
supervisor_state() {
  local f="$SAND_RUN/$1.supervisor"
  if [ -f "$f" ]; then sed -n "s/^$2=//p" "$f" 2>/dev/null | head -n 1 || true; fi
}

# supervisor_note <component>: ", restarts N (last exit C at T)" for status lines; nothing before a restart. A
# component systemd runs (deploy/systemd: unit sand-hostagent, sand-frontend@<port>) shows systemd's count.
supervisor_note() {
  local n unit
  n="$(supervisor_state "$1" restarts)"
  if [ -n "$n" ] && [ "$n" != 0 ]; then
    printf ', restarts %s (last exit %s at %s)' "$n" "$(supervisor_state "$1" last_exit)" \
      "$(supervisor_state "$1" last_exit_at)"
  elif [ -z "$n" ] && command -v systemctl >/dev/null; then
    case "$1" in frontend-*) unit="sand-frontend@${1#frontend-}" ;; *) unit="sand-$1" ;; esac
    n="$(systemctl show -p NRestarts --value "$unit" 2>/dev/null)" || return 0
    if [ -n "$n" ] && [ "$n" != 0 ]; then printf ', restarts %s (systemd %s)' "$n" "$unit"; fi
  fi
  return 0
}

# The global bus and data layer (Kafka, Cassandra) run at a lower CPU priority than the request path (nginx,
# frontends, host agents, sandboxes) where they share a host's CPUs: thanks to the gate and the write-behind
# records their work is off the request path (backups, flags, records), and on a 2-vCPU host it otherwise takes
# the CPU a waking grain worker needs (docs/benchmarks.md "CPU priority"). SAND_BACKGROUND_NICE (default 19,
# 0 = off): start such a server with `start_background comp cmd...`: every thread's nice (for kernels without
# autogroups), then its session's autogroup nice: Linux schedules each session as one group, so a plain nice only
# ranks threads inside it; the group's own nice is what ranks it against the others.
SAND_BACKGROUND_NICE="${SAND_BACKGROUND_NICE:-19}"
BACKGROUND_NICE=()
if [ "$SAND_BACKGROUND_NICE" != "0" ]; then BACKGROUND_NICE=(nice -n "$SAND_BACKGROUND_NICE"); fi
background_priority() {
  local pid
  [ "$SAND_BACKGROUND_NICE" != "0" ] || return 0
  pid="$(cat "$(pidfile "$1")" 2>/dev/null)" || return 0
  [ -n "$pid" ] && [ -w "/proc/$pid/autogroup" ] || return 0
  # Only once setsid has made its session (and so its autogroup): before, the file is the caller's group.
  local _
  for _ in $(seq 50); do
    if [ "$(ps -o sid= -p "$pid" 2>/dev/null | tr -d ' ')" = "$pid" ]; then
      echo "$SAND_BACKGROUND_NICE" >"/proc/$pid/autogroup" 2>/dev/null || true
      return 0
    fi
    sleep 0.02
  done
}

# start_background <component> <cmd...>: start_bg at the background priority (above).
start_background() {
  start_bg "$1" "${BACKGROUND_NICE[@]}" "${@:2}"
  background_priority "$1"
}

# stop_pid <component> [timeout]: TERM the process group we started, KILL after the timeout.
stop_pid() {
  local comp="$1" timeout="${2:-30}"
  local f; f="$(pidfile "$comp")"
  if ! is_running "$comp"; then return 0; fi
  local pid; pid="$(cat "$f")"
  kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
  local i=0
  while is_running "$comp" && [ "$i" -lt $((timeout * 10)) ]; do sleep 0.1; i=$((i + 1)); done
  if is_running "$comp"; then
    kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$f" "$f.start"
}

# stop_component <component> <name> <timeout>: stop_pid between "==> Stopping <name>" and its done line; silent
# when it is not running. The `stop` of the servers that are one pid file (Kafka, Cassandra).
stop_component() {
  local comp="$1" name="$2" timeout="$3"
  if ! is_running "$comp"; then rm -f "$(pidfile "$comp")"; return 0; fi
  progress "Stopping $name"
  stop_pid "$comp" "$timeout"
  done_step
}

# component_status <component> <address>: its status line, running with its pid (0) or stopped (3).
component_status() {
  local comp="$1" addr="$2"
  if is_running "$comp"; then
    status_line "$comp" running "$addr" "pid $(cat "$(pidfile "$comp")")"
    return 0
  fi
  status_line "$comp" stopped
  return 3
}

# wait_until <component> <timeout s> <cmd...>: poll cmd until it succeeds. While waiting, give up
# early if the component's process died (no point waiting the full timeout for a corpse).
wait_until() {
  local comp="$1" timeout="$2"; shift 2
  local deadline=$(( $(date +%s) + timeout ))
  while ! "$@" >/dev/null 2>&1; do
    if [ -f "$(pidfile "$comp")" ] && ! is_running "$comp"; then
      die "$comp" "$(logfile "$comp")" "process exited during start-up"
    fi
    # A supervised process that exits is started again (a dependency slow to answer heals so); three exits in a
    # row during start-up are a fault worth stopping `make up` for.
    if [ "$(supervisor_state "$comp" restarts)" -ge 3 ] 2>/dev/null; then
      die "$comp" "$(logfile "$comp")" "process exited $(supervisor_state "$comp" restarts) times during start-up (last exit $(supervisor_state "$comp" last_exit); its supervisor keeps restarting it until its script's stop)"
    fi
    if [ "$(date +%s)" -ge "$deadline" ]; then
      die "$comp" "$(logfile "$comp")" "not ready after ${timeout}s$(supervisor_note "$comp")"
    fi
    sleep 0.5
  done
}

# port_open <port> [host]: something accepts TCP connections there.
port_open() { (exec 3<>"/dev/tcp/${2:-$SAND_BIND}/$1") 2>/dev/null; }

# require_port_free <component> <port>: refuse to start over a port someone else holds.
require_port_free() {
  if port_open "$2"; then
    die "$1" - "port $2 on $SAND_BIND is already taken by another process; stop it or set the port's SAND_*_PORT variable"
  fi
}

# render <template> <out>: replace @VAR@ with the value of $VAR for every VAR named in the template
# (values may span lines). An unset variable is an error, not an empty string.
render() {
  local tmpl="$1" out="$2" var
  for var in $(grep -o '@[A-Z_][A-Z0-9_]*@' "$tmpl" | sort -u | tr -d '@'); do
    [ -n "${!var+x}" ] || die render - "template $tmpl needs \$$var, which is not set"
    export "${var?}"
  done
  perl -pe 's/\@([A-Z_][A-Z0-9_]*)\@/$ENV{$1}/g' "$tmpl" >"$out"
}

# hash_of <paths...>: a stable content hash of files and folders, for "rebuild only when inputs change".
hash_of() {
  (cd "$SAND_ROOT" && find "$@" -type f ! -name '*.pyc' ! -path '*/__pycache__/*' ! -path '*/target/*' \
    ! -path '*/_gen/*' -print0 2>/dev/null \
    | sort -z | xargs -0 sha256sum | sha256sum | cut -c1-16)
}

# java on PATH, or the one Maven uses.
JAVA="${JAVA:-$(command -v java || echo /usr/bin/java)}"

# status_line <component> <state> [address] [details...]: the one format of `make status`.
status_line() {
  local comp="$1" state="$2" addr="${3:-}"
  shift 2; [ $# -gt 0 ] && shift
  printf '%-11s %-8s %-30s %s\n' "$comp" "$state" "$addr" "$*"
}
