#!/usr/bin/env bash
# A private single-node Slurm cluster on localhost (munged + slurmctld + slurmd), for
# trying `fabricsim sweep --executor slurm` and for the test suite (tests/test_sweep.cpp).
# Everything (slurm.conf, munge key and socket, state, spool, logs) lives in DIR; /etc is
# not touched. Needs root (SlurmUser=root) and Debian's slurm-wlm and munge.
#   scripts/slurm_local.sh start DIR   start the daemons, wait until the node is idle; prints
#                                      `export SLURM_CONF=DIR/slurm.conf` (use it for sbatch)
#   scripts/slurm_local.sh stop DIR    stop the daemons started in DIR (by their pid files)
# Exit code of start: 0 ready, 3 Slurm cannot start here (the reason on stderr, logs in DIR).
set -euo pipefail

cmd="${1:-}"
dir="${2:-}"
if [ -z "$cmd" ] || [ -z "$dir" ]; then
  echo "usage: $0 start|stop DIR" >&2
  exit 2
fi
mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"

stop_pid() {  # pid file: TERM, wait up to 5 s, then KILL
  local f="$1"
  [ -f "$f" ] || return 0
  local pid
  pid="$(cat "$f" 2>/dev/null || true)"
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$f"
}

if [ "$cmd" = stop ]; then
  # Jobs still running belong to slurmd's steps: cancel them first when the controller is up.
  if [ -f "$dir/slurm.conf" ] && [ -f "$dir/slurmctld.pid" ]; then
    SLURM_CONF="$dir/slurm.conf" timeout 10 scancel --full --quiet --user=root 2>/dev/null || true
  fi
  stop_pid "$dir/slurmd.pid"
  stop_pid "$dir/slurmctld.pid"
  stop_pid "$dir/munged.pid"
  exit 0
fi
[ "$cmd" = start ] || { echo "usage: $0 start|stop DIR" >&2; exit 2; }

cannot() {
  echo "slurm_local: Slurm cannot start: $*" >&2
  exit 3
}
for b in munged mungekey slurmctld slurmd sbatch sinfo scontrol; do
  command -v "$b" >/dev/null 2>&1 || cannot "'$b' not found (scripts/setup.sh installs slurm-wlm, slurm-client, munge)"
done
[ "$(id -u)" -eq 0 ] || cannot "needs root (this private cluster runs with SlurmUser=root)"

# Ports: two free loopback ports, picked by the kernel.
read -r ctld_port slurmd_port < <(/usr/bin/python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')

mkdir -p "$dir/state" "$dir/spool" "$dir/munge"
chmod 700 "$dir/munge"
[ -f "$dir/munge/munge.key" ] || mungekey --create --keyfile="$dir/munge/munge.key" >/dev/null 2>&1 ||
  cannot "mungekey failed"
chmod 600 "$dir/munge/munge.key"
socket="$dir/munge/munge.socket"
munged --force --key-file="$dir/munge/munge.key" --socket="$socket" --pid-file="$dir/munged.pid" \
  --log-file="$dir/munged.log" --seed-file="$dir/munge/munged.seed" >"$dir/munged.out" 2>&1 ||
  cannot "munged failed: $(tail -n 3 "$dir/munged.out" "$dir/munged.log" 2>/dev/null | tr '\n' ' ')"

cpus="$(nproc)"
mem_mb="$(awk '/MemTotal/ {print int($2 / 1024 * 0.9)}' /proc/meminfo)"
cat >"$dir/slurm.conf" <<EOF
# Private single-node cluster written by scripts/slurm_local.sh
ClusterName=fabricsim
SlurmctldHost=localhost
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MaxArraySize=10001
MinJobAge=300
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
KillWait=5
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem_mb State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF="$dir/slurm.conf"
slurmctld -i >"$dir/slurmctld.out" 2>&1 ||
  { "$0" stop "$dir"; cannot "slurmctld failed: $(tail -n 5 "$dir/slurmctld.out" "$dir/slurmctld.log" 2>/dev/null | tr '\n' ' ')"; }
slurmd -N localhost >"$dir/slurmd.out" 2>&1 ||
  { "$0" stop "$dir"; cannot "slurmd failed: $(tail -n 5 "$dir/slurmd.out" "$dir/slurmd.log" 2>/dev/null | tr '\n' ' ')"; }

# Ready when the node reports idle (up to 30 s).
for _ in $(seq 150); do
  state="$(sinfo --noheader --nodes=localhost --format=%t 2>/dev/null || true)"
  if [ "$state" = idle ]; then
    echo "export SLURM_CONF=$dir/slurm.conf"
    exit 0
  fi
  sleep 0.2
done
"$0" stop "$dir"
cannot "node did not become idle in 30 s (state '${state:-none}'); logs: $(tail -n 5 "$dir/slurmctld.log" "$dir/slurmd.log" 2>/dev/null | tr '\n' ' ')"
