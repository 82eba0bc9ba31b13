#!/bin/sh
# Commands by mail over IMAP (Debian's dovecot, a private instance) on a small simulated
# world with two injected build breaks: A by Zoë in net-next, B by Bo in mm-next.  Every answer is
# a real mail put into dovecot's Maildir; `nextbot inbox` polls it; the replies and
# notices land on aiosmtpd; the test reads back the flags dovecot holds.
#   drop A (the maintainer) -> the next night A is out of next, the drop names the mail,
#     one acknowledgement threads under the report;
#   undrop A -> the next night A is back (reverted again);
#   test: (the author) of a branch with the fix -> PASS; of the unfixed branch -> FAIL
#     with the flag's first error; both fetched over git:// from `git daemon` (allowed
#     by inbox.test_urls), merged in place of net-next, built as the night builds;
#     refused: a second test while one is queued, a stranger, file://, a host on a
#     private network, the day's limit;
#   fix: A (the author) -> the next reminder mentions it; the fix lands two nights
#     later and the flag resolves, the resolved mail naming the fix;
#   invalid B (mm-next's maintainer) -> the next night B is not blamed (merged, noted,
#     no new report).
# Each mail also goes through `nextbot mail-in` into a twin of the work directory: the
# same outcomes, drops and flags.  One poll over imaps:// with a self-signed CA.
# The daemon polls between nights.  About 70 s (six nights, two test builds).
. "$(dirname "$0")/lib.sh"
TESTS=$(cd "$(dirname "$0")" && pwd)

# --- servers: aiosmtpd for what nextbot sends, dovecot for what it receives ------------
mkdir -p "$TMP/smtp" "$TMP/imap" "$TMP/mail"
$PYTHON "$TESTS/smtpd.py" "$TMP/smtp" 2>"$TMP/smtp/log" &
SMTPD=$!
stop_servers() {
	kill "$SMTPD" 2>/dev/null
	sh "$TESTS/dovecot.sh" stop "$TMP/imap"
}
at_exit stop_servers
sh "$TESTS/dovecot.sh" start "$TMP/imap" || exit 1
i=0; while [ ! -e "$TMP/smtp/port" ] && [ $i -lt 500 ]; do sleep 0.02; i=$((i + 1)); done
export NB_IMAP_PW=imap-secret
# git daemon serves the branches to test: $TMP/net is Zoë's clone
GITD_PORT=$($PYTHON -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
git daemon --reuseaddr --listen=127.0.0.1 --port="$GITD_PORT" --base-path="$TMP" --export-all \
	"$TMP/net" 2>"$TMP/gitd.log" &
GITD=$!
stop_gitd() { kill "$GITD" 2>/dev/null; }
at_exit stop_gitd
GITURL=git://127.0.0.1:$GITD_PORT/net

# --- the world ------------------------------------------------------------------------
W=$TMP/world
"$NEXTBOT" -q sim init "$W" --seed 3 --trees 1 --files 8 >/dev/null || exit 1
sed -i -e 's|^bisect: .*|bisect: {confirm: 1}|' \
	-e "s|^  list: .*|&\n  remind_days: 1\n  smtp: {url: 'smtp://127.0.0.1:$(cat "$TMP/smtp/port")', tls: none}|" \
	"$W/nextbot.yaml"
cat >>"$W/nextbot.yaml" <<EOF
inbox:
  url: "imap://127.0.0.1:$(cat "$TMP/imap/port")/INBOX"
  tls: none
  user: bot
  password_env: NB_IMAP_PW
  authserv_id: mx.example.org
  max_tests: 2
  test_urls: ["git://127.0.0.1:$GITD_PORT/", "git://localhost:$GITD_PORT/"]
EOF
NB() { "$NEXTBOT" -q -c "$W/nextbot.yaml" "$@"; }
S=$W/state

git_q clone -q "$W/remotes/net-next.git" "$TMP/net" && cd "$TMP/net" || exit 1
sed -i 's/r += sk->sk_rcvbuf & 50;/r += sk->sk_rcvbuf \& 50/' net/route.c
git -c user.name="Zoë Ångström" -c user.email=zoe@example.org commit -qam \
	"net/route: tighten net_route_limit()

Signed-off-by: Zoë Ångström <zoe@example.org>
Link: https://lore.kernel.org/r/20261130-route-limit-v1@example.org"
git push -q origin HEAD:net-next && cd "$TMP" || exit 1
git_q clone -q -b mm-next "$W/remotes/mm.git" "$TMP/mm" && cd "$TMP/mm" || exit 1
printf 'int mm_extra(void) { return missing; }\n' >mm/extra.c && git add -A &&
	git -c user.name="Bo Berg" -c user.email=bo@example.org commit -qm \
	"mm: add mm_extra

Signed-off-by: Bo Berg <bo@example.org>
Link: https://lore.kernel.org/r/20261130-extra-v1@example.org" &&
	git push -q origin HEAD:mm-next && cd "$TMP" || exit 1

expect_exit 0 "night 1 runs" NB run --date 2026-12-02
# flag_of SUBJECT-WORD: the id of the flag whose subject holds it
flag_of() {
	"$NEXTBOT" -c "$W/nextbot.yaml" --json flagged | $PYTHON -c '
import json, sys
print([f["id"] for f in json.load(sys.stdin)["flags"] if sys.argv[1] in f["subject"]][0])' "$1"
}
flag_state() {
	"$NEXTBOT" -c "$W/nextbot.yaml" --json flagged | $PYTHON -c '
import json, sys
print([f["state"] for f in json.load(sys.stdin)["flags"] if f["id"] == sys.argv[1]][0])' "$1"
}
A=$(flag_of tighten); B=$(flag_of mm_extra)
check "night 1 flags both breaks" test -n "$A" -a -n "$B" -a "$A" != "$B"
# report_of SUBJECT-WORD: the Message-ID of the submitter report (as received by aiosmtpd)
report_of() {
	$PYTHON - "$TMP/smtp" "$1" <<'EOF'
import glob, json, sys
for f in sorted(glob.glob(sys.argv[1] + "/msg-*.json")):
    h = dict(json.load(open(f))["headers"])
    if h.get("X-Nextbot-Event") == "build-failure" and h["Subject"].startswith("Re: ") \
       and sys.argv[2] in h["Subject"]:
        print(h["Message-ID"]); break
EOF
}
RA=$(report_of tighten); RB=$(report_of mm_extra)
check "the reports reached the SMTP server" test -n "$RA" -a -n "$RB"

# The twin: the same work directory after night 1, fed the same mails by mail-in.
cp -a "$S" "$TMP/twin"
sed -e "s|^workdir: .*|workdir: $TMP/twin|" -e '/^  smtp: /d' -e '/^  url: "imap/d' \
	-e '/^  tls: none/d' -e '/^  user: bot/d' -e '/^  password_env: NB_IMAP_PW/d' \
	"$W/nextbot.yaml" >"$TMP/twin.yaml"

# mail NAME FROM MSGID IN-REPLY-TO < BODY: an answer, vouched for by mx.example.org,
# put into dovecot's Maildir; the twin gets it later, when the world polls.
mail() {
	name=$1 from=$2 id=$3 irt=$4
	domain=${from##*@}; domain=${domain%>}
	{
		printf 'Return-Path: <%s>\r\n' "$(echo "$from" | sed 's/.*<//; s/>//')"
		printf 'Authentication-Results: mx.example.org; dkim=pass header.d=%s;\r\n' "$domain"
		printf ' dmarc=pass header.from=%s\r\n' "$domain"
		printf 'Received: from mail.%s by mx.example.org with ESMTPS\r\n' "$domain"
		printf 'From: %s\r\nTo: Zoe <zoe@example.org>, nextbot <nextbot@example.org>\r\n' "$from"
		printf 'Cc: Jakob Kiczek <jakob@netdev.example.org>, linux-net@lists.example.org\r\n'
		printf 'Subject: Re: a report\r\nMessage-ID: %s\r\n' "$id"
		printf 'In-Reply-To: %s\r\nReferences: %s\r\n' "$irt" "$irt"
		printf 'Date: Wed, 02 Dec 2026 08:00:00 +0000\r\nMIME-Version: 1.0\r\n'
		printf 'Content-Type: text/plain; charset=utf-8\r\n\r\n'
		sed 's/$/\r/'
	} >"$TMP/mail/$name.eml"
	sh "$TESTS/dovecot.sh" deliver "$TMP/imap" "$TMP/mail/$name.eml"
	echo "$name" >>"$TMP/mail/pending"
}
# poll: the world polls IMAP; the twin reads the same mails on stdin
poll() {
	expect_exit 0 "$1" NB inbox
	while read -r name; do
		"$NEXTBOT" -q -c "$TMP/twin.yaml" mail-in <"$TMP/mail/$name.eml" ||
			echo "mail-in $name: exit $?" >>"$TMP/twin.err"
	done <"$TMP/mail/pending"
	: >"$TMP/mail/pending"
	# without inbox.url, `inbox` runs what mail-in queued (the tests)
	"$NEXTBOT" -q -c "$TMP/twin.yaml" inbox || echo "twin inbox: exit $?" >>"$TMP/twin.err"
}
# same_as_twin [FLAG STATE]: the twin handled the same mails with the same outcomes,
# drops and flag histories (and FLAG is in STATE there); the nights are the world's only
same_as_twin() {
	$PYTHON - "$S/state.json" "$TMP/twin/state.json" "$@" <<'EOF'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
def fix(f):
    return f["fix"] and (f["fix"]["subject"], f["fix"]["by"])
def view(s):
    return ([(r["key"], r["outcome"], r["summary"]) for r in s["inbox"]],
            [(d["patch_id"], d["active"], d["by"], d["mail"], d["reason"]) for d in s["drops"]],
            [(f["id"], fix(f), [(m["command"], m["by"], m["message_id"], m["text"])
                                for m in f["mail"] if m["command"] != "tested"])
             for f in s["flags"]],
            [(t["key"], t["flag"], t["by"], t["url"], t["branch"]) for t in s["tests"]])
va, vb = view(a), view(b)
assert va == vb, (va, vb)
if len(sys.argv) > 3:
    st = [f["state"] for f in b["flags"] if f["id"] == sys.argv[3]]
    assert st == [sys.argv[4]], st
EOF
}
# acks ID: "<distinct Message-IDs>|<recipients>" of the replies aiosmtpd got to mail ID
acks() {
	$PYTHON - "$TMP/smtp" "$1" <<'EOF'
import glob, json, sys
ids, rcpts = set(), []
for f in sorted(glob.glob(sys.argv[1] + "/msg-*.json")):
    m = json.load(open(f))
    h = dict(m["headers"])
    if h.get("X-Nextbot-Event") == "reply" and h.get("In-Reply-To") == sys.argv[2]:
        ids.add(h["Message-ID"]); rcpts += m["rcpt_tos"]
print("%d|%s" % (len(ids), " ".join(sorted(rcpts))))
EOF
}
JAKOB="Jakob Kiczek <jakob@netdev.example.org>"
ZOE="Zoë Ångström <zoe@example.org>"
tree_state() { # the state of tree $1 in the last night
	"$NEXTBOT" -c "$W/nextbot.yaml" --json status | $PYTHON -c '
import json, sys
print([t["state"] for t in json.load(sys.stdin)["runs"][-1]["trees"] if t["name"] == sys.argv[1]][0])' "$1"
}
in_next() { git -C "$S/repo.git" log --format=%s next | grep -q "$1"; }

# --- drop A -----------------------------------------------------------------------------
printf 'Thanks, that one is mine to fix.\n\n#nextbot drop wrong locking\n\n> quoted report\n' |
	mail drop "$JAKOB" "<jakob-drop@netdev.example.org>" "$RA"
poll "the inbox is polled: the drop"
check "A is dropped" test "$(flag_state "$A")" = dropped
check "mail-in did the same to the twin" same_as_twin "$A" dropped
check "one acknowledgement, to Jakob, Zoë and the list" test "$(acks '<jakob-drop@netdev.example.org>')" = \
	"1|jakob@netdev.example.org linux-net@lists.example.org zoe@example.org"
check "it threads under the report" $PYTHON - "$TMP/smtp" "$RA" "$A" <<'EOF'
import glob, json, sys
for f in sorted(glob.glob(sys.argv[1] + "/msg-*.json")):
    m = json.load(open(f))
    h = dict(m["headers"])
    if h.get("In-Reply-To") == "<jakob-drop@netdev.example.org>":
        refs = h["References"].split()
        assert refs == [sys.argv[2], "<jakob-drop@netdev.example.org>"], refs
        assert h["Subject"] == "Re: a report", h["Subject"]
        assert h["Auto-Submitted"] == "auto-generated"
        assert h.get("X-Nextbot-Flag") == sys.argv[3], h
        b = " ".join(m["body"].split())
        assert "Dropped" in b and "until `#nextbot undrop`" in b, b
        assert max(len(l) for l in m["body"].split("\n")) <= 78, m["body"]
EOF
check "dovecot holds the mail as seen and handled" sh -c \
	"sh '$TESTS/dovecot.sh' flags '$TMP/imap' | grep -q '^1 .*\\\\Seen' &&
	 sh '$TESTS/dovecot.sh' flags '$TMP/imap' | grep -q '^1 .*\\\$Nextbot'"
poll "a second poll finds nothing new"
# the same mail delivered again, and the first copy found unmarked (as after a kill -9
# between handling it and marking it)
sh "$TESTS/dovecot.sh" deliver "$TMP/imap" "$TMP/mail/drop.eml"
echo drop >>"$TMP/mail/pending"
sh "$TESTS/dovecot.sh" unmark "$TMP/imap" 1
poll "the inbox is polled: the same mail twice, and once more"
check "... and acts once: one acknowledgement" test "$(acks '<jakob-drop@netdev.example.org>')" = \
	"1|jakob@netdev.example.org linux-net@lists.example.org zoe@example.org"
check "... one drop" test "$($PYTHON -c 'import json, sys
print(len(json.load(open(sys.argv[1]))["drops"]))' "$S/state.json")" = 1
check "... and both copies are marked" sh -c "
	sh '$TESTS/dovecot.sh' flags '$TMP/imap' >'$TMP/flags' && test \$(wc -l <'$TMP/flags') = 2 &&
	! grep -v 'Nextbot' '$TMP/flags'"
expect_exit 0 "night 2 runs" NB run --date 2026-12-03
check "A is out of next" sh -c "! git -C '$S/repo.git' log --format=%s next | grep -q tighten"
check "the drop names the command mail" sh -c "'$NEXTBOT' -c '$W/nextbot.yaml' status |
	grep -q 'drop of .* (\"net/route: tighten net_route_limit()\") by jakob@netdev.example.org in <jakob-drop@netdev.example.org>'"
check "the author got the dropped notice" $PYTHON - "$TMP/smtp" <<'EOF'
import glob, json, sys
d = [json.load(open(f)) for f in glob.glob(sys.argv[1] + "/msg-*.json")]
d = [m for m in d if dict(m["headers"]).get("X-Nextbot-Event") == "dropped"]
assert [m["rcpt_tos"] for m in d] == [["zoe@example.org"]], [m["rcpt_tos"] for m in d]
assert "wrong locking" in " ".join(d[0]["body"].split()), d[0]["body"]
EOF

# --- undrop A ---------------------------------------------------------------------------
echo "#nextbot undrop" | mail undrop "$JAKOB" "<jakob-undrop@netdev.example.org>" "$RA"
poll "the inbox is polled: the undrop"
check "A is open again" test "$(flag_state "$A")" = open
check "acknowledged once" test "$(acks '<jakob-undrop@netdev.example.org>' | cut -d'|' -f1)" = 1
check "mail-in did the same to the twin" same_as_twin "$A" open
expect_exit 0 "night 3 runs" NB run --date 2026-12-04
check "A is back, reverted again" test "$(tree_state net-next)" = reverted

# --- test: A's fix on a branch of the author's, then the branch without it -------------
ORIG=$(git -C "$TMP/net" rev-parse --abbrev-ref HEAD)
cd "$TMP/net" && git branch unfixed && git checkout -q -b fixed &&
	sed -i 's/r += sk->sk_rcvbuf & 50$/&;/' net/route.c &&
	git -c user.name="Zoë Ångström" -c user.email=zoe@example.org commit -qam \
	"net/route: add the missing semicolon" && git checkout -q "$ORIG" && cd "$TMP" || exit 1
echo "#nextbot test: $GITURL fixed" | mail test1 "$ZOE" "<zoe-test1@example.org>" "$RA"
echo "#nextbot test: $GITURL unfixed" | mail test2 "$ZOE" "<zoe-test2@example.org>" "$RA"
echo "#nextbot test: $GITURL fixed" | mail test3 "Eve <eve@example.com>" "<eve-test@example.com>" "$RA"
printf '#nextbot test: file://%s/net fixed\n#nextbot test: git://localhost:%s/net fixed\n' \
	"$TMP" "$GITD_PORT" | mail test4 "$JAKOB" "<jakob-test4@netdev.example.org>" "$RA"
poll "the inbox is polled: test requests"
check "the fixed branch passes" sh -c "'$PYTHON' - '$TMP/smtp' <<'EOF'
import glob, json
b = [json.load(open(f)) for f in glob.glob('$TMP/smtp/msg-*.json')]
b = [' '.join(m['body'].split()) for m in b
     if dict(m['headers']).get('In-Reply-To') == '<zoe-test1@example.org>' and 'PASS' in m['body']]
assert b and 'PASS: build succeeded.' in b[0] and 'fixed' in b[0], b
EOF"
check "the second test while one was queued is refused" sh -c "'$PYTHON' - '$TMP/smtp' <<'EOF'
import glob, json
b = [json.load(open(f)) for f in glob.glob('$TMP/smtp/msg-*.json')]
b = [' '.join(m['body'].split()) for m in b
     if dict(m['headers']).get('In-Reply-To') == '<zoe-test2@example.org>']
assert b and 'is still queued: one at a time' in b[0], b
EOF"
check "a stranger's test is refused" sh -c "test \"\$($PYTHON - '$TMP/smtp' <<'EOF'
import glob, json
b = [json.load(open(f)) for f in glob.glob('$TMP/smtp/msg-*.json')]
print(len([m for m in b if dict(m['headers']).get('In-Reply-To') == '<eve-test@example.com>'
           and 'Refused: only the patch' in ' '.join(m['body'].split())]))
EOF
)\" = 1"
check "file:// and a host on loopback by name are refused" sh -c "'$PYTHON' - '$TMP/smtp' <<'EOF'
import glob, json
b = [json.load(open(f)) for f in glob.glob('$TMP/smtp/msg-*.json')]
b = [' '.join(m['body'].split()) for m in b
     if dict(m['headers']).get('In-Reply-To') == '<jakob-test4@netdev.example.org>']
assert b and 'only https:// and git:// URLs are fetched' in b[0], b
assert 'localhost is on a local or private network (127.0.0.1)' in b[0], b
EOF"
echo "#nextbot test: $GITURL unfixed" | mail test5 "$ZOE" "<zoe-test5@example.org>" "$RA"
echo "#nextbot test: $GITURL fixed" | mail test6 "$JAKOB" "<jakob-test6@netdev.example.org>" "$RA"
poll "the inbox is polled: the unfixed branch"
check "the unfixed branch fails with the flag's first error" sh -c "'$PYTHON' - '$TMP/smtp' '$A' <<'EOF'
import glob, json, subprocess, sys
flags = json.loads(subprocess.run(['$NEXTBOT', '-c', '$W/nextbot.yaml', '--json', 'flagged'],
                                  capture_output=True).stdout)['flags']
err = [f['error'] for f in flags if f['id'] == sys.argv[2]][0]
b = [json.load(open(f)) for f in glob.glob('$TMP/smtp/msg-*.json')]
b = [' '.join(m['body'].split()) for m in b
     if dict(m['headers']).get('In-Reply-To') == '<zoe-test5@example.org>'
     and 'FAIL' in m['body']]
assert b and 'FAIL: build failed.' in b[0], b
assert 'The first error: ' + ' '.join(err.split()) in b[0], (err, b[0])
assert 'That is the error flag %s was raised for.' % sys.argv[2] in b[0], b[0]
EOF"
check "the day's third test is refused (max_tests: 2)" sh -c "'$PYTHON' - '$TMP/smtp' <<'EOF'
import glob, json
b = [json.load(open(f)) for f in glob.glob('$TMP/smtp/msg-*.json')]
b = [' '.join(m['body'].split()) for m in b
     if dict(m['headers']).get('In-Reply-To') == '<jakob-test6@netdev.example.org>']
assert b and 'nextbot has taken its 2 tests for today' in b[0], b
EOF"
check "status lists the tests" sh -c "'$NEXTBOT' -c '$W/nextbot.yaml' status >'$TMP/st' &&
	grep -q 'test of fixed from $GITURL by zoe@example.org: passed' '$TMP/st' &&
	grep -q 'test of unfixed from $GITURL by zoe@example.org: failed' '$TMP/st'"
check "mail-in did the same to the twin" same_as_twin "$A" open

# --- fix: A, by its author; the reminder mentions it; it lands two nights later ---------
printf 'Fix coming:\n#nextbot fix: net/route: add the missing semicolon\n' |
	mail fix "$ZOE" "<zoe-fix@example.org>" "$RA"
poll "the inbox is polled: the fix"
check "the fix is awaited" sh -c "'$NEXTBOT' -c '$W/nextbot.yaml' flagged |
	grep -q 'fix:     \"net/route: add the missing semicolon\" (zoe@example.org'"
expect_exit 0 "night 4 runs" NB run --date 2026-12-05
check "the reminder mentions the fix not yet arrived" $PYTHON - "$TMP/smtp" <<'EOF'
import glob, json, sys
d = [json.load(open(f))["body"] for f in glob.glob(sys.argv[1] + "/msg-*.json")]
d = [" ".join(b.split()) for b in d if "This is a reminder" in b and "net_route_limit" in b
     and "A fix was announced by zoe@example.org" in b]
assert d and all('"net/route: add the missing semicolon" but no commit with that subject '
                 'has reached the net-next tree yet' in b for b in d), d
EOF
cd "$TMP/net" && sed -i 's/r += sk->sk_rcvbuf & 50$/&;/' net/route.c &&
	git -c user.name="Zoë Ångström" -c user.email=zoe@example.org commit -qam \
	"net/route: add the missing semicolon" && git push -q origin HEAD:net-next && cd "$TMP"
FIX=$(git -C "$TMP/net" rev-parse --short=12 HEAD)
expect_exit 0 "night 5 runs" NB run --date 2026-12-06
check "A is resolved" test "$(flag_state "$A")" = resolved
check "the resolved mail names the fix" $PYTHON - "$TMP/smtp" "$FIX" "$RA" <<'EOF'
import glob, json, sys
d = [json.load(open(f)) for f in glob.glob(sys.argv[1] + "/msg-*.json")]
d = [m for m in d if dict(m["headers"]).get("X-Nextbot-Event") == "resolved"]
assert d, "no resolved mail"
for m in d:
    b = " ".join(m["body"].split())
    assert 'fixed by %s ("net/route: add the missing semicolon")' % sys.argv[2] in b, b
    assert sys.argv[3] in dict(m["headers"])["References"]
EOF
check "mail-in did the same to the twin" same_as_twin "$A" open

# --- invalid B --------------------------------------------------------------------------
echo "#nextbot invalid mm_extra is generated; the build of it is optional" |
	mail invalid "Andrea Morten <andrea@linux-mm.example.org>" \
	"<andrea-invalid@linux-mm.example.org>" "$RB"
poll "the inbox is polled: the invalid"
check "B is dismissed" test "$(flag_state "$B")" = dismissed
check "mail-in did the same to the twin" same_as_twin "$B" dismissed
check "the twin's mail-in and inbox runs all exited 0" test ! -e "$TMP/twin.err"
N=$(ls "$TMP/smtp" | grep -c '^msg-')
expect_exit 0 "night 6 runs" NB run --date 2026-12-07
check "B is not blamed: mm-next merged as it is" test "$(tree_state mm-next)" = merged
check "... the night says so" grep -q "mm-next: a dismissed failure .* is back; nobody blamed" \
	"$S/runs/2026-12-07/run.json"
check "... and no report about it went out" $PYTHON - "$TMP/smtp" "$N" <<'EOF'
import glob, json, sys, re
new = [f for f in glob.glob(sys.argv[1] + "/msg-*.json")
       if int(re.search(r"msg-(\d+)", f).group(1)) > int(sys.argv[2])]
ev = [dict(json.load(open(f))["headers"]).get("X-Nextbot-Event") for f in new]
assert "build-failure" not in ev, ev
EOF
check "every mail in dovecot is marked handled" sh -c "
	sh '$TESTS/dovecot.sh' flags '$TMP/imap' >'$TMP/flags' &&
	test \$(wc -l <'$TMP/flags') = 11 && ! grep -v 'Nextbot' '$TMP/flags'"

# --- imaps:// with the server's own CA --------------------------------------------------
sed -e "s|url: \"imap://127.0.0.1:[0-9]*/INBOX\"|url: \"imaps://127.0.0.1:$(cat "$TMP/imap/tls-port")/INBOX\"|" \
	-e "s|^  tls: none|  ca_file: $TMP/imap/cert.pem|" "$W/nextbot.yaml" >"$TMP/tls.yaml"
echo "#nextbot frobnicate" | mail tls "$JAKOB" "<jakob-tls@netdev.example.org>" "$RA"
expect_exit 0 "an imaps:// poll with the server's CA" "$NEXTBOT" -c "$TMP/tls.yaml" inbox
check "... handled the mail (refused: unknown command)" test \
	"$(acks '<jakob-tls@netdev.example.org>')" = "1|jakob@netdev.example.org"
echo "#nextbot frobnicate" | mail tls2 "$JAKOB" "<jakob-tls2@netdev.example.org>" "$RA"
sed -i "/ca_file: /d" "$TMP/tls.yaml"
expect_exit 1 "without the CA the certificate is refused" "$NEXTBOT" -c "$TMP/tls.yaml" inbox
check "... saying why" grep -q "certificate" "$TMP/err"
check "... and the mail waits" sh -c "sh '$TESTS/dovecot.sh' flags '$TMP/imap' | tail -1 |
	grep -v -q Nextbot"
sh "$TESTS/dovecot.sh" stop "$TMP/imap"
expect_exit 1 "a server that is down: exit 1" NB inbox
check "... saying so" grep -q "the mails wait for the next poll" "$TMP/err"
sh "$TESTS/dovecot.sh" resume "$TMP/imap" || exit 1
: >"$TMP/mail/pending"
expect_exit 0 "back up, the next poll" NB inbox
check "... handles the mail that waited" test \
	"$(acks '<jakob-tls2@netdev.example.org>')" = "1|jakob@netdev.example.org"
check "... and marks it" sh -c "sh '$TESTS/dovecot.sh' flags '$TMP/imap' | tail -1 |
	grep -q Nextbot"

# --- the daemon polls between nights ---------------------------------------------------
sed 's|^  tls: none|&\n  poll: 1s|' "$W/nextbot.yaml" >"$TMP/daemon.yaml"
echo "#nextbot frobnicate" | mail daemon "$JAKOB" "<jakob-daemon@netdev.example.org>" "$RA"
"$NEXTBOT" -c "$TMP/daemon.yaml" daemon >"$TMP/daemon.log" 2>&1 &
DAEMON=$!
i=0
while [ "$(acks '<jakob-daemon@netdev.example.org>')" != "1|jakob@netdev.example.org" ] &&
	[ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
kill -TERM "$DAEMON"; wait "$DAEMON"
check "the daemon polled the inbox and answered the mail" test \
	"$(acks '<jakob-daemon@netdev.example.org>')" = "1|jakob@netdev.example.org"
check "... and marked it" sh -c "sh '$TESTS/dovecot.sh' flags '$TMP/imap' | tail -1 |
	grep -q Nextbot"
check "... logging the poll" grep -q "inbox: 1 new: 0 acted, 1 refused" "$TMP/daemon.log"

done_testing
