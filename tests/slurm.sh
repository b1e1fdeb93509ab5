#!/usr/bin/env bash
# slurm.sh - the Slurm tier (not in `make test`; .ci/run runs it): installs
# slurm-wlm and munge through scripts/deps.sh (TRENCH_DEPS_SLURM=1), starts
# munged, slurmctld and slurmd on this machine with a generated one-node
# slurm.conf in a temporary folder, runs examples/slurm/fuzz.sbatch as a
# 4-task array, merges the shards and checks that the merged log and
# findings equal a one-process campaign's on the same seed; then stops the
# daemons. Must run as root (the daemons' user).
# Usage: tests/slurm.sh TRENCH TESTS_DIR. Ends with "N passed, N failed".
set -u
trench=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
tests=$(cd "$2" && pwd)
root=$(cd "$tests/.." && pwd)
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
finish() { echo "$pass passed, $fail failed"; [ $fail = 0 ]; exit; }
[ "$(id -u)" = 0 ] || { bad "the Slurm tier runs as root"; finish; }
TRENCH_DEPS_SLURM=1 bash "$root/scripts/deps.sh" || { bad "cannot install slurm-wlm and munge"; finish; }
tmp=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2> /dev/null; done
  for p in "${pids[@]}"; do wait "$p" 2> /dev/null; done
  [ -f "$tmp/munged.pid" ] && kill "$(cat "$tmp/munged.pid")" 2> /dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
node=$(hostname -s)
cpus=$(nproc)
mkdir -p "$tmp/state" "$tmp/spool" "$tmp/munge" "$tmp/out"
# munge: a key of our own and a socket in the folder.
dd if=/dev/urandom of="$tmp/munge/munge.key" bs=1024 count=1 2> /dev/null
chmod 700 "$tmp/munge"
chmod 400 "$tmp/munge/munge.key"
sock=$tmp/munge/munge.socket
munged --force --key-file="$tmp/munge/munge.key" --socket="$sock" --pid-file="$tmp/munged.pid" \
  --log-file="$tmp/munged.log" --seed-file="$tmp/munge/seed" || { bad "munged did not start"; cat "$tmp/munged.log"; finish; }
# Ports: pick two free ones above 20000.
port=$((20000 + RANDOM % 20000))
cat > "$tmp/slurm.conf" <<CONF
ClusterName=trench
SlurmctldHost=$node
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$sock
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
ReturnToService=2
SwitchType=switch/none
NodeName=$node CPUs=$cpus State=UNKNOWN
PartitionName=fuzz Nodes=$node Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
CONF
export SLURM_CONF=$tmp/slurm.conf
slurmctld -D -i -f "$SLURM_CONF" > "$tmp/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" -N "$node" > "$tmp/slurmd.out" 2>&1 &
pids+=($!)
# Wait for the node to be idle.
up=0
for i in $(seq 1 60); do
  if sinfo -h -N -o '%T' 2> /dev/null | grep -Eq '^(idle|mixed)'; then up=1; break; fi
  sleep 1
done
if [ $up = 1 ]; then ok; else
  bad "slurmctld/slurmd did not come up"
  tail -20 "$tmp/slurmctld.log" "$tmp/slurmd.log" "$tmp/slurmctld.out" "$tmp/slurmd.out" 2> /dev/null
  finish
fi
target=builtin:jit=tcc,inject=emit-tail-mask-short
export TRENCH=$trench OUT=$tmp/out TARGET=$target SEED=4 COUNT=6 CORPUS=$root/examples JOBS=1
jid=$(sbatch --parsable --wait --array=0-3 --output="$tmp/task-%a.out" "$root/examples/slurm/fuzz.sbatch" 2> "$tmp/sbatch.err")
rc=$?
if [ $rc = 0 ] && [ -n "$jid" ]; then ok; else
  bad "sbatch --wait (exit $rc)"
  cat "$tmp/sbatch.err" "$tmp"/task-*.out 2> /dev/null | tail -20
fi
n=$(ls -d "$tmp"/out/shard-* 2> /dev/null | wc -l)
[ "$n" = 4 ] && ok || bad "$n shard folders, not 4"
"$trench" merge --out "$tmp/merged" "$tmp"/out/shard-* > "$tmp/merge.txt" 2>&1
"$trench" fuzz --target "$target" --seed 4 --count 24 --corpus "$root/examples" --out "$tmp/one" -q > /dev/null 2>&1
key() { sed -E 's/.*"i":([0-9]+),"lineage":(\[[^]]*\]).*"outcome":"([a-z]+)".*/\1 \3 \2/' "$1" | sort -n; }
[ "$(key "$tmp/merged/log.jsonl")" = "$(key "$tmp/one/log.jsonl")" ] && [ "$(wc -l < "$tmp/one/log.jsonl")" = 24 ] && ok \
  || bad "the merged array differs from one process"
[ "$(ls "$tmp/merged/findings")" = "$(ls "$tmp/one/findings")" ] && ok || bad "merged findings differ"
finish
