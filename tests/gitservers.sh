#!/bin/sh
# Private git servers for the tests, everything under one directory DIR, serving the
# bare repositories in DIR/root over the three remote protocols linux-next's trees use:
#
#   https  lighttpd (Debian's, mod_cgi + mod_openssl) running `git http-backend` as
#          CGI, with a certificate for 127.0.0.1 signed by a test CA (DIR/ca.pem):
#            /git/NAME.git     the repository DIR/root/NAME.git
#            /moved/NAME.git   a 301 redirect to /git/NAME.git
#            /postmoved/NAME.git  NAME.git's refs, but its POSTs (the fetch itself)
#                              redirected to /git/NAME.git
#            /dying/NAME.git   http-backend, but a pack response is cut after
#                              DYING_BYTES bytes and the CGI killed (a server that
#                              dies mid-pack)
#          on DIR/https-port; the same site on DIR/untrusted-port with a self-signed
#          certificate no CA vouches for
#   git    `git daemon --export-all --base-path=DIR/root` on DIR/git-port
#   ssh    a private sshd (its own config, host key, pid and log in DIR) on
#          DIR/ssh-port that lets in the user running the tests with the key
#          DIR/id_ed25519 (no passphrase); repositories at their absolute paths
#
#   sh tests/gitservers.sh start DIR   makes DIR/root, the keys and the certificates,
#                                      starts the three; exit 1 with a reason when one
#                                      does not come up
#   sh tests/gitservers.sh stop DIR    stops exactly these (their pids in DIR/*.pid)
set -u

die() {
	echo "gitservers: $*" >&2
	exit 1
}

cmd=$1 dir=$2
DYING_BYTES=${DYING_BYTES:-20000}

# The certificates: a test CA, a server certificate it signs for 127.0.0.1 (IP and DNS
# names, CN too, whatever the TLS library checks), and a self-signed stranger.
pki() {
	cd "$dir" || exit 1
	san="subjectAltName=IP:127.0.0.1,DNS:127.0.0.1,DNS:localhost"
	ec="-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"
	openssl req -x509 $ec -days 2 -subj "/CN=nextbot test CA" \
		-addext basicConstraints=critical,CA:TRUE -addext keyUsage=keyCertSign,cRLSign \
		-keyout ca.key -out ca.pem 2>/dev/null &&
	openssl req $ec -subj /CN=127.0.0.1 -keyout server.key -out server.csr 2>/dev/null &&
	printf '%s\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' "$san" >server.ext &&
	openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \
		-extfile server.ext -out server.crt 2>/dev/null &&
	cat server.crt server.key >server.pem &&
	openssl req -x509 $ec -days 2 -subj /CN=127.0.0.1 -addext "$san" \
		-keyout stranger.key -out stranger.crt 2>/dev/null &&
	cat stranger.crt stranger.key >stranger.pem || die "openssl failed"
	cd - >/dev/null || exit 1
}

free_ports() {
	/usr/bin/python3 -c '
import socket, sys
ss = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in ss:
    s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in ss))' "$1"
}

# The CGI programs: http-backend, and one that cuts a pack short and dies.
cgis() {
	mkdir -p "$dir/cgi"
	cat >"$dir/cgi/backend" <<EOF
#!/bin/sh
GIT_PROJECT_ROOT=$dir/root GIT_HTTP_EXPORT_ALL=1 exec /usr/lib/git-core/git-http-backend
EOF
	cat >"$dir/cgi/dying" <<EOF
#!/bin/sh
# a pack (a POST to git-upload-pack) is cut after $DYING_BYTES bytes, then this dies
export GIT_PROJECT_ROOT=$dir/root GIT_HTTP_EXPORT_ALL=1
[ "\$REQUEST_METHOD" = POST ] || exec /usr/lib/git-core/git-http-backend
echo >>$dir/dying.log "cut \$PATH_INFO after $DYING_BYTES bytes"
/usr/lib/git-core/git-http-backend | head -c $DYING_BYTES
kill -KILL \$\$
EOF
	chmod 755 "$dir/cgi/backend" "$dir/cgi/dying"
}

lighttpd_conf() {
	cat <<EOF
server.document-root = "$dir/www"
server.bind = "127.0.0.1"
server.port = $1
server.pid-file = "$dir/lighttpd.pid"
server.errorlog = "$dir/lighttpd.log"
server.modules = ("mod_alias", "mod_redirect", "mod_cgi", "mod_openssl", "mod_accesslog")
accesslog.filename = "$dir/access.log"
ssl.engine = "enable"
ssl.pemfile = "$dir/server.pem"
\$SERVER["socket"] == "127.0.0.1:$2" {
	ssl.engine = "enable"
	ssl.pemfile = "$dir/stranger.pem"
}
url.redirect = ("^/moved/(.*)\$" => "/git/\$1")
url.redirect-code = 301
\$HTTP["request-method"] == "POST" {
	url.redirect = ("^/postmoved/(.*)\$" => "/git/\$1")
}
alias.url = ("/git" => "$dir/cgi/backend", "/dying" => "$dir/cgi/dying",
	     "/postmoved" => "$dir/cgi/backend")
cgi.assign = ("" => "")
EOF
}

# SHLVL=1: the login shell runs git-upload-pack without reading the user's ~/.bashrc
# (bash reads it for a command over ssh at the first shell level; a slow one, pyenv's
# say, would cost every fetch seconds)
sshd_conf() {
	cat <<EOF
ListenAddress 127.0.0.1
Port $1
HostKey $dir/ssh_host_ed25519_key
PidFile $dir/sshd.pid
AuthorizedKeysFile $dir/authorized_keys
PasswordAuthentication no
KbdInteractiveAuthentication no
PubkeyAuthentication yes
PermitRootLogin prohibit-password
StrictModes no
UsePAM no
LogLevel VERBOSE
SetEnv SHLVL=1
EOF
}

# Waits until something listens on 127.0.0.1:PORT; NAME for the reason.
wait_port() {
	n=100
	while [ $n -gt 0 ]; do
		/usr/bin/python3 -c '
import socket, sys
socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1).close()' "$1" 2>/dev/null && return 0
		sleep 0.1
		n=$((n - 1))
	done
	die "$2 does not answer on port $1: $(tail -3 "$3" 2>/dev/null)"
}

stop_pid() {
	pid=$(head -n 1 "$1" 2>/dev/null | tr -cd 0-9)
	[ -n "$pid" ] || return 0
	kill "$pid" 2>/dev/null
	n=50
	while [ $n -gt 0 ] && kill -0 "$pid" 2>/dev/null; do sleep 0.1; n=$((n - 1)); done
	kill -9 "$pid" 2>/dev/null
	rm -f "$1"
}

case $cmd in
start)
	mkdir -p "$dir/root" "$dir/www" || die "cannot make $dir"
	pki
	cgis
	set -- $(free_ports 4)
	echo "$1" >"$dir/https-port"
	echo "$2" >"$dir/untrusted-port"
	echo "$3" >"$dir/git-port"
	echo "$4" >"$dir/ssh-port"
	lighttpd_conf "$1" "$2" >"$dir/lighttpd.conf"
	/usr/sbin/lighttpd -f "$dir/lighttpd.conf" 2>>"$dir/lighttpd.log" ||
		die "lighttpd did not start: $(tail -3 "$dir/lighttpd.log")"
	wait_port "$1" lighttpd "$dir/lighttpd.log"
	git daemon --reuseaddr --listen=127.0.0.1 --port="$3" --base-path="$dir/root" \
		--export-all --pid-file="$dir/git-daemon.pid" --detach \
		--log-destination=stderr 2>>"$dir/git-daemon.log" ||
		die "git daemon did not start: $(tail -3 "$dir/git-daemon.log")"
	wait_port "$3" "git daemon" "$dir/git-daemon.log"
	ssh-keygen -q -t ed25519 -N '' -f "$dir/ssh_host_ed25519_key" &&
		ssh-keygen -q -t ed25519 -N '' -f "$dir/id_ed25519" &&
		cp "$dir/id_ed25519.pub" "$dir/authorized_keys" || die "ssh-keygen failed"
	sshd_conf "$4" >"$dir/sshd_config"
	# sshd run as root wants its privilege separation directory
	[ "$(id -u)" != 0 ] || mkdir -p /run/sshd
	/usr/sbin/sshd -f "$dir/sshd_config" -E "$dir/sshd.log" ||
		die "sshd did not start: $(tail -3 "$dir/sshd.log")"
	wait_port "$4" sshd "$dir/sshd.log"
	;;
stop)
	stop_pid "$dir/lighttpd.pid"
	stop_pid "$dir/git-daemon.pid"
	stop_pid "$dir/sshd.pid"
	exit 0
	;;
*)
	die "usage: gitservers.sh start|stop DIR"
	;;
esac
