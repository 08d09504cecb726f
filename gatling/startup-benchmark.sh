#!/usr/bin/env bash
# Start-up time, paired: from the start of a JVM (`java -jar target/dht.jar` or `java -jar target/dht.jar
# local-cluster`) until every node answers /v0/status 200, for two variants A and B started in turn (A B, B A, ...)
# on an empty data directory, idle (no load). Per run: the wall time to ready and the CPU seconds every process of
# the run had used by then (user + system, all threads, children of local-cluster included): on a shared machine the
# CPU seconds move less than the wall time. See gatling/README.md, "startup-benchmark.sh".
#
# usage: gatling/startup-benchmark.sh [options] node|local-cluster
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
GATLING_POM="$ROOT/gatling/pom.xml"
# shellcheck source=gatling/bench-common.sh
. "$ROOT/gatling/bench-common.sh"    # log, calc, group_ticks, paired_rounds, free_port, cleanup, ...

ROUNDS=5
A_CMD=""
B_CMD=""
A_ENV=""
B_ENV=""
TIMEOUT=300            # seconds a run may take to be ready
OUT=""

usage() {
  cat <<EOF
usage: gatling/startup-benchmark.sh [options] node|local-cluster

  node           one node: COMMAND --server.port=P --dht.data-dir=DIR (a fresh directory each run)
  local-cluster  COMMAND local-cluster --base-port=P in a fresh working directory (3 nodes, data under ./data)

A variant is a command that starts the jar, the node arguments appended; both default to 'java -jar
\${NODE_JAR:-target/dht.jar}'. Runs alternate A B, then B A, ...

  --rounds N      rounds (default $ROUNDS); each starts A and B once
  --a 'COMMAND'   variant A, e.g. --a 'java -jar /tmp/dht-before.jar'
  --b 'COMMAND'   variant B, e.g. --b 'java -XX:SharedArchiveFile=/tmp/dht.jsa -jar target/dht-extracted/dht.jar'
  --a-env 'K=V'   environment of variant A's processes (space-separated K=V words), e.g. for local-cluster's
                  nodes, which take JVM options only from JDK_JAVA_OPTIONS: --a-env 'JDK_JAVA_OPTIONS=-Xshare:off'
  --b-env 'K=V'   the same for B
  --timeout S     seconds a run may take to be ready (default $TIMEOUT)
  --out DIR       results directory (default gatling/target/startup/<time>-<target>)

Writes report.md (each run, the medians and B/A per round) and the runs' logs to the results directory.
EOF
}

TARGET=""
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) ROUNDS="$2"; shift ;;
    --a) A_CMD="$2"; shift ;;
    --b) B_CMD="$2"; shift ;;
    --a-env) A_ENV="$2"; shift ;;
    --b-env) B_ENV="$2"; shift ;;
    --timeout) TIMEOUT="$2"; shift ;;
    --out) OUT="$2"; shift ;;
    -h|--help) usage; exit 0 ;;
    node|local-cluster) TARGET="$1" ;;
    *) echo "unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
  shift
done
[ -n "$TARGET" ] || { usage >&2; exit 2; }
[ -n "${NODE_JAR:-}" ] || build_dht_jar_if_missing
DEFAULT_CMD="java -jar ${NODE_JAR:-$ROOT/target/dht.jar}"
A_CMD="${A_CMD:-$DEFAULT_CMD}"
B_CMD="${B_CMD:-$DEFAULT_CMD}"

OUT="${OUT:-$ROOT/gatling/target/startup/$(date +%Y%m%d-%H%M%S)-$TARGET}"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
install_traps
TICKS=$(getconf CLK_TCK)

cluster_port() {  # cluster_port: a base port P with P, P + 1, P + 2 free, and each + 1000 (the view log's)
  local port offset taken
  while :; do
    port=$(free_port); taken=false
    for offset in 1 2 1001 1002; do
      if (exec 3<>"/dev/tcp/127.0.0.1/$((port + offset))") 2>/dev/null; then taken=true; fi
    done
    [ "$taken" = true ] || { echo "$port"; return; }
  done
}

# start_run ROUND WHICH: one start of variant WHICH; appends "WHICH ROUND wall_s cpu_s" to $OUT/runs.txt
start_run() {
  local round="$1" which="$2" cmd env port dir urls=() start now ready="" cpu pid url
  if [ "$which" = A ]; then cmd="$A_CMD"; env="$A_ENV"; else cmd="$B_CMD"; env="$B_ENV"; fi
  port=$(free_port); dir="$OUT/run-$round-$which"
  mkdir -p "$dir"; CLEANUP_DIRS+=("$dir/data")
  if [ "$TARGET" = node ]; then
    urls=("http://127.0.0.1:$port")
    set -- --server.port="$port" --dht.data-dir="$dir/data"
  else
    port=$(cluster_port)
    urls=("http://127.0.0.1:$port" "http://127.0.0.1:$((port + 1))" "http://127.0.0.1:$((port + 2))")
    set -- local-cluster --base-port="$port"
  fi
  start=$(date +%s%N)
  # shellcheck disable=SC2086 # the command and the environment are word lists
  (cd "$dir" && exec env $env setsid $cmd "$@" >"$dir/out.log" 2>&1) &
  pid=$!
  STARTED_PIDS+=("$pid")
  while :; do
    now=$(date +%s%N)
    if [ $(((now - start) / 1000000000)) -ge "$TIMEOUT" ]; then log "  $which run $round: not ready in $TIMEOUT s; see $dir/out.log"; break; fi
    kill -0 "$pid" 2>/dev/null || { log "  $which run $round: exited; see $dir/out.log"; break; }
    ready=$now
    for url in "${urls[@]}"; do
      curl -sf -o /dev/null -m 1 "$url/v0/status" || { ready=""; break; }
    done
    [ -z "$ready" ] || break
    sleep 0.05
  done
  cpu=$(group_ticks "$pid")
  kill -TERM -- "-$pid" 2>/dev/null || true
  reap "$pid" 30
  if [ -z "$ready" ]; then   # counted as not ready (NA), left out of the medians and ratios
    printf '%s %s NA NA\n' "$which" "$round" >>"$OUT/runs.txt"; return 0
  fi
  printf '%s %s %s %s\n' "$which" "$round" "$(calc "($ready - $start) / 1e9")" "$(calc "$cpu / $TICKS")" >>"$OUT/runs.txt"
  log "  $which run $round: ready after $(calc "($ready - $start) / 1e9") s, $(calc "$cpu / $TICKS") CPU s; load $(cut -d' ' -f1-3 /proc/loadavg)"
  sleep 1
}

log "start-up of $TARGET: A = $A_CMD${A_ENV:+ ($A_ENV)}, B = $B_CMD${B_ENV:+ ($B_ENV)}, $ROUNDS rounds; results in $OUT"
: >"$OUT/runs.txt"
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
start_round() { local round="$1" which; shift; for which in "$@"; do start_run "$round" "$which"; done; }
paired_rounds "$ROUNDS" start_round A B
LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
col() { awk -v w="$1" -v c="$2" '$1 == w && $c != "NA" { print $c }' "$OUT/runs.txt"; }
ratios() {  # ratios COLUMN: B/A of each round where both were ready
  awk -v c="$1" '$c != "NA" { v[$1, $2] = $c; r[$2] = 1 }
    END { for (k in r) if (v["A", k] > 0 && v["B", k] > 0) print v["B", k] / v["A", k] }' "$OUT/runs.txt"
}
REPORT="$OUT/report.md"
{
  echo "# gatling/startup-benchmark.sh $TARGET, $(date -u +%Y-%m-%dT%H:%MZ)"
  echo
  echo "A = \`$A_CMD\`${A_ENV:+ with $A_ENV}; B = \`$B_CMD\`${B_ENV:+ with $B_ENV}; $ROUNDS rounds alternating;"
  echo "$(nproc) CPUs, load average $LOAD_START at the start, $LOAD_END at the end; commit $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)."
  echo
  echo "| variant | round | ready s (wall) | CPU s to ready |"
  echo "|---|---|---|---|"
  sort -k2,2n -k1,1 "$OUT/runs.txt" | awk '$3 == "NA" { printf "| %s | %d | not ready in '"$TIMEOUT"' s | - |\n", $1, $2; next }
    { printf "| %s | %d | %.2f | %.2f |\n", $1, $2, $3, $4 }'
  echo
  printf 'median ready: A %.2f s, B %.2f s; CPU to ready: A %.2f s, B %.2f s\n' "$(col A 3 | median)" "$(col B 3 | median)" \
    "$(col A 4 | median)" "$(col B 4 | median)"
  printf 'B/A per round, median (min-max): ready %.2f (%.2f-%.2f), CPU %.2f (%.2f-%.2f)\n' \
    "$(ratios 3 | median)" "$(ratios 3 | sort -g | head -1)" "$(ratios 3 | sort -g | tail -1)" \
    "$(ratios 4 | median)" "$(ratios 4 | sort -g | head -1)" "$(ratios 4 | sort -g | tail -1)"
} >"$REPORT"
cat "$REPORT"
