#!/usr/bin/env bash
# nginx in front of the frontend instances: start|stop|status|ready|fetch (see deploy/lib.sh).
# Upstreams: $SAND_NGINX_UPSTREAMS ("addr:port ..."; in a cluster, every frontend host's), by default this host's
# frontends ($SAND_FRONTEND_PORTS on $SAND_BIND).
source "$(dirname "$0")/lib.sh"

COMP=nginx
CONF="$SAND_CONF/nginx/nginx.conf"
ADDR="http://$SAND_BIND:$SAND_NGINX_PORT"

render_conf() {
  local tmp="$SAND_DATA/nginx/tmp"
  mkdir -p "$SAND_CONF/nginx" "$tmp"
  NGINX_UPSTREAMS=""
  local upstream ports
  read -r -a ports <<<"$SAND_FRONTEND_PORTS"
  for upstream in ${SAND_NGINX_UPSTREAMS:-$(printf "$SAND_BIND:%s " "${ports[@]}")}; do
    NGINX_UPSTREAMS+="    server $upstream max_fails=1 fail_timeout=${NGINX_FAIL_TIMEOUT_S}s;"$'\n'
  done
  NGINX_UPSTREAMS="${NGINX_UPSTREAMS%$'\n'}"
  # nginx's workers drop root privileges; give them a user that can write the temp paths. A checkout in a
  # private folder (e.g. mktemp -d, mode 0700) cannot be traversed by that user: then request bodies larger
  # than nginx's memory buffer would fail with 500, so the temp paths go to a folder of their own in /var/tmp.
  if [ "$(id -u)" = 0 ]; then
    NGINX_USER_LINE="user nobody nogroup;"
    if ! su -s /bin/sh nobody -c "test -x '$tmp'" 2>/dev/null; then
      tmp="/var/tmp/sand-nginx-$(printf '%s' "$SAND_HOME" | sha256sum | cut -c1-12)"
      mkdir -p "$tmp"
    fi
    chown -R nobody:nogroup "$tmp"
    chmod 0700 "$tmp"
  else
    NGINX_USER_LINE=""
  fi
  NGINX_PID_FILE="$SAND_RUN/nginx.own.pid"
  NGINX_ERROR_LOG="$(logfile nginx)"
  NGINX_ACCESS_LOG="$SAND_LOGS/nginx-access.log"
  NGINX_TMP="$tmp"
  SAND_FRONTEND_MAX_BODY_BYTES="${SAND_FRONTEND_MAX_BODY_BYTES:-10485760}"
  # per client address (the template says why these defaults)
  SAND_NGINX_RATE_PER_S="${SAND_NGINX_RATE_PER_S:-1000}"
  SAND_NGINX_BURST="${SAND_NGINX_BURST:-2000}"
  SAND_NGINX_CONNS_PER_ADDR="${SAND_NGINX_CONNS_PER_ADDR:-256}"
  export SAND_NGINX_RATE_PER_S SAND_NGINX_BURST SAND_NGINX_CONNS_PER_ADDR
  export SAND_FRONTEND_MAX_BODY_BYTES NGINX_UPSTREAMS NGINX_USER_LINE NGINX_PID_FILE NGINX_ERROR_LOG NGINX_ACCESS_LOG NGINX_TMP
  render "$SAND_ROOT/deploy/nginx/nginx.conf.tmpl" "$CONF"
}

ready() { curl -fsS --max-time 2 "$ADDR/nginx-health" >/dev/null; }

case "${1:-}" in
  fetch) command -v nginx >/dev/null || die "$COMP" - "nginx is not installed; run deploy/install.sh" ;;
  start)
    if is_running "$COMP" && ready; then echo "    $COMP already running"; exit 0; fi
    require_port_free "$COMP" "$SAND_NGINX_PORT"
    progress "Starting nginx on $SAND_BIND:$SAND_NGINX_PORT"
    render_conf
    nginx -t -q -p "$SAND_DATA/nginx" -c "$CONF" >>"$(logfile nginx-config)" 2>&1 \
      || die "$COMP" "$(logfile nginx-config)" "generated config $CONF is invalid"
    OWN_LOG=1 start_bg "$COMP" nginx -p "$SAND_DATA/nginx" -c "$CONF"
    wait_until "$COMP" 15 ready
    # nginx writes its error and access logs itself; this rolls them (by size and day) and has it reopen them.
    stop_pid "$COMP-logroll" 5
    start_bg "$COMP-logroll" bash "$SAND_ROOT/deploy/logroll.sh" "$SAND_RUN/nginx.own.pid" "$(logfile nginx)" \
      "$SAND_LOGS/nginx-access.log"
    done_step
    ;;
  stop) stop_pid "$COMP-logroll" 5; stop_pid "$COMP" 10; rm -f "$SAND_RUN/nginx.own.pid" ;;
  status)
    if is_running "$COMP" && ready; then
      status_line "$COMP" running "$ADDR" "pid $(cat "$(pidfile "$COMP")")"
    else
      status_line "$COMP" stopped; exit 3
    fi
    ;;
  ready) ready ;;
  *) echo "usage: $0 fetch|start|stop|status|ready" >&2; exit 2 ;;
esac
