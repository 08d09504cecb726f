#!/usr/bin/env bash
# Finds the breaking point of each load tape on a target (one dht node, a 3-node local cluster, the bare baseline
# server, or URLs of nodes already running), runs the tape at 70 % of it, compares with the baseline measured in
# the same run, and writes a Markdown summary next to Gatling's HTML reports. See gatling/README.md.
#
# usage: gatling/find-breaking-point.sh [options] node|cluster|baseline|URL[,URL...] [TAPE...]
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
GATLING_POM="$ROOT/gatling/pom.xml"
# shellcheck source=gatling/bench-common.sh
. "$ROOT/gatling/bench-common.sh"    # log, kv, gatling, start_nodes, cleanup, ... and ALL_TAPES

# ---- arguments -------------------------------------------------------------------------------------------------
START_RATE=1000        # req/s of the first step
FACTOR=2               # each coarse step multiplies the rate by this until a step fails
REFINE=3               # then this many bisection steps between the last passing and the first failing rate
MAX_RATE=64000         # no step above this
STEP_SECONDS=20        # measured seconds per step
WARMUP_SECONDS=5       # unmeasured ramp before each run
PREWARM_SECONDS=60     # unmeasured runs of this length on every fresh target first, for the JITs (and the GET tapes' preload) ...
PREWARM_RATE=""        # ... at this rate (default: the start rate) ...
JIT_QUIET_PERCENT=5    # ... repeated until the target's JIT compiled for at most this share of a run's wall time ...
PREWARM_MAX_SECONDS=360  # ... or until this much prewarm time has passed
COOLDOWN_SECONDS=5     # pause between runs
P99_BOUND_MS=100       # a step fails when its p99 is above this (the knee: queueing, not a stall) ...
MAX_ERROR_PERCENT=0    # ... or when more than this share of its requests failed
FINAL_PERCENT=70       # the measured run at this share of the breaking rate ...
FINAL_SECONDS=60       # ... lasting this long ...
FINAL_RUNS=3           # ... repeated this often; the row reports the run with the median p99
BASELINE=true          # also search the baseline in the same run, for the ratio
OVERLOAD=false         # after the 70 % run: OVERLOAD_FACTOR x the breaking rate for OVERLOAD_SECONDS
OVERLOAD_AT=""         # skip the search: only the overload run, at this rate
OVERLOAD_FACTOR=2
OVERLOAD_SECONDS=60
KEYS=100000            # keys the GET tapes preload
VALUE_SIZE=1024
REPLICAS=""
NODE_HEAP=512m
NODE_ARGS=()           # extra arguments of every started node, e.g. --dht.storage.sync=true
OUT=""

usage() {
  cat <<EOF
usage: gatling/find-breaking-point.sh [options] TARGET [TAPE...]

TARGET   node      one dht node started here (target/dht.jar, built if missing), fresh data per tape
         cluster   three dht nodes started here, with a generated cluster secret, fresh data per tape
         baseline  the bare Reactor Netty BaselineServer only
         URL,...   nodes already running (not started, stopped or wiped; no OutOfMemoryError check)
TAPE     ${ALL_TAPES[*]} (default: all)

  --start-rate N         first step's rate, req/s (default $START_RATE)
  --factor F             coarse steps multiply the rate by F (default $FACTOR)
  --refine N             bisection steps after the first failing step (default $REFINE)
  --max-rate N           highest step rate (default $MAX_RATE)
  --step-duration S      measured seconds per step (default $STEP_SECONDS)
  --warmup S             unmeasured ramp before every run (default $WARMUP_SECONDS)
  --prewarm S            unmeasured run on every fresh target before its first step (default $PREWARM_SECONDS),
                         repeated while the target's JIT is busy (see --jit-quiet)
  --prewarm-rate N       its rate, req/s (default: the start rate)
  --jit-quiet P          prewarm again while a target process compiled (JIT, jstat) for more than P % of the
                         run's wall time (default $JIT_QUIET_PERCENT; 100 = one prewarm run only)
  --prewarm-max S        no further prewarm run after S s of prewarm (default $PREWARM_MAX_SECONDS)
  --cooldown S           pause between runs (default $COOLDOWN_SECONDS)
  --p99-bound MS         a step fails above this p99 (default $P99_BOUND_MS)
  --max-error-percent P  ... or above this error share (default $MAX_ERROR_PERCENT)
  --final-percent P      rate of the measured run, % of the breaking rate (default $FINAL_PERCENT)
  --final-duration S     its length (default $FINAL_SECONDS)
  --final-runs N         measured runs, one after another; the row is the run with the median p99 (default $FINAL_RUNS)
  --no-baseline          do not measure the baseline (no ratio)
  --overload             after the measured run: ${OVERLOAD_FACTOR}x the breaking rate for ${OVERLOAD_SECONDS} s, then the checks
  --overload-at RATE     skip the search; only the overload run at RATE req/s
  --overload-duration S  length of the overload run (default $OVERLOAD_SECONDS)
  --keys N               keys the GET tapes preload (default $KEYS)
  --value-size BYTES     value size (default $VALUE_SIZE)
  --replicas ACK/FROM    replicas parameter of every request (default: the server's)
  --node-heap SIZE       -Xms and -Xmx of each started node (default $NODE_HEAP)
  --node-arg ARG         an extra argument of every started node, e.g. --node-arg --dht.storage.sync=true (repeatable)
  --pin                  Gatling (and the recovery probe) on CPU 0, every started server on the other CPUs (taskset)
  --out DIR              results directory (default gatling/target/breaking-point/TIMESTAMP)
EOF
}

TARGET=""
TAPES=()
while [ $# -gt 0 ]; do
  case "$1" in
    --start-rate) START_RATE="$2"; shift ;;
    --factor) FACTOR="$2"; shift ;;
    --refine) REFINE="$2"; shift ;;
    --max-rate) MAX_RATE="$2"; shift ;;
    --step-duration) STEP_SECONDS="$2"; shift ;;
    --warmup) WARMUP_SECONDS="$2"; shift ;;
    --prewarm) PREWARM_SECONDS="$2"; shift ;;
    --prewarm-rate) PREWARM_RATE="$2"; shift ;;
    --jit-quiet) JIT_QUIET_PERCENT="$2"; shift ;;
    --prewarm-max) PREWARM_MAX_SECONDS="$2"; shift ;;
    --cooldown) COOLDOWN_SECONDS="$2"; shift ;;
    --p99-bound) P99_BOUND_MS="$2"; shift ;;
    --max-error-percent) MAX_ERROR_PERCENT="$2"; shift ;;
    --final-percent) FINAL_PERCENT="$2"; shift ;;
    --final-duration) FINAL_SECONDS="$2"; shift ;;
    --final-runs) FINAL_RUNS="$2"; shift ;;
    --no-baseline) BASELINE=false ;;
    --overload) OVERLOAD=true ;;
    --overload-at) OVERLOAD_AT="$2"; OVERLOAD=true; shift ;;
    --overload-duration) OVERLOAD_SECONDS="$2"; shift ;;
    --keys) KEYS="$2"; shift ;;
    --value-size) VALUE_SIZE="$2"; shift ;;
    --replicas) REPLICAS="$2"; shift ;;
    --node-heap) NODE_HEAP="$2"; shift ;;
    --node-arg) NODE_ARGS+=("$2"); shift ;;
    --pin) LOAD_PIN=(taskset -c 0); SERVER_CPUS="1-$(( $(nproc) - 1 ))" ;;
    --out) OUT="$2"; shift ;;
    -h|--help) usage; exit 0 ;;
    -*) echo "unknown option $1" >&2; usage >&2; exit 2 ;;
    *) if [ -z "$TARGET" ]; then TARGET="$1"; else TAPES+=("$1"); fi ;;
  esac
  shift
done
[ -n "$TARGET" ] || { usage >&2; exit 2; }
[[ "$FINAL_RUNS" =~ ^[1-9][0-9]*$ ]] || { echo "--final-runs must be a positive integer, was $FINAL_RUNS" >&2; exit 2; }
[ ${#TAPES[@]} -gt 0 ] || TAPES=("${ALL_TAPES[@]}")
check_tapes "${TAPES[@]}"
case "$TARGET" in
  node|cluster|baseline) ;;
  http://*) ;;
  *) echo "unknown target '$TARGET': node, cluster, baseline or http:// URLs" >&2; exit 2 ;;
esac
[ "$TARGET" = baseline ] && BASELINE=false
OUT="${OUT:-$ROOT/gatling/target/breaking-point/$(date +%Y%m%d-%H%M%S)}"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"

# ---- helpers (the shared ones are in bench-common.sh) ----------------------------------------------------------
install_traps

# start_target KIND NAME: starts fresh processes; sets URLS (comma-separated), PIDS and LOGS (arrays)
start_target() {
  local kind="$1" name="$2" dir="$OUT/$2" port
  mkdir -p "$dir"
  case "$kind" in
    baseline)
      PIDS=(); LOGS=()
      port=$(free_port)
      setsid java -Xmx1g -cp "$CLASSPATH" dev.dht.gatling.BaselineServer --port="$port" >"$dir/baseline.log" 2>&1 &
      PIDS+=($!); LOGS+=("$dir/baseline.log"); URLS="http://127.0.0.1:$port"
      STARTED_PIDS+=("${PIDS[@]}")
      wait_ready "$URLS" ;;
    node) start_nodes "$dir" 1 ;;
    cluster) start_nodes "$dir" 3 ;;
  esac
  pin_servers "${PIDS[@]}"
}

# step TARGETNAME TAPE URLS RATE: one measured step; 0 = passed, 1 = failed; appends to the steps table
step() {
  local name="$1" tape="$2" urls="$3" rate="$4" dir="$OUT/$1-$2" verdict=passed
  local summary="$dir/step-$rate.txt"
  sleep "$COOLDOWN_SECONDS"
  if ! gatling "$tape" "$urls" "$rate" "$STEP_SECONDS" "$summary" "$dir/step-$rate.log" no; then
    echo "| $name | $tape | $rate | - | - | - | - | - | run failed |" >>"$OUT/steps.md"; return 1
  fi
  local p99 errors; p99=$(kv "$summary" p99_ms); errors=$(kv "$summary" error_percent)
  if [ "$(calc "($p99 > $P99_BOUND_MS || $errors > $MAX_ERROR_PERCENT) ? 1 : 0")" = 1 ]; then verdict=failed; fi
  echo "| $name | $tape | $rate | $(kv "$summary" rps) | $(kv "$summary" p50_ms) | $p99 | $(kv "$summary" p999_ms) | $errors | $verdict |" \
    >>"$OUT/steps.md"
  log "  $name $tape at $rate req/s: p50 $(kv "$summary" p50_ms) ms, p99 $p99 ms, errors $errors % -> $verdict"
  [ "$verdict" = passed ]
}

# search TARGETNAME TAPE URLS: sets BREAKING (lowest failing rate), PASSING (highest passing rate, 0 if none)
search() {
  local name="$1" tape="$2" urls="$3" rate="$START_RATE" mid
  PASSING=0; BREAKING=""
  while :; do
    if step "$name" "$tape" "$urls" "$rate"; then
      PASSING=$rate
      [ "$rate" -ge "$MAX_RATE" ] && break
      rate=$(int "$rate * $FACTOR"); [ "$rate" -gt "$MAX_RATE" ] && rate=$MAX_RATE
    else
      BREAKING=$rate; break
    fi
  done
  [ -n "$BREAKING" ] || return 0
  for _ in $(seq 1 "$REFINE"); do
    mid=$(int "($PASSING + $BREAKING) / 2")
    [ "$mid" -le "$PASSING" ] || [ "$mid" -ge "$BREAKING" ] && break
    if step "$name" "$tape" "$urls" "$mid"; then PASSING=$mid; else BREAKING=$mid; fi
  done
}

# measured TARGETNAME TAPE URLS RATE RUN: measured run RUN (1..FINAL_RUNS) with Gatling's HTML report, its summary in
# measured-RUN.txt; the report directory is moved to $OUT
measured() {
  local name="$1" tape="$2" urls="$3" rate="$4" run="$5" dir="$OUT/$1-$2" report
  sleep "$COOLDOWN_SECONDS"
  log "  $name $tape: measured run $run of $FINAL_RUNS at $rate req/s for $FINAL_SECONDS s"
  gatling "$tape" "$urls" "$rate" "$FINAL_SECONDS" "$dir/measured-$run.txt" "$dir/measured-$run.log" yes || return 1
  log "    p50 $(kv "$dir/measured-$run.txt" p50_ms) ms, p99 $(kv "$dir/measured-$run.txt" p99_ms) ms, errors $(kv "$dir/measured-$run.txt" error_percent) %"
  report=$(sed -n 's|.*please open the following file: file://\(.*\)/index.html.*|\1|p' "$dir/measured-$run.log" | tail -1)
  if [ -n "$report" ] && [ -d "$report" ]; then
    mv "$report" "$dir/report-$run"
    echo "- [$name, $tape, $rate req/s, run $run]($name-$tape/report-$run/index.html)" >>"$OUT/reports.md"
  fi
}

# median_run DIR: the number of the completed measured run whose p99 is the median (the lower middle one for an
# even count); empty if none completed
median_run() {
  local run p99 lines=()
  for run in $(seq 1 "$FINAL_RUNS"); do
    [ -s "$1/measured-$run.txt" ] || continue
    p99=$(kv "$1/measured-$run.txt" p99_ms)
    [ -z "$p99" ] || lines+=("$p99 $run")
  done
  [ ${#lines[@]} -gt 0 ] || return 0
  printf '%s\n' "${lines[@]}" | sort -n | sed -n "$(( (${#lines[@]} + 1) / 2 ))p" | cut -d' ' -f2
}

# overload TARGETNAME TAPE URLS RATE: the overload run and its checks; appends to the overload table
overload() {
  local name="$1" tape="$2" urls="$3" rate="$4" dir="$OUT/$1-$2" oom=n/a alive=n/a pid logfile
  local s="$dir/overload.txt" recovery="$dir/recovery.txt" load_start="$dir/load-start.txt" probe_pid run_ok=true
  sleep "$COOLDOWN_SECONDS"
  log "  $name $tape: overload run at $rate req/s for $OVERLOAD_SECONDS s"
  # The recovery probe runs in a JVM of its own: Gatling may use up its own file descriptors under this load.
  rm -f "$recovery" "$load_start"
  setsid "${LOAD_PIN[@]}" java -Xmx256m -cp "$ROOT/gatling/target/test-classes:$CLASSPATH" -DbaseUrls="$urls" -Dwarmup="$WARMUP_SECONDS" \
    -Dduration="$OVERLOAD_SECONDS" -DvalueSize="$VALUE_SIZE" dev.dht.gatling.RecoveryProbe "$recovery" "$load_start" \
    >"$dir/recovery.log" 2>&1 &
  probe_pid=$!; STARTED_PIDS+=("$probe_pid")
  gatling "$tape" "$urls" "$rate" "$OVERLOAD_SECONDS" "$s" "$dir/overload.log" no -DloadStartFile="$load_start" || run_ok=false
  reap "$probe_pid" 60
  if [ "$run_ok" = false ]; then
    echo "| $name | $tape | $rate | - | - | - | - | - | - | run failed |" >>"$OUT/overload.md"; return 0
  fi
  if [ "$TARGET" = node ] || [ "$TARGET" = cluster ]; then
    oom=none; alive=yes
    for logfile in "${LOGS[@]}"; do grep -q OutOfMemoryError "$logfile" && oom="found in $(basename "$logfile")"; done
    for pid in "${PIDS[@]}"; do kill -0 "$pid" 2>/dev/null || alive=no; done
  fi
  local requests n503 share503 latency503 recovered
  requests=$(kv "$s" requests); n503=$(kv "$s" status.503.count); n503=${n503:-0}
  share503=$(calc "$requests > 0 ? 100 * $n503 / $requests : 0")
  latency503="-"; [ "$n503" -gt 0 ] && latency503="$(kv "$s" status.503.p50_ms) / $(kv "$s" status.503.p99_ms) / $(kv "$s" status.503.max_ms)"
  if [ -s "$recovery" ] && [ "$(kv "$recovery" recovered)" = true ]; then
    recovered="yes, after $(kv "$recovery" recovered_after_ms) ms"
  else
    recovered="no (see $1-$2/recovery.txt)"
  fi
  printf '| %s | %s | %s | %s | %.2f %% | %s | %s | %s | %s | %s |\n' "$name" "$tape" "$rate" "$(kv "$s" rps)" \
    "$share503" "$latency503" "$(errors_by_status "$s")" "$oom" "$alive" "$recovered" >>"$OUT/overload.md"
  log "  overload: 503 share $(printf %.2f "$share503") %, errors by status: $(errors_by_status "$s"), OutOfMemoryError: $oom, alive: $alive, served normally: $recovered"
}

# jit_ms PID...: milliseconds the JIT compilers of these JVMs have spent so far, summed (jstat); empty if unknown
jit_ms() {
  local pid ms total=0
  [ $# -gt 0 ] && command -v jstat >/dev/null || return 0
  for pid in "$@"; do
    ms=$(jstat -compiler "$pid" 2>/dev/null | awk 'NR == 2 && $4 ~ /^[0-9.]+$/ { printf "%d", $4 * 1000 }')
    [ -n "$ms" ] || return 0
    total=$((total + ms))
  done
  echo "$total"
}

# prewarm TARGETNAME TAPE DIR: unmeasured runs of the tape until the JITs of the started target are quiet. A cold
# JVM compiles for minutes under load on 2 cores (three nodes on 2 cores: 40-50 % of their CPU 60-90 s after
# start), and steps measured then measure the compiler. Sets PREWARM_NOTE.
prewarm() {
  local name="$1" tape="$2" dir="$3" run=0 began=$SECONDS t0 before after wall share=""
  while :; do
    run=$((run + 1)); t0=$SECONDS; before=$(jit_ms "${PIDS[@]}")
    log "$name $tape: $URLS; unmeasured warm-up run $run, $PREWARM_SECONDS s at ${PREWARM_RATE:-$START_RATE} req/s (and the preload of GET tapes)"
    gatling "$tape" "$URLS" "${PREWARM_RATE:-$START_RATE}" "$PREWARM_SECONDS" "$dir/warmup-$run.txt" "$dir/warmup-$run.log" no || true
    after=$(jit_ms "${PIDS[@]}"); wall=$((SECONDS - t0))
    if [ -z "$before" ] || [ -z "$after" ] || [ "$wall" -le 0 ]; then
      PREWARM_NOTE="$run run(s), JIT time unknown"; break
    fi
    share=$(( (after - before) / (10 * wall * ${#PIDS[@]}) ))
    log "  warm-up run $run: the JIT compiled for $share % of the run's $wall s (mean over ${#PIDS[@]} JVMs)"
    PREWARM_NOTE="$run run(s) in $((SECONDS - began)) s, JIT at $share % in the last"
    [ "$share" -gt "$JIT_QUIET_PERCENT" ] || break
    if [ $((SECONDS - began)) -ge "$PREWARM_MAX_SECONDS" ]; then PREWARM_NOTE="$PREWARM_NOTE (still busy at --prewarm-max)"; break; fi
  done
}

# one TARGETNAME KIND TAPE: everything for one tape on one target; sets RESULT_BREAKING for the ratio
one() {
  local name="$1" kind="$2" tape="$3" dir="$OUT/$1-$3" breaking_text measured_rate base
  mkdir -p "$dir"
  RESULT_BREAKING=""; ROW=""
  if [ "$kind" = urls ]; then URLS="$TARGET"; PIDS=(); LOGS=(); else start_target "$kind" "$name-$tape"; fi
  prewarm "$name" "$tape" "$dir"
  echo "- $name, $tape: $PREWARM_NOTE" >>"$OUT/prewarm.md"
  if [ -n "$OVERLOAD_AT" ]; then
    [ "$name" = baseline ] || overload "$name" "$tape" "$URLS" "$OVERLOAD_AT"
  else
    search "$name" "$tape" "$URLS"
    if [ -n "$BREAKING" ]; then breaking_text=$BREAKING; RESULT_BREAKING=$BREAKING; base=$BREAKING
    else breaking_text="> $MAX_RATE"; base=$MAX_RATE; fi
    measured_rate=$(int "$base * $FINAL_PERCENT / 100")
    local m p50=- p99=- p999=- errors=- rps=- run median each=""
    for run in $(seq 1 "$FINAL_RUNS"); do
      if measured "$name" "$tape" "$URLS" "$measured_rate" "$run"; then
        each="${each:+$each, }$(kv "$dir/measured-$run.txt" p99_ms)"
      else
        each="${each:+$each, }-"
      fi
    done
    median=$(median_run "$dir")
    if [ -n "$median" ]; then
      m="$dir/measured-$median.txt"
      p50=$(kv "$m" p50_ms); p99=$(kv "$m" p99_ms); p999=$(kv "$m" p999_ms); errors=$(kv "$m" error_percent); rps=$(kv "$m" rps)
    fi
    ROW="| $name | $tape | $breaking_text | $PASSING | $measured_rate | $rps | $p50 | $p99 | $p999 | $errors | $each |"
    if [ "$OVERLOAD" = true ] && [ "$name" != baseline ]; then
      overload "$name" "$tape" "$URLS" "$(int "$base * $OVERLOAD_FACTOR")"
    fi
  fi
  if [ "$kind" != urls ]; then
    stop_target
    rm -rf "$dir"/data-*    # the logs stay
  fi
}

# ---- main ------------------------------------------------------------------------------------------------------
case "$TARGET" in node|cluster) build_dht_jar_if_missing ;; esac
compile_gatling

NAME="$TARGET"; KIND="$TARGET"
case "$TARGET" in http://*) NAME=nodes; KIND=urls ;; esac
: >"$OUT/steps.md"; : >"$OUT/overload.md"; : >"$OUT/reports.md"; : >"$OUT/rows.md"; : >"$OUT/prewarm.md"
log "results in $OUT"
for tape in "${TAPES[@]}"; do
  one "$NAME" "$KIND" "$tape"
  target_row="$ROW"; target_breaking="$RESULT_BREAKING"; ratio="n/a"; baseline_row=""
  if [ "$BASELINE" = true ] && [ -z "$OVERLOAD_AT" ]; then
    one baseline baseline "$tape"
    baseline_row="$ROW"
    if [ -n "$target_breaking" ] && [ -n "$RESULT_BREAKING" ]; then
      ratio="$(awk "BEGIN { printf \"%.0f %%\", 100 * $target_breaking / $RESULT_BREAKING }")"
    fi
  fi
  [ -z "$target_row" ] || echo "$target_row $ratio |" >>"$OUT/rows.md"
  [ -z "$baseline_row" ] || echo "$baseline_row (is the baseline) |" >>"$OUT/rows.md"
done

{
  echo "# Breaking points: $NAME, $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo
  echo "Not comparable across machines. Machine: $(nproc) cores, $(uname -sr), $(java -version 2>&1 | head -1)."
  echo "Load generator (Gatling) on the same machine as the target."
  echo
  echo "A step of $STEP_SECONDS s (after a ${WARMUP_SECONDS}-s unmeasured ramp) passes when its p99 is at most $P99_BOUND_MS ms and at most"
  echo "$MAX_ERROR_PERCENT % of its requests failed. Steps start at $START_RATE req/s and grow x$FACTOR up to $MAX_RATE req/s; after the first"
  echo "failing step, $REFINE bisection steps. The measured runs ($FINAL_RUNS, one after another) last $FINAL_SECONDS s each at $FINAL_PERCENT % of the breaking"
  echo "rate (the lowest failing rate); the row shows the run with the median p99, and the p99 of each run in order."
  echo "Value size $VALUE_SIZE bytes, replicas ${REPLICAS:-server default}, $KEYS preloaded keys for GET tapes."
  echo "Times are Gatling's response times in whole ms, exact nearest-rank percentiles over the measured requests."
  if [ -z "$OVERLOAD_AT" ]; then
    echo
    echo "| target | tape | breaking rate (req/s) | last passing rate | measured rate | achieved req/s | p50 ms | p99 ms | p99.9 ms | errors % | p99 ms of each run | vs baseline |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
    cat "$OUT/rows.md"
  fi
  if [ -s "$OUT/overload.md" ]; then
    echo
    echo "## Overload"
    echo
    echo "$OVERLOAD_SECONDS s at the given rate; 503 latency p50 / p99 / max in ms; served normally = every node answered status, PUT"
    echo "and GET correctly in 3 probe rounds in a row, the first starting within 10 s after the load stopped."
    echo
    echo "| target | tape | rate (req/s) | achieved req/s | 503 share | 503 latency ms | errors by status | OutOfMemoryError | nodes alive | served normally |"
    echo "|---|---|---|---|---|---|---|---|---|---|"
    cat "$OUT/overload.md"
  fi
  if [ -s "$OUT/prewarm.md" ]; then
    echo
    echo "## Prewarm"
    echo
    echo "Unmeasured runs of $PREWARM_SECONDS s at ${PREWARM_RATE:-$START_RATE} req/s on each fresh target, repeated until its JIT compiled for at"
    echo "most $JIT_QUIET_PERCENT % of a run's wall time (jstat, mean over its JVMs) or $PREWARM_MAX_SECONDS s had passed."
    echo
    cat "$OUT/prewarm.md"
  fi
  if [ -s "$OUT/steps.md" ]; then
    echo
    echo "## Steps"
    echo
    echo "| target | tape | rate (req/s) | achieved req/s | p50 ms | p99 ms | p99.9 ms | errors % | verdict |"
    echo "|---|---|---|---|---|---|---|---|---|"
    cat "$OUT/steps.md"
  fi
  if [ -s "$OUT/reports.md" ]; then
    echo
    echo "## Gatling reports of the measured runs (they include the warm-up ramp)"
    echo
    cat "$OUT/reports.md"
  fi
} >"$OUT/summary.md"
log "summary: $OUT/summary.md"
cat "$OUT/summary.md"
