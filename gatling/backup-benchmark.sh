#!/usr/bin/env bash
# What a cluster backup and a restore cost (docs/backup.md, docs/performance.md "Backup and restore"). A local
# 3-node cluster (separate JVMs, -Xmx$NODE_HEAP) is loaded with --keys values of --value-size random bytes at 2/3;
# an open-loop GET probe at --probe-rate req/s measures client latency in a quiet window and during a backup to a
# file: location (each probe counts no request of its first 3 s: its own start, not the cluster's); then the backup is restored into a fresh 3-node cluster by `restore` under -Xmx256m. Measured:
# backup MB/s per node (file bytes, and key+value bytes), client p50/p99 quiet vs during the backup, restore
# records/s, and whether every JVM stayed within its heap. Writes report.md (copied to gatling/results/).
#
# usage: gatling/backup-benchmark.sh [--keys N] [--value-size B] [--probe-rate R] [--quiet S] [--backup-rate SIZE]
#        [--node-heap SIZE] [--node-arg ARG]... [--note TEXT] [--no-results]
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
GATLING_POM="$ROOT/gatling/pom.xml"
# shellcheck source=gatling/bench-common.sh
. "$ROOT/gatling/bench-common.sh"

KEYS=330000
VALUE_SIZE=1024
PROBE_RATE=200
QUIET=30
BACKUP_RATE=1GB
NODE_HEAP=256m
NOTE=""
RESULTS=true
EXTRA_NODE_ARGS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --keys) KEYS="$2"; shift ;;
    --value-size) VALUE_SIZE="$2"; shift ;;
    --probe-rate) PROBE_RATE="$2"; shift ;;
    --quiet) QUIET="$2"; shift ;;
    --backup-rate) BACKUP_RATE="$2"; shift ;;
    --node-heap) NODE_HEAP="$2"; shift ;;
    --node-arg) EXTRA_NODE_ARGS+=("$2"); shift ;;
    --note) NOTE="$2"; shift ;;
    --no-results) RESULTS=false ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) echo "unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done

STAMP=$(date -u +%Y-%m-%d-%H%M)
OUT="$ROOT/gatling/target/backup-benchmark/$STAMP"
mkdir -p "$OUT"
install_traps
LOAD=(java "$ROOT/gatling/backup/BackupLoad.java")
secret_of() { tr '\0' '\n' < "/proc/$1/environ" | sed -n 's/^DHT_CLUSTER_SECRET=//p'; }

NODE_ARGS=("--dht.backup.location=file:$OUT/backups" "--dht.backup.rate=$BACKUP_RATE" "--dht.repair.interval=0"
  ${EXTRA_NODE_ARGS[@]+"${EXTRA_NODE_ARGS[@]}"})
NODE_JVM_OPTS=("-XX:+ExitOnOutOfMemoryError")
start_nodes "$OUT" 3 "$OUT/source"
SOURCE_URLS="$URLS"; SOURCE_PIDS=("${PIDS[@]}"); SECRET=$(secret_of "${PIDS[0]}")
FIRST="${SOURCE_URLS%%,*}"
log "source cluster $SOURCE_URLS; loading $KEYS keys of $VALUE_SIZE bytes"
"${LOAD[@]}" load "$SOURCE_URLS" "$KEYS" "$VALUE_SIZE" 64 | tee "$OUT/load.txt"

log "quiet window: $QUIET s of GETs at $PROBE_RATE/s"
( sleep "$((QUIET + 3))"; touch "$OUT/quiet.stop" ) &   # + the probe's 3 s of warm-up
"${LOAD[@]}" probe "$SOURCE_URLS" "$KEYS" "$PROBE_RATE" "$OUT/quiet.stop" | tee "$OUT/probe-quiet.txt"

log "backup, with the same probe running"
"${LOAD[@]}" probe "$SOURCE_URLS" "$KEYS" "$PROBE_RATE" "$OUT/backup.stop" > "$OUT/probe-backup.txt" \
  2> "$OUT/probe-backup.err" &
PROBE=$!
# the probe counts no request of its first seconds (its own start); the backup starts once it counts
until grep -q '^warm$' "$OUT/probe-backup.err" 2>/dev/null; do sleep 0.2; done
ID=$(curl -sS -X POST -H "X-Dht-Cluster-Secret: $SECRET" "$FIRST/actuator/backup" | jq -r .id)
while :; do
  sleep 1
  STATE=$(curl -sS "$FIRST/actuator/backups/$ID" | tee "$OUT/backup.json" | jq -r .state)
  [ "$STATE" = running ] || break
done
touch "$OUT/backup.stop"; wait "$PROBE"; cat "$OUT/probe-backup.txt"
[ "$STATE" = done ] || { log "backup $STATE: $(cat "$OUT/backup.json")"; exit 1; }
MANIFEST="$OUT/backups/$ID/manifest.json"
SECONDS_TAKEN=$(jq -r '[.startedAt, .endedAt] | map(sub("\\.[0-9]+Z$"; "Z") | fromdate) | .[1] - .[0]' "$MANIFEST")
MILLIS=$(jq -r '[.startedAt, .endedAt] | map(capture("(?<s>.*T[0-9:]+)(\\.(?<f>[0-9]+))?Z") | ((.s + "Z" | fromdate) * 1000 + ((.f // "0") + "000" | .[0:3] | tonumber))) | .[1] - .[0]' "$MANIFEST")
BACKUP_BYTES=$(jq -r '[.nodes[].bytes] | add' "$MANIFEST")
BACKUP_RECORDS=$(jq -r '[.nodes[].records] | add' "$MANIFEST")
RAW_BYTES=$(for url in ${SOURCE_URLS//,/ }; do curl -sS "$url/actuator/prometheus" | sed -n 's/^dht_backup_bytes_total{.*} //p'; done | awk '{ s += $1 } END { printf "%d", s }')
log "backup $ID: $BACKUP_RECORDS records, $BACKUP_BYTES file bytes, $RAW_BYTES key+value bytes in $MILLIS ms"

NODE_ARGS=("--dht.repair.interval=0")
start_nodes "$OUT" 3 "$OUT/target"
TARGET_URLS="$URLS"; TARGET_SECRET=$(secret_of "${PIDS[0]}")
log "restore into $TARGET_URLS"
START_NS=$(date +%s%N)
DHT_CLUSTER_SECRET="$TARGET_SECRET" java -Xmx256m -XX:+ExitOnOutOfMemoryError -jar "$ROOT/target/dht.jar" restore \
  --from "file:$OUT/backups" --backup "$ID" --into "$TARGET_URLS" --rate 1000000 --checkpoint "$OUT/restore.checkpoint" \
  > "$OUT/restore.txt" 2>&1 || { log "restore failed: $(tail -3 "$OUT/restore.txt")"; exit 1; }
RESTORE_MS=$(( ($(date +%s%N) - START_NS) / 1000000 ))
RESTORED=$(sed -n 's/^restored backup [^:]*: \([0-9]*\) records.*/\1/p' "$OUT/restore.txt")
RESTORE_RATE=$(sed -n 's/.* \([0-9,]*\) rec\/s.*/\1/p' "$OUT/restore.txt" | tail -1 | tr -d ,)
OOM=$( (grep -l "OutOfMemoryError" "$OUT"/node-*.log "$OUT/restore.txt" 2>/dev/null || true) | wc -l)

p() { sed -n "s/.* $2=\([0-9.]*\).*/\1/p" "$1"; }
cat > "$OUT/report.md" <<REPORT
# Backup and restore benchmark, $STAMP UTC

$(nproc) CPUs, $(free -g | awk '/Mem:/ { print $2 }') GiB; 3 nodes at -Xmx$NODE_HEAP on this machine, client and restore too.
${NOTE:+Note: $NOTE}

Load: $(cat "$OUT/load.txt")

| measure | value |
|---|---|
| backup | $BACKUP_RECORDS records (every replica's copy), $(calc "$BACKUP_BYTES / 1e6") MB of files, $(calc "$RAW_BYTES / 1e6") MB of keys and values, in $(calc "$MILLIS / 1000") s |
| backup per node, files | $(calc "$BACKUP_BYTES / 3 / 1e6 / ($MILLIS / 1000)") MB/s |
| backup per node, keys and values | $(calc "$RAW_BYTES / 3 / 1e6 / ($MILLIS / 1000)") MB/s |
| client GET p50 / p99, quiet | $(p "$OUT/probe-quiet.txt" p50_ms) / $(p "$OUT/probe-quiet.txt" p99_ms) ms ($PROBE_RATE req/s, errors $(p "$OUT/probe-quiet.txt" errors)) |
| client GET p50 / p99, during the backup | $(p "$OUT/probe-backup.txt" p50_ms) / $(p "$OUT/probe-backup.txt" p99_ms) ms (errors $(p "$OUT/probe-backup.txt" errors)) |
| restore into 3 nodes | $RESTORED records in $(calc "$RESTORE_MS / 1000") s with its first pass that verifies the files: $(calc "$RESTORED / ($RESTORE_MS / 1000)") records/s; writing alone $RESTORE_RATE records/s |
| OutOfMemoryError (nodes -Xmx$NODE_HEAP, restore -Xmx256m) | $([ "$OOM" -eq 0 ] && echo none || echo "in $OOM logs") |

dht.backup.rate=$BACKUP_RATE; backup $ID. Raw files: $OUT.
REPORT
cat "$OUT/report.md"
if $RESULTS; then cp "$OUT/report.md" "$ROOT/gatling/results/$STAMP-backup-benchmark.md"; fi
