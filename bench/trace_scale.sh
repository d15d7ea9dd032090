#!/usr/bin/env bash
# Traces at scale: one run that writes >= 10 million instruction events (`--trace instr`), then
# `sfumato trace summarize` on the file. Reports the trace's size and event count, and the wall
# time and peak memory (GNU time's maximum resident set) of both steps.
#   bench/trace_scale.sh [OUT_DIR] [N]     (N: elements of the add; default 167772160)
# The kernel is `add` on ascend910b-like in timing mode with a 256-element tile on 48 vector
# cores: about 16 instruction slices per 1024 elements after the writer merges touching runs,
# so the default N gives a little over 10 million events (a quarter of them instruction slices,
# the rest flag arrows and track metadata). Needs about 2 GB in $TMPDIR (the trace and, while it
# is written, the writer's spill file); e.g. TMPDIR=/dev/shm on a machine with RAM to spare.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="${SFUMATO_BIN:-$root/build/bin/sfumato}"
out="${1:-${TMPDIR:-/tmp}/sfumato_trace_scale}"
n="${2:-167772160}"
mkdir -p "$out"
run() {  # label, command...
  local label="$1"; shift
  /usr/bin/time -v "$@" > "$out/$label.out" 2> "$out/$label.time"
  local wall rss
  wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$out/$label.time")
  rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$out/$label.time")
  printf '%-10s wall %s, peak RSS %.1f MiB\n' "$label" "$wall" "$(echo "$rss / 1024" | bc -l)"
}
run simulate nice "$bin" kernel add --n "$n" --tile 256 --block-dim 48 --config "$root/configs/ascend910b-like.ini" \
  --mode timing --trace instr --out "$out/run"
tail -n 3 "$out/simulate.out" | head -n 2
events=$(grep -c '"ph":' "$out/run/trace.json" || true)
slices=$(grep -c '"ph":"X"' "$out/run/trace.json" || true)
printf 'trace.json %s bytes, %s events (%s slices)\n' "$(stat -c %s "$out/run/trace.json")" "$events" "$slices"
run summarize nice "$bin" trace summarize "$out/run/trace.json"
head -n 1 "$out/summarize.out"
