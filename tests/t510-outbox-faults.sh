#!/bin/sh
# Fault injection along an outbox delivery (a full disk or failed rename mid-way): every open,
# write, fsync and rename util/fileutil makes during `nextbot outbox flush` fails in
# turn (NEXTBOT_FAULT=op:N) or kills the process there (op:N:kill), against a real
# SMTP server (tests/smtpd.py) and webhook receiver (tests/httpd.py).  After each
# fault: every outbox file is a whole notice; an I/O error makes the flush fail;
# the next flush delivers everything; no notice is lost; and a notice reaches a
# recipient twice only for the one recipient whose acceptance could not be
# recorded (the kill or failure right after the server's acceptance), with the
# same Message-ID / X-Nextbot-Delivery.
. tests/lib.sh

W=$TMP/w
mkdir -p "$W/state/outbox" "$TMP/smtp" "$TMP/http"

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
$PYTHON tests/smtpd.py "$TMP/smtp" 2>"$TMP/smtp.log" &
smtp_pid=$!
$PYTHON tests/httpd.py "$TMP/http" hook-secret 2>"$TMP/http.log" &
http_pid=$!
SMTP_PORT=$(wait_port "$TMP/smtp")
HTTP_PORT=$(wait_port "$TMP/http")

cat >"$W/nextbot.yaml" <<EOF
workdir: state
base: {name: origin, url: "$TMP/nowhere.git", branch: master}
notify:
  from: "nextbot <nextbot@example.org>"
  smtp: {url: "smtp://127.0.0.1:$SMTP_PORT", tls: none}
  webhooks:
    - {url: "http://127.0.0.1:$HTTP_PORT/hook", secret_env: NB_TEST_HOOK_SECRET}
EOF
export NB_TEST_HOOK_SECRET=hook-secret
nb() { "$NEXTBOT" -c "$W/nextbot.yaml" "$@"; }

# The spool before delivery: a mail to two people, a mail to one, a webhook POST.
$PYTHON - "$TMP/pristine" "$HTTP_PORT" <<'EOF'
import json, os, sys
d, port = sys.argv[1], sys.argv[2]
os.makedirs(d)
def mail(id, to):
    return ("From: nextbot <nextbot@example.org>\r\nTo: %s\r\n"
            "Subject: [next-20261203] notice %s\r\nDate: Thu, 03 Dec 2026 02:00:00 +0000\r\n"
            "Message-ID: <nextbot.%s@example.org>\r\nMIME-Version: 1.0\r\n"
            "Content-Type: text/plain; charset=UTF-8\r\nContent-Transfer-Encoding: 7bit\r\n"
            "Auto-Submitted: auto-generated\r\nX-Nextbot-Event: summary\r\n\r\nBody.\r\n"
            % (", ".join(to), id[-1], id))
def notice(id, channel, body, to, **kw):
    n = {"version": 1, "id": id, "kind": "summary", "channel": channel,
         "subject": "notice " + id[-1],
         "recipients": [{"to": t, "state": "queued", "error": None} for t in to],
         "state": "queued", "attempts": 0, "last_error": None,
         "created": "2026-12-03T02:00:00Z", "next_try": "2026-12-03T02:00:00Z", "sent": None,
         "body": body}
    n.update(kw)
    json.dump(n, open("%s/%s.json" % (d, id), "w"))
for id, to in (("0000000000000000000000000000000a", ["a@example.org", "b@example.org"]),
               ("0000000000000000000000000000000c", ["c@example.org"])):
    notice(id, "mail", mail(id, to), to, **{"from": "nextbot@example.org"})
url = "http://127.0.0.1:%s/hook" % port
notice("0000000000000000000000000000000b", "webhook", '{"event":"summary","id":null}', [url],
       url=url)
EOF

# check_spool: every file of the outbox is a whole notice (old or new, never half).
check_spool() {
	$PYTHON - "$W/state/outbox" <<'EOF'
import json, os, sys
d = sys.argv[1]
names = sorted(os.listdir(d))
ids = [n for n in names if n.endswith(".json")]
assert len(ids) == 3, names
for n in ids:
    j = json.load(open(os.path.join(d, n)))
    assert j["id"] + ".json" == n and j["state"] in ("queued", "sent", "failed"), j
    assert all(r["state"] in ("queued", "sent") for r in j["recipients"]), j
EOF
}

# check_delivered: everything sent; each (notice, recipient) got it at least once,
# at most one of them twice, that one among those the faulted flush delivered
# (recorded in $TMP/first), and every copy carried the notice's own id.
check_delivered() {
	$PYTHON - "$W/state/outbox" "$TMP/smtp" "$TMP/http" "$TMP/first" <<'EOF'
import collections, glob, json, os, re, sys
d, smtp, http, first = sys.argv[1:5]
for n in glob.glob(d + "/*.json"):
    j = json.load(open(n))
    assert j["state"] == "sent", ("not sent", j["id"], j["state"], j["last_error"])
def deliveries(smtp, http):
    got = collections.Counter()
    for f in glob.glob(smtp + "/msg-*.json"):
        m = json.load(open(f))
        mid = re.search(r"Message-ID: <nextbot\.(\w+)@", m["data"]).group(1)
        for r in m["rcpt_tos"]:
            got[(mid, r)] += 1
    for f in glob.glob(http + "/req-*.json"):
        r = json.load(open(f))
        assert r["sig_ok"], r
        got[(r["headers"]["X-Nextbot-Delivery"], "hook")] += 1
    return got
got = deliveries(smtp, http)
before = deliveries(first, first)
want = {("0000000000000000000000000000000a", "a@example.org"),
        ("0000000000000000000000000000000a", "b@example.org"),
        ("0000000000000000000000000000000c", "c@example.org"),
        ("0000000000000000000000000000000b", "hook")}
assert set(got) == want, ("lost or unexpected", sorted(got))
dups = {k: v for k, v in got.items() if v > 1}
assert len(dups) <= 1 and all(v == 2 for v in dups.values()), ("resent", dups)
assert all(before[k] == 1 for k in dups), ("resent what the faulted flush had not sent", dups)
print("dup" if dups else "")
EOF
}

# walk OP MODE: N = 1, 2, … until a flush passes the last fault point.
walk() {
	op=$1 mode=$2 n=1 bad=0 dups=0
	while [ "$n" -le 60 ]; do
		rm -rf "$W/state/outbox" "$TMP/smtp"/msg-*.json "$TMP/http"/req-*.json
		cp -r "$TMP/pristine" "$W/state/outbox"
		NEXTBOT_FAULT="$op:$n$mode" nb outbox flush --all >"$TMP/out" 2>"$TMP/err"
		rc=$?
		if [ "$rc" = 0 ] && [ "$mode" = ":kill" ]; then
			break # no kill: past the last fault point
		fi
		if [ "$mode" = ":kill" ] && [ "$rc" != 137 ]; then
			echo "# $op:$n$mode: exit $rc, expected a kill: $(cat "$TMP/err")"; bad=1
		fi
		if [ "$mode" = "" ] && [ "$rc" = 0 ]; then
			[ "$n" -gt "$killed" ] && break # past the last fault point
			echo "# $op:$n: the flush hit an I/O error and exited 0"; bad=1
		fi
		if grep -q 'Sanitizer' "$TMP/err"; then # SAN=1: leaks on the error paths
			echo "# $op:$n$mode: $(grep -m1 'Sanitizer' "$TMP/err")"; bad=1
		fi
		if ! check_spool 2>"$TMP/why"; then
			echo "# $op:$n$mode: spool damaged: $(tail -1 "$TMP/why")"; bad=1
		fi
		[ "$mode" = "" ] && ls "$W/state/outbox" | grep -q '\.tmp' &&
			{ echo "# $op:$n: temp file left after a failed write"; bad=1; }
		rm -f "$W/state/outbox"/*.tmp.*
		rm -rf "$TMP/first" && mkdir "$TMP/first"
		cp "$TMP/smtp"/msg-*.json "$TMP/http"/req-*.json "$TMP/first" 2>/dev/null
		if ! nb outbox flush --all >/dev/null 2>"$TMP/err2"; then
			echo "# $op:$n$mode: the next flush fails: $(cat "$TMP/err2")"; bad=1
		fi
		if ! check_delivered >"$TMP/dup" 2>"$TMP/why"; then
			echo "# $op:$n$mode: $(tail -1 "$TMP/why")"; bad=1
		fi
		grep -q dup "$TMP/dup" && dups=$((dups + 1))
		[ "$bad" = 0 ] || return 1
		n=$((n + 1))
	done
	points=$((n - 1))
	# at most one resend per delivery (4): only faults right after an acceptance
	[ "$n" -le 60 ] && [ "$points" -gt 0 ] && [ "$dups" -le 4 ]
}

for op in open write fsync rename; do
	killed=0
	if walk "$op" ":kill"; then
		ok "flush killed at each of $points $op point(s): spool whole, all delivered, $dups resend(s)"
	else
		not_ok "flush killed at $op points"
	fi
	killed=$points
	if walk "$op" ""; then
		ok "flush failing at each of $points $op point(s): exits non-zero, spool whole, $dups resend(s)"
	else
		not_ok "flush failing at $op points"
	fi
done

done_testing
