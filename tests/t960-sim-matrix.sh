#!/bin/sh
# A simulated world with configurations (`sim init --matrix`: make ARCH=x86_64|arm64|
# riscv, a three-cell build matrix): seed 8 puts a build defect on an #ifndef path
# into net-next on day 1, breaking two of the three cells.  The night of day 1, with
# runner.max_jobs 1 and 8 (two workdirs over the same remotes):
#  - one flag for the defect, naming both cells it breaks, and one submitter report;
#  - recall and precision 1 against truth.json, cells included;
#  - both workdirs end with the same flags, next trees and notices.
# About a minute of CPU (longer on a busy machine).
. "$(dirname "$0")/lib.sh"

W=$TMP/world
# the compiler cache stays on: with it or without (--no-cache) the test costs the same
# (CPU 51, 49 s with it; 53, 51 s without, side by side on a loaded machine), and the
# j8 config below joins its runner line
expect_exit 0 "sim init --matrix" "$NEXTBOT" -q sim init "$W" --seed 8 --trees 1 --matrix
check "the world's config has a three-cell matrix" sh -c "
	'$NEXTBOT' -c '$W/nextbot.yaml' check-config | grep -q '^cells: 3,'"
# max_jobs joins the runner line sim init writes where the compiler cache runs here
sed -e 's/^workdir: state$/workdir: state-j8/' -e 's/^runner: {/runner: {max_jobs: 8, /' \
	"$W/nextbot.yaml" >"$W/j8.yaml"
grep -q '^runner:' "$W/j8.yaml" || printf 'runner: {max_jobs: 8}\n' >>"$W/j8.yaml"
check "the j8 config is the same world with max_jobs 8" sh -c "
	'$NEXTBOT' -c '$W/j8.yaml' check-config | grep -q 'up to 8 at once'"

# the two workdirs play the night side by side (they share only the remotes they
# read); each one's exit code, output and errors are kept for replay CFG
replay() { cat "$TMP/$1.night.out"; cat "$TMP/$1.night.err" >&2; return "$(cat "$TMP/$1.night.rc")"; }
for night in 1; do
	"$NEXTBOT" -q sim advance "$W" --days 1 || not_ok "sim advance $night"
	for cfg in nextbot j8; do
		{ "$NEXTBOT" -q -c "$W/$cfg.yaml" run --date "2026-12-0$night" \
			>"$TMP/$cfg.night.out" 2>"$TMP/$cfg.night.err"; echo $? >"$TMP/$cfg.night.rc"; } &
	done
	wait
	for cfg in nextbot j8; do
		expect_exit 0 "night $night runs ($cfg)" replay "$cfg"
	done
done

check "truth.json has a defect that breaks two of three cells" $PYTHON - "$W/truth.json" <<'EOF'
import json, sys
t = json.load(open(sys.argv[1]))
assert t["matrix"] == {"ARCH": ["x86_64", "arm64", "riscv"]}, t.get("matrix")
assert any(d["kind"] == "build" and len(d["cells"]) == 2 and d["trees"] == ["net-next"]
           for d in t["defects"]), t["defects"]
EOF

for cfg in nextbot j8; do
	state=state; [ $cfg = j8 ] && state=state-j8
	"$NEXTBOT" -c "$W/$cfg.yaml" --json flagged >"$TMP/flags-$cfg.json"
	"$NEXTBOT" -c "$W/$cfg.yaml" --json status >"$TMP/status-$cfg.json"
	check "$cfg: recall and precision 1 against truth.json, cells included; one report each" \
		$PYTHON - "$W" "$TMP/flags-$cfg.json" "$TMP/status-$cfg.json" "$W/$state/outbox" <<'EOF'
import email, email.policy, glob, json, os, sys
world, flags_path, status_path, outbox = sys.argv[1:5]
truth = json.load(open(os.path.join(world, "truth.json")))
flags = [f for f in json.load(open(flags_path))["flags"] if f["kind"] != "flaky"]
runs = json.load(open(status_path))["runs"]
merged = {t["name"] for r in runs for t in r["trees"] if t["state"] in ("merged", "reverted")}
expected = [d for d in truth["defects"]
            if d["kind"] in ("build", "test", "semantic") and set(d["trees"]) & merged
            and not set(d["trees"]) <= {"mm-unstable"}]
def match(f, d):
    return f["patch_id"] == d["patch_id"] or (d["partner"] and f["patch_id"] == d["partner"]["patch_id"])
hits = [(f, d) for f in flags for d in expected if match(f, d)]
right = [(f, d) for f, d in hits if sorted(c["name"] for c in f["cells"]) == sorted(d["cells"])]
precision = len({f["id"] for f, d in right}) / len(flags) if flags else 1.0
recall = len({d["id"] for f, d in right}) / len(expected) if expected else 1.0
print("# %d flag(s), %d defect(s) to find: precision %.2f, recall %.2f" %
      (len(flags), len(expected), precision, recall))
for f in flags:
    print("#   flag %s %s %s cells %s" % (f["id"], f["kind"], f["subject"], [c["name"] for c in f["cells"]]))
for d in expected:
    print("#   defect %s %s %s cells %s" % (d["id"], d["kind"], d["subject"], d["cells"]))
assert expected and any(len(d["cells"]) == 2 for d in expected)
assert precision == 1.0 and recall == 1.0
for f, d in right:
    n = 0
    for path in glob.glob(outbox + "/*.json"):
        m = json.load(open(path))
        if m["channel"] == "mail" and m["kind"] == f["kind"]:
            msg = email.message_from_string(m["body"], policy=email.policy.default)
            if (msg["In-Reply-To"] or "").strip("<>") == f["message_id"]:
                n += 1
    assert n == 1, "flag %s: %d submitter reports" % (f["id"], n)
EOF
done

outcome() {
	$PYTHON - "$TMP/flags-$1.json" "$TMP/status-$1.json" <<'EOF'
import json, sys
for f in json.load(open(sys.argv[1]))["flags"]:
    print(f["id"], f["state"], f["kind"], f["commit"], sorted((c["name"], c["first_error"]) for c in f["cells"]))
for r in json.load(open(sys.argv[2]))["runs"]:
    print(r["date"], r["result"], r["next"], [(t["name"], t["state"], t.get("reason")) for t in r["trees"]])
EOF
	git -C "$W/$2/repo.git" for-each-ref --format='%(refname) %(objectname)' refs/heads refs/tags
	ls "$W/$2/outbox" | sort
}
outcome nextbot state >"$TMP/j1.out"
outcome j8 state-j8 >"$TMP/j8.out"
check "max_jobs 1 and 8: the same flags, next trees, tags and notices" cmp "$TMP/j1.out" "$TMP/j8.out"

# the same feeds a night later: the flag's cells are known, nothing is built again
expect_exit 0 "night 2 on unchanged feeds" "$NEXTBOT" -q -c "$W/nextbot.yaml" run --date 2026-12-02
check "no command ran, no search, the flag carried" sh -c \
	"grep -qx 'nextbot_night_commands 0' '$W/state/metrics.prom' &&
	 grep -qx 'nextbot_night_bisections 0' '$W/state/metrics.prom' &&
	 grep -qx 'nextbot_night_carried_breakages 1' '$W/state/metrics.prom'"
done_testing
