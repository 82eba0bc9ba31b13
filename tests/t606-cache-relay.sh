#!/bin/sh
# The compiler cache's relay (`nextbot-cc --relay`, what a Slurm node starts a box
# under) and the service's TCP side, without a cluster:
#  - the relay runs its command and ends as it did (exit code, signal), its socket
#    there while the command runs and gone after;
#  - a connection to its socket reaches the service at HOST:PORT after the token
#    line, bytes both ways and both ends' closes carried;
#  - without its token file, or with no service, the connection just ends (a shim
#    then compiles itself) and the command still runs;
#  - `nextbot cc-serve --listen` says its port, takes a connection with the token
#    and closes one without it unread (its stats count both);
#  - the config: on Slurm the cache needs listen, an address to dial, and only there.
. "$(dirname "$0")/lib.sh"
SHIM=$(dirname "$NEXTBOT")/nextbot-cc
RELAY=$TMP/bin/nextbot-cc
mkdir -p "$TMP/bin"
cp "$SHIM" "$RELAY"
TOKEN=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
printf '%s' "$TOKEN" >"$TMP/token"
chmod 600 "$TMP/token"

# A TCP peer that checks the token line and answers with what it read, upper-cased.
cat >"$TMP/peer.py" <<'EOF'
import socket, sys
token = open(sys.argv[1]).read().strip()
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(4)
print(s.getsockname()[1], flush=True)
while True:
    c, _ = s.accept()
    f = c.makefile("rb")
    line = f.readline()
    if line != ("NBCCT1 %s\n" % token).encode():
        open(sys.argv[2], "a").write("refused %r\n" % line[:20])
        c.close()
        continue
    data = f.read()
    c.sendall(data.upper())
    c.shutdown(socket.SHUT_WR)
    c.close()
    open(sys.argv[2], "a").write("served %d\n" % len(data))
EOF
$PYTHON "$TMP/peer.py" "$TMP/token" "$TMP/peer.log" >"$TMP/peer.port" &
peer=$!
stop_peer() { kill "$peer" 2>/dev/null; wait "$peer" 2>/dev/null; }
at_exit stop_peer
tries=50
while [ $tries -gt 0 ] && ! [ -s "$TMP/peer.port" ]; do sleep 0.1; tries=$((tries - 1)); done
PORT=$(cat "$TMP/peer.port")
check "the test's TCP peer listens" test -n "$PORT"

# A client of the relay's socket: sends its text, closes its side, prints the answer.
cat >"$TMP/client.py" <<'EOF'
import socket, sys
c = socket.socket(socket.AF_UNIX)
c.connect(sys.argv[1])
out = b""
try:
    c.sendall(sys.argv[2].encode())
    c.shutdown(socket.SHUT_WR)
except (BrokenPipeError, ConnectionResetError):  # ended before we spoke: no answer
    sys.exit(0)
while True:
    try:
        b = c.recv(65536)
    except ConnectionResetError:  # closed with our bytes unread: no answer
        break
    if not b:
        break
    out += b
sys.stdout.write(out.decode())
EOF

SOCK=$TMP/relay.sock
expect_exit 0 "the relay runs its command, whose connection reaches the peer" \
	"$RELAY" --relay "127.0.0.1:$PORT" "$TMP/token" "$SOCK" -- \
	sh -c "test -S '$SOCK' && $PYTHON '$TMP/client.py' '$SOCK' 'hello relay'"
check "the answer came back through the relay" grep -qx 'HELLO RELAY' "$TMP/out"
check "the peer saw the token line, then 11 bytes and the shim's close" \
	grep -qx 'served 11' "$TMP/peer.log"
check "the relay's socket is gone after" test ! -e "$SOCK"

expect_exit 3 "the relay ends with its command's exit code" \
	"$RELAY" --relay "127.0.0.1:$PORT" "$TMP/token" "$SOCK" -- sh -c 'exit 3'
"$RELAY" --relay "127.0.0.1:$PORT" "$TMP/token" "$SOCK" -- sh -c 'kill -TERM $$'
code=$?
check "the relay dies of its command's signal (exit $code)" test "$code" = 143
expect_exit 127 "a command that is not there: 127" \
	"$RELAY" --relay "127.0.0.1:$PORT" "$TMP/token" "$SOCK" -- /nonexistent/cc

# Without the token, or without a service: the connection ends, the command goes on.
: >"$TMP/peer.log"
expect_exit 0 "without a token file, the command still runs" \
	"$RELAY" --relay "127.0.0.1:$PORT" "$TMP/no-token" "$SOCK" -- \
	$PYTHON "$TMP/client.py" "$SOCK" 'x'
check "... its connection ended with no answer" test ! -s "$TMP/out"
check "... and never reached the peer" test ! -s "$TMP/peer.log"
expect_exit 0 "with no service at the address, the command still runs" \
	"$RELAY" --relay "127.0.0.1:1" "$TMP/token" "$SOCK" -- \
	$PYTHON "$TMP/client.py" "$SOCK" 'x'
check "... its connection ended with no answer" test ! -s "$TMP/out"
expect_exit 127 "the relay without its arguments says how it is used" "$RELAY" --relay x
check "... on stderr" grep -q 'usage: nextbot-cc --relay' "$TMP/err"

# The service's TCP side: `nextbot cc-serve --listen`.
if ! command -v bwrap >/dev/null; then
	not_ok "bwrap is installed (the service needs it)"
	done_testing
	exit 1
fi
mkdir -p "$TMP/serve"
"$NEXTBOT" cc-serve --run "$TMP/serve/run" --jobs "$TMP/serve/jobs" --store "$TMP/serve/store" \
	--shim "$SHIM" --bwrap "$(command -v bwrap)" --listen 127.0.0.1:0 \
	--token-file "$TMP/token" >"$TMP/serve.out" 2>&1 &
serve=$!
stop_serve() { kill "$serve" 2>/dev/null; wait "$serve" 2>/dev/null; }
at_exit stop_serve
tries=100
while [ $tries -gt 0 ] && ! grep -qs '^ready' "$TMP/serve.out"; do sleep 0.1; tries=$((tries - 1)); done
SPORT=$(sed -n 's/^ready \([0-9][0-9]*\)$/\1/p' "$TMP/serve.out")
check "cc-serve --listen says 'ready PORT'" test -n "$SPORT"
check "... a port of its own (not 0)" test "${SPORT:-0}" -gt 0
cat >"$TMP/knock.py" <<'EOF'
import socket, sys
c = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
c.sendall(sys.argv[2].encode())
c.settimeout(20)
try:
    data = c.recv(100)
except socket.timeout:
    data = b"(silence)"
print("closed" if not data else data.decode(errors="replace"))
EOF
$PYTHON "$TMP/knock.py" "$SPORT" "NBCCT1 $(echo "$TOKEN" | tr 0-9a-f a-f0-9)
" >"$TMP/knock.out" 2>&1
check "a connection with a wrong token is closed unread" grep -qx closed "$TMP/knock.out"
# The right token, then a request that is not one: the service answers it (a
# fallback or a close), which a refused connection never reaches.
$PYTHON "$TMP/knock.py" "$SPORT" "NBCCT1 $TOKEN
NBCC2" >"$TMP/knock2.out" 2>&1
kill -TERM "$serve"
wait "$serve"
serve=
check "the service counted one relay's connection and one refused" \
	grep -Eq '^stats( [0-9]+){8} 1 1$' "$TMP/serve.out"
sed 's/^/# /' "$TMP/serve.out"
expect_exit 1 "cc-serve --listen without a token file refuses to start" \
	"$NEXTBOT" cc-serve --run "$TMP/serve/run" --jobs "$TMP/serve/jobs" \
	--store "$TMP/serve/store" --shim "$SHIM" --bwrap "$(command -v bwrap)" \
	--listen 127.0.0.1:0 --token-file "$TMP/no-token"
check "... naming the token" grep -q "no token in '$TMP/no-token'" "$TMP/out"

# The config: on Slurm the cache needs listen, an address the nodes can dial; the
# local runner has no use for it.
W=$TMP/w
expect_exit 0 "sim init" "$NEXTBOT" sim init "$W" --seed 1
config_says() { # RUNNER-LINE CODE WHAT
	sed -i '/^runner: /d' "$W/nextbot.yaml"
	printf '%s\n' "$1" >>"$W/nextbot.yaml"
	expect_exit "$2" "check-config with $1" "$NEXTBOT" -c "$W/nextbot.yaml" check-config
	[ -z "$3" ] || check "... says '$3'" grep -qF "$3" "$TMP/err"
}
config_says 'runner: {kind: slurm, cache: {max: 5G}}' 2 'needs listen: HOST:PORT'
config_says 'runner: {kind: slurm, cache: {listen: "0.0.0.0:0"}}' 2 \
	'not the wildcard'
config_says 'runner: {kind: slurm, cache: {listen: "[::]:7000"}}' 2 \
	'not the wildcard'
config_says 'runner: {kind: slurm, cache: {listen: "head:99999"}}' 2 \
	'not HOST:PORT'
config_says 'runner: {kind: slurm, cache: {listen: "::1:7000"}}' 2 \
	'[ADDR]:PORT for IPv6'
config_says 'runner: {cache: {listen: "127.0.0.1:0"}}' 2 \
	'is for runner.kind: slurm'
config_says 'runner: {kind: slurm, cache: {listen: "head.cluster:7420"}}' 0 ''
config_says 'runner: {kind: slurm, cache: {listen: "[fd00::1]:0"}}' 0 ''
done_testing
