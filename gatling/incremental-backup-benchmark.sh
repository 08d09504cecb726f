#!/usr/bin/env bash
# What an incremental backup costs against a full one (docs/backup.md "Incremental backups", docs/performance.md).
# A local 3-node cluster (separate JVMs, -Xmx$NODE_HEAP) is loaded with --keys values of --value-size random bytes at
# 2/3; a full backup to a file: location; then --changed percent of the keys change (the first ones overwritten with
# new values, one in ten of those deleted instead) and an incremental backup follows. Measured for each backup: its
# time (manifest startedAt to endedAt), records and file bytes; the incremental's as a share of the full one's.
# No client load runs meanwhile. Writes report.md (copied to gatling/results/).
#
# usage: gatling/incremental-backup-benchmark.sh [--keys N] [--value-size B] [--changed PERCENT] [--backup-rate SIZE]
#        [--node-heap SIZE] [--note TEXT] [--no-results]
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
GATLING_POM="$ROOT/gatling/pom.xml"
# shellcheck source=gatling/bench-common.sh
. "$ROOT/gatling/bench-common.sh"

KEYS=100000
VALUE_SIZE=1024
CHANGED=1
BACKUP_RATE=64MB
NODE_HEAP=256m
NOTE=""
RESULTS=true
while [ $# -gt 0 ]; do
  case "$1" in
    --keys) KEYS="$2"; shift ;;
    --value-size) VALUE_SIZE="$2"; shift ;;
    --changed) CHANGED="$2"; shift ;;
    --backup-rate) BACKUP_RATE="$2"; shift ;;
    --node-heap) NODE_HEAP="$2"; shift ;;
    --note) NOTE="$2"; shift ;;
    --no-results) RESULTS=false ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) echo "unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done

STAMP=$(date -u +%Y-%m-%d-%H%M)
OUT="$ROOT/gatling/target/incremental-backup-benchmark/$STAMP"
mkdir -p "$OUT"
install_traps
LOAD=(java "$ROOT/gatling/backup/BackupLoad.java")
MARGIN_SECONDS=5

NODE_ARGS=("--dht.backup.location=file:$OUT/backups" "--dht.backup.rate=$BACKUP_RATE" "--dht.repair.interval=0"
  "--dht.backup.incremental-margin=${MARGIN_SECONDS}s")
NODE_JVM_OPTS=("-XX:+ExitOnOutOfMemoryError")
start_nodes "$OUT" 3 "$OUT/source"
FIRST="${URLS%%,*}"
log "cluster $URLS; loading $KEYS keys of $VALUE_SIZE bytes"
"${LOAD[@]}" load "$URLS" "$KEYS" "$VALUE_SIZE" 64 | tee "$OUT/load.txt"
# past the margin: the incremental's snapshot point is the full backup's start less the margin
sleep $((MARGIN_SECONDS + 1))

# backup BODY NAME: runs a backup (POST body BODY) to its end; sets ID, MILLIS, RECORDS, BYTES
backup() {
  ID=$(curl -sS -X POST -H "X-Dht-Cluster-Secret: $SECRET" -H 'Content-Type: application/json' -d "$1" \
    "$FIRST/actuator/backup" | tee "$OUT/$2-start.json" | jq -r .id)
  local state
  while :; do
    sleep 0.2
    state=$(curl -sS "$FIRST/actuator/backups/$ID" | tee "$OUT/$2.json" | jq -r .state)
    [ "$state" = running ] || break
  done
  [ "$state" = done ] || { log "backup $ID $state: $(cat "$OUT/$2.json")"; exit 1; }
  local manifest="$OUT/backups/$ID/manifest.json"
  MILLIS=$(jq -r '[.startedAt, .endedAt] | map(capture("(?<s>.*T[0-9:]+)(\\.(?<f>[0-9]+))?Z") | ((.s + "Z" | fromdate) * 1000 + ((.f // "0") + "000" | .[0:3] | tonumber))) | .[1] - .[0]' "$manifest")
  RECORDS=$(jq -r '[.nodes[].records] | add' "$manifest")
  BYTES=$(jq -r '[.nodes[].bytes] | add' "$manifest")
  log "$2 backup $ID: $RECORDS records, $BYTES file bytes in $MILLIS ms"
}

backup '{}' full
FULL_ID=$ID; FULL_MS=$MILLIS; FULL_RECORDS=$RECORDS; FULL_BYTES=$BYTES

CHANGE=$((KEYS * CHANGED / 100))
DELETES=$((CHANGE / 10))
log "changing $CHANGE keys: $((CHANGE - DELETES)) overwritten, $DELETES deleted"
"${LOAD[@]}" load "$URLS" "$((CHANGE - DELETES))" "$VALUE_SIZE" 64 | tee "$OUT/change.txt"
for i in $(seq "$((CHANGE - DELETES))" "$((CHANGE - 1))"); do
  curl -sS -o /dev/null -w '%{http_code}\n' -X DELETE "$FIRST/v0/entity?id=b$i"
done | sort | uniq -c > "$OUT/deletes.txt"
log "deletes answered: $(tr '\n' ' ' < "$OUT/deletes.txt")"

backup '{"incremental": true}' incremental
INC_ID=$ID; INC_MS=$MILLIS; INC_RECORDS=$RECORDS; INC_BYTES=$BYTES
BASE=$(jq -r .base "$OUT/incremental.json")
[ "$BASE" = "$FULL_ID" ] || { log "the incremental's base is $BASE, not $FULL_ID"; exit 1; }

cat > "$OUT/report.md" <<REPORT
# Incremental backup benchmark, $STAMP UTC

$(nproc) CPUs, $(free -g | awk '/Mem:/ { print $2 }') GiB, load average at the end: $(cut -d' ' -f1-3 /proc/loadavg); 3 nodes at
-Xmx$NODE_HEAP on this machine. dht.backup.rate=$BACKUP_RATE, no client load during the backups.
${NOTE:+Note: $NOTE}

Load: $(cat "$OUT/load.txt"). Changed: $CHANGE keys ($CHANGED %), $((CHANGE - DELETES)) overwritten, $DELETES deleted.

| backup | time | records | file bytes |
|---|---|---|---|
| full ($FULL_ID) | $(calc "$FULL_MS / 1000") s | $FULL_RECORDS | $(calc "$FULL_BYTES / 1e6") MB |
| incremental ($INC_ID, base $FULL_ID) | $(calc "$INC_MS / 1000") s | $INC_RECORDS | $(calc "$INC_BYTES / 1e6") MB |
| incremental / full | $(calc "100 * $INC_MS / $FULL_MS") % | $(calc "100 * $INC_RECORDS / $FULL_RECORDS") % | $(calc "100 * $INC_BYTES / $FULL_BYTES") % |

Raw files: $OUT.
REPORT
cat "$OUT/report.md"
if $RESULTS; then cp "$OUT/report.md" "$ROOT/gatling/results/$STAMP-incremental-backup-benchmark.md"; fi
