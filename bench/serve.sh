#!/usr/bin/env bash
# Serving figures and simulation speed (issue 25): `sfumato serve` of llama2-7b on the 910B-like
# chip, timing mode, trace off, timing re-use on (the default: kernels' and steps' re-use,
# docs/serve.md "Step-time re-use"), continuous batching with the default knobs. The speed target: 1000 Poisson requests (prompt 512, output 128) in <= 5 min
# wall. Prints the metrics lines with the process's wall and CPU seconds and peak memory.
# Usage: bench/serve.sh [build-dir] [requests] [rate] [extra sfumato options...]
#   bench/serve.sh build 1000 4        the speed target (long: run it when the machine is free)
#   bench/serve.sh build 16 8          the docs/serve.md figures
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build}"
n="${2:-1000}"
rate="${3:-4}"
shift $(( $# > 3 ? 3 : $# ))
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
/usr/bin/time -f "%e %U %S %M" -o "$tmp/time" "$build/bin/sfumato" serve llama2-7b \
    --config "$root/configs/ascend910b-like.ini" --generate "n=$n,rate=$rate,prompt=512,output=128,seed=1" \
    --trace off "$@" > "$tmp/log" 2>&1 || { cat "$tmp/log"; exit 1; }
read -r wall user sys rss < <(tail -1 "$tmp/time")
cat "$tmp/log"
printf 'llama2-7b serve n=%s rate=%s: %.1f s wall, %.1f s CPU, %.0f MiB\n' "$n" "$rate" "$wall" \
    "$(echo "$user + $sys" | bc)" "$(echo "$rss / 1024" | bc)"
