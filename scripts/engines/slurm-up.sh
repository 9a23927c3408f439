#!/usr/bin/env bash
# slurm-up.sh — stand up a real, local, multi-node Slurm 22.05 cluster on THIS host
# (Debian 12 packages), for integration tests of the launcher's Slurm scheduler.
#
# What you get (defaults):
#   * munged (auth) running as user munge, socket /run/munge/munge.socket.2
#   * slurmctld on port 6817 (runs as root, SlurmUser=root), cluster "torchxtest"
#   * N slurmd daemons (default 3: node1..node3), one process per node, all on
#     127.0.0.1 with distinct ports 6821.., each started with `slurmd -N nodeX`.
#     Debian's build accepts several slurmd per host (verified: 3 nodes run
#     multi-node and heterogeneous jobs). `hostname` inside a job prints the
#     real host name on every node; use $SLURMD_NODENAME to tell nodes apart.
#   * partitions "debug" (Default=YES), "batch" and "standby", all nodes, PriorityTier=1, and
#     "urgent" (PriorityTier=10), whose jobs preempt theirs (preempt/partition_prio, REQUEUE).
#   * no cgroups: ProctrackType=proctrack/linuxproc, TaskPlugin=task/none.
#   * accounting (SLURM_ACCOUNTING=1, default): MariaDB (unix socket only, no TCP)
#     + slurmdbd on 127.0.0.1:6819, so `sacct` (also `sacct --json`) works.
#     With SLURM_ACCOUNTING=0: AccountingStorageType=accounting_storage/none;
#     `sacct` then fails ("Slurm accounting storage is disabled") and only
#     `sacct -c` (reads the jobcomp/filetxt file) gives finished-job records.
#   * in both modes JobCompType=jobcomp/filetxt -> /var/log/slurm/jobcomp.log
#
# Client commands (sinfo/sbatch/squeue/scontrol/scancel/srun/sacct) then work
# with no extra environment: the config is /etc/slurm/slurm.conf.
#
# Idempotent: if the cluster is already up with the same config, it exits 0 at
# once (~0.1 s). If the config changed or a daemon died, it stops only daemons
# it started (PIDs from their pid files) and starts them again.
# Talks to loopback only. Needs root. Non-interactive.
#
# Knobs (environment):
#   SLURM_NODES=3            number of slurmd "nodes" on this host (1..16)
#   SLURM_CPUS_PER_NODE=2    CPUs advertised per node (may exceed real cores;
#                            SlurmdParameters=config_overrides makes slurmd trust it)
#   SLURM_MEM_PER_NODE=4000  RealMemory (MB) advertised per node (--mem must fit)
#   SLURM_ACCOUNTING=1       1: MariaDB + slurmdbd (sacct works); 0: none
#   SLURM_FAKE_GPUS=0        N>0: every node advertises Gres=gpu:N backed by fake
#                            char devices ($SPOOL/fake-gpu/gpuK, same major/minor as
#                            /dev/null); --gpus-per-node/--gpus-per-task then
#                            schedule and set CUDA_VISIBLE_DEVICES. No real GPU.
#   SLURM_CLEAN=1            start slurmctld with -c (forget queued/finished jobs
#                            of an earlier run). 0 keeps controller state.
#   SLURM_SKIP_INSTALL=1     fail instead of running apt-get if packages are missing
#
# Timings seen on the 2-core box: apt install ~13 s (+~13 s for slurmdbd and
# mariadb-server), daemons up and all nodes idle ~0.3 s (+~2 s with accounting),
# a trivial `sbatch --wrap true` reaches COMPLETED in 0.1-1 s.
set -euo pipefail

NODES="${SLURM_NODES:-3}"
CPUS="${SLURM_CPUS_PER_NODE:-2}"
MEM="${SLURM_MEM_PER_NODE:-4000}"
ACCT="${SLURM_ACCOUNTING:-1}"
GPUS="${SLURM_FAKE_GPUS:-0}"
CLEAN="${SLURM_CLEAN:-1}"
CTLD_PORT=6817
DBD_PORT=6819
NODE_PORT_BASE=6821          # node i listens on NODE_PORT_BASE + i - 1
CLUSTER=torchxtest
CONF=/etc/slurm/slurm.conf
DBDCONF=/etc/slurm/slurmdbd.conf
RUN=/run/slurm
SPOOL=/var/spool/slurm
LOGDIR=/var/log/slurm
HOST="$(hostname -s)"
DB_NAME=slurm_acct_db
DB_USER=slurm
DB_PASS=slurmtestpw          # local test DB reachable only through a root-owned unix socket

log() { echo "[slurm-up] $*" >&2; }
trap 'echo "[slurm-up] ERROR: command failed at line $LINENO" >&2' ERR
die() { echo "[slurm-up] ERROR: $*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "must run as root"
[[ "$NODES" =~ ^[0-9]+$ ]] && [ "$NODES" -ge 1 ] && [ "$NODES" -le 16 ] || die "SLURM_NODES must be 1..16"
[[ "$GPUS" =~ ^[0-9]+$ ]] && [ "$GPUS" -le 8 ] || die "SLURM_FAKE_GPUS must be 0..8"

# ---------------------------------------------------------------- 1. packages
pkgs=(munge slurmctld slurmd slurm-client)
[ "$ACCT" = 1 ] && pkgs+=(slurmdbd mariadb-server)
need=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || need+=("$p")
done
if [ "${#need[@]}" -gt 0 ]; then
  [ "${SLURM_SKIP_INSTALL:-0}" = 1 ] && die "missing packages: ${need[*]}"
  log "apt-get install ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  # Package postinst scripts try to start the services through systemd/invoke-rc.d;
  # there is no systemd here (policy-rc.d denies it). Harmless: we start them by hand.
  apt_install() { apt-get install -y -q --no-install-recommends -o DPkg::Lock::Timeout=300 "$@"; }
  apt_install "${need[@]}" >/dev/null 2>&1 || {
    apt-get update -q -o DPkg::Lock::Timeout=300 >/dev/null
    apt_install "${need[@]}" >/dev/null
  }
fi

# ---------------------------------------------------------------- 2. config
mkdir -p "$RUN" "$SPOOL/ctld" "$LOGDIR" /etc/slurm
for i in $(seq 1 "$NODES"); do mkdir -p "$SPOOL/d/node$i"; done

last=$((NODE_PORT_BASE + NODES - 1))
if [ "$NODES" -eq 1 ]; then NODESPEC="node1"; PORTSPEC="$NODE_PORT_BASE";
else NODESPEC="node[1-$NODES]"; PORTSPEC="[$NODE_PORT_BASE-$last]"; fi

# Every step's CPU and memory are gathered by slurmd whether or not slurmdbd stores them: `sstat`
# (torchx status --resources) reads them live. Every 2 s, so a job of a few seconds has figures.
GATHER_LINES="JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=task=2"
if [ "$ACCT" = 1 ]; then
  ACCT_LINES="# Accounting through slurmdbd (127.0.0.1:$DBD_PORT) backed by a local MariaDB.
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStoragePort=$DBD_PORT
$GATHER_LINES"
else
  ACCT_LINES="# No slurmdbd: sacct will not work (only 'sacct -c' reads the jobcomp file).
AccountingStorageType=accounting_storage/none
$GATHER_LINES"
fi

GRES_NODE=""; GRES_TYPES=""
if [ "$GPUS" -gt 0 ]; then
  GRES_NODE=" Gres=gpu:$GPUS"; GRES_TYPES="GresTypes=gpu"
  mkdir -p "$SPOOL/fake-gpu"
  for k in $(seq 0 $((GPUS - 1))); do
    [ -c "$SPOOL/fake-gpu/gpu$k" ] || mknod "$SPOOL/fake-gpu/gpu$k" c 1 3   # a /dev/null twin
  done
  if [ "$GPUS" -eq 1 ]; then GFILES="$SPOOL/fake-gpu/gpu0"; else GFILES="$SPOOL/fake-gpu/gpu[0-$((GPUS - 1))]"; fi
fi

newconf="$(mktemp)"
trap 'rm -f "$newconf"' EXIT
cat >"$newconf" <<EOF
# Generated by slurm-up.sh — local test cluster, loopback only. Do not edit by hand.
ClusterName=$CLUSTER
# Controller: this host, addressed explicitly via 127.0.0.1.
SlurmctldHost=$HOST(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$NODE_PORT_BASE
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
MpiDefault=none
MailProg=/bin/true
# Bind slurmd to its NodeAddr (127.0.0.1) instead of 0.0.0.0.
CommunicationParameters=NoInAddrAny
# %n expands to the node name so several slurmd can share one host.
SlurmctldPidFile=$RUN/slurmctld.pid
SlurmdPidFile=$RUN/slurmd-%n.pid
SlurmdSpoolDir=$SPOOL/d/%n
StateSaveLocation=$SPOOL/ctld
SlurmctldLogFile=$LOGDIR/slurmctld.log
SlurmdLogFile=$LOGDIR/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
# No cgroups: track processes by /proc parentage, no task binding.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
# Trust the CPU/memory numbers below even if the box has fewer real cores.
SlurmdParameters=config_overrides
ReturnToService=2
SchedulerType=sched/backfill
# Heterogeneous jobs are started only by the backfill scheduler, whose default
# 30 s cycle makes every hetjob wait up to 30 s. Run it every second instead.
SchedulerParameters=bf_interval=1
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
$ACCT_LINES
# Completion records of every job, one line each, in a text file (sacct -c reads it).
JobCompType=jobcomp/filetxt
JobCompLoc=$LOGDIR/jobcomp.log
# Keep finished jobs visible to squeue/scontrol for 10 minutes.
MinJobAge=600
# A requeued job may start again after the credential lifetime (default 120 s); 10 s keeps the
# retry tests short.
AuthInfo=cred_expire=10
# Short timeouts so a dead node is noticed quickly (node DOWN after ~30-40 s).
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
KillWait=5
Waittime=0
# Nodes: all on this host, each its own slurmd (-N nodeX) on its own port.
$GRES_TYPES
NodeName=$NODESPEC NodeHostname=$HOST NodeAddr=127.0.0.1 Port=$PORTSPEC CPUs=$CPUS RealMemory=$MEM$GRES_NODE State=UNKNOWN
# Preemption by partition priority: a job in "urgent" (PriorityTier=10) preempts jobs of the other
# partitions it needs the nodes of. A job submitted with --requeue goes back to the queue (the
# same id); one with --no-requeue (a managed job's) ends PREEMPTED for its launcher to recover.
# "standby" is a partition the managed-job tests drain (submissions refused) and restore.
PreemptType=preempt/partition_prio
PreemptMode=REQUEUE
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP PriorityTier=1
PartitionName=batch Nodes=ALL Default=NO MaxTime=INFINITE State=UP PriorityTier=1
PartitionName=standby Nodes=ALL Default=NO MaxTime=INFINITE State=UP PriorityTier=1
PartitionName=urgent Nodes=ALL Default=NO MaxTime=INFINITE State=UP PriorityTier=10 PreemptMode=OFF
EOF

# ---------------------------------------------------------------- node names
# Jobs address each other by node name (TorchX's rank0 host is $SLURM_JOB_NODELIST_HET_GROUP_0,
# e.g. node1); on this one-host cluster every node is 127.0.0.1.
for n in $(seq 1 "$NODES"); do
  grep -qE "^127\.0\.0\.1[[:space:]].*\bnode$n\b" /etc/hosts || echo "127.0.0.1 node$n" >> /etc/hosts
done

# ---------------------------------------------------------------- helpers
pid_alive() { [ -n "${1:-}" ] && kill -0 "$1" 2>/dev/null; }
pidof_file() { if [ -s "$1" ]; then cat "$1"; fi; }
alive_pidfile() { pid_alive "$(pidof_file "$1")"; }

# Stop daemons we started earlier: SIGTERM to all PIDs from the given pid files
# at once (each slurm daemon needs ~2 s to exit), SIGKILL leftovers after 10 s.
stop_pidfiles() {
  local f pid pids=()
  for f in "$@"; do
    [ -e "$f" ] || continue
    pid="$(pidof_file "$f")"
    if pid_alive "$pid"; then kill "$pid" 2>/dev/null && pids+=("$pid"); fi
    rm -f "$f"
  done
  for _ in $(seq 1 100); do
    local alive=0
    for pid in "${pids[@]}"; do pid_alive "$pid" && alive=1; done
    [ "$alive" = 0 ] && return 0
    sleep 0.1
  done
  for pid in "${pids[@]}"; do pid_alive "$pid" && kill -9 "$pid" 2>/dev/null; done
  return 0
}

dbd_ok() { timeout 5 sacctmgr -n -P list cluster format=cluster 2>/dev/null | grep -qx "$CLUSTER"; }

cluster_ok() {
  # controller answers, exactly $NODES nodes, all in a usable state
  timeout 5 scontrol ping 2>/dev/null | grep -q "is UP" || return 1
  local states
  states="$(timeout 5 sinfo -h -N -p debug -o '%N %t' 2>/dev/null)" || return 1
  [ "$(echo "$states" | grep -c .)" -eq "$NODES" ] || return 1
  ! echo "$states" | awk '{print $2}' | grep -qvE '^(idle|mix|alloc|comp)$'
}

# ---------------------------------------------------------------- 3. fast path
if [ -f "$CONF" ] && cmp -s "$newconf" "$CONF" && cluster_ok && { [ "$ACCT" != 1 ] || dbd_ok; }; then
  log "cluster already up ($NODES nodes, accounting=$ACCT) — nothing to do"
  exit 0
fi

# Config changed or something is down: stop the slurm daemons we started before.
stop_pidfiles "$RUN"/slurmd-*.pid "$RUN/slurmctld.pid"
[ "$ACCT" = 1 ] || stop_pidfiles "$RUN/slurmdbd.pid"
cp "$newconf" "$CONF"
chmod 644 "$CONF"
if [ "$GPUS" -gt 0 ]; then
  printf '# Generated by slurm-up.sh (fake GPUs)\nAutoDetect=off\nNodeName=%s Name=gpu File=%s\n' "$NODESPEC" "$GFILES" > /etc/slurm/gres.conf
elif grep -qs 'Generated by slurm-up.sh' /etc/slurm/gres.conf; then
  rm -f /etc/slurm/gres.conf
fi

# ---------------------------------------------------------------- 4. munge
mkdir -p /run/munge /var/log/munge /var/lib/munge /etc/munge
chown munge:munge /run/munge /var/log/munge /var/lib/munge /etc/munge
chmod 0755 /run/munge
chmod 0700 /etc/munge
if [ ! -s /etc/munge/munge.key ]; then
  # the munge postinst normally creates it; recreate if missing
  runuser -u munge -- mungekey --create --keyfile=/etc/munge/munge.key
fi
chown munge:munge /etc/munge/munge.key
chmod 0400 /etc/munge/munge.key
if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
  stop_pidfiles /run/munge/munged.pid
  # munged daemonizes itself and writes /run/munge/munged.pid
  runuser -u munge -- /usr/sbin/munged
  for _ in $(seq 1 50); do munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && break; sleep 0.1; done
  munge -n | unmunge >/dev/null || die "munged failed to start"
fi

# ---------------------------------------------------------------- 5. accounting
if [ "$ACCT" = 1 ]; then
  # MariaDB: unix socket only (--skip-networking), started by hand (no systemd).
  mkdir -p /run/mysqld && chown mysql:root /run/mysqld
  if [ ! -d /var/lib/mysql/mysql ]; then
    mariadb-install-db --user=mysql --datadir=/var/lib/mysql --auth-root-authentication-method=socket >/dev/null
  fi
  if ! mariadb-admin --socket=/run/mysqld/mysqld.sock ping >/dev/null 2>&1; then
    stop_pidfiles /run/mysqld/mysqld.pid
    setsid /usr/sbin/mariadbd --user=mysql --skip-networking --socket=/run/mysqld/mysqld.sock \
      --pid-file=/run/mysqld/mysqld.pid >"$LOGDIR/mariadb.log" 2>&1 < /dev/null &
    for _ in $(seq 1 150); do mariadb-admin --socket=/run/mysqld/mysqld.sock ping >/dev/null 2>&1 && break; sleep 0.1; done
    mariadb-admin --socket=/run/mysqld/mysqld.sock ping >/dev/null 2>&1 || { tail -20 "$LOGDIR/mariadb.log" >&2; die "mariadbd did not start"; }
  fi
  mariadb --socket=/run/mysqld/mysqld.sock -e "CREATE DATABASE IF NOT EXISTS $DB_NAME;
    CREATE USER IF NOT EXISTS '$DB_USER'@'localhost' IDENTIFIED BY '$DB_PASS';
    ALTER USER '$DB_USER'@'localhost' IDENTIFIED BY '$DB_PASS';
    GRANT ALL ON $DB_NAME.* TO '$DB_USER'@'localhost'; FLUSH PRIVILEGES;"

  newdbd="$(mktemp)"
  cat >"$newdbd" <<EOF
# Generated by slurm-up.sh
AuthType=auth/munge
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort=$DBD_PORT
SlurmUser=root
PidFile=$RUN/slurmdbd.pid
LogFile=$LOGDIR/slurmdbd.log
StorageType=accounting_storage/mysql
StorageHost=localhost
StoragePort=0
StorageLoc=$DB_NAME
StorageUser=$DB_USER
StoragePass=$DB_PASS
EOF
  if ! cmp -s "$newdbd" "$DBDCONF" || ! alive_pidfile "$RUN/slurmdbd.pid"; then
    stop_pidfiles "$RUN/slurmdbd.pid"
    install -m 600 "$newdbd" "$DBDCONF"
    /usr/sbin/slurmdbd          # daemonizes, writes $RUN/slurmdbd.pid
  fi
  rm -f "$newdbd"
  for _ in $(seq 1 100); do timeout 5 sacctmgr -n list cluster >/dev/null 2>&1 && break; sleep 0.1; done
  dbd_ok || timeout 10 sacctmgr -i add cluster "$CLUSTER" >/dev/null || true
  dbd_ok || { tail -20 "$LOGDIR/slurmdbd.log" >&2; die "slurmdbd not answering"; }
fi

# ---------------------------------------------------------------- 6. slurm daemons
cflag=""; [ "$CLEAN" = 1 ] && cflag="-c"
/usr/sbin/slurmctld $cflag -i            # daemonizes, writes $RUN/slurmctld.pid
for _ in $(seq 1 100); do timeout 2 scontrol ping 2>/dev/null | grep -q "is UP" && break; sleep 0.1; done
timeout 5 scontrol ping | grep -q "is UP" || { tail -20 "$LOGDIR/slurmctld.log" >&2; die "slurmctld did not come up"; }

for i in $(seq 1 "$NODES"); do
  /usr/sbin/slurmd -N "node$i"          # daemonizes, writes $RUN/slurmd-node$i.pid
done

for _ in $(seq 1 200); do cluster_ok && break; sleep 0.1; done
if ! cluster_ok; then
  sinfo -N -l >&2 || true
  tail -5 "$LOGDIR"/slurmd-*.log >&2 || true
  die "nodes did not all become idle"
fi
log "cluster up: $(sinfo -h -o '%P:%D:%t' | tr '\n' ' ')accounting=$ACCT"
