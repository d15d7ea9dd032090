#!/usr/bin/env bash
# Expert-parallel LLM figures and simulation speed (issue 24): `sfumato llm` of mixtral-8x7b with
# --ep 8 (one expert per chip, attention data parallel) on the 8 x 910B-like system, timing mode,
# trace off, every chip's kernels simulated. Prints TTFT, TPOT, tokens/s, each chip's
# communication share and rows dispatched, and the process's wall and CPU seconds.
# Usage: bench/llm_ep.sh [build-dir] [prefill] [decode] [batch] [extra sfumato options...]
# (defaults: prefill 128, decode 8, batch 8: the acceptance run of issue 24; on a loaded 2-vCPU
# machine it takes tens of minutes).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build}"
prefill="${2:-128}"
decode="${3:-8}"
batch="${4:-8}"
shift $(( $# > 4 ? 4 : $# ))
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
/usr/bin/time -f "%e %U %S %M" -o "$tmp/time" nice "$build/bin/sfumato" llm "$root/configs/llm/mixtral-8x7b.json" \
    --system "$root/configs/system-8x910b-like.ini" --ep 8 --prefill "$prefill" --decode "$decode" \
    --batch "$batch" --mode timing --trace off "$@" > "$tmp/log" 2>&1 || { cat "$tmp/log"; exit 1; }
cat "$tmp/log"
read -r wall user sys rss < <(tail -1 "$tmp/time")
printf 'wall %.1f s, CPU %.1f s, %.0f MiB\n' "$wall" "$(echo "$user + $sys" | bc)" "$(echo "$rss / 1024" | bc)"
