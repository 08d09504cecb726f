#!/usr/bin/env bash
# Builds the JVM's cache for target/dht.jar from a training run under load, for the start-up and warm-up benchmarks:
# on JDK 25 and later an AOT cache (JEP 483/514/515: classes loaded and linked, and the method profiles of the
# training run; -XX:AOTCacheOutput), on JDK 17-24 a CDS archive of the loaded classes (-XX:ArchiveClassesAtExit).
# Both work only with the jar in Spring Boot's extracted form (java -Djarmode=tools -jar dht.jar extract), which this
# writes beside the cache. The training: a 3-node cluster of the extracted jar (the first node records), wrk PUTs
# and then GETs at 2/3 spread over the nodes (coordinator and replica paths), DELETEs, a range read, the status and
# the actuator's metrics; then the recording node is stopped gracefully and writes the cache on its exit.
# See gatling/README.md, "aot-cache.sh".
#
# usage: gatling/aot-cache.sh [options]; prints the JVM options and jar to start a node with the cache
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
GATLING_POM="$ROOT/gatling/pom.xml"
# shellcheck source=gatling/bench-common.sh
. "$ROOT/gatling/bench-common.sh"    # log, start_nodes, cleanup, ...

SECONDS_PER_METHOD=30
CONNECTIONS=32
KEYS=20000
VALUE_SIZE=1024
NODE_HEAP=512m
OUT=""
READY_TIMEOUT=${READY_TIMEOUT:-300}

usage() {
  cat <<EOF
usage: gatling/aot-cache.sh [options]

  --seconds S      seconds of PUT load, then of GET load, in the training (default $SECONDS_PER_METHOD)
  --node-heap SIZE -Xms and -Xmx of the training nodes (default $NODE_HEAP; start the trained nodes with the same)
  --out DIR        where the extracted jar (DIR/app/dht.jar, named as the jar) and the cache (DIR/dht.aot or DIR/dht.jsa) go
                   (default gatling/target/aot-cache/<java feature version>)

The JDK is \`java\` from PATH: PATH=/usr/lib/jvm/temurin-25-jdk-amd64/bin:\$PATH builds an AOT cache for JDK 25.
A cache serves only the JDK that built it and the jar it was built from.
EOF
}

while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) SECONDS_PER_METHOD="$2"; shift ;;
    --node-heap) NODE_HEAP="$2"; shift ;;
    --out) OUT="$2"; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
  shift
done
command -v wrk >/dev/null || { echo "wrk not found (Debian: apt-get install wrk)" >&2; exit 2; }
[ -n "${NODE_JAR:-}" ] || build_dht_jar_if_missing
FEATURE=$(java -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p')
OUT="${OUT:-$ROOT/gatling/target/aot-cache/$FEATURE}"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
install_traps

rm -rf "$OUT/app" "$OUT/dht.aot" "$OUT/dht.jsa"
java -Djarmode=tools -jar "${NODE_JAR:-$ROOT/target/dht.jar}" extract --destination "$OUT/app" >"$OUT/extract.log" 2>&1 \
  || { cat "$OUT/extract.log" >&2; exit 1; }
APP_JAR=$(find "$OUT/app" -maxdepth 1 -name '*.jar' | head -1)   # extract names it after the jar it was given
if [ "$FEATURE" -ge 25 ]; then
  CACHE="$OUT/dht.aot"; FIRST_NODE_JVM_OPTS=("-XX:AOTCacheOutput=$CACHE"); USE="-XX:AOTCache=$CACHE"
else
  CACHE="$OUT/dht.jsa"; FIRST_NODE_JVM_OPTS=("-XX:ArchiveClassesAtExit=$CACHE"); USE="-XX:SharedArchiveFile=$CACHE"
fi
log "training on Java $FEATURE: a 3-node cluster of $APP_JAR, the first node with ${FIRST_NODE_JVM_OPTS[*]}"
CLEANUP_DIRS+=("$OUT/data")
NODE_JAR="$APP_JAR" start_nodes "$OUT" 3 "$OUT/data"
hosts=$(echo "$URLS" | sed 's#http://##g')
for method in PUT GET; do
  WRK_METHOD="$method" WRK_KEYS="$KEYS" WRK_VALUE_SIZE="$VALUE_SIZE" WRK_REPLICAS=2/3 WRK_HOSTS="$hosts" WRK_THREADS=3 \
    wrk -t3 -c"$CONNECTIONS" -d"${SECONDS_PER_METHOD}s" -s "$ROOT/gatling/wrk/entity.lua" "${URLS%%,*}/" \
    >"$OUT/training-$method.txt" 2>&1 || { cat "$OUT/training-$method.txt" >&2; exit 1; }
  log "  $method: $(sed -n 's/^Requests\/sec: *//p' "$OUT/training-$method.txt") requests/s"
done
for url in ${URLS//,/ }; do   # each node in turn as coordinator, its own keys (a DELETE, a GET of the tombstone)
  for i in $(seq "$((RANDOM % 500))" 500 "$KEYS"); do
    curl -sf -o /dev/null -X DELETE "$url/v0/entity?id=k$i&replicas=2/3" || true
    curl -sf -o /dev/null "$url/v0/entity?id=k$i&replicas=2/3" || true
  done
  for i in $(seq 1 10); do curl -sf -o /dev/null "$url/v0/entities?start=k$i&end=k$((i + 1))" || true; done
  curl -sf -o /dev/null "$url/v0/status" || true
  curl -sf -o /dev/null "$url/actuator/prometheus" || true
done
log "stopping the recording node; it writes $CACHE on its exit"
kill -TERM -- "-${PIDS[0]}"
for _ in $(seq 1 600); do kill -0 "${PIDS[0]}" 2>/dev/null || break; sleep 0.5; done
[ -s "$CACHE" ] || { log "no cache written; see ${LOGS[0]}"; exit 1; }
log "wrote $CACHE ($(du -h "$CACHE" | cut -f1)); start a node with it: java $USE -jar $APP_JAR"
echo "$USE -jar $APP_JAR"
