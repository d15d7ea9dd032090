#!/usr/bin/env python3
"""Where the build time of one target goes, from ninja's logs (docs/build_time.md).

usage: bench/build_times.py BUILD_DIR [TARGET] [--logs LOG...] [--top N]

The objects TARGET (default sfumato) compiles come from `ninja -C BUILD_DIR -t commands TARGET`;
their compile times from BUILD_DIR/.ninja_log and any other logs given (other build trees of the
same sources). A log line is one step's wall time; with ccache most lines are cache hits, so a
step counts as a compile only above --min seconds, and an object's figure is the median of its
compiles over all logs. Wall times of builds that ran beside others are upper bounds of CPU time.
"""
import argparse
import collections
import os
import statistics
import subprocess


def target_objects(build, target):
    out = subprocess.run(["ninja", "-C", build, "-t", "commands", target], check=True, capture_output=True,
                         text=True).stdout
    objs = []
    for line in out.splitlines():
        words = line.split()
        if " -c " in line and "-o" in words:
            objs.append(words[words.index("-o") + 1])
    return objs


def read_log(path):
    steps = collections.defaultdict(list)
    with open(path) as f:
        for line in f:
            if line.startswith("#"):
                continue
            start, end, _, out, _ = line.rstrip("\n").split("\t")
            steps[out].append((int(end) - int(start)) / 1000.0)
    return steps


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("target", nargs="?", default="sfumato")
    ap.add_argument("--logs", nargs="*", default=[])
    ap.add_argument("--top", type=int, default=15)
    ap.add_argument("--min", type=float, default=0.7, help="seconds: shorter steps are cache hits")
    a = ap.parse_args()
    objs = target_objects(a.build, a.target)
    times = collections.defaultdict(list)
    for log in [os.path.join(a.build, ".ninja_log")] + a.logs:
        for out, ts in read_log(log).items():
            times[out] += [t for t in ts if t >= a.min]
    known = {o: statistics.median(times[o]) for o in objs if times.get(o)}
    total = sum(known.values())
    by_dir = collections.Counter()
    for o, t in known.items():
        by_dir[o.split("/")[0]] += t
    print(f"{a.target}: {len(objs)} translation units, {len(known)} with a compile in the logs, "
          f"{total:.0f} s of compile time in all (median per object)")
    print("\nby directory: " + ", ".join(f"{d} {t:.0f} s" for d, t in by_dir.most_common()))
    print(f"\n| # | translation unit | s (median) | compiles |\n|---|---|---|---|")
    for i, (o, t) in enumerate(sorted(known.items(), key=lambda kv: -kv[1])[:a.top], 1):
        src = o.split("CMakeFiles/", 1)[0] + o.split(".dir/", 1)[-1].removesuffix(".o")
        print(f"| {i} | {src} | {t:.1f} | {len(times[o])} |")
    missing = [o for o in objs if o not in known]
    if missing:
        print(f"\nno compile in the logs (cache hits only): {len(missing)}")


if __name__ == "__main__":
    main()
