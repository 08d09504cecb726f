#!/usr/bin/env bash
# What a live join costs. A local 3-node cluster (separate JVMs) is loaded with --keys values
# of 1 KiB at 2/3, then serves an open-loop mixed load (50 % GET, 50 % PUT of existing keys, 2/3) at --rate
# requests/s; after a quiet window a 4th node starts and joins by itself while the load goes on. Measured: the
# join time, the joiner's streaming (records, bytes, records/s, MB/s), and client p50/p99 in the quiet window,
# the join window and after it (cleanup). Writes report.md and copies it to gatling/results/. See gatling/README.md.
#
# usage: gatling/join-benchmark.sh [options]
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
GATLING_POM="$ROOT/gatling/pom.xml"
# shellcheck source=gatling/bench-common.sh
. "$ROOT/gatling/bench-common.sh"    # log, calc, int, cpu_ticks, free_port, wait_ready, cleanup, install_traps, pin_servers

KEYS=1000000
RATE=1000
WARMUP=60              # unmeasured seconds of the mixed load before the quiet window (the GET path's JIT)
QUIET=30               # seconds of the quiet window
AFTER=20               # seconds measured after the join completed (the old nodes' cleanup runs then)
JOIN_TIMEOUT=1800      # seconds the join may take before the run gives up on it
VALUE_SIZE=1024
REPLICAS=2/3
LOAD_CONCURRENCY=64    # requests in flight while loading the keys
MAX_OUTSTANDING=4000   # open-loop requests waiting for their answers at once; beyond, arrivals are counted not sent
NODE_HEAP=512m
PIN=false
OUT=""
RESULTS=true
NOTE=""

usage() {
  cat <<EOF
usage: gatling/join-benchmark.sh [options]

Starts 3 dht nodes (NODE_JAR or target/dht.jar; nothing is built), loads --keys keys, runs an open-loop mixed
load at --rate req/s over the 3 nodes, and after --warmup + --quiet s starts a 4th node that joins through
node 0 while the load continues. Prints and writes report.md (copied to gatling/results/<time>-join-benchmark.md).

  --keys N              keys loaded before the measurement, 1 KiB values at 2/3 (default $KEYS)
  --rate R              open-loop requests per second during the measurement (default $RATE)
  --warmup S            unmeasured seconds of the mixed load before the quiet window (default $WARMUP)
  --quiet S             quiet window, before the joiner starts (default $QUIET)
  --after S             window measured after the join completed; the load ends then (default $AFTER, >= 11)
  --join-timeout S      give up on a join that has not completed after S seconds (default $JOIN_TIMEOUT)
  --value-size BYTES    value size (default $VALUE_SIZE)
  --replicas ACK/FROM   replicas of every request (default $REPLICAS)
  --load-concurrency N  requests in flight while loading (default $LOAD_CONCURRENCY)
  --node-heap SIZE      -Xms and -Xmx of each node (default $NODE_HEAP)
  --node-arg ARG        an extra argument of every node, joiner included (repeatable), e.g. --dht.stream-rate=20000
  --pin                 the load client on CPU 0, every node on the other CPUs (taskset; needs 2 or more CPUs)
  --note TEXT           a line for the report (e.g. what else ran on the machine)
  --no-results          do not copy the report to gatling/results/
  --out DIR             output directory (default gatling/target/join-benchmark/<time>)

Needs a JDK (javac: the load client is compiled from this script), curl and jq.
EOF
}

while [ $# -gt 0 ]; do
  case "$1" in
    --keys) KEYS="$2"; shift ;;
    --rate) RATE="$2"; shift ;;
    --warmup) WARMUP="$2"; shift ;;
    --quiet) QUIET="$2"; shift ;;
    --after) AFTER="$2"; shift ;;
    --join-timeout) JOIN_TIMEOUT="$2"; shift ;;
    --value-size) VALUE_SIZE="$2"; shift ;;
    --replicas) REPLICAS="$2"; shift ;;
    --load-concurrency) LOAD_CONCURRENCY="$2"; shift ;;
    --node-heap) NODE_HEAP="$2"; shift ;;
    --node-arg) NODE_ARGS+=("$2"); shift ;;
    --pin) PIN=true ;;
    --note) NOTE="$2"; shift ;;
    --no-results) RESULTS=false ;;
    --out) OUT="$2"; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
  shift
done
for tool in java javac curl jq; do command -v "$tool" >/dev/null || { echo "$tool not found" >&2; exit 2; }; done
if [ "$PIN" = true ] && [ "$(nproc)" -lt 2 ]; then echo "--pin needs 2 or more CPUs" >&2; exit 2; fi
[ "$AFTER" -ge 11 ] || { echo "--after must be at least 11 s (the client's 10-s request timeout)" >&2; exit 2; }
NODE_JAR="${NODE_JAR:-$ROOT/target/dht.jar}"
[ -f "$NODE_JAR" ] || { echo "$NODE_JAR not found: build it (./mvnw -q -DskipTests package) or set NODE_JAR" >&2; exit 2; }

STARTED_AT=$(date -u +%Y-%m-%d-%H%M)
OUT="${OUT:-$ROOT/gatling/target/join-benchmark/$(date -u +%Y%m%d-%H%M%S)}"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
DATA="$OUT/data"
mkdir -p "$DATA"
CLEANUP_DIRS+=("$DATA")
install_traps
LOAD_AVG_START=$(cut -d' ' -f1-3 /proc/loadavg)
COMMIT=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)       # the repository at the start; the
DIRTY=$(git -C "$ROOT" status --porcelain -- src pom.xml 2>/dev/null | wc -l)     # jar may be of another tree (NODE_JAR)
JAR_TIME=$(date -u -r "$NODE_JAR" +%Y-%m-%dT%H:%MZ)
if [ "$PIN" = true ]; then LOAD_PIN=(taskset -c 0); SERVER_CPUS="1-$(( $(nproc) - 1 ))"; fi
now_ms() { date +%s%3N; }

# ---- the load client: a small Java program, compiled here (no project sources involved) ------------------------
# load:  PUTs keys k0..k(N-1), LOAD_CONCURRENCY at a time, round robin over the nodes; a PUT that is not answered
#        201 is retried (on the next node, backing off) up to 50 times. Prints "load-summary ...".
# mixed: open loop: requests are due at a fixed rate whatever the answers (one pacing thread, sendAsync, keep-alive
#        connections of the JDK's HttpClient), each a GET or a PUT (equal chance) of a uniformly random loaded key,
#        round robin over the nodes. Per request one line "DUE_EPOCH_MS LATENCY_US STATUS G|P", latency from the
#        moment it was due (queueing in the client counts); STATUS -1: not sent (MAX_OUTSTANDING waiting),
#        -2: connection failed, -3: no answer within 10 s. Runs until SIGTERM, then writes out what it has.
mkdir -p "$OUT/client"
cat >"$OUT/client/JoinLoad.java" <<'EOF'
import java.io.BufferedWriter;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

public final class JoinLoad {
    static final ThreadFactory DAEMON = runnable -> {
        Thread thread = new Thread(runnable);
        thread.setDaemon(true);
        return thread;
    };
    static List<URI> nodes;
    static String replicas;
    static byte[][] values;
    static HttpClient http;

    public static void main(String[] args) throws Exception {
        nodes = Arrays.stream(args[1].split(",")).map(URI::create).toList();
        int keys = Integer.parseInt(args[2]);
        int valueSize = Integer.parseInt(args[3]);
        replicas = args[4];
        SplittableRandom random = new SplittableRandom(42);
        values = new byte[64][valueSize];
        for (byte[] value : values) {
            for (int i = 0; i < value.length; i++) {
                value[i] = (byte) random.nextInt(256);
            }
        }
        http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5))
                .executor(Executors.newFixedThreadPool(2, DAEMON)).build();
        if (args[0].equals("load")) {
            load(keys, Integer.parseInt(args[5]));
        } else {
            mixed(keys, Double.parseDouble(args[5]), Path.of(args[6]), Integer.parseInt(args[7]));
        }
    }

    static HttpRequest request(long key, boolean put, long index) {
        HttpRequest.Builder builder = HttpRequest.newBuilder(nodes.get((int) Math.floorMod(index, (long) nodes.size()))
                .resolve("/v0/entity?id=k" + key + "&replicas=" + replicas)).timeout(Duration.ofSeconds(10));
        return (put ? builder.PUT(HttpRequest.BodyPublishers.ofByteArray(values[(int) (key % values.length)]))
                : builder.GET()).build();
    }

    static int statusOf(HttpResponse<?> response, Throwable failure) {
        if (failure == null) {
            return response.statusCode();
        }
        return failure instanceof HttpTimeoutException || failure.getCause() instanceof HttpTimeoutException ? -3 : -2;
    }

    static void load(int keys, int concurrency) throws InterruptedException {
        Semaphore slots = new Semaphore(concurrency);
        AtomicLong done = new AtomicLong();
        AtomicLong retries = new AtomicLong();
        AtomicLong failed = new AtomicLong();
        ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(DAEMON);
        long start = System.nanoTime();
        timer.scheduleAtFixedRate(() -> System.err.printf("loaded %d of %d keys, %.0f/s, %d retries%n", done.get(),
                keys, done.get() / ((System.nanoTime() - start) / 1e9), retries.get()), 10, 10, TimeUnit.SECONDS);
        for (int key = 0; key < keys; key++) {
            slots.acquire();
            put(key, 0, slots, done, retries, failed, timer);
        }
        slots.acquire(concurrency);
        double seconds = (System.nanoTime() - start) / 1e9;
        System.out.printf("load-summary keys=%d seconds=%.1f rate=%.0f retries=%d failed=%d%n", keys, seconds,
                keys / seconds, retries.get(), failed.get());
        System.exit(failed.get() == 0 ? 0 : 1);
    }

    static void put(long key, int attempt, Semaphore slots, AtomicLong done, AtomicLong retries, AtomicLong failed,
                    ScheduledExecutorService timer) {
        http.sendAsync(request(key, true, key + attempt), HttpResponse.BodyHandlers.discarding())
                .whenComplete((response, failure) -> {
                    int status = statusOf(response, failure);
                    if (status == 201) {
                        done.incrementAndGet();
                        slots.release();
                    } else if (attempt >= 50) {
                        System.err.println("k" + key + " not stored after 50 attempts, last status " + status);
                        failed.incrementAndGet();
                        slots.release();
                    } else {
                        retries.incrementAndGet();
                        timer.schedule(() -> put(key, attempt + 1, slots, done, retries, failed, timer),
                                100L * Math.min(attempt + 1, 10), TimeUnit.MILLISECONDS);
                    }
                });
    }

    static void mixed(int keys, double rate, Path out, int maxOutstanding) throws IOException {
        ConcurrentLinkedQueue<String> lines = new ConcurrentLinkedQueue<>();
        AtomicInteger outstanding = new AtomicInteger();
        BufferedWriter writer = Files.newBufferedWriter(out);
        Runnable drain = () -> {
            synchronized (writer) {
                try {
                    for (String line = lines.poll(); line != null; line = lines.poll()) {
                        writer.write(line);
                        writer.newLine();
                    }
                    writer.flush();
                } catch (IOException e) {
                    throw new RuntimeException(e);
                }
            }
        };
        ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(DAEMON);
        timer.scheduleWithFixedDelay(drain, 200, 200, TimeUnit.MILLISECONDS);
        long baseNanos = System.nanoTime();
        long baseMillis = System.currentTimeMillis();
        AtomicLong sentCount = new AtomicLong();
        timer.scheduleAtFixedRate(() -> System.err.printf("%d s: %d due, %d waiting for answers%n",
                (System.nanoTime() - baseNanos) / 1_000_000_000L, sentCount.get(), outstanding.get()),
                10, 10, TimeUnit.SECONDS);
        Runtime.getRuntime().addShutdownHook(new Thread(drain));
        SplittableRandom random = new SplittableRandom(7);
        for (long sent = 0; ; ) {
            long due = (long) ((System.nanoTime() - baseNanos) / 1e9 * rate);
            for (; sent < due; sent++) {
                long dueNanos = baseNanos + (long) (sent * 1e9 / rate);
                String prefix = (baseMillis + (dueNanos - baseNanos) / 1_000_000) + " ";
                boolean put = random.nextBoolean();
                long key = random.nextInt(keys);
                String op = put ? " P" : " G";
                if (outstanding.get() >= maxOutstanding) {
                    lines.add(prefix + "0 -1" + op);
                    continue;
                }
                outstanding.incrementAndGet();
                http.sendAsync(request(key, put, sent), HttpResponse.BodyHandlers.discarding())
                        .whenComplete((response, failure) -> {
                            outstanding.decrementAndGet();
                            long micros = (System.nanoTime() - dueNanos) / 1000;
                            lines.add(prefix + micros + " " + statusOf(response, failure) + op);
                        });
            }
            sentCount.set(sent);
            LockSupport.parkNanos(200_000);
        }
    }
}
EOF
javac -d "$OUT/client" "$OUT/client/JoinLoad.java" 2>"$OUT/client/javac.log" || { cat "$OUT/client/javac.log" >&2; exit 1; }
client() { "${LOAD_PIN[@]}" java -Xms256m -Xmx256m -cp "$OUT/client" JoinLoad "$@"; }

# ---- nodes --------------------------------------------------------------------------------------------------------
# as gatling/bench-common.sh's start_nodes and README.md's "Adding and removing a node": a fixed heap, a share of the
# event loops (processors / 3, at least 1) for each of the 3 nodes and for the joiner, a process group each
SHARE=$(( $(nproc) / 3 )); IO_THREADS=$(( SHARE > 1 ? SHARE : 1 ))
SECRET=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
PORTS=()
while [ ${#PORTS[@]} -lt 4 ]; do
  port=$(free_port); case " ${PORTS[*]} " in *" $port "*) ;; *) PORTS+=("$port") ;; esac
done
URL=(); for port in "${PORTS[@]}"; do URL+=("http://127.0.0.1:$port"); done
SEEDS="${URL[0]},${URL[1]},${URL[2]}"
PIDS=()
start_node() {  # start_node INDEX: node INDEX of PORTS (3: the joiner, seeded by node 0 and not in dht.nodes)
  local i="$1" nodes="$SEEDS"
  [ "$i" -lt 3 ] || nodes="${URL[0]}"
  DHT_CLUSTER_SECRET="$SECRET" setsid java "-Xms$NODE_HEAP" "-Xmx$NODE_HEAP" -jar "$NODE_JAR" \
    --server.port="${PORTS[$i]}" --dht.self="${URL[$i]}" --dht.nodes="$nodes" --dht.data-dir="$DATA/data-${PORTS[$i]}" \
    --dht.io-threads="$IO_THREADS" "${NODE_ARGS[@]}" >"$OUT/node-$i-${PORTS[$i]}.log" 2>&1 &
  PIDS[i]=$!
  STARTED_PIDS+=($!)
  pin_servers $!
}
log "results in $OUT; jar $NODE_JAR; $KEYS keys, $RATE req/s, replicas $REPLICAS, pinned: $PIN"
for i in 0 1 2; do start_node "$i"; done
wait_ready "${URL[0]}" "${URL[1]}" "${URL[2]}"
log "3 nodes up: $SEEDS"

# ---- loading --------------------------------------------------------------------------------------------------------
log "loading $KEYS keys of $VALUE_SIZE bytes at $REPLICAS, $LOAD_CONCURRENCY requests in flight"
client load "$SEEDS" "$KEYS" "$VALUE_SIZE" "$REPLICAS" "$LOAD_CONCURRENCY" >"$OUT/load.txt" 2>"$OUT/load.log" \
  || { log "loading failed; see $OUT/load.log"; tail -5 "$OUT/load.log" >&2; exit 1; }
LOAD_LINE=$(grep '^load-summary' "$OUT/load.txt")
lkv() { echo "$LOAD_LINE" | sed -n "s/.* $1=\([^ ]*\).*/\1/p"; }
log "loaded: $(lkv seconds) s, $(lkv rate) PUT/s, $(lkv retries) retries"

# ---- mixed load, quiet window, join -------------------------------------------------------------------------------
LAT="$OUT/latencies.txt"
setsid "${LOAD_PIN[@]}" java -Xms256m -Xmx256m -cp "$OUT/client" JoinLoad mixed "$SEEDS" "$KEYS" "$VALUE_SIZE" \
  "$REPLICAS" "$RATE" "$LAT" "$MAX_OUTSTANDING" 2>"$OUT/mixed.log" &
CLIENT_PID=$!
CLIENT_START=$(now_ms)
STARTED_PIDS+=("$CLIENT_PID")
log "mixed load at $RATE req/s: ${WARMUP} s warm-up, then the ${QUIET}-s quiet window"
sleep "$WARMUP"
QUIET_START=$(now_ms)
sleep "$QUIET"
QUIET_END=$(now_ms)

cluster_of() { curl -sf -m 2 "$1/actuator/cluster" || true; }   # cluster_of URL: the node's view (JSON) or nothing
JOIN_START=$(now_ms)
start_node 3
log "joiner started: ${URL[3]} (pid ${PIDS[3]}), seed ${URL[0]}"
PHASES="$OUT/phases.txt"; : >"$PHASES"
last="" JOIN_END="" JOIN_OUTCOME=""
while :; do
  view=$(cluster_of "${URL[0]}")
  if [ -n "$view" ]; then
    state=$(echo "$view" | jq -r '"epoch \(.epoch), \(.members | length) members, " +
      (if .change == null then "no change" else "\(.change.kind) of \(.change.node), phase \(.change.phase)" end)')
    if [ "$state" != "$last" ]; then
      echo "$(( $(now_ms) - JOIN_START )) $state" >>"$PHASES"
      log "  node 0: $state"; last="$state"
    fi
    if [ "$(echo "$view" | jq '(.members | length) == 4 and .change == null')" = true ]; then
      JOIN_END=$(now_ms); JOIN_OUTCOME=complete; break
    fi
  fi
  if ! kill -0 "${PIDS[3]}" 2>/dev/null; then JOIN_END=$(now_ms); JOIN_OUTCOME="joiner process exited"; break; fi
  if [ $(( $(now_ms) - JOIN_START )) -gt $(( JOIN_TIMEOUT * 1000 )) ]; then
    JOIN_END=$(now_ms); JOIN_OUTCOME="not complete after $JOIN_TIMEOUT s"; break
  fi
  sleep 0.25
done
JOIN_SECONDS=$(calc "($JOIN_END - $JOIN_START) / 1000")
log "join: $JOIN_OUTCOME after $JOIN_SECONDS s"

# the after window: the load goes on; the cleanup passes of the old nodes run
AFTER_START=$(now_ms)
CLEANUP_DONE=""
while [ $(( $(now_ms) - AFTER_START )) -lt $(( AFTER * 1000 )) ]; do
  if [ -z "$CLEANUP_DONE" ] && [ "$JOIN_OUTCOME" = complete ]; then
    pending=0
    for u in "${URL[@]}"; do
      [ "$(cluster_of "$u" | jq -r '.cleanupPending' 2>/dev/null)" = false ] || pending=$((pending + 1))
    done
    [ "$pending" -gt 0 ] || CLEANUP_DONE=$(( $(now_ms) - JOIN_END ))
  fi
  sleep 0.5
done
AFTER_END=$(now_ms)
CLIENT_CPU=-
if ticks=$(cpu_ticks "$CLIENT_PID"); then
  CLIENT_CPU=$(int "100 * $ticks / $(getconf CLK_TCK) / ($(( AFTER_END - CLIENT_START )) / 1000)")
fi
kill -TERM -- "-$CLIENT_PID" 2>/dev/null || true
reap "$CLIENT_PID" 15
log "load stopped"

# ---- figures ------------------------------------------------------------------------------------------------------
# window FROM TO: "requests rps p50 p99 p999 max errors" over requests due in [FROM, TO) (epoch ms); latencies in ms;
# percentiles nearest-rank over every sent request (errors and timeouts included, at their latency); errors: every
# answer but PUT 201 / GET 200, and requests without an answer, by kind ("GET 404: 3, none: 1", or "-")
window() {
  awk -v from="$1" -v to="$2" '$1 >= from && $1 < to {
      n++
      if ($3 == -1) { e["not sent"]++; next }
      lat[++m] = $2
      if (!(($4 == "P" && $3 == 201) || ($4 == "G" && $3 == 200))) {
        k = ($3 == -2) ? "connection failed" : ($3 == -3) ? "no answer in 10 s" : (($4 == "P" ? "PUT " : "GET ") $3)
        e[k]++
      }
    }
    END {
      if (m == 0) { print "0 0 - - - - -"; exit }
      s = ""; for (k in e) { s = s (s ? ", " : "") k ": " e[k] }
      printf "%d %.0f %s %s %s %s %s\n", n, n / ((to - from) / 1000), "P50", "P99", "P999", "MAX", (s ? s : "-")
      for (i = 1; i <= m; i++) print lat[i] > "/dev/stderr"
    }' "$LAT" 2>"$OUT/window.tmp" >"$OUT/window.head"
  local head pcts
  head=$(cat "$OUT/window.head")
  pcts=$(sort -n "$OUT/window.tmp" | awk '{ v[NR] = $1 } END {
      if (NR == 0) { print "- - - -"; exit }
      split("0.50 0.99 0.999 1", q, " ")
      for (i = 1; i <= 4; i++) { r = int(q[i] * NR); if (r < q[i] * NR) r++; if (r < 1) r = 1
        printf "%s%.1f", (i > 1 ? " " : ""), v[r] / 1000 }
      print "" }')
  set -- $pcts
  echo "$head" | sed "s/P50/$1/; s/P99/$2/; s/P999/$3/; s/MAX/$4/"
  rm -f "$OUT/window.tmp" "$OUT/window.head"
}
read -r Q_N Q_RPS Q_P50 Q_P99 Q_P999 Q_MAX Q_ERR <<<"$(window "$QUIET_START" "$QUIET_END")"
read -r J_N J_RPS J_P50 J_P99 J_P999 J_MAX J_ERR <<<"$(window "$JOIN_START" "$JOIN_END")"
read -r A_N A_RPS A_P50 A_P99 A_P999 A_MAX A_ERR <<<"$(window "$AFTER_START" "$AFTER_END")"
P99_RATIO=$(calc "$J_P99 / $Q_P99" 2>/dev/null || echo -)
P99_RATIO=$(printf '%.2f' "$P99_RATIO" 2>/dev/null || echo -)
# the change window: from node 0's first view with a change in progress (the joiner's JVM is up and has asked the
# seeds) to the end of the join; the join window above also holds the joiner's JVM start
CHANGE_OFFSET=$(awk '/phase/ { print $1; exit }' "$PHASES")
if [ -n "$CHANGE_OFFSET" ]; then
  CHANGE_START=$(( JOIN_START + CHANGE_OFFSET ))
  read -r X_N X_RPS X_P50 X_P99 X_P999 X_MAX X_ERR <<<"$(window "$CHANGE_START" "$JOIN_END")"
  X_SECONDS=$(calc "($JOIN_END - $CHANGE_START) / 1000")
  X_RATIO=$(printf '%.2f' "$(calc "$X_P99 / $Q_P99" 2>/dev/null || echo -)" 2>/dev/null || echo -)
else
  X_N=-; X_RPS=-; X_P50=-; X_P99=-; X_P999=-; X_MAX=-; X_ERR=-; X_SECONDS=-; X_RATIO=-
fi

JOINER_LOG="$OUT/node-3-${PORTS[3]}.log"
STREAM_LINE=$(grep -o 'streaming for the join of .*' "$JOINER_LOG" | tail -1 || true)
S_RECORDS=$(echo "$STREAM_LINE" | sed -n 's/.*: \([0-9]*\) records, \([0-9]*\) bytes stored here in \([0-9]*\) ms.*/\1/p')
S_BYTES=$(echo "$STREAM_LINE" | sed -n 's/.*: \([0-9]*\) records, \([0-9]*\) bytes stored here in \([0-9]*\) ms.*/\2/p')
S_MS=$(echo "$STREAM_LINE" | sed -n 's/.*: \([0-9]*\) records, \([0-9]*\) bytes stored here in \([0-9]*\) ms.*/\3/p')
METRICS=$(curl -sf -m 5 "${URL[3]}/actuator/prometheus" || true)
C_RECORDS=$(echo "$METRICS" | awk '/^dht_stream_records_total/ { printf "%.0f", $2 }')
C_BYTES=$(echo "$METRICS" | awk '/^dht_stream_bytes_total/ { printf "%.0f", $2 }')
if [ -n "$S_MS" ] && [ "$S_MS" -gt 0 ]; then
  S_RPS=$(printf '%.0f' "$(calc "$S_RECORDS / ($S_MS / 1000)")")
  S_MBPS=$(printf '%.1f' "$(calc "$S_BYTES / 1000000 / ($S_MS / 1000)")")
  S_MB=$(printf '%.1f' "$(calc "$S_BYTES / 1000000")")
  S_SECONDS=$(printf '%.1f' "$(calc "$S_MS / 1000")")
  S_COPIES=$(printf '%.2f' "$(calc "$S_RECORDS / $KEYS")")
else
  S_RPS=-; S_MBPS=-; S_MB=-; S_SECONDS=-; S_COPIES=-
fi
verdict() { if [ "$1" = - ]; then echo "not measured"; elif [ "$(calc "$1 $2")" = 1 ]; then echo met; else echo "not met"; fi; }
STREAM_GOAL=$(verdict "$S_MBPS" ">= 20")
P99_GOAL=$(verdict "$P99_RATIO" "<= 2")
STREAM_RETRIES=$(grep -c 'RecordStreaming .*streaming .*from .* failed' "$JOINER_LOG" || true)
JOINER_BOOT=$(sed -n 's/.*Started DhtApplication in \([0-9.]*\) seconds.*/\1/p' "$JOINER_LOG" | head -1)
# timeline: per 5-s bucket of due times from the quiet window on, its start in seconds since the joiner's process
# started, requests, p50, p99 and max (ms), requests not answered PUT 201 / GET 200, and node 0's view then
timeline() {
  awk -v from="$QUIET_START" -v to="$AFTER_END" '$1 >= from && $1 < to { print int(($1 - from) / 5000), $2, $3, $4 }' "$LAT" \
    | sort -k1,1n -k2,2n | awk -v offset="$(( QUIET_START - JOIN_START ))" -v phases="$PHASES" '
      BEGIN { while ((getline line < phases) > 0) { split(line, w, " "); n++; at[n] = w[1]; sub(/^[0-9]+ /, "", line); what[n] = line } }
      function flush() {
        if (c == 0) return
        t = (offset + b * 5000) / 1000; state = "before the joiner"
        for (i = 1; i <= n; i++) if (at[i] <= t * 1000 + 5000) state = what[i]
        r50 = int(0.5 * c); if (r50 < 0.5 * c) r50++; r99 = int(0.99 * c); if (r99 < 0.99 * c) r99++
        ts = sprintf("%+.0f", t); if (ts == "-0") ts = "+0"
        printf "| %s | %d | %.1f | %.1f | %.1f | %d | %s |\n", ts, c, v[r50] / 1000, v[r99] / 1000, v[c] / 1000, bad, state
      }
      $1 != b && NR > 1 { flush(); c = 0; bad = 0 }
      { b = $1; if ($3 == -1) { bad++; next } v[++c] = $2; if (!(($4 == "P" && $3 == 201) || ($4 == "G" && $3 == 200))) bad++ }
      END { flush() }'
}
# short_log: Spring Boot's log lines as "HH:MM:SS.mmm LEVEL Class: message"
short_log() { sed -E 's/^[0-9-]+T([0-9:.]+)Z? +([A-Z]+) \[[^]]*\] [0-9]+ --- \[[^]]*\] \[[^]]*\] ([A-Za-z0-9_$]+\.)*([A-Za-z0-9_$]+) *: /\1 \2 \4: /'; }
# warnings LOG: the log's WARN and ERROR lines grouped (ids and numbers as N), most frequent first, with the first time
warnings() {
  grep -E '^[0-9-]+T[0-9:.]+Z? +(WARN|ERROR) ' "$1" | short_log | cut -c1-200 \
    | awk '{ t = $1; $1 = ""; m = $0; gsub(/\[[^]]*\]/, "", m); gsub(/[0-9]+/, "N", m)
             if (!(m in n)) first[m] = t; n[m]++ } END { for (m in n) printf "%6d x, first at %s:%s\n", n[m], first[m], m }' \
    | sort -rn
}
LOAD_AVG_END=$(cut -d' ' -f1-3 /proc/loadavg)

# ---- report -------------------------------------------------------------------------------------------------------
REPORT="$OUT/report.md"
{
  echo "# gatling/join-benchmark.sh: a 4th node joins a loaded 3-node cluster, $(date -u -d "@$((JOIN_START / 1000))" +%Y-%m-%dT%H:%MZ)"
  echo
  echo "Machine: $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')), load average at the start" \
    "$LOAD_AVG_START, at the end $LOAD_AVG_END. Jar: \`$NODE_JAR\` (built $JAR_TIME); the repository at the start:" \
    "commit $COMMIT$([ "$DIRTY" = 0 ] || echo " with uncommitted changes in src/")."
  [ "$KEYS" = 1000000 ] || echo "**Run at $KEYS keys, not the default 1 000 000.**"
  [ -z "$NOTE" ] || echo "$NOTE"
  echo
  echo "Setup: 3 nodes (-Xms$NODE_HEAP -Xmx$NODE_HEAP, --dht.io-threads=$IO_THREADS, pinned: $PIN$([ ${#NODE_ARGS[@]} -eq 0 ] || echo ", ${NODE_ARGS[*]}"))," \
    "$KEYS keys of $VALUE_SIZE random bytes loaded at $REPLICAS in $(lkv seconds) s ($(lkv rate) PUT/s, $LOAD_CONCURRENCY in flight," \
    "$(lkv retries) retries). Then an open-loop load at $RATE req/s over the 3 nodes (the script's JDK HttpClient" \
    "client, keep-alive): 50 % GET, 50 % PUT of uniformly random loaded keys, at $REPLICAS; ${WARMUP} s unmeasured, the" \
    "quiet window (${QUIET} s), then the 4th node (same flags, \`--dht.nodes\` = node 0 only, empty data dir) starts;" \
    "the join window runs from its process start to node 0's \`/actuator/cluster\` showing 4 members and no change;" \
    "then ${AFTER} s more (the old nodes' cleanup). Latency counts from when a request was due (client queueing" \
    "included), nearest-rank percentiles over every sent request; errors: any answer but PUT 201 / GET 200."
  echo
  echo "| window | seconds | requests | req/s | p50 ms | p99 ms | p99.9 ms | max ms | errors |"
  echo "|---|---|---|---|---|---|---|---|---|"
  echo "| quiet | $(calc "($QUIET_END - $QUIET_START) / 1000") | $Q_N | $Q_RPS | $Q_P50 | $Q_P99 | $Q_P999 | $Q_MAX | $Q_ERR |"
  echo "| join | $JOIN_SECONDS | $J_N | $J_RPS | $J_P50 | $J_P99 | $J_P999 | $J_MAX | $J_ERR |"
  echo "| change (within the join) | $X_SECONDS | $X_N | $X_RPS | $X_P50 | $X_P99 | $X_P999 | $X_MAX | $X_ERR |"
  echo "| after the join | $(calc "($AFTER_END - $AFTER_START) / 1000") | $A_N | $A_RPS | $A_P50 | $A_P99 | $A_P999 | $A_MAX | $A_ERR |"
  echo
  echo "| figure | value | goal |"
  echo "|---|---|---|"
  echo "| join | $JOIN_OUTCOME after $JOIN_SECONDS s (process start to 4 members, no change, on node 0) | |"
  echo "| streaming (joiner's log) | $S_RECORDS records, $S_BYTES bytes ($S_MB MB) stored in $S_SECONDS s; $S_COPIES records per loaded key (the joiner gains about 3/4 of the keys) | |"
  echo "| streaming rate | $S_RPS records/s, **$S_MBPS MB/s** (10^6 bytes, what the joiner stored) | >= 20 MB/s: $STREAM_GOAL |"
  echo "| joiner's counters after the join | dht_stream_records_total ${C_RECORDS:--}, dht_stream_bytes_total ${C_BYTES:--} | |"
  echo "| client p99 join / quiet | **$P99_RATIO** ($J_P99 / $Q_P99 ms) | <= 2: $P99_GOAL |"
  echo "| client p99 change / quiet | $X_RATIO ($X_P99 / $Q_P99 ms; from node 0's first view with the change, after the joiner's JVM start) | |"
  echo "| joiner's JVM start | Spring Boot started in ${JOINER_BOOT:-?} s (its log); the join window includes it | |"
  echo "| streams restarted from a checkpoint | $STREAM_RETRIES (joiner's \`streaming ... from ... failed\` warnings; restreamed records are counted again above) | |"
  echo "| load client CPU | ${CLIENT_CPU}% of one CPU over the mixed load (the JDK HttpClient client shares the machine) | |"
  echo "| cleanup of the old nodes | $([ -n "$CLEANUP_DONE" ] && echo "done on every node $(calc "$CLEANUP_DONE / 1000") s after the join" || echo "still pending at the end of the after window, or not observed") | |"
  echo
  echo "Per 5 s (start in seconds since the joiner's process started; latencies in ms; \"bad\": not PUT 201 / GET 200;"
  echo "node 0's view at the end of the 5 s):"
  echo
  echo "| t s | requests | p50 | p99 | max | bad | node 0 |"
  echo "|---|---|---|---|---|---|---|"
  timeline
  echo
  echo "Node 0's view, polled every 0.25 s (seconds since the joiner's process started):"
  echo
  echo '```'
  awk '{ t = $1 / 1000; $1 = ""; printf "%7.1f s %s\n", t, $0 }' "$PHASES"
  echo '```'
  echo
  echo "The joiner's membership log lines:"
  echo
  echo '```'
  grep -E 'cluster view epoch|joining the cluster|join not started|streaming|membership change|cleanup' "$JOINER_LOG" \
    | short_log | cut -c1-250 | head -40 || true
  echo '```'
  echo
  echo "The old nodes' cleanup lines, then every node's WARN and ERROR lines, grouped (numbers as N):"
  echo
  echo '```'
  grep -h 'cleanup after the change' "$OUT"/node-[012]-*.log | short_log | cut -c1-200 || true
  for i in 0 1 2 3; do
    echo "node $i ($([ "$i" = 3 ] && echo joiner || echo old), ${PORTS[$i]}):"
    warnings "$OUT/node-$i-${PORTS[$i]}.log" || true
  done
  echo '```'
} >"$REPORT"
cat "$REPORT"
if [ "$RESULTS" = true ]; then
  cp "$REPORT" "$ROOT/gatling/results/$STARTED_AT-join-benchmark.md"
  log "report copied to gatling/results/$STARTED_AT-join-benchmark.md"
fi
