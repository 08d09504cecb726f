#!/usr/bin/env bash
# What a membership change costs when a node it involves dies. A 4th node joins a local 3-node cluster (its streaming
# slowed by --stream-rate, so that the join is caught in its streaming phase) and is then killed with kill -9 for
# good, or the view log's leader (one of the three) is. Measured from the kill, by polling a live member's
# /actuator/cluster every ~50 ms: when a live member first names a new leader (leader case: the next leader takes
# the change over), and when the change is rolled back (no change in the view, the joiner no member). The rollback
# waits dht.change-failure-timeout (--failure-timeout) by design; the rest is detection (probes, 200-ms steps) and
# the log's append. Prints a line per run and writes report.md. See gatling/README.md.
#
# usage: gatling/membership-failover.sh [options]
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
GATLING_POM="$ROOT/gatling/pom.xml"
# shellcheck source=gatling/bench-common.sh
. "$ROOT/gatling/bench-common.sh"    # log, calc, free_port, start_nodes, wait_ready, cleanup, install_traps, reap

ROUNDS=3
FAILURE_TIMEOUT=10     # dht.change-failure-timeout, seconds
KEYS=2000              # keys written before each join (1 KiB values at 2/3)
STREAM_RATE=100        # dht.stream-rate of every node: records per second a gainer pulls
NODE_HEAP=256m
OUT=""

usage() {
  cat <<EOF
usage: gatling/membership-failover.sh [options]

For each round and each case (joiner, leader): starts 3 nodes (NODE_JAR or target/dht.jar), writes --keys keys,
starts a 4th node that joins through node 0, waits for the streaming phase, kills the joiner or the view log's
leader with kill -9, and times the next leader and the rollback.

  --rounds N            rounds of both cases (default $ROUNDS)
  --failure-timeout S   dht.change-failure-timeout of every node (default $FAILURE_TIMEOUT; the product's is 60)
  --keys N              keys written before each join (default $KEYS)
  --stream-rate R       dht.stream-rate of every node (default $STREAM_RATE): the streaming phase lasts about
                        --keys * 3/4 / R seconds
  --node-heap SIZE      -Xms and -Xmx of each node (default $NODE_HEAP)
  --out DIR             results directory (default gatling/target/membership-failover/<time>)
EOF
}

while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) ROUNDS="$2"; shift ;;
    --failure-timeout) FAILURE_TIMEOUT="$2"; shift ;;
    --keys) KEYS="$2"; shift ;;
    --stream-rate) STREAM_RATE="$2"; shift ;;
    --node-heap) NODE_HEAP="$2"; shift ;;
    --out) OUT="$2"; shift ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
  esac
  shift
done

OUT="${OUT:-$ROOT/gatling/target/membership-failover/$(date +%Y%m%d-%H%M%S)}"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
install_traps
[ -n "${NODE_JAR:-}" ] || build_dht_jar_if_missing
NODE_JAR="${NODE_JAR:-$ROOT/target/dht.jar}"
NODE_ARGS=("--dht.change-failure-timeout=${FAILURE_TIMEOUT}s" "--dht.stream-rate=$STREAM_RATE")

now_ms() { date +%s%3N; }
# view URL: "leader|change|members|epoch" of the node's /actuator/cluster (change: kind:phase or -), or "" if none
view() {
  curl -s -m 1 "$1/actuator/cluster" 2>/dev/null | python3 -c '
import json, sys
try:
    d = json.load(sys.stdin)
except Exception:
    sys.exit(0)
c = d.get("change")
print("%s|%s|%s|%s" % (d.get("leader") or "-", c["kind"] + ":" + c["phase"] if c else "-",
      ",".join(m["node"] for m in d["members"]), d["epoch"]))' || true
}

RESULTS="$OUT/results.tsv"
printf 'case\tround\tnew_leader_ms\trollback_ms\tkilled\n' >"$RESULTS"

run_case() {  # run_case CASE ROUND: one join whose joiner or leader is killed in its streaming phase
  local kind="$1" round="$2" dir="$OUT/$1-$2" nodes i joiner_port joiner_url joiner_pid state leader victim victim_pid
  local t0 t_leader="" t_rollback="" live now current=""
  mkdir -p "$dir"
  start_nodes "$dir" 3
  IFS=, read -r -a nodes <<<"$URLS"
  seq 1 "$KEYS" | xargs -P 8 -I{} curl -s -o /dev/null -X PUT "${nodes[0]}/v0/entity?id=key{}&replicas=2/3" \
    --data-binary "@$OUT/value.bin"
  joiner_port=$(free_port); joiner_url="http://127.0.0.1:$joiner_port"
  DHT_CLUSTER_SECRET="$SECRET" setsid java "-Xms$NODE_HEAP" "-Xmx$NODE_HEAP" -jar "$NODE_JAR" \
    --server.port="$joiner_port" --dht.self="$joiner_url" --dht.nodes="${nodes[0]}" \
    --dht.data-dir="$dir/data-$joiner_port" "${NODE_ARGS[@]}" >"$dir/node-$joiner_port.log" 2>&1 &
  joiner_pid=$!; STARTED_PIDS+=("$joiner_pid")
  for _ in $(seq 1 1200); do
    state=$(view "${nodes[0]}")
    [[ "$state" == *"|join:streaming|"* ]] && break
    sleep 0.1
  done
  [[ "$state" == *"|join:streaming|"* ]] || { log "$kind $round: the join never reached streaming ($state)"; return 1; }
  leader="${state%%|*}"
  if [ "$kind" = joiner ]; then victim="$joiner_url"; victim_pid="$joiner_pid"; else
    victim="$leader"; victim_pid=""
    for i in 0 1 2; do [ "${nodes[$i]}" = "$leader" ] && victim_pid="${PIDS[$i]}"; done
    [ -n "$victim_pid" ] || { log "$kind $round: leader $leader is none of the three"; return 1; }
  fi
  live="${nodes[0]}"; [ "$victim" != "$live" ] || live="${nodes[1]}"
  t0=$(now_ms)
  kill -KILL -- "-$victim_pid"
  while :; do
    now=$(now_ms)
    if [ $((now - t0)) -gt $(( (FAILURE_TIMEOUT + 120) * 1000 )) ]; then
      log "$kind $round: no rollback within $((FAILURE_TIMEOUT + 120)) s ($current)"; break
    fi
    current=$(view "$live")
    if [ -n "$current" ]; then
      if [ "$kind" = leader ] && [ -z "$t_leader" ]; then
        case "${current%%|*}" in -|"$victim") ;; *) t_leader=$((now - t0)) ;; esac
      fi
      IFS='|' read -r _ change members _ <<<"$current"
      if [ "$change" = - ] && [[ ",$members," != *",$joiner_url,"* ]]; then t_rollback=$((now - t0)); break; fi
    fi
    sleep 0.05
  done
  log "$kind $round: killed $victim; new leader after ${t_leader:--} ms, rolled back after ${t_rollback:--} ms"
  printf '%s\t%s\t%s\t%s\t%s\n' "$kind" "$round" "${t_leader:--}" "${t_rollback:--}" "$victim" >>"$RESULTS"
  for i in "${!PIDS[@]}"; do kill -TERM -- "-${PIDS[$i]}" 2>/dev/null || true; done
  kill -TERM -- "-$joiner_pid" 2>/dev/null || true
  for i in "${!PIDS[@]}"; do reap "${PIDS[$i]}" 20; done
  reap "$joiner_pid" 20
}

head -c 1024 /dev/urandom >"$OUT/value.bin"
log "results in $OUT; jar $NODE_JAR; failure timeout $FAILURE_TIMEOUT s, $KEYS keys, stream rate $STREAM_RATE/s"
for round in $(seq 1 "$ROUNDS"); do
  run_case joiner "$round"
  run_case leader "$round"
done

median() { sort -n | awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
{
  echo "# gatling/membership-failover.sh, $(date -u +%Y-%m-%dT%H:%MZ)"
  echo
  echo "Machine: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) at the end. Jar: \`$NODE_JAR\`;" \
    "commit $(git -C "$ROOT" rev-parse --short HEAD). $ROUNDS rounds; dht.change-failure-timeout $FAILURE_TIMEOUT s;" \
    "$KEYS keys of 1 KiB at 2/3; dht.stream-rate $STREAM_RATE/s. Times from the kill -9, polled every ~50 ms on a live member."
  echo
  echo "| case | round | new leader ms | rolled back ms | killed |"
  echo "|---|---|---|---|---|"
  tail -n +2 "$RESULTS" | awk -F'\t' '{ printf "| %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5 }'
  echo
  echo "Medians: joiner killed -> rolled back $(awk -F'\t' '$1 == "joiner" && $4 != "-" { print $4 }' "$RESULTS" | median) ms;" \
    "leader killed -> next leader $(awk -F'\t' '$1 == "leader" && $3 != "-" { print $3 }' "$RESULTS" | median) ms," \
    "-> rolled back $(awk -F'\t' '$1 == "leader" && $4 != "-" { print $4 }' "$RESULTS" | median) ms" \
    "(the failure timeout is $((FAILURE_TIMEOUT * 1000)) ms of it)."
} >"$OUT/report.md"
cat "$OUT/report.md"
