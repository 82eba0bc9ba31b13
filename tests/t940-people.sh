#!/bin/sh
# Who should hear it, on a simulated world (seed 1, eight days, two nights; about
# 20 s):
#  - every report and maintainer mail of a flag is Cc'd to the people and lists
#    that truth.json says MAINTAINERS names for the defect's files (by
#    construction, not by the routing code), each with its why, but for those
#    truth.json calls absent, who get none; a flaky report
#    gets none; a conflict mail gets those of its conflicted paths;
#  - `nextbot maintainers` names as absent exactly the people truth.json names, and
#    as orphaned exactly its orphaned sections;
#  - `nextbot reviews` agrees with the trailers of every patch of every tree, read
#    by git (git log --format=%(trailers)), and never suggests a patch's author;
#  - the dashboard's audit and review pages, with every other page, fit 390 and
#    1280 px in headless Chromium (tests/dashboard.py).
. "$(dirname "$0")/lib.sh"

W=$TMP/world
# --no-cache: two nights of a fresh world, mostly misses: the compiler cache only adds
# (CPU 82 s without it, 118 s with it, run side by side on a loaded machine)
"$NEXTBOT" sim init "$W" --seed 1 --no-cache >/dev/null 2>&1 || { not_ok "sim init"; done_testing; exit; }
"$NEXTBOT" sim advance "$W" --days 5 >/dev/null 2>&1
"$NEXTBOT" -q -c "$W/nextbot.yaml" run --date 2025-01-11 >"$TMP/run1" 2>&1
"$NEXTBOT" sim advance "$W" --days 3 >/dev/null 2>&1
"$NEXTBOT" -q -c "$W/nextbot.yaml" run --date 2025-01-14 >"$TMP/run2" 2>&1
"$NEXTBOT" -c "$W/nextbot.yaml" --json flagged >"$TMP/flags.json"

# ---- routing ----
# A mail is a flag's by its X-Nextbot-Flag header, not by "flag ID" in its text: a
# report's Reproduce: block names the flags reverted before it ("(flag ID)" in each
# revert's message), which --trees 1's world shows (two mails of another flag once
# counted as flag b6538f4e6f42's).
cat >"$TMP/routing.py" <<'EOF'
import glob, json, re, sys
w, flags_path = sys.argv[1], sys.argv[2]
truth = json.load(open(w + "/truth.json"))
flags = json.load(open(flags_path))["flags"]
by_pid = {d["patch_id"]: d for d in truth["defects"]}
# people the audit calls absent get no mail (truth.json's absent: the audit's, test 5)
gone = {a.lower() for a in truth["maintainers"].get("absent", [])}
mails = [json.load(open(f)) for f in glob.glob(w + "/state/outbox/*.json")]
mails = [m for m in mails if m.get("channel") == "mail"]
def flag_of(m):
    head = m["text"].split("\n\n", 1)[0]
    x = re.search(r"^X-Nextbot-Flag: (\S+)$", head, re.M)
    return x.group(1) if x else None
bad = checked = 0
for f in flags:
    d = by_pid.get(f["patch_id"])
    if not d:
        continue
    want = {a.lower() for a in d["maintainers"]} - gone
    mine = [m for m in mails if flag_of(m) == f["id"] and m["kind"] == f["kind"]]
    if not mine:
        bad += 1
        print("flag", f["id"], "has no", f["kind"], "mail")
    for m in mine:
        got = {r["to"].lower() for r in m["recipients"]}
        checked += 1
        if f["kind"] == "flaky":
            if "MAINTAINERS file names" in m["text"]:
                bad += 1
                print("flaky mail", m["id"], "names MAINTAINERS people")
            continue
        if not want <= got:
            bad += 1
            print("mail", m["id"], "of flag", f["id"], "lacks", sorted(want - got))
        for a in sorted(got & gone):
            bad += 1
            print("mail", m["id"], "of flag", f["id"], "goes to", a, "whom the audit calls absent")
        # the why: a line "  Name <addr> (M: in SECTION)" of the body, not the Cc:
        why = {x.lower() for x in re.findall(r"^  (?:[^\n<]*<)?([^\s<>]+@[^\s<>]+)>? "
                                            r"\([MRL]: in ", m["text"], re.M)}
        for a in sorted(want - why):
            bad += 1
            print("mail", m["id"], "does not say why", a, "got it")
conf = [m for m in mails if m["kind"] == "merge-conflict" and "MAINTAINERS file names" in m["text"]]
print("checked", checked, "mails,", len(conf), "conflict mails with MAINTAINERS people, bad", bad)
sys.exit(1 if bad or not checked else 0)
EOF
$PYTHON "$TMP/routing.py" "$W" "$TMP/flags.json" >"$TMP/routing" 2>&1
check "each flag's mails reach the people MAINTAINERS names for its files (truth.json), saying why" \
	test $? = 0
sed 's/^/# /' "$TMP/routing"

# The checker itself, on a made-up outbox: flag bbb's report names flag aaa in its
# Reproduce: block (a revert's message) and goes to none of aaa's people: aaa's
# mails are still only aaa's; and a mail of aaa without its people is caught.
F=$TMP/fake
mkdir -p "$F/state/outbox"
cat >"$F/truth.json" <<'EOF'
{"defects": [{"patch_id": "p1", "maintainers": ["m@example.org"]}], "maintainers": {}}
EOF
cat >"$F/flags.json" <<'EOF'
{"flags": [{"id": "aaa", "patch_id": "p1", "kind": "build-failure"},
           {"id": "bbb", "patch_id": "p2", "kind": "build-failure"}]}
EOF
cat >"$F/state/outbox/1.json" <<'EOF'
{"id": "1", "channel": "mail", "kind": "build-failure", "recipients": [{"to": "m@example.org"}],
 "text": "To: m@example.org\nX-Nextbot-Flag: aaa\n\nthe MAINTAINERS file names:\n\n  M <m@example.org> (M: in SEC)\n\n-- \nnextbot (flag aaa)\n"}
EOF
cat >"$F/state/outbox/2.json" <<'EOF'
{"id": "2", "channel": "mail", "kind": "build-failure", "recipients": [{"to": "s@example.org"}],
 "text": "To: s@example.org\nX-Nextbot-Flag: bbb\n\nflag: bbb\n  git revert X && echo 'nextbot: X broke build (flag aaa)'\n"}
EOF
$PYTHON "$TMP/routing.py" "$F" "$F/flags.json" >"$TMP/fake-ok" 2>&1
check "routing checker: a mail naming another flag in its text is not that flag's" test $? = 0
sed 's/^/# /' "$TMP/fake-ok"
cp "$F/state/outbox/1.json" "$TMP/fake-1.json"
sed -i 's/"to": "m@example.org"/"to": "x@example.org"/' "$F/state/outbox/1.json"
$PYTHON "$TMP/routing.py" "$F" "$F/flags.json" >"$TMP/fake-bad" 2>&1
check "routing checker: a flag's mail without its MAINTAINERS people fails" \
	sh -c "test $? = 1 && grep -q 'mail 1 of flag aaa lacks' '$TMP/fake-bad'"
sed 's/^/# /' "$TMP/fake-bad"
sed 's/(M: in SEC)/(the MAINTAINERS file names)/' "$TMP/fake-1.json" >"$F/state/outbox/1.json"
$PYTHON "$TMP/routing.py" "$F" "$F/flags.json" >"$TMP/fake-why" 2>&1
check "routing checker: a flag's mail that Cc's them but says not why fails" \
	sh -c "test $? = 1 && grep -q 'mail 1 does not say why m@example.org' '$TMP/fake-why'"
sed 's/^/# /' "$TMP/fake-why"

# ---- the audit ----
"$NEXTBOT" -c "$W/nextbot.yaml" --json maintainers >"$TMP/audit.json" 2>"$TMP/audit.err"
$PYTHON - "$W" "$TMP/audit.json" >"$TMP/audit" 2>&1 <<'EOF'
import json, sys
truth = json.load(open(sys.argv[1] + "/truth.json"))["maintainers"]
audit = json.load(open(sys.argv[2]))
absent = {a.lower() for a in audit["absent"]}
orphans = {s["name"] for s in audit["sections"] if "orphan" in s["findings"]}
print("absent", sorted(absent), "orphans", sorted(orphans))
ok = absent == {a.lower() for a in truth["absent"]} and orphans == set(truth["orphans"])
ok = ok and not audit["problems"]
sys.exit(0 if ok else 1)
EOF
check "maintainers: exactly truth.json's absent people and orphaned sections" test $? = 0
sed 's/^/# /' "$TMP/audit"
"$NEXTBOT" -c "$W/nextbot.yaml" maintainers >"$TMP/audit.txt" 2>&1
check "maintainers: the text says who is absent since when" \
	grep -q 'Wilhelmina Gone <w.gone@retired.example.org>  not since .*ABSENT' "$TMP/audit.txt"
expect_exit 2 "maintainers: a bad --absent-days is a usage error" \
	"$NEXTBOT" -c "$W/nextbot.yaml" maintainers --absent-days -3

# ---- the review queue ----
"$NEXTBOT" -c "$W/nextbot.yaml" --json reviews >"$TMP/reviews.json" 2>"$TMP/reviews.err"
: >"$TMP/git-view"
base=$(sed -n 's/^base: {name: \([^,]*\),.*/\1/p' "$W/nextbot.yaml")
for t in $(sed -n 's/^  - name: //p' "$W/nextbot.yaml"); do
	git -C "$W/state/repo.git" log --no-merges \
		--format="$t %H %ae%x01%(trailers:key=Reviewed-by,key=Acked-by,valueonly,separator=%x02)%x01%s" \
		"refs/feeds/$base..refs/feeds/$t" >>"$TMP/git-view"
done
$PYTHON - "$TMP/reviews.json" "$TMP/git-view" "$TMP/audit.json" >"$TMP/reviews" 2>&1 <<'EOF'
import json, re, sys
q = json.load(open(sys.argv[1]))
absent = {a.lower() for a in json.load(open(sys.argv[3]))["absent"]}
rows = [p for t in q["trees"] for p in t["patches"]]
waiting = {(t["name"], p["commit"]) for t in q["trees"] for p in t["patches"]}
# one row per patch: the other branches carrying it are named in the row
also = {(b, p["subject"], p["author"]["email"].lower()) for p in rows for b in p["branches"]}
bad = total = 0
for line in open(sys.argv[2], encoding="utf-8"):
    head, _, rest = line.rstrip("\n").partition("\x01")
    trailers, _, subject = rest.partition("\x01")
    tree, commit, author = head.split(" ", 2)
    others = [a for a in re.findall(r"<([^>]*)>", trailers) if a.lower() != author.lower()]
    total += 1
    listed = (tree, commit) in waiting or (tree, subject, author.lower()) in also
    if bool(others) == listed:
        bad += 1
        print("disagrees:", tree, commit[:12], "reviews by others:", others)
pids = [p["patch_id"] for p in rows if p["patch_id"]]
for pid in sorted({x for x in pids if pids.count(x) > 1}):
    bad += 1
    print("patch", pid[:12], "listed", pids.count(pid), "times")
for p in rows:
    for s in p["suggested"]:
        if s["email"].lower() == p["author"]["email"].lower():
            bad += 1
            print("suggests the author of", p["commit"][:12])
        if s["email"].lower() in absent:
            bad += 1
            print("suggests", s["email"], "whom the audit calls absent, for", p["commit"][:12])
    if p["age_days"] > 8:  # the world is eight days old: no age from a far commit date
        bad += 1
        print("patch", p["commit"][:12], "waits", p["age_days"], "days in an 8-day world")
print(total, "patches,", len(rows), "rows,", sum(len(p["branches"]) > 1 for p in rows),
      "in several branches,", bad, "bad")
sys.exit(1 if bad or not total or not waiting or len(waiting) == total else 0)
EOF
check "reviews: agrees with the trailers (git's reading), one row per patch, never suggests the author or an absent person, ages within the world's" \
	test $? = 0
sed 's/^/# /' "$TMP/reviews"
expect_exit 2 "reviews: an unknown tree is a usage error" \
	"$NEXTBOT" -c "$W/nextbot.yaml" reviews no-such-tree

# ---- the dashboard's pages, on a phone and a desk ----
"$NEXTBOT" -c "$W/nextbot.yaml" report --html "$TMP/site" >/dev/null 2>&1
check "report --html: the audit and the review queue have their pages, linked from the index" \
	sh -c "grep -q 'Wilhelmina Gone' '$TMP/site/people/maintainers.html' &&
	       grep -q 'Waiting for review' '$TMP/site/people/reviews.html' &&
	       grep -q 'people/reviews.html' '$TMP/site/index.html'"
"$NEXTBOT" -c "$W/nextbot.yaml" --json status >"$TMP/status.json"
$PYTHON "$(dirname "$0")/dashboard.py" "$TMP/site" "$TMP/flags.json" "$TMP/status.json" \
	>"$TMP/dash" 2>&1
check "the dashboard at 390 and 1280 px: nothing scrolls sideways, no cell clipped" test $? = 0
sed 's/^/# /' "$TMP/dash"
done_testing
