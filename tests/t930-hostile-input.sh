#!/bin/sh
# Hostile input that must not hurt whoever reads nextbot's files: commit subjects,
# file names and build output with invalid UTF-8 and terminal escapes (ESC, an OSC
# title, BEL, CR) are stored and printed repaired and escape-free in state.json,
# flagged (--json and text), bisect --json, the run's merge.log, Next/merge.log and
# the dashboard (RELIABILITY 2, 6).  A right-to-left override (U+202E) in a subject
# and an author's name shows as \u202e in all of these and in the mails and webhook
# bodies; a Persian name keeps its ZWNJ.  A truncated outbox file is kept aside, listed as
# damaged, named in the next summary and, being a flag's report, queued again from
# the state.  A damaged state.json says what is wrong and where, is kept aside, and
# says how to recover.  About 10 s.
. "$(dirname "$0")/lib.sh"

W=$TMP/world
mkdir -p "$W/src"
cd "$W/src" || exit 1
git_q init -q mainline && cd mainline || exit 1
printf 'all:\n\t@sh build.sh\n' >Makefile
printf 'cat lib/*.c >/dev/null; grep -q bad lib/*.c && { printf "lib/x.c:1: error: bad \\377\\376 \\033]0;owned\\007\\033[31mred\\033[0m\\r over\\n"; exit 1; }; exit 0\n' >build.sh
mkdir lib
echo 'int a;' >lib/a.c
echo 'shared' >"$(printf 'lib/esc\033[1mname')"
git_q add -A && git_q commit -qm initial && cd ..
# U+202E (right-to-left override) in the subject and the author's name, and a Persian
# name with U+200C (ZWNJ), which must stay as it is
RLO=$(printf '\342\200\256')
ZWNJ_NAME=$(printf 'Mehr\330\256\330\247\331\206\342\200\214\330\262\330\247\330\257\331\207')
SUBJ=$(printf 'lib: \377\376 a \033]0;owned\007 \033[31mred\033[0m\r subject %sexe.txt' "$RLO")
git_q clone -q mainline weird && cd weird || exit 1
echo 'int b;' >lib/b.c && git_q add -A && git_q commit -qm "lib: b"
echo 'int bad;' >lib/c.c && git_q add -A &&
	git_q -c user.name="Mallory ${RLO}yrollaM $ZWNJ_NAME" -c user.email=m@example.org \
	commit -qm "$SUBJ"
echo 'int d;' >lib/d.c && git_q add -A && git_q commit -qm "lib: d"
cd .. && git_q clone -q mainline other && cd other || exit 1
echo 'other side' >"$(printf 'lib/esc\033[1mname')" && git_q commit -qam "lib: other change"
cd .. && git_q clone -q mainline clash && cd clash || exit 1
echo 'clash side' >"$(printf 'lib/esc\033[1mname')" && git_q commit -qam "lib: clashing change"
cd ..
for r in mainline weird other clash; do git clone -q --bare "$r" "$W/$r.git"; done
cat >"$W/nextbot.yaml" <<EOF
workdir: state
base: {name: origin, url: "file://$W/mainline.git", branch: master}
trees:
  - {name: other, url: "file://$W/other.git", branch: master, contacts: ["o@example.org"]}
  - {name: clash, url: "file://$W/clash.git", branch: master, contacts: ["c@example.org"]}
  - {name: weird, url: "file://$W/weird.git", branch: master, contacts: ["w@example.org"]}
build:
  - {name: build, command: make, timeout: 60}
bisect: {confirm: 1}
notify:
  from: "nextbot <nextbot@example.org>"
  list: "list@example.org"
  webhooks: [{url: "http://127.0.0.1:9/json"}, {url: "http://127.0.0.1:9/chat", format: slack}]
EOF
NB() { "$NEXTBOT" -c "$W/nextbot.yaml" "$@"; }
S=$W/state

# clean FILE...: valid UTF-8, no ESC, BEL or CR, in the bytes and in any JSON string
clean() {
	$PYTHON - "$@" <<'EOF'
import json, sys
bad = 0
def walk(v, where):
    global bad
    if isinstance(v, str):
        if any(c in v for c in "\x1b\x07\r\x9b"):
            print("# %s: a control character in %r" % (where, v[:80])); bad = 1
    elif isinstance(v, list):
        for x in v: walk(x, where)
    elif isinstance(v, dict):
        for x in v.values(): walk(x, where)
for p in sys.argv[1:]:
    raw = open(p, "rb").read()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        print("# %s: invalid UTF-8 (%s)" % (p, e)); bad = 1; continue
    if any(c in text for c in "\x1b\x07\r"):
        print("# %s: a raw control character" % p); bad = 1
    if p.endswith(".json"):
        try:
            walk(json.loads(text), p)
        except ValueError as e:
            print("# %s: not JSON (%s)" % (p, e)); bad = 1
sys.exit(bad)
EOF
}

expect_exit 0 "a night with hostile subjects, file names and output" NB run --date 2026-12-05
check "the subject was really hostile (the oracle git log shows raw bytes)" \
	sh -c "git -C '$W/src/weird' log -1 --format=%s HEAD~1 | grep -q \"\$(printf '\\033')\""
check "a flag with the hostile output" sh -c "NB() { \"$NEXTBOT\" -c '$W/nextbot.yaml' \"\$@\"; }; NB --json flagged | grep -q 'owned'"
check "state.json: valid UTF-8 and JSON, no terminal escape" clean "$S/state.json"
NB --json flagged >"$TMP/flagged.json"
NB flagged >"$TMP/flagged.txt"
NB --json status >"$TMP/status.json"
check "flagged --json, flagged, status --json: the same" clean "$TMP/flagged.json" "$TMP/flagged.txt" "$TMP/status.json"
check "the run's merge.log and run.json" clean "$S/runs/2026-12-05/merge.log" "$S/runs/2026-12-05/run.json"
git -C "$S/repo.git" show next:Next/merge.log >"$TMP/next-merge.log"
check "Next/merge.log names the conflict in the escaped file" grep -q "esc.*name" "$TMP/next-merge.log"
check "Next/merge.log" clean "$TMP/next-merge.log"
NB report --html "$TMP/report" >/dev/null 2>&1
check "the dashboard" clean "$TMP/report/index.html"
# bidi KIND=PATH...: no U+202E itself in the bytes or in any value (JSON, a decoded mail
# or webhook body), the subject and the author's name show it as the six characters
# \u202e, the Persian name keeps its ZWNJ.  KIND: text, json, outbox (a folder), html (a
# folder).
bidi() {
	$PYTHON - "$@" <<'EOF'
import email, email.policy, glob, json, os, sys
RLO, MARK = "\u202e", "\\u202e"
PERSIAN = "Mehr\u062e\u0627\u0646\u200c\u0632\u0627\u062f\u0647"
NAME = "Mallory " + MARK + "yrollaM " + PERSIAN
bad = 0
def strings(v):
    if isinstance(v, str):
        yield v
    elif isinstance(v, list):
        for x in v: yield from strings(x)
    elif isinstance(v, dict):
        for x in v.values(): yield from strings(x)
def need(ok, what):
    global bad
    if not ok:
        print("# " + what); bad = 1
for arg in sys.argv[1:]:
    kind, path = arg.split("=", 1)
    files = sorted(glob.glob(path + "/*.json" if kind == "outbox" else path + "/**/*.html",
                             recursive=True)) if os.path.isdir(path) else [path]
    values, shown = [], []
    for f in files:
        raw = open(f, encoding="utf-8").read()
        need(RLO not in raw, "%s: U+202E itself in its bytes" % f)
        if kind == "json":
            values += strings(json.loads(raw))
        elif kind == "outbox":
            n = json.loads(raw)
            if n["channel"] == "mail":
                m = email.message_from_string(n["body"], policy=email.policy.default)
                values += [str(m["Subject"]), str(m["To"]), str(m["Cc"]),
                           m.get_body(preferencelist=("plain",)).get_content()]
            else:
                values += strings(json.loads(n["body"]))
        else:
            values.append(raw)
    need(not any(RLO in v for v in values), "%s: U+202E in a value" % path)
    text = "\n".join(values)
    need(MARK + "exe.txt" in text, "%s: the subject does not show \\u202e" % path)
    need(NAME in text, "%s: the author is not shown as %r" % (path, NAME))
sys.exit(bad)
EOF
}
check "bidi: flagged and flagged --json show U+202E as \\u202e, the Persian name as it is" \
	bidi "text=$TMP/flagged.txt" "json=$TMP/flagged.json"
check "bidi: state.json" bidi "json=$S/state.json"
check "bidi: the mails (subject, To:, text) and webhook bodies (event, chat)" \
	bidi "outbox=$S/outbox"
check "bidi: the dashboard" bidi "html=$TMP/report"
check "... which holds mails, JSON events and chat messages" sh -c "
	grep -q '\"url\":\"http://127.0.0.1:9/json\"' '$S'/outbox/*.json &&
	grep -q '\"url\":\"http://127.0.0.1:9/chat\"' '$S'/outbox/*.json &&
	grep -q '\"channel\":\"mail\"' '$S'/outbox/*.json"
expect_exit 0 "bisect --json on the hostile history" "$NEXTBOT" --json bisect --repo "$W/src/weird" \
	--good "$(git -C "$W/src/mainline" rev-parse HEAD)" --bad HEAD -- sh -c '! grep -q bad lib/*.c'
cp "$TMP/out" "$TMP/bisect.json"
check "bisect --json names the hostile commit" grep -q "owned" "$TMP/bisect.json"
check "bisect --json" clean "$TMP/bisect.json"

# --- a truncated outbox file: kept aside, listed, named, and the report queued again ---
REPORT=$($PYTHON - "$S/outbox" <<'EOF'
import json, os, sys
for n in sorted(os.listdir(sys.argv[1])):
    if n.endswith(".json"):
        d = json.load(open(os.path.join(sys.argv[1], n)))
        if d["kind"] in ("build-failure", "report") and d["channel"] == "mail" and "w@example.org" in json.dumps(d["recipients"]):
            print(n[:-5]); break
EOF
)
check "the flag's report is in the outbox" test -n "$REPORT"
head -c 100 "$S/outbox/$REPORT.json" >"$TMP/cut" && mv "$TMP/cut" "$S/outbox/$REPORT.json"
NB --json outbox list >"$TMP/list.json"
check "outbox list shows it as damaged" $PYTHON - "$TMP/list.json" "$REPORT" <<'EOF'
import json, sys
n = [x for x in json.load(open(sys.argv[1]))["notices"] if x["id"] == sys.argv[2]]
assert n and n[0]["state"] == "damaged", n
EOF
expect_exit 0 "the next night" NB run --date 2026-12-06
check "the damaged file is kept in outbox/damaged/" test -s "$S/outbox/damaged/$REPORT.json"
check "the report was queued again from the state, whole" $PYTHON -c "import json; d=json.load(open('$S/outbox/$REPORT.json')); assert d['state'] == 'queued'"
check "the night's notes name it" grep -q "notice $REPORT was damaged" "$S/runs/2026-12-06/run.json"
check "tonight's summary names it" sh -c "grep -l 'notice $REPORT was damaged' '$S'/outbox/*.json | grep -q ."

# --- a damaged state.json: what, where, kept aside, how to recover ---
cp "$S/state.json" "$TMP/state.good"
head -c 300 "$TMP/state.good" >"$S/state.json"
expect_exit 1 "a truncated state.json: status refuses" NB status
check "it says what is wrong and where" grep -q "is damaged: it ends in the middle (line [0-9]*, column [0-9]*)" "$TMP/err"
check "it says a copy is kept, and where" sh -c "grep -q \"kept as '$S/state.json.damaged-\" '$TMP/err' && ls '$S'/state.json.damaged-* >/dev/null"
check "it says how to recover" grep -q "To recover: mend the file" "$TMP/err"
expect_exit 1 "the night refuses it too" NB run --date 2026-12-07
cp "$TMP/state.good" "$S/state.json"
expect_exit 0 "mended, it runs again" NB status
done_testing
