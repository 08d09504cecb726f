#!/usr/bin/env python3
"""What a warming JVM compiles, deoptimizes and loads, from a JFR recording (gatling/warmup-curve.sh --node-jvm-opt
-XX:StartFlightRecording:settings=profile,compiler=all,class-loading=true,filename=DIR).

usage: gatling/jfr-warmup.py RECORDING.jfr [READY_UTC]   e.g. ... 2026-11-29T05:54:01 (times count from it; default
the first compilation). Prints per minute the compilations of C1 and C2 (count, seconds of compiler-thread wall
time, bytes of code) and the classes loaded and defined, then the longest compilations, the C2 seconds by package,
the deoptimizations by reason and method (a method deoptimized again and again is a deoptimization loop), the
compilation failures and the classes loaded after the start. Needs the JDK's `jfr` tool on PATH."""
import collections, datetime, json, re, subprocess, sys

EVENTS = "jdk.Compilation,jdk.Deoptimization,jdk.CompilationFailure,jdk.ClassLoad,jdk.ClassDefine"


def when(text):
    text = text.rstrip("Z")
    if "." in text:
        head, frac = text.split(".")
        text = head + "." + frac[:6]
    return datetime.datetime.fromisoformat(text)


def seconds(duration):
    m = re.match(r"PT(?:(\d+)H)?(?:(\d+)M)?([\d.]+)S", duration)
    return int(m.group(1) or 0) * 3600 + int(m.group(2) or 0) * 60 + float(m.group(3)) if m else 0.0


def method(m):
    return m["type"]["name"].replace("/", ".") + "." + m["name"]


def main():
    out = subprocess.run(["jfr", "print", "--json", "--events", EVENTS, sys.argv[1]], check=True,
                         capture_output=True, text=True).stdout
    events = json.loads(out)["recording"]["events"]
    by_type = collections.defaultdict(list)
    for e in events:
        by_type[e["type"]].append(e["values"])
    comp = by_type["jdk.Compilation"]
    start = when(sys.argv[2]) if len(sys.argv) > 2 else min(when(c["startTime"]) for c in comp)
    rel = lambda v: (when(v["startTime"]) - start).total_seconds()

    per_min = collections.defaultdict(collections.Counter)
    for c in comp:
        b = per_min[int(rel(c) // 60)]
        b[c["compiler"] + " n"] += 1
        b[c["compiler"] + " s"] += seconds(c["duration"])
        b[c["compiler"] + " kB"] += c["codeSize"] / 1024
    for kind in ("jdk.ClassLoad", "jdk.ClassDefine"):
        for v in by_type[kind]:
            per_min[int(rel(v) // 60)][kind] += 1
    print(f"{len(comp)} compilations; minutes from {start} (negative: before it)")
    print("minute  C1 n  C1 s  C1 kB   C2 n  C2 s  C2 kB  loaded defined")
    for m in sorted(per_min):
        b = per_min[m]
        print(f"{m:6d} {b['c1 n']:5.0f} {b['c1 s']:5.1f} {b['c1 kB']:6.0f} {b['c2 n']:5.0f} {b['c2 s']:5.1f} "
              f"{b['c2 kB']:6.0f} {b['jdk.ClassLoad']:7.0f} {b['jdk.ClassDefine']:7.0f}")

    print("\nlongest compilations (compiler-thread wall seconds, code bytes, inlined bytecode bytes, at s)")
    for c in sorted(comp, key=lambda c: -seconds(c["duration"]))[:15]:
        print(f"{seconds(c['duration']):6.2f} {c['compiler']} L{c['compileLevel']} {c['codeSize']:6d} "
              f"{c.get('inlinedBytes', 0):6d} {rel(c):+6.0f} {method(c['method'])}")

    packages = collections.Counter()
    for c in comp:
        if c["compiler"] == "c2":
            packages[".".join(method(c["method"]).split(".")[:3])] += seconds(c["duration"])
    print("\nC2 seconds by package")
    for name, s in packages.most_common(15):
        print(f"{s:7.1f} {name}")

    deopt = by_type["jdk.Deoptimization"]
    print(f"\n{len(deopt)} deoptimizations; by reason: "
          + ", ".join(f"{r} {n}" for r, n in collections.Counter(v["reason"] for v in deopt).most_common()))
    for (reason, name), n in collections.Counter((v["reason"], method(v["method"])) for v in deopt).most_common(10):
        print(f"{n:4d} {reason} {name}")
    for f in by_type["jdk.CompilationFailure"]:
        print("compilation failure:", f.get("failureMessage"))
    late = [v for v in by_type["jdk.ClassLoad"] if rel(v) > 0]
    print(f"\n{len(late)} classes loaded after {start}; first 20:")
    for v in late[:20]:
        print(f"{rel(v):+6.0f} {v['loadedClass']['name']}")


if __name__ == "__main__":
    main()
