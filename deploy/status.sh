#!/usr/bin/env bash
# One line per component: running/stopped and its address. Exit 0 only if all are running.
source "$(dirname "$0")/lib.sh"
D="$SAND_ROOT/deploy"
rc=0
for comp in docker kafka cassandra nginx hostagent frontend; do
  if [ -x "$D/$comp.sh" ]; then "$D/$comp.sh" status || rc=3; fi
done
if command -v docker >/dev/null && docker image inspect "$SAND_SANDBOX_IMAGE:latest" >/dev/null 2>&1; then
  status_line image built "$SAND_SANDBOX_IMAGE:latest"
else
  status_line image missing "$SAND_SANDBOX_IMAGE:latest"; rc=3
fi
exit "$rc"
