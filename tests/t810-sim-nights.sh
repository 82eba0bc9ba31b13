#!/bin/sh
# Ten simulated nights (seed 1, or $SEEDS) checked against the simulator's ground
# truth (what is measured on the simulated world):
#  - every build, test and semantic defect that sits in a merged tree is flagged
#    with the recorded patch (and partner for semantic ones);
#  - nothing that is only in mm-unstable is flagged, merged or mailed;
#  - no flag blames a patch the truth does not list (flaky ones included);
#  - each defect gets one report to its submitter, threaded to its Message-ID;
#  - a dropped patch never returns to next;
#  - every mail's prose lines fit 78 columns, no mail holds the workdir path, and
#    every report's Reproduce: block, run at the end (after mm-next and
#    mm-unstable were rebased) in an empty folder where only the remotes are
#    reachable, fails with the flag's first error line.
. "$(dirname "$0")/lib.sh"
MAILS=$(cd "$(dirname "$0")" && pwd)/mails.py
NIGHTS=${NIGHTS:-10}

for seed in ${SEEDS:-1}; do
	W=$TMP/world-$seed
	expect_exit 0 "seed $seed: sim init" "$NEXTBOT" sim init "$W" --seed "$seed"
	cfg=$W/nextbot.yaml
	dropped=
	night=1
	while [ "$night" -le "$NIGHTS" ]; do
		"$NEXTBOT" sim advance "$W" --days 1 >/dev/null 2>&1 || not_ok "sim advance $night"
		date=$(date -u -d "2026-12-01 + $night days" +%Y-%m-%d)
		expect_exit 0 "seed $seed: night $night runs" "$NEXTBOT" -q -c "$cfg" run --date "$date"
		# after night 4, the maintainer drops the first open flag's patch
		if [ "$night" = 4 ]; then
			dropped=$("$NEXTBOT" -c "$cfg" --json flagged | $PYTHON -c '
import json, sys
for f in json.load(sys.stdin)["flags"]:
    if f["state"] == "open" and f["kind"] != "flaky" and f["patch_id"]:
        print(f["id"], f["patch_id"]); break')
			if [ -n "$dropped" ]; then
				expect_exit 0 "seed $seed: drop ${dropped% *}" "$NEXTBOT" -q -c "$cfg" \
					drop "${dropped% *}" --reason "test drop"
			fi
		fi
		if [ -n "$dropped" ] && [ "$night" -gt 4 ]; then
			check "seed $seed night $night: the dropped patch is not in next" \
				sh -c "! git -C '$W/state/repo.git' log --format=%H refs/heads/next \
					--not refs/feeds/origin | while read c; do
					git -C '$W/state/repo.git' diff-tree -p --no-renames \$c^ \$c 2>/dev/null |
					git patch-id --stable; done | grep -q '^${dropped#* } '"
		fi
		night=$((night + 1))
	done
	"$NEXTBOT" -c "$cfg" --json flagged >"$TMP/flags-$seed.json"
	"$NEXTBOT" -c "$cfg" --json status >"$TMP/status-$seed.json"
	check "seed $seed: flags agree with truth.json" $PYTHON - "$W" "$TMP/flags-$seed.json" \
		"$TMP/status-$seed.json" <<'EOF'
import email, email.policy, glob, json, os, sys
world, flags_path, status_path = sys.argv[1:4]
truth = json.load(open(os.path.join(world, "truth.json")))
flags = json.load(open(flags_path))["flags"]
runs = json.load(open(status_path))["runs"]
merged_trees = {t["name"] for r in runs for t in r["trees"]
                if t["state"] in ("merged", "reverted", "stale")}
bad = []
known = {}
for d in truth["defects"]:
    for key in (d.get("patch_id"), d.get("message_id")):
        if key:
            known[key] = d
    p = d.get("partner") or {}
    for key in (p.get("patch_id"), p.get("message_id")):
        if key:
            known[key] = d
# no flag blames a patch that is not a defect; none is in mm-unstable
for f in flags:
    if f["tree"] == "mm-unstable":
        bad.append("flag in mm-unstable: %s" % f["id"])
    if f["kind"] != "flaky" and f["patch_id"] not in known and f["message_id"] not in known:
        bad.append("flag %s blames %s (%s), not a defect" % (f["id"], f["commit"], f["subject"]))
    if f["kind"] != "flaky" and f["patch_id"] in known and known[f["patch_id"]]["kind"] == "flaky":
        bad.append("flaky defect blamed as %s: %s" % (f["kind"], f["subject"]))
# every live build/test/semantic defect in a merged tree is flagged
def flagged(d):
    for f in flags:
        if f["patch_id"] == d["patch_id"] or (d.get("message_id") and f["message_id"] == d["message_id"]):
            return f
        p = f.get("partner")
    return None
for d in truth["defects"]:
    if d["kind"] not in ("build", "test", "semantic") or d.get("dropped"):
        continue
    if not set(d["trees"]) & merged_trees or set(d["trees"]) <= {"mm-unstable"}:
        continue
    f = flagged(d)
    if not f and d["kind"] == "semantic":
        p = d.get("partner") or {}
        f = next((x for x in flags if x["patch_id"] == p.get("patch_id")), None)
    if not f:
        bad.append("defect %s (%s, %s) not flagged: %s" % (d["id"], d["kind"], d["trees"], d["subject"]))
    elif d["kind"] == "semantic" and not f.get("partner"):
        bad.append("semantic defect %s flagged without a partner" % d["id"])
    elif d["kind"] == "semantic" and d.get("partner") and \
            f["partner"]["subject"] != d["partner"]["subject"] and f["subject"] != d["partner"]["subject"]:
        bad.append("semantic defect %s: partner %r, truth says %r" %
                   (d["id"], f["partner"]["subject"], d["partner"]["subject"]))
# one report per flag to the submitter, threaded to the Message-ID
reports = {}
for path in glob.glob(os.path.join(world, "state", "outbox", "*.json")):
    n = json.load(open(path))
    if n.get("channel") != "mail" or n["kind"] not in ("build-failure", "test-failure"):
        continue
    m = email.message_from_string(n["body"], policy=email.policy.default)
    if m["In-Reply-To"]:
        reports.setdefault(m["In-Reply-To"].strip("<>"), []).append(n["id"])
for f in flags:
    if f["kind"] == "flaky" or not f["message_id"]:
        continue
    got = reports.get(f["message_id"], [])
    if len(got) != 1:
        bad.append("flag %s: %d submitter reports threaded to %s" % (f["id"], len(got), f["message_id"]))
# nothing of mm-unstable in any night's trees
for r in runs:
    for t in r["trees"]:
        if t["name"] == "mm-unstable" and t["state"] != "left-out":
            bad.append("mm-unstable merged on %s" % r["date"])
for b in bad:
    print("#", b)
sys.exit(1 if bad else 0)
EOF
	# reports a submitter can act on from their own desk
	check "seed $seed: every prose line of every mail is at most 78 columns" \
		$PYTHON "$MAILS" width "$W/state/outbox"
	check "seed $seed: no mail holds the workdir path" $PYTHON "$MAILS" private "$W/state/outbox" \
		"$W/state"
	check "seed $seed: every report's Reproduce: block fails as its night did, after the rebases" \
		$PYTHON "$MAILS" repro "$W/state/outbox" "$TMP/flags-$seed.json" \
		--expose "$W/remotes" --expose "$W/sim"
	check "seed $seed: nothing from mm-unstable in next" sh -c "
		git -C '$W/state/repo.git' show next:Next/Trees | grep -qv mm-unstable &&
		! git -C '$W/state/repo.git' show next:Next/Trees | grep -q mm-unstable"
	# objects of an earlier mm-next may live on in today's mm-unstable: what matters
	# is that tonight's next holds no commit that only mm-unstable has
	check "seed $seed: next holds no commit that only mm-unstable has" sh -c "
		for c in \$(git -C '$W/remotes/mm.git' rev-list mm-unstable --not mm-next mm-stable); do
			git -C '$W/state/repo.git' cat-file -e \$c 2>/dev/null || continue
			git -C '$W/state/repo.git' merge-base --is-ancestor \$c refs/feeds/origin && continue
			git -C '$W/state/repo.git' merge-base --is-ancestor \$c refs/heads/next && exit 1
		done; exit 0"
	check "seed $seed: every mail of the outbox parses, headers within limits and clean" \
		$PYTHON - "$W/state/outbox" <<'EOF'
import email, email.policy, glob, json, sys
bad = []
allowed = {"from", "to", "cc", "subject", "date", "message-id", "in-reply-to", "references",
           "mime-version", "content-type", "content-transfer-encoding", "auto-submitted",
           "x-nextbot-event", "x-nextbot-flag"}
for path in glob.glob(sys.argv[1] + "/*.json"):
    n = json.load(open(path))
    if n["channel"] != "mail":
        continue
    raw = n["body"].encode("utf-8")
    head = raw.split(b"\r\n\r\n", 1)[0]
    rest = raw.replace(b"\r\n", b"")
    if b"\n" in rest or b"\r" in rest:
        bad.append("%s: bare CR or LF" % path)
    for line in head.split(b"\r\n"):
        if len(line) > 998:
            bad.append("%s: header line of %d octets" % (path, len(line)))
        if any(c > 126 for c in line):
            bad.append("%s: 8-bit header" % path)
    m = email.message_from_bytes(raw, policy=email.policy.default)
    names = {k.lower() for k in m.keys()}
    if not names <= allowed:
        bad.append("%s: unexpected headers %s" % (path, names - allowed))
    if m["Auto-Submitted"] != "auto-generated" or not m["Message-ID"]:
        bad.append("%s: Auto-Submitted or Message-ID missing" % path)
    if n["kind"] in ("build-failure", "test-failure", "flaky", "resolved", "dropped") and \
            not m["X-Nextbot-Flag"]:
        bad.append("%s: a notice about a flag without X-Nextbot-Flag" % path)
    (m.get_body(("plain",)) if m.is_multipart() else m).get_content()
for b in bad:
    print("#", b)
sys.exit(1 if bad else 0)
EOF
done
done_testing
