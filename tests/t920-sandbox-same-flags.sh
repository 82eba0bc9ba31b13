#!/bin/sh
# The sandbox changes safety, not results: the same simulated world (seed 3, one
# tree besides the mm branches, a small project; $SEED, $NIGHTS to change) plays
# its nights with runner.sandbox: bwrap and with none, one after the other in the
# same path: the same flags (ids, trees, commits, kinds, states, errors, excerpts),
# next trees and notice ids.  Flaky flags are not compared (a flaky defect may fail
# in one run only).  About 3 minutes.
. "$(dirname "$0")/lib.sh"
SEED=${SEED:-3}
NIGHTS=${NIGHTS:-2}
W=$TMP/w

if [ ! -x /usr/bin/bwrap ]; then
	not_ok "bwrap is installed (scripts/deps): the sandboxed nights cannot run"
	done_testing
	exit 1
fi

# play LABEL: $NIGHTS nights in $W; next's tree per night, flags and notice ids to $TMP.
play() {
	label=$1
	: >"$TMP/$label.trees"
	n=1
	while [ "$n" -le "$NIGHTS" ]; do
		"$NEXTBOT" sim advance "$W" --days 1 >/dev/null 2>&1 || not_ok "$label: sim advance $n"
		date=$(date -u -d "2026-12-01 + $n days" +%Y-%m-%d)
		expect_exit 0 "$label: night $n ($date) runs" \
			"$NEXTBOT" -q -c "$W/nextbot.yaml" run --date "$date"
		tag=next-$(echo "$date" | tr -d -)
		echo "$date $(git -C "$W/state/repo.git" rev-parse -q --verify "$tag^{tree}")" \
			>>"$TMP/$label.trees"
		n=$((n + 1))
	done
	"$NEXTBOT" -c "$W/nextbot.yaml" --json flagged >"$TMP/$label.flags.json"
	# notice ids, but those about a flaky failure (it may fail in one run only)
	$PYTHON - "$W/state/outbox" >"$TMP/$label.outbox" <<'EOF'
import json, os, sys
for name in sorted(os.listdir(sys.argv[1])):
    n = json.load(open(os.path.join(sys.argv[1], name)))
    if "flaky" not in (n.get("kind") or "") + (n.get("subject") or "").lower():
        print(n["id"], n.get("kind"))
EOF
	"$NEXTBOT" -c "$W/nextbot.yaml" --json check-config >"$TMP/$label.plan.json"
}

# no compiler cache: the runner line is each run's own, and the cache needs the sandbox
expect_exit 0 "sim init --seed $SEED" "$NEXTBOT" sim init "$W" --seed "$SEED" --trees 1 --files 20 \
	--no-cache
cp -a "$W" "$TMP/pristine"
printf 'runner: {sandbox: bwrap}\n' >>"$W/nextbot.yaml"
start=$(date +%s)
play bwrap
echo "# the sandboxed nights took $(($(date +%s) - start)) s"
rm -rf "$W"
cp -a "$TMP/pristine" "$W"
printf 'runner: {sandbox: none}\n' >>"$W/nextbot.yaml"
start=$(date +%s)
play none
echo "# the nights without a sandbox took $(($(date +%s) - start)) s"

check "the plans differ in the sandbox only" $PYTHON - "$TMP/bwrap.plan.json" "$TMP/none.plan.json" <<'EOF'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
assert a["runner"]["sandbox"] == "bwrap" and b["runner"]["sandbox"] == "none", (a, b)
for p in (a, b):
    p["runner"].pop("sandbox")
    p["runner"].pop("bwrap")
assert a == b, (a, b)
EOF
check "the same next tree every night" cmp -s "$TMP/bwrap.trees" "$TMP/none.trees"
check "every night tagged a next" sh -c "! grep -q ' $' '$TMP/bwrap.trees'"
check "the same notices (outbox ids, flaky ones aside)" cmp -s "$TMP/bwrap.outbox" "$TMP/none.outbox"
diff "$TMP/bwrap.outbox" "$TMP/none.outbox" | sed 's/^/# /' | head -10
check "the same flags" $PYTHON - "$TMP/bwrap.flags.json" "$TMP/none.flags.json" <<'EOF'
import json, sys
boxed, bare = (json.load(open(p))["flags"] for p in sys.argv[1:3])
def key(f):
    p = f.get("partner") or {}
    return (f["id"], f["tree"], f["commit"], f["kind"], f["state"], f["command"],
            f["exit_code"], f["timed_out"], f["error"], f["excerpt"], f["first_seen"],
            f["last_seen"], p.get("commit"), json.dumps(f["verdict"], sort_keys=True))
a = sorted(key(f) for f in boxed if f["kind"] != "flaky")
b = sorted(key(f) for f in bare if f["kind"] != "flaky")
for f in a:
    print("# flag:", " ".join(str(x) for x in f[:5]))
bad = 0
if not [f for f in boxed if f["kind"] != "flaky" and (f.get("bisect") or {}).get("steps")]:
    print("# no breakage was bisected in these nights: pick another SEED or more NIGHTS")
    bad = 1
for x in a:
    if x not in b:
        print("# only in the sandbox:", x)
        bad = 1
for x in b:
    if x not in a:
        print("# only without it:", x)
        bad = 1
sys.exit(bad)
EOF
done_testing
