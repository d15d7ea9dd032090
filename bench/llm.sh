#!/usr/bin/env bash
# LLM inference figures and simulation speed (issue 24): `sfumato llm` of llama2-7b on the
# 910B-like chip, prefill 1024 + 128 decode steps, timing mode, trace off, at batch 1, 8 and 32
# (timing re-use on, the default), then graph mode both at batch 1; prints TTFT, TPOT and
# tokens/s with the process's wall and CPU seconds (the speed target: batch 1 in <= 60 s wall).
# Usage: bench/llm.sh [build-dir] [model] [extra sfumato options...]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build}"
model="${2:-llama2-7b}"
shift $(( $# > 2 ? 2 : $# ))
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
run() {
    local tag="$1"
    shift
    /usr/bin/time -f "%e %U %S %M" -o "$tmp/time" "$build/bin/sfumato" llm "$model" \
        --config "$root/configs/ascend910b-like.ini" --prefill 1024 --decode 128 --mode timing --trace off "$@" \
        > "$tmp/log" 2>&1 || { cat "$tmp/log"; exit 1; }
    read -r wall user sys rss < <(tail -1 "$tmp/time")
    printf '%s %s | %s | %s | %s | %.1f s wall, %.1f s CPU, %.0f MiB\n' "$model" "$tag" \
        "$(grep -m1 'TTFT' "$tmp/log" | xargs)" "$(grep -m1 'TPOT' "$tmp/log" | xargs)" \
        "$(grep -m1 'graph mode' "$tmp/log" | xargs || true)" "$wall" "$(echo "$user + $sys" | bc)" "$(echo "$rss / 1024" | bc)"
}
for b in 1 8 32; do run "batch $b" --batch "$b" "$@"; done
run "batch 1 graph-mode both" --batch 1 --graph-mode both "$@"
