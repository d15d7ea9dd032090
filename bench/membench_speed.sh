#!/usr/bin/env bash
# Simulation speed of the memory system: `sfumato membench` moving 4 GiB (sequential reads, all
# cores) through the 910B-like memory system, reported as simulated GB per wall second
# (whole-process wall time). Usage: bench/membench_speed.sh [build-dir] [bytes] [exact|bulk]
# (the third: chip.mem.service, docs/speed.md "Bulk memory mode"; default the preset's, exact)
# The memory system takes a second host thread when one is free (chip.mem.threads = auto): run it on an
# otherwise idle machine; SFUMATO_MEM_THREADS=1 or 2 in the environment fixes the choice.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build}"
bytes="${2:-4G}"
service=()
[ -n "${3:-}" ] && service=(--set "chip.mem.service=$3")
out="$(mktemp -d)"
start=$(date +%s.%N)
# CPU seconds too: on a shared machine the wall figure moves with the load, user time much less.
/usr/bin/time -f "%U %S" -o "$out/cpu" "$build/bin/sfumato" membench --config "$root/configs/ascend910b-like.ini" --pattern seq --op read \
    --bytes "$bytes" --trace off --mode timing "${service[@]}" --out "$out" 2>/dev/null
end=$(date +%s.%N)
python3 - "$out/summary.json" "$start" "$end" "$out/cpu" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
wall = float(sys.argv[3]) - float(sys.argv[2])
cpu = sum(float(x) for x in open(sys.argv[4]).read().split()[-2:])
gb = s["bytes"] / 1e9
threads = s.get("mem_threads", 1)
print(f"membench seq read 910B-like ({s['mem_service']}, {threads} thread{'s' if threads > 1 else ''}): {gb:.2f} GB simulated in {wall:.2f} s wall "
      f"(process) = {gb / wall:.2f} GB/s of simulated traffic per wall second; "
      f"{s['bytes'] / s['request_bytes'] / wall / 1e6:.2f} M {s['request_bytes']}-B requests/s; "
      f"{cpu:.2f} CPU s = {gb / cpu:.2f} GB per CPU second")
PY
rm -rf "$out"
