#!/usr/bin/env bash
# The demo `make demo` runs after `make up`: examples deployed through the real platform and invoked.
# sand CLI -> nginx -> frontend (REST) -> Cassandra + sand.control -> host agent -> sandbox; then each
# request: nginx -> frontend -> Kafka -> host agent -> local bus -> forked grain instances -> response.
source "$(dirname "$0")/lib.sh"
SAND="$SAND_VENV/bin/sand"
URL="http://$SAND_BIND:$SAND_NGINX_PORT"
# The demo account's credentials live in the state dir, not in the user's ~/.config.
export XDG_CONFIG_HOME="$SAND_HOME/demo-config"
if [ ! -f "$XDG_CONFIG_HOME/sand/credentials.json" ] || [ ! -f "$XDG_CONFIG_HOME/demo-name" ]; then
  name="demo$(date +%s)"
  progress "Signing up the demo account $name at $URL"
  "$SAND" signup "$URL" "$name" >/dev/null
  echo "$name" >"$XDG_CONFIG_HOME/demo-name"
  done_step
fi
# Application names are global: suffix them with this checkout's demo account, so reruns redeploy.
suffix="$(cat "$XDG_CONFIG_HOME/demo-name")"
run() {
  local app="$1" input="$2" name="$1-${suffix}"
  echo "==> sand deploy examples/$app --name $name"
  "$SAND" deploy "$SAND_ROOT/examples/$app" --name "$name"
  echo "==> sand invoke $name '$input'"
  "$SAND" invoke "$name" "$input"
}
run hello '{"name": "SAND"}'
run virus-scan '{"email": {"from": "eve@example.org", "body": "click http://phish.example/win", "attachments": ["invoice.pdf", "run.exe"]}}'
