#!/usr/bin/env bash
# A system split by chip over window-synchronised ranks (sim/window_sync.h) runs the same on any
# number of ranks: collectives on the tiny 4-chip system (full mesh: pushes, pulls, inline
# reductions) and on two servers of 8 (NIC -> switch -> NIC routes, a switch downlink counted on
# its receiving chip's rank), one loopback rank (--distributed on, no MPI) against mpirun -np 2
# (and -np 1 and 4, one chip per rank, for the mesh all-reduce): summary time, total cycles and every link's bytes and busy time identical. More ranks
# than chips exits 2 naming the count. A multi-device workload replayed split (replay --system:
# kernels on every chip, an all-reduce over four, an all-gather over two) gives every task the
# same times on 1, 2 and 4 ranks, in timing and functional mode. Functional mode split checks every output exactly and takes
# the cycles of timing mode. Exit 77 (skipped, the reason on stdout) for the MPI part
# when sfumato was built without MPI (or as the sanitizer build, which leaves MPI out) or mpirun
# is missing: the loopback runs still run.
# Usage: split_collective_test.sh SFUMATO SOURCE_DIR OUT_DIR HAVE_MPI(0|1)
set -euo pipefail
bin=$1 src=$2 out=$3 have_mpi=$4
rm -rf "$out" && mkdir -p "$out"
cd "$src"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
cases=(
  "tiny_ar_mesh|all_reduce --bytes 96KiB --system configs/system-tiny.ini --algo mesh"
  "tiny_ar_ring|all_reduce --bytes 64KiB --system configs/system-tiny.ini --algo ring"
  "tiny_a2a|all_to_all --bytes 32KiB --system configs/system-tiny.ini"
  "tiny_bcast|broadcast --bytes 48KiB --system configs/system-tiny.ini --root 2 --algo halving_doubling"
  "two_servers|all_reduce --bytes 256KiB --system configs/system-2x8x910b-like.ini --algo hierarchical --set comm.buffer_bytes=1MiB"
)
compare() {  # a b: the same simulated results
  /usr/bin/python3 - "$1" "$2" <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
keys = ["algo", "time_us", "total_cycles", "total_time_us", "algbw_gbps"]
bad = [k for k in keys if a[k] != b[k]]
la = [(l["link"], l["bytes"], l["wire_bytes"], l["busy_us"]) for l in a["links"]]
lb = [(l["link"], l["bytes"], l["wire_bytes"], l["busy_us"]) for l in b["links"]]
if la != lb: bad.append("links")
if sum(l[1] for l in la) == 0: bad.append("no link carried data")
if bad:
    print("differ:", bad, {k: (a.get(k), b.get(k)) for k in keys})
    sys.exit(1)
PY
}
cat > "$out/four.json" <<'JSON'
{"format": "sfumato-workload", "version": 2, "streams": [{"id": 0, "priority": 0}, {"id": 1, "priority": 0}],
 "tasks": [
   {"kind": "kernel", "device": 0, "stream": 0, "op": "add", "args": {"n": 65536, "dtype": "fp16"}},
   {"kind": "kernel", "device": 1, "stream": 0, "op": "add", "args": {"n": 32768, "dtype": "fp16"}},
   {"kind": "kernel", "device": 2, "stream": 0, "op": "add", "args": {"n": 65536, "dtype": "fp16"}},
   {"kind": "kernel", "device": 3, "stream": 1, "op": "add", "args": {"n": 16384, "dtype": "fp16"}},
   {"kind": "collective", "stream": 0, "op": "all_reduce", "count": 65536, "dtype": "fp16", "ranks": [0, 1, 2, 3]},
   {"kind": "collective", "stream": 1, "op": "all_gather", "count": 4096, "dtype": "fp16", "ranks": [3, 1]},
   {"kind": "kernel", "device": 2, "stream": 0, "op": "add", "args": {"n": 8192, "dtype": "fp16"}}]}
JSON
same_tasks() {  # a b: every task's issue, start and end cycle and the total
  /usr/bin/python3 - "$1" "$2" <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
assert a["tasks"] == b["tasks"] and a["total_cycles"] == b["total_cycles"], (a["tasks"], b["tasks"])
assert all(t["end_cycle"] > 0 for t in b["tasks"])
PY
}
for c in "${cases[@]}"; do
  name=${c%%|*} args=${c#*|}
  # shellcheck disable=SC2086
  "$bin" collective $args --mode timing --trace off --distributed on --out "$out/$name.loop" > "$out/$name.loop.txt"
  grep -q "split over 1 rank" "$out/$name.loop.txt"
done
# The workload replayed on one loopback rank: the reference of the split replays below.
"$bin" replay "$out/four.json" --system configs/system-tiny.ini --mode timing --trace off --distributed on --out "$out/replay.loop" > "$out/replay.loop.txt"
grep -q "split over 1 rank" "$out/replay.loop.txt"
# Functional mode on one loopback rank: every output exact.
"$bin" collective all_reduce --bytes 96KiB --system configs/system-tiny.ini --algo mesh --distributed on --trace off > "$out/func1.txt"
grep -q "check: passed" "$out/func1.txt"
# One loopback rank against the one-process run: the same algorithm and bytes on every link (the
# windows add a pull's request and completion trips and a rendezvous over the links, so times differ).
/usr/bin/python3 - "$bin" "$out" <<'PY'
import json, subprocess, sys
binp, out = sys.argv[1:3]
subprocess.run([binp, "collective", "all_reduce", "--bytes", "64KiB", "--system", "configs/system-tiny.ini", "--algo",
                "ring", "--mode", "timing", "--trace", "off", "--out", out + "/plain"], check=True, stdout=subprocess.DEVNULL)
a = json.load(open(out + "/plain/summary.json")); b = json.load(open(out + "/tiny_ar_ring.loop/summary.json"))
assert [l["bytes"] for l in a["links"]] == [l["bytes"] for l in b["links"]], "link bytes differ from the one-process run"
assert "split" not in a and b["split"]["ranks"] == 1 and b["split"]["windows"] > 0
PY
if [ "$have_mpi" != 1 ]; then echo "skipped: MPI part (sfumato built without MPI, or the sanitizer build, which leaves it out)"; exit 77; fi
if ! command -v mpirun >/dev/null; then echo "skipped: MPI part (no mpirun: install openmpi-bin)"; exit 77; fi
for c in "${cases[@]}"; do
  name=${c%%|*} args=${c#*|}
  nps="2"
  [ "$name" = tiny_ar_mesh ] && nps="1 2 4"
  for np in $nps; do
    # shellcheck disable=SC2086
    mpirun -np $np "$bin" collective $args --mode timing --trace off --out "$out/$name.np$np" > "$out/$name.np$np.txt"
    grep -q "split over $np rank" "$out/$name.np$np.txt"
    compare "$out/$name.loop/summary.json" "$out/$name.np$np/summary.json" || { echo "$name: -np $np differs from one rank"; exit 1; }
  done
done
# The workload replayed split: every task's times identical on 1, 2 and 4 ranks (functional on 4).
for np in 1 2 4; do
  mode=timing
  [ "$np" = 4 ] && mode=functional
  mpirun -np $np "$bin" replay "$out/four.json" --system configs/system-tiny.ini --mode $mode --trace off --out "$out/replay.np$np" > "$out/replay.np$np.txt"
  grep -q "split over $np rank" "$out/replay.np$np.txt"
  same_tasks "$out/replay.loop/summary.json" "$out/replay.np$np/summary.json" || { echo "replay: -np $np differs from one rank"; exit 1; }
done
# More ranks than chips: exit 2 naming both counts.
set +e
mpirun -np 5 "$bin" collective all_reduce --bytes 64KiB --system configs/system-tiny.ini --mode timing --trace off > "$out/np5.txt" 2>&1
rc=$?
set -e
[ "$rc" = 2 ] || { echo "-np 5 on 4 chips: exit $rc, expected 2"; cat "$out/np5.txt"; exit 1; }
grep -q "5 ranks for a system of 4 chips" "$out/np5.txt"
# Functional mode split: the packets carry their bytes; every rank's output checked exactly
# (each process checks its own ranks), in the cycles of timing mode.
for name in tiny_ar_mesh tiny_a2a; do
  args=$(printf '%s\n' "${cases[@]}" | grep "^$name|" | cut -d'|' -f2)
  # shellcheck disable=SC2086
  mpirun -np 2 "$bin" collective $args --mode functional --trace off --out "$out/$name.func2" > "$out/$name.func2.txt"
  grep -q "check: passed" "$out/$name.func2.txt" || { echo "$name: functional split check failed"; cat "$out/$name.func2.txt"; exit 1; }
  compare "$out/$name.loop/summary.json" "$out/$name.func2/summary.json" || { echo "$name: functional split differs from timing"; exit 1; }
done
echo "split collectives and replays: identical on 1, 2 and 4 ranks"
