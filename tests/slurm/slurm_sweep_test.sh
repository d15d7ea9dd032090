#!/usr/bin/env bash
# A real single-node Slurm for the sweep's Slurm backend (run by CTest; needs root and Debian's
# slurm-wlm and munge, which scripts/deps installs). Starts munged, slurmctld and slurmd from a
# private directory (own munge socket and key, generated slurm.conf, free ports, no systemd,
# proctrack/linuxproc, task/none, no accounting), then:
#   1. runs a small sweep with the local backend and the same sweep through Slurm, and checks
#      that the two tables hold identical figures;
#   2. runs it through Slurm again into a new directory, cancels one array task while it is
#      pending, checks that the sweep reports that point as cancelled (exit 1), and that a rerun
#      submits only that point and completes the table, again identical to the local one.
# Everything it started is stopped on exit, also on failure. Every wait has a time limit.
# usage: slurm_sweep_test.sh SFUMATO_BINARY SOURCE_DIR OUTPUT_DIR
set -euo pipefail
SFUMATO=$1
SRC=$2
OUT=$3
PY=/usr/bin/python3

if [ "$(id -u)" -ne 0 ]; then echo "SKIP: the single-node Slurm runs as root"; exit 77; fi
for b in munged slurmctld slurmd sbatch squeue scontrol scancel sinfo; do
  command -v "$b" >/dev/null || { echo "SKIP: $b not installed (scripts/deps installs slurm-wlm and munge)"; exit 77; }
done

D=$(mktemp -d /tmp/sfumato-slurm.XXXXXX)
mkdir -p "$OUT"
export SLURM_CONF=$D/slurm.conf
started=0
# Overall limit, below CTest's (600 s), so that the cleanup below always runs: the watchdog
# ends the running step (this shell's children) and then this shell (its TERM trap exits).
LIMIT=${SFUMATO_SLURM_TEST_LIMIT:-540}
( sleep "$LIMIT" </dev/null >/dev/null 2>&1 && { echo "FAIL: the test ran past its limit of $LIMIT s"; kill -TERM $$; pkill -TERM -P $$; } ) 2>/dev/null &
watchdog=$!
cleanup() {
  local rc=$?
  set +e
  pkill -TERM -P "$watchdog" 2>/dev/null  # its sleep: the watchdog then ends without firing
  if [ "$started" = 1 ]; then timeout 10 scontrol shutdown >/dev/null 2>&1; fi
  for f in "$D/slurmd.pid" "$D/slurmctld.pid" "$D/munge/munged.pid"; do
    [ -s "$f" ] || continue
    pid=$(cat "$f")
    kill "$pid" 2>/dev/null
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null
  done
  cp "$D"/*.log "$D"/munge/munged.log "$OUT"/ 2>/dev/null
  rm -rf "$D"
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

fail() { echo "FAIL: $*"; exit 1; }

# --- munge: own key, socket and pid file ---------------------------------------------------
mkdir -p "$D/munge" "$D/state" "$D/spool"
chmod 755 "$D/munge"
dd if=/dev/urandom of="$D/munge.key" bs=1024 count=1 status=none
chmod 600 "$D/munge.key"
timeout 20 munged --force --socket="$D/munge/munge.socket" --key-file="$D/munge.key" \
  --log-file="$D/munge/munged.log" --pid-file="$D/munge/munged.pid" --seed-file="$D/munge/munged.seed"

# --- slurm.conf: free ports, this machine's CPUs ---------------------------------------------
read -r CTLD_PORT SLURMD_PORT < <($PY -c '
import socket
s=[socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
NODE=sfnode
cat > "$SLURM_CONF" <<CONF
ClusterName=sfumato-test
SlurmctldHost=localhost(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$D/munge/munge.socket
StateSaveLocation=$D/state
SlurmdSpoolDir=$D/spool
SlurmctldPidFile=$D/slurmctld.pid
SlurmdPidFile=$D/slurmd.pid
SlurmctldLogFile=$D/slurmctld.log
SlurmdLogFile=$D/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
MinJobAge=600
NodeName=$NODE NodeAddr=127.0.0.1 CPUs=$(nproc) RealMemory=1000 State=UNKNOWN
PartitionName=sweeptest Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
CONF
started=1
timeout 30 slurmctld -i
timeout 30 slurmd -N "$NODE"
for i in $(seq 60); do
  state=$(timeout 10 sinfo -h -N -o '%T' 2>/dev/null || true)
  [ "$state" = idle ] && break
  [ "$i" = 60 ] && fail "the Slurm node did not come up (state '$state'; logs in $OUT)"
  sleep 0.5
done
echo "slurm up: slurmctld port $CTLD_PORT, slurmd port $SLURMD_PORT, node $NODE"

# --- the sweep ---------------------------------------------------------------------------------
W=$D/work
mkdir -p "$W"
cd "$W"
cat > spec.ini <<SPEC
[sweep]
command = kernel matmul --m 128 --n 128 --k 128 --dtype fp16 --mode timing --trace off
config = $SRC/configs/tiny.ini
timeout = 120
[grid]
chip.hbm.data_rate_mtps = 1600, 3200
[zip]
arg.m = 128, 256
arg.n = 128, 256
[slurm]
partition = sweeptest
time = 5
mem = 100M
cpus_per_task = 1
max_parallel = 1
poll_seconds = 0.5
SPEC

# Figures of two tables: every column but host-dependent ones (wall time, error text).
compare() {
  $PY - "$1" "$2" <<'PYCODE'
import csv, sys
def rows(p):
    with open(p) as f:
        r = list(csv.DictReader(f))
    for x in r:
        x.pop("wall_seconds", None); x.pop("error", None)
    return r
a, b = rows(sys.argv[1]), rows(sys.argv[2])
if not a or a != b:
    print("tables differ:\n", a, "\n", b); sys.exit(1)
if any(x["status"] != "done" for x in a): print("not every point is done"); sys.exit(1)
print("identical figures:", len(a), "points,", len(a[0]), "columns")
PYCODE
}

timeout 300 "$SFUMATO" sweep spec.ini --out local -j 2 || fail "local sweep"
timeout 300 "$SFUMATO" sweep spec.ini --out slurm1 --backend slurm || fail "slurm sweep"
compare local/sweep.csv slurm1/sweep.csv || fail "slurm and local figures differ"
grep -q -- "--array=0-3%1" slurm1/slurm/sweep.sbatch || fail "job array script: $(cat slurm1/slurm/sweep.sbatch)"
ls slurm1/slurm/*_0.out >/dev/null || fail "no array task output"
cp slurm1/slurm/sweep.sbatch "$OUT"/

# A rerun submits nothing.
timeout 120 "$SFUMATO" sweep spec.ini --out slurm1 --backend slurm > rerun.txt 2>&1 || fail "rerun: $(cat rerun.txt)"
grep -q "0 run now" rerun.txt || fail "rerun ran points: $(cat rerun.txt)"

# Cancel the last array task while it waits behind the throttle (max_parallel = 1).
timeout 300 "$SFUMATO" sweep spec.ini --out slurm2 --backend slurm > cancel.txt 2>&1 &
sweep_pid=$!
for i in $(seq 200); do
  [ -s slurm2/slurm/job.json ] && break
  [ "$i" = 200 ] && fail "no job submitted: $(cat cancel.txt)"
  sleep 0.1
done
job=$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["job_id"])' slurm2/slurm/job.json)
timeout 10 scancel "${job}_3" || fail "scancel"
rc=0
wait $sweep_pid || rc=$?
cat cancel.txt
[ "$rc" = 1 ] || fail "a sweep with a cancelled task exits 1, not $rc"
$PY - slurm2/sweep.csv <<'PYCODE' || fail "cancelled point not reported"
import csv, sys
r = list(csv.DictReader(open(sys.argv[1])))
st = [x["status"] for x in r]
assert st[:3] == ["done"] * 3 and st[3] == "cancelled", st
assert "CANCELLED" in r[3]["error"], r[3]["error"]
print("cancelled task reported:", r[3]["error"].splitlines()[0])
PYCODE
timeout 300 "$SFUMATO" sweep spec.ini --out slurm2 --backend slurm > resubmit.txt 2>&1 || fail "resubmission: $(cat resubmit.txt)"
cat resubmit.txt
grep -q "1 run now, 3 complete from before" resubmit.txt || fail "the rerun did not run exactly the cancelled point"
$PY -c 'import json,sys; i=json.load(open(sys.argv[1]))["indices"]; assert i == [3], i' slurm2/slurm/job.json || fail "resubmitted indices"
compare local/sweep.csv slurm2/sweep.csv || fail "figures after resubmission differ"
cp local/sweep.csv "$OUT"/local_sweep.csv
cp slurm2/sweep.csv "$OUT"/slurm_sweep.csv
echo "PASS"
