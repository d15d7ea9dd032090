#!/usr/bin/env bash
# Bit-identity check for work on the bulk memory service (chip.mem.service = bulk,
# docs/speed.md): every run of bench/mem_identity.sh's membench set plus the runs the bulk
# service's error tables quote (membench past the L2, the 64M and 32M adds, the 4096^3 matmul,
# ResNet-50), all with the bulk service, printing each run's summary.json figures and its stats.h5
# as text, one line per figure. Diff the output of two builds: any change is a behaviour change.
# Usage: bench/mem_identity_bulk.sh [build-dir] > figures.txt  (about 25 s of CPU)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build}"
sf="$build/bin/sfumato"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
extra=(--set chip.mem.service=bulk)
stats=1
stats_drop="wall\|host\|seconds"
. "$root/bench/mem_identity_lib.sh"
for cfg in tiny ascend910-like ascend910b-like; do
    c="$root/configs/$cfg.ini"
    for op in read write copy; do
        run membench --config "$c" --mode timing --pattern seq --op "$op" --bytes 8M
        run membench --config "$c" --mode timing --pattern random --op "$op" --bytes 4M
        run membench --config "$c" --mode timing --pattern stride:4096 --op "$op" --bytes 4M
    done
done
b="$root/configs/ascend910b-like.ini"
run membench --config "$b" --mode timing --pattern seq --op write --bytes 320M
run membench --config "$b" --mode timing --pattern seq --op read --bytes 1G
run membench --config "$b" --mode timing --pattern random --op read --bytes 64M
run membench --config "$b" --mode timing --pattern random --op copy --bytes 64M
run membench --config "$root/configs/ascend910-like.ini" --mode timing --pattern random --op copy --bytes 64M --cores 8
run kernel add --n 1048576 --dtype fp16 --config "$root/configs/tiny.ini" --buffers 2 --mode timing
run kernel add --n 65536 --dtype fp32 --config "$root/configs/tiny.ini" --mode functional --buffers 1
run kernel add --n 67108864 --dtype fp16 --config "$b" --mode timing
run kernel add --n 33554432 --dtype fp16 --config "$b" --mode timing
run kernel matmul --m 4096 --n 4096 --k 4096 --config "$b" --mode timing
run kernel softmax --rows 1024 --cols 1024 --config "$b" --mode timing
run run zoo:resnet50 --batch 1 --config "$b" --mode timing
