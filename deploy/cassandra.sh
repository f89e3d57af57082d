#!/usr/bin/env bash
# Cassandra for SAND: one node on loopback, run straight from the Maven Central jars (no tarball).
#
#   deploy/cassandra.sh fetch|start|stop|status|ready
#   deploy/cassandra.sh nodetool ARGS...   Cassandra's nodetool against this node (local JMX), e.g. `nodetool status`
#   deploy/cassandra.sh replicate          once every node of a new ring joined: the logins' keyspace (system_auth)
#                                          and Cassandra's other replicated system keyspaces to
#                                          SAND_CASSANDRA_REPLICATION, then a full repair of system_auth
#
# Layout (see lib.sh):
#   jars    $SAND_DIST/cassandra-$CASSANDRA_VERSION/*.jar  (+ .fetched stamp)
#   config  $SAND_CONF/cassandra/{cassandra.yaml,logback.xml}  (from deploy/cassandra/)
#   data    $SAND_DATA/cassandra/{data,commitlog,saved_caches,hints,cdc_raw}
#   log     $SAND_LOGS/cassandra.log   (written and rolled by Cassandra: deploy/cassandra/logback.xml; its console
#                                       output in cassandra.out; Maven output of `fetch`: cassandra-fetch.log)
#
# Knobs (environment): SAND_CASSANDRA_PORT / SAND_CASSANDRA_STORAGE_PORT (lib.sh),
#   SAND_CASSANDRA_HEAP_MIN / SAND_CASSANDRA_HEAP_MAX  (default 256m / 768m),
#   SAND_CASSANDRA_JMX_PORT  (default 7199, bound to this host's loopback only, for nodetool; 0 = JMX off),
#   SAND_CASSANDRA_SEEDS  the ring's seed nodes, "addr:port,..." (default this node: a ring of one),
#   SAND_CASSANDRA_REPLICATION  the keyspaces' replication factor (default 1), for token allocation and `replicate`,
#   SAND_CASSANDRA_RING_DELAY_MS  how long a joining node listens to gossip first (empty: Cassandra's 30 s; the
#     playbook sets less for the hosts of one machine),
#   SAND_CASSANDRA_SECRETS  folder of the cluster's passwords, {admin,hostagent,frontend}.password, mode 600 (the
#     playbook generates them); set: PasswordAuthenticator and CassandraAuthorizer, and `start` makes the roles
#     (deploy/cassandra/auth.py; the built-in cassandra superuser is disabled); empty (the single-host system on
#     loopback): no authentication.
# shellcheck source=deploy/lib.sh
source "$(dirname "$0")/lib.sh"

COMP=cassandra
HERE="$SAND_ROOT/deploy/cassandra"
CASS_DIST="$SAND_DIST/cassandra-$CASSANDRA_VERSION"
CASS_STAMP="$CASS_DIST/.fetched"
CASS_CONF="$SAND_CONF/cassandra"
CASSANDRA_DATA_DIR="$SAND_DATA/cassandra"
export CASSANDRA_DATA_DIR # used by render for @CASSANDRA_DATA_DIR@
SAND_CASSANDRA_STORAGE_PORT="${SAND_CASSANDRA_STORAGE_PORT:-7000}"
export SAND_CASSANDRA_STORAGE_PORT
export SAND_CASSANDRA_SEEDS="${SAND_CASSANDRA_SEEDS:-$SAND_BIND:$SAND_CASSANDRA_STORAGE_PORT}"
CASS_HEAP_MIN="${SAND_CASSANDRA_HEAP_MIN:-256m}"
CASS_HEAP_MAX="${SAND_CASSANDRA_HEAP_MAX:-768m}"
CASS_JMX_PORT="${SAND_CASSANDRA_JMX_PORT:-7199}"
[ "$CASS_JMX_PORT" != 0 ] || CASS_JMX_PORT=""
export SAND_CASSANDRA_REPLICATION="${SAND_CASSANDRA_REPLICATION:-1}"
CASS_RING_DELAY_MS="${SAND_CASSANDRA_RING_DELAY_MS:-}"
START_TIMEOUT=180
STOP_TIMEOUT=60 # a clean stop drains (flushes memtables); KILL only after this
FETCH_LOG="$SAND_LOGS/cassandra-fetch.log"
CASS_SECRETS="${SAND_CASSANDRA_SECRETS:-}"
if [ -n "$CASS_SECRETS" ]; then
  for r in admin hostagent frontend; do
    [ -s "$CASS_SECRETS/$r.password" ] || die "$COMP" - "SAND_CASSANDRA_SECRETS=$CASS_SECRETS has no $r.password"
  done
  export SAND_CASSANDRA_AUTHENTICATOR=PasswordAuthenticator SAND_CASSANDRA_AUTHORIZER=CassandraAuthorizer
else
  export SAND_CASSANDRA_AUTHENTICATOR=AllowAllAuthenticator SAND_CASSANDRA_AUTHORIZER=AllowAllAuthorizer
fi

# ---- fetch --------------------------------------------------------------------------------------

# The stamp records version + pom hash, so editing the pom (e.g. adding a jar) re-fetches.
fetch_key() { printf '%s %s\n' "$CASSANDRA_VERSION" "$(sha256sum "$HERE/pom.xml" | cut -c1-16)"; }

fetch() {
  if [ -f "$CASS_STAMP" ] && [ "$(cat "$CASS_STAMP")" = "$(fetch_key)" ]; then return 0; fi
  command -v mvn >/dev/null 2>&1 || die "$COMP" - "mvn not found (apt-get install maven)"
  progress "Fetching Cassandra $CASSANDRA_VERSION jars"
  # Copy into a temp dir and rename, so an interrupted fetch never looks complete.
  local tmp="$CASS_DIST.tmp.$$"
  rm -rf "$tmp"
  if ! mvn -q -B -f "$HERE/pom.xml" -Dcassandra.version="$CASSANDRA_VERSION" \
      dependency:copy-dependencies -DoutputDirectory="$tmp" >"$FETCH_LOG" 2>&1; then
    rm -rf "$tmp"
    die "$COMP" "$FETCH_LOG" "fetching cassandra-all $CASSANDRA_VERSION from Maven Central failed"
  fi
  [ -f "$tmp/cassandra-all-$CASSANDRA_VERSION.jar" ] \
    || die "$COMP" "$FETCH_LOG" "cassandra-all-$CASSANDRA_VERSION.jar missing after fetch"
  fetch_key >"$tmp/.fetched"
  rm -rf "$CASS_DIST"
  mv "$tmp" "$CASS_DIST"
  done_step
}

# ---- readiness ----------------------------------------------------------------------------------

# cql_supported: speak the CQL native protocol. A v4 OPTIONS request (version 0x04, flags 0,
# stream 0, opcode 0x05, empty body) is legal before STARTUP; a live server answers with a
# SUPPORTED frame (version 0x84 = response|v4, opcode 0x06). The native transport only starts
# once the node has joined its ring and loaded its schema, so this is a real "can serve CQL" check
# that needs neither cqlsh nor a driver. Bounded by `timeout` so a wedged server cannot hang us.
cql_supported() {
  local hdr
  # shellcheck disable=SC2016 # $1/$2 are expanded by the inner bash, not here
  hdr="$(timeout 5 bash -c '
      exec 3<>"/dev/tcp/$1/$2" || exit 1
      printf "\x04\x00\x00\x00\x05\x00\x00\x00\x00" >&3
      head -c 9 <&3 | od -An -tx1' _ "$SAND_BIND" "$SAND_CASSANDRA_PORT" 2>/dev/null)" || return 1
  # shellcheck disable=SC2086 # split the hex bytes into words on purpose
  set -- $hdr
  [ "${1:-}" = 84 ] && [ "${5:-}" = 06 ]
}

# cql_select: once the project venv has cassandra-driver, also run a real query. Exit 100 from the
# script means "no driver there", which is not a failure: the protocol check above already passed.
cql_select() {
  [ -x "$SAND_VENV/bin/python" ] || return 0
  if [ -n "$CASS_SECRETS" ]; then # with logins the driver is required: it is how the roles are made
    timeout 20 "$SAND_VENV/bin/python" "$HERE/auth.py" ready "$SAND_BIND" "$SAND_CASSANDRA_PORT" "$CASS_SECRETS" \
      >/dev/null 2>&1
    return
  fi
  local rc=0
  timeout 20 "$SAND_VENV/bin/python" - "$SAND_BIND" "$SAND_CASSANDRA_PORT" <<'PY' >/dev/null 2>&1 || rc=$?
import sys
try:
    from cassandra.cluster import Cluster
except Exception:
    sys.exit(100)
cluster = Cluster([sys.argv[1]], port=int(sys.argv[2]), connect_timeout=5, control_connection_timeout=5)
try:
    row = cluster.connect().execute("SELECT release_version FROM system.local", timeout=5).one()
    sys.exit(0 if row and row.release_version else 1)
finally:
    cluster.shutdown()
PY
  [ "$rc" -eq 0 ] || [ "$rc" -eq 100 ]
}

ready() { cql_supported && cql_select; }

# ---- start / stop / status ----------------------------------------------------------------------

# jvm_opts_file <file>: the '-' lines of an upstream-style *.options file, one JVM arg per word
# ("--add-opens a/b=ALL-UNNAMED" is two args), like upstream's cassandra.in.sh reads them.
JVM_ARGS=()
jvm_opts_file() {
  local line words
  while IFS= read -r line || [ -n "$line" ]; do
    line="${line#"${line%%[![:space:]]*}"}"
    case "$line" in -*) ;; *) continue ;; esac
    read -r -a words <<<"$line"
    JVM_ARGS+=("${words[@]}")
  done <"$1"
}

start() {
  if is_running "$COMP"; then
    if ready; then roles; echo "    $COMP already running"; return 0; fi
    # Our process is alive but not answering yet (another start still waiting?): wait, don't double-start.
    progress "Waiting for Cassandra (pid $(cat "$(pidfile "$COMP")"))"
    wait_until "$COMP" "$START_TIMEOUT" ready
    done_step
    return 0
  fi
  # Only now: never swap the jar dir under a running node.
  fetch
  require_port_free "$COMP" "$SAND_CASSANDRA_PORT"
  require_port_free "$COMP" "$SAND_CASSANDRA_STORAGE_PORT"
  if [ -n "$CASS_JMX_PORT" ]; then require_port_free "$COMP" "$CASS_JMX_PORT"; fi

  progress "Starting Cassandra $CASSANDRA_VERSION on $SAND_BIND:$SAND_CASSANDRA_PORT"
  mkdir -p "$CASS_CONF/triggers" "$CASSANDRA_DATA_DIR"/{data,commitlog,saved_caches,hints,cdc_raw,logs}
  render "$HERE/cassandra.yaml.tmpl" "$CASS_CONF/cassandra.yaml"
  cp "$HERE/logback.xml" "$CASS_CONF/logback.xml"

  local jamm
  jamm="$(find "$CASS_DIST" -maxdepth 1 -name 'jamm-*.jar' | head -n 1)"
  [ -n "$jamm" ] || die "$COMP" "$FETCH_LOG" "jamm jar missing from $CASS_DIST (re-run fetch)"

  JVM_ARGS=()
  jvm_opts_file "$HERE/jvm17.options"
  JVM_ARGS+=(
    "-Xms$CASS_HEAP_MIN" "-Xmx$CASS_HEAP_MAX"
    # Upstream cassandra-env.sh (5.0) always loads jamm as an agent; it sizes memtable objects.
    "-javaagent:$jamm"
    # Crash files go to the log dir, not to whatever directory start was called from.
    "-XX:ErrorFile=$SAND_LOGS/cassandra-hs_err_%p.log"
    "-Dcassandra.config=file://$CASS_CONF/cassandra.yaml"
    "-Dcassandra-foreground=yes"
    "-Dcassandra.storagedir=$CASSANDRA_DATA_DIR"
    # Cassandra's own default dir for audit/full-query logs; kept beside the data, not in $SAND_LOGS.
    "-Dcassandra.logdir=$CASSANDRA_DATA_DIR/logs"
    "-Dlogback.configurationFile=$CASS_CONF/logback.xml"
    "-Dsand.log.file=$(logfile "$COMP")" # written and rolled by Cassandra itself (deploy/cassandra/logback.xml)
    # Default is conf/triggers relative to the cwd; an empty dir stops a warning on every DDL.
    "-Dcassandra.triggers_dir=$CASS_CONF/triggers"
    # With logins: the built-in superuser at once (10 s by default), so the roles are made without waiting.
    "-Dcassandra.superuser_setup_delay_ms=0"
  )
  if [ -n "$CASS_RING_DELAY_MS" ]; then JVM_ARGS+=("-Dcassandra.ring_delay_ms=$CASS_RING_DELAY_MS"); fi
  if [ -n "$CASS_JMX_PORT" ]; then
    # Local-only JMX (what upstream does with LOCAL_JMX=yes), for nodetool.
    JVM_ARGS+=("-Dcassandra.jmx.local.port=$CASS_JMX_PORT" "-Dcom.sun.management.jmxremote.authenticate=false"
      "-Djava.rmi.server.hostname=$SAND_BIND")
  fi
  # No JMX port property => Cassandra logs "JMX is not enabled" and runs without it (no port to clash).

  # Cassandra always calls mlockall(MCL_CURRENT) at start-up. As root (CAP_IPC_LOCK) that succeeds
  # and pins every mapped page: ~0.7 GB resident before the first query, never returned. On this
  # swap-less, shared box we would rather have it fail: without the capability RLIMIT_MEMLOCK
  # (8 MiB here) applies, Cassandra logs one "Unable to lock JVM memory (ENOMEM)" warning and goes
  # on. Dropping a capability needs CAP_SETPCAP, so probe first (a tight container may lack it).
  local nolock=()
  if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null 2>&1 \
      && setpriv --inh-caps=-ipc_lock --bounding-set=-ipc_lock -- true 2>/dev/null; then
    nolock=(setpriv --inh-caps=-ipc_lock --bounding-set=-ipc_lock --)
  fi
  # Fewer glibc malloc arenas: upstream's cassandra-env.sh sets 4 to keep native memory down.
  (cd "$CASSANDRA_DATA_DIR" && MALLOC_ARENA_MAX=4 OWN_LOG=1 start_background "$COMP" "${nolock[@]}" "$JAVA" "${JVM_ARGS[@]}" \
    -cp "$CASS_DIST/*:$CASS_CONF" org.apache.cassandra.service.CassandraDaemon)
  wait_until "$COMP" "$START_TIMEOUT" ready
  roles
  done_step
}

# roles: with secrets, the roles each SAND process logs in as (idempotent; see deploy/cassandra/auth.py).
roles() {
  [ -n "$CASS_SECRETS" ] || return 0
  timeout 120 "$SAND_VENV/bin/python" "$HERE/auth.py" roles "$SAND_BIND" "$SAND_CASSANDRA_PORT" "$CASS_SECRETS" \
    >"$SAND_LOGS/cassandra-roles.log" 2>&1 || die "$COMP" "$SAND_LOGS/cassandra-roles.log" "could not make the roles"
}

# nodetool ARGS: Cassandra's own nodetool (in cassandra-all) over this node's local JMX.
nodetool() {
  [ -n "$CASS_JMX_PORT" ] || die "$COMP" - "JMX is off (SAND_CASSANDRA_JMX_PORT=0): nodetool needs it"
  [ -f "$CASS_STAMP" ] || die "$COMP" - "Cassandra's jars are missing; run deploy/install.sh"
  local opts=()
  jvm_opts_file "$HERE/jvm17.options" # only its --add-exports/--add-opens matter here
  for o in "${JVM_ARGS[@]}"; do case "$o" in --add-*|*=ALL-UNNAMED) opts+=("$o") ;; esac; done
  "$JAVA" -Xmx128m -XX:+UseSerialGC "${opts[@]}" "-Dlogback.configurationFile=$HERE/nodetool-logback.xml" -cp "$CASS_DIST/*" \
    org.apache.cassandra.tools.NodeTool -h 127.0.0.1 -p "$CASS_JMX_PORT" "$@"
}

# replicate: after the last node of a new ring joined, Cassandra's replicated system keyspaces (the logins among
# them) get SAND's replication factor, and a full repair of system_auth copies the logins made on the first node to
# every replica: without it a login would fail wherever a replica lacks the row (Cassandra's documented procedure).
replicate() {
  [ "$SAND_CASSANDRA_REPLICATION" -gt 1 ] || return 0
  local log="$SAND_LOGS/cassandra-replicate.log"
  progress "Replicating Cassandra's system keyspaces (factor $SAND_CASSANDRA_REPLICATION)"
  timeout 120 "$SAND_VENV/bin/python" "$HERE/auth.py" replicate "$SAND_BIND" "$SAND_CASSANDRA_PORT" \
    "${CASS_SECRETS:--}" "$SAND_CASSANDRA_REPLICATION" >"$log" 2>&1 || die "$COMP" "$log" "ALTER KEYSPACE failed"
  timeout 300 "$0" nodetool repair -full system_auth >>"$log" 2>&1 || die "$COMP" "$log" "repair of system_auth failed"
  done_step
}

stop() { stop_component "$COMP" Cassandra "$STOP_TIMEOUT"; }
status() { component_status "$COMP" "$SAND_BIND:$SAND_CASSANDRA_PORT"; }

case "${1:-}" in
  fetch) fetch ;;
  start) start ;;
  stop) stop ;;
  status) status ;;
  ready) ready ;;
  nodetool) shift; nodetool "$@" ;;
  replicate) replicate ;;
  *) echo "usage: $0 fetch|start|stop|status|ready|nodetool ARGS|replicate" >&2; exit 2 ;;
esac
