#!/usr/bin/env bash
# Simulation speed of a real profiler trace (issue 29): imports a PyTorch-profiler (Kineto) trace
# and replays it on 910B-like in timing mode with --trace off, exact (--reuse-timing off) and with
# timing re-use (auto), printing the simulated time and the process's CPU seconds (user + sys;
# on a shared machine the wall figure moves with the load, the CPU figure much less).
# The traces are public test data, not in this repository: HolisticTraceAnalysis
# tests/data/trace_diff/control/control.json.gz (6 steps, 6,978 kernels) or pytorch/kineto
# tb_plugin/samples/resnet50_num_workers_0/worker0.pt.trace.json.gz (docs/calibration.md).
# Usage: bench/kineto_replay.sh TRACE.json.gz [build-dir] [steps (0: all)] [modes (default "off auto")]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
trace="${1:?usage: bench/kineto_replay.sh TRACE.json.gz [build-dir] [steps] [modes]}"
build="${2:-$root/build}"
steps="${3:-0}"
modes="${4:-off auto}"
sf="$build/bin/sfumato"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
step_opt=()
[ "$steps" != 0 ] && step_opt=(--steps "$steps")
"$sf" import kineto "$trace" -o "$tmp/w.json" "${step_opt[@]}" > "$tmp/import.log" 2>&1 ||
    { cat "$tmp/import.log"; exit 1; }
kernels=$(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))['tasks']))" "$tmp/w.json")
for mode in $modes; do
    /usr/bin/time -f "%e %U %S %M" -o "$tmp/time" "$sf" replay "$tmp/w.json" \
        --config "$root/configs/ascend910b-like.ini" --mode timing --trace off --reuse-timing "$mode" \
        --out "$tmp/o_$mode" > "$tmp/log_$mode" 2>&1 || { cat "$tmp/log_$mode"; exit 1; }
    read -r wall user sys rss < <(tail -1 "$tmp/time")
    total=$(grep -m1 -E '^ *total:' "$tmp/log_$mode" | xargs)
    reuse=$(grep -m1 -E 'reuse-timing' "$tmp/log_$mode" | sed 's/ (.*//' | xargs || true)
    printf '%s, %s tasks, --reuse-timing %-4s | %s | %s | %.1f s CPU, %.1f s wall, %.0f MiB\n' \
        "$(basename "$trace")" "$kernels" "$mode" "$total" "${reuse:-}" "$(echo "$user + $sys" | bc)" "$wall" \
        "$(echo "$rss / 1024" | bc)"
done
