#!/bin/sh
# The sandbox changes safety, not results: the same simulated world (seed 3, one
# tree besides the mm branches, a small project; $SEED, $NIGHTS to change) plays
# its nights with runner.sandbox: bwrap and with none, side by side in the same path
# (each in a mount namespace of its own, its copy of the world mounted there): the
# same flags (ids, trees, commits, kinds, states, errors, excerpts), next trees and
# notice ids.  Flaky flags are not compared (a flaky defect may fail in one run
# only).  About a minute and a half.
. "$(dirname "$0")/lib.sh"
SEED=${SEED:-3}
NIGHTS=${NIGHTS:-2}
W=$TMP/w

if [ ! -x /usr/bin/bwrap ]; then
	not_ok "bwrap is installed (scripts/deps): the sandboxed nights cannot run"
	done_testing
	exit 1
fi

# play LABEL: $NIGHTS nights in $W; next's tree per night, flags and notice ids to
# $TMP, each night's exit code, output and errors to $TMP/LABEL.N.* (read by replay).
# A script of its own, so that it can run in a mount namespace of its own.
cat >"$TMP/play.sh" <<'EOF'
label=$1
: >"$TMP/$label.trees"
n=1
while [ "$n" -le "$NIGHTS" ]; do
	"$NEXTBOT" sim advance "$W" --days 1 >/dev/null 2>&1 || echo "$n" >>"$TMP/$label.advance-failed"
	date=$(date -u -d "2026-12-01 + $n days" +%Y-%m-%d)
	"$NEXTBOT" -q -c "$W/nextbot.yaml" run --date "$date" >"$TMP/$label.$n.out" 2>"$TMP/$label.$n.err"
	echo $? >"$TMP/$label.$n.rc"
	tag=next-$(echo "$date" | tr -d -)
	echo "$date $(git -C "$W/state/repo.git" rev-parse -q --verify "$tag^{tree}")" \
		>>"$TMP/$label.trees"
	n=$((n + 1))
done
"$NEXTBOT" -c "$W/nextbot.yaml" --json flagged >"$TMP/$label.flags.json"
# notice ids, but those about a flaky failure (it may fail in one run only)
$PYTHON - "$W/state/outbox" >"$TMP/$label.outbox" <<'EOF2'
import json, os, sys
for name in sorted(os.listdir(sys.argv[1])):
    n = json.load(open(os.path.join(sys.argv[1], name)))
    if "flaky" not in (n.get("kind") or "") + (n.get("subject") or "").lower():
        print(n["id"], n.get("kind"))
EOF2
"$NEXTBOT" -c "$W/nextbot.yaml" --json check-config >"$TMP/$label.plan.json"
EOF
export NEXTBOT TMP W NIGHTS PYTHON
replay() { cat "$TMP/$1.out"; cat "$TMP/$1.err" >&2; return "$(cat "$TMP/$1.rc")"; }

# no compiler cache: the runner line is each run's own, and the cache needs the sandbox
expect_exit 0 "sim init --seed $SEED" "$NEXTBOT" sim init "$W" --seed "$SEED" --trees 1 --files 20 \
	--no-cache
for label in bwrap none; do
	cp -a "$W" "$TMP/w-$label"
	printf 'runner: {sandbox: %s}\n' "$label" >>"$TMP/w-$label/nextbot.yaml"
done
start=$(date +%s)
# both play side by side in the same path $W, each in a mount namespace of its own
# where its copy is mounted on $W (without the rights to: one after the other)
if unshare -m --propagation private true 2>/dev/null; then
	for label in bwrap none; do
		unshare -m --propagation private sh -c \
			'mount --bind "$1" "$W" && exec sh "$TMP/play.sh" "$2"' _ "$TMP/w-$label" "$label" &
	done
	wait
else
	for label in bwrap none; do
		rm -rf "$W" && cp -a "$TMP/w-$label" "$W" && sh "$TMP/play.sh" "$label"
	done
fi
echo "# the nights with and without a sandbox took $(($(date +%s) - start)) s"
for label in bwrap none; do
	check "$label: sim advance every day" test ! -e "$TMP/$label.advance-failed"
	n=1
	while [ "$n" -le "$NIGHTS" ]; do
		date=$(date -u -d "2026-12-01 + $n days" +%Y-%m-%d)
		expect_exit 0 "$label: night $n ($date) runs" replay "$label.$n"
		n=$((n + 1))
	done
done

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
