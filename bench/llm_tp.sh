#!/usr/bin/env bash
# Tensor-parallel LLM figures and simulation speed (issue 24): `sfumato llm` of llama2-70b with
# --tp 8 on the 8 x 910B-like system, prefill 1024 tokens then 8 decode steps at batch 16,
# timing mode, trace off (every chip's kernels: --simulate auto = all; the figures docs/llm.md quotes
# from before session 21 ran chip 0's kernels only: pass --simulate one for them).
# Prints TTFT, TPOT, tokens/s, chip 0's communication share and the process's wall and CPU
# seconds, and the wall time per decode step from a second run with --decode 1 (the speed
# target: a TP8 decode step at batch 16 in <= 30 s wall).
# Usage: bench/llm_tp.sh [build-dir] [extra sfumato options...]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build}"
shift $(( $# > 0 ? 1 : 0 ))
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
run() {
    local decode="$1"
    shift
    /usr/bin/time -f "%e %U %S %M" -o "$tmp/time" "$build/bin/sfumato" llm "$root/configs/llm/llama2-70b.json" \
        --system "$root/configs/system-8x910b-like.ini" --tp 8 --prefill 1024 --decode "$decode" --batch 16 \
        --mode timing --trace off "$@" > "$tmp/log" 2>&1 || { cat "$tmp/log"; exit 1; }
    cat "$tmp/log"
    read -r wall user sys rss < <(tail -1 "$tmp/time")
    printf 'decode %s: %.1f s wall, %.1f s CPU, %.0f MiB\n' "$decode" "$wall" "$(echo "$user + $sys" | bc)" \
        "$(echo "$rss / 1024" | bc)"
    echo "$wall" > "$tmp/wall.$decode"
}
run 8 "$@"
run 0 "$@"
printf 'wall per decode step: %.1f s (runs with --decode 8 and 0)\n' \
    "$(echo "($(cat "$tmp/wall.8") - $(cat "$tmp/wall.0")) / 8" | bc -l)"
