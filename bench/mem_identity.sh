#!/usr/bin/env bash
# Bit-identity check for memory-system speed work: runs a fixed set of membench and kernel
# commands and prints their summary.json figures (wall-clock fields dropped), one line per
# figure. Diff the output of two builds: any change in a simulated figure is a behaviour change.
# Usage: bench/mem_identity.sh [build-dir] > figures.txt
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build}"
sf="$build/bin/sfumato"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
n=0
run() {
    n=$((n + 1))
    "$sf" "$@" --trace off --out "$out/$n" >/dev/null 2>&1 || { echo "FAILED: $*"; return; }
    python3 - "$out/$n/summary.json" "$*" <<'PY'
import json, sys
drop = ("wall", "host", "seconds", "speed", "per_s", "mips", "elapsed", "date", "time_s", "out")
def walk(p, v):
    if isinstance(v, dict):
        for k in sorted(v):
            if any(d in k.lower() for d in drop): continue
            walk(f"{p}.{k}", v[k])
    elif isinstance(v, list):
        for i, x in enumerate(v): walk(f"{p}[{i}]", x)
    else:
        print(f"{sys.argv[2]} :: {p} = {v!r}")
walk("", json.load(open(sys.argv[1])))
PY
}
for cfg in tiny ascend910-like ascend910b-like; do
    c="$root/configs/$cfg.ini"
    for op in read write copy; do
        run membench --config "$c" --mode timing --pattern seq --op "$op" --bytes 8M
        run membench --config "$c" --mode timing --pattern random --op "$op" --bytes 4M
        run membench --config "$c" --mode timing --pattern stride:4096 --op "$op" --bytes 4M
    done
done
# Past the 910B-like L2 (192 MiB): evictions, dirty write-backs, write-queue back-pressure.
run membench --config "$root/configs/ascend910b-like.ini" --mode timing --pattern seq --op write --bytes 320M
run membench --config "$root/configs/ascend910b-like.ini" --mode timing --pattern seq --op read --bytes 256M
run membench --config "$root/configs/ascend910-like.ini" --mode timing --pattern random --op copy --bytes 64M --cores 8
run kernel add --n 1048576 --dtype fp16 --config "$root/configs/tiny.ini" --buffers 1 --mode timing
run kernel add --n 1048576 --dtype fp16 --config "$root/configs/tiny.ini" --buffers 2 --mode timing
run kernel matmul --m 1024 --n 1024 --k 1024 --config "$root/configs/ascend910b-like.ini" --mode timing
