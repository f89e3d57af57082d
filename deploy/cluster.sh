#!/usr/bin/env bash
# SAND on several hosts of one machine: hosts h1..hN are network namespaces (deploy/netns.sh) on a bridge, and the
# same Ansible playbook that deploys a real cluster (deploy/ansible/site.yml) starts every component on them from an
# inventory this script writes ($SAND_HOME/cluster/inventory.ini; SAND_CLUSTER_INVENTORY names another one):
# Kafka on h1..h3 (KRaft, one node each), Cassandra on h1..h3 (a ring at replication factor 3), a host agent on every host, a frontend on h1 and h2, and
# nginx on this machine's $SAND_BIND:$SAND_NGINX_PORT (127.0.0.1:8080) in front of the frontends.
#
#   deploy/cluster.sh up N             create hosts h1..hN and start everything (idempotent)
#   deploy/cluster.sh status           one line per host: id, address, state, its host agent's pid, its components
#   deploy/cluster.sh kill H [COMP]    lose host H: kill -9 of its processes, its sandboxes removed, its link cut;
#                                      with COMP (kafka, cassandra, hostagent, frontend-8081) kill -9 of that one only
#   deploy/cluster.sh cut H | heal H   cut host H's link (its processes live on: a network partition) | restore it
#   deploy/cluster.sh start H          bring host H back: heal its link, start what is not running there
#   deploy/cluster.sh nodetool H ARGS  Cassandra's nodetool on host H's node, e.g. `nodetool h1 status`
#   deploy/cluster.sh backup [DIR]     every Cassandra node's replicas of SAND's keyspace saved (deploy/backup.sh)
#   deploy/cluster.sh restore DIR      and loaded back into the live tables
#   deploy/cluster.sh upgrade          rolling restart onto the build on disk, one host at a time: drain its host
#                                      agent, stop it and the frontend (graceful), start them, uncordon, wait
#   deploy/cluster.sh rotate-admin-key [finish]   a new admin key, the old one accepted too until `finish`
#                                      (frontends restarted one at a time, gracefully, for each step)
#   deploy/cluster.sh inventory N      print the inventory `up N` writes
#   deploy/cluster.sh down             stop everything, remove the hosts and the cluster's data (logs are kept)
source "$(dirname "$0")/lib.sh"
# Kafka and Cassandra take logins only (the playbook's sand_auth): the passwords of admin, hostagent and frontend are
# generated at the first `up` in $SAND_HOME/cluster/secrets (mode 600) and copied to each host's state dir; kept by
# `down` (a new `up` makes the users again with them). To look inside, log in as admin with admin.password.

HERE="$SAND_ROOT/deploy"
CLUSTER_HOME="$SAND_HOME/cluster"
INVENTORY="${SAND_CLUSTER_INVENTORY:-$CLUSTER_HOME/inventory.ini}"
PREFIX="${SAND_NETNS_PREFIX:-sand-}"
NETNS=(bash "$HERE/netns.sh")
FRONTEND_PORT=8081
ENTRY=entry # the inventory name of this machine's own part: nginx, outside every host

usage() { sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
hosts() { "${NETNS[@]}" status | awk '{print $1}'; }

cmd_inventory() {
  local n="$1" i h
  line() { echo "$1 sand_addr=$("${NETNS[@]}" addr "$1" 2>/dev/null || echo "${SAND_NETNS_SUBNET:-10.77.0}.$((10 + ${1#h}))") sand_netns=$PREFIX$1"; }
  echo "# SAND on $n hosts of this machine, each a network namespace (deploy/netns.sh); written by deploy/cluster.sh."
  echo "# The groups are a real cluster's (deploy/inventory.example.ini); only how a host is reached differs."
  echo "[kafka]"; for i in $(seq 1 $((n < 3 ? n : 3))); do line "h$i"; done
  echo "[cassandra]"; for i in $(seq 1 $((n < 3 ? n : 3))); do line "h$i"; done
  echo "[hostagents]"; for i in $(seq 1 "$n"); do line "h$i"; done
  echo "[frontends]"; for i in $(seq 1 $((n < 2 ? n : 2))); do line "h$i"; done
  echo "[nginx]"; echo "$ENTRY sand_addr=$SAND_BIND"
  # Vars of a group of its own: they take precedence over the playbook's defaults (roles/sand/defaults).
  cat <<EOF
[sand:children]
kafka
cassandra
hostagents
frontends
nginx
[sand:vars]
ansible_connection=local
ansible_python_interpreter=$SAND_VENV/bin/python
sand_root=$SAND_ROOT
sand_home=$CLUSTER_HOME/{{ inventory_hostname }}
sand_dist=$SAND_DIST
sand_controller_dir=$CLUSTER_HOME
sand_ship_source=false
sand_install=false
sand_prepare_docker=false
sand_kafka_heap=384m
sand_cassandra_ring_delay_ms=3000
sand_background_nice=0
sand_frontend_ports=$FRONTEND_PORT
sand_nginx_port=$SAND_NGINX_PORT
EOF
}

# playbook [ansible-playbook args...]: deploy/ansible/site.yml over the inventory.
playbook() {
  local log="$SAND_LOGS/cluster-playbook.log"
  progress "Starting the cluster's components (deploy/ansible/site.yml, log $log)"
  # one admin key for every frontend of the cluster: this machine's $SAND_HOME/admin-key (or the operator's own)
  SAND_FRONTEND_ADMIN_KEY="$(admin_key)"
  SAND_FRONTEND_ADMIN_KEY_PREVIOUS="$(admin_key_previous)"
  export SAND_FRONTEND_ADMIN_KEY SAND_FRONTEND_ADMIN_KEY_PREVIOUS
  if ! ANSIBLE_STDOUT_CALLBACK=default ANSIBLE_NOCOLOR=1 ANSIBLE_RETRY_FILES_ENABLED=0 ANSIBLE_LOCALHOST_WARNING=0 \
      "$SAND_VENV/bin/ansible-playbook" -i "$INVENTORY" "$HERE/ansible/site.yml" "$@" >"$log" 2>&1; then
    grep -E '^(fatal|failed):|"(msg|stderr|stdout)":' "$log" | tail -n 12 | cut -c1-600 >&2 || true
    die cluster "$log" "the playbook failed"
  fi
  done_step
}

cmd_up() {
  local n="${1:-}"
  [[ "$n" =~ ^[1-9][0-9]?$ ]] || die cluster - "usage: $0 up N (1..99)"
  "${NETNS[@]}" up "$n"
  mkdir -p "$CLUSTER_HOME"
  if [ -z "${SAND_CLUSTER_INVENTORY:-}" ]; then cmd_inventory "$n" >"$INVENTORY"; fi
  # One Docker Engine serves every host of this machine: started, and the sandbox image built, once here.
  if grep -q '^\[hostagents\]' "$INVENTORY"; then
    bash "$HERE/docker.sh" start
    bash "$HERE/sandbox-image.sh"
  fi
  playbook
  cmd_status
  if grep -q '^\[nginx\]' "$INVENTORY"; then echo "SAND cluster of $n hosts is up: http://$SAND_BIND:$SAND_NGINX_PORT"; fi
}

# roles_of H: the components the inventory puts on host H (pid file names in its state dir).
roles_of() {
  awk -v h="$1" -v fe="frontend-$FRONTEND_PORT" '
    /^\[/ { group = substr($0, 2, length($0) - 2); next }
    $1 == h && group == "kafka" { print "kafka" }
    $1 == h && group == "cassandra" { print "cassandra" }
    $1 == h && group == "hostagents" { print "hostagent" }
    $1 == h && group == "frontends" { print fe }
    $1 == h && group == "nginx" { print "nginx" }' "$INVENTORY"
}

# pid_of H COMP: the pid of H's COMP if it is alive (not a zombie), else nothing.
pid_of() { live_pid "$CLUSTER_HOME/$1/run/$2.pid"; }

cmd_status() {
  [ -f "$INVENTORY" ] || return 0
  local h addr up comp state agent parts
  "${NETNS[@]}" status | while read -r h addr _ up; do
    state=up; parts=""; agent="-"
    for comp in $(roles_of "$h"); do
      if [ -n "$(pid_of "$h" "$comp")" ]; then parts+=" $comp"; else parts+=" $comp:stopped"; state=degraded; fi
    done
    if [ "$up" != UP ]; then state="cut"; fi
    if [ -z "$parts" ]; then state=empty; fi
    agent="$(pid_of "$h" hostagent)"
    printf '%-4s %-13s %-8s %-20s%s\n' "$h" "$addr" "$state" "hostagent ${agent:-none}" "$parts"
  done
  if grep -q "^$ENTRY " "$INVENTORY"; then
    local pid; pid="$(pid_of "$ENTRY" nginx)"
    printf '%-4s %-13s %-8s %-20s%s\n' "-" "$SAND_BIND" "$([ -n "$pid" ] && echo up || echo degraded)" \
      "nginx ${pid:-none}" " :$SAND_NGINX_PORT"
  fi
}

cmd_kill() {
  local h="${1:-}" comp="${2:-}" pid
  "${NETNS[@]}" addr "$h" >/dev/null
  if [ -n "$comp" ]; then
    pid="$(pid_of "$h" "$comp")"
    [ -n "$pid" ] || die cluster - "$comp is not running on $h"
    progress "kill -9 of $comp on $h (pid $pid)"
    kill -9 -- "-$pid" 2>/dev/null || kill -9 "$pid"
    done_step
    return 0
  fi
  progress "Losing host $h: kill -9 of its processes, its sandboxes removed, its link cut"
  for pid in $(ip netns pids "$PREFIX$h"); do kill -9 "$pid" 2>/dev/null || true; done
  remove_sandboxes "$h"
  "${NETNS[@]}" cut "$h"
  done_step
}

# remove_sandboxes H: H's sandbox containers (labels sand.host=H and sand.state=its agent's state folder: another
# cluster on this Docker Engine has an H too), as a dead machine's would be gone.
remove_sandboxes() {
  local -a ids
  local state; state="$(realpath -ms "$CLUSTER_HOME/$1/data/hostagent")"
  mapfile -t ids < <(docker ps -aq --filter "label=sand.host=$1" --filter "label=sand.state=$state" 2>/dev/null || true)
  if [ "${#ids[@]}" -gt 0 ]; then docker rm -f "${ids[@]}" >/dev/null 2>&1 || true; fi
}

cmd_start() {
  local h="${1:-}"
  "${NETNS[@]}" addr "$h" >/dev/null
  "${NETNS[@]}" heal "$h"
  playbook --limit "$h"
  cmd_status
}

# cassandra_hosts: the inventory's Cassandra nodes.
cassandra_hosts() { awk '/^\[/ { g = substr($0, 2, length($0) - 2); next } g == "cassandra" { print $1 }' "$INVENTORY"; }

# on_host H CMD...: CMD inside host H's namespace, with H's state dir.
on_host() {
  local h="$1"; shift
  SAND_HOME="$CLUSTER_HOME/$h" SAND_DIST="$SAND_DIST" ip netns exec "$PREFIX$h" "$@"
}

# backup [DIR]: each Cassandra node saves its replicas of SAND's keyspace to DIR/<host>/ (default
# $SAND_HOME/cluster/backups/<UTC time>).
cmd_backup() {
  local dir="${1:-$CLUSTER_HOME/backups/$(date -u +%Y%m%dT%H%M%SZ)}" h t0
  [ -f "$INVENTORY" ] || die cluster - "no cluster here ($INVENTORY): make cluster first"
  dir="$(realpath -m "$dir")"
  t0=$(date +%s)
  for h in $(cassandra_hosts); do on_host "$h" bash "$HERE/backup.sh" save "$dir/$h"; done
  echo "Backup of $(cassandra_hosts | wc -l) Cassandra nodes in $dir ($(( $(date +%s) - t0 )) s); restore it with: $0 restore $dir"
}

# restore DIR: each Cassandra node loads back what it saved in DIR/<host>/.
cmd_restore() {
  local dir="${1:-}" h t0
  if [ -z "$dir" ] || [ ! -d "$dir" ]; then die cluster - "usage: $0 restore DIR (a folder $0 backup made)"; fi
  dir="$(realpath -m "$dir")"
  for h in $(cassandra_hosts); do [ -f "$dir/$h/BACKUP" ] || die cluster - "$dir has no backup of $h"; done
  t0=$(date +%s)
  for h in $(cassandra_hosts); do on_host "$h" bash "$HERE/backup.sh" restore "$dir/$h"; done
  # Each node loaded its own replicas; one that was down while writes went on saved fewer. A full repair makes
  # every replica whole, so a read at any consistency sees the whole backup.
  h="$(cassandra_hosts | head -n 1)"
  progress "Repairing keyspace ${SAND_BACKUP_KEYSPACE:-sand} (replicas made equal)"
  on_host "$h" bash "$HERE/cassandra.sh" nodetool repair -full -- "${SAND_BACKUP_KEYSPACE:-sand}" >/dev/null \
    || die cluster - "nodetool repair of ${SAND_BACKUP_KEYSPACE:-sand} on $h failed"
  done_step
  echo "Restored $(cassandra_hosts | wc -l) Cassandra nodes from $dir ($(( $(date +%s) - t0 )) s)"
}

# restart_on H COMP...: those of H's components that run there stopped gracefully (a frontend: nginx sends its
# requests to the others), then started by the playbook (--limit H, with what is on disk now), then nginx's
# fail_timeout waited out before the caller goes on to the next host.
restart_on() {
  local h="$1" comp
  shift
  for comp in "$@"; do
    if roles_of "$h" | grep -qx "$comp" && [ -n "$(pid_of "$h" "$comp")" ]; then
      progress "Stopping $comp on $h (gracefully)"
      SAND_FRONTEND_PORTS="$FRONTEND_PORT" on_host "$h" bash "$HERE/${comp%%-*}.sh" stop >/dev/null
      done_step
    fi
  done
  # The cluster's one-time setup (Kafka's ACLs, Cassandra's system_auth replication and its repair) is kept by Kafka
  # and Cassandra, which a restart leaves running: skipped, it saves a JVM tool run and a repair per restart.
  playbook --limit "$h" --skip-tags cluster-setup
  nginx_takes_back
}

# rotate-admin-key [finish]: a new admin key with no moment without a working one. First a new key is made (this
# machine's $SAND_HOME/admin-key; the old one kept as admin-key.previous) and every frontend restarted, one at a
# time, accepting both; clients then move to the new key; `rotate-admin-key finish` restarts them again without
# the old one. Run again after an interruption, either step goes on where it stopped.
cmd_rotate_admin_key() {
  [ -f "$INVENTORY" ] || die cluster - "no cluster here ($INVENTORY): make cluster first"
  local step="${1:-begin}" h t0
  case "$step" in begin | finish) ;; *) usage ;; esac
  rotate_admin_key_files "$step"
  t0=$(date +%s)
  for h in $(hosts); do
    roles_of "$h" | grep -qx "frontend-$FRONTEND_PORT" || continue
    restart_on "$h" "frontend-$FRONTEND_PORT"
  done
  if [ "$step" = begin ]; then
    echo "Every frontend takes the new admin key ($SAND_HOME/admin-key) and the old one ($(( $(date +%s) - t0 )) s)."
    echo "Give clients the new key, then: $0 rotate-admin-key finish"
  else
    echo "The old admin key is no longer accepted ($(( $(date +%s) - t0 )) s)."
  fi
}

# sand_admin ARGS: the operator's CLI against this cluster's nginx with its admin key.
sand_admin() {
  SAND_ADMIN_KEY="$(admin_key)" "$SAND_VENV/bin/sand" admin --url "http://$SAND_BIND:$SAND_NGINX_PORT" "$@"
}

# deployed_on H: how many applications run on host H (its sandboxes in state deployed), as the admin API says; not
# those the scheduler places (max_hosts): a drain moves them to other hosts for good.
deployed_on() {
  sand_admin hosts --json | "$SAND_VENV/bin/python" -c '
import json, sys
h = [x for x in json.load(sys.stdin) if x["host"] == sys.argv[1]]
print(sum(1 for s in h[0]["sandboxes"] if s["status"] == "deployed" and not s.get("placed_by_scheduler"))
      if h and h[0]["alive"] else -1)' "$1"
}

# upgrade: every host onto the build on disk (deploy/install.sh or mvn install first), one at a time, so requests
# keep being served: its host agent drained (its applications move to the others), it and the host's frontend
# stopped gracefully, both started by the playbook (--limit H), the host uncordoned, and its applications running
# there again before the next host. Kafka and Cassandra are left running.
cmd_upgrade() {
  [ -f "$INVENTORY" ] || die cluster - "no cluster here ($INVENTORY): make cluster first"
  local h before t0 comp
  t0=$(date +%s)
  for h in $(hosts); do
    before=0
    if roles_of "$h" | grep -qx hostagent; then
      before="$(deployed_on "$h")"
      sand_admin drain "$h" --reason "rolling upgrade" --wait 180 || die cluster - "$h did not drain within 180 s"
    fi
    restart_on "$h" hostagent "frontend-$FRONTEND_PORT"
    if roles_of "$h" | grep -qx hostagent; then
      sand_admin uncordon "$h"
      progress "Waiting for $h to run its $before applications again"
      local end=$(( $(date +%s) + 180 ))
      while [ "$(deployed_on "$h")" -lt "$before" ]; do
        [ "$(date +%s)" -lt "$end" ] || die cluster - "$h runs $(deployed_on "$h") of its $before applications after 180 s"
        sleep 1
      done
      done_step
    fi
  done
  echo "Rolling upgrade of $(hosts | wc -l) hosts done in $(( $(date +%s) - t0 )) s"
}

cmd_down() {
  local h pid
  progress "Stopping the cluster"
  if [ -f "$CLUSTER_HOME/$ENTRY/run/nginx.pid" ]; then SAND_HOME="$CLUSTER_HOME/$ENTRY" bash "$HERE/nginx.sh" stop; fi
  for h in $(hosts); do
    # A host agent stops its sandboxes when asked (TERM); then the rest. Whatever is left is killed.
    if [ -n "$(pid_of "$h" hostagent)" ]; then SAND_HOME="$CLUSTER_HOME/$h" bash "$HERE/hostagent.sh" stop || true; fi
    for pid in $(ip netns pids "$PREFIX$h"); do kill -TERM "$pid" 2>/dev/null || true; done
  done
  for _ in $(seq 30); do
    [ -z "$(for h in $(hosts); do ip netns pids "$PREFIX$h"; done)" ] && break
    sleep 0.5
  done
  for h in $(hosts); do
    for pid in $(ip netns pids "$PREFIX$h"); do kill -9 "$pid" 2>/dev/null || true; done
    remove_sandboxes "$h"
  done
  "${NETNS[@]}" down
  # A throwaway cluster: its data goes (a new `up` may have another size; Kafka's static quorum is fixed at format).
  rm -rf "$CLUSTER_HOME"/*/data "$CLUSTER_HOME"/*/run "$CLUSTER_HOME/kafka.cluster.id"
  done_step
}

case "${1:-}" in
  up) shift; cmd_up "$@" ;;
  status) cmd_status ;;
  kill) shift; cmd_kill "$@" ;;
  cut) shift; "${NETNS[@]}" cut "${1:-}" ;;
  heal) shift; "${NETNS[@]}" heal "${1:-}" ;;
  start) shift; cmd_start "$@" ;;
  nodetool) shift; h="${1:-}"; shift; "${NETNS[@]}" addr "$h" >/dev/null; on_host "$h" bash "$HERE/cassandra.sh" nodetool "$@" ;;
  inventory) shift; [[ "${1:-}" =~ ^[1-9][0-9]?$ ]] || usage; cmd_inventory "$1" ;;
  upgrade) cmd_upgrade ;;
  rotate-admin-key) shift; cmd_rotate_admin_key "$@" ;;
  backup) shift; cmd_backup "$@" ;;
  restore) shift; cmd_restore "$@" ;;
  down) cmd_down ;;
  *) usage ;;
esac
