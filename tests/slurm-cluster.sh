#!/bin/sh
# A private single-node Slurm cluster for the tests: its own munged (own key,
# socket, pid, log and seed files), slurmctld and slurmd, everything under one directory.
#
#   sh tests/slurm-cluster.sh start DIR   starts it; prints "SLURM_CONF=DIR/slurm.conf"
#                                         on success; exit 1 with a reason otherwise
#                                         (whatever it had started is stopped again)
#   sh tests/slurm-cluster.sh stop DIR    kills exactly the processes start recorded in
#                                         DIR/pids (munged, slurmctld, slurmd), after
#                                         cancelling the jobs; then any step daemon
#                                         (slurmstepd) of this cluster and its tasks
#
# The node is named after `hostname -s` and declares CPUs=8 ($SLURM_TEST_CPUS if set), more
# than the machine has (SlurmdParameters=config_overrides), so that several 1-CPU jobs
# run at once.  Ports are
# picked free at start, so that two clusters (two test runs) can run side by side.
# Jobs' completion records go to DIR/jobcomp.txt (jobcomp/filetxt; no slurmdbd).
set -u

die() {
	echo "slurm-cluster: $*" >&2
	exit 1
}

# Waits up to $1 tenths of a second for the command to succeed.
wait_for() {
	n=$1; shift
	while [ "$n" -gt 0 ]; do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.1
		n=$((n - 1))
	done
	return 1
}

pid_of_file() {
	[ -s "$1" ] && head -n 1 "$1" | tr -cd 0-9
}

free_ports() {
	/usr/bin/python3 - <<'EOF'
import socket
s = [socket.socket() for _ in range(2)]
for x in s:
    x.bind(("127.0.0.1", 0))
print(" ".join(str(x.getsockname()[1]) for x in s))
EOF
}

write_conf() {
	dir=$1 node=$2 cport=$3 dport=$4
	cat >"$dir/slurm.conf" <<EOF
ClusterName=nextbot-test
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$cport
SlurmdPort=$dport
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
SlurmdParameters=config_overrides
MpiDefault=none
ReturnToService=2
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/filetxt
JobCompLoc=$dir/jobcomp.txt
InactiveLimit=0
KillWait=2
MinJobAge=2
MessageTimeout=10
SchedulerParameters=sched_interval=1
NodeName=$node NodeAddr=127.0.0.1 CPUs=${SLURM_TEST_CPUS:-8} RealMemory=1000 State=UNKNOWN
PartitionName=test Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
}

start_munged() {
	dir=$1
	mkdir -p "$dir/munge" || return 1
	chmod 711 "$dir/munge"
	# 1 KiB of randomness is a valid munge key.
	(umask 077 && head -c 1024 /dev/urandom >"$dir/munge/munge.key") || return 1
	munged --socket="$dir/munge/munge.socket" --key-file="$dir/munge/munge.key" \
		--pid-file="$dir/munge/munged.pid" --log-file="$dir/munge/munged.log" \
		--seed-file="$dir/munge/munged.seed" || return 1
	wait_for 50 test -S "$dir/munge/munge.socket" || return 1
	wait_for 50 test -s "$dir/munge/munged.pid" || return 1
	pid=$(pid_of_file "$dir/munge/munged.pid")
	[ -n "$pid" ] && echo "$pid munged" >>"$dir/pids"
}

# The node idle and a job step answering: the cluster is usable.
cluster_ready() {
	[ "$(sinfo -h -N -o %t 2>/dev/null)" = idle ] || return 1
	[ "$(timeout 20 srun -N1 -t 1 sh -c 'echo ok' 2>/dev/null)" = ok ]
}

start() {
	dir=$1
	for p in munged slurmctld slurmd srun sinfo; do
		command -v "$p" >/dev/null 2>&1 || [ -x "/usr/sbin/$p" ] ||
			die "$p is not installed (scripts/deps installs slurm-wlm and munge)"
	done
	[ "$(id -u)" = 0 ] || die "the test cluster runs as root (SlurmUser=root)"
	PATH=$PATH:/usr/sbin
	mkdir -p "$dir/state" "$dir/spool" || die "cannot create $dir"
	chmod 755 "$dir"
	: >"$dir/pids"
	node=$(hostname -s)
	ports=$(free_ports) || die "cannot find free ports"
	set -- $ports
	write_conf "$dir" "$node" "$1" "$2"
	SLURM_CONF=$dir/slurm.conf
	export SLURM_CONF

	start_munged "$dir" || fail_start "$dir" "munged did not start: $(tail -2 "$dir/munge/munged.log" 2>/dev/null)"
	slurmctld -f "$SLURM_CONF" -i || fail_start "$dir" "slurmctld did not start"
	wait_for 50 test -s "$dir/slurmctld.pid" || fail_start "$dir" "slurmctld wrote no pid file"
	echo "$(pid_of_file "$dir/slurmctld.pid") slurmctld" >>"$dir/pids"
	slurmd -f "$SLURM_CONF" || fail_start "$dir" "slurmd did not start"
	wait_for 50 test -s "$dir/slurmd.pid" || fail_start "$dir" "slurmd wrote no pid file"
	echo "$(pid_of_file "$dir/slurmd.pid") slurmd" >>"$dir/pids"
	wait_for 300 cluster_ready || fail_start "$dir" "the node did not become idle or srun did not answer"
	echo "SLURM_CONF=$SLURM_CONF"
}

fail_start() {
	dir=$1; shift
	{
		echo "slurm-cluster: $*"
		for f in slurmctld.log slurmd.log; do
			[ -s "$dir/$f" ] && { echo "--- $f"; tail -15 "$dir/$f"; }
		done
	} >&2
	stop "$dir"
	exit 1
}

# True while `pid` is alive and is the program we started (not a reused pid).
is_ours() {
	[ -r "/proc/$1/comm" ] && [ "$(cat "/proc/$1/comm" 2>/dev/null)" = "$2" ]
}

# The step daemons (slurmstepd) of this cluster and every process under them (the
# jobs' tasks): slurmstepd carries this cluster's SLURM_CONF in its environment.
steps_and_tasks() {
	conf="SLURM_CONF=$1/slurm.conf"
	roots=
	for c in /proc/[0-9]*/comm; do
		p=${c#/proc/}; p=${p%/comm}
		[ "$(cat "$c" 2>/dev/null)" = slurmstepd ] || continue
		{ tr '\0' '\n' <"/proc/$p/environ"; } 2>/dev/null | grep -qxF "$conf" &&
			roots="$roots $p"
	done
	[ -n "$roots" ] || return 0
	# descendants, breadth first, from the ppid of every process
	ps -e -o pid= -o ppid= | awk -v roots="$roots" '
		{ parent[$1] = $2 }
		END {
			n = split(roots, r, " ")
			for (i = 1; i <= n; i++) keep[r[i]] = 1
			do {
				changed = 0
				for (p in parent)
					if (!(p in keep) && (parent[p] in keep)) { keep[p] = 1; changed = 1 }
			} while (changed)
			for (p in keep) print p
		}'
}

stop() {
	dir=$1
	[ -f "$dir/pids" ] || return 0
	# Jobs first, while the controller can still end them.
	if [ -s "$dir/slurm.conf" ] && [ -n "$(awk '$2 == "slurmctld"' "$dir/pids")" ]; then
		SLURM_CONF=$dir/slurm.conf timeout 10 scancel --user=root >/dev/null 2>&1
	fi
	for pid in $(steps_and_tasks "$dir"); do
		echo "$pid $(cat "/proc/$pid/comm" 2>/dev/null)" >>"$dir/pids"
	done
	# Newest first: the tasks and step daemons, slurmd, slurmctld, munged.
	tac "$dir/pids" | while read -r pid name; do
		is_ours "$pid" "$name" && kill "$pid" 2>/dev/null
	done
	# slurmstepd ignores SIGTERM: whatever is left after a grace period is killed.
	while read -r pid name; do
		n=30
		while [ $n -gt 0 ] && is_ours "$pid" "$name" &&
		      ! grep -q '^State:.*Z' "/proc/$pid/status" 2>/dev/null; do
			sleep 0.1
			n=$((n - 1))
		done
		is_ours "$pid" "$name" && kill -9 "$pid" 2>/dev/null
	done <"$dir/pids"
	: >"$dir/pids"
	return 0
}

case "${1:-}" in
start) [ $# = 2 ] || die "usage: $0 start DIR"; start "$2" ;;
stop) [ $# = 2 ] || die "usage: $0 stop DIR"; stop "$2" ;;
*) die "usage: $0 start|stop DIR" ;;
esac
