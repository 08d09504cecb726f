# shellcheck shell=bash
# Helpers shared by the benchmark scripts of gatling/ (every *.sh there sources it); sourced, not run. Defining them has no
# effect beyond the variables below; nothing is started and no trap is set until a script calls the functions.
#
# The sourcing script sets, before it sources this file:
#   ROOT            the repository root (absolute)
#   GATLING_POM     $ROOT/gatling/pom.xml
# and before it calls the functions that use them:
#   OUT             the results directory (absolute, existing): log appends to $OUT/run.log, compile_gatling writes
#                   $OUT/classpath.txt and $OUT/compile.log
#   WARMUP_SECONDS  gatling: the unmeasured ramp of every Gatling run (-Dwarmup)
#   VALUE_SIZE      gatling: -DvalueSize
#   KEYS            gatling: -Dkeys (keys the GET tapes preload)
#   REPLICAS        gatling: -Dreplicas (ACK/FROM, empty for the server's default)
#   NODE_HEAP       start_nodes: -Xms and -Xmx of each node (a fixed heap, see gatling/README.md)
#   NODE_JAR        start_nodes: the node's jar (optional; default $ROOT/target/dht.jar)
#   NODE_JVM_OPTS   start_nodes: array of JVM options after -Xms/-Xmx (empty here)
#   FIRST_NODE_JVM_OPTS  start_nodes: array of JVM options of the first node only, after NODE_JVM_OPTS (empty here)
#   READY_TIMEOUT   wait_ready: seconds a node may take to answer (optional; default 60)
#   NODE_ARGS       start_nodes: array of node arguments after the generated ones (empty here)
# This file defines (and the functions set):
#   ALL_TAPES       the tape names, in their documented order
#   EPHEMERAL_START the first port of the kernel's ephemeral range
#   STARTED_PIDS    process groups the script started and must end (cleanup); GATLING_PID the running Gatling's
#   HELPER_PIDS     plain background processes (no group of their own) cleanup ends as well; empty unless a script adds
#   CLEANUP_DIRS    directories cleanup removes after the processes ended; empty unless a script adds
#   STAT, STAT_COMM set by read_stat (cpu_ticks, jit_ticks, group_ticks)
#   URLS, PIDS, LOGS, PORTS, SECRET   set by start_nodes; CLASSPATH set by compile_gatling; AP_LIB by async_profiler_lib

ALL_TAPES=(put-new put-overwrite get-uniform get-recent mixed)
NODE_JVM_OPTS=()
FIRST_NODE_JVM_OPTS=()
NODE_ARGS=()
NODE_TLS_ARGS=()

log() { echo "$(date +%H:%M:%S) $*" | tee -a "$OUT/run.log" >&2; }  # log MESSAGE: timestamped, to run.log and stderr
kv() { sed -n "s/^$2=//p" "$1" | head -1; }                           # kv FILE KEY: a key=value file's value
calc() { awk "BEGIN { printf \"%s\", ($1) }"; }                        # calc 'EXPR': awk arithmetic
int() { awk "BEGIN { printf \"%d\", ($1) + 0.5 }"; }                   # int 'EXPR': rounded
errors_by_status() {  # errors_by_status SUMMARY: e.g. "504: 2.10 %, none: 0.01 %" (none = no answer), or "-"
  awk -F= '/^requests=/ { total = $2 } /^status\.[^.]*\.errors=/ && $2 > 0 { split($1, key, "."); n[key[2]] = $2 }
    END { for (s in n) { printf "%s%s: %.2f %%", sep, s, 100 * n[s] / total; sep = ", " } if (!sep) printf "-" }' "$1"
}

# read_stat FILE: sets STAT to the fields of a /proc/.../stat line after "PID (COMM) ", so STAT[0] is field 3 (state),
# STAT[2] field 5 (the process group), STAT[11] and STAT[12] fields 14 and 15 (utime and stime, clock ticks), and
# STAT_COMM to COMM (a process's or thread's name, at most 15 bytes, may hold spaces and parentheses); 1 if the file
# is gone. The one parser of /proc's stat lines for the scripts.
read_stat() {
  local line
  { read -r line <"$1"; } 2>/dev/null || return 1
  STAT_COMM="${line#*"("}"; STAT_COMM="${STAT_COMM%") "*}"
  read -r -a STAT <<<"${line##*") "}"
}

cpu_ticks() {  # cpu_ticks PID...: utime + stime of these processes so far (all threads), in clock ticks; 1 if one is gone
  local pid total=0
  for pid in "$@"; do
    read_stat "/proc/$pid/stat" || return 1
    total=$((total + STAT[11] + STAT[12]))
  done
  echo "$total"
}

jit_ticks() {  # jit_ticks PID...: utime + stime of the JIT compiler threads (C1, C2) of these processes so far, clock ticks
  local pid f total=0
  for pid in "$@"; do
    for f in /proc/"$pid"/task/*/stat; do
      read_stat "$f" || continue
      case "$STAT_COMM" in "C1 CompilerThre"*|"C2 CompilerThre"*) total=$((total + STAT[11] + STAT[12])) ;; esac
    done
  done
  echo "$total"
}

group_ticks() {  # group_ticks PGID: utime + stime of every live process of that process group so far, in clock ticks
  local f total=0
  for f in /proc/[0-9]*/stat; do
    read_stat "$f" || continue
    [ "${STAT[2]}" != "$1" ] || total=$((total + STAT[11] + STAT[12]))
  done
  echo "$total"
}

# paired_rounds ROUNDS FUNCTION TARGET...: the paired rounds of paired.sh and startup-benchmark.sh. For each
# round 1..ROUNDS calls FUNCTION ROUND TARGET... with the targets in that round's order: as given in odd rounds,
# reversed in even ones (A B, B A, A B, ...), so that no target always runs first, on a warmer JIT or a quieter
# machine. One target: it alone, every round. A FUNCTION that fails ends the script (set -e).
paired_rounds() {
  local rounds="$1" fn="$2" round target order
  shift 2
  for round in $(seq 1 "$rounds"); do
    order=("$@")
    if [ $((round % 2)) -eq 0 ]; then
      order=(); for target in "$@"; do order=("$target" "${order[@]}"); done
    fi
    "$fn" "$round" "${order[@]}"
  done
}

simulation_of() {  # simulation_of TAPE: the tape's simulation class
  case "$1" in
    put-new) echo dev.dht.gatling.PutNewKeysSimulation ;;
    put-overwrite) echo dev.dht.gatling.PutOverwriteSimulation ;;
    get-uniform) echo dev.dht.gatling.GetUniformSimulation ;;
    get-recent) echo dev.dht.gatling.GetRecentSimulation ;;
    mixed) echo dev.dht.gatling.MixedSimulation ;;
  esac
}

check_tapes() {  # check_tapes TAPE...: exits 2 with a message unless every TAPE is one of ALL_TAPES
  local tape
  for tape in "$@"; do
    case " ${ALL_TAPES[*]} " in *" $tape "*) ;; *) echo "unknown tape '$tape'; one of: ${ALL_TAPES[*]}" >&2; exit 2 ;; esac
  done
}

# a port nobody listens on (checked, not reserved), below the kernel's ephemeral range: after an overload run,
# tens of thousands of closed client connections still hold ephemeral ports, and a server cannot bind those
EPHEMERAL_START=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
free_port() {   # a node's HTTP port, its Raft port (dht.raft.port: HTTP port + 1000) free too
  local port
  while :; do
    port=$((10000 + RANDOM % (EPHEMERAL_START - 11000)))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null \
        && ! (exec 3<>"/dev/tcp/127.0.0.1/$((port + 1000))") 2>/dev/null; then echo "$port"; return; fi
  done
}

STARTED_PIDS=()    # process groups this script started and must end: target processes, the running Gatling
GATLING_PID=""
HELPER_PIDS=()     # background subshells of the script itself (in its process group), e.g. paired.sh's CPU sampler
CLEANUP_DIRS=()    # removed on exit after the processes ended, e.g. paired.sh's node data directories
# cleanup: ends every started process (SIGTERM to each process group, SIGKILL after 20 s), then removes CLEANUP_DIRS
cleanup() {
  local pid
  for pid in "${HELPER_PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in $GATLING_PID "${STARTED_PIDS[@]}"; do
    kill -TERM -- "-$pid" 2>/dev/null || true
  done
  for pid in $GATLING_PID "${STARTED_PIDS[@]}"; do
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL -- "-$pid" 2>/dev/null || true
  done
  [ ${#CLEANUP_DIRS[@]} -eq 0 ] || rm -rf "${CLEANUP_DIRS[@]}"
}
install_traps() {  # install_traps: cleanup on every exit; Ctrl-C or SIGTERM logs "interrupted" and exits 130 (needs OUT)
  trap cleanup EXIT
  trap 'log "interrupted"; exit 130' INT TERM
}

wait_ready() {  # wait_ready URL...: until every node's /v0/status answers 200 (READY_TIMEOUT s at most, default 60)
  local url
  for url in "$@"; do
    for _ in $(seq 1 $(( ${READY_TIMEOUT:-60} * 4 ))); do
      curl -skf -o /dev/null -m 1 "$url/v0/status" && continue 2
      sleep 0.25
    done
    log "no answer from $url/v0/status within ${READY_TIMEOUT:-60} s; see the logs in $OUT"; return 1
  done
}

# start_nodes DIR COUNT [DATA]: starts COUNT dht nodes as one cluster (a generated cluster secret; COUNT 1: a single
# node) on free ports, each with an empty data directory DATA/data-PORT (DATA defaults to DIR) and its log
# DIR/node-PORT.log, and waits until all answer. Each runs
# `java -Xms$NODE_HEAP -Xmx$NODE_HEAP ${NODE_JVM_OPTS[@]} -jar $NODE_JAR --server.port=... ${NODE_ARGS[@]}` (the first node
# with FIRST_NODE_JVM_OPTS after NODE_JVM_OPTS) in a process group of its
# own (setsid). Like `local-cluster`, each node of a cluster gets its share of the event loops
# (--dht.io-threads = processors / COUNT, at least 1) unless NODE_ARGS sets it.
# With NODE_SCHEME=https (paired.sh --tls) the node URLs are https and NODE_TLS_ARGS (the SSL bundle) are added.
# Sets URLS (comma-separated), PIDS, LOGS and PORTS (arrays), SECRET (the cluster secret, for a node that joins
# later); adds PIDS to STARTED_PIDS.
start_nodes() {
  local dir="$1" count="$2" data="${3:-$1}" port nodes="" loops=() share first
  if [ "$count" -gt 1 ] && [[ " ${NODE_ARGS[*]} " != *" --dht.io-threads="* ]]; then
    share=$(( $(nproc) / count ))
    loops=("--dht.io-threads=$(( share > 1 ? share : 1 ))")
  fi
  PIDS=(); LOGS=(); PORTS=()
  while [ ${#PORTS[@]} -lt "$count" ]; do
    port=$(free_port); case " ${PORTS[*]} " in *" $port "*) ;; *) PORTS+=("$port") ;; esac
  done
  for port in "${PORTS[@]}"; do nodes="${nodes:+$nodes,}${NODE_SCHEME:-http}://127.0.0.1:$port"; done
  SECRET=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
  for port in "${PORTS[@]}"; do
    rm -rf "$data/data-$port"
    first=(); [ "$port" != "${PORTS[0]}" ] || first=("${FIRST_NODE_JVM_OPTS[@]}")
    DHT_CLUSTER_SECRET="$SECRET" setsid java "-Xms$NODE_HEAP" "-Xmx$NODE_HEAP" "${NODE_JVM_OPTS[@]}" "${first[@]}" -jar "${NODE_JAR:-$ROOT/target/dht.jar}" \
      --server.port="$port" --dht.self="${NODE_SCHEME:-http}://127.0.0.1:$port" --dht.nodes="$nodes" \
      --dht.data-dir="$data/data-$port" "${loops[@]}" "${NODE_ARGS[@]}" "${NODE_TLS_ARGS[@]}" >"$dir/node-$port.log" 2>&1 &
    PIDS+=($!); LOGS+=("$dir/node-$port.log")
  done
  URLS="$nodes"
  STARTED_PIDS+=("${PIDS[@]}")
  wait_ready ${URLS//,/ }
}

# reap PID SECONDS: waits up to SECONDS for the process to exit, then kills its process group; no longer tracked
reap() {
  local pid="$1" keep=() started
  for _ in $(seq 1 $(($2 * 5))); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
  kill -KILL -- "-$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  for started in "${STARTED_PIDS[@]}"; do [ "$started" = "$pid" ] || keep+=("$started"); done
  STARTED_PIDS=("${keep[@]}")
}

stop_target() {  # stop_target: ends the process groups in PIDS, graceful (SIGTERM), then SIGKILL after 30 s
  local pid
  for pid in "${PIDS[@]}"; do kill -TERM -- "-$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do reap "$pid" 30; done
}

# With pinning (find-breaking-point.sh --pin), the load generator runs on CPU 0 (LOAD_PIN, a taskset prefix that its
# child processes inherit) and every server on the other CPUs (pin_servers PID...: all threads of each process).
LOAD_PIN=()
SERVER_CPUS=""
pin_servers() {
  local pid
  [ -n "$SERVER_CPUS" ] || return 0
  for pid in "$@"; do taskset -a -cp "$SERVER_CPUS" "$pid" >/dev/null; done
}

# gatling TAPE URLS RATE SECONDS SUMMARY LOG REPORTS [-Dname=value...]: one Gatling run; 1 if it did not complete
gatling() {
  local tape="$1" urls="$2" rate="$3" seconds="$4" summary="$5" logfile="$6" reports="$7" rc=0
  shift 7
  rm -f "$summary"
  setsid "${LOAD_PIN[@]}" timeout -k 10 $((WARMUP_SECONDS + seconds + 300)) "$ROOT/mvnw" -B -q -f "$GATLING_POM" gatling:test \
    -Dgatling.simulationClass="$(simulation_of "$tape")" -Dgatling.noReports="$([ "$reports" = yes ] && echo false || echo true)" \
    -DbaseUrls="$urls" -Drate="$rate" -Dduration="$seconds" -Dwarmup="$WARMUP_SECONDS" -DvalueSize="$VALUE_SIZE" \
    -Dkeys="$KEYS" -Dreplicas="$REPLICAS" -Dsummary="$summary" "$@" >"$logfile" 2>&1 &
  GATLING_PID=$!
  wait "$GATLING_PID" || rc=$?
  GATLING_PID=""
  if [ ! -s "$summary" ]; then
    log "  the Gatling run did not complete (exit $rc); see $logfile"; return 1
  fi
}

build_dht_jar_if_missing() {  # build_dht_jar_if_missing: builds target/dht.jar (tests skipped) unless it exists
  if [ ! -f "$ROOT/target/dht.jar" ]; then
    log "building target/dht.jar"; (cd "$ROOT" && ./mvnw -B -q -DskipTests package)
  fi
}

# async_profiler_lib VERSION: sets AP_LIB to async-profiler's agent library: ASYNC_PROFILER_LIB if set, else the
# library for this platform from the jar on Maven Central (tools.profiler:async-profiler:VERSION, fetched into
# ~/.m2 with ./mvnw dependency:get if missing), extracted into gatling/target/async-profiler. Exits 1 if neither.
async_profiler_lib() {
  local ap_jar platform
  AP_LIB="${ASYNC_PROFILER_LIB:-}"
  [ -z "$AP_LIB" ] || return 0
  ap_jar="$HOME/.m2/repository/tools/profiler/async-profiler/$1/async-profiler-$1.jar"
  if [ ! -f "$ap_jar" ]; then
    log "fetching async-profiler $1 from Maven Central"
    "$ROOT/mvnw" -B -q dependency:get -Dartifact="tools.profiler:async-profiler:$1" >"$OUT/fetch.log" 2>&1 \
      || { cat "$OUT/fetch.log" >&2; exit 1; }
  fi
  case "$(uname -m)" in x86_64) platform=linux-x64 ;; aarch64) platform=linux-arm64 ;; *) platform=unknown ;; esac
  mkdir -p "$ROOT/gatling/target/async-profiler"
  (cd "$ROOT/gatling/target/async-profiler" && jar xf "$ap_jar" "$platform/libasyncProfiler.so")
  AP_LIB="$ROOT/gatling/target/async-profiler/$platform/libasyncProfiler.so"
  [ -f "$AP_LIB" ] || { echo "no $platform/libasyncProfiler.so in $ap_jar" >&2; exit 1; }
}

# compile_gatling: compiles the Gatling project (the runs then only start it) and writes its classpath to
# $OUT/classpath.txt; exits with the compiler's output if that fails. Sets CLASSPATH.
compile_gatling() {
  log "compiling the Gatling project"
  "$ROOT/mvnw" -B -q -f "$GATLING_POM" test-compile dependency:build-classpath \
    -Dmdep.outputFile="$OUT/classpath.txt" >"$OUT/compile.log" 2>&1 || { cat "$OUT/compile.log" >&2; exit 1; }
  CLASSPATH="$ROOT/gatling/target/classes:$(cat "$OUT/classpath.txt")"
}
