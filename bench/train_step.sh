#!/usr/bin/env bash
# Simulation speed of a data-parallel training step (issue 13's budget: <= 60 s wall):
# `sfumato train-step` of ResNet-50 on the 8-chip 910B-like system, batch 32 per chip, timing mode,
# trace off, overlap on and off; prints the step figures with the process's wall and CPU seconds
# (on a shared machine the wall figure moves with the load, the CPU figure much less).
# Every rank's compute is simulated (--simulate auto = all); the figures docs/calibration.md quotes
# from before session 21 simulated rank 0's only: pass --simulate one for them.
# Usage: bench/train_step.sh [build-dir] [batch] [extra sfumato options...]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build}"
batch="${2:-32}"
shift $(( $# > 2 ? 2 : $# ))
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
for overlap in on off; do
    /usr/bin/time -f "%e %U %S %M" -o "$tmp/time" "$build/bin/sfumato" train-step zoo:resnet50 \
        --system "$root/configs/system-8x910b-like.ini" --batch "$batch" --mode timing --overlap "$overlap" \
        --trace off --out "$tmp/o_$overlap" "$@" > "$tmp/log_$overlap" 2>&1 || { cat "$tmp/log_$overlap"; exit 1; }
    read -r wall user sys rss < <(tail -1 "$tmp/time")
    step=$(grep -m1 -E '^ *step' "$tmp/log_$overlap" || true)
    exposed=$(grep -m1 'exposed communication share' "$tmp/log_$overlap" || true)
    printf 'resnet50 8x910b-like batch %s overlap %-3s | %s | %s | %.1f s wall, %.1f s CPU, %.0f MiB\n' \
        "$batch" "$overlap" "$(echo "$step" | xargs)" "$(echo "$exposed" | xargs)" "$wall" \
        "$(echo "$user + $sys" | bc)" "$(echo "$rss / 1024" | bc)"
done
