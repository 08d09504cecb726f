#!/usr/bin/env bash
# Paired comparison of 2 or 3 variants of the node (jars, JVM options, node arguments): starts them side by side,
# warms them alike, then loads them in turn with the same tape and rate for several rounds, the variants' order
# alternating, and reports per run the nodes' CPU time per request and Gatling's latencies, to be compared within
# a round. Made for changes of 10-30 %, which single runs on a noisy shared machine cannot show. See gatling/README.md.
#
# usage: gatling/compare.sh [options] --variant NAME=JAR --variant NAME=JAR [--variant NAME=JAR] [TAPE...]
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
GATLING_POM="$ROOT/gatling/pom.xml"
# shellcheck source=gatling/bench-common.sh
. "$ROOT/gatling/bench-common.sh"    # log, kv, gatling, start_nodes, cleanup, ... and ALL_TAPES

# ---- arguments -------------------------------------------------------------------------------------------------
NODE_COUNT=3           # nodes per variant (--node: 1)
RATE=1000              # req/s of every measured run
DURATION=30            # measured seconds per run
ROUNDS=3
PREWARM_RATE=800       # the warm-up: one unmeasured run of each tape on every variant before round 1, at this rate ...
PREWARM_SECONDS=60     # ... for this long (the GET tapes' preload comes first, in that run)
PREWARM_ATTEMPTS=3     # a warm-up run that did not complete (a cold cluster may refuse the preload) is repeated
WARMUP_SECONDS=5       # unmeasured ramp before every run (Gatling's -Dwarmup)
COOLDOWN_SECONDS=5     # pause before every run
KEYS=20000             # keys the GET tapes preload
VALUE_SIZE=1024
REPLICAS=""            # default: 2/3 for clusters, the server's for --node
REPLICAS_GIVEN=false
NODE_HEAP=512m
OUT=""
DEFAULT_TAPES=(put-new get-uniform)

usage() {
  cat <<EOF
usage: gatling/compare.sh [options] --variant NAME=JAR --variant NAME=JAR [--variant NAME=JAR] [TAPE...]

Starts 2 or 3 variants side by side (each a 3-node cluster, or one node with --node; fresh data, free ports, a
cluster secret of its own), warms them alike, then loads them in turn with the same tape and rate, round after
round, the variants' order alternating (A B C, then C B A, ...). Reports per run the nodes' CPU time per request
and Gatling's latencies; compare within a round. See gatling/README.md.

  --variant NAME=JAR     a variant: NAME a short word (letters, digits, - and _), JAR its node jar; the same jar
                         for all variants is fine; target/dht.jar is built if it is a variant's jar and missing
  --jvm-opt NAME=OPT     a JVM option of variant NAME's nodes, after -Xms/-Xmx (repeatable), e.g. after=-XX:+UseSerialGC
  --node-arg NAME=ARG    an argument of variant NAME's nodes (repeatable), e.g. after=--dht.replica-writes-in-flight=1
TAPE     ${ALL_TAPES[*]} (default: ${DEFAULT_TAPES[*]})

  --node                 each variant is one node instead of a 3-node cluster
  --rate N               rate of every measured run, req/s (default $RATE)
  --duration S           measured seconds per run, at least 5 (default $DURATION)
  --rounds N             rounds; each runs every tape on every variant once (default $ROUNDS)
  --warmup-rate N        rate of the warm-up runs, req/s (default $PREWARM_RATE)
  --warmup-duration S    length of the warm-up run of each tape on each variant, before round 1; 0: none
                         (default $PREWARM_SECONDS)
  --ramp S               unmeasured ramp before every run (default $WARMUP_SECONDS)
  --cooldown S           pause before every run (default $COOLDOWN_SECONDS)
  --keys N               keys the GET tapes preload (default $KEYS)
  --value-size BYTES     value size (default $VALUE_SIZE)
  --replicas ACK/FROM    replicas parameter of every request (default: 2/3 for clusters, the server's for --node)
  --node-heap SIZE       -Xms and -Xmx of each node (default $NODE_HEAP)
  --out DIR              results directory (default gatling/target/compare/TIMESTAMP)
  -h, --help             this text
EOF
}

fail_usage() { echo "$*" >&2; usage >&2; exit 2; }    # fail_usage MESSAGE: the message and the usage, exit 2

VARIANT_SPECS=()   # NAME=JAR as given
OPTION_SPECS=()    # "jvm NAME=OPT" or "arg NAME=ARG" as given; assigned to the variants after parsing
TAPES=()
while [ $# -gt 0 ]; do
  case "$1" in
    --variant|--jvm-opt|--node-arg|--rate|--duration|--rounds|--warmup-rate|--warmup-duration|--ramp|--cooldown| \
      --keys|--value-size|--replicas|--node-heap|--out)
      [ $# -ge 2 ] || fail_usage "$1 needs a value" ;;
  esac
  case "$1" in
    --variant) VARIANT_SPECS+=("$2"); shift ;;
    --jvm-opt) OPTION_SPECS+=("jvm $2"); shift ;;
    --node-arg) OPTION_SPECS+=("arg $2"); shift ;;
    --node) NODE_COUNT=1 ;;
    --rate) RATE="$2"; shift ;;
    --duration) DURATION="$2"; shift ;;
    --rounds) ROUNDS="$2"; shift ;;
    --warmup-rate) PREWARM_RATE="$2"; shift ;;
    --warmup-duration) PREWARM_SECONDS="$2"; shift ;;
    --ramp) WARMUP_SECONDS="$2"; shift ;;
    --cooldown) COOLDOWN_SECONDS="$2"; shift ;;
    --keys) KEYS="$2"; shift ;;
    --value-size) VALUE_SIZE="$2"; shift ;;
    --replicas) REPLICAS="$2"; REPLICAS_GIVEN=true; shift ;;
    --node-heap) NODE_HEAP="$2"; shift ;;
    --out) OUT="$2"; shift ;;
    -h|--help) usage; exit 0 ;;
    -*) fail_usage "unknown option $1" ;;
    *) TAPES+=("$1") ;;
  esac
  shift
done
[ ${#TAPES[@]} -gt 0 ] || TAPES=("${DEFAULT_TAPES[@]}")
check_tapes "${TAPES[@]}"
whole() {  # whole OPTION VALUE MIN: exits 2 unless VALUE is a whole number of at least MIN
  [[ $2 =~ ^(0|[1-9][0-9]*)$ ]] && [ "$2" -ge "$3" ] || fail_usage "$1 wants a whole number of at least $3, not '$2'"
}
whole --rate "$RATE" 1; whole --rounds "$ROUNDS" 1; whole --warmup-rate "$PREWARM_RATE" 1; whole --keys "$KEYS" 1
whole --value-size "$VALUE_SIZE" 1; whole --warmup-duration "$PREWARM_SECONDS" 0; whole --ramp "$WARMUP_SECONDS" 0
whole --cooldown "$COOLDOWN_SECONDS" 0
whole --duration "$DURATION" 5    # the CPU is sampled from 2 s after the ramp to 2 s before the end
[ -n "$NODE_HEAP" ] || fail_usage "--node-heap needs a size"
[ "$REPLICAS_GIVEN" = true ] || { [ "$NODE_COUNT" -eq 1 ] || REPLICAS=2/3; }
[ -z "$REPLICAS" ] || [[ $REPLICAS =~ ^[0-9]+/[0-9]+$ ]] || fail_usage "--replicas wants ACK/FROM, e.g. 2/3: $REPLICAS"

# The variants, by index in the order given: NAMES, JARS (absolute), JVM_OPTS and ARGS (each newline-separated).
NAMES=(); JARS=(); JVM_OPTS=(); ARGS=()
DEFAULT_JAR="$(realpath -m "$ROOT/target/dht.jar")"
NEED_DEFAULT_JAR=false
[ ${#VARIANT_SPECS[@]} -ge 2 ] && [ ${#VARIANT_SPECS[@]} -le 3 ] ||
  fail_usage "give 2 or 3 variants (--variant NAME=JAR), not ${#VARIANT_SPECS[@]}"
for spec in "${VARIANT_SPECS[@]}"; do
  name="${spec%%=*}"; jar="${spec#*=}"
  [ "$spec" != "$name" ] && [ -n "$jar" ] || fail_usage "--variant wants NAME=JAR: $spec"
  [[ $name =~ ^[A-Za-z][A-Za-z0-9_-]{0,19}$ ]] || fail_usage "a variant's name is a short word (letters, digits, - and _, at most 20): $name"
  case " ${NAMES[*]} " in *" $name "*) fail_usage "two variants named $name" ;; esac
  jar="$(realpath -m -- "$jar")"
  if [ "$jar" = "$DEFAULT_JAR" ]; then
    [ -f "$jar" ] || NEED_DEFAULT_JAR=true
  else
    [ -f "$jar" ] || fail_usage "variant $name: no such jar: $jar"
  fi
  NAMES+=("$name"); JARS+=("$jar"); JVM_OPTS+=(""); ARGS+=("")
done
for spec in "${OPTION_SPECS[@]}"; do
  kind="${spec%% *}"; spec="${spec#* }"; name="${spec%%=*}"; value="${spec#*=}"
  option=--jvm-opt; [ "$kind" = jvm ] || option=--node-arg
  [ "$spec" != "$name" ] && [ -n "$value" ] || fail_usage "$option wants NAME=VALUE: $spec"
  for i in "${!NAMES[@]}"; do
    if [ "${NAMES[$i]}" = "$name" ]; then
      if [ "$kind" = jvm ]; then JVM_OPTS[i]+="${JVM_OPTS[i]:+$'\n'}$value"; else ARGS[i]+="${ARGS[i]:+$'\n'}$value"; fi
      continue 2
    fi
  done
  fail_usage "$option $spec: no variant named $name"
done

OUT="${OUT:-$ROOT/gatling/target/compare/$(date +%Y%m%d-%H%M%S)}"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"

# ---- helpers ---------------------------------------------------------------------------------------------------
install_traps
CLEANUP_DIRS=("$OUT/node-data")    # the nodes' data, removed on every exit once the nodes have ended
CLK_TCK=$(getconf CLK_TCK 2>/dev/null || echo 100)   # clock ticks per second of /proc/PID/stat's times

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

# java_pid PID PORT: the java process of a node started as `setsid java ... &` with $! = PID. That is PID itself
# when setsid did not fork, which it does not when the shell is no process group leader (a script without job
# control is not); otherwise the newest java process with --server.port=PORT. Returns 1 if there is none.
java_pid() {
  local pid="$1" port="$2" comm=""
  { read -r comm <"/proc/$pid/comm"; } 2>/dev/null || true
  if [ "$comm" = java ]; then echo "$pid"; return 0; fi
  pgrep -n -f -- "-jar .* --server\.port=$port( |\$)"
}

# start_variant I: starts variant I's nodes (start_nodes with its jar, JVM options and arguments), logs in $OUT/NAME,
# data in $OUT/node-data/NAME. Sets VURLS[I] (comma-separated) and VJAVA[I] (the nodes' java PIDs, space-separated).
VURLS=(); VJAVA=()
start_variant() {
  local i="$1" name="${NAMES[$1]}" dir="$OUT/${NAMES[$1]}" k pid
  mkdir -p "$dir" "$OUT/node-data/$name"
  NODE_JAR="${JARS[$i]}"
  mapfile -t NODE_JVM_OPTS < <(printf '%s' "${JVM_OPTS[$i]}")
  mapfile -t NODE_ARGS < <(printf '%s' "${ARGS[$i]}")
  log "starting $name: $NODE_COUNT node(s) of $NODE_JAR, -Xms$NODE_HEAP -Xmx$NODE_HEAP ${NODE_JVM_OPTS[*]} ${NODE_ARGS[*]}"
  start_nodes "$dir" "$NODE_COUNT" "$OUT/node-data/$name"
  VURLS[i]="$URLS"; VJAVA[i]=""
  for k in "${!PIDS[@]}"; do
    pid=$(java_pid "${PIDS[$k]}" "${PORTS[$k]}") || { log "$name: no java process for port ${PORTS[$k]}; see $dir"; exit 1; }
    # if setsid forked, java leads a process group of its own, which cleanup must end too
    [ "$pid" = "${PIDS[$k]}" ] || { STARTED_PIDS+=("$pid"); log "  $name: setsid forked; java of port ${PORTS[$k]} is $pid"; }
    VJAVA[i]+="${VJAVA[i]:+ }$pid"
  done
  log "  $name: $URLS (java PIDs ${VJAVA[i]})"
}

# warm_up I TAPE: the unmeasured warm-up run of TAPE on variant I (the GET tapes' preload first), repeated up to
# PREWARM_ATTEMPTS times while it does not complete; notes the outcome in $OUT/warmup.md
warm_up() {
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

# measure I TAPE ROUND: one measured run of TAPE on variant I with the CPU sampler beside it; appends a row
# (tab-separated: tape, round, variant, req/s, p50, p99, p99.9, errors %, 503s, node CPU us/request; - if unknown)
# to $OUT/rows.tsv
measure() {
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

# pairs TAPE: for each round the variant with the lowest p99 and the one with the lowest node CPU per request (with
# every variant's value), then the mean CPU per request of each variant over the rounds; Markdown, from rows.tsv
pairs() {
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

# ---- main ------------------------------------------------------------------------------------------------------
: >"$OUT/rows.tsv"; : >"$OUT/warmup.md"; : >"$OUT/variants.md"
log "results in $OUT"
[ "$NEED_DEFAULT_JAR" = false ] || build_dht_jar_if_missing
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

for i in "${!NAMES[@]}"; do start_variant "$i"; done
if [ "$PREWARM_SECONDS" -gt 0 ]; then
  for tape in "${TAPES[@]}"; do
    for i in "${!NAMES[@]}"; do warm_up "$i" "$tape"; done
  done
fi

compare_round() {  # compare_round ROUND I...: every tape on the variants I..., in this order
  local round="$1" i tape order_names=()
  shift
  for i in "$@"; do order_names+=("${NAMES[$i]}"); done
  log "round $round of $ROUNDS: ${order_names[*]}"
  for tape in "${TAPES[@]}"; do
    for i in "$@"; do measure "$i" "$tape" "$round"; done
  done
}
paired_rounds "$ROUNDS" compare_round "${!NAMES[@]}"

# the end: which nodes are still alive, a graceful stop, then the logs' OutOfMemoryErrors; the data goes
dead=()
for i in "${!NAMES[@]}"; do
  # shellcheck disable=SC2086  # VJAVA[i]: PIDs, space-separated
  for pid in ${VJAVA[$i]}; do kill -0 "$pid" 2>/dev/null || dead+=("${NAMES[$i]} (java PID $pid)"); done
done
log "stopping the nodes"
PIDS=("${STARTED_PIDS[@]}"); stop_target
rm -rf "$OUT/node-data"
oom=()
for logfile in "$OUT"/*/node-*.log; do
  [ -f "$logfile" ] || continue
  if grep -q OutOfMemoryError "$logfile"; then oom+=("${logfile#"$OUT"/}"); fi
done

{
  echo "# Paired comparison: ${NAMES[*]}, $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo
  echo "Machine: $(nproc) cores, $(uname -sr), $(java -version 2>&1 | head -1). Gatling on the same machine as the nodes."
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
    pairs "$tape"
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
