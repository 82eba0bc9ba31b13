# Shared helpers for scenario tests (sourced by tests/t*.sh).
# NEXTBOT is the binary under test; each test gets a fresh temp dir in $TMP,
# removed on exit; servers a test starts are stopped by its own trap.
set -u
: "${NEXTBOT:=$(pwd)/nextbot}"
TMP=$(mktemp -d /tmp/nextbot-test.XXXXXX)
chmod 755 "$TMP"
cleanup_hooks=
cleanup() {
	for h in $cleanup_hooks; do "$h"; done
	[ -n "${KEEP:-}" ] || rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
at_exit() { cleanup_hooks="$cleanup_hooks $1"; }

tests_run=0
tests_failed=0
ok() { tests_run=$((tests_run + 1)); echo "ok $tests_run - $*"; }
not_ok() {
	tests_run=$((tests_run + 1)); tests_failed=$((tests_failed + 1))
	echo "not ok $tests_run - $*"
}
# check DESCRIPTION COMMAND...: runs the command, records ok/not ok.
check() {
	desc=$1; shift
	if "$@"; then ok "$desc"; else not_ok "$desc"; fi
}
# expect_exit CODE DESCRIPTION COMMAND...: the command must exit with CODE.
expect_exit() {
	want=$1; desc=$2; shift 2
	"$@" >"$TMP/out" 2>"$TMP/err"
	got=$?
	if [ "$got" = "$want" ]; then ok "$desc"; else
		not_ok "$desc (exit $got, wanted $want)"; sed 's/^/# /' "$TMP/err" | head -20
	fi
}
done_testing() {
	echo "# $tests_run tests, $tests_failed failed"
	[ "$tests_failed" = 0 ] && [ "$tests_run" -gt 0 ]
}
# Debian's Python with its packages (aiosmtpd), not whatever python3 is first on PATH.
PYTHON=/usr/bin/python3
git_q() { git -c user.name=t -c user.email=t@example.org -c init.defaultBranch=master "$@"; }
# commit_file PATH TEXT SUBJECT: writes TEXT (printf %b) to PATH, folders made, and
# commits it in the current repository, signed off by Dev
commit_file() {
	mkdir -p "$(dirname "$1")"
	printf '%b' "$2" >"$1"
	git_q add "$1"
	git_q commit -q -m "$3" -m "Signed-off-by: Dev <dev@example.org>"
}

# A private Slurm cluster in $TMP/cluster (tests/slurm-cluster.sh), started in the
# background so that what needs no Slurm runs meanwhile; stopped at exit.
# slurm_cluster_ready waits for it, then exports SLURM_CONF, or ends the test.
slurm_cluster_start() {
	CLUSTER=$TMP/cluster
	SLURM_CLUSTER_SH=$(cd "$(dirname "$0")" && pwd)/slurm-cluster.sh  # tests may cd
	sh "$SLURM_CLUSTER_SH" start "$CLUSTER" >"$TMP/cluster.out" 2>&1 &
	cluster_start=$!
	at_exit slurm_cluster_stop
}
slurm_cluster_stop() {
	[ -z "$cluster_start" ] || wait "$cluster_start"
	sh "$SLURM_CLUSTER_SH" stop "$CLUSTER"
}
slurm_cluster_ready() {
	wait "$cluster_start"
	cluster_rc=$?
	cluster_start=
	if [ $cluster_rc != 0 ]; then
		not_ok "the private Slurm cluster starts: FAILED, Slurm nights cannot run"
		sed 's/^/# /' "$TMP/cluster.out"
		done_testing
		exit 1
	fi
	SLURM_CONF=$CLUSTER/slurm.conf
	export SLURM_CONF
	ok "the private Slurm cluster starts"
}
