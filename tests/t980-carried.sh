#!/bin/sh
# Known facts are not re-learned.  A flag still open whose culprit is still in its
# tree is acted on again without a new search or confirmation: an unchanged night
# runs no command at all, and a night where another tree changed builds only what
# is new, once each (no pristine retry for a breakage already confirmed).  The
# outcome is the one a full search gives.
. "$(dirname "$0")/lib.sh"

W=$TMP/w
# the compiler cache stays on: its nights rebuild the same trees again and again (CPU
# 94 s with it, 133 s with --no-cache, run side by side on a loaded machine)
"$NEXTBOT" -q sim init "$W" --seed 1 >/dev/null || exit 1
NB() { "$NEXTBOT" -q -c "$W/nextbot.yaml" "$@"; }
runs() { ls "$W/state/runs/$1" | grep -c '^step-' || :; }
"$NEXTBOT" -q sim advance "$W" --days 1 >/dev/null || exit 1
# a work repository that borrows its objects from a mirror (git clone --reference): the
# box shows the borrowed store read-only, so checkouts and builds in it still work.  Its
# world is the first one's before its nights (a copy), its nights run beside the first
# one's (they share nothing) with one confirmation (this part is about the store, not
# the search); the results are read at the end.
W2=$TMP/w2
cp -a "$W" "$W2"
sed -i 's/^bisect: {confirm: 3}$/bisect: {confirm: 1}/' "$W2/nextbot.yaml"
# night2 NAME DATE: W2's night, its exit code, output and errors kept for replay NAME
night2() {
	"$NEXTBOT" -q -c "$W2/nextbot.yaml" run --date "$2" >"$TMP/$1.out" 2>"$TMP/$1.err"
	echo $? >"$TMP/$1.rc"
}
replay() { cat "$TMP/$1.out"; cat "$TMP/$1.err" >&2; return "$(cat "$TMP/$1.rc")"; }
borrowed() {
	git init -q --bare "$W2/state/repo.git"
	echo "$W2/sim/store.git/objects" >"$W2/state/repo.git/objects/info/alternates"
	night2 refused 2026-12-02
	chmod o+x "$TMP" "$W2" "$W2/sim"
	chmod -R o+rX "$W2/sim/store.git"   # as a shared mirror is
	night2 borrowed 2026-12-02
	"$NEXTBOT" -q -c "$W2/nextbot.yaml" --json flagged >"$TMP/borrowed.flags" 2>&1
	"$NEXTBOT" -q -c "$W2/nextbot.yaml" status --last 1 >"$TMP/borrowed.status" 2>&1
	# a store that is gone is skipped (git skips it too), not bound into the box; the
	# night builds what a harmless commit to net-next brings (not a whole new day)
	echo "/nonexistent/objects" >>"$W2/state/repo.git/objects/info/alternates"
	{ git_q clone -q -b net-next "$W2/remotes/net-next.git" "$TMP/nn2" &&
	  echo "/* harmless */" >>"$TMP/nn2/net/route.c" &&
	  git_q -C "$TMP/nn2" commit -qam "net: a harmless comment" &&
	  git -C "$TMP/nn2" push -q origin net-next; } || echo 1 >"$TMP/advance2.failed"
	night2 gone 2026-12-03
	"$NEXTBOT" -q -c "$W2/nextbot.yaml" status --last 1 >"$TMP/gone.status" 2>&1
}
borrowed &
borrowed_pid=$!
expect_exit 0 "night 1" NB run --date 2026-12-02
"$NEXTBOT" -q sim advance "$W" --days 1 >/dev/null || exit 1
expect_exit 0 "night 2: a new flag" NB run --date 2026-12-03
NB --json flagged >"$TMP/flags2.json"
check "two open flags" $PYTHON - "$TMP/flags2.json" <<'EOF2'
import json, sys
flags = [f for f in json.load(open(sys.argv[1]))["flags"] if f["state"] == "open"]
assert len(flags) == 2, flags
EOF2

# the same feeds again: every answer is known
expect_exit 0 "night 3 on unchanged feeds" NB run --date 2026-12-04
check "no command ran" test "$(runs 2026-12-04)" = 0
check "metrics.prom says so: 0 commands, 2 carried, 0 bisections" sh -c \
	"grep -qx 'nextbot_night_commands 0' '$W/state/metrics.prom' &&
	 grep -qx 'nextbot_night_carried_breakages 2' '$W/state/metrics.prom' &&
	 grep -qx 'nextbot_night_bisections 0' '$W/state/metrics.prom' &&
	 grep -qx 'nextbot_open_flags 2' '$W/state/metrics.prom'"
check "metrics.prom is in the Prometheus text format" $PYTHON - "$W/state/metrics.prom" <<'EOF2'
import re, sys
names = set()
for line in open(sys.argv[1]):
    line = line.rstrip("\n")
    m = re.match(r"# (HELP|TYPE) (nextbot_[a-z_]+) (.+)$", line)
    if m:
        if m.group(1) == "TYPE":
            assert m.group(3) in ("gauge", "counter"), line
            names.add(m.group(2))
        continue
    m = re.match(r'(nextbot_[a-z_]+)(\{[a-z_]+="[^"\\\n]*"(,[a-z_]+="[^"\\\n]*")*\})? (-?[0-9.e+-]+)$', line)
    assert m, line
    assert m.group(1) in names, line
    float(m.group(4))
for want in ("night_phase_seconds", "night_command_cpu_seconds", "night_verdict_cache_hits",
             "night_verdict_cache_misses", "night_bisect_probes", "open_flags",
             "outbox_notices", "repository_bytes"):
    assert "nextbot_" + want in names, want
EOF2
check "both flags acted on again, not searched" sh -c \
	"NB() { \"$NEXTBOT\" -q -c '$W/nextbot.yaml' \"\$@\"; }; NB status --last 1 | grep -c 'acted on again without a new search' | grep -qx 2"
check "the same next tree as the night before" test \
	"$(git -C "$W/state/repo.git" rev-parse next-20261203^^{tree})" = \
	"$(git -C "$W/state/repo.git" rev-parse next-20261204^^{tree})"

# one tree changes (net-next gains a harmless commit): only the new merges are built
git_q clone -q -b net-next "$W/remotes/net-next.git" "$TMP/nn" || exit 1
echo "/* harmless */" >>"$TMP/nn/net/route.c"
git_q -C "$TMP/nn" commit -qam "net: a harmless comment" || exit 1
git -C "$TMP/nn" push -q origin net-next || exit 1
expect_exit 0 "night 4: net-next changed" NB run --date 2026-12-05
# verdicts of record run clean by design (their logs end -pristine, after the kept
# tree's pass of the same commit); a retry would be a kept tree's *failure* run again
check "no pristine retry, no bisection, no confirmation" sh -c \
	"cd '$W/state/runs/2026-12-05' && for f in step-*.log; do
	   case \$f in *-pristine.log) continue;; esac
	   tail -1 \"\$f\" | grep -q 'Error' || continue
	   [ ! -e \"\${f%.log}-pristine.log\" ] || exit 1; done &&
	 grep -qx 'nextbot_night_confirm_runs 0' '$W/state/metrics.prom' &&
	 grep -qx 'nextbot_night_bisections 0' '$W/state/metrics.prom'"
# a test runs its build again first (in the same worker: make has nothing to do), and
# that run's log replaces the earlier one: the builds a test needed are counted twice
check "metrics.prom: the commands of the step logs and the tests' builds, no bisection" sh -c \
	"logs=\$(ls '$W/state/runs/2026-12-05' | grep -c '^step-');
	 tests=\$(ls '$W/state/runs/2026-12-05' | grep -c '^step-000-test-');
	 n=\$(sed -n 's/^nextbot_night_commands //p' '$W/state/metrics.prom');
	 test \$n -ge \$logs && test \$n -le \$((logs + tests)) &&
	 grep -qx 'nextbot_night_bisections 0' '$W/state/metrics.prom'"
check "each check ran at most once per tree and command" sh -c \
	"test \$(ls '$W/state/runs/2026-12-05' | grep '^step-' | sort | uniq -d | wc -l) = 0"
NB --json flagged >"$TMP/flags4.json"
check "the same two flags, seen tonight, confirmations unchanged" $PYTHON - "$TMP/flags2.json" "$TMP/flags4.json" <<'EOF2'
import json, sys
before = {f["id"]: f for f in json.load(open(sys.argv[1]))["flags"]}
after = {f["id"]: f for f in json.load(open(sys.argv[2]))["flags"]}
assert before.keys() == after.keys(), (before.keys(), after.keys())
for i, f in after.items():
    assert f["state"] == "open", f
    assert f["last_seen"] == "2026-12-05", f
    assert f["bisect"]["confirm_runs"] == before[i]["bisect"]["confirm_runs"], (f, before[i])
EOF2
NB status --last 1 >"$TMP/status4"
check "both culprits reverted again" sh -c "grep -c '  reverted ' '$TMP/status4' | grep -qx 2"
wait "$borrowed_pid"
# the sim keeps its store 0750 (git's objects inside are readable): the runner user cannot read it, and the night says so
expect_exit 1 "a store the runner user cannot reach is refused before the night" \
	replay refused
check "… naming the store and the folder that stops it" sh -c \
	"cat '$TMP/refused.err' |
	 grep -q \"borrows objects from '$W2/sim/store.git/objects'.*'$W2/sim' (0750\""
expect_exit 0 "a night with a borrowed object store" \
	replay borrowed
check "its breakage was found and flagged, no infrastructure note" sh -c \
	"cat '$TMP/borrowed.flags' | grep -q '\"state\": *\"open\"' &&
	 ! cat '$TMP/borrowed.status' | grep -q 'infrastructure'"
check "net-next of the borrowing world gained a commit" test ! -e "$TMP/advance2.failed"
expect_exit 0 "a night with an alternates line naming a store that is gone" \
	replay gone
check "… and no infrastructure note" sh -c \
	"! cat '$TMP/gone.status' | grep -q 'infrastructure'"
check "the objects stayed borrowed" test -z \
	"$(find "$W2/state/repo.git/objects" -path '*/pack/*.pack' -size +200k)"
done_testing
