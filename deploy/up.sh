#!/usr/bin/env bash
# Bring up single-host SAND: install what is missing, start every component, wait for each to be
# ready, then print one line per component with its address. Running it twice is harmless.
source "$(dirname "$0")/lib.sh"
D="$SAND_ROOT/deploy"
T0="$(_t0)"

"$D/install.sh"
"$D/docker.sh" start

# Kafka and Cassandra are slow JVM starts and the sandbox image build is disk/network bound: run the
# three side by side and report each one's output in order.
jobs_dir="$(mktemp -d)"
trap 'rm -rf "$jobs_dir"' EXIT
declare -A pids=()
for job in "kafka.sh start" "cassandra.sh start" "sandbox-image.sh"; do
  name="${job%% *}"
  # shellcheck disable=SC2086
  "$D"/$job >"$jobs_dir/$name.out" 2>&1 &
  pids[$name]=$!
done
failed=0
for name in kafka.sh cassandra.sh sandbox-image.sh; do
  if ! wait "${pids[$name]}"; then failed=1; fi
  cat "$jobs_dir/$name.out"
done
[ "$failed" = 0 ] || exit 1

"$D/nginx.sh" start
for comp in hostagent frontend; do
  if [ -x "$D/$comp.sh" ]; then "$D/$comp.sh" start; fi
done

echo "SAND is up ($(_elapsed "$T0")). State dir: $SAND_HOME; the operator's admin key: $SAND_HOME/admin-key (sand admin)"
"$D/status.sh"
