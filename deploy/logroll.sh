#!/usr/bin/env bash
# logroll.sh <pid file> <log>...: rolls the logs of a process that keeps them open and reopens them on SIGUSR1
# (nginx; deploy/nginx.sh starts this beside it as component nginx-logroll, and stops it with it). Every
# SAND_LOGROLL_EVERY_S seconds (default 30), a log past SAND_LOG_MAX_MB, or any non-empty log once the UTC day has
# changed, is renamed <log>.<yyyy-MM-dd>.<n> (as logback and log4j2 name theirs) and the process told to reopen: it
# writes on into the renamed file until it does, so no line is lost. Rolled files older than SAND_LOG_DAYS days, and
# the oldest beyond SAND_LOG_TOTAL_MB per log, are deleted. Works the same with or without systemd.
source "$(dirname "$0")/lib.sh"
set +e

pid_file="$1"; shift
every="${SAND_LOGROLL_EVERY_S:-30}"
max_bytes=$((SAND_LOG_MAX_MB * 1024 * 1024))
total_bytes=$((SAND_LOG_TOTAL_MB * 1024 * 1024))
day="$(date -u +%F)"
trap 'exit 0' TERM INT HUP

# roll <log> <day>: rename it to the next free <log>.<day>.<n>.
roll() {
  local log="$1" d="$2" n=0
  while [ -e "$log.$d.$n" ]; do n=$((n + 1)); done
  mv -f "$log" "$log.$d.$n" && echo "$(date -u +%Y-%m-%dT%H:%M:%S.%3NZ) rolled $log to $log.$d.$n"
}

# prune <log>: drop its rolled files older than SAND_LOG_DAYS, then the oldest while they take more than the cap.
prune() {
  local log="$1" sum=0 f size
  find "$(dirname "$log")" -maxdepth 1 -name "$(basename "$log").*-*-*.*" -mtime +"$((SAND_LOG_DAYS - 1))" -delete
  while IFS= read -r f; do # newest first
    size="$(stat -c %s "$f" 2>/dev/null || echo 0)"
    sum=$((sum + size))
    if [ "$sum" -gt "$total_bytes" ]; then rm -f "$f"; fi
  done < <(ls -1t "$log".*-*-*.* 2>/dev/null)
}

while :; do
  sleep "$every" &
  wait $!
  today="$(date -u +%F)"
  rolled=0
  for log in "$@"; do
    if [ -s "$log" ] && { [ "$today" != "$day" ] || [ "$(stat -c %s "$log")" -gt "$max_bytes" ]; }; then
      roll "$log" "$([ "$today" != "$day" ] && echo "$day" || echo "$today")" && rolled=1
    fi
  done
  day="$today"
  if [ "$rolled" = 1 ]; then
    pid="$(cat "$pid_file" 2>/dev/null)"
    if [ -n "$pid" ]; then kill -USR1 "$pid" 2>/dev/null || echo "could not signal $pid (from $pid_file) to reopen its logs"; fi
  fi
  for log in "$@"; do prune "$log"; done
done
