#!/bin/sh
# Commands by mail through `nextbot mail-in` (an MTA pipe) on a small simulated world
# with one injected build break: a drop by the tree's maintainer in answer to the
# report (acknowledged in the thread, the patch out of the next night, the drop naming
# the mail), the same mail again (acts once), undrop, invalid with an explicit flag id;
# refused: a stranger, a command in quoted text, an autoreply, a bounce, a forged
# From: with inbox.authserv_id (no results, a fail, a pass forged below the server's
# Received: or right below its own field, header.i outside header.d; two milters'
# fields both count); exit 65 for a non-mail, 75 while another nextbot holds the lock;
# reopen.  Commands act only on what they name: an id-like word that names nothing
# (drop, undrop, invalid) is refused and nothing is done; `#nextbot dorp` is refused
# with a suggestion; `#nextbot:` is read; a flag named by its commit, a patch by its
# Message-ID, a patch no flag names by its commit (dropped and taken back); a signed
# command resent under a new Message-ID and one in an indented quote never act.
# The other commands and their nights over IMAP: t860-mail-imap.sh.  About 40 s.
. "$(dirname "$0")/lib.sh"
TESTS=$(cd "$(dirname "$0")" && pwd)

W=$TMP/world
"$NEXTBOT" -q sim init "$W" --seed 3 --trees 1 --files 8 >/dev/null || exit 1
cat >>"$W/nextbot.yaml" <<EOF
inbox: {max_tests: 0}
EOF
sed -i -e 's|^  list: .*|&\n  operator: "Olga Operator <olga@ops.example.org>"|' \
	-e 's|^bisect: .*|bisect: {confirm: 1}|' "$W/nextbot.yaml"
NB() { "$NEXTBOT" -q -c "$W/nextbot.yaml" "$@"; }
MAILIN() { "$NEXTBOT" -q -c "$W/nextbot.yaml" mail-in <"$1"; }
S=$W/state

# --- a build break by Zoë in net-next, and an innocent patch after it -------------------
git_q clone -q "$W/remotes/net-next.git" "$TMP/net" && cd "$TMP/net" || exit 1
sed -i 's/r += sk->sk_rcvbuf & 50;/r += sk->sk_rcvbuf \& 50/' net/route.c
git -c user.name="Zoë Ångström" -c user.email=zoe@example.org commit -qam \
	"net/route: tighten net_route_limit()

Signed-off-by: Zoë Ångström <zoe@example.org>
Link: https://lore.kernel.org/r/20261130-route-limit-v1@example.org"
echo 'int net_extra(void) { return 1; }' >net/extra.c && git add -A &&
	git_q commit -qm "net: add net_extra" && git push -q origin HEAD:net-next
cd "$TMP" || exit 1

expect_exit 0 "night 1 runs" NB run --date 2026-12-02
FLAG=$("$NEXTBOT" -c "$W/nextbot.yaml" --json flagged | $PYTHON -c '
import json, sys; print(json.load(sys.stdin)["flags"][0]["id"])')
check "night 1 flags the break" test -n "$FLAG"
# the Message-ID of the report to Zoë (the submitter report answers the patch's thread)
REPORT=$($PYTHON - "$S" <<'EOF'
import glob, json, sys
for f in sorted(glob.glob(sys.argv[1] + "/outbox/*.json")):
    n = json.load(open(f))
    if n["kind"] == "build-failure" and n["subject"].startswith("Re: "):
        print("<nextbot.%s@example.org>" % n["id"])
EOF
)
check "the report is in the outbox" test -n "$REPORT"
check "report and maintainer mail end with the commands their readers may send" \
	$PYTHON - "$S" "$FLAG" <<'EOF'
import email, email.policy, glob, json, sys
mails = [json.load(open(f)) for f in glob.glob(sys.argv[1] + "/outbox/*.json")]
mails = [email.message_from_string(m["body"], policy=email.policy.default)
         for m in mails if m["kind"] == "build-failure"]
mails = [m.get_body(preferencelist=("plain",)).get_content() for m in mails]
assert len(mails) == 2, len(mails)
for body in mails:
    body = body.replace("\r\n", "\n")
    tail = body[body.index("\n-- \n"):]
    assert "in another\nthread, name the flag: #nextbot drop %s):" % sys.argv[2] in tail, tail
    for cmd in ("fix: <subject>", "drop [reason]", "undrop", "invalid <reason>", "reopen"):
        assert "\n  #nextbot %s " % cmd in tail, (cmd, tail)
    assert "#nextbot test:" not in tail, tail  # inbox.max_tests: 0
    assert tail.rstrip().endswith("for the tree's maintainers."), tail
EOF
check "every prose line of every mail is at most 78 columns" $PYTHON "$TESTS/mails.py" width \
	"$S/outbox"

# mail FILE FROM MSGID IN-REPLY-TO [HEADER...] < BODY: a mail answering IN-REPLY-TO
mail() {
	f=$1 from=$2 id=$3 irt=$4
	shift 4
	{
		printf 'From: %s\r\nTo: nextbot <nextbot@example.org>\r\n' "$from"
		printf 'Cc: Zoe <zoe@example.org>, linux-net@lists.example.org\r\n'
		printf 'Subject: Re: net/route: tighten net_route_limit()\r\nMessage-ID: %s\r\n' "$id"
		[ -n "$irt" ] && printf 'In-Reply-To: %s\r\nReferences: %s\r\n' "$irt" "$irt"
		for h in "$@"; do printf '%s\r\n' "$h"; done
		printf '\r\n'
		sed 's/$/\r/'
	} >"$TMP/$f"
}
# replies WHAT: the reply notices (kind "reply") in the outbox, as "to|cc,...|first line"
replies() {
	$PYTHON - "$S" "$1" <<'EOF'
import glob, json, sys
for f in sorted(glob.glob(sys.argv[1] + "/outbox/*.json")):
    n = json.load(open(f))
    if n["kind"] == "reply" and ("In-Reply-To: %s" % sys.argv[2]) in n["body"]:
        print(" ".join(r["to"] for r in n["recipients"]))
EOF
}
flag_state() {
	"$NEXTBOT" -c "$W/nextbot.yaml" --json flagged | $PYTHON -c '
import json, sys; print(json.load(sys.stdin)["flags"][0]["state"])'
}
JAKOB="Jakob Kiczek <jakob@netdev.example.org>"

# --- not a mail: 65 -----------------------------------------------------------------------
printf 'hello\n\n#nextbot drop\n' >"$TMP/junk"
expect_exit 65 "mail-in exits 65 for input that is not a mail" MAILIN "$TMP/junk"

# --- refused and ignored ------------------------------------------------------------------
echo "#nextbot drop" | mail stranger.eml "Eve <eve@example.com>" "<eve-1@example.com>" "$REPORT"
expect_exit 0 "a drop from a stranger is handled" MAILIN "$TMP/stranger.eml"
check "... and refused: the flag stays open" test "$(flag_state)" = open
check "... with one reply, to the stranger alone" test "$(replies '<eve-1@example.com>')" = \
	"eve@example.com"
check "... which lists the commands" $PYTHON - "$S" <<'EOF'
import glob, json, sys
b = [json.load(open(f))["body"] for f in glob.glob(sys.argv[1] + "/outbox/*.json")]
b = [x for x in b if "In-Reply-To: <eve-1@example.com>" in x][0]
assert "Refused: only the tree's maintainers" in b and "#nextbot undrop" in b, b
EOF
printf '> #nextbot drop\n> wrong locking\nI agree.\n' |
	mail quoted.eml "$JAKOB" "<jakob-q@netdev.example.org>" "$REPORT"
expect_exit 0 "a command in quoted text is handled" MAILIN "$TMP/quoted.eml"
echo "#nextbot drop" | mail auto.eml "$JAKOB" "<jakob-auto@netdev.example.org>" "$REPORT" \
	"Auto-Submitted: auto-replied"
expect_exit 0 "an autoreply is handled" MAILIN "$TMP/auto.eml"
echo "#nextbot drop" | mail bounce.eml "MAILER-DAEMON@mx.example.org" "<b-1@mx.example.org>" \
	"$REPORT" "Return-Path: <>"
expect_exit 0 "a bounce is handled" MAILIN "$TMP/bounce.eml"
check "none of them dropped anything" test "$(flag_state)" = open
check "none of them got a reply" test -z "$(replies '<jakob-q@netdev.example.org>')$(
	replies '<jakob-auto@netdev.example.org>')$(replies '<b-1@mx.example.org>')"
check "status lists them as refused and ignored" sh -c "
	'$NEXTBOT' -c '$W/nextbot.yaml' status >'$TMP/status' &&
	grep -q 'refused   eve@example.com <eve-1@example.com>: drop: refused' '$TMP/status' &&
	grep -q 'ignored   jakob@netdev.example.org <jakob-q@netdev.example.org>: no #nextbot command' '$TMP/status' &&
	grep -q 'ignored   jakob@netdev.example.org <jakob-auto@netdev.example.org>: auto-submitted' '$TMP/status' &&
	grep -q 'ignored   mailer-daemon@mx.example.org <b-1@mx.example.org>: a bounce' '$TMP/status' ||
	grep -q 'ignored   MAILER-DAEMON@mx.example.org <b-1@mx.example.org>: a bounce' '$TMP/status'"

# --- exit 75 while another nextbot holds the lock: an outbox flush to a hung server ------
$PYTHON "$TESTS/hangd.py" >"$TMP/hang.port" &
HANGD=$!
stop_hangd() { kill "$HANGD" 2>/dev/null; kill "$FLUSH" 2>/dev/null; wait 2>/dev/null; }
at_exit stop_hangd
i=0; while [ ! -s "$TMP/hang.port" ] && [ $i -lt 500 ]; do sleep 0.02; i=$((i + 1)); done
sed "s|^notify:|workdir: $S\nnotify:\n  smtp: {url: 'smtp://127.0.0.1:$(cat "$TMP/hang.port")', tls: none}|" \
	"$W/nextbot.yaml" | grep -v '^workdir: state$' >"$TMP/hung.yaml"
"$NEXTBOT" -q -c "$TMP/hung.yaml" outbox flush >/dev/null 2>&1 &
FLUSH=$!
i=0; while ! grep -q "$FLUSH" "$S/lock" 2>/dev/null && [ $i -lt 500 ]; do sleep 0.02; i=$((i + 1)); done
echo "#nextbot drop wrong locking" | mail drop.eml "$JAKOB" "<jakob-1@netdev.example.org>" \
	"$REPORT"
expect_exit 75 "mail-in exits 75 while another nextbot holds the lock" MAILIN "$TMP/drop.eml"
check "... naming the holder" grep -q "another nextbot (pid $FLUSH)" "$TMP/err"
check "... and did nothing" test "$(flag_state)" = open
kill "$FLUSH"; wait "$FLUSH" 2>/dev/null

# --- the maintainer drops it by mail -----------------------------------------------------
expect_exit 0 "the maintainer's drop is handled" MAILIN "$TMP/drop.eml"
check "the flag is dropped" test "$(flag_state)" = dropped
check "one acknowledgement, to him, Zoë and the list" test \
	"$(replies '<jakob-1@netdev.example.org>')" = \
	"jakob@netdev.example.org zoe@example.org linux-net@lists.example.org"
check "it threads under the report" $PYTHON - "$S" "$REPORT" <<'EOF'
import glob, json, sys
b = [json.load(open(f))["body"] for f in glob.glob(sys.argv[1] + "/outbox/*.json")]
b = [x for x in b if "In-Reply-To: <jakob-1@netdev.example.org>" in x]
assert len(b) == 1, b
refs = b[0].split("References:")[1].split("MIME-Version")[0].split()
assert refs == [sys.argv[2], "<jakob-1@netdev.example.org>"], refs
text = " ".join(b[0].split())
assert 'Dropped "net/route: tighten net_route_limit()" from what nextbot merges of the net-next tree' in text, text
EOF
check "the drop names the sender and the command mail" $PYTHON - "$S" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1] + "/state.json"))["drops"]
assert len(d) == 1 and d[0]["active"], d
assert d[0]["by"] == "jakob@netdev.example.org" and d[0]["mail"] == "<jakob-1@netdev.example.org>", d
assert d[0]["reason"] == "wrong locking", d
EOF
expect_exit 0 "the same mail delivered again is handled" MAILIN "$TMP/drop.eml"
check "... and acts once: one drop, one acknowledgement" sh -c "
	test \"\$($PYTHON -c 'import json; print(len(json.load(open(\"$S/state.json\"))[\"drops\"]))')\" = 1 &&
	test \"\$(grep -l 'In-Reply-To: <jakob-1@netdev.example.org>' '$S'/outbox/*.json | wc -l)\" = 1"
check "flagged shows the command" sh -c "'$NEXTBOT' -c '$W/nextbot.yaml' flagged --all |
	grep -q 'drop by jakob@netdev.example.org in <jakob-1@netdev.example.org>: wrong locking'"

expect_exit 0 "night 2 runs" NB run --date 2026-12-03
check "the patch is out of next" sh -c "
	! git -C '$S/repo.git' log --format=%s next | grep -q 'tighten net_route_limit'"
check "the innocent patch after it is in" sh -c "
	git -C '$S/repo.git' log --format=%s next | grep -q 'net: add net_extra'"
check "night 2 is clean" sh -c "'$NEXTBOT' -c '$W/nextbot.yaml' --json status | $PYTHON -c '
import json, sys; assert json.load(sys.stdin)[\"runs\"][-1][\"result\"] == \"clean\"'"

# --- undrop, by the operator, naming the flag (a fresh mail, no thread) --------------------
printf 'Please take it back.\n\n#nextbot undrop %s\n' "$FLAG" |
	mail undrop.eml "Olga <olga@ops.example.org>" "<olga-1@ops.example.org>" ""
expect_exit 0 "the operator's undrop is handled" MAILIN "$TMP/undrop.eml"
check "the flag is open again" test "$(flag_state)" = open

# --- commands act only on what they name --------------------------------------------------
# reply_text ID: the text of the replies to mail ID, blanks squeezed
reply_text() {
	$PYTHON - "$S" "$1" <<'EOF'
import glob, json, sys
for f in sorted(glob.glob(sys.argv[1] + "/outbox/*.json")):
    n = json.load(open(f))
    if n["kind"] == "reply" and ("In-Reply-To: %s" % sys.argv[2]) in n["body"]:
        print(" ".join(n["body"].replace("\r\n", "\n").split("\n\n", 1)[1].split()))
EOF
}
# count drops: the active drops
count() {
	$PYTHON - "$S" <<'EOF'
import json, sys
print(len([d for d in json.load(open(sys.argv[1] + "/state.json"))["drops"] if d["active"]]))
EOF
}
echo "#nextbot drop deadbeef0000" | mail unknown.eml "$JAKOB" "<jakob-u@netdev.example.org>" \
	"$REPORT"
expect_exit 0 "a drop naming an id nextbot does not know is handled" MAILIN "$TMP/unknown.eml"
check "... and nothing is done: the thread's flag stays open" test "$(flag_state)" = open
check "... no drop recorded" test "$(count drops)" = 0
check "... no acknowledgement to the submitter and the list: one refusal, to the sender" \
	test "$(replies '<jakob-u@netdev.example.org>')" = "jakob@netdev.example.org"
reply_text '<jakob-u@netdev.example.org>' >"$TMP/unknown.txt"
check "... the sender is told that the id names nothing and nothing was done" grep -q \
	'> #nextbot drop deadbeef0000 Nothing was done: deadbeef0000 names no flag, commit, patch-id or Message-ID that nextbot knows of.' \
	"$TMP/unknown.txt"
printf '#nextbot undrop 0123456\n#nextbot invalid <nope@example.org> not a bug\n' |
	mail unknown2.eml "$JAKOB" "<jakob-u2@netdev.example.org>" "$REPORT"
expect_exit 0 "undrop and invalid naming unknown ids are handled" MAILIN "$TMP/unknown2.eml"
check "... and nothing is done" test "$(flag_state)" = open
reply_text '<jakob-u2@netdev.example.org>' >"$TMP/unknown2.txt"
check "... each refused, saying why" sh -c "
	grep -q '0123456 names no flag, drop, commit' '$TMP/unknown2.txt' &&
	grep -q '<nope@example.org> names no flag, commit' '$TMP/unknown2.txt'"

echo "#nextbot dorp wrong locking" | mail dorp.eml "$JAKOB" "<jakob-dorp@netdev.example.org>" \
	"$REPORT"
expect_exit 0 "a misspelt command is handled" MAILIN "$TMP/dorp.eml"
check "... nothing is done" test "$(flag_state)" = open
check "... no drop recorded" test "$(count drops)" = 0
reply_text '<jakob-dorp@netdev.example.org>' >"$TMP/dorp.txt"
check "... the reply suggests the command and lists them all" sh -c "
	grep -q 'does not know the command \"dorp\"; did you mean \`#nextbot drop\`?' '$TMP/dorp.txt' &&
	grep -q '#nextbot undrop take a drop back' '$TMP/dorp.txt'"

echo "#nextbot tesd: it builds here" | mail tesd.eml "$JAKOB" "<jakob-tesd@netdev.example.org>" \
	"$REPORT"
expect_exit 0 "a misspelt command that takes text is handled" MAILIN "$TMP/tesd.eml"
check "... nothing is done" test "$(flag_state)" = open
reply_text '<jakob-tesd@netdev.example.org>' >"$TMP/tesd.txt"
check "... the suggestion keeps the command's colon" \
	grep -q 'did you mean `#nextbot test:`?' "$TMP/tesd.txt"

echo "#nextbot: fix: net/route: add the missing semicolon" |
	mail colon.eml "$JAKOB" "<jakob-colon@netdev.example.org>" "$REPORT"
expect_exit 0 "#nextbot: (with a colon) is handled" MAILIN "$TMP/colon.eml"
check "... read as #nextbot: the fix is noted" sh -c "'$NEXTBOT' -c '$W/nextbot.yaml' flagged |
	grep -q 'fix:     \"net/route: add the missing semicolon\" (jakob@netdev.example.org'"
reply_text '<jakob-colon@netdev.example.org>' >"$TMP/colon.txt"
check "... and acknowledged" grep -q "Noted: flag $FLAG" "$TMP/colon.txt"

# named by the patch's commit (a prefix) and Message-ID, in a fresh mail
COMMIT=$("$NEXTBOT" -c "$W/nextbot.yaml" --json flagged | $PYTHON -c '
import json, sys; print(json.load(sys.stdin)["flags"][0]["commit"][:10])')
printf '#nextbot drop %s needs a v2\n' "$COMMIT" |
	mail bycommit.eml "$JAKOB" "<jakob-c@netdev.example.org>" ""
expect_exit 0 "a drop naming the flagged commit is handled" MAILIN "$TMP/bycommit.eml"
check "... the flag is dropped" test "$(flag_state)" = dropped
check "... with the rest of the line as the reason" $PYTHON - "$S" <<'EOF'
import json, sys
d = [d for d in json.load(open(sys.argv[1] + "/state.json"))["drops"] if d["active"]]
assert len(d) == 1 and d[0]["reason"] == "needs a v2", d
EOF
echo "#nextbot undrop <20261130-route-limit-v1@example.org>" |
	mail bymsgid.eml "$JAKOB" "<jakob-m@netdev.example.org>" ""
expect_exit 0 "an undrop naming the patch's Message-ID is handled" MAILIN "$TMP/bymsgid.eml"
check "... the flag is open again" test "$(flag_state)" = open
# a patch no flag names, by a commit prefix: dropped as `nextbot drop` does, then taken back
EXTRA=$(git -C "$W/remotes/net-next.git" log -1 --format=%h --abbrev=9 net-next)
printf '#nextbot drop %s not wanted yet\n' "$EXTRA" |
	mail extra.eml "$JAKOB" "<jakob-x@netdev.example.org>" ""
expect_exit 0 "a drop naming a patch without a flag is handled" MAILIN "$TMP/extra.eml"
check "... the drop is recorded for that commit, by whom and why" $PYTHON - "$S" "$EXTRA" <<'EOF'
import json, sys
d = [d for d in json.load(open(sys.argv[1] + "/state.json"))["drops"] if d["active"]]
assert len(d) == 1 and d[0]["commit"].startswith(sys.argv[2]), d
assert d[0]["subject"] == "net: add net_extra" and d[0]["reason"] == "not wanted yet", d
assert d[0]["by"] == "jakob@netdev.example.org" and d[0]["mail"] == "<jakob-x@netdev.example.org>", d
EOF
printf '#nextbot undrop %s\n' "$EXTRA" | mail extra2.eml "$JAKOB" "<jakob-x2@netdev.example.org>" ""
expect_exit 0 "... and its undrop" MAILIN "$TMP/extra2.eml"
check "... takes it back" test "$(count drops)" = 0
printf '#nextbot drop %s\n' "$EXTRA" | mail extra3.eml "Eve <eve@example.com>" "<eve-x@example.com>" ""
expect_exit 0 "a stranger's drop of it is handled" MAILIN "$TMP/extra3.eml"
check "... and refused" test "$(count drops)" = 0
reply_text '<eve-x@example.com>' >"$TMP/extra3.txt"
check "... saying who may" grep -q "Refused: only the tree's maintainers" "$TMP/extra3.txt"

# --- forged: with inbox.authserv_id, From: needs the server's word -------------------------
# (the server's own Authentication-Results stand above the Received: field it adds)
RCVD="Received: from mail.netdev.example.org by mx.example.org with ESMTPS; 2 Dec 2026"
sed -i 's|^inbox: {max_tests: 0}|inbox: {max_tests: 0, authserv_id: mx.example.org}|' \
	"$W/nextbot.yaml"
echo "#nextbot invalid not a bug" |
	mail forged1.eml "$JAKOB" "<forged-1@netdev.example.org>" "$REPORT"
echo "#nextbot invalid not a bug" |
	mail forged2.eml "$JAKOB" "<forged-2@netdev.example.org>" "$REPORT" \
	"Authentication-Results: mx.example.org; dkim=fail header.d=netdev.example.org;" \
	" dmarc=fail header.from=netdev.example.org" \
	"Received: from evil.example.com" \
	"Authentication-Results: mx.example.org; dmarc=pass header.from=netdev.example.org"
expect_exit 0 "a mail without Authentication-Results is handled" MAILIN "$TMP/forged1.eml"
expect_exit 0 "a mail the server says failed is handled" MAILIN "$TMP/forged2.eml"
check "both are refused: the flag stays open" test "$(flag_state)" = open
check "... without an answer to the forged address" test -z \
	"$(replies '<forged-1@netdev.example.org>')$(replies '<forged-2@netdev.example.org>')"
check "status says why" sh -c "'$NEXTBOT' -c '$W/nextbot.yaml' status | grep -q \
	'refused   jakob@netdev.example.org <forged-2@netdev.example.org>: From: not vouched for by mx.example.org: mx.example.org for netdev.example.org: dkim=fail header.d=netdev.example.org, dmarc=fail'"
# a pass forged right below the server's own field: believed before (the whole run of
# fields with the server's name was taken as the server's); and header.i outside header.d
AR="Authentication-Results: mx.example.org;"
echo "#nextbot invalid not a bug" | mail forged3.eml "$JAKOB" "<forged-3@netdev.example.org>" \
	"$REPORT" "$AR spf=none" "$AR dmarc=pass header.from=netdev.example.org"
echo "#nextbot invalid not a bug" | mail forged4.eml "$JAKOB" "<forged-4@netdev.example.org>" \
	"$REPORT" "$RCVD" "$AR spf=none" "$AR dmarc=pass header.from=netdev.example.org"
echo "#nextbot invalid not a bug" | mail forged5.eml "$JAKOB" "<forged-5@netdev.example.org>" \
	"$REPORT" "$AR dkim=pass header.d=evil.example.com header.i=@netdev.example.org" "$RCVD"
echo "#nextbot invalid not a bug" | mail forged6.eml "$JAKOB" "<forged-6@netdev.example.org>" \
	"$REPORT" "$AR dkim=pass header.d=netdev.example.org header.i=jakob@evil.example.com" \
	"$RCVD"
for n in 3 4 5 6; do
	expect_exit 0 "forged mail $n is handled" MAILIN "$TMP/forged$n.eml"
done
check "none of them acted: the flag stays open" test "$(flag_state)" = open
check "... none was answered" test -z "$(replies '<forged-3@netdev.example.org>')$(
	replies '<forged-4@netdev.example.org>')$(replies '<forged-5@netdev.example.org>')$(
	replies '<forged-6@netdev.example.org>')"
"$NEXTBOT" -c "$W/nextbot.yaml" status >"$TMP/status"
check "... and status says why" sh -c "
	grep -q '<forged-3@netdev.example.org>: From: not vouched for by mx.example.org: no Received: field' '$TMP/status' &&
	grep -q '<forged-4@netdev.example.org>: From: not vouched for by mx.example.org: no Authentication-Results from mx.example.org above its Received: field' '$TMP/status' &&
	grep -q '<forged-5@netdev.example.org>: .*header.d=evil.example.com header.i=@netdev.example.org (header.i outside header.d)' '$TMP/status' &&
	grep -q '<forged-6@netdev.example.org>: .*header.i=jakob@evil.example.com (header.i outside header.d)' '$TMP/status'"
# two milters, two fields above the server's Received:, both count
printf '#nextbot invalid the test machine was broken\n' |
	mail invalid.eml "$JAKOB" "<jakob-2@netdev.example.org>" "$REPORT" \
	"$AR dmarc=pass header.from=netdev.example.org" \
	"$AR dkim=pass header.d=netdev.example.org header.i=@netdev.example.org" "$RCVD"
expect_exit 0 "a vouched-for invalid is handled" MAILIN "$TMP/invalid.eml"
check "the flag is dismissed" test "$(flag_state)" = dismissed
check "flagged says why and who" sh -c "'$NEXTBOT' -c '$W/nextbot.yaml' flagged --all |
	grep -q 'invalid by jakob@netdev.example.org in <jakob-2@netdev.example.org>: the test machine was broken'"
printf '#nextbot reopen\n' | mail reopen.eml "$JAKOB" "<jakob-3@netdev.example.org>" "$REPORT" \
	"Authentication-Results: mx.example.org; dmarc=pass header.from=netdev.example.org" \
	"$RCVD"
expect_exit 0 "reopen is handled" MAILIN "$TMP/reopen.eml"
check "the flag is open again" test "$(flag_state)" = open

# --- replays and quotes (issue 38) --------------------------------------------------------
# the signed invalid again under a new Message-ID: the signature still holds; it acts once
sed 's|^Message-ID: <jakob-2@netdev.example.org>|Message-ID: <jakob-2-again@netdev.example.org>|' \
	"$TMP/invalid.eml" >"$TMP/replay.eml"
expect_exit 0 "the same signed command resent under a new Message-ID is handled" \
	MAILIN "$TMP/replay.eml"
check "... and does not act again: the flag stays open" test "$(flag_state)" = open
check "... status says it was acted on before" sh -c "'$NEXTBOT' -c '$W/nextbot.yaml' status |
	grep -q '<jakob-2-again@netdev.example.org>: the same text from the same sender was acted on before (<jakob-2@netdev.example.org>)'"
printf 'Not me.\n\nOn Wed, 2 Dec 2026, Olga <olga@ops.example.org> wrote:\n    Shall I?\n    #nextbot invalid quoted\n' |
	mail indented.eml "$JAKOB" "<jakob-4@netdev.example.org>" "$REPORT" \
	"$AR dmarc=pass header.from=netdev.example.org" "$RCVD"
expect_exit 0 "a command in an indented quote after 'On ... wrote:' is handled" \
	MAILIN "$TMP/indented.eml"
check "... and never acts: the flag stays open" test "$(flag_state)" = open

check "check-config warns without authserv_id" sh -c "
	sed 's/, authserv_id: mx.example.org//' '$W/nextbot.yaml' >'$TMP/noauth.yaml' &&
	'$NEXTBOT' -c '$TMP/noauth.yaml' check-config 2>&1 >/dev/null | grep -q 'From: can be forged'"
check "... and not with it" sh -c "
	! '$NEXTBOT' -c '$W/nextbot.yaml' check-config 2>&1 >/dev/null | grep -q warning"

done_testing
