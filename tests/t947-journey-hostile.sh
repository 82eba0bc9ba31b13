#!/bin/sh
# Hostile patch metadata in journeys (issue 31): subjects with CR and header lines,
# of 1,000 characters, with invalid UTF-8, bidi controls and markup; trailers that try
# to add a Bcc.  They reach the journey mails (one header each, nothing injected,
# valid UTF-8, 78 columns), `nextbot patch` (no control character, no bidi control,
# JSON that parses) and the dashboard (markup stays text, a phone's width) safely.
. "$(dirname "$0")/lib.sh"

ROOT=$(pwd)
W=$TMP/world
mkdir -p "$W/src"
cd "$W/src" || exit 1
git_q init -q mainline && cd mainline || exit 1
printf 'int main(void) { return 0; }\n' >main.c
git_q add -A && git_q commit -qm "initial" && cd ..
git_q clone -q mainline mm
for r in mainline mm; do git clone -q --bare $r "$W/$r.git"; done
git -C "$W/mm.git" branch -q unstable master

# evil N MESSAGE-FILE [AUTHOR]: a commit of file mm/evilN.c with that message, verbatim
evil() {
	mkdir -p "$W/src/mm/mm"
	printf 'int evil%s(void) { return %s; }\n' "$1" "$1" >"$W/src/mm/mm/evil$1.c"
	git -C "$W/src/mm" add -A
	GIT_AUTHOR_NAME="${3:-Mallory}" GIT_AUTHOR_EMAIL=mallory@example.org \
	GIT_COMMITTER_NAME=m GIT_COMMITTER_EMAIL=m@example.org \
		git -C "$W/src/mm" -c i18n.commitEncoding=UTF-8 commit -q --cleanup=verbatim \
		-F "$2"
}
mkdir -p "$W/src/mm/mm"
$PYTHON - "$TMP" <<'EOF'
import sys
t = sys.argv[1]
tail = ("\n\nBody.\n\nSigned-off-by: Mallory <mallory@example.org>\n"
        "Reviewed-by: Evil\r\nBcc: x <victim@example.org>\r\n"
        "Link: https://lore.kernel.org/r/%d@example.org\n")
msgs = [
    b"mm: evil\rBcc: victim@example.org\r\nX-Injected: yes",
    ("mm: " + "long " * 199 + "end").encode(),
    ("mm: " + "x" * 996).encode(),
    b"mm: bytes \xff\xfe\xc3 and \x1b[31mred\x1b[0m",
    "mm: fix \u202egnp.exe \u2066isolate\u2069".encode(),
    b"mm: <script>alert(1)</script> <img src=x onerror=alert(2)> &amp;",
]
for i, m in enumerate(msgs):
    with open("%s/msg%d" % (t, i), "wb") as f:
        f.write(m + (tail % i).encode())
EOF
for i in 0 1 2 3 4 5; do
	evil $i "$TMP/msg$i" "$([ $i = 5 ] && echo '<b>Mal</b> \"Lory\"' || echo Mallory)"
done
git -C "$W/src/mm" push -q -f "$W/mm.git" HEAD:unstable

cat >"$W/nextbot.yaml" <<EOF
workdir: state
base: {name: origin, url: "file://$W/mainline.git", branch: master}
trees:
  - {name: mm-next, url: "file://$W/mm.git", branch: master, contacts: ["m@example.org"]}
watch:
  - {name: mm-unstable, url: "file://$W/mm.git", branch: unstable}
notify: {from: "nextbot <nextbot@example.org>", list: "list@example.org"}
journey: {trees: ['mm-*'], list: "mm-commits@example.org"}
review_gate: [{trees: [mm-next], policy: report}]
EOF
NB() { "$NEXTBOT" -q -c "$W/nextbot.yaml" "$@"; }
# night 1: nothing followed yet (mm-unstable empty); night 2: the six arrive; night 3:
# they move on to mm-next
git -C "$W/mm.git" branch -q -f unstable master
expect_exit 0 "night 1 runs" NB run --date 2026-12-05
git -C "$W/src/mm" push -q -f "$W/mm.git" HEAD:unstable
expect_exit 0 "night 2 runs with the hostile patches" NB run --date 2026-12-06
git -C "$W/src/mm" push -q -f "$W/mm.git" HEAD:master
expect_exit 0 "night 3 runs" NB run --date 2026-12-07
# night 4: a second version of the one with escapes and invalid bytes (new Link, code)
git -C "$W/src/mm" reset -q --hard HEAD~6
sed -i 's|/r/3@example.org|/r/3v2@example.org|' "$TMP/msg3"
for i in 0 1 2 3 4 5; do
	evil $i "$TMP/msg$i" "$([ $i = 5 ] && echo '<b>Mal</b> \"Lory\"' || echo Mallory)"
	[ $i = 3 ] && printf 'int evil3(void) { return 33; }\n' >"$W/src/mm/mm/evil3.c" &&
		git -C "$W/src/mm" commit -q -a --amend --no-edit
done
git -C "$W/src/mm" push -q -f "$W/mm.git" HEAD:master
git -C "$W/src/mm" push -q -f "$W/mm.git" HEAD:unstable
expect_exit 0 "night 4 runs" NB run --date 2026-12-08
cd "$ROOT" || exit 1

OUT=$W/state/outbox
check "journey mails: one header each, nothing injected, valid UTF-8, to nobody smuggled in" \
	$PYTHON - "$OUT" <<'EOF'
import email, email.policy, glob, json, re, sys
kinds = {"patch-added", "patch-moved", "review-missing", "patch-replaced"}
seen = {k: 0 for k in kinds}
for path in glob.glob(sys.argv[1] + "/*.json"):
    n = json.load(open(path))
    if n["kind"] not in kinds or n["channel"] != "mail":
        continue
    seen[n["kind"]] += 1
    raw = n["body"]
    head = raw.split("\r\n\r\n", 1)[0]
    names = [l.split(":", 1)[0].lower() for l in head.split("\r\n") if l and l[0] not in " \t"]
    assert "bcc" not in names and "x-injected" not in names, names
    assert len(names) == len(set(names)), names
    assert "\r" not in head.replace("\r\n", ""), "a bare CR in the headers"
    msg = email.message_from_string(raw, policy=email.policy.default)
    text = msg.get_body(preferencelist=("plain",)).get_content()
    assert not re.search(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]", text), repr(text[:200])
    assert "<script>" not in msg["Subject"] or True  # text, not markup: it is a mail
    rcpt = {r["to"] for r in n["recipients"]}
    assert "victim@example.org" not in rcpt, rcpt
assert seen["patch-added"] == 6 and seen["patch-moved"] == 6, seen
assert seen["patch-replaced"] == 1, seen
print("#", seen)
EOF
check "journey mails keep to 78 columns" $PYTHON tests/mails.py width "$OUT"
NB patch "mm: " >"$TMP/list.txt" 2>&1
check "nextbot patch lists the six, with no control or bidi character" $PYTHON - "$TMP/list.txt" <<'EOF'
import sys
t = open(sys.argv[1], "rb").read().decode("utf-8")
assert t.startswith("6 patches match"), t[:200]
bad = [c for c in t if (ord(c) < 32 and c not in "\n") or 0x7f <= ord(c) < 0xa0 or
       ord(c) in (0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069,
                  0x200e, 0x200f, 0x61c)]
assert not bad, [hex(ord(c)) for c in bad]
EOF
NB patch gnp.exe >"$TMP/one.txt" 2>&1
check "nextbot patch shows one hostile journey whole, safely" sh -c "
	grep -q 'patch-id' '$TMP/one.txt' && ! grep -q \"\$(printf '\\342\\200\\256')\" '$TMP/one.txt' &&
	! grep -q \"\$(printf '\\033')\" '$TMP/one.txt'"
NB --json patch "mm: " >"$TMP/list.json"
check "nextbot --json patch parses and keeps the 1,000 characters" $PYTHON - "$TMP/list.json" <<'EOF'
import json, sys
ps = json.load(open(sys.argv[1]))["patches"]
assert len(ps) == 6, len(ps)
assert max(len(p["subject"]) for p in ps) >= 1000, [len(p["subject"]) for p in ps]
assert all(p["state"] == "in-next" for p in ps), [p["state"] for p in ps]
EOF
NB report --html "$TMP/site" >/dev/null
NB --json flagged >"$TMP/flags.json"
NB --json status --last 10 >"$TMP/status.json"
check "the dashboard: markup stays text, patch pages and lists fit a phone" \
	$PYTHON tests/dashboard.py "$TMP/site" "$TMP/flags.json" "$TMP/status.json" \
	--patches "$W/state/journeys.txt"
done_testing
