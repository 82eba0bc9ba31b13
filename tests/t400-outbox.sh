#!/bin/sh
# nextbot outbox list|flush against a real SMTP server (aiosmtpd) and a real
# webhook receiver (http.server) on loopback: queued while down, delivered once
# when back, HMAC verified by the receiver, the run lock respected.
. "$(dirname "$0")/lib.sh"

W=$TMP/w
mkdir -p "$W/state/outbox" "$TMP/smtp" "$TMP/http"

free_port() {
	$PYTHON -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
SMTP_PORT=$(free_port)

smtp_pid=
http_pid=
stop_servers() {
	[ -n "$smtp_pid" ] && kill "$smtp_pid" 2>/dev/null && wait "$smtp_pid" 2>/dev/null
	[ -n "$http_pid" ] && kill "$http_pid" 2>/dev/null && wait "$http_pid" 2>/dev/null
	smtp_pid= http_pid=
}
at_exit stop_servers
wait_port() {
	i=0
	while [ ! -e "$1/port" ] && [ $i -lt 500 ]; do sleep 0.02; i=$((i + 1)); done
	cat "$1/port"
}

$PYTHON "$(dirname "$0")/httpd.py" "$TMP/http" hook-secret 2>"$TMP/http/log" &
http_pid=$!
HTTP_PORT=$(wait_port "$TMP/http")

cat >"$W/nextbot.yaml" <<EOF
workdir: state
base: {name: origin, url: "$TMP/nowhere.git", branch: master}
trees: []
notify:
  from: "nextbot <nextbot@example.org>"
  smtp: {url: "smtp://127.0.0.1:$SMTP_PORT", tls: none}
  webhooks:
    - {url: "http://127.0.0.1:$HTTP_PORT/hook", secret_env: NB_TEST_HOOK_SECRET}
EOF
export NB_TEST_HOOK_SECRET=hook-secret
nb() { "$NEXTBOT" -c "$W/nextbot.yaml" "$@"; }

# Two notices as the spool holds them (the format notify/outbox.h documents).
$PYTHON - "$W/state/outbox" "$HTTP_PORT" <<'EOF'
import json, sys, time
d, port = sys.argv[1], sys.argv[2]
now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
mail = ("From: nextbot <nextbot@example.org>\r\nTo: a@example.org\r\n"
        "Cc: b@example.org\r\nSubject: [next-20261203] BUILD SUCCESS 0123456789ab\r\n"
        "Date: Thu, 03 Dec 2026 02:00:00 +0000\r\n"
        "Message-ID: <nextbot.0000000000000000000000000000000a@example.org>\r\n"
        "MIME-Version: 1.0\r\nContent-Type: text/plain; charset=UTF-8\r\n"
        "Content-Transfer-Encoding: 7bit\r\nAuto-Submitted: auto-generated\r\n"
        "X-Nextbot-Event: summary\r\n\r\nAll merged.\r\n.\r\n")
def notice(id, channel, body, to, **kw):
    n = {"version": 1, "id": id, "kind": "summary", "channel": channel,
         "subject": "[next-20261203] BUILD SUCCESS 0123456789ab",
         "recipients": [{"to": t, "state": "queued", "error": None} for t in to],
         "state": "queued", "attempts": 0, "last_error": None, "created": now,
         "next_try": now, "sent": None, "body": body}
    n.update(kw)
    json.dump(n, open("%s/%s.json" % (d, id), "w"))
notice("0000000000000000000000000000000a", "mail", mail, ["a@example.org", "b@example.org"],
       **{"from": "nextbot@example.org"})
url = "http://127.0.0.1:%s/hook" % port
notice("0000000000000000000000000000000b", "webhook", '{"event":"summary","id":null}', [url],
       url=url)
EOF

expect_exit 0 "outbox list --json" nb --json outbox list
check "list shows both notices, queued" $PYTHON -c '
import json, sys
d = json.load(open(sys.argv[1]))["notices"]
assert [n["id"][-1] for n in d] == ["a", "b"], d
for n in d:
    assert set(n) == {"id", "kind", "to", "subject", "state", "attempts", "last_error", "next_try"}
    assert n["state"] == "queued" and n["attempts"] == 0 and n["last_error"] is None
assert d[0]["to"] == ["a@example.org", "b@example.org"]' "$TMP/out"

expect_exit 0 "flush with the mail server down" nb outbox flush
check "mail stays queued with the reason; webhook sent and signed" $PYTHON -c '
import glob, json, sys
d = {n["id"][-1]: n for n in json.load(open(sys.argv[1]))["notices"]}
assert d["a"]["state"] == "queued" and d["a"]["attempts"] == 1, d["a"]
assert d["a"]["last_error"], d["a"]
assert d["b"]["state"] == "sent", d["b"]
reqs = [json.load(open(f)) for f in glob.glob(sys.argv[2] + "/req-*.json")]
assert len(reqs) == 1 and reqs[0]["sig_ok"] is True, reqs
assert reqs[0]["headers"]["X-Nextbot-Delivery"].endswith("b")
assert reqs[0]["headers"]["X-Nextbot-Event"] == "summary"' \
	"$( nb --json outbox list >"$TMP/list" && echo "$TMP/list")" "$TMP/http"

$PYTHON "$(dirname "$0")/smtpd.py" "$TMP/smtp" "$SMTP_PORT" 2>"$TMP/smtp/log" &
smtp_pid=$!
wait_port "$TMP/smtp" >/dev/null

expect_exit 0 "flush --due before the retry is due" nb outbox flush --due
check "nothing sent before next_try" test ! -e "$TMP/smtp/msg-1.json"

# The run lock: a flush while another writer holds it exits 1 at once.
flock -n "$W/state/lock" -c "\"$NEXTBOT\" -c \"$W/nextbot.yaml\" outbox flush --all" \
	>"$TMP/out" 2>"$TMP/err"
check "flush under someone else's lock exits 1" test $? = 1
check "and sent nothing" test ! -e "$TMP/smtp/msg-1.json"

expect_exit 0 "flush --all once the server is back" nb outbox flush --all
expect_exit 0 "flush again" nb outbox flush --all
check "delivered exactly once per recipient" $PYTHON -c '
import glob, json, sys
msgs = [json.load(open(f)) for f in sorted(glob.glob(sys.argv[1] + "/msg-*.json"))]
assert sorted(m["rcpt_tos"][0] for m in msgs) == ["a@example.org", "b@example.org"], msgs
for m in msgs:
    assert len(m["rcpt_tos"]) == 1 and m["mail_from"] == "nextbot@example.org"
    assert "\n.\n" in m["body"], m["body"]' "$TMP/smtp"
nb --json outbox list >"$TMP/list"
check "outbox list says sent, two attempts" $PYTHON -c '
import json, sys
d = {n["id"][-1]: n for n in json.load(open(sys.argv[1]))["notices"]}
assert d["a"]["state"] == "sent" and d["a"]["attempts"] == 2 and d["a"]["next_try"] is None, d' \
	"$TMP/list"
expect_exit 0 "plain outbox list" nb outbox list
check "plain list names states" grep -q "sent" "$TMP/out"
expect_exit 2 "unknown subcommand" nb outbox frob

done_testing
