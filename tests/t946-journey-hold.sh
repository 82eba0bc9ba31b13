#!/bin/sh
# The review gate's hold (issue 31) on a small hand-made world (real git, real make):
# an unreviewed patch of mm-next is not in next, and neither is the patch whose replay
# conflicts without it (held too, with that reason: the list is asserted); a patch
# that needs it without conflicting breaks the build and is reported (a flag, a
# report), never silently; the night its review lands, both are in next, released,
# and the breakage is resolved.
. "$(dirname "$0")/lib.sh"

W=$TMP/world
mkdir -p "$W/src"
cd "$W/src" || exit 1
git_q init -q mainline && cd mainline || exit 1
cat >Makefile <<'EOF'
SRCS := $(wildcard */*.c) main.c
prog: $(SRCS)
	$(CC) -Wall -o $@ $(SRCS)
EOF
printf 'int main(void) { return 0; }\n' >main.c
git_q add -A && git_q commit -qm "initial" && cd ..

# patch FILE CONTENT SUBJECT [TRAILER]: a commit by Zoë with her sign-off and a Link
patch() {
	mkdir -p "$(dirname "$1")"
	printf '%s\n' "$2" >"$1"
	git add -A
	id=$(printf '%s' "$3" | tr -c 'a-z0-9' '-')
	git -c user.name="Zoë Ångström" -c user.email=zoe@example.org commit -qm "$3

Why $3.

Signed-off-by: Zoë Ångström <zoe@example.org>
${4:+$4
}Link: https://lore.kernel.org/r/20261201-$id@example.org"
}
OTHER="Reviewed-by: Rev Iewer <rev@example.org>"
SELF="Reviewed-by: Zoë Ångström <ZOE@example.org>"

git_q clone -q mainline mm && cd mm
patch mm/d.c 'int mm_d(void) { return 4; }' "mm: add mm_d" "$OTHER"
cd ..
git_q clone -q mainline stable
for r in mainline mm; do git clone -q --bare $r "$W/$r.git"; done
push() { git -C "$W/src/mm" push -q -f "$W/mm.git" HEAD:master; }
# mm-stable is a branch of the same repository (the family a held patch moves in)
push_stable() { git -C "$W/src/stable" push -q -f "$W/mm.git" HEAD:mm-stable; }
push_stable

cat >"$W/nextbot.yaml" <<EOF
workdir: state
base: {name: origin, url: "file://$W/mainline.git", branch: master}
trees:
  - {name: mm-stable, url: "file://$W/mm.git", branch: mm-stable,
     contacts: ["Andrea Morten <andrea@example.org>"]}
  - {name: mm-next, url: "file://$W/mm.git", branch: master,
     contacts: ["Andrea Morten <andrea@example.org>"]}
build:
  - {name: build, command: make, timeout: 60}
bisect: {confirm: 1, jobs: 1}
notify: {from: "nextbot <nextbot@example.org>", list: "list@example.org"}
journey: {trees: [mm-next]}
review_gate:
  - {trees: [mm-next], policy: hold}
EOF
NB() { "$NEXTBOT" -q -c "$W/nextbot.yaml" "$@"; }
OUT=$W/state/outbox
kinds() { # the notices of one kind, one subject a line
	for f in "$OUT"/*.json; do
		$PYTHON -c 'import json,sys; n=json.load(open(sys.argv[1]))
if n["kind"] == sys.argv[2] and n["channel"] == "mail": print(n["subject"])' "$f" "$1"
	done | sort
}
in_next() { git -C "$W/state/repo.git" cat-file -e "refs/heads/next:$1" 2>/dev/null; }

expect_exit 0 "night 1 (mm_d alone, reviewed) runs" NB run --date 2026-12-05
check "night 1: mm_d is in next" in_next mm/d.c
check "night 1: the tree's tip is kept from gc by one commit under refs/nextbot/journeys" \
	sh -c "git -C '$W/state/repo.git' rev-parse 'refs/nextbot/journeys^@' |
	grep -qx \"\$(git -C '$W/state/repo.git' rev-parse refs/feeds/mm-next)\" &&
	! git -C '$W/state/repo.git' for-each-ref refs/nextbot/journey/ | grep -q ."

# night 2: A unreviewed (its author's own review counts for nothing), B edits A's
# file (reviewed), C calls A's function from a file of its own (reviewed), E reviewed
cd "$W/src/mm"
patch mm/helper.c "$(printf 'int helper(void)\n{\n\treturn 1;\n}')" "mm: add helper" "$SELF"
patch mm/helper.c "$(printf 'int helper(void)\n{\n\treturn 2;\n}')" "mm: helper returns 2" \
	"$OTHER"
patch mm/use.c "$(printf 'int helper(void);\nint mm_use(void) { return helper(); }')" \
	"mm: use the helper" "$OTHER"
patch mm/e.c 'int mm_e(void) { return 5; }' "mm: add mm_e" "$OTHER"
push
expect_exit 0 "night 2 runs" NB run --date 2026-12-06
NB --json patch helper >"$TMP/p2.json"
check "night 2: exactly A (no review) and B (no longer applies without A) are held" \
	$PYTHON - "$TMP/p2.json" <<'EOF'
import json, sys
ps = {p["subject"]: p for p in json.load(open(sys.argv[1]))["patches"]}
held = sorted(s for s, p in ps.items() if p["state"] == "held")
assert held == ["mm: add helper", "mm: helper returns 2"], held
a, b = ps["mm: add helper"], ps["mm: helper returns 2"]
assert "Reviewed-by or Acked-by" in a["held"], a["held"]
assert "does not apply without a held patch" in b["held"] and "mm: add helper" in b["held"], b
assert [e["event"] for e in a["events"]] == ["added", "held"], a["events"]
assert ps["mm: use the helper"]["state"] != "held", ps["mm: use the helper"]
EOF
check "night 2: neither is in next; mm_e is" sh -c "! git -C '$W/state/repo.git' cat-file -e \
	refs/heads/next:mm/helper.c 2>/dev/null && git -C '$W/state/repo.git' cat-file -e \
	refs/heads/next:mm/e.c"
NB --json flagged >"$TMP/flags.json"
check "night 2: the patch that needs the held one broke the build and is flagged, not hidden" \
	$PYTHON - "$TMP/flags.json" <<'EOF'
import json, sys
flags = json.load(open(sys.argv[1]))["flags"]
assert [(f["subject"], f["kind"], f["state"]) for f in flags] == \
    [("mm: use the helper", "build-failure", "open")], flags
EOF
check "night 2: its report went out" sh -c "ls '$OUT' | grep -q . && \
	grep -l '\"build-failure\"' '$OUT'/*.json | head -1 | grep -q ."
check "night 2: held mails for both" test "$(kinds held | wc -l)" = 2
summary_of() { # the summary mail's text of night $1
	for f in "$OUT"/*.json; do
		$PYTHON -c 'import email, email.policy, json, sys
n = json.load(open(sys.argv[1]))
if n["kind"] == "summary" and n["channel"] == "mail" and sys.argv[2] in n["subject"]:
    m = email.message_from_string(n["body"], policy=email.policy.default)
    print(m.get_body(preferencelist=("plain",)).get_content())' "$f" "$1"
	done
}
summary_of next-20261206 >"$TMP/summary2.txt"
check "night 2: the summary lists A as a patch without a review, and A alone" sh -c "
	sed -n '/^Patches without a review/,/^\$/p' '$TMP/summary2.txt' | grep -q 'mm: add helper' &&
	test \$(sed -n '/^Patches without a review/,/^[A-Z-]/p' '$TMP/summary2.txt' |
		grep -c 'mm-next:') = 1"
# A's missing review is told in its [held] mail: one mail, not two
check "night 2: no review-missing mail beside the held ones" test -z "$(kinds review-missing)"

# night 3: A's review lands (the branch rebuilt with the tag added: same patches)
cd "$W/src/mm"
git reset -q --hard HEAD~4
patch mm/helper.c "$(printf 'int helper(void)\n{\n\treturn 1;\n}')" "mm: add helper" \
	"$SELF
$OTHER"
patch mm/helper.c "$(printf 'int helper(void)\n{\n\treturn 2;\n}')" "mm: helper returns 2" \
	"$OTHER"
patch mm/use.c "$(printf 'int helper(void);\nint mm_use(void) { return helper(); }')" \
	"mm: use the helper" "$OTHER"
patch mm/e.c 'int mm_e(void) { return 5; }' "mm: add mm_e" "$OTHER"
push
expect_exit 0 "night 3 runs" NB run --date 2026-12-07
NB --json patch helper >"$TMP/p3.json"
check "night 3: both released, in next" $PYTHON - "$TMP/p3.json" <<'EOF'
import json, sys
ps = {p["subject"]: p for p in json.load(open(sys.argv[1]))["patches"]}
for s in ("mm: add helper", "mm: helper returns 2"):
    p = ps[s]
    assert p["state"] == "in-next", p
    assert [e["event"] for e in p["events"]][-1] == "released", p["events"]
assert any(r["email"] == "rev@example.org" for r in ps["mm: add helper"]["reviews"])
EOF
check "night 3: next has the helper as B leaves it, and its user" sh -c "
	git -C '$W/state/repo.git' show refs/heads/next:mm/helper.c | grep -q 'return 2' &&
	git -C '$W/state/repo.git' cat-file -e refs/heads/next:mm/use.c"
check "night 3: two released mails" test "$(kinds released | wc -l)" = 2
NB --json flagged >"$TMP/flags3.json"
check "night 3: the breakage is resolved" $PYTHON - "$TMP/flags3.json" <<'EOF'
import json, sys
flags = json.load(open(sys.argv[1]))["flags"]
assert [f["state"] for f in flags] == ["resolved"], flags
EOF
# Night 2's mails went out in the story's order: the journey's, then the gate's, then
# the report, the summary last (what `outbox flush` sends first: by "order")
check "night 2: the mails go out moves, then gate, then breakage, the summary last" \
	$PYTHON - "$OUT" <<'PYEOF'
import glob, json, sys
ns = [json.load(open(p)) for p in glob.glob(sys.argv[1] + "/*.json")]
ns = sorted((n for n in ns if n["channel"] == "mail"), key=lambda n: (n["order"], n["id"]))
night2 = {n["order"].split(".")[0] for n in ns if n["kind"] == "held"}
assert len(night2) == 1, night2
night = [n["kind"] for n in ns if n["order"].split(".")[0] in night2]
place = [0 if k.startswith("patch-") else 1 if k in ("held", "released", "review-missing")
         else 3 if k == "summary" else 2 for k in night]
assert "held" in night and "build-failure" in night and night[-1] == "summary", night
assert place == sorted(place), night
PYEOF

# A held patch stays held whichever tree carries it (review_gate.follow, the default:
# mm-stable is followed for it, though journey.trees names mm-next alone),
# a dropped one is never released, and the hold ends with a mail the night its
# review lands and it is in next.  nofollow.yaml: the same world, follow: false.
sed -e 's/^workdir: state/workdir: nofollow/' \
	-e 's/policy: hold}/policy: hold, follow: false}/' "$W/nextbot.yaml" >"$W/nofollow.yaml"
text_of() { # the reader's text of the mails of kind $1 whose subject has $2
	for f in "$OUT"/*.json; do
		$PYTHON -c 'import json,sys; n=json.load(open(sys.argv[1]))
if n["kind"] == sys.argv[2] and n["channel"] == "mail" and sys.argv[3] in n["subject"]:
    print(" ".join(n["text"].split()))' "$f" "$1" "$2"
	done
}
state_of() {
	NB --json patch "$1" | $PYTHON -c 'import json,sys
print(" ".join(p["state"] for p in json.load(sys.stdin)["patches"]))'
}
cd "$W/src/mm" || exit 1
patch mm/f.c 'int mm_f(void) { return 6; }' "mm: add mm_f"
patch mm/g.c 'int mm_g(void) { return 7; }' "mm: add mm_g"
push
expect_exit 0 "night 4 (F and G, neither reviewed) runs" NB run --date 2026-12-08
"$NEXTBOT" -q -c "$W/nofollow.yaml" run --date 2026-12-08
check "night 4: F and G held" test "$(state_of mm_f) $(state_of mm_g)" = "held held"
# the tree's reason counts held patches as held, never as dropped; the dashboard
# lists them with their author and why
NB --json status >"$TMP/status4.json"
summary_of next-20261208 >"$TMP/summary4.txt"
check "night 4: mm-next's reason calls the held patches held, not dropped" \
	$PYTHON - "$TMP/status4.json" "$TMP/summary4.txt" <<'EOF'
import json, sys
run = [r for r in json.load(open(sys.argv[1]))["runs"] if r["date"] == "2026-12-08"][0]
t = [t for t in run["trees"] if t["name"] == "mm-next"][0]
assert t["reason"] == "2 patches held by the review gate left out", t
assert "dropped" not in open(sys.argv[2]).read(), "the summary says dropped"
EOF
expect_exit 0 "night 4: report --html" NB report --html "$TMP/site"
check "night 4: the dashboard lists the held patches with their author and why" \
	$PYTHON - "$TMP/site/index.html" <<'EOF'
import html, re, sys
page = open(sys.argv[1], encoding="utf-8").read()
assert "Held by the review gate (2)" in page, page
row = page.split("Held by the review gate (2)", 1)[1].split("</table>", 1)[0]
text = html.unescape(re.sub(r"<[^>]+>", " ", row))
for want in ("mm: add mm_f", "mm: add mm_g", "mm-next", "Reviewed-by"):
    assert want in text, (want, text)
EOF
text_of held 'mm: add mm_f' >"$TMP/held-f.txt"
check "night 4: F's [held] mail: held in every tree it moves to, until its review lands" \
	grep -q 'review lands, whichever tree carries it then; until then it stays held' \
	"$TMP/held-f.txt"
expect_exit 0 "the maintainer drops G" NB drop 20261201-mm--add-mm-g@example.org \
	--reason "not ready"
# night 5: F leaves mm-next for mm-stable, still without a review; G stays (dropped)
git reset -q --hard HEAD~2
patch mm/g.c 'int mm_g(void) { return 7; }' "mm: add mm_g"
push
cd "$W/src/stable" || exit 1
patch mm/f.c 'int mm_f(void) { return 6; }' "mm: add mm_f"
push_stable
expect_exit 0 "night 5 (F moved on to mm-stable, no gate there) runs" NB run --date 2026-12-09
"$NEXTBOT" -q -c "$W/nofollow.yaml" run --date 2026-12-09
check "night 5: F moved to mm-stable and is still held there" \
	test "$(state_of mm_f) $(text_of patch-moved 'mm: add mm_f' | wc -l)" = "held 1"
check "night 5: next does not carry F" sh -c "! git -C '$W/state/repo.git' cat-file -e \
	refs/heads/next:mm/f.c 2>/dev/null"
check "night 5: G is dropped" test "$(state_of mm_g)" = dropped
check "night 5: nothing released (F still held, G dropped): two released mails in all" \
	test "$(kinds released | wc -l)" = 2
check "night 5: without follow, F is released into next, and the mail says why" \
	$PYTHON - "$W/nofollow/outbox" <<'PYEOF'
import glob, json, sys
got = [n for n in (json.load(open(p)) for p in glob.glob(sys.argv[1] + "/*.json"))
       if n["kind"] == "released" and n["channel"] == "mail"]
assert len(got) == 1 and "mm: add mm_f (mm-stable)" in got[0]["subject"], got
assert "review_gate.follow is off" in " ".join(got[0]["text"].split()), got[0]["text"]
PYEOF
# night 6: F's review lands in mm-stable
git reset -q --hard HEAD~1
patch mm/f.c 'int mm_f(void) { return 6; }' "mm: add mm_f" "$OTHER"
push_stable
expect_exit 0 "night 6 (F reviewed) runs" NB run --date 2026-12-10
check "night 6: F is in next" sh -c "test '$(state_of mm_f)' = in-next &&
	git -C '$W/state/repo.git' cat-file -e refs/heads/next:mm/f.c"
text_of released 'mm: add mm_f (mm-stable)' >"$TMP/released-f.txt"
check "night 6: F's hold ended with a [released] mail: its review landed, it is in next" \
	grep -q 'its review has landed. It is in next tonight' "$TMP/released-f.txt"
check "G was never released" test -z "$(text_of released 'mm: add mm_g')"
done_testing
