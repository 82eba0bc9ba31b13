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
for r in mainline mm; do git clone -q --bare $r "$W/$r.git"; done
push() { git -C "$W/src/mm" push -q -f "$W/mm.git" HEAD:master; }

cat >"$W/nextbot.yaml" <<EOF
workdir: state
base: {name: origin, url: "file://$W/mainline.git", branch: master}
trees:
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
check "night 2: review-missing for A alone" \
	test "$(kinds review-missing)" = "[review-missing] mm: add helper (mm-next)"

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

# night 4: a patch reviewed by its author alone is held, nothing breaks: the tree's
# reason counts it as held, never as dropped
cd "$W/src/mm"
patch mm/f.c 'int mm_f(void) { return 6; }' "mm: add mm_f" "$SELF"
push
expect_exit 0 "night 4 runs" NB run --date 2026-12-08
NB --json status >"$TMP/status4.json"
summary_of next-20261208 >"$TMP/summary4.txt"
check "night 4: mm-next's reason calls the held patch held, not dropped" \
	$PYTHON - "$TMP/status4.json" "$TMP/summary4.txt" <<'EOF'
import json, sys
run = [r for r in json.load(open(sys.argv[1]))["runs"] if r["date"] == "2026-12-08"][0]
t = [t for t in run["trees"] if t["name"] == "mm-next"][0]
assert t["reason"] == "1 patch held by the review gate left out", t
assert "dropped" not in open(sys.argv[2]).read(), "the summary says dropped"
EOF
expect_exit 0 "night 4: report --html" NB report --html "$TMP/site"
check "night 4: the dashboard lists the held patch with its author and why" \
	$PYTHON - "$TMP/site/index.html" <<'EOF'
import html, re, sys
page = open(sys.argv[1], encoding="utf-8").read()
assert "Held by the review gate (1)" in page, page
row = page.split("Held by the review gate (1)", 1)[1].split("</table>", 1)[0]
text = html.unescape(re.sub(r"<[^>]+>", " ", row))
for want in ("mm: add mm_f", "Zoë Ångström", "mm-next", "Reviewed-by"):
    assert want in text, (want, text)
EOF
done_testing
