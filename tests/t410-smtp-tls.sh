#!/bin/sh
# Mail over TLS with a login, against a real aiosmtpd that requires both: STARTTLS
# on smtp:// and implicit TLS on smtps://, the server's certificate trusted through
# notify.smtp.ca_file.  A wrong password and an untrusted certificate keep the mail
# queued with an error that names the cause.
. "$(dirname "$0")/lib.sh"

W=$TMP/w
mkdir -p "$W/state" "$TMP/pki"
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 \
	-addext subjectAltName=IP:127.0.0.1 -keyout "$TMP/pki/key.pem" \
	-out "$TMP/pki/cert.pem" >/dev/null 2>&1
check "a self-signed certificate for 127.0.0.1" test -s "$TMP/pki/cert.pem"
export NB_TEST_SMTP_PW='s3cret pass'

smtp_pid=
stop_smtp() {
	[ -n "$smtp_pid" ] && kill "$smtp_pid" 2>/dev/null && wait "$smtp_pid" 2>/dev/null
	smtp_pid=
}
at_exit stop_smtp

# start_smtp TLS: a fresh server directory and server; SMTP_PORT is its port
start_smtp() {
	stop_smtp
	rm -rf "$TMP/smtp"
	mkdir -p "$TMP/smtp"
	SMTPD_TLS=$1 SMTPD_CERT=$TMP/pki/cert.pem SMTPD_KEY=$TMP/pki/key.pem \
		SMTPD_AUTH="bot:$NB_TEST_SMTP_PW" \
		$PYTHON "$(dirname "$0")/smtpd.py" "$TMP/smtp" 0 2>"$TMP/smtp.log" &
	smtp_pid=$!
	i=0
	while [ ! -e "$TMP/smtp/port" ] && [ $i -lt 500 ]; do sleep 0.02; i=$((i + 1)); done
	SMTP_PORT=$(cat "$TMP/smtp/port")
}

# config URL TLS [CA_FILE]
config() {
	cat >"$W/nextbot.yaml" <<YAML
workdir: state
base: {name: origin, url: "$TMP/nowhere.git", branch: master}
trees: []
notify:
  from: "nextbot <nextbot@example.org>"
  smtp:
    url: "$1"
    tls: $2
    user: bot
    password_env: NB_TEST_SMTP_PW
${3:+    ca_file: "$3"}
YAML
}

# one queued mail in the outbox (the spool format of notify/outbox.h)
queue_mail() {
	rm -rf "$W/state/outbox"
	mkdir -p "$W/state/outbox"
	$PYTHON - "$W/state/outbox" <<'PY'
import json, sys, time
now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
mail = ("From: nextbot <nextbot@example.org>\r\nTo: a@example.org\r\n"
        "Subject: [next-20261203] BUILD SUCCESS 0123456789ab\r\n"
        "Date: Thu, 03 Dec 2026 02:00:00 +0000\r\n"
        "Message-ID: <nextbot.0000000000000000000000000000000a@example.org>\r\n"
        "MIME-Version: 1.0\r\nContent-Type: text/plain; charset=UTF-8\r\n"
        "Content-Transfer-Encoding: 7bit\r\n\r\nAll merged.\r\n")
n = {"version": 1, "id": "0000000000000000000000000000000a", "kind": "summary",
     "channel": "mail", "subject": "[next-20261203] BUILD SUCCESS 0123456789ab",
     "recipients": [{"to": "a@example.org", "state": "queued", "error": None}],
     "state": "queued", "attempts": 0, "last_error": None, "created": now,
     "next_try": now, "sent": None, "body": mail, "from": "nextbot@example.org"}
json.dump(n, open(sys.argv[1] + "/0000000000000000000000000000000a.json", "w"))
PY
}
nb() { "$NEXTBOT" -c "$W/nextbot.yaml" "$@"; }

# notice_is STATE NEEDLE: the notice's state, and NEEDLE in its last error ("" none)
notice_is() {
	nb --json outbox list >"$TMP/list.json" 2>/dev/null
	$PYTHON - "$TMP/list.json" "$1" "$2" <<'PY'
import json, sys
n = json.load(open(sys.argv[1]))["notices"]
want, needle = sys.argv[2], sys.argv[3]
ok = len(n) == 1 and n[0]["state"] == want and \
    (needle.lower() in (n[0]["last_error"] or "").lower() if needle else True)
print("# %s" % n)
sys.exit(0 if ok else 1)
PY
}

# delivered_over_tls: the server got the mail encrypted, after bot's login
delivered_over_tls() {
	$PYTHON -c 'import json, sys
m = json.load(open(sys.argv[1]))
sys.exit(0 if m["tls"] and m["auth_user"] == "bot" and m["rcpt_tos"] == ["a@example.org"] else 1)' \
		"$TMP/smtp/msg-1.json"
}

start_smtp starttls
config "smtp://127.0.0.1:$SMTP_PORT" starttls "$TMP/pki/cert.pem"
queue_mail
expect_exit 0 "STARTTLS + AUTH: flush" nb outbox flush
check "STARTTLS + AUTH: the notice is sent" notice_is sent ""
check "STARTTLS + AUTH: the server got it encrypted, logged in as bot" delivered_over_tls

start_smtp implicit
config "smtps://127.0.0.1:$SMTP_PORT" implicit "$TMP/pki/cert.pem"
queue_mail
expect_exit 0 "implicit TLS + AUTH: flush" nb outbox flush
check "implicit TLS + AUTH: the notice is sent" notice_is sent ""
check "implicit TLS + AUTH: the server got it encrypted, logged in as bot" delivered_over_tls

start_smtp starttls
config "smtp://127.0.0.1:$SMTP_PORT" starttls "$TMP/pki/cert.pem"
queue_mail
NB_TEST_SMTP_PW=wrong nb outbox flush >/dev/null 2>"$TMP/err"
check "a wrong password: the mail stays queued, the error says so" notice_is queued "auth"
check "a wrong password: nothing delivered" test ! -e "$TMP/smtp/msg-1.json"
expect_exit 0 "the password right again: flush" nb outbox flush
check "the password right again: the mail kept is sent" notice_is sent ""
check "the password right again: delivered once" delivered_over_tls

start_smtp starttls
config "smtp://127.0.0.1:$SMTP_PORT" starttls
queue_mail
nb outbox flush >/dev/null 2>"$TMP/err"
check "an untrusted certificate: the mail stays queued, the error names it" \
	notice_is queued "certificate"
check "an untrusted certificate: nothing delivered" test ! -e "$TMP/smtp/msg-1.json"
done_testing
