#!/usr/bin/env bash
# The warm-up curve of a fresh node or 3-node cluster: from the moment every node answers /v0/status 200, wrk PUT load
# (closed loop, as gatling/paired.sh ratio: 1 wrk thread per node, 32 connections in all, 1 KiB values, the cluster at 2/3)
# in back-to-back slices of --slice seconds for --curve seconds, then --steady seconds more whose median slice is the
# steady reference. Per slice: answered requests per second, its fraction of steady, p99, failures, the CPU
# seconds of the nodes and of their JIT compiler threads in it, and the answered requests per CPU second of the
# nodes. Prints the curve, the time to 90 % of steady and the fraction reached in the slices 30-60 s. See gatling/README.md, "warmup-curve.sh".
#
# usage: gatling/warmup-curve.sh [options] node|cluster
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
GATLING_POM="$ROOT/gatling/pom.xml"
# shellcheck source=gatling/bench-common.sh
. "$ROOT/gatling/bench-common.sh"    # log, calc, cpu_ticks, jit_ticks, start_nodes, pin_servers, cleanup, ...

SLICE=10
CURVE=300
STEADY=120
CONNECTIONS=32
KEYS=20000
VALUE_SIZE=1024
REPLICAS=2/3           # of the cluster's requests; a single node is asked with its own default (1/1)
NODE_HEAP=512m
PIN=false
OUT=""
NOTE=""
READY_TIMEOUT=${READY_TIMEOUT:-300}  # seconds the nodes may take to answer (bench-common.sh wait_ready)

usage() {
  cat <<EOF
usage: gatling/warmup-curve.sh [options] node|cluster

  node      one fresh node (target/dht.jar, or NODE_JAR)
  cluster   three fresh nodes as one cluster, requests at --replicas, the load spread over the nodes

  --slice S           seconds per slice (default $SLICE)
  --curve S           seconds of the curve from ready (default $CURVE)
  --steady S          seconds of load after the curve; their median slice is the steady rate (default $STEADY)
  --connections N     keep-alive connections in all (default $CONNECTIONS)
  --keys N            key space the PUTs walk (default $KEYS)
  --replicas ACK/FROM the cluster's requests (default $REPLICAS)
  --node-heap SIZE    -Xms and -Xmx of each node (default $NODE_HEAP)
  --node-jvm-opt OPT  a JVM option of every node, e.g. -XX:AOTCache=/tmp/dht.aot (repeatable)
  --node-arg ARG      a node argument of every node (repeatable)
  --pin               wrk on CPU 0, the nodes on the other CPUs (taskset, as paired.sh --pin ratio), from ready on
  --note TEXT         a line for the report (e.g. what else ran on the machine)
  --out DIR           results directory (default gatling/target/warmup-curve/<time>-<target>)

The nodes run \`java\` from PATH: PATH=/usr/lib/jvm/temurin-25-jdk-amd64/bin:\$PATH runs them on that JDK.
Needs wrk (Debian: apt-get install wrk).
EOF
}

TARGET=""
while [ $# -gt 0 ]; do
  case "$1" in
    --slice) SLICE="$2"; shift ;;
    --curve) CURVE="$2"; shift ;;
    --steady) STEADY="$2"; shift ;;
    --connections) CONNECTIONS="$2"; shift ;;
    --keys) KEYS="$2"; shift ;;
    --replicas) REPLICAS="$2"; shift ;;
    --node-heap) NODE_HEAP="$2"; shift ;;
    --node-jvm-opt) NODE_JVM_OPTS+=("$2"); shift ;;
    --node-arg) NODE_ARGS+=("$2"); shift ;;
    --pin) PIN=true ;;
    --note) NOTE="$2"; shift ;;
    --out) OUT="$2"; shift ;;
    -h|--help) usage; exit 0 ;;
    node|cluster) TARGET="$1" ;;
    *) echo "unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
  shift
done
[ -n "$TARGET" ] || { usage >&2; exit 2; }
command -v wrk >/dev/null || { echo "wrk not found (Debian: apt-get install wrk)" >&2; exit 2; }
if [ "$PIN" = true ] && [ "$(nproc)" -lt 2 ]; then echo "--pin needs 2 or more CPUs" >&2; exit 2; fi
[ -n "${NODE_JAR:-}" ] || build_dht_jar_if_missing

OUT="${OUT:-$ROOT/gatling/target/warmup-curve/$(date +%Y%m%d-%H%M%S)-$TARGET}"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
install_traps
[ "$PIN" = true ] && SERVER_CPUS="1-$(( $(nproc) - 1 ))"
TICKS=$(getconf CLK_TCK)

count=1; replicas=""
if [ "$TARGET" = cluster ]; then count=3; replicas="$REPLICAS"; fi
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
log "starting $count node(s); results in $OUT"
STARTED=$(date +%s%N)
CLEANUP_DIRS+=("$OUT/data")
start_nodes "$OUT" "$count" "$OUT/data"
READY=$(date +%s%N)
pin_servers "${PIDS[@]}"
log "ready after $(calc "($READY - $STARTED) / 1e9") s (the script's start to every node's /v0/status 200)"

field() { sed -n "s/.*ratio-summary.* $2=\([0-9]*\).*/\1/p" "$1"; }
pin=(); [ "$PIN" = true ] && pin=(taskset -c 0)
threads=$count
: >"$OUT/slices.txt"
slices=$(( (CURVE + STEADY) / SLICE ))
for i in $(seq 1 "$slices"); do
  file="$OUT/slice-$i.txt"
  cpu0=$(cpu_ticks "${PIDS[@]}"); jit0=$(jit_ticks "${PIDS[@]}")
  WRK_METHOD=PUT WRK_KEYS="$KEYS" WRK_VALUE_SIZE="$VALUE_SIZE" WRK_REPLICAS="$replicas" \
    WRK_HOSTS="$(echo "$URLS" | sed 's#http://##g')" WRK_THREADS="$threads" \
    "${pin[@]}" wrk -t"$threads" -c"$CONNECTIONS" -d"${SLICE}s" --latency -s "$ROOT/gatling/wrk/entity.lua" \
    "${URLS%%,*}/" >"$file" 2>&1 || { log "wrk failed; see $file"; exit 1; }
  now=$(date +%s%N)
  cpu1=$(cpu_ticks "${PIDS[@]}"); jit1=$(jit_ticks "${PIDS[@]}")
  answered=$(calc "$(field "$file" status_2xx) / ($(field "$file" duration_us) / 1000000)")
  failures=$(( $(field "$file" status_5xx) + $(field "$file" errors_connect) + $(field "$file" errors_read) \
    + $(field "$file" errors_write) + $(field "$file" errors_timeout) ))
  # slice, end (s since ready), answered/s, p99 ms, failures, node CPU s, JIT CPU s
  printf '%d %.1f %.1f %.1f %d %.2f %.2f\n' "$i" "$(calc "($now - $READY) / 1e9")" "$answered" \
    "$(calc "$(field "$file" p99_us) / 1000")" "$failures" "$(calc "($cpu1 - $cpu0) / $TICKS")" \
    "$(calc "($jit1 - $jit0) / $TICKS")" >>"$OUT/slices.txt"
  log "  slice $i: $(tail -1 "$OUT/slices.txt")"
done
LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)

curve_slices=$(( CURVE / SLICE ))
STEADY_RATE=$(awk -v c="$curve_slices" '$1 > c { print $3 }' "$OUT/slices.txt" | sort -g \
  | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
# the same per CPU second of the nodes (answered PUTs over the nodes' CPU seconds in the slice): on a shared machine
# the nodes get a varying share of their CPU, and this efficiency curve moves less with it than the rate does
median_of() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
STEADY_PER_CPU=$(awk -v c="$curve_slices" -v d="$SLICE" '$1 > c && $6 > 0 { print $3 * d / $6 }' "$OUT/slices.txt" | median_of)
# time to 90 %: the end of the first slice that reached 0.9 of steady, and of the first from which every later
# slice of the curve stayed there; COLUMN 3 is the rate, per_cpu the efficiency
to90() {  # to90 STEADY per_cpu|rate: "FIRST STAYS" (seconds after ready, or never)
  awk -v s="$1" -v m="$2" -v c="$curve_slices" -v d="$SLICE" '$1 <= c {
      v = (m == "rate") ? $3 : ($6 > 0 ? $3 * d / $6 : 0)
      t[$1] = $2; ok[$1] = (v >= 0.9 * s); if (ok[$1] && first == "") first = $2; n = $1 }
    END { stays = ""; for (i = n; i >= 1 && ok[i]; i--) stays = t[i]
      printf "%s %s\n", (first == "" ? "never" : first), (stays == "" ? "none" : stays) }' "$OUT/slices.txt"
}
read -r FIRST90 STAYS90 < <(to90 "$STEADY_RATE" rate)
read -r FIRST90_CPU STAYS90_CPU < <(to90 "$STEADY_PER_CPU" per_cpu)
# the slices whose start lies in 30-60 s after ready: their requests over their time (and over their CPU seconds),
# as a fraction of steady
W3060=$(awk -v s="$STEADY_RATE" -v d="$SLICE" '$2 - d >= 29 && $2 - d < 60 { r += $3 * d; t += d }
  END { printf "%.2f", (t > 0 ? r / t / s : 0) }' "$OUT/slices.txt")
W3060_CPU=$(awk -v s="$STEADY_PER_CPU" -v d="$SLICE" '$2 - d >= 29 && $2 - d < 60 { r += $3 * d; c += $6 }
  END { printf "%.2f", (c > 0 ? r / c / s : 0) }' "$OUT/slices.txt")

REPORT="$OUT/report.md"
{
  echo "# gatling/warmup-curve.sh $TARGET, $(date -u +%Y-%m-%dT%H:%MZ)"
  echo
  echo "$count fresh node(s) of \`$(basename "${NODE_JAR:-target/dht.jar}")\` on $(java -version 2>&1 | head -1),"
  echo "-Xms/-Xmx $NODE_HEAP${NODE_JVM_OPTS[*]:+, JVM options ${NODE_JVM_OPTS[*]}}${NODE_ARGS[*]:+, node arguments ${NODE_ARGS[*]}};"
  echo "wrk PUT, closed loop, $CONNECTIONS connections, $VALUE_SIZE-byte values over $KEYS keys${replicas:+, replicas $replicas},"
  echo "${SLICE}-s slices from ready for $CURVE s, then $STEADY s for the steady reference; pinned: $PIN."
  echo "$(nproc) CPUs, load average $LOAD_START at the start, $LOAD_END at the end; commit $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)."
  [ -z "$NOTE" ] || echo "$NOTE"
  echo
  echo "Ready $(calc "($READY - $STARTED) / 1e9" | xargs printf '%.1f') s after the start; steady $(printf '%.0f' "$STEADY_RATE") PUT/s and"
  echo "$(printf '%.0f' "$STEADY_PER_CPU") PUTs per CPU second of the nodes (median slices after $CURVE s)."
  echo "- PUT/s: 90 % of steady first at the end of the slice ending $FIRST90 s after ready, held to the curve's end"
  echo "  from the one ending $STAYS90 s on; the slices 30-60 s after ready at $W3060 of steady."
  echo "- PUTs per CPU second: 90 % first at $FIRST90_CPU s, held from $STAYS90_CPU s on; the slices 30-60 s at $W3060_CPU of steady."
  echo
  echo "| slice | end s | answered/s | of steady | p99 ms | failures | node CPU s | JIT CPU s | PUTs per CPU s | of steady |"
  echo "|---|---|---|---|---|---|---|---|---|---|"
  awk -v s="$STEADY_RATE" -v e="$STEADY_PER_CPU" -v d="$SLICE" '{ p = ($6 > 0 ? $3 * d / $6 : 0)
    printf "| %d | %.0f | %.0f | %.2f | %.1f | %d | %.1f | %.1f | %.0f | %.2f |\n", $1, $2, $3, $3 / s, $4, $5, $6, $7, p, p / e }' "$OUT/slices.txt"
} >"$REPORT"
cat "$REPORT"
