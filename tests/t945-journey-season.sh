#!/bin/sh
# A patch's journey over a simulated season (issue 31): 20 nights of seed 1 (NIGHTS=,
# SEED= for longer runs outside make check) with journeys on every tree and
# mm-unstable watched, a hold gate on mm-next, no build (journeys need none).
#  - every journey event of truth.json (added, moved, replaced, removed, merged) from
#    the first night on has exactly one notice, to the right people, and no notice
#    has no event (tests/journeys.py notices);
#  - `nextbot patch` agrees with truth.json for every patch (tests/journeys.py patch);
#  - a second workdir over the same world with journey.digest: true (its first
#    DIGEST_NIGHTS nights, 6) gets one mail a night per recipient, listing exactly the
#    events the first one mailed them;
#  - every night (tests/journeys.py story): each journey mail states a change of
#    state that happened (the store, `nextbot patch --json`, `status --json` and next
#    itself agree), none is missing, released only into next, in story order;
#  - the mails keep 78 columns, the store and the state stay apart.
. tests/lib.sh

NIGHTS=${NIGHTS:-20}
SEED=${SEED:-1}
DIGEST_NIGHTS=${DIGEST_NIGHTS:-6}
W=$TMP/w
# the compiler cache stays on: with it or without (--no-cache) the test costs the same
# (CPU 34, 31 s with it; 35, 33 s without, side by side on a loaded machine)
"$NEXTBOT" -q sim init "$W" --seed "$SEED" || { not_ok "sim init"; done_testing; exit 1; }
$PYTHON - "$W/nextbot.yaml" <<'EOF'
import re, sys
p = sys.argv[1]
s = open(p).read()
s = re.sub(r"build:\n(  - .*\n)+test:\n(  - .*\n)+", "build: []\ntest: []\n", s)
s += ("journey: {trees: ['*'], list: mm-commits@lists.example.org}\n"
      "review_gate:\n  - {trees: [mm-next], policy: hold}\n")
open(p, "w").write(s)
open(p.replace("nextbot.yaml", "digest.yaml"), "w").write(
    s.replace("workdir: state", "workdir: digest").replace(
        "list: mm-commits@lists.example.org}", "list: mm-commits@lists.example.org, "
        "digest: true}"))
EOF
mkdir -p "$TMP/nights" "$TMP/digests"
failed=0
start=$(date +%s)
i=0
while [ $i -le "$NIGHTS" ]; do
	if [ $i -gt 0 ] && ! "$NEXTBOT" -q sim advance "$W"; then
		failed=1
		break
	fi
	d=$(date -u -d "2025-01-06 +$i days" +%F)
	# the digest workdir plays the same night beside the first one (they share only
	# the world's remotes, which they read)
	if [ $i -le "$DIGEST_NIGHTS" ]; then
		{
			ls "$W/digest/outbox" 2>/dev/null | sort >"$TMP/before.digest"
			"$NEXTBOT" -q -c "$W/digest.yaml" run --date "$d" || echo 1 >"$TMP/digest.failed"
			ls "$W/digest/outbox" | sort | comm -13 "$TMP/before.digest" - >"$TMP/digests/night.$i"
		} &
	fi
	ls "$W/state/outbox" 2>/dev/null | sort >"$TMP/before"
	cp "$W/state/journeys.txt" "$TMP/prev.txt" 2>/dev/null || rm -f "$TMP/prev.txt"
	"$NEXTBOT" -q -c "$W/nextbot.yaml" run --date "$d" || failed=1
	ls "$W/state/outbox" | sort | comm -13 "$TMP/before" - >"$TMP/nights/night.$i"
	# the night's journey mails against its store, `nextbot patch`, status and next
	$PYTHON tests/journeys.py story "$W" $i "$TMP/nights/night.$i" "$TMP/prev.txt" \
		"$NEXTBOT" >>"$TMP/story.out" || echo $i >>"$TMP/story.failed"
	wait
	[ ! -e "$TMP/digest.failed" ] || failed=1
	i=$((i + 1))
done
echo "# $NIGHTS nights (and $DIGEST_NIGHTS with digests) in $(($(date +%s) - start)) s"
check "every night ran" test $failed = 0
check "every journey event of truth.json has exactly one notice, to the right people" \
	$PYTHON tests/journeys.py notices "$W" "$TMP/nights" mm-commits@lists.example.org
check "every night's journey mails say what changed, all of it, in story order" \
	sh -c "test ! -e '$TMP/story.failed' ||
		{ grep -v '^# day [0-9]*: [0-9]* mails, ' '$TMP/story.out' | head -20; false; }"
check "some night held patches and some released them (the gate was tried)" \
	sh -c "grep '^# day [0-9]*: [0-9]* mails, ' '$TMP/story.out' | grep -qv ', 0 held, ' &&
		grep '^# day [0-9]*: [0-9]* mails, ' '$TMP/story.out' | grep -qv ', 0 released\$'"
check "nextbot patch agrees with truth.json for every patch" \
	$PYTHON tests/journeys.py patch "$W" "$NEXTBOT"
check "journey mails keep to 78 columns" $PYTHON tests/mails.py width "$W/state/outbox"
check "journey.digest: one mail per recipient a night, with exactly their events" \
	$PYTHON - "$W" "$TMP/nights" "$TMP/digests" <<'EOF'
import collections, email, email.policy, json, os, re, sys
w, nights, digests = sys.argv[1:]
KINDS = ("patch-added", "patch-moved", "patch-replaced", "patch-removed", "patch-merged",
         "review-missing", "held", "released")
def load(dirname, name):
    return json.load(open(os.path.join(w, dirname, "outbox", name)))
bad, events = [], 0
for f in sorted(os.listdir(digests)):
    want = collections.Counter()
    for name in open(os.path.join(nights, f)).read().split():
        n = load("state", name)
        if n["kind"] in KINDS and n["channel"] == "mail":
            for r in n["recipients"]:
                want[(r["to"].lower(), n["kind"], n["subject"])] += 1
    got, mails = collections.Counter(), collections.Counter()
    for name in open(os.path.join(digests, f)).read().split():
        n = load("digest", name)
        if n["kind"] in KINDS and n["channel"] == "mail":
            bad.append("%s: a single event mailed in digest mode: %s" % (f, n["subject"]))
        if n["kind"] != "journey-digest":
            continue
        msg = email.message_from_string(n["body"], policy=email.policy.default)
        text = msg.get_body(preferencelist=("plain",)).get_content().replace("\r\n", "\n")
        for r in n["recipients"]:
            mails[r["to"].lower()] += 1
            for kind, subject in re.findall(r"^\d+\. \[([a-z-]+)\] (.*)$", text, re.M):
                got[(r["to"].lower(), kind, subject)] += 1
    bad += ["%s: %s gets %d digests" % (f, a, c) for a, c in mails.items() if c != 1]
    if want != got:
        bad.append("%s: digests list %s, single mails %s" % (f, sorted(got - want)[:3],
                                                            sorted(want - got)[:3]))
    events += sum(want.values())
print("# %d (recipient, event) pairs compared" % events)
for b in bad[:20]:
    print("#", b)
sys.exit(1 if bad or not events else 0)
EOF
check "journey.digest: the list's digest is titled as a list's, a person's as theirs" \
	$PYTHON - "$W/digest/outbox" <<'EOF'
import glob, json, sys
lists = people = 0
for p in glob.glob(sys.argv[1] + "/*.json"):
    n = json.load(open(p))
    if n["kind"] != "journey-digest" or n["channel"] != "mail":
        continue
    to_list = [r["to"] for r in n["recipients"]] == ["mm-commits@lists.example.org"]
    assert ("] patch journeys: " if to_list else "] your patches: ") in n["subject"], n
    lists += to_list
    people += not to_list
assert lists and people, (lists, people)
EOF
check "journeys live in journeys.txt, not in state.json" \
	sh -c "grep -q '^patch	' '$W/state/journeys.txt' && ! grep -q 'patch-added' '$W/state/state.json'"
# `nextbot gc` forgets the journeys that ended keep_days nights before the last
# night (here 1), through the hook gc is given, and keeps every other journey.
$PYTHON - "$W/nextbot.yaml" <<'EOF'
import re, sys
p = sys.argv[1]
s = re.sub(r"(?m)^keep_days:.*\n", "", open(p).read())
open(p.replace("nextbot.yaml", "gc.yaml"), "w").write(s + "keep_days: 1\n")
EOF
journeys() {  # ended|open: the patch records of journeys.txt in that state
	awk -F '\t' -v want="$1" '$1 == "patch" {
		ended = ($7 == "merged" || $7 == "removed"); if ((want == "ended") == ended) n++ }
		END { print n + 0 }' "$W/state/journeys.txt"
}
ended=$(journeys ended) open=$(journeys open)
"$NEXTBOT" -v -c "$W/gc.yaml" gc >"$TMP/gc.out" 2>&1
forgot=$(sed -n 's/^forgot \([0-9]*\) ended patch journeys*$/\1/p' "$TMP/gc.out")
check "gc: the season ended some journeys ($ended of them)" test "$ended" -gt 0
check "gc: says how many ended journeys it forgot" test -n "$forgot"
check "gc: forgot ${forgot:-?} of the $ended ended journeys, all of them a night old" \
	test "${forgot:-0}" -gt 0 -a "$(journeys ended)" -eq $((ended - ${forgot:-0}))
check "gc: kept all $open journeys still under way" test "$(journeys open)" -eq "$open"
done_testing
