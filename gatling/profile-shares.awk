# gatling/profile.sh: reads async-profiler collapsed stacks ("frame;frame;...;leaf value"); output: share of the total by the leaf-most
# frame that names a known owner (our code, a library, GC, JIT), so a JDK or kernel frame counts for its caller
# usage: awk -f gatling/profile-shares.awk FILE.collapsed | sort -rn
function owner(f) {
  if (f ~ /^dev\/dht\/|^dev\.dht\./) return "dht (our code)"
  if (f ~ /leveldbjni|NativeDB|leveldb::|^org\/iq80/) return "LevelDB (JNI and native)"
  if (f ~ /micrometer|HdrHistogram|LatencyUtils/) return "metrics (Micrometer)"
  if (f ~ /caffeine/) return "row cache (Caffeine)"
  if (f ~ /^org\/springframework\//) return "Spring WebFlux / web"
  if (f ~ /^reactor\/netty\//) return "Reactor Netty"
  if (f ~ /^reactor\//) return "Reactor core"
  if (f ~ /^io\/netty\/handler\/codec\/http/) return "Netty HTTP codec"
  if (f ~ /^io\/netty\//) return "Netty transport and buffers"
  if (f ~ /::/ && f ~ /G1|GC|Garbage|Evacuat|Mark|Scavenge|Refine/) return "GC"    # JVM frames are C++ names
  if (f ~ /::/ && f ~ /CompileBroker|Compiler::|Compilation/) return "JIT compiler"
  if (f ~ /ThreadPoolExecutor|LockSupport|ForkJoin|Unsafe_Park|Unsafe_Unpark/) return "thread hand-offs (JDK pool, park/unpark)"
  return ""
}
{
  value = $NF; line = $0; sub(/ [0-9]+$/, "", line)
  k = split(line, f, ";"); who = ""
  for (i = k; i >= 1 && who == ""; i--) who = owner(f[i])
  if (who == "") who = "other (JVM, kernel, JDK without an owner)"
  share[who] += value; total += value
}
END { for (w in share) printf "%5.1f %%  %s\n", 100 * share[w] / total, w }
