#!/usr/bin/env bash
# Pipeline-parallel LLM figures (issue 24): `sfumato llm` on the 8 x 910B-like system with --pp
# (and --tp inside the stages), timing mode, trace off: TTFT, TPOT, tokens/s, each chip's busy,
# communication and bubble shares, and the process's wall and CPU seconds. Default: Llama-2-7B
# in two stages, prefill 128, 4 decode steps, batch 16 (minutes on a 2-core machine); other
# plans by arguments, e.g. bench/llm_pp.sh build configs/llm/llama2-70b.json --pp 2 --tp 4.
# Usage: bench/llm_pp.sh [build-dir] [model] [sfumato options replacing --pp 2...]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build}"
model="${2:-llama2-7b}"
shift $(( $# > 2 ? 2 : $# ))
plan=("$@")
[ ${#plan[@]} -gt 0 ] || plan=(--pp 2)
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
/usr/bin/time -f "%e %U %S %M" -o "$tmp/time" nice "$build/bin/sfumato" llm "$model" \
    --system "$root/configs/system-8x910b-like.ini" "${plan[@]}" --prefill 128 --decode 4 --batch 16 \
    --mode timing --trace off > "$tmp/log" 2>&1 || { cat "$tmp/log"; exit 1; }
cat "$tmp/log"
read -r wall user sys rss < <(tail -1 "$tmp/time")
printf '%.1f s wall, %.1f s CPU, %.0f MiB\n' "$wall" "$(echo "$user + $sys" | bc)" "$(echo "$rss / 1024" | bc)"
