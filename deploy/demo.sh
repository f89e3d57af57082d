#!/usr/bin/env bash
# The demo `make demo` runs after `make up`: applications from examples/ invoked for real.
# Until the host agent and frontend exist, the applications run in the emulator: the real grain worker
# code (a worker process per grain, a forked instance per event) over an in-memory local bus and data
# layer. Deploying through nginx -> frontend -> Kafka -> host agent -> sandbox comes with them.
source "$(dirname "$0")/lib.sh"
SAND="$SAND_VENV/bin/sand"
run() {
  local app="$1" input="$2"
  echo "==> $app  <-  $input"
  "$SAND" emulate "$SAND_ROOT/examples/$app" --input "$input" 2> >(grep -v 'grain worker' >&2)
}
run hello '{"name": "SAND"}'
run virus-scan '{"email": {"from": "eve@example.org", "body": "click http://phish.example/win", "attachments": ["invoice.pdf", "run.exe"]}}'
run webserver '{"path": "/index.html"}'
