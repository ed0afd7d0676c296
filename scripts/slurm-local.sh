#!/usr/bin/env bash
# A real Slurm cluster on this machine, for the sharded sweep (issue 13): installs Slurm
# and MUNGE from the Debian packages, starts a single-node cluster on localhost (munged,
# slurmctld, slurmd, each with its pid recorded), submits the job array `driftlab slurm`
# writes for small shipped specs (4 shards, then the dependent merge job), waits for it,
# and compares the merged result with an unsharded run of the same spec in every column
# but the measured ones (`driftlab compare`). Every daemon it started is stopped by its pid
# on exit, whatever happens.
#
# Usage: scripts/slurm-local.sh [DRIFTLAB_BINARY]   (default: target/debug/driftlab,
# built if missing). Needs root (apt, daemons); exits non-zero when anything differs.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
bin=${1:-${CARGO_TARGET_DIR:-$root/target}/debug/driftlab}
[ -x "$bin" ] || cargo build -p driftlab-cli
bin=$(realpath "$bin")

# 1. Packages (Debian: slurmctld, slurmd, slurm-client, munge). The packages' own
# service start is suppressed (a temporary policy-rc.d, the Debian mechanism for it), so
# that every daemon running afterwards is one this script started and will stop.
if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
  policy=/usr/sbin/policy-rc.d
  own_policy=0
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' > "$policy" && chmod +x "$policy" && own_policy=1
  fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurmctld slurmd slurm-client munge >/dev/null
  [ "$own_policy" = 1 ] && rm -f "$policy"
fi
# Pids of processes named $1 (from /proc: procps may be missing on a fresh machine).
pids_of() { grep -lx "$1" /proc/[0-9]*/comm 2>/dev/null | cut -d/ -f3 | tr '\n' ' '; }
for d in munged slurmctld slurmd; do
  if [ -n "$(pids_of "$d")" ]; then
    echo "slurm-local: a $d not started by this script is running (pid $(pids_of "$d")); stop it first" >&2
    exit 1
  fi
done

work=$(mktemp -d /tmp/driftlab-slurm.XXXXXX)
chmod 755 "$work"
pids=()
stop() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  done
  echo "slurm-local: stopped ${#pids[@]} daemons (pids ${pids[*]:-none})"
}
trap stop EXIT

# 2. MUNGE: a key owned by the munge user, the daemon run as that user.
install -d -o munge -g munge -m 0700 "$work/munge-etc" "$work/munge-lib" "$work/munge-log"
install -d -o munge -g munge -m 0755 "$work/munge-run"
dd if=/dev/urandom of="$work/munge-etc/munge.key" bs=1024 count=1 status=none
chown munge:munge "$work/munge-etc/munge.key"
chmod 0400 "$work/munge-etc/munge.key"
socket="$work/munge-run/munge.socket.2"
runuser -u munge -- munged --key-file="$work/munge-etc/munge.key" --socket="$socket" \
  --pid-file="$work/munge-run/munged.pid" --log-file="$work/munge-log/munged.log" \
  --seed-file="$work/munge-lib/munged.seed"
for _ in $(seq 50); do [ -s "$work/munge-run/munged.pid" ] && break; sleep 0.1; done
pids+=("$(cat "$work/munge-run/munged.pid")")

# 3. Slurm: one node (this host, at 127.0.0.1), root as Slurm user, no cgroups.
node=$(hostname -s)
cpus=$(nproc)
mem=$(awk '/MemTotal/ {print int($2 / 1024 / 2)}' /proc/meminfo)
mkdir -p "$work/state" "$work/spool"
conf="$work/slurm.conf"
cat > "$conf" <<EOF
ClusterName=driftlab
SlurmctldHost=$node(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$socket
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
ReturnToService=2
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
SlurmctldPort=16817
SlurmdPort=16818
NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=driftlab Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF="$conf"
slurmctld -f "$conf"
for _ in $(seq 100); do [ -s "$work/slurmctld.pid" ] && break; sleep 0.1; done
pids+=("$(cat "$work/slurmctld.pid")")
slurmd -f "$conf"
for _ in $(seq 100); do [ -s "$work/slurmd.pid" ] && break; sleep 0.1; done
pids+=("$(cat "$work/slurmd.pid")")
for _ in $(seq 120); do
  state=$(sinfo -h -N -o %t 2>/dev/null | head -1)
  [ "$state" = idle ] && break
  sleep 0.5
done
[ "$state" = idle ] || { echo "slurm-local: node state '$state'"; tail -20 "$work"/slurm*.log; exit 1; }
echo "slurm-local: cluster up (node $node, $cpus CPUs)"

# 4. For each spec: the job array of 4 shards and the merge, against an unsharded run.
status=0
for spec in experiments/pendulum-orders.toml experiments/iftomm-a01.toml; do
  name=$(basename "$spec" .toml)
  out="$work/runs/$name"
  "$bin" slurm "$spec" --shards 4 --cpus-per-task 1 --size quick --time 00:10:00 --out "$out" >/dev/null
  jobs=$("$out/slurm/submit.sh")
  echo "slurm-local: $name: $jobs"
  for _ in $(seq 600); do
    [ -z "$(squeue -h -o %i 2>/dev/null)" ] && break
    sleep 0.5
  done
  if [ -n "$(squeue -h -o %i)" ]; then
    echo "slurm-local: $name: jobs still queued after 5 min"; squeue; status=1; continue
  fi
  if ! grep -q '"status": "complete"' "$out/manifest.json" 2>/dev/null; then
    echo "slurm-local: $name: the merge did not complete"; cat "$out"/slurm/*.log; status=1; continue
  fi
  "$bin" run "$spec" --size quick --threads 1 --out "$work/whole/$name" >/dev/null
  if "$bin" compare "$out" "$work/whole/$name"; then
    echo "slurm-local: $name: 4 shards merged = the unsharded run"
  else
    status=1
  fi
done
[ "$status" = 0 ] && rm -rf "$work"
exit $status
