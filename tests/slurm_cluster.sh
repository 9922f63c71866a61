#!/bin/sh
# slurm_cluster.sh start DIR | stop DIR - a one-node Slurm cluster on this machine for the tests: munged
# with a key of its own, slurmctld and slurmd on localhost (select/cons_tres, no accounting, no
# cgroups), every file (configuration, state, spool, logs, sockets, pid files) under DIR, on ports of
# its own, so it touches nothing of a Slurm or munge the machine may already run.  Debian:
# apt-get install slurm-wlm munge.  `start` prints the SLURM_CONF to export and exits 0 once the node
# is idle; it exits 77 (skip) with the reason when a package is missing or a daemon does not come up.
# Runs as root (slurmd starts jobs as their user).
set -u
cmd=${1:-}
dir=${2:-}
if [ -z "$cmd" ] || [ -z "$dir" ]; then echo "usage: slurm_cluster.sh start|stop DIR" >&2; exit 2; fi

stop() {
    for p in slurmd slurmctld munged; do
        f="$dir/$p.pid"
        if [ -s "$f" ]; then kill "$(cat "$f")" 2>/dev/null; fi
    done
    sleep 1
    for p in slurmd slurmctld munged; do
        f="$dir/$p.pid"
        if [ -s "$f" ]; then kill -9 "$(cat "$f")" 2>/dev/null; rm -f "$f"; fi
    done
}

if [ "$cmd" = stop ]; then stop; exit 0; fi
if [ "$cmd" != start ]; then echo "usage: slurm_cluster.sh start|stop DIR" >&2; exit 2; fi

for t in munged slurmctld slurmd sbatch squeue scontrol sinfo; do
    if ! command -v "$t" >/dev/null 2>&1 && [ ! -x "/usr/sbin/$t" ]; then
        echo "slurm_cluster: skipped, $t not found (Debian: apt-get install slurm-wlm munge)"; exit 77
    fi
done
if [ "$(id -u)" != 0 ]; then echo "slurm_cluster: skipped, slurmd must run as root"; exit 77; fi
PATH="$PATH:/usr/sbin"
mkdir -p "$dir/state" "$dir/spool" "$dir/log" || exit 1
dir=$(cd "$dir" && pwd)
host=$(hostname -s)
cpus=$(nproc)
# ports of their own, away from Slurm's 6817/6818, chosen by the directory so two runs do not meet
port=$((20000 + $(printf '%s' "$dir" | cksum | cut -d' ' -f1) % 20000))
head -c 1024 /dev/urandom >"$dir/munge.key" && chmod 400 "$dir/munge.key"
cat >"$dir/slurm.conf" <<EOF
ClusterName=versus-test
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge.sock
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
MpiDefault=none
ReturnToService=2
SchedulerType=sched/backfill
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
if ! munged --key-file="$dir/munge.key" --socket="$dir/munge.sock" --pid-file="$dir/munged.pid" \
    --log-file="$dir/log/munged.log" --seed-file="$dir/munge.seed" --force >"$dir/log/munged.out" 2>&1; then
    echo "slurm_cluster: skipped, munged did not start: $(tail -1 "$dir/log/munged.out")"; stop; exit 77
fi
export SLURM_CONF="$dir/slurm.conf"
if ! slurmctld -c >"$dir/log/slurmctld.out" 2>&1 || ! slurmd -c >"$dir/log/slurmd.out" 2>&1; then
    echo "slurm_cluster: skipped, a Slurm daemon did not start (logs in $dir/log)"; stop; exit 77
fi
i=0
while [ $i -lt 30 ]; do
    state=$(sinfo -h -N -o '%T' 2>/dev/null | head -1)
    case "$state" in idle*) echo "SLURM_CONF=$SLURM_CONF"; exit 0 ;; esac
    sleep 1
    i=$((i + 1))
done
echo "slurm_cluster: skipped, the node did not come up in 30 s (state '$state'; logs in $dir/log)"
stop
exit 77
