#!/usr/bin/env bash
# Stop everything `make up` started (by pid file, newest first). Never touches processes we did not
# start; cleans stale pid files left by a crash.
source "$(dirname "$0")/lib.sh"
D="$SAND_ROOT/deploy"
for comp in frontend hostagent nginx cassandra kafka docker; do
  if [ -x "$D/$comp.sh" ]; then "$D/$comp.sh" stop; fi
done
# Anything else that left a pid file in the state dir (e.g. a process a test started).
for f in "$SAND_RUN"/*.pid; do
  [ -e "$f" ] || continue
  stop_pid "$(basename "$f" .pid)" 10
done
echo "SAND is down."
