#!/usr/bin/env bash
# Bit-identity check for memory-system speed work: runs a fixed set of membench and kernel
# commands and prints their summary.json figures (wall-clock fields dropped), one line per
# figure. Diff the output of two builds: any change in a simulated figure is a behaviour change.
# `full` as the second argument adds the set the simulation-speed work is checked on: kernels
# (add, matmul, softmax, conv2d) on every preset, a collective, `run zoo:resnet50`, two training
# steps (the ResNet-50 one takes about a minute), runs with all-bank refresh, and every run's
# stats.h5 as text (`sfumato stats`).
# Usage: bench/mem_identity.sh [build-dir] [full] > figures.txt
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build}"
full="${2:-}"
sf="$build/bin/sfumato"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
extra=()
stats=""
if [ -n "$full" ]; then stats=1; fi
. "$root/bench/mem_identity_lib.sh"
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
[ -n "$full" ] || exit 0
c="$root/configs"
for cfg in tiny ascend910-like ascend910b-like; do
    run kernel add --n 65536 --dtype fp32 --config "$c/$cfg.ini" --mode functional --buffers 1
    run kernel matmul --m 512 --n 512 --k 512 --config "$c/$cfg.ini" --mode timing
    run kernel softmax --rows 1024 --cols 1024 --config "$c/$cfg.ini" --mode timing
    run kernel conv2d --n 1 --c 64 --h 28 --w 28 --k 64 --config "$c/$cfg.ini" --mode timing
    # All-bank refresh (the presets refresh per bank).
    sed -e 's/^refresh = per_bank/refresh = all_bank/' -e '/^tRFCSB/d' "$c/$cfg.ini" > "$out/$cfg-all-bank.ini"
    run kernel softmax --rows 1024 --cols 1024 --config "$out/$cfg-all-bank.ini" --mode timing
done
run membench --config "$out/ascend910b-like-all-bank.ini" --mode timing --pattern random --op copy --bytes 16M
run run zoo:resnet50 --batch 1 --config "$out/ascend910b-like-all-bank.ini" --mode timing
run collective --op all_reduce --bytes 4M --system "$c/system-8x910b-like.ini" --mode timing
run run zoo:resnet50 --batch 1 --config "$c/ascend910b-like.ini" --mode timing
run train-step "zoo:mlp?in=16&hidden=32&layers=2&classes=8" --system "$c/system-tiny.ini" \
    --set system.chips_per_server=2 --batch 4 --precision fp32
run train-step zoo:resnet50 --system "$c/system-8x910b-like.ini" --batch 1 --mode timing --overlap on
