#!/usr/bin/env bash
# Profiles one node under wrk load and measures what the noise of a shared machine hardly
# moves: the node's CPU time per answered request (utime + stime of the process, /proc/PID/stat) and the heap
# bytes it allocates per request (Micrometer's jvm.gc.memory.allocated between two forced GCs, or the
# allocation profile's total when the target has no /actuator/prometheus). With a profile mode, async-profiler
# (Maven Central, tools.profiler:async-profiler) is attached for the measured run only and writes a flame graph
# and collapsed stacks. See gatling/README.md, "profile.sh".
#
# usage: gatling/profile.sh [options] [cpu|alloc|lock|wall|none]
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
GATLING_POM="$ROOT/gatling/pom.xml"
# shellcheck source=gatling/bench-common.sh
. "$ROOT/gatling/bench-common.sh"    # log, calc, start_nodes, cleanup, ...

AP_VERSION=4.2
MODE=none
METHODS="PUT GET"
DURATION=10
WARMUP=30
CONNECTIONS=32
KEYS=20000
VALUE_SIZE=1024
NODE_HEAP=512m
INTERVAL=1ms
EVENT=cpu
PIN=false
OUT=""

usage() {
  cat <<EOF
usage: gatling/profile.sh [options] [cpu|alloc|lock|wall|none]

Starts one node (target/dht.jar, or NODE_JAR, e.g. gatling/minimal-webflux/target/minimal-webflux.jar), warms it
up with wrk (PUT over every key, then GET), then for each method runs wrk once more and reports, per answered
request: the node's CPU time in us and the heap bytes it allocated. With a mode other than none, async-profiler
records that run: cpu (CPU time; see --event), alloc (allocations), lock (contended locks) or wall (all threads,
sleeping or not); results: <method>-<mode>.html (flame graph) and <method>-<mode>.collapsed (one stack a line).
Measure CPU and bytes per request with mode none: a profiler costs CPU itself.

  --methods "PUT GET"  the measured methods, in order (default "$METHODS")
  --duration S         measured seconds per method (default $DURATION)
  --warmup S           warm-up seconds of PUT, then of GET (default $WARMUP)
  --connections N      wrk keep-alive connections (default $CONNECTIONS)
  --keys N             key space (default $KEYS)
  --value-size BYTES   PUT body size (default $VALUE_SIZE)
  --node-heap SIZE     -Xms and -Xmx of the node (default $NODE_HEAP)
  --node-arg ARG       an extra argument of the node, e.g. --node-arg --dht.storage.write-buffer-size=32MB
                       (repeatable; named in the report)
  --interval I         cpu/wall sampling interval (default $INTERVAL)
  --event E            the cpu mode's event: cpu (perf_events), itimer or ctimer (default $EVENT)
  --pin                wrk on CPU 0, the node on the others (taskset)
  --out DIR            results directory (default gatling/target/profile/<time>-<mode>)

Needs wrk (Debian: apt-get install wrk) and a JDK (jcmd). Builds target/dht.jar if it is missing and fetches
async-profiler $AP_VERSION into ~/.m2 (./mvnw dependency:get) unless ASYNC_PROFILER_LIB names libasyncProfiler.so.
EOF
}

while [ $# -gt 0 ]; do
  case "$1" in
    --methods) METHODS="$2"; shift ;;
    --duration) DURATION="$2"; shift ;;
    --warmup) WARMUP="$2"; shift ;;
    --connections) CONNECTIONS="$2"; shift ;;
    --keys) KEYS="$2"; shift ;;
    --value-size) VALUE_SIZE="$2"; shift ;;
    --node-heap) NODE_HEAP="$2"; shift ;;
    --node-arg) NODE_ARGS+=("$2"); shift ;;
    --interval) INTERVAL="$2"; shift ;;
    --event) EVENT="$2"; shift ;;
    --pin) PIN=true ;;
    --out) OUT="$2"; shift ;;
    -h|--help) usage; exit 0 ;;
    cpu|alloc|lock|wall|none) MODE="$1" ;;
    *) echo "unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
  shift
done
command -v wrk >/dev/null || { echo "wrk not found (Debian: apt-get install wrk)" >&2; exit 2; }
command -v jcmd >/dev/null || { echo "jcmd not found: a JDK is needed" >&2; exit 2; }
if [ "$PIN" = true ] && [ "$(nproc)" -lt 2 ]; then echo "--pin needs 2 or more CPUs" >&2; exit 2; fi

OUT="${OUT:-$ROOT/gatling/target/profile/$(date +%Y%m%d-%H%M%S)-$MODE}"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
install_traps

[ "$MODE" = none ] || async_profiler_lib "$AP_VERSION"   # sets AP_LIB

[ -n "${NODE_JAR:-}" ] || build_dht_jar_if_missing
# loaded idle from the start: attached late, the agent's JVMTI capabilities made the JIT recompile for tens of seconds
[ "$MODE" = none ] || NODE_JVM_OPTS=("-agentpath:$AP_LIB")
mkdir -p "$OUT/node"
start_nodes "$OUT/node" 1
PID="${PIDS[0]}"; URL="$URLS"
[ "$PIN" = false ] || taskset -a -cp "1-$(( $(nproc) - 1 ))" "$PID" >/dev/null
log "node $URL (pid $PID), mode $MODE; results in $OUT"

run_wrk() {  # run_wrk METHOD SECONDS FILE
  local pin=()
  [ "$PIN" = true ] && pin=(taskset -c 0)
  WRK_METHOD="$1" WRK_KEYS="$KEYS" WRK_VALUE_SIZE="$VALUE_SIZE" WRK_THREADS=1 \
    "${pin[@]}" wrk -t1 -c"$CONNECTIONS" -d"$2s" --latency -s "$ROOT/gatling/wrk/entity.lua" "$URL/" >"$3" 2>&1 \
    || { log "wrk failed; see $3"; cat "$3" >&2; exit 1; }
}
field() { sed -n "s/.*ratio-summary.* $2=\([0-9]*\).*/\1/p" "$1"; }
# voluntary context switches of the node's threads alive now: a thread that parks to wait for work (a hand-off
# between threads, an idle event loop) switches once each time; preemption by other processes is not counted
switches() { cat /proc/"$PID"/task/*/status 2>/dev/null | awk '/^voluntary_ctxt_switches/ { s += $2 } END { print s + 0 }'; }
allocated() {  # heap bytes allocated since start (Micrometer, updated at each GC), empty without the endpoint
  { curl -sf -m 5 "$URL/actuator/prometheus" || true; } | awk '/^jvm_gc_memory_allocated_bytes_total/ { s += $2 } END { if (NR) printf "%.0f", s }'
}
# profiler ACTION: one async-profiler command (jcmd parses a bare a=b,c as a named option, hence the inner quotes);
# the agent prints its messages and errors to the node's log
profiler() { jcmd "$PID" JVMTI.agent_load "$AP_LIB" "\"$1\"" >>"$OUT/profiler.log" 2>&1; }
gc() { jcmd "$PID" GC.run >/dev/null; sleep 1; }   # a full GC; Micrometer counts its allocations when notified

for method in PUT GET; do
  log "warm-up: $WARMUP s of $method"
  run_wrk "$method" "$WARMUP" "$OUT/warmup-$method.txt"
done

HZ=$(getconf CLK_TCK)
REPORT="$OUT/report.md"
{
  echo "# gatling/profile.sh $MODE, $(date -u +%Y-%m-%dT%H:%MZ)"
  echo
  echo "${NODE_JAR:-target/dht.jar}, commit $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown), wrk 1 thread,"
  echo "$CONNECTIONS connections, ${DURATION}-s runs after ${WARMUP}-s warm-ups, $VALUE_SIZE-byte values, $KEYS keys,"
  echo "heap $NODE_HEAP, node arguments: ${NODE_ARGS[*]:-none}, pinned: $PIN, $(nproc) CPUs."
  echo
  echo "| op | answered | answered/s | CPU us/request | allocated bytes/request | thread switches/request | p99 ms | failures |"
  echo "|---|---|---|---|---|---|---|---|"
} >"$REPORT"
for method in $METHODS; do
  name="$method-$MODE"
  gc    # the allocation counter is exact at a GC: one before and one after the run
  alloc0=$(allocated)
  case "$MODE" in
    none) ;;
    cpu) profiler "start,event=$EVENT,interval=$INTERVAL" ;;
    wall) profiler "start,event=wall,interval=$INTERVAL" ;;
    alloc) profiler "start,event=alloc" ;;
    lock) profiler "start,event=lock" ;;
  esac
  cpu0=$(cpu_ticks "$PID"); switches0=$(switches)
  run_wrk "$method" "$DURATION" "$OUT/$name.txt"
  cpu1=$(cpu_ticks "$PID"); switches1=$(switches)
  if [ "$MODE" != none ]; then
    profiler "dump,collapsed,total,file=$OUT/$name.collapsed"
    profiler "stop,file=$OUT/$name.html"
    # jcmd reports success whatever the agent did; the agent's own errors are in the node's log
    [ -s "$OUT/$name.collapsed" ] || log "  no profile recorded; see the agent's message in $OUT/node/ (without perf_events: --event itimer)"
  fi
  gc
  alloc1=$(allocated)
  answered=$(( $(field "$OUT/$name.txt" status_2xx) + $(field "$OUT/$name.txt" status_404) ))
  failures=$(( $(field "$OUT/$name.txt" status_5xx) + $(field "$OUT/$name.txt" errors_connect) \
    + $(field "$OUT/$name.txt" errors_read) + $(field "$OUT/$name.txt" errors_write) + $(field "$OUT/$name.txt" errors_timeout) ))
  cpu_us=$(calc "($cpu1 - $cpu0) * 1000000 / $HZ / $answered")
  per_switch=$(calc "($switches1 - $switches0) / $answered")
  if [ -n "$alloc0" ] && [ -n "$alloc1" ]; then
    bytes=$(calc "($alloc1 - $alloc0) / $answered")
  elif [ "$MODE" = alloc ] && [ -s "$OUT/$name.collapsed" ]; then
    bytes=$(awk -v n="$answered" '{ s += $NF } END { printf "%.0f (profile)", s / n }' "$OUT/$name.collapsed")
  else
    bytes="-"
  fi
  printf '| %s | %d | %.0f | %.1f | %s | %.2f | %.1f | %d |\n' "$method" "$answered" \
    "$(calc "$answered / ($(field "$OUT/$name.txt" duration_us) / 1000000)")" "$cpu_us" "$bytes" "$per_switch" \
    "$(calc "$(field "$OUT/$name.txt" p99_us) / 1000")" "$failures" >>"$REPORT"
  log "  $method: $answered answered, CPU $cpu_us us/request, $bytes bytes/request"
  [ "$MODE" = none ] || [ ! -s "$OUT/$name.collapsed" ] || awk -f "$ROOT/gatling/profile-shares.awk" "$OUT/$name.collapsed" | sort -rn >"$OUT/$name-shares.txt"
done
for method in $METHODS; do
  [ -s "$OUT/$method-$MODE-shares.txt" ] || continue
  { echo; echo "$method, $MODE profile by owner (the leaf-most frame of a known owner; gatling/profile-shares.awk):"
    echo; sed 's/^/    /' "$OUT/$method-$MODE-shares.txt"; } >>"$REPORT"
done
cat "$REPORT"
