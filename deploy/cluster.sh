#!/usr/bin/env bash
# SAND on several hosts of one machine (issue 12, in progress): hosts h1..hN from deploy/netns.sh, each running a
# Kafka node of one KRaft cluster (broker and controller; static quorum of every host; internal topics replicated
# min(N, 3) times, 2 in sync). Cassandra, host agents, frontends and nginx per host are not started here yet.
#
#   deploy/cluster.sh up N      create the hosts and start their Kafka nodes (N >= 1)
#   deploy/cluster.sh status    one line per host: id, address, link, Kafka node state and pid
#   deploy/cluster.sh kill H    lose host H: kill -9 its processes and cut its link
#   deploy/cluster.sh down      stop everything and remove the hosts
source "$(dirname "$0")/lib.sh"

HERE="$SAND_ROOT/deploy"
CLUSTER_DATA="$SAND_DATA/cluster"
NETNS=(bash "$HERE/netns.sh")

usage() { sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
hosts() { "${NETNS[@]}" status | awk '{print $1}'; }

# kafka_node H VOTERS CMD: deploy/kafka.sh CMD for host H's node, inside H's namespace, on H's address.
kafka_node() {
  local h="$1" voters="$2" cmd="$3" i="${1#h}"
  SAND_BIND="$("${NETNS[@]}" addr "$h")" SAND_KAFKA_COMP="kafka-$h" SAND_KAFKA_NODE_ID="$i" \
    SAND_KAFKA_VOTERS="$voters" SAND_KAFKA_NETNS="${SAND_NETNS_PREFIX:-sand-}$h" SAND_KAFKA_HEAP=384m \
    SAND_KAFKA_CLUSTER_ID_FILE="$CLUSTER_DATA/kafka.cluster.id" SAND_KAFKA_NO_WAIT=1 \
    bash "$HERE/kafka.sh" "$cmd"
}

voters_of() {
  local v="" h
  for h in "$@"; do v+="${v:+,}${h#h}@$("${NETNS[@]}" addr "$h"):$SAND_KAFKA_CONTROLLER_PORT"; done
  echo "$v"
}

cmd_up() {
  local n="${1:-}" h
  [[ "$n" =~ ^[1-9][0-9]?$ ]] || die cluster - "usage: $0 up N (1..99)"
  "${NETNS[@]}" up "$n"
  mkdir -p "$CLUSTER_DATA"
  local all=(); for i in $(seq 1 "$n"); do all+=("h$i"); done
  local voters; voters="$(voters_of "${all[@]}")"
  for h in "${all[@]}"; do kafka_node "$h" "$voters" start; done
  progress "Waiting for the $n Kafka nodes to form a quorum and answer"
  for h in "${all[@]}"; do
    wait_until "kafka-$h" 120 kafka_node "$h" "$voters" ready
  done
  done_step
  echo "    bootstrap: $(for h in "${all[@]}"; do printf '%s:%s,' "$("${NETNS[@]}" addr "$h")" "$SAND_KAFKA_PORT"; done | sed 's/,$//')"
}

cmd_status() {
  local h addr link up pid state
  # netns.sh status has each host's address and link already: one call, not two more per host.
  "${NETNS[@]}" status | while read -r h addr link up; do
    pid="$(cat "$(pidfile "kafka-$h")" 2>/dev/null || true)"
    state=stopped; if is_running "kafka-$h"; then state=running; fi
    printf '%-4s %-14s %-10s kafka %-8s %s\n' "$h" "$addr" "$link$up" "$state" "${pid:+pid $pid}"
  done
}

cmd_kill() {
  local h="${1:-}"
  "${NETNS[@]}" addr "$h" >/dev/null
  progress "Losing host $h: kill -9 of its processes, its link cut"
  local ns="${SAND_NETNS_PREFIX:-sand-}$h" pid
  for pid in $(ip netns pids "$ns"); do kill -9 "$pid" 2>/dev/null || true; done
  "${NETNS[@]}" cut "$h"
  done_step
}

cmd_down() {
  local h
  for h in $(hosts); do
    if is_running "kafka-$h"; then stop_pid "kafka-$h" 30; fi
    rm -f "$(pidfile "kafka-$h")"
  done
  "${NETNS[@]}" down
}

case "${1:-}" in
  up) shift; cmd_up "$@" ;;
  status) cmd_status ;;
  kill) shift; cmd_kill "$@" ;;
  down) cmd_down ;;
  *) usage ;;
esac
