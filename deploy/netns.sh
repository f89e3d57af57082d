#!/usr/bin/env bash
# Several SAND hosts on one machine: one network namespace per host, each with its own address on a bridge
# this script creates (paper §3: a host is what runs a host agent; here a namespace plays one). Nothing leaves
# the machine: the bridge has no uplink, and the root namespace reaches the hosts over it.
#
#   deploy/netns.sh up N          create hosts h1..hN (idempotent; an existing host is kept)
#   deploy/netns.sh down          remove every host and the bridge
#   deploy/netns.sh status        one line per host: id, address, link state
#   deploy/netns.sh cut HOST      cut a host's link (its processes live on, unreachable: a network partition)
#   deploy/netns.sh heal HOST     bring the link back
#   deploy/netns.sh exec HOST CMD...   run CMD inside the host's namespace
#   deploy/netns.sh addr HOST     print the host's address
#   deploy/netns.sh reach HOST ADDR   exit 0 if ADDR answers from inside HOST
#
# Env: SAND_NETNS_PREFIX (sand-), SAND_NETNS_BRIDGE (sandbr0), SAND_NETNS_SUBNET (10.77.0; the bridge is .1,
# host i is .(10+i)).
source "$(dirname "$0")/lib.sh"

PREFIX="${SAND_NETNS_PREFIX:-sand-}"
BRIDGE="${SAND_NETNS_BRIDGE:-sandbr0}"
SUBNET="${SAND_NETNS_SUBNET:-10.77.0}"
BRIDGE_ADDR="$SUBNET.1"

fail() { die netns - "$@"; }
usage() { sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

ns_of() { echo "$PREFIX$1"; }                     # h2 -> sand-h2
index_of() { local h="$1"; echo "${h#h}"; }        # h2 -> 2
addr_of() { echo "$SUBNET.$((10 + $(index_of "$1")))"; }
veth_of() { echo "v${PREFIX%-}$(index_of "$1")"; } # the root side of host i's pair: vsand2 (IFNAMSIZ is 15)

hosts() { ip netns list 2>/dev/null | awk '{print $1}' | grep "^$PREFIX" | sed "s/^$PREFIX//" | sort -V; }

# reachable FROM_HOST ADDR: a TCP connect to a closed port there is refused at once when the address answers
# (no ping in a minimal Debian); a cut link times out instead.
reachable() {
  local out
  out="$(ip netns exec "$(ns_of "$1")" timeout 2 bash -c "exec 3<>/dev/tcp/$2/9" 2>&1)" && return 0
  [[ "$out" == *"refused"* ]]
}

check_host() {
  [[ "$1" =~ ^h[0-9]{1,3}$ ]] || fail "host ids are h1, h2, ... (got '$1')"
  ip netns list | awk '{print $1}' | grep -qx "$(ns_of "$1")" || fail "no host $1 (deploy/netns.sh up N first)"
}

bridge_up() {
  if ! ip link show "$BRIDGE" >/dev/null 2>&1; then
    ip link add "$BRIDGE" type bridge
    ip addr add "$BRIDGE_ADDR/24" dev "$BRIDGE"
  fi
  ip link set "$BRIDGE" up
  # Docker sets the FORWARD policy to DROP and loads br_netfilter, which sends bridged frames through it:
  # let traffic between the hosts on this bridge through (DOCKER-USER is the chain Docker leaves to us).
  local chain=FORWARD
  iptables -L DOCKER-USER -n >/dev/null 2>&1 && chain=DOCKER-USER
  iptables -C "$chain" -i "$BRIDGE" -o "$BRIDGE" -j ACCEPT 2>/dev/null \
    || iptables -I "$chain" -i "$BRIDGE" -o "$BRIDGE" -j ACCEPT
}

host_up() {
  local h="$1" ns veth
  ns="$(ns_of "$h")"; veth="$(veth_of "$h")"
  if ! ip netns list | awk '{print $1}' | grep -qx "$ns"; then
    ip netns add "$ns"
  fi
  if ! ip link show "$veth" >/dev/null 2>&1; then
    ip link add "$veth" type veth peer name eth0 netns "$ns"
    ip link set "$veth" master "$BRIDGE"
    ip -n "$ns" addr add "$(addr_of "$h")/24" dev eth0
  fi
  ip link set "$veth" up
  ip -n "$ns" link set lo up
  ip -n "$ns" link set eth0 up
}

host_down() {
  local h="$1"
  ip link del "$(veth_of "$h")" 2>/dev/null || true
  ip netns del "$(ns_of "$h")" 2>/dev/null || true
}

cmd="${1:-}"; shift || true
case "$cmd" in
  up)
    n="${1:-}"; [[ "$n" =~ ^[1-9][0-9]{0,2}$ ]] || fail "usage: $0 up N (1..254)"
    progress "Creating $n host namespaces on bridge $BRIDGE ($SUBNET.0/24)"
    bridge_up
    for i in $(seq 1 "$n"); do host_up "h$i"; done
    for i in $(seq 1 "$n"); do
      reachable "h$i" "$BRIDGE_ADDR" || fail "host h$i cannot reach the bridge at $BRIDGE_ADDR"
    done
    done_step
    ;;
  down)
    progress "Removing the host namespaces and bridge $BRIDGE"
    for h in $(hosts); do host_down "$h"; done
    ip link del "$BRIDGE" 2>/dev/null || true
    for chain in DOCKER-USER FORWARD; do
      while iptables -D "$chain" -i "$BRIDGE" -o "$BRIDGE" -j ACCEPT 2>/dev/null; do :; done
    done
    done_step
    ;;
  status)
    for h in $(hosts); do
      state="$(ip -br link show "$(veth_of "$h")" 2>/dev/null | awk '{print $2}')"
      printf '%-5s %-15s link %s\n' "$h" "$(addr_of "$h")" "${state:-missing}"
    done
    ;;
  cut) check_host "${1:-}"; ip link set "$(veth_of "$1")" down ;;
  heal) check_host "${1:-}"; ip link set "$(veth_of "$1")" up ;;
  addr) check_host "${1:-}"; addr_of "$1" ;;
  reach) check_host "${1:-}"; reachable "$1" "${2:?usage: $0 reach HOST ADDR}" ;;
  exec) check_host "${1:-}"; h="$1"; shift; exec ip netns exec "$(ns_of "$h")" "$@" ;;
  *) usage ;;
esac
