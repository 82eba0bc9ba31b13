#!/bin/sh
# A private Dovecot IMAP server for the tests (Debian's dovecot-imapd), everything under
# one directory: its own config, passwd-file, Maildir, state, logs and sockets.
#
#   sh tests/dovecot.sh start DIR   starts it on 127.0.0.1 (free ports: DIR/port plain
#                                   IMAP, DIR/tls-port implicit TLS with a self-signed
#                                   certificate DIR/cert.pem for 127.0.0.1); one user
#                                   "bot" with the password "imap-secret"; exit 1 with a
#                                   reason when it does not come up
#   sh tests/dovecot.sh deliver DIR FILE...   puts each FILE into bot's Maildir (new/)
#   sh tests/dovecot.sh flags DIR   prints "uid flags" of every mail of bot's INBOX
#   sh tests/dovecot.sh unmark DIR UID   takes \Seen and $Nextbot off that mail again
#   sh tests/dovecot.sh stop DIR    stops exactly this instance (its master's pid)
#   sh tests/dovecot.sh resume DIR  starts it again as it was (same ports, same mail)
#
# Run as root: the master runs as root, logins as dovenull, mail access as nobody
# (default_internal_user/default_login_user name existing users).
set -u

die() {
	echo "dovecot: $*" >&2
	exit 1
}

cmd=$1 dir=$2
shift 2

conf() {
	port=$1 tls_port=$2
	cat <<EOF
base_dir = $dir/run
state_dir = $dir/lib
instance_name = nextbot-test-$port
log_path = $dir/dovecot.log
info_log_path = $dir/dovecot.log
protocols = imap
listen = 127.0.0.1
default_internal_user = nobody
default_internal_group = nogroup
default_login_user = dovenull
first_valid_uid = 100
disable_plaintext_auth = no
auth_mechanisms = plain login
ssl = yes
ssl_cert = <$dir/cert.pem
ssl_key = <$dir/key.pem
passdb {
  driver = passwd-file
  args = scheme=PLAIN username_format=%u $dir/passwd
}
userdb {
  driver = static
  args = uid=nobody gid=nogroup home=$dir/home/%u
}
mail_location = maildir:~/Maildir
service imap-login {
  inet_listener imap {
    address = 127.0.0.1
    port = $port
  }
  inet_listener imaps {
    address = 127.0.0.1
    port = $tls_port
    ssl = yes
  }
}
service anvil {
  chroot =
}
service imap-login {
  chroot =
}
EOF
}

# Starts the master from DIR's config and waits until it greets on the plain port.
run() {
	set -- "$(cat "$dir/port")"
	/usr/sbin/dovecot -c "$dir/dovecot.conf" ||
		die "dovecot did not start: $(tail -3 "$dir/dovecot.log" 2>/dev/null)"
	n=100
	while [ $n -gt 0 ]; do
		if [ -s "$dir/run/master.pid" ] && /usr/bin/python3 -c '
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1)
sys.exit(0 if s.recv(100).startswith(b"* OK") else 1)' "$1" 2>/dev/null; then
			exit 0
		fi
		sleep 0.1
		n=$((n - 1))
	done
	die "dovecot does not answer on port $1: $(tail -3 "$dir/dovecot.log" 2>/dev/null)"
}

case $cmd in
start)
	mkdir -p "$dir/run" "$dir/lib" "$dir/home/bot/Maildir/new" "$dir/home/bot/Maildir/cur" \
		"$dir/home/bot/Maildir/tmp" || die "cannot make $dir"
	chown -R nobody:nogroup "$dir/home"
	printf 'bot:{PLAIN}imap-secret\n' >"$dir/passwd"
	openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 \
		-addext subjectAltName=IP:127.0.0.1 -keyout "$dir/key.pem" \
		-out "$dir/cert.pem" 2>/dev/null || die "openssl failed"
	set -- $(/usr/bin/python3 -c '
import socket
ss = [socket.socket() for _ in range(2)]
for s in ss:
    s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in ss))')
	conf "$1" "$2" >"$dir/dovecot.conf"
	echo "$1" >"$dir/port"
	echo "$2" >"$dir/tls-port"
	run
	;;
resume)
	run
	;;
deliver)
	for f in "$@"; do
		name=$(date +%s).$$.$(od -An -N4 -tx4 /dev/urandom | tr -d ' ').nextbot-test
		cp "$f" "$dir/home/bot/Maildir/tmp/$name" &&
			chown nobody:nogroup "$dir/home/bot/Maildir/tmp/$name" &&
			mv "$dir/home/bot/Maildir/tmp/$name" "$dir/home/bot/Maildir/new/$name" ||
			die "cannot deliver $f"
	done
	;;
flags)
	doveadm -c "$dir/dovecot.conf" -f flow fetch -u bot 'uid flags' mailbox INBOX all |
		sed 's/^uid=\([0-9]*\) flags=/\1 /'
	;;
unmark)
	doveadm -c "$dir/dovecot.conf" flags remove -u bot '\Seen $Nextbot' mailbox INBOX uid "$1"
	;;
stop)
	pid=$(head -n 1 "$dir/run/master.pid" 2>/dev/null | tr -cd 0-9)
	[ -n "$pid" ] || exit 0
	kill "$pid" 2>/dev/null
	n=100
	while [ $n -gt 0 ] && kill -0 "$pid" 2>/dev/null; do sleep 0.1; n=$((n - 1)); done
	kill -9 "$pid" 2>/dev/null
	exit 0
	;;
*)
	die "usage: dovecot.sh start|deliver|flags|stop DIR"
	;;
esac
