#!/bin/sh
# The Slurm runner on a real private single-node Slurm cluster (tests/slurm-cluster.sh):
#  - the same simulated world (seed 5 unless $SEED) plays $NIGHTS nights (3) with the
#    local runner and with `runner: {kind: slurm, max_jobs: 4}`, both with the
#    compiler cache (the local runner's on this host's socket; on Slurm through the
#    nodes' relays over TCP, `cache: {listen: 127.0.0.1:0}`): the same flags (ids,
#    trees, commits, kinds, states, errors, excerpts), next trees and notice ids; the
#    Slurm nights really ran as Slurm jobs (named tree:commit, as runner.user), their
#    compiles reached the service through the relays (none refused, some answered
#    from the store), and they leave nothing in the queue, no token and no socket;
#  - one more night on Slurm with a build `sleep 317` and timeout 3: the night completes
#    with the base noted broken, the job was cancelled, squeue is empty at once after;
#  - and one with timeout 600, SIGTERM once the job runs: nextbot ends at once, the
#    night unfinished, squeue empty.
# Both runs play in the same path, one after the other: Next/Trees and merge.log name
# the remotes' urls, so next's trees only compare in the same place.  Flaky flags are
# not compared (a flaky defect may legitimately fail in one run only); seed 5's first
# three days have none in a merged tree, which the test checks and says.
# Where Slurm cannot start this test fails, it never passes silently.
. "$(dirname "$0")/lib.sh"
SEED=${SEED:-5}
NIGHTS=${NIGHTS:-3}
W=$TMP/w

# The cluster starts while the local nights play (they need no Slurm): about half a
# minute of waiting on slurmd that the test no longer spends idle.
slurm_cluster_start

# squeue lists no job of this cluster (jobs that ended may show COMPLETING briefly).
queue_drains() {
	tries=50
	while [ $tries -gt 0 ]; do
		[ -z "$(squeue -h -o '%i %j %T' 2>&1)" ] && return 0
		sleep 0.2
		tries=$((tries - 1))
	done
	squeue -h -o '# still queued: %i %j %T' 2>&1
	return 1
}

# play LABEL: $NIGHTS nights in $W; next's tree per night, flags and notice ids to $TMP.
play() {
	label=$1
	: >"$TMP/$label.trees"
	n=1
	while [ "$n" -le "$NIGHTS" ]; do
		"$NEXTBOT" sim advance "$W" --days 1 >/dev/null 2>&1 || not_ok "$label: sim advance $n"
		date=$(date -u -d "2026-12-01 + $n days" +%Y-%m-%d)
		expect_exit 0 "$label: night $n ($date) runs" \
			"$NEXTBOT" -c "$W/nextbot.yaml" run --date "$date"
		cat "$TMP/err" >>"$TMP/$label.log"
		tag=next-$(echo "$date" | tr -d -)
		echo "$date $(git -C "$W/state/repo.git" rev-parse -q --verify "$tag^{tree}")" \
			>>"$TMP/$label.trees"
		[ "$label" = slurm ] && check "slurm: nothing left in Slurm's queue after night $n" \
			queue_drains
		n=$((n + 1))
	done
	"$NEXTBOT" -c "$W/nextbot.yaml" --json flagged >"$TMP/$label.flags.json"
	ls "$W/state/outbox" >"$TMP/$label.outbox"
	for r in "$W"/remotes/*.git; do
		git -C "$r" for-each-ref --format="$(basename "$r") %(refname) %(objectname)"
	done >"$TMP/$label.remotes"
}

expect_exit 0 "sim init --seed $SEED" "$NEXTBOT" sim init "$W" --seed "$SEED"
check "the world has the compiler cache" grep -q '^runner: {cache: {' "$W/nextbot.yaml"
# One confirmation run, not the world's three: the flaky defects they guard against are
# not compared here (none sits in a merged tree these nights), and each confirmation is
# a clean build and test of the project in both runs, about half of their CPU.
sed -i 's/^bisect: {confirm: 3}$/bisect: {confirm: 1}/' "$W/nextbot.yaml"
check "the world confirms once" grep -qx 'bisect: {confirm: 1}' "$W/nextbot.yaml"
cp -a "$W" "$TMP/pristine"

# ---- the local runner ----
start=$(date +%s)
play local
echo "# the local nights took $(($(date +%s) - start)) s"
mv "$W" "$TMP/local-world"

# ---- the same nights on Slurm ----
slurm_cluster_ready
cp -a "$TMP/pristine" "$W"
sed -i '/^runner: /d' "$W/nextbot.yaml"
printf 'runner: {kind: slurm, max_jobs: 4, cache: {listen: "127.0.0.1:0"}}\n' \
	>>"$W/nextbot.yaml"
start=$(date +%s)
play slurm
echo "# the Slurm nights took $(($(date +%s) - start)) s"
# "compiler cache: N connections of the nodes' relays over TCP, M without the night's token"
check "on Slurm the compiles reached the service through the relays, none refused" \
	$PYTHON - "$TMP/slurm.log" "$TMP/local.log" <<'EOF'
import re, sys
slurm, local = (open(p).read() for p in sys.argv[1:3])
relays = [(int(a), int(b)) for a, b in re.findall(
    r"compiler cache: (\d+) connections of the nodes' relays over TCP, (\d+) without", slurm)]
asked = [(int(a), int(b)) for a, b in re.findall(
    r"compiler cache: (\d+) compiles asked, (\d+) answered from the store", slurm)]
print("# relays' connections, refused, per night:", relays)
print("# compiles asked, answered from the store, per night:", asked)
ok = relays and all(r > 0 and bad == 0 for r, bad in relays)
ok = ok and asked and sum(h for _, h in asked) > 0
ok = ok and "relays over TCP" not in local
sys.exit(0 if ok else 1)
EOF
check "no token file is left after the nights" test ! -e "$W/state/workers/.cc-token"
check "no relay socket is left in the workers" \
	sh -c "! find '$W/state/workers' -name '.nextbot-slurm-*' | grep -q ."

check "both runs saw the same simulated world" cmp -s "$TMP/local.remotes" "$TMP/slurm.remotes"
check "the same next tree every night" cmp -s "$TMP/local.trees" "$TMP/slurm.trees"
check "every night tagged a next" sh -c "! grep -q ' $' '$TMP/local.trees'"
sed 's/^/# local: /' "$TMP/local.trees"
check "the same notices (outbox ids)" cmp -s "$TMP/local.outbox" "$TMP/slurm.outbox"
check "the same flags" $PYTHON - "$TMP/local.flags.json" "$TMP/slurm.flags.json" \
	"$W/truth.json" "$NIGHTS" <<'EOF'
import json, sys
local, slurm = (json.load(open(p))["flags"] for p in sys.argv[1:3])
truth = json.load(open(sys.argv[3]))
nights = int(sys.argv[4])
flaky = [d for d in truth["defects"] if d["kind"] == "flaky" and d.get("day", 0) <= nights
         and set(d["trees"]) - {"mm-unstable"}]
if flaky:
    print("# flaky defects in merged trees, their flags are not compared:",
          ", ".join(d["subject"] for d in flaky))
else:
    print("# no flaky defect in a merged tree in these nights: every flag is compared")
def key(f):
    p = f.get("partner") or {}
    return (f["id"], f["tree"], f["commit"], f["kind"], f["state"], f["command"],
            f["exit_code"], f["timed_out"], f["error"], f["excerpt"], f["first_seen"],
            f["last_seen"], p.get("commit"), json.dumps(f["verdict"], sort_keys=True))
a = sorted(key(f) for f in local if f["kind"] != "flaky")
b = sorted(key(f) for f in slurm if f["kind"] != "flaky")
for f in a:
    print("# local flag:", " ".join(str(x) for x in f[:5]))
bisected = [f for f in local if f["kind"] != "flaky" and (f.get("bisect") or {}).get("steps")]
bad = 0
if not bisected:
    print("# no breakage was bisected in these nights: pick another SEED or more NIGHTS")
    bad = 1
for x in a:
    if x not in b:
        print("# only with the local runner:", x)
        bad = 1
for x in b:
    if x not in a:
        print("# only on Slurm:", x)
        bad = 1
sys.exit(bad)
EOF
# The Slurm nights ran as Slurm jobs: named tree:commit, as runner.user (nobody, as root).
check "the Slurm nights ran as Slurm jobs named <tree>:<commit>" $PYTHON - \
	"$CLUSTER/jobcomp.txt" "$(id -u)" "$W" <<'EOF'
import re, sys
# nextbot's jobs: in the world's worker directories (not the cluster's own check)
jobs = [l for l in open(sys.argv[1]) if "WorkDir=%s/" % sys.argv[3] in l]
names = [re.search(r"Name=(\S+)", l).group(1) for l in jobs]
bad = [n for n in names if not re.fullmatch(r"[^:/ ]+:[0-9a-f]{12}/\d+\.\d+", n)]
trees = sorted({n.split(":")[0] for n in names})
print("# %d jobs; job names by tree: %s" % (len(names), ", ".join(trees)))
for n in bad[:5]:
    print("# job name without tree:commit:", n)
users = {re.search(r"UserId=(\S+)", l).group(1) for l in jobs}
if sys.argv[2] == "0" and users != {"nobody(65534)"}:
    print("# jobs ran as", users, "not as runner.user nobody")
    bad.append("user")
sys.exit(1 if bad or len(names) < 10 or not set(trees) - {"nextbot"} else 0)
EOF

# ---- a command outliving its timeout on Slurm is cancelled ----
# "sleep 317.<this test's pid>": the one left running would be this test's, not that of
# another run's t600 beside it
SLEEP="sleep 317.$$"
sed -i "s/^  - {name: build, command: make, timeout: 120}\$/  - {name: build, command: \"$SLEEP\", timeout: 3}/" \
	"$W/nextbot.yaml"
check "the config now builds with '$SLEEP', timeout 3" grep -qF "command: \"$SLEEP\", timeout: 3}" \
	"$W/nextbot.yaml"
"$NEXTBOT" sim advance "$W" --days 1 >/dev/null 2>&1 || not_ok "sim advance for the timeout night"
date=$(date -u -d "2026-12-01 + $((NIGHTS + 1)) days" +%Y-%m-%d)
"$NEXTBOT" -q -c "$W/nextbot.yaml" run --date "$date" >"$TMP/out" 2>"$TMP/err"
code=$?
queue=$(squeue -h -o '%i %j %T' 2>&1)
check "timeout night: squeue is empty at once after the night (exit $code)" test -z "$queue"
[ -z "$queue" ] || echo "# squeue: $queue"
check "timeout night: it completes (exit 0 or 1)" test "$code" -le 1
check "timeout night: the base is noted broken, nothing merged on top" $PYTHON -c '
import json, sys
r = json.load(open(sys.argv[1]))
print("# result %s, notes %s" % (r["result"], r["notes"]))
sys.exit(0 if r["result"] == "base-broken" and r["notes"] and r["finished"] else 1)' "$W/state/runs/$date/run.json"
check "timeout night: the job was cancelled in Slurm" \
	sh -c "grep 'Name=nextbot:[0-9a-f]*/' '$CLUSTER/jobcomp.txt' | tail -1 | grep -q 'JobState=CANCELLED'"
check "timeout night: no '$SLEEP' is left running" \
	sh -c "! ps -eo args= | grep -qxF '$SLEEP'"

# ---- SIGTERM in the middle of a job: the job is cancelled at once ----
sed -i "s/command: \"$SLEEP\", timeout: 3}/command: \"$SLEEP\", timeout: 600}/" "$W/nextbot.yaml"
check "the config now builds with '$SLEEP', timeout 600" \
	grep -qF "command: \"$SLEEP\", timeout: 600}" "$W/nextbot.yaml"
date=$(date -u -d "2026-12-01 + $((NIGHTS + 2)) days" +%Y-%m-%d)
"$NEXTBOT" -q -c "$W/nextbot.yaml" run --date "$date" >"$TMP/out" 2>"$TMP/err" &
pid=$!
tries=300
while [ $tries -gt 0 ] && [ -z "$(squeue -h -t R -o %j)" ]; do
	sleep 0.1
	tries=$((tries - 1))
done
check "SIGTERM night: the build runs as a job" test -n "$(squeue -h -t R -o %j)"
kill -TERM "$pid"
# bounded: without the cancel the night would wait for the whole 'sleep 317'
tries=600
while [ $tries -gt 0 ] && kill -0 "$pid" 2>/dev/null; do
	sleep 0.1
	tries=$((tries - 1))
done
if kill -0 "$pid" 2>/dev/null; then
	not_ok "SIGTERM night: nextbot ends soon after SIGTERM (still running after 60 s)"
	kill -9 "$pid"
else
	ok "SIGTERM night: nextbot ends soon after SIGTERM"
fi
wait "$pid"
queue=$(squeue -h -o '%i %j %T' 2>&1)
check "SIGTERM night: squeue is empty after" test -z "$queue"
[ -z "$queue" ] || echo "# squeue: $queue"
check "SIGTERM night: the run is unfinished, the runner failure and the SIGTERM noted" $PYTHON -c '
import json, sys
r = json.load(open(sys.argv[1]))
print("# result %s, notes %s" % (r["result"], r["notes"]))
sys.exit(0 if r["result"] == "unfinished" and any("runner" in x for x in r["notes"]) and
         any("a stop request (SIGTERM) came before next was clean" in x for x in r["notes"]) else 1)' \
	"$W/state/runs/$date/run.json"
done_testing
