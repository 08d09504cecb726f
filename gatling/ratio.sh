#!/usr/bin/env bash
# The throughput ratios (node / bare server, cluster / node), measured with wrk: closed-loop load from wrk (1 thread
# per target node, 32 keep-alive connections in all), 1 KiB values, load and servers on the same machine, the two
# targets loaded in turn, alternating A B, B A, ... for several rounds after a warm-up. Prints each round's ratio and
# the median with its spread. See gatling/README.md, "ratio.sh: the ratios with wrk".
#
# usage: gatling/ratio.sh [options] node|cluster
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
GATLING_POM="$ROOT/gatling/pom.xml"
# shellcheck source=gatling/bench-common.sh
. "$ROOT/gatling/bench-common.sh"    # log, kv, calc, start_nodes, compile_gatling, cleanup, ...

ROUNDS=3
DURATION=10            # measured seconds per run
WARMUP=15              # seconds of one warm-up run (unmeasured); runs repeat until the target is steady
WARMUP_MAX=240         # seconds of warm-up per target and method, at most
STEADY=0.05            # steady: a warm-up run's rate within this fraction of the run before it
CONNECTIONS=32
KEYS=20000
VALUE_SIZE=1024
REPLICAS=2/3           # of the cluster's requests; the single node is asked with its own default (1/1)
NODE_HEAP=512m
PIN=false
OUT=""

usage() {
  cat <<EOF
usage: gatling/ratio.sh [options] node|cluster

  node      one dht node (B) against the bare Reactor Netty BaselineServer (A), or with --baseline-jar against
            a dht node of that build (A): a paired comparison of two builds
  cluster   a 3-node dht cluster at replicas=$REPLICAS, the load spread over its nodes (B), against one dht node (A)

Both targets run side by side; each gets a warm-up of PUTs that writes every key, then GETs; then for PUT and
for GET, every round loads A and B in turn (A B, then B A, ...). A round's ratio is B's answered requests per
second over A's. Answered: 2xx, and 404 on GETs. 5xx and socket errors are failures and are reported.

  --rounds N          rounds (default $ROUNDS)
  --duration S        measured seconds per run (default $DURATION)
  --warmup S          seconds of one warm-up run (default $WARMUP); on each target PUT runs, then GET runs,
                      repeat until two in a row agree within $(calc "$STEADY * 100")% (a JIT-warm steady state:
                      three JVMs pinned to one CPU compile for minutes) and, for PUT, one run wrote every key
  --warmup-max S      warm-up seconds per target and method, at most (default $WARMUP_MAX); reported if hit
  --connections N     keep-alive connections in all (default $CONNECTIONS)
  --keys N            key space; GETs read keys the warm-up wrote (default $KEYS)
  --value-size BYTES  PUT body size (default $VALUE_SIZE)
  --replicas ACK/FROM replicas of the cluster's requests (default $REPLICAS)
  --node-heap SIZE    -Xms and -Xmx of each node (default $NODE_HEAP)
  --node-arg ARG      an extra argument of every dht node, e.g. --node-arg --dht.storage.row-cache-size=0
                      (repeatable; named in the report)
  --baseline-jar PATH node only: A is a dht node of this jar instead of the bare server (B is NODE_JAR or
                      target/dht.jar), e.g. to pair a change against the build before it
  --tls               B serves HTTPS (TLS 1.3, a throw-away openssl certificate for 127.0.0.1, Spring Boot PEM
                      bundle; wrk keeps its connections, so handshakes are rare): A plain, B TLS. node: with
                      --baseline-jar the same jar on both sides measures what TLS costs a node; cluster: A is a
                      plain 3-node cluster and B one with TLS between clients and nodes and between peers (peers
                      authenticated by certificate), both at --replicas
  --pin               wrk on CPU 0, every server on the other CPUs (taskset; needs 2 or more CPUs)
  --out DIR           results directory (default gatling/target/ratio/<time>)

Needs wrk (Debian: apt-get install wrk). Builds target/dht.jar if it is missing.
EOF
}

TARGET=""
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) ROUNDS="$2"; shift ;;
    --duration) DURATION="$2"; shift ;;
    --warmup) WARMUP="$2"; shift ;;
    --warmup-max) WARMUP_MAX="$2"; shift ;;
    --connections) CONNECTIONS="$2"; shift ;;
    --keys) KEYS="$2"; shift ;;
    --value-size) VALUE_SIZE="$2"; shift ;;
    --replicas) REPLICAS="$2"; shift ;;
    --node-heap) NODE_HEAP="$2"; shift ;;
    --node-arg) NODE_ARGS+=("$2"); shift ;;
    --baseline-jar) BASELINE_JAR="$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"; shift ;;
    --pin) PIN=true ;;
    --tls) TLS=true ;;
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

OUT="${OUT:-$ROOT/gatling/target/ratio/$(date +%Y%m%d-%H%M%S)-$TARGET}"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
install_traps
[ "$PIN" = true ] && SERVER_CPUS="1-$(( $(nproc) - 1 ))"   # pin_servers (bench-common.sh) uses it

# ---- targets: A_URL/A_HOSTS and B_URL/B_HOSTS (host:port list for wrk's threads) ---------------------------------
[ -n "${NODE_JAR:-}" ] || build_dht_jar_if_missing
hosts_of() { echo "$1" | sed 's#https\{0,1\}://##g'; }   # "http://h:p,http://h:p" -> "h:p,h:p"
if [ "${TLS:-false}" = true ]; then
  mkdir -p "$OUT/tls"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj /CN=127.0.0.1 \
    -addext subjectAltName=IP:127.0.0.1 -keyout "$OUT/tls/node.key" -out "$OUT/tls/node.crt" 2>/dev/null
  B_TLS_ARGS=(--dht.tls.bundle=dht "--spring.ssl.bundle.pem.dht.keystore.certificate=file:$OUT/tls/node.crt"
    "--spring.ssl.bundle.pem.dht.keystore.private-key=file:$OUT/tls/node.key"
    "--spring.ssl.bundle.pem.dht.truststore.certificate=file:$OUT/tls/node.crt")
  # a cluster's peers present the certificate and are authenticated by it; wrk presents none (want, not need)
  [ "$TARGET" = node ] || B_TLS_ARGS+=(--dht.tls.client-auth=want)
fi
if [ "$TARGET" = cluster ] && [ -n "${BASELINE_JAR:-}" ]; then echo "--baseline-jar is for node only" >&2; exit 2; fi
if [ "$TARGET" = node ] && [ -n "${BASELINE_JAR:-}" ]; then
  A_NAME="node of $(basename "$BASELINE_JAR")"; B_NAME="node of $(basename "${NODE_JAR:-target/dht.jar}")"
  A_REPLICAS=""; B_REPLICAS=""
  mkdir -p "$OUT/baseline"; NODE_JAR="$BASELINE_JAR" start_nodes "$OUT/baseline" 1; pin_servers "${PIDS[@]}"
  A_URLS="$URLS"
  if [ "${TLS:-false}" = true ]; then NODE_SCHEME=https; NODE_TLS_ARGS=("${B_TLS_ARGS[@]}"); fi
  mkdir -p "$OUT/node"; start_nodes "$OUT/node" 1; pin_servers "${PIDS[@]}"; B_URLS="$URLS"
  NODE_SCHEME=http; NODE_TLS_ARGS=()
  [ "${TLS:-false}" = false ] || B_NAME="$B_NAME with TLS"
elif [ "$TARGET" = node ]; then
  A_NAME=baseline; B_NAME=node; A_REPLICAS=""; B_REPLICAS=""
  compile_gatling
  mkdir -p "$OUT/baseline"
  port=$(free_port)
  setsid java "-Xms$NODE_HEAP" "-Xmx$NODE_HEAP" -cp "$CLASSPATH" dev.dht.gatling.BaselineServer --port="$port" \
    >"$OUT/baseline/baseline.log" 2>&1 &
  STARTED_PIDS+=($!); pin_servers $!
  A_URLS="http://127.0.0.1:$port"; wait_ready "$A_URLS"
  mkdir -p "$OUT/node"; start_nodes "$OUT/node" 1; pin_servers "${PIDS[@]}"; B_URLS="$URLS"
elif [ "${TLS:-false}" = true ]; then
  A_NAME=cluster; B_NAME="cluster with TLS (client API and peers, peers by certificate)"
  A_REPLICAS="$REPLICAS"; B_REPLICAS="$REPLICAS"
  mkdir -p "$OUT/cluster"; start_nodes "$OUT/cluster" 3; pin_servers "${PIDS[@]}"; A_URLS="$URLS"
  NODE_SCHEME=https; NODE_TLS_ARGS=("${B_TLS_ARGS[@]}")
  mkdir -p "$OUT/cluster-tls"; start_nodes "$OUT/cluster-tls" 3; pin_servers "${PIDS[@]}"; B_URLS="$URLS"
  NODE_SCHEME=http; NODE_TLS_ARGS=()
else
  A_NAME=node; B_NAME=cluster; A_REPLICAS=""; B_REPLICAS="$REPLICAS"
  mkdir -p "$OUT/node"; start_nodes "$OUT/node" 1; pin_servers "${PIDS[@]}"; A_URLS="$URLS"
  mkdir -p "$OUT/cluster"; start_nodes "$OUT/cluster" 3; pin_servers "${PIDS[@]}"; B_URLS="$URLS"
fi
log "A = $A_NAME ($A_URLS), B = $B_NAME ($B_URLS); results in $OUT"

# run_wrk NAME METHOD SECONDS FILE: one wrk run against target NAME (A or B); FILE gets wrk's output
run_wrk() {
  local which="$1" method="$2" seconds="$3" file="$4" urls replicas threads pin=()
  if [ "$which" = A ]; then urls="$A_URLS"; replicas="$A_REPLICAS"; else urls="$B_URLS"; replicas="$B_REPLICAS"; fi
  threads=$(echo "$urls" | tr ',' '\n' | wc -l)
  [ "$PIN" = true ] && pin=(taskset -c 0)
  WRK_METHOD="$method" WRK_KEYS="$KEYS" WRK_VALUE_SIZE="$VALUE_SIZE" WRK_REPLICAS="$replicas" \
    WRK_HOSTS="$(hosts_of "$urls")" WRK_THREADS="$threads" \
    "${pin[@]}" wrk -t"$threads" -c"$CONNECTIONS" -d"${seconds}s" --latency -s "$ROOT/gatling/wrk/entity.lua" \
    "${urls%%,*}/" >"$file" 2>&1 || { log "wrk failed; see $file"; cat "$file" >&2; exit 1; }
}

field() { sed -n "s/.*ratio-summary.* $2=\([0-9]*\).*/\1/p" "$1"; }   # field FILE KEY: a value of the summary line
answered_rps() {  # answered_rps FILE: (2xx + 404) per second
  calc "($(field "$1" status_2xx) + $(field "$1" status_404)) / ($(field "$1" duration_us) / 1000000)"
}
failures() {  # failures FILE: 5xx + socket errors
  echo $(( $(field "$1" status_5xx) + $(field "$1" errors_connect) + $(field "$1" errors_read) \
    + $(field "$1" errors_write) + $(field "$1" errors_timeout) ))
}

# warm_up WHICH METHOD: WARMUP-s runs until two in a row agree within STEADY and (PUT) the last one wrote every key
# (each run's PUTs walk the key space from its start), or until WARMUP_MAX seconds; sets WARMUP_NOTE
warm_up() {
  local which="$1" method="$2" run=0 rate previous="" file requests
  while :; do
    run=$((run + 1)); file="$OUT/warmup-$which-$method-$run.txt"
    run_wrk "$which" "$method" "$WARMUP" "$file"
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

WARMUP_NOTE=""
log "warm-up: ${WARMUP}-s runs of PUT, then of GET, on each target, until steady (at most ${WARMUP_MAX} s each)"
for which in A B; do
  for method in PUT GET; do warm_up "$which" "$method"; done
done

REPORT="$OUT/report.md"
{
  echo "# gatling/ratio.sh $TARGET, $(date -u +%Y-%m-%dT%H:%MZ)"
  echo
  echo "A = $A_NAME, B = $B_NAME; wrk closed loop, $CONNECTIONS connections, ${DURATION}-s runs, $ROUNDS rounds"
  echo "alternating, warm-ups of ${WARMUP}-s runs until two agree within $(calc "$STEADY * 100")%,$WARMUP_NOTE $VALUE_SIZE-byte values, $KEYS keys, cluster replicas $REPLICAS, pinned: $PIN,"
  [ ${#NODE_ARGS[@]} -eq 0 ] || echo "node arguments: ${NODE_ARGS[*]},"
  echo "$(nproc) CPUs, commit $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)."
  echo
  echo "| op | round | A answered/s | B answered/s | B/A | A p99 ms | B p99 ms | A failures | B failures |"
  echo "|---|---|---|---|---|---|---|---|---|"
} >"$REPORT"

ratio_round() {  # ratio_round ROUND WHICH...: $method on A and B in this order, then the round's ratio B/A
  local round="$1" which a b ratio
  shift
  for which in "$@"; do
    sleep 2
    run_wrk "$which" "$method" "$DURATION" "$OUT/$method-$round-$which.txt"
  done
  a="$OUT/$method-$round-A.txt"; b="$OUT/$method-$round-B.txt"
  ratio=$(calc "$(answered_rps "$b") / $(answered_rps "$a")")
  ratios+=("$ratio")
  printf '| %s | %d | %.0f | %.0f | %.2f | %.1f | %.1f | %d | %d |\n' "$method" "$round" "$(answered_rps "$a")" \
    "$(answered_rps "$b")" "$ratio" "$(calc "$(field "$a" p99_us) / 1000")" "$(calc "$(field "$b" p99_us) / 1000")" \
    "$(failures "$a")" "$(failures "$b")" >>"$REPORT"
  log "  $method round $round: A $(answered_rps "$a")/s, B $(answered_rps "$b")/s, B/A $ratio"
}

SUMMARY=""
for method in PUT GET; do
  ratios=()
  paired_rounds "$ROUNDS" ratio_round A B
  sorted=$(printf '%s\n' "${ratios[@]}" | sort -g)
  median=$(echo "$sorted" | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
  SUMMARY="$SUMMARY$(printf '%s B/A median %.2f (min %.2f, max %.2f over %d rounds)' "$method" "$median" \
    "$(echo "$sorted" | head -1)" "$(echo "$sorted" | tail -1)" "$ROUNDS")"$'\n'
done
{ echo; printf '%s' "$SUMMARY"; } >>"$REPORT"
cat "$REPORT"
