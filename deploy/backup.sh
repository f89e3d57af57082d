#!/usr/bin/env bash
# Backups of SAND's keyspace (the cluster state: accounts, applications, code, versions, triggers; and the global
# data layer: the applications' data) on this host's Cassandra node, with Cassandra's own tools (docs/operations.md
# "Backups and restore"):
#
#   deploy/backup.sh save DIR       `nodetool snapshot` of the keyspace (hard links: instant, consistent per table),
#                                   copied to DIR/<table>/, then the snapshot cleared
#   deploy/backup.sh save-dated ROOT [KEEP]   save to ROOT/<UTC time>, then keep the newest KEEP (default 7) of
#                                   ROOT's backups and delete the older ones (the scheduled backup: sand-backup.timer)
#   deploy/backup.sh prune ROOT KEEP               only the deleting
#   deploy/backup.sh copy ROOT      ROOT mirrored off the node (rsync -a --delete) to $SAND_BACKUP_COPY_TO/<node>/:
#                                   a path (a mounted NFS or object-store share) or rsync's host:path (over ssh);
#                                   save-dated runs it after pruning when SAND_BACKUP_COPY_TO is set. <node> is
#                                   $SAND_BACKUP_NODE, by default <hostname>-<SAND_BIND> (hosts of one machine differ)
#   deploy/backup.sh restore DIR    each table's saved files loaded back into the live table (`nodetool import
#                                   --copy-data`: DIR stays as it is); rows newer than the backup are kept, the
#                                   backup's rows are added back (Cassandra merges by write time)
#
# On a cluster, run it on every Cassandra node (deploy/cluster.sh backup | restore does): each node saves and loads
# its own replicas. Knobs: SAND_BACKUP_KEYSPACE (default sand: the keyspace of SAND_CLUSTER_CASSANDRA_KEYSPACE and
# SAND_DATALAYER_CASSANDRA_KEYSPACE).
source "$(dirname "$0")/lib.sh"

COMP=backup
KS="${SAND_BACKUP_KEYSPACE:-sand}"
DATA="$SAND_DATA/cassandra/data"
CASS=(bash "$SAND_ROOT/deploy/cassandra.sh")

[[ "$KS" =~ ^[a-z][a-z0-9_]{0,47}$ ]] || die "$COMP" - "SAND_BACKUP_KEYSPACE=$KS is not a keyspace name"

save() {
  local dest="$1" tag dir table n=0
  [ -n "$dest" ] || die "$COMP" - "usage: $0 save DIR"
  [ -d "$DATA/$KS" ] || die "$COMP" - "no keyspace $KS on this node ($DATA/$KS)"
  tag="sand-backup-$(date -u +%Y%m%dT%H%M%SZ)-$$"
  progress "Saving keyspace $KS to $dest"
  "${CASS[@]}" nodetool snapshot -t "$tag" -- "$KS" >/dev/null || die "$COMP" - "nodetool snapshot failed"
  mkdir -p "$dest"
  for dir in "$DATA/$KS"/*/snapshots/"$tag"; do
    [ -d "$dir" ] || continue
    table="$(basename "$(dirname "$(dirname "$dir")")")" # <table>-<id>
    table="${table%-*}"
    mkdir -p "$dest/$table"
    cp -a "$dir"/. "$dest/$table/"
    n=$((n + 1))
  done
  "${CASS[@]}" nodetool clearsnapshot -t "$tag" -- "$KS" >/dev/null || true
  [ "$n" -gt 0 ] || die "$COMP" - "the snapshot of $KS has no table"
  printf '%s %s\n' "$KS" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" >"$dest/BACKUP"
  done_step
  echo "    $n tables, $(du -sh "$dest" | cut -f1) in $dest"
}

# prune ROOT KEEP: the newest KEEP backups in ROOT kept (folders this script saved: a BACKUP file; their names are
# UTC times, so by name is by age), the older ones deleted; anything else in ROOT is left alone.
prune() {
  local root="$1" keep="$2" dir
  if [ -z "$root" ] || ! [[ "$keep" =~ ^[1-9][0-9]*$ ]]; then die "$COMP" - "usage: $0 prune ROOT KEEP (KEEP >= 1)"; fi
  [ -d "$root" ] || return 0
  local -a backups=()
  for dir in "$root"/*/; do [ -f "$dir/BACKUP" ] && backups+=("${dir%/}"); done
  local n=${#backups[@]} i
  for ((i = 0; i < n - keep; i++)); do
    rm -rf -- "${backups[$i]}"
    echo "    deleted ${backups[$i]} (older than the newest $keep)"
  done
}

# copy ROOT: ROOT as it is now (its backups, the pruned ones gone) mirrored to $SAND_BACKUP_COPY_TO/<node>/, so a
# node lost with its disk leaves its backups elsewhere.
copy() {
  local root="$1" to="${SAND_BACKUP_COPY_TO:-}" node="${SAND_BACKUP_NODE:-$(hostname)-$SAND_BIND}"
  if [ -z "$root" ] || [ ! -d "$root" ]; then die "$COMP" - "usage: $0 copy ROOT (a folder of backups)"; fi
  [ -n "$to" ] || die "$COMP" - "SAND_BACKUP_COPY_TO is not set: where should $root be copied?"
  [[ "$node" =~ ^[A-Za-z0-9._-]+$ ]] || die "$COMP" - "SAND_BACKUP_NODE=$node is not a folder name"
  command -v rsync >/dev/null || die "$COMP" - "rsync is missing (deploy/install.sh installs it)"
  progress "Copying $root to $to/$node"
  if [[ "$to" != *:* ]]; then mkdir -p "$to/$node"; fi
  rsync -a --delete -- "$root/" "$to/$node/" || die "$COMP" - "rsync of $root to $to/$node failed (the backups on this node are kept)"
  done_step
}

restore() {
  local src="$1" dir table n=0
  [ -f "$src/BACKUP" ] || die "$COMP" - "$src is not a backup made by $0 save (no BACKUP file)"
  progress "Restoring keyspace $KS from $src"
  for dir in "$src"/*/; do
    table="$(basename "$dir")"
    compgen -G "$dir*-Data.db" >/dev/null || continue # a table that was empty at the backup
    "${CASS[@]}" nodetool import --copy-data -- "$KS" "$table" "${dir%/}" >/dev/null \
      || die "$COMP" - "nodetool import of $KS.$table from $dir failed"
    n=$((n + 1))
  done
  done_step
  echo "    $n tables loaded into $KS"
}

case "${1:-}" in
  save) save "${2:-}" ;;
  save-dated)
    [ -n "${2:-}" ] || die "$COMP" - "usage: $0 save-dated ROOT [KEEP]"
    save "$2/$(date -u +%Y%m%dT%H%M%SZ)"
    prune "$2" "${3:-7}"
    if [ -n "${SAND_BACKUP_COPY_TO:-}" ]; then copy "$2"; fi
    ;;
  prune) prune "${2:-}" "${3:-}" ;;
  copy) copy "${2:-}" ;;
  restore) restore "${2:-}" ;;
  *) echo "usage: $0 save DIR | save-dated ROOT [KEEP] | prune ROOT KEEP | copy ROOT | restore DIR" >&2; exit 2 ;;
esac
