#!/usr/bin/env bash
# The internode cost of a 3-node cluster per client request, in figures that a busy machine hardly moves: the CPU
# time of the three node processes (utime + stime from /proc/PID/stat) per answered request, and the replica HTTP
# exchanges (dht_replica_calls_seconds_count, summed over the nodes) per answered request, under the same wrk load
# as gatling/ratio.sh cluster (1 wrk thread per node, closed loop, 1 KiB values). Prints one line per run; after
# the warm-up, runs of PUT then GET repeat for --rounds rounds, so that the JIT's settling shows as the figures
# converge. With --baseline-jar, a second cluster of that build (A) runs beside the first (B), both are warmed up,
# and every round loads them in turn (A B, then B A, ...): paired before/after figures. --a-arg and --b-arg give one
# cluster a node argument the other lacks (A/B of a setting, one jar). --profile records the last round's runs of
# cluster B with async-profiler on all three nodes.
#
# usage: gatling/cluster-cost.sh [options] [-- node arguments...]
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
GATLING_POM="$ROOT/gatling/pom.xml"
# shellcheck source=gatling/bench-common.sh
. "$ROOT/gatling/bench-common.sh"    # log, calc, start_nodes, cleanup, ...

ROUNDS=3
DURATION=15
WARMUP=30
CONNECTIONS=32
KEYS=20000
VALUE_SIZE=1024
REPLICAS=2/3
NODE_HEAP=512m
PIN=false
OUT=""
PROFILE=""
AP_VERSION=4.2
A_ARGS=()
B_ARGS=()

usage() {
  cat <<USAGE
usage: gatling/cluster-cost.sh [options] [-- node arguments...]

Starts a 3-node cluster (target/dht.jar or --jar), warms it up with PUTs that write every key and then GETs, then
for --rounds rounds runs PUT and GET for --duration seconds each and prints, per run: answered requests per second
(2xx, and 404 on GETs), failures (5xx, socket errors), CPU microseconds of the three nodes per answered request,
and replica exchanges per answered request (all operations, and read/write batches among them).

  --jar PATH          the node's jar (default target/dht.jar, built if missing): cluster B
  --baseline-jar PATH also start a cluster A of this jar and load A and B in turn
  --a-arg ARG         a node argument of cluster A only (repeatable), e.g. --a-arg --dht.replica-writes-in-flight=4
                      --b-arg --dht.replica-writes-in-flight=1
  --b-arg ARG         a node argument of cluster B only (repeatable); either starts A (of B's jar unless
                      --baseline-jar)
  --profile MODE      cpu, wall, alloc or lock: async-profiler (Maven Central) in every node from its start, recording
                      the last round's runs of B: per node and method <method>-<port>.collapsed, and
                      <method>-shares.txt over the three (gatling/profile-shares.awk); a profiler costs CPU itself
  --rounds N          rounds after the warm-up (default $ROUNDS)
  --duration S        seconds per run (default $DURATION)
  --warmup S          seconds of PUT, then of GET, before round 1 (default $WARMUP)
  --connections N     keep-alive connections in all (default $CONNECTIONS)
  --keys N            key space (default $KEYS)
  --value-size BYTES  PUT body size (default $VALUE_SIZE)
  --replicas ACK/FROM replicas of every request (default $REPLICAS)
  --pin               wrk on CPU 0, the nodes on CPU 1 with one event loop each (taskset; needs 2 CPUs)
  --out DIR           logs (default gatling/target/cluster-cost/<time>)
USAGE
}

while [ $# -gt 0 ]; do
  case "$1" in
    --jar) NODE_JAR="$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"; shift ;;
    --baseline-jar) BASELINE_JAR="$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"; shift ;;
    --a-arg) A_ARGS+=("$2"); shift ;;
    --b-arg) B_ARGS+=("$2"); shift ;;
    --profile) PROFILE="$2"; shift ;;
    --rounds) ROUNDS="$2"; shift ;;
    --duration) DURATION="$2"; shift ;;
    --warmup) WARMUP="$2"; shift ;;
    --connections) CONNECTIONS="$2"; shift ;;
    --keys) KEYS="$2"; shift ;;
    --value-size) VALUE_SIZE="$2"; shift ;;
    --replicas) REPLICAS="$2"; shift ;;
    --pin) PIN=true ;;
    --out) OUT="$2"; shift ;;
    --) shift; NODE_ARGS=("$@"); break ;;
    -h|--help) usage; exit 0 ;;
    *) echo "unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
  shift
done
command -v wrk >/dev/null || { echo "wrk not found (Debian: apt-get install wrk)" >&2; exit 2; }
if [ "$PIN" = true ] && [ "$(nproc)" -lt 2 ]; then echo "--pin needs 2 or more CPUs" >&2; exit 2; fi
case "$PROFILE" in ""|cpu|wall|alloc|lock) ;; *) echo "--profile: cpu, wall, alloc or lock, not '$PROFILE'" >&2; exit 2 ;; esac
if [ $(( ${#A_ARGS[@]} + ${#B_ARGS[@]} )) -gt 0 ] && [ -z "${BASELINE_JAR:-}" ]; then BASELINE_JAR="${NODE_JAR:-$ROOT/target/dht.jar}"; fi

OUT="${OUT:-$ROOT/gatling/target/cluster-cost/$(date +%Y%m%d-%H%M%S)}"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
install_traps
[ -n "${NODE_JAR:-}" ] || build_dht_jar_if_missing
if [ "$PIN" = true ] && [[ " ${NODE_ARGS[*]} " != *" --dht.io-threads="* ]]; then NODE_ARGS+=("--dht.io-threads=1"); fi
if [ -n "$PROFILE" ]; then
  async_profiler_lib "$AP_VERSION"   # sets AP_LIB
  # loaded idle from the start: attached late, the agent's JVMTI capabilities made the JIT recompile (profile.sh)
  NODE_JVM_OPTS=("-agentpath:$AP_LIB")
fi
start_cluster() {  # start_cluster NAME JAR ARG...: a 3-node cluster of JAR with NODE_ARGS and ARGs; sets NAME_URLS, NAME_PIDS
  local name="$1" jar="$2" pid common=("${NODE_ARGS[@]}")
  shift 2
  mkdir -p "$OUT/$name"
  NODE_ARGS+=("$@")
  NODE_JAR="$jar" start_nodes "$OUT/$name" 3
  if [ "$PIN" = true ]; then for pid in "${PIDS[@]}"; do taskset -a -cp 1 "$pid" >/dev/null; done; fi
  eval "${name}_URLS=\$URLS; ${name}_PIDS=(\"\${PIDS[@]}\")"
  log "cluster $name: $URLS, jar $jar, node arguments: ${NODE_ARGS[*]:-none}"
  NODE_ARGS=("${common[@]}")
}
TARGETS=(B)
start_cluster B "${NODE_JAR:-$ROOT/target/dht.jar}" "${B_ARGS[@]}"
if [ -n "${BASELINE_JAR:-}" ]; then TARGETS=(A B); start_cluster A "$BASELINE_JAR" "${A_ARGS[@]}"; fi
log "logs in $OUT"

select_target() { eval "URLS=\$${1}_URLS; PIDS=(\"\${${1}_PIDS[@]}\")"; }  # select_target A|B
exchanges() {  # exchanges [OPERATION]: replica calls the nodes made, of all operations or of one
  local url filter="${1:+operation=\"$1\"}" total=0
  for url in ${URLS//,/ }; do
    total=$(( total + $(curl -sf -m 5 "$url/actuator/prometheus" | awk -v f="$filter" \
      '/^dht_replica_calls_seconds_count/ && index($0, f) { s += $NF } END { printf "%d", s }') ))
  done
  echo "$total"
}
field() { sed -n "s/.*ratio-summary.* $2=\([0-9]*\).*/\1/p" "$1"; }
# profiler ACTION: one async-profiler command to every node of the selected cluster; %p in ACTION becomes the
# node's port (jcmd parses a bare a=b,c as a named option, hence the inner quotes; the agent's errors go to the
# node's log)
profiler() {
  local i
  for i in "${!PIDS[@]}"; do
    jcmd "${PIDS[$i]}" JVMTI.agent_load "$AP_LIB" "\"${1//%p/$(echo "$URLS" | cut -d, -f$((i + 1)) | sed 's/.*://')}\"" \
      >>"$OUT/profiler.log" 2>&1
  done
}

run() {  # run TARGET METHOD SECONDS LABEL: one wrk run against cluster TARGET (A or B) and its figures
  local target="$1" method="$2" seconds="$3" label="$4 $1" file="$OUT/$4-$1-$2.txt" pin=() ticks0 calls0 reads0 writes0
  local answered failed
  select_target "$target"
  [ "$PIN" = true ] && pin=(taskset -c 0)
  ticks0=$(cpu_ticks "${PIDS[@]}"); calls0=$(exchanges); reads0=$(exchanges read-batch); writes0=$(exchanges write-batch)
  local profiled=false
  if [ -n "$PROFILE" ] && [ "$target" = B ] && [ "$4" = "round-$ROUNDS" ]; then
    profiled=true
    case "$PROFILE" in cpu|wall) profiler "start,event=$PROFILE,interval=1ms" ;; *) profiler "start,event=$PROFILE" ;; esac
  fi
  WRK_METHOD="$method" WRK_KEYS="$KEYS" WRK_VALUE_SIZE="$VALUE_SIZE" WRK_REPLICAS="$REPLICAS" \
    WRK_HOSTS="$(echo "$URLS" | sed 's#http://##g')" WRK_THREADS=3 \
    "${pin[@]}" wrk -t3 -c"$CONNECTIONS" -d"${seconds}s" --latency -s "$ROOT/gatling/wrk/entity.lua" \
    "${URLS%%,*}/" >"$file" 2>&1 || { log "wrk failed; see $file"; cat "$file" >&2; exit 1; }
  if [ "$profiled" = true ]; then
    profiler "dump,collapsed,total,file=$OUT/$method-%p-$PROFILE.collapsed"
    profiler "stop"
    cat "$OUT/$method"-*-"$PROFILE.collapsed" 2>/dev/null | awk -f "$ROOT/gatling/profile-shares.awk" | sort -rn \
      >"$OUT/$method-$PROFILE-shares.txt" || true
    log "$label $method: $PROFILE profile of the three nodes in $OUT/$method-$PROFILE-shares.txt"
  fi
  answered=$(( $(field "$file" status_2xx) + $(field "$file" status_404) ))
  failed=$(( $(field "$file" status_5xx) + $(field "$file" errors_connect) + $(field "$file" errors_read) \
    + $(field "$file" errors_write) + $(field "$file" errors_timeout) ))
  if [ "$answered" -eq 0 ]; then log "$label $method: nothing answered ($failed failures); see $file"; return; fi
  log "$(printf '%-10s %-3s answered/s %6.0f  failures %d  cpu_us/req %6.1f  exchanges/req %5.3f (read-batch %5.3f, write-batch %5.3f)  p99_ms %.1f' \
    "$label" "$method" "$(calc "$answered / ($(field "$file" duration_us) / 1000000)")" "$failed" \
    "$(calc "($(cpu_ticks "${PIDS[@]}") - $ticks0) * 1000000 / $(getconf CLK_TCK) / $answered")" \
    "$(calc "($(exchanges) - $calls0) / $answered")" \
    "$(calc "($(exchanges read-batch) - $reads0) / $answered")" \
    "$(calc "($(exchanges write-batch) - $writes0) / $answered")" \
    "$(calc "$(field "$file" p99_us) / 1000")")"
}

for target in "${TARGETS[@]}"; do
  run "$target" PUT "$WARMUP" warmup
  run "$target" GET "$WARMUP" warmup
done
cost_round() {  # cost_round ROUND TARGET...: PUT, then GET, on the targets in this order
  local round="$1" method target
  shift
  for method in PUT GET; do
    for target in "$@"; do run "$target" "$method" "$DURATION" "round-$round"; done
  done
}
paired_rounds "$ROUNDS" cost_round "${TARGETS[@]}"
