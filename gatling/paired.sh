#!/usr/bin/env bash
# Paired rounds: 2 or 3 targets (a node, a 3-node cluster or the bare BaselineServer, each of its own jar, JVM options
# and node arguments) run side by side, are warmed alike, then are loaded in turn with the same load, round after
# round, the order alternating (A B, then B A, ...), so that whatever the shared machine does meanwhile hits all of
# them alike. Made for changes of 10-30 %, which single runs on a noisy machine cannot show. One of three measures:
#   latency  Gatling's open loop at a fixed rate: p50/p99/p99.9 and the nodes' CPU time per request, 2 or 3 variants
#   ratio    wrk's closed loop: B's answered requests per second over A's (node against the bare server or a node
#            of another jar, cluster against a node, with or without TLS), the median over the rounds
#   cost     wrk's closed loop on 3-node clusters: the nodes' CPU us and replica exchanges per answered request
# --pin puts the load generator on CPU 0 and the servers on the others. Usage and examples: gatling/README.md,
# "paired.sh: a change, paired".
#
# usage: gatling/paired.sh [options] latency [TAPE...]
#        gatling/paired.sh [options] ratio node|cluster
#        gatling/paired.sh [options] cost [-- node arguments...]
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
GATLING_POM="$ROOT/gatling/pom.xml"
# shellcheck source=gatling/bench-common.sh
. "$ROOT/gatling/bench-common.sh"    # log, kv, calc, cpu_ticks, paired_rounds, start_nodes, gatling, cleanup, ...

# ---- defaults (the ones that differ by measure: latency / ratio / cost) -------------------------------------------
ROUNDS=3
KEYS=20000             # latency: keys the GET tapes preload; ratio, cost: the key space (the warm-up writes it)
VALUE_SIZE=1024
NODE_HEAP=512m
DURATIONS=(30 10 15)   # measured seconds per run
RATE=1000              # latency: req/s of every measured run
PREWARM_RATE=800       # latency: one unmeasured run of each tape on every variant before round 1, at this rate ...
PREWARM_SECONDS=60     # ... for this long (the GET tapes' preload comes first, in that run)
PREWARM_ATTEMPTS=3     # latency: a warm-up run that did not complete (a cold cluster may refuse the preload) is repeated
WARMUP_SECONDS=5       # latency: unmeasured ramp before every run (Gatling's -Dwarmup)
COOLDOWN_SECONDS=5     # latency: pause before every run
WARMUPS=(- 15 30)      # ratio: seconds of one warm-up run (repeated until steady); cost: of PUT, then of GET
WARMUP_MAX=240         # ratio: seconds of warm-up per target and method, at most
STEADY=0.05            # ratio: steady: a warm-up run's rate within this fraction of the run before it
CONNECTIONS=32         # ratio, cost: wrk's keep-alive connections in all
AP_VERSION=4.2         # cost --profile: async-profiler from Maven Central
DEFAULT_TAPES=(put-new get-uniform)

usage() {
  cat <<EOF
usage: gatling/paired.sh [options] latency [TAPE...]
       gatling/paired.sh [options] ratio node|cluster
       gatling/paired.sh [options] cost [-- node arguments...]

The targets run side by side (fresh data, free ports, a cluster secret each), are warmed alike, then are loaded in
turn, round after round, the order alternating (A B, then B A, ...). See gatling/README.md.

  latency   Gatling (open loop) at --rate on 2 or 3 variants (--variant), each a 3-node cluster or, --node, one
            node: per run p50/p99/p99.9, errors and the nodes' CPU time per request; per round the lowest of each.
            TAPE: ${ALL_TAPES[*]} (default: ${DEFAULT_TAPES[*]})
  ratio     wrk (closed loop), A then B: B's answered requests per second over A's, median over the rounds.
            node: one node (B) against the bare BaselineServer (A), or a node of --baseline-jar (A);
            cluster: a 3-node cluster at --replicas (B) against one node (A), or with --tls a plain 3-node cluster
  cost      wrk (closed loop) on a 3-node cluster (B), and one of --baseline-jar or --a-arg/--b-arg (A) beside it:
            per run answered/s, failures, the nodes' CPU us and replica exchanges per answered request

Targets (in parentheses: the measures that take the option):
  --variant NAME=JAR     a variant (latency): NAME a short word (letters, digits, - and _), JAR its node jar; the
                         same jar for all variants is fine
  --node                 each variant is one node instead of a 3-node cluster (latency)
  --jar PATH             B's node jar (ratio, cost; default \$NODE_JAR or target/dht.jar)
  --baseline-jar PATH    A is a node (ratio node) or 3-node cluster (cost) of this jar (ratio, cost)
  --jvm-opt [NAME=]OPT   a JVM option of variant NAME's nodes, or with no NAME of every node, after -Xms/-Xmx
                         (repeatable; latency), e.g. serial=-XX:+UseSerialGC
  --node-arg [NAME=]ARG  an argument of variant NAME's nodes (latency; cost: NAME is A or B), or with no NAME of every
                         dht node (repeatable; all), e.g. after=--dht.replica-writes-in-flight=1
  --a-arg ARG, --b-arg ARG   an argument of cluster A's or B's nodes only (repeatable; cost); either starts A (of
                         B's jar unless --baseline-jar)
  -- ARG...              arguments of every dht node (all)
  --tls                  B serves HTTPS (TLS 1.3, a throw-away certificate, Spring Boot PEM bundle): A plain, B TLS;
                         cluster: A a plain 3-node cluster, B one with TLS between peers too, peers by certificate
                         (ratio)
  --node-heap SIZE       -Xms and -Xmx of each node and the baseline server (all; default $NODE_HEAP)
  --pin                  the load generator on CPU 0, the servers on the others (taskset; 2 or more CPUs; all);
                         cost: the nodes on CPU 1 with one event loop each

Load:
  --rounds N             rounds (all; default $ROUNDS)
  --duration S           measured seconds per run (all; default latency ${DURATIONS[0]}, at least 5; ratio ${DURATIONS[1]}; cost ${DURATIONS[2]})
  --rate N               req/s of every measured run (latency; default $RATE)
  --warmup-rate N        req/s of the warm-up runs (latency; default $PREWARM_RATE)
  --warmup-duration S    the warm-up run of each tape on each variant before round 1, seconds; 0: none (latency;
                         default $PREWARM_SECONDS)
  --ramp S               unmeasured ramp before every run (latency; default $WARMUP_SECONDS)
  --cooldown S           pause before every run (latency; default $COOLDOWN_SECONDS)
  --warmup S             ratio: seconds of one warm-up run (default ${WARMUPS[1]}); on each target PUT runs, then GET runs,
                         repeat until two in a row agree within $(calc "$STEADY * 100")% and, for PUT, one run wrote every key;
                         cost: seconds of PUT, then of GET, on each cluster before round 1 (default ${WARMUPS[2]})
  --warmup-max S         warm-up seconds per target and method, at most (ratio; default $WARMUP_MAX); reported if hit
  --connections N        wrk's keep-alive connections in all (ratio, cost; default $CONNECTIONS)
  --keys N               latency: keys the GET tapes preload; ratio, cost: the key space (all; default $KEYS)
  --value-size BYTES     value size (all; default $VALUE_SIZE)
  --replicas ACK/FROM    replicas of every request to a cluster (all; default 2/3; latency --node: the server's)
  --profile MODE         cpu, wall, alloc or lock: async-profiler in every node of B, recording the last round's
                         runs of B (cost)
  --out DIR              results directory (all; default gatling/target/paired/<time>-<measure>)
  -h, --help             this text

ratio and cost need wrk (Debian: apt-get install wrk). target/dht.jar is built if a target's jar and missing.
EOF
}

fail_usage() { echo "$*" >&2; echo "gatling/paired.sh --help lists the options" >&2; exit 2; }

# ---- arguments ---------------------------------------------------------------------------------------------------
MODE=""; TARGET=""; TAPES=(); GIVEN=()
VARIANT_SPECS=()   # latency: NAME=JAR as given
OPTION_SPECS=()    # "jvm [NAME=]OPT" or "arg [NAME=]ARG" as given; assigned to the targets once they are known
DURATION=""; WARMUP=""; REPLICAS=""; REPLICAS_GIVEN=false; PIN=false; TLS=false; PROFILE=""; OUT=""
NODE_COUNT=3; BASELINE_JAR=""; B_JAR="${NODE_JAR:-$ROOT/target/dht.jar}"
while [ $# -gt 0 ]; do
  case "$1" in
    --variant|--jvm-opt|--node-arg|--a-arg|--b-arg|--jar|--baseline-jar|--profile|--rate|--duration|--rounds| \
      --warmup|--warmup-max|--warmup-rate|--warmup-duration|--ramp|--cooldown|--connections|--keys|--value-size| \
      --replicas|--node-heap|--out)
      [ $# -ge 2 ] || fail_usage "$1 needs a value"; GIVEN+=("$1") ;;
    --node|--pin|--tls) GIVEN+=("$1") ;;
  esac
  case "$1" in
    --variant) VARIANT_SPECS+=("$2"); shift ;;
    --jvm-opt) OPTION_SPECS+=("jvm $2"); shift ;;
    --node-arg) OPTION_SPECS+=("arg $2"); shift ;;
    --a-arg) OPTION_SPECS+=("arg A=$2"); shift ;;
    --b-arg) OPTION_SPECS+=("arg B=$2"); shift ;;
    --jar) B_JAR="$2"; shift ;;
    --baseline-jar) BASELINE_JAR="$2"; shift ;;
    --profile) PROFILE="$2"; shift ;;
    --node) NODE_COUNT=1 ;;
    --pin) PIN=true ;;
    --tls) TLS=true ;;
    --rate) RATE="$2"; shift ;;
    --duration) DURATION="$2"; shift ;;
    --rounds) ROUNDS="$2"; shift ;;
    --warmup) WARMUP="$2"; shift ;;
    --warmup-max) WARMUP_MAX="$2"; shift ;;
    --warmup-rate) PREWARM_RATE="$2"; shift ;;
    --warmup-duration) PREWARM_SECONDS="$2"; shift ;;
    --ramp) WARMUP_SECONDS="$2"; shift ;;
    --cooldown) COOLDOWN_SECONDS="$2"; shift ;;
    --connections) CONNECTIONS="$2"; shift ;;
    --keys) KEYS="$2"; shift ;;
    --value-size) VALUE_SIZE="$2"; shift ;;
    --replicas) REPLICAS="$2"; REPLICAS_GIVEN=true; shift ;;
    --node-heap) NODE_HEAP="$2"; shift ;;
    --out) OUT="$2"; shift ;;
    --) shift; for arg in "$@"; do OPTION_SPECS+=("arg $arg"); done; break ;;
    -h|--help) usage; exit 0 ;;
    -*) fail_usage "unknown option $1" ;;
    latency|ratio|cost) [ -z "$MODE" ] || fail_usage "one measure: $MODE or $1"; MODE="$1" ;;
    node|cluster) [ -z "$TARGET" ] || fail_usage "one target: $TARGET or $1"; TARGET="$1" ;;
    *) TAPES+=("$1") ;;
  esac
  shift
done

COMMON_OPTIONS="--node-arg --node-heap --pin --rounds --duration --keys --value-size --replicas --out"
case "$MODE" in
  latency) m=0; [ -z "$TARGET" ] || fail_usage "latency: --node for one node per variant; not '$TARGET'"
    OPTIONS="$COMMON_OPTIONS --variant --node --jvm-opt --rate --warmup-rate --warmup-duration --ramp --cooldown" ;;
  ratio) m=1; OPTIONS="$COMMON_OPTIONS --jar --baseline-jar --tls --warmup --warmup-max --connections"
    case "$TARGET" in node|cluster) ;; *) fail_usage "ratio wants node or cluster${TARGET:+, not '$TARGET'}" ;; esac ;;
  cost) m=2; [ -z "$TARGET" ] || fail_usage "cost runs 3-node clusters; not '$TARGET'"
    OPTIONS="$COMMON_OPTIONS --jar --baseline-jar --a-arg --b-arg --profile --warmup --connections" ;;
  "") usage >&2; exit 2 ;;
  *) fail_usage "unknown measure '$MODE': latency, ratio or cost" ;;
esac
for option in "${GIVEN[@]}"; do
  case " $OPTIONS " in *" $option "*) ;; *) fail_usage "$option is not an option of $MODE" ;; esac
done
if [ "$MODE" = latency ]; then
  [ ${#TAPES[@]} -gt 0 ] || TAPES=("${DEFAULT_TAPES[@]}")
  check_tapes "${TAPES[@]}"
elif [ ${#TAPES[@]} -gt 0 ]; then
  fail_usage "unexpected argument '${TAPES[0]}'"
fi
DURATION="${DURATION:-${DURATIONS[$m]}}"
WARMUP="${WARMUP:-${WARMUPS[$m]}}"
whole() {  # whole OPTION VALUE MIN: exits 2 unless VALUE is a whole number of at least MIN
  [[ $2 =~ ^(0|[1-9][0-9]*)$ ]] && [ "$2" -ge "$3" ] || fail_usage "$1 wants a whole number of at least $3, not '$2'"
}
whole --rounds "$ROUNDS" 1; whole --keys "$KEYS" 1; whole --value-size "$VALUE_SIZE" 1
if [ "$MODE" = latency ]; then
  whole --rate "$RATE" 1; whole --warmup-rate "$PREWARM_RATE" 1; whole --warmup-duration "$PREWARM_SECONDS" 0
  whole --ramp "$WARMUP_SECONDS" 0; whole --cooldown "$COOLDOWN_SECONDS" 0
  whole --duration "$DURATION" 5    # the CPU is sampled from 2 s after the ramp to 2 s before the end
  [ "$REPLICAS_GIVEN" = true ] || { [ "$NODE_COUNT" -eq 1 ] || REPLICAS=2/3; }
else
  whole --duration "$DURATION" 1; whole --warmup "$WARMUP" 1; whole --warmup-max "$WARMUP_MAX" 1
  whole --connections "$CONNECTIONS" 1
  [ "$REPLICAS_GIVEN" = true ] || REPLICAS=2/3
  command -v wrk >/dev/null || { echo "wrk not found (Debian: apt-get install wrk)" >&2; exit 2; }
fi
[ -n "$NODE_HEAP" ] || fail_usage "--node-heap needs a size"
[ -z "$REPLICAS" ] || [[ $REPLICAS =~ ^[0-9]+/[0-9]+$ ]] || fail_usage "--replicas wants ACK/FROM, e.g. 2/3: $REPLICAS"
if [ "$PIN" = true ] && [ "$(nproc)" -lt 2 ]; then fail_usage "--pin needs 2 or more CPUs"; fi
case "$PROFILE" in ""|cpu|wall|alloc|lock) ;; *) fail_usage "--profile: cpu, wall, alloc or lock, not '$PROFILE'" ;; esac
if [ "$MODE" = ratio ] && [ "$TARGET" = cluster ] && [ -n "$BASELINE_JAR" ]; then fail_usage "--baseline-jar is for ratio node only"; fi

# ---- the targets -------------------------------------------------------------------------------------------------
# By index, in the order they start: NAMES (a short word: A, B or a variant's name; their directory under OUT),
# LABELS (the report's), JARS (absolute; BASELINE_SERVER for the BaselineServer), COUNTS (nodes), TLSES (true:
# https, the bundle of tls_args), REPLS (the replicas of wrk's requests), JVM_OPTS and ARGS (each newline-separated).
NAMES=(); LABELS=(); JARS=(); COUNTS=(); TLSES=(); REPLS=(); JVM_OPTS=(); ARGS=()
BASELINE_SERVER=baseline-server
DEFAULT_JAR="$(realpath -m "$ROOT/target/dht.jar")"
NEED_DEFAULT_JAR=false
add_target() {  # add_target NAME LABEL JAR COUNT TLS REPLICAS
  local jar="$3"
  if [ "$jar" != "$BASELINE_SERVER" ]; then
    jar="$(realpath -m -- "$jar")"
    if [ "$jar" = "$DEFAULT_JAR" ]; then
      [ -f "$jar" ] || NEED_DEFAULT_JAR=true
    else
      [ -f "$jar" ] || fail_usage "$1: no such jar: $jar"
    fi
  fi
  NAMES+=("$1"); LABELS+=("$2"); JARS+=("$jar"); COUNTS+=("$4"); TLSES+=("$5"); REPLS+=("$6"); JVM_OPTS+=(""); ARGS+=("")
}
index_of() {  # index_of NAME: the target's index; 1 if there is none
  local i
  for i in "${!NAMES[@]}"; do [ "${NAMES[$i]}" != "$1" ] || { echo "$i"; return 0; }; done
  return 1
}
case "$MODE" in
  latency)
    [ ${#VARIANT_SPECS[@]} -ge 2 ] && [ ${#VARIANT_SPECS[@]} -le 3 ] ||
      fail_usage "give 2 or 3 variants (--variant NAME=JAR), not ${#VARIANT_SPECS[@]}"
    for spec in "${VARIANT_SPECS[@]}"; do
      name="${spec%%=*}"; jar="${spec#*=}"
      [ "$spec" != "$name" ] && [ -n "$jar" ] || fail_usage "--variant wants NAME=JAR: $spec"
      [[ $name =~ ^[A-Za-z][A-Za-z0-9_-]{0,19}$ ]] || fail_usage "a variant's name is a short word (letters, digits, - and _, at most 20): $name"
      ! index_of "$name" >/dev/null || fail_usage "two variants named $name"
      add_target "$name" "$name" "$jar" "$NODE_COUNT" false "$REPLICAS"
    done ;;
  ratio)
    if [ "$TARGET" = node ] && [ -n "$BASELINE_JAR" ]; then
      add_target A "node of $(basename "$BASELINE_JAR")" "$BASELINE_JAR" 1 false ""
      b_label="node of $(basename "$B_JAR")"; [ "$TLS" = false ] || b_label="$b_label with TLS"
      add_target B "$b_label" "$B_JAR" 1 "$TLS" ""
    elif [ "$TARGET" = node ]; then
      add_target A baseline "$BASELINE_SERVER" 1 false ""
      b_label=node; [ "$TLS" = false ] || b_label="node with TLS"
      add_target B "$b_label" "$B_JAR" 1 "$TLS" ""
    elif [ "$TLS" = true ]; then
      add_target A cluster "$B_JAR" 3 false "$REPLICAS"
      add_target B "cluster with TLS (client API and peers, peers by certificate)" "$B_JAR" 3 true "$REPLICAS"
    else
      add_target A node "$B_JAR" 1 false ""
      add_target B cluster "$B_JAR" 3 false "$REPLICAS"
    fi ;;
  cost)
    add_target B B "$B_JAR" 3 false "$REPLICAS"
    for spec in "${OPTION_SPECS[@]}"; do
      case "$spec" in "arg A="*|"arg B="*) [ -n "$BASELINE_JAR" ] || BASELINE_JAR="$B_JAR" ;; esac
    done
    [ -z "$BASELINE_JAR" ] || add_target A A "$BASELINE_JAR" 3 false "$REPLICAS" ;;
esac
for spec in "${OPTION_SPECS[@]}"; do
  kind="${spec%% *}"; spec="${spec#* }"
  option=--jvm-opt; [ "$kind" = jvm ] || option=--node-arg
  if [[ $spec == -* ]]; then    # no NAME: every dht node
    targets=("${!NAMES[@]}"); value="$spec"
  else
    [ "$MODE" != ratio ] || fail_usage "ratio: $option applies to every dht node, with no NAME: $spec"
    name="${spec%%=*}"; value="${spec#*=}"
    [ "$spec" != "$name" ] && [ -n "$value" ] || fail_usage "$option wants [NAME=]VALUE: $spec"
    i=$(index_of "$name") || fail_usage "$option $spec: no target named $name"
    targets=("$i")
  fi
  for i in "${targets[@]}"; do
    [ "${JARS[$i]}" != "$BASELINE_SERVER" ] || continue
    if [ "$kind" = jvm ]; then JVM_OPTS[i]+="${JVM_OPTS[i]:+$'\n'}$value"; else ARGS[i]+="${ARGS[i]:+$'\n'}$value"; fi
  done
done
if [ "$MODE" = cost ] && [ "$PIN" = true ]; then   # the nodes share CPU 1: one event loop each, unless given
  for i in "${!NAMES[@]}"; do
    [[ $'\n'"${ARGS[i]}" == *$'\n'--dht.io-threads=* ]] || ARGS[i]+="${ARGS[i]:+$'\n'}--dht.io-threads=1"
  done
fi

OUT="${OUT:-$ROOT/gatling/target/paired/$(date +%Y%m%d-%H%M%S)-$MODE${TARGET:+-$TARGET}}"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"

# ---- starting and loading the targets ------------------------------------------------------------------------------
install_traps
CLEANUP_DIRS=("$OUT/node-data")    # the nodes' data, removed on every exit once the nodes have ended
CLK_TCK=$(getconf CLK_TCK 2>/dev/null || echo 100)   # clock ticks per second of /proc/PID/stat's times
if [ "$PIN" = true ]; then
  LOAD_PIN=(taskset -c 0)          # Gatling (bench-common.sh's gatling) and wrk
  SERVER_CPUS="1-$(( $(nproc) - 1 ))"; [ "$MODE" != cost ] || SERVER_CPUS=1   # pin_servers
fi

# java_pid PID PORT: the java process of a server started as `setsid java ... &` with $! = PID. That is PID itself
# when setsid did not fork, which it does not when the shell is no process group leader (a script without job
# control is not); otherwise the newest java process with --server.port=PORT (--port=PORT: the baseline server).
# Returns 1 if there is none.
java_pid() {
  local pid="$1" port="$2" comm=""
  { read -r comm <"/proc/$pid/comm"; } 2>/dev/null || true
  if [ "$comm" = java ]; then echo "$pid"; return 0; fi
  pgrep -n -f -- " --(server\.)?port=$port( |\$)"
}

TLS_DIR=""
tls_args() {  # tls_args I: sets NODE_TLS_ARGS, the SSL bundle of target I's nodes (a certificate made on first use)
  if [ -z "$TLS_DIR" ]; then
    TLS_DIR="$OUT/tls"; mkdir -p "$TLS_DIR"
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj /CN=127.0.0.1 \
      -addext subjectAltName=IP:127.0.0.1 -keyout "$TLS_DIR/node.key" -out "$TLS_DIR/node.crt" 2>/dev/null
  fi
  NODE_TLS_ARGS=(--dht.tls.bundle=dht "--spring.ssl.bundle.pem.dht.keystore.certificate=file:$TLS_DIR/node.crt"
    "--spring.ssl.bundle.pem.dht.keystore.private-key=file:$TLS_DIR/node.key"
    "--spring.ssl.bundle.pem.dht.truststore.certificate=file:$TLS_DIR/node.crt")
  # a cluster's peers present the certificate and are authenticated by it; wrk presents none (want, not need)
  [ "${COUNTS[$1]}" -eq 1 ] || NODE_TLS_ARGS+=(--dht.tls.client-auth=want)
}

# start_target I: starts target I (start_nodes with its jar, JVM options and arguments; or the BaselineServer), logs
# in $OUT/NAME, data in $OUT/node-data/NAME, and pins it (--pin). Sets VURLS[I] (comma-separated) and VJAVA[I] (the
# java PIDs, space-separated).
VURLS=(); VJAVA=()
start_target() {
  local i="$1" name="${NAMES[$1]}" dir="$OUT/${NAMES[$1]}" k pid port
  mkdir -p "$dir" "$OUT/node-data/$name"
  if [ "${JARS[$i]}" = "$BASELINE_SERVER" ]; then
    log "starting $name: the BaselineServer, -Xms$NODE_HEAP -Xmx$NODE_HEAP"
    port=$(free_port)
    setsid java "-Xms$NODE_HEAP" "-Xmx$NODE_HEAP" -cp "$CLASSPATH" dev.dht.gatling.BaselineServer --port="$port" \
      >"$dir/baseline.log" 2>&1 &
    PIDS=($!); PORTS=("$port"); URLS="http://127.0.0.1:$port"; STARTED_PIDS+=($!)
    wait_ready "$URLS"
  else
    NODE_JAR="${JARS[$i]}"
    mapfile -t NODE_JVM_OPTS < <(printf '%s' "${JVM_OPTS[$i]}")
    mapfile -t NODE_ARGS < <(printf '%s' "${ARGS[$i]}")
    NODE_SCHEME=http; NODE_TLS_ARGS=()
    if [ "${TLSES[$i]}" = true ]; then NODE_SCHEME=https; tls_args "$i"; fi
    log "starting $name: ${COUNTS[$i]} node(s) of $NODE_JAR, -Xms$NODE_HEAP -Xmx$NODE_HEAP ${NODE_JVM_OPTS[*]} ${NODE_ARGS[*]}"
    start_nodes "$dir" "${COUNTS[$i]}" "$OUT/node-data/$name"
  fi
  VURLS[i]="$URLS"; VJAVA[i]=""
  for k in "${!PIDS[@]}"; do
    pid=$(java_pid "${PIDS[$k]}" "${PORTS[$k]}") || { log "$name: no java process for port ${PORTS[$k]}; see $dir"; exit 1; }
    # if setsid forked, java leads a process group of its own, which cleanup must end too
    [ "$pid" = "${PIDS[$k]}" ] || { STARTED_PIDS+=("$pid"); log "  $name: setsid forked; java of port ${PORTS[$k]} is $pid"; }
    VJAVA[i]+="${VJAVA[i]:+ }$pid"
  done
  # shellcheck disable=SC2086  # VJAVA[i]: PIDs, space-separated
  pin_servers ${VJAVA[$i]}
  log "  $name: $URLS (java PIDs ${VJAVA[i]})"
}

# wrk_run I METHOD SECONDS FILE: one wrk run against target I (gatling/wrk/entity.lua: closed loop, one thread per
# node, CONNECTIONS in all, VALUE_SIZE-byte values over KEYS keys); FILE gets wrk's output. Exits if wrk fails.
wrk_run() {
  local urls="${VURLS[$1]}" threads
  threads=$(echo "$urls" | tr ',' '\n' | wc -l)
  WRK_METHOD="$2" WRK_KEYS="$KEYS" WRK_VALUE_SIZE="$VALUE_SIZE" WRK_REPLICAS="${REPLS[$1]}" \
    WRK_HOSTS="$(echo "$urls" | sed 's#https\{0,1\}://##g')" WRK_THREADS="$threads" \
    "${LOAD_PIN[@]}" wrk -t"$threads" -c"$CONNECTIONS" -d"${3}s" --latency -s "$ROOT/gatling/wrk/entity.lua" \
    "${urls%%,*}/" >"$4" 2>&1 || { log "wrk failed; see $4"; cat "$4" >&2; exit 1; }
}
field() { sed -n "s/.*ratio-summary.* $2=\([0-9]*\).*/\1/p" "$1"; }   # field FILE KEY: a value of wrk's summary line
answered() { echo $(( $(field "$1" status_2xx) + $(field "$1" status_404) )); }   # answered FILE: 2xx + 404
answered_rps() { calc "$(answered "$1") / ($(field "$1" duration_us) / 1000000)"; }  # answered_rps FILE: per second
failures() {  # failures FILE: 5xx + socket errors
  echo $(( $(field "$1" status_5xx) + $(field "$1" errors_connect) + $(field "$1" errors_read) \
    + $(field "$1" errors_write) + $(field "$1" errors_timeout) ))
}

# ---- latency: Gatling at a fixed rate -------------------------------------------------------------------------------
now_ms() { NOW_MS=$(( ${EPOCHREALTIME//[.,]/} / 1000 )); }   # now_ms: sets NOW_MS, epoch milliseconds (no fork)

sleep_until() {  # sleep_until EPOCH_MS: returns at that time, sleeping at most 1 s at a time
  local left frac
  while now_ms; left=$(($1 - NOW_MS)); [ "$left" -gt 0 ]; do
    if [ "$left" -ge 1000 ]; then sleep 1; else printf -v frac '%03d' "$left"; sleep "0.$frac"; fi
  done
}

# sample_cpu START_FILE CPU_FILE PID...: runs in the background beside one Gatling run. Waits for the epoch ms of
# the run's first request (Gatling writes it to START_FILE, -DloadStartFile), takes cpu_ticks of the PIDs at 2 s
# after the ramp and at 2 s before the run's end, and writes ticks= (the difference) and millis= (the wall time
# between the two samples) to CPU_FILE. Writes nothing if the load never starts or a process is gone.
sample_cpu() {
  local start_file="$1" cpu_file="$2" start="" c0 c1 w0 deadline
  shift 2
  now_ms; deadline=$((NOW_MS + (WARMUP_SECONDS + DURATION + 300) * 1000))
  while [ ! -s "$start_file" ]; do
    now_ms; [ "$NOW_MS" -lt "$deadline" ] || return 0
    sleep 0.2
  done
  read -r start <"$start_file" || [ -n "$start" ]    # written without a newline
  [[ $start =~ ^[0-9]+$ ]] || return 0
  sleep_until $((start + (WARMUP_SECONDS + 2) * 1000))
  c0=$(cpu_ticks "$@") || return 0
  now_ms; w0=$NOW_MS
  sleep_until $((start + (WARMUP_SECONDS + DURATION - 2) * 1000))
  c1=$(cpu_ticks "$@") || return 0
  now_ms
  printf 'ticks=%s\nmillis=%s\n' $((c1 - c0)) $((NOW_MS - w0)) >"$cpu_file"
}

# latency_warm_up I TAPE: the unmeasured warm-up run of TAPE on variant I (the GET tapes' preload first), repeated up
# to PREWARM_ATTEMPTS times while it does not complete; notes the outcome in $OUT/warmup.md
latency_warm_up() {
  local i="$1" tape="$2" name="${NAMES[$1]}" dir="$OUT/${NAMES[$1]}" attempt s
  for attempt in $(seq 1 "$PREWARM_ATTEMPTS"); do
    s="$dir/warmup-$tape-$attempt.txt"
    log "$name $tape: warm-up run $attempt, $PREWARM_SECONDS s at $PREWARM_RATE req/s (and the preload of GET tapes)"
    if gatling "$tape" "${VURLS[$i]}" "$PREWARM_RATE" "$PREWARM_SECONDS" "$s" "$dir/warmup-$tape-$attempt.log" no; then
      echo "- $name, $tape: run $attempt completed: p99 $(kv "$s" p99_ms) ms, errors $(kv "$s" error_percent) %" >>"$OUT/warmup.md"
      return 0
    fi
  done
  echo "- $name, $tape: no warm-up run completed in $PREWARM_ATTEMPTS attempts (see $name/warmup-$tape-*.log)" >>"$OUT/warmup.md"
}

# latency_measure I TAPE ROUND: one measured run of TAPE on variant I with the CPU sampler beside it; appends a row
# (tab-separated: tape, round, variant, req/s, p50, p99, p99.9, errors %, 503s, node CPU us/request; - if unknown)
# to $OUT/rows.tsv
latency_measure() {
  local i="$1" tape="$2" round="$3" name="${NAMES[$1]}" base sampler ok=true s
  local rps=- p50=- p99=- p999=- errors=- n503=- cpu=- ticks millis
  base="$OUT/$name/$tape-round$round"; s="$base.txt"
  sleep "$COOLDOWN_SECONDS"
  rm -f "$base.start" "$base.cpu"
  # shellcheck disable=SC2086  # VJAVA[i]: PIDs, space-separated
  sample_cpu "$base.start" "$base.cpu" ${VJAVA[$i]} &
  sampler=$!; HELPER_PIDS=("$sampler")
  gatling "$tape" "${VURLS[$i]}" "$RATE" "$DURATION" "$s" "$base.log" no -DloadStartFile="$base.start" || ok=false
  # the sampler took its last sample 2 s before the load ended; if the run failed it may still wait for the start
  for _ in $(seq 1 25); do kill -0 "$sampler" 2>/dev/null || break; sleep 0.2; done
  kill -TERM "$sampler" 2>/dev/null || true
  wait "$sampler" 2>/dev/null || true
  HELPER_PIDS=()
  if [ "$ok" = true ]; then
    rps=$(kv "$s" rps); p50=$(kv "$s" p50_ms); p99=$(kv "$s" p99_ms); p999=$(kv "$s" p999_ms)
    errors=$(kv "$s" error_percent); n503=$(kv "$s" status.503.count); n503=${n503:-0}
    if [ -s "$base.cpu" ]; then
      ticks=$(kv "$base.cpu" ticks); millis=$(kv "$base.cpu" millis)
      if [ "$millis" -gt 0 ]; then cpu=$(int "$ticks * 1000000000 / ($CLK_TCK * $RATE * $millis)"); fi
    fi
    log "  round $round, $tape, $name: $rps req/s, p50 $p50 ms, p99 $p99 ms, p99.9 $p999 ms, errors $errors % ($(errors_by_status "$s")), node CPU $cpu us/request"
  fi
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$tape" "$round" "$name" "$rps" "$p50" "$p99" "$p999" "$errors" "$n503" "$cpu" \
    >>"$OUT/rows.tsv"
}

# latency_pairs TAPE: for each round the variant with the lowest p99 and the one with the lowest node CPU per request
# (with every variant's value), then the mean CPU per request of each variant over the rounds; Markdown, from rows.tsv
latency_pairs() {
  awk -F'\t' -v tape="$1" -v rounds="$ROUNDS" -v names="${NAMES[*]}" '
    function lowest(values, r,    i, x, best, bestv, all) {
      best = ""; all = ""
      for (i = 1; i <= n; i++) {
        x = ((r, name[i]) in values) ? values[r, name[i]] : "-"
        all = all (all == "" ? "" : ", ") name[i] " " x
        if (x == "-") continue
        if (best == "" || x + 0 < bestv) { best = name[i]; bestv = x + 0 }
        else if (x + 0 == bestv) best = best " = " name[i]
      }
      return (best == "" ? "-" : best) " (" all ")"
    }
    $1 == tape { p99[$2, $3] = $6; cpu[$2, $3] = $10 }
    END {
      n = split(names, name, " ")
      print "| round | lowest p99 (ms) | lowest node CPU (us/request) |"
      print "|---|---|---|"
      for (r = 1; r <= rounds; r++) printf "| %d | %s | %s |\n", r, lowest(p99, r), lowest(cpu, r)
      for (i = 1; i <= n; i++) {
        sum[i] = 0; runs[i] = 0
        for (r = 1; r <= rounds; r++) if (((r, name[i]) in cpu) && cpu[r, name[i]] != "-") { sum[i] += cpu[r, name[i]]; runs[i]++ }
      }
      line = "Mean node CPU per request over the rounds:"; sep = ""
      for (i = 1; i <= n; i++) {
        if (runs[i] == 0) { line = line sep " " name[i] " -"; sep = ";"; continue }
        line = line sprintf("%s %s %.0f us (%d of %d runs", sep, name[i], sum[i] / runs[i], runs[i], rounds)
        if (i > 1 && runs[1] > 0 && sum[1] > 0) line = line sprintf(", %+.1f %% against %s", 100 * (sum[i] / runs[i] / (sum[1] / runs[1]) - 1), name[1])
        line = line ")"; sep = ";"
      }
      print ""
      print line "."
    }' "$OUT/rows.tsv"
}

latency_round() {  # latency_round ROUND I...: every tape on the variants I..., in this order
  local round="$1" i tape order_names=()
  shift
  for i in "$@"; do order_names+=("${NAMES[$i]}"); done
  log "round $round of $ROUNDS: ${order_names[*]}"
  for tape in "${TAPES[@]}"; do
    for i in "$@"; do latency_measure "$i" "$tape" "$round"; done
  done
}

latency_main() {
  local i tape setup warmup runs dead=() oom=() pid logfile pinned=""
  : >"$OUT/rows.tsv"; : >"$OUT/warmup.md"; : >"$OUT/variants.md"
  compile_gatling
  code_or_none() { if [ -n "$1" ]; then echo "\`$1\`"; else echo none; fi; }   # code_or_none TEXT: `TEXT`, or none
  for i in "${!NAMES[@]}"; do
    echo "- **${NAMES[$i]}**: \`${JARS[$i]}\` (modified $(date -r "${JARS[$i]}" '+%Y-%m-%d %H:%M:%S %Z')); JVM options:" \
      "$(code_or_none "${JVM_OPTS[$i]//$'\n'/ }"); node arguments: $(code_or_none "${ARGS[$i]//$'\n'/ }")" >>"$OUT/variants.md"
  done
  setup="a $NODE_COUNT-node cluster"; [ "$NODE_COUNT" -gt 1 ] || setup="one node"
  warmup="one run of each tape on every variant, $PREWARM_SECONDS s at $PREWARM_RATE req/s"; [ "$PREWARM_SECONDS" -gt 0 ] || warmup=none
  runs=$((ROUNDS * ${#TAPES[@]} * ${#NAMES[@]}))
  log "variants: ${NAMES[*]}, each $setup; $runs measured runs of $DURATION s at $RATE req/s after ${#TAPES[@]} x ${#NAMES[@]} warm-up runs"

  for i in "${!NAMES[@]}"; do start_target "$i"; done
  if [ "$PREWARM_SECONDS" -gt 0 ]; then
    for tape in "${TAPES[@]}"; do
      for i in "${!NAMES[@]}"; do latency_warm_up "$i" "$tape"; done
    done
  fi
  paired_rounds "$ROUNDS" latency_round "${!NAMES[@]}"

  # the end: which nodes are still alive, a graceful stop, then the logs' OutOfMemoryErrors; the data goes
  for i in "${!NAMES[@]}"; do
    # shellcheck disable=SC2086  # VJAVA[i]: PIDs, space-separated
    for pid in ${VJAVA[$i]}; do kill -0 "$pid" 2>/dev/null || dead+=("${NAMES[$i]} (java PID $pid)"); done
  done
  log "stopping the nodes"
  PIDS=("${STARTED_PIDS[@]}"); stop_target
  rm -rf "$OUT/node-data"
  for logfile in "$OUT"/*/node-*.log; do
    [ -f "$logfile" ] || continue
    if grep -q OutOfMemoryError "$logfile"; then oom+=("${logfile#"$OUT"/}"); fi
  done
  [ "$PIN" = false ] || pinned=" Pinned: Gatling on CPU 0, the nodes on CPU $( [ "$SERVER_CPUS" = 1-1 ] && echo 1 || echo "$SERVER_CPUS")."

  {
    echo "# Paired comparison: ${NAMES[*]}, $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo
    echo "Machine: $(nproc) cores, $(uname -sr), $(java -version 2>&1 | head -1). Gatling on the same machine as the nodes.$pinned"
    echo
    echo "Variants, all running side by side the whole time, each $setup (-Xms$NODE_HEAP -Xmx$NODE_HEAP, a fresh data directory):"
    echo
    cat "$OUT/variants.md"
    echo
    echo "Every run: $DURATION s at $RATE req/s after a ${WARMUP_SECONDS}-s unmeasured ramp, $COOLDOWN_SECONDS s apart; tapes ${TAPES[*]};"
    echo "$ROUNDS rounds, each running every tape on every variant once, the variants' order alternating (odd rounds"
    echo "${NAMES[*]}, even rounds the reverse). Warm-up before round 1: $warmup."
    echo "Value size $VALUE_SIZE bytes, replicas ${REPLICAS:-server default}, $KEYS preloaded keys for GET tapes."
    echo
    echo "p50/p99/p99.9 are Gatling's response times in whole ms over the measured requests; errors % and 503 count"
    echo "them. Node CPU us/req: the CPU time (utime + stime, /proc/PID/stat) of the variant's node processes from 2 s"
    echo "after the ramp to 2 s before the end of the run, divided by the set rate times that wall time. The variants"
    echo "and Gatling share the cores, which inflates the absolute CPU numbers: compare within a round only."
    echo
    echo "| tape | round | variant | req/s | p50 | p99 | p99.9 | errors % | 503 | node CPU us/req |"
    echo "|---|---|---|---|---|---|---|---|---|---|"
    for tape in "${TAPES[@]}"; do
      awk -F'\t' -v tape="$tape" '$1 == tape { printf "|"; for (i = 1; i <= NF; i++) printf " %s |", $i; print "" }' "$OUT/rows.tsv"
    done
    echo
    echo "## Pairs"
    for tape in "${TAPES[@]}"; do
      echo
      echo "### $tape"
      echo
      latency_pairs "$tape"
    done
    if [ -s "$OUT/warmup.md" ]; then
      echo
      echo "## Warm-up"
      echo
      cat "$OUT/warmup.md"
    fi
    echo
    echo "## Checks"
    echo
    if [ ${#oom[@]} -eq 0 ]; then echo "- OutOfMemoryError: none in the node logs"; else echo "- **OutOfMemoryError** in ${oom[*]}"; fi
    if [ ${#dead[@]} -eq 0 ]; then echo "- every node alive at the end"; else echo "- **not alive at the end:** ${dead[*]}"; fi
    echo "- a row with - : the run did not complete (see <variant>/<tape>-round<N>.log and run.log)"
    echo
    echo "Files: <variant>/<tape>-round<N>.log (Gatling's console), .txt (latency summary), .cpu (CPU sample);"
    echo "<variant>/warmup-*; <variant>/node-<port>.log; run.log."
  } >"$OUT/summary.md"
  log "summary: $OUT/summary.md"
  cat "$OUT/summary.md"
}

# ---- ratio: B's answered requests per second over A's, with wrk ------------------------------------------------------
# ratio_warm_up WHICH METHOD: WARMUP-s runs until two in a row agree within STEADY and (PUT) the last one wrote every
# key (each run's PUTs walk the key space from its start), or until WARMUP_MAX seconds; adds to WARMUP_NOTE
ratio_warm_up() {
  local which="$1" method="$2" run=0 rate previous="" file requests
  while :; do
    run=$((run + 1)); file="$OUT/warmup-$which-$method-$run.txt"
    wrk_run "$(index_of "$which")" "$method" "$WARMUP" "$file"
    rate=$(answered_rps "$file"); requests=$(field "$file" requests)
    log "  warm-up $which $method run $run: $rate answered/s"
    if [ -n "$previous" ] && [ "$(calc "($rate - $previous) / $previous < $STEADY && ($previous - $rate) / $previous < $STEADY")" = 1 ] \
        && { [ "$method" = GET ] || [ "$requests" -ge "$KEYS" ]; }; then
      return 0
    fi
    if [ $((run * WARMUP)) -ge "$WARMUP_MAX" ]; then
      WARMUP_NOTE="$WARMUP_NOTE $which $method not steady after ${WARMUP_MAX} s (last runs $previous, $rate/s)."
      log "  warm-up $which $method: not steady after $WARMUP_MAX s"
      return 0
    fi
    previous="$rate"
  done
}

ratio_round() {  # ratio_round ROUND WHICH...: $method on A and B in this order, then the round's ratio B/A
  local round="$1" which a b ratio
  shift
  for which in "$@"; do
    sleep 2
    wrk_run "$(index_of "$which")" "$method" "$DURATION" "$OUT/$method-$round-$which.txt"
  done
  a="$OUT/$method-$round-A.txt"; b="$OUT/$method-$round-B.txt"
  ratio=$(calc "$(answered_rps "$b") / $(answered_rps "$a")")
  ratios+=("$ratio")
  printf '| %s | %d | %.0f | %.0f | %.2f | %.1f | %.1f | %d | %d |\n' "$method" "$round" "$(answered_rps "$a")" \
    "$(answered_rps "$b")" "$ratio" "$(calc "$(field "$a" p99_us) / 1000")" "$(calc "$(field "$b" p99_us) / 1000")" \
    "$(failures "$a")" "$(failures "$b")" >>"$REPORT"
  log "  $method round $round: A $(answered_rps "$a")/s, B $(answered_rps "$b")/s, B/A $ratio"
}

ratio_main() {
  local i which method sorted median summary="" node_args=""
  [ "${JARS[0]}" != "$BASELINE_SERVER" ] || compile_gatling
  for i in "${!NAMES[@]}"; do start_target "$i"; done
  log "A = ${LABELS[0]} (${VURLS[0]}), B = ${LABELS[1]} (${VURLS[1]}); results in $OUT"
  WARMUP_NOTE=""
  log "warm-up: ${WARMUP}-s runs of PUT, then of GET, on each target, until steady (at most ${WARMUP_MAX} s each)"
  for which in A B; do
    for method in PUT GET; do ratio_warm_up "$which" "$method"; done
  done
  node_args="${ARGS[1]//$'\n'/ }"
  REPORT="$OUT/report.md"
  {
    echo "# gatling/paired.sh ratio $TARGET, $(date -u +%Y-%m-%dT%H:%MZ)"
    echo
    echo "A = ${LABELS[0]}, B = ${LABELS[1]}; wrk closed loop, $CONNECTIONS connections, ${DURATION}-s runs, $ROUNDS rounds"
    echo "alternating, warm-ups of ${WARMUP}-s runs until two agree within $(calc "$STEADY * 100")%,$WARMUP_NOTE $VALUE_SIZE-byte values, $KEYS keys, cluster replicas $REPLICAS, pinned: $PIN,"
    [ -z "$node_args" ] || echo "node arguments: $node_args,"
    echo "$(nproc) CPUs, commit $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)."
    echo
    echo "| op | round | A answered/s | B answered/s | B/A | A p99 ms | B p99 ms | A failures | B failures |"
    echo "|---|---|---|---|---|---|---|---|---|"
  } >"$REPORT"
  for method in PUT GET; do
    ratios=()
    paired_rounds "$ROUNDS" ratio_round A B
    sorted=$(printf '%s\n' "${ratios[@]}" | sort -g)
    median=$(echo "$sorted" | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
    summary="$summary$(printf '%s B/A median %.2f (min %.2f, max %.2f over %d rounds)' "$method" "$median" \
      "$(echo "$sorted" | head -1)" "$(echo "$sorted" | tail -1)" "$ROUNDS")"$'\n'
  done
  { echo; printf '%s' "$summary"; } >>"$REPORT"
  cat "$REPORT"
}

# ---- cost: a cluster's CPU and replica exchanges per answered request, with wrk ---------------------------------------
exchanges() {  # exchanges I [OPERATION]: replica calls target I's nodes made, of all operations or of one
  local url filter="${2:+operation=\"$2\"}" total=0 urls="${VURLS[$1]}"
  for url in ${urls//,/ }; do
    total=$(( total + $(curl -sf -m 5 "$url/actuator/prometheus" | awk -v f="$filter" \
      '/^dht_replica_calls_seconds_count/ && index($0, f) { s += $NF } END { printf "%d", s }') ))
  done
  echo "$total"
}
# profiler I ACTION: one async-profiler command to every node of target I; %p in ACTION becomes the node's port (jcmd
# parses a bare a=b,c as a named option, hence the inner quotes; the agent's errors go to the node's log)
profiler() {
  local pids k
  read -r -a pids <<<"${VJAVA[$1]}"
  for k in "${!pids[@]}"; do
    jcmd "${pids[$k]}" JVMTI.agent_load "$AP_LIB" "\"${2//%p/$(echo "${VURLS[$1]}" | cut -d, -f$((k + 1)) | sed 's/.*://')}\"" \
      >>"$OUT/profiler.log" 2>&1
  done
}

cost_run() {  # cost_run TARGET METHOD SECONDS LABEL: one wrk run against cluster TARGET (A or B) and its figures
  local target="$1" method="$2" seconds="$3" label="$4 $1" file="$OUT/$4-$1-$2.txt" i pids ticks0 calls0 reads0 writes0
  local answered failed profiled=false
  i=$(index_of "$target"); read -r -a pids <<<"${VJAVA[$i]}"
  ticks0=$(cpu_ticks "${pids[@]}"); calls0=$(exchanges "$i"); reads0=$(exchanges "$i" read-batch); writes0=$(exchanges "$i" write-batch)
  if [ -n "$PROFILE" ] && [ "$target" = B ] && [ "$4" = "round-$ROUNDS" ]; then
    profiled=true
    case "$PROFILE" in cpu|wall) profiler "$i" "start,event=$PROFILE,interval=1ms" ;; *) profiler "$i" "start,event=$PROFILE" ;; esac
  fi
  wrk_run "$i" "$method" "$seconds" "$file"
  if [ "$profiled" = true ]; then
    profiler "$i" "dump,collapsed,total,file=$OUT/$method-%p-$PROFILE.collapsed"
    profiler "$i" "stop"
    cat "$OUT/$method"-*-"$PROFILE.collapsed" 2>/dev/null | awk -f "$ROOT/gatling/profile-shares.awk" | sort -rn \
      >"$OUT/$method-$PROFILE-shares.txt" || true
    log "$label $method: $PROFILE profile of the three nodes in $OUT/$method-$PROFILE-shares.txt"
  fi
  answered=$(answered "$file"); failed=$(failures "$file")
  if [ "$answered" -eq 0 ]; then log "$label $method: nothing answered ($failed failures); see $file"; return; fi
  log "$(printf '%-10s %-3s answered/s %6.0f  failures %d  cpu_us/req %6.1f  exchanges/req %5.3f (read-batch %5.3f, write-batch %5.3f)  p99_ms %.1f' \
    "$label" "$method" "$(calc "$answered / ($(field "$file" duration_us) / 1000000)")" "$failed" \
    "$(calc "($(cpu_ticks "${pids[@]}") - $ticks0) * 1000000 / $CLK_TCK / $answered")" \
    "$(calc "($(exchanges "$i") - $calls0) / $answered")" \
    "$(calc "($(exchanges "$i" read-batch) - $reads0) / $answered")" \
    "$(calc "($(exchanges "$i" write-batch) - $writes0) / $answered")" \
    "$(calc "$(field "$file" p99_us) / 1000")")"
}

cost_round() {  # cost_round ROUND TARGET...: PUT, then GET, on the targets in this order
  local round="$1" method target
  shift
  for method in PUT GET; do
    for target in "$@"; do cost_run "$target" "$method" "$DURATION" "round-$round"; done
  done
}

cost_main() {
  local i target targets=()
  if [ -n "$PROFILE" ]; then
    async_profiler_lib "$AP_VERSION"   # sets AP_LIB
    # in every node, loaded idle from the start: attached late, the agent's JVMTI capabilities made the JIT recompile
    for i in "${!NAMES[@]}"; do JVM_OPTS[i]="-agentpath:$AP_LIB${JVM_OPTS[i]:+$'\n'}${JVM_OPTS[i]}"; done
  fi
  for i in "${!NAMES[@]}"; do
    start_target "$i"
    log "cluster ${NAMES[$i]}: ${VURLS[$i]}, jar ${JARS[$i]}, node arguments: $(args="${ARGS[$i]//$'\n'/ }"; echo "${args:-none}")"
  done
  log "logs in $OUT"
  index_of A >/dev/null && targets=(A B) || targets=(B)
  for target in "${targets[@]}"; do
    cost_run "$target" PUT "$WARMUP" warmup
    cost_run "$target" GET "$WARMUP" warmup
  done
  paired_rounds "$ROUNDS" cost_round "${targets[@]}"
}

# ---- main ----------------------------------------------------------------------------------------------------------
log "results in $OUT"
[ "$NEED_DEFAULT_JAR" = false ] || build_dht_jar_if_missing
"${MODE}_main"
