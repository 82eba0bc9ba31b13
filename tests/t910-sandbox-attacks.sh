#!/bin/sh
# RELIABILITY 13, 14, 15, 16, 32, 33: a build is an attacker.  On a small world, a
# tree "evil" gets one new commit a night whose build.sh attacks (and exits 0, so a
# healthy night stays clean): it leaves traps in its worker for the next checkout
# (a folder and a file swapped for symlinks to a root-owned sentinel tree outside
# the workdir, a FIFO where a tracked file was, a socket, a chmod 000 folder, a
# setuid file, a process left writing), reads state.json by its absolute path,
# reaches for a TCP server this test runs on 127.0.0.1, reads the bot's environment
# and its /proc; device nodes and hard links to root-owned files, which the box does
# not let a build make, are planted by this test.  After each night: no file of the
# sentinel changed, the night ended within its deadline, nothing was blamed, and
# the trap was found and the worker rebuilt pristine.  Then a fork bomb and a 20 GiB
# allocation are each stopped by their limit, named ("stopped: process limit 64
# reached", "killed: memory limit 256 MiB") and blamed on their patch (the parent
# passes under the same limit); and the same allocation in the base alone is an
# infrastructure problem, not a broken base.  RUNNER=none runs it all with
# runner.sandbox: none (the runner user and the private workdir only).  About 60 s.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || { echo "# skipped: needs root (commands run as nobody)"; echo "ok 1 # skip"; exit 0; }
SANDBOX=${RUNNER:-bwrap}
W=$TMP/world
SENT=$TMP/sentinel
mkdir -p "$W/src" "$SENT/dir/sub"
# the sentinel: root's, outside the workdir, shown to the box read-only
for f in file dir/a.c dir/sub/b.c; do echo "precious $f" >"$SENT/$f"; done
chmod 644 "$SENT/file" "$SENT/dir/a.c" "$SENT/dir/sub/b.c"
snapshot() {
	(cd "$SENT" && find . -printf '%p %y %m %u %g %n %s %T@\n' | sort &&
		find . -type f -exec sha1sum {} + | sort)
}
snapshot >"$TMP/sentinel.before"

cd "$W/src" || exit 1
git_q init -q mainline && cd mainline || exit 1
mkdir fs lib
printf 'int a;\n' >fs/a.c
printf 'int b;\n' >fs/b.c
printf 'int c;\n' >lib/c.c
printf 'int main(void) { return 0; }\n' >main.c
# the build: every tracked file is where the commit says, with its content
cat >build.sh <<'EOF'
for f in main.c fs/a.c fs/b.c lib/c.c; do
	test -f "$f" && ! test -L "$f" || { echo "error: $f is not a file"; exit 1; }
done
grep -q 'int a;' fs/a.c || { echo "error: fs/a.c is wrong"; exit 1; }
echo built
EOF
git_q add -A && git_q commit -qm "initial" && cd ..
git_q clone -q mainline evil
for r in mainline evil; do git clone -q --bare "$r" "$W/$r.git"; done
# 13: a branch named to run a command, subjects with backticks and $(…): values
# reach commands only as environment variables, never through a shell line
BRANCH="feature/\$(id>$TMP/pwned-branch)"
git -C "$W/evil.git" branch -m master "$BRANCH"

# The server a build must not reach: it logs every connection.
$PYTHON - "$TMP/port" "$TMP/connections" <<'EOF' &
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0))
s.listen(16)
open(sys.argv[1], "w").write("%d\n" % s.getsockname()[1])
while True:
    c, _ = s.accept()
    open(sys.argv[2], "a").write("connection\n")
    c.close()
EOF
SERVER=$!
stop_server() { kill "$SERVER" 2>/dev/null; }
at_exit stop_server
while [ ! -s "$TMP/port" ]; do sleep 0.1; done
PORT=$(cat "$TMP/port")
# the server works: this test can see a connection
$PYTHON -c "import socket; socket.create_connection(('127.0.0.1', $PORT), 3)"
sleep 0.3
check "control: the TCP server logs a connection from outside" test -s "$TMP/connections"
: >"$TMP/connections"

S=$W/state
STATE=$S/state.json
export NEXTBOT_SECRET_TOKEN=hunter2-not-for-builds
EVIL="  - {name: evil, url: \"file://$W/evil.git\", branch: '$BRANCH', contacts: [\"evil@example.org\"]}"
config() { # the trees, as YAML list items
	cat >"$W/nextbot.yaml" <<EOF
workdir: state
base: {name: origin, url: "file://$W/mainline.git", branch: master}
trees:
$1
build:
  - {name: build, command: "sh build.sh", timeout: 60}
bisect: {confirm: 1, jobs: 1}
deadline: "5m"
runner: {sandbox: $SANDBOX, read_only: ["$SENT"], limits: {memory: 256M, processes: 64}}
git: {token_env: NEXTBOT_SECRET_TOKEN}
notify: {from: "nextbot <nextbot@example.org>", list: "list@example.org"}
EOF
}
config "$EVIL"
NB() { "$NEXTBOT" -c "$W/nextbot.yaml" "$@"; }

# attack NAME SCRIPT: evil's next commit; build.sh does the real build, then SCRIPT
attack() {
	{ sed -n '/^for f/,$p' "$W/src/mainline/build.sh"; printf '%s\n' "$2"; } >"$W/src/evil/build.sh"
	git_q -C "$W/src/evil" commit -qam "evil: $1 \`id>$TMP/pwned-subject\` \$(id>$TMP/pwned-subject)"
	git -C "$W/src/evil" push -q "$W/evil.git" "HEAD:refs/heads/$BRANCH"
}
DAY=10
# night NAME: a night; asserts the sentinel, the deadline, that nothing was blamed
night() {
	DAY=$((DAY + 1))
	start=$(date +%s)
	timeout 300 "$NEXTBOT" -c "$W/nextbot.yaml" run --date "2026-12-$DAY" --no-notify \
		>"$TMP/night.out" 2>"$TMP/night.err"
	rc=$?
	took=$(($(date +%s) - start))
	cp "$TMP/night.err" "$TMP/night-$DAY.err"
	check "$1: the night ran (exit $rc)" test "$rc" = 0
	check "$1: the night ended within its deadline (${took}s)" test "$took" -lt 300
	snapshot >"$TMP/sentinel.after"
	check "$1: no file outside the workdir changed" cmp -s "$TMP/sentinel.before" "$TMP/sentinel.after"
	NB --json flagged >"$TMP/flags.json"
	check "$1: nothing blamed" $PYTHON -c "import json,sys; f=json.load(open('$TMP/flags.json'))['flags']; sys.exit(len(f))"
	NB --json status >"$TMP/status.json"
	check "$1: the night is clean" $PYTHON -c "import json,sys; r=json.load(open('$TMP/status.json'))['runs'][-1]; sys.exit(r['result'] != 'clean')"
}
T0=$S/workers/w0/tree
# pristine TRAP: the night's log says the worker held it and was rebuilt
pristine() {
	check "$1 found, the worker rebuilt pristine" grep -q "$1.* at '.*checking out .* pristine" "$TMP/night.err"
}

night "a plain night"
check "the branch was really named \$(id>…)" sh -c "git -C '$W/evil.git' for-each-ref --format='%(refname)' | grep -qF '(id>'"
check "the worker is the runner user's" test "$(stat -c %U "$T0")" = nobody

# 32: a folder and a file swapped for symlinks to the root-owned sentinel
attack "symlinks" "rm -rf fs main.c; ln -s '$SENT/dir' fs; ln -s '$SENT/file' main.c; echo planted"
night "symlinks planted"
check "the build ran (the links were planted)" sh -c "grep -q planted '$S'/runs/2026-12-$DAY/*.log"
attack "fifo" "rm -f fs/a.c && mkfifo fs/a.c && echo planted"
night "a FIFO planted, the symlinks checked out over"
pristine "a symlink where the commit has files"
attack "socket" "rm -f fs/b.c; /usr/bin/python3 -c \"import socket; socket.socket(socket.AF_UNIX).bind('fs/b.c')\" && echo planted"
night "a socket planted, the FIFO checked out over"
pristine "a FIFO"
attack "chmod 000" "mkdir -p out/deep && echo x >out/deep/o && chmod 000 out && echo planted"
night "a chmod 000 folder planted, the socket checked out over"
pristine "a socket"
attack "setuid" "cp /bin/true suid && chmod 4755 suid && echo planted"
night "a setuid file planted, the folder checked out over"
pristine "a folder it cannot enter"
# 14: a process left behind, writing
attack "leftover" "setsid sh -c 'while :; do echo x >>leftover.out; sleep 0.05; done' >/dev/null 2>&1 & sleep 1; echo planted"
night "a process left writing, the setuid file checked out over"
pristine "a setuid or setgid file"
check "the leftover writer is gone" sh -c "! pgrep -f 'leftover[.]out' >/dev/null"
size=$(stat -c %s "$T0/leftover.out")
sleep 1
check "its output stopped growing when the build ended" test "$(stat -c %s "$T0/leftover.out")" = "$size"
# 33: the workdir by its absolute path; a TCP server of the host (the sandbox's
# own network namespace: without a sandbox the network is open); the bot's secrets
NETCHECK=:
[ "$SANDBOX" = bwrap ] &&
	NETCHECK="/usr/bin/python3 -c \"import socket; socket.create_connection(('127.0.0.1', $PORT), 3)\" 2>/dev/null && { echo 'error: reached the host'; exit 1; }"
attack "reach out" "cat '$STATE' >/dev/null 2>&1 && { echo 'error: read the state'; exit 1; }
ls '$S' 2>/dev/null | grep -q state.json && { echo 'error: listed the workdir'; exit 1; }
$NETCHECK
env | grep -q hunter2 && { echo 'error: the bot environment'; exit 1; }
grep -qs hunter2 /proc/*/environ && { echo 'error: the bot /proc'; exit 1; }
echo 'every door closed'"
night "reaching out, the leftover process checked out over"
check "the build tried every door (and found them closed)" sh -c "grep -q 'every door closed' '$S'/runs/2026-12-$DAY/*.log"
[ "$SANDBOX" = bwrap ] && check "no connection reached the host's TCP server" test ! -s "$TMP/connections"
# planted by the test: a device node and a hard link to a root-owned file
mknod "$T0/disk" b 7 0 2>/dev/null && DEV=1 || DEV=0
ln "$SENT/file" "$T0/hard"
attack "after the plants" "echo benign"
night "a device node and a hard link planted in the worker"
pristine "\\(a device node\\|an entry that is not the runner user's\\)"
check "the hard-linked file is whole and alone again" test "$(stat -c %h "$SENT/file")" = 1
[ "$DEV" = 1 ] && check "the device node is gone" test ! -e "$T0/disk"
check "no setuid file in the worker" test -z "$(find "$T0" -perm /6000)"

check "13: neither the branch's name nor a subject was run by a shell" \
	sh -c "! ls '$TMP'/pwned-* 2>/dev/null | grep -q ."

# 16: a fork bomb and a 20 GiB allocation, each in its own tree, blamed with their limit
for t in bomb hog; do git_q clone -q "$W/src/mainline" "$W/src/$t"; done
cd "$W/src/bomb" || exit 1
{ echo 'b() { b | b & }; b; sleep 2; exit 1'; cat build.sh; } >b.sh && mv b.sh build.sh
git_q commit -qam "bomb: fork"
cd "$W/src/hog" || exit 1
{ echo '/usr/bin/python3 -c "b = bytearray(20 << 30)" || exit $?'; cat build.sh; } >h.sh && mv h.sh build.sh
git_q commit -qam "hog: allocate 20 GiB"
cd "$W" || exit 1
for t in bomb hog; do git clone -q --bare "$W/src/$t" "$W/$t.git"; done
config "$EVIL
  - {name: bomb, url: \"file://$W/bomb.git\", branch: master, contacts: [\"b@example.org\"]}
  - {name: hog, url: \"file://$W/hog.git\", branch: master, contacts: [\"h@example.org\"]}"
DAY=$((DAY + 1))
start=$(date +%s)
timeout 300 "$NEXTBOT" -q -c "$W/nextbot.yaml" run --date "2026-12-$DAY" --no-notify 2>"$TMP/night.err"
rc=$?
took=$(($(date +%s) - start))
check "limits: the night ran (exit $rc) within its deadline (${took}s)" test "$rc" = 0 -a "$took" -lt 300
NB --json flagged >"$TMP/flags.json"
check "the fork bomb is blamed, its process limit named" $PYTHON - "$TMP/flags.json" "$(git -C "$W/src/bomb" rev-parse HEAD)" "stopped: process limit 64 reached" bomb <<'EOF'
import json, sys
flags = [f for f in json.load(open(sys.argv[1]))["flags"] if f["tree"] == sys.argv[4]]
assert len(flags) == 1 and flags[0]["commit"] == sys.argv[2], flags
assert sys.argv[3] in flags[0]["error"], flags[0]["error"]
assert flags[0]["verdict"]["parent_passes"] >= 1, flags[0]
EOF
check "the allocation is blamed, its memory limit named" $PYTHON - "$TMP/flags.json" "$(git -C "$W/src/hog" rev-parse HEAD)" "killed: memory limit 256 MiB" hog <<'EOF'
import json, sys
flags = [f for f in json.load(open(sys.argv[1]))["flags"] if f["tree"] == sys.argv[4]]
assert len(flags) == 1 and flags[0]["commit"] == sys.argv[2], flags
assert sys.argv[3] in flags[0]["error"], flags[0]["error"]
EOF
check "the log of the hog's build names the limit" sh -c "grep -q '^nextbot: killed: memory limit 256 MiB' '$S'/runs/2026-12-$DAY/*.log"
snapshot >"$TMP/sentinel.after"
check "limits: no file outside the workdir changed" cmp -s "$TMP/sentinel.before" "$TMP/sentinel.after"

# 16: the same allocation in the base alone: the limit's, not the base's
config "  []"
cd "$W/src/mainline" || exit 1
{ echo '/usr/bin/python3 -c "b = bytearray(20 << 30)" || exit $?'; cat build.sh; } >h.sh && mv h.sh build.sh
git_q commit -qam "mainline: a build that needs more than the limit"
git push -q "$W/mainline.git" HEAD:master
cd "$W" || exit 1
DAY=$((DAY + 1))
timeout 300 "$NEXTBOT" -q -c "$W/nextbot.yaml" run --date "2026-12-$DAY" 2>"$TMP/night.err"
check "a limit in the base: the night runs" test $? = 0
check "a limit in the base is infrastructure, named" $PYTHON - "$S/runs/2026-12-$DAY/run.json" <<'EOF'
import json, sys
run = json.load(open(sys.argv[1]))
notes = " ".join(run.get("notes", []))
assert "infrastructure problem" in notes and "killed: memory limit 256 MiB" in notes, run
assert "base broken" not in notes, notes
EOF
check "no base-broken mail" sh -c "! grep -l 'base .* is broken' '$S'/outbox/* 2>/dev/null | grep -q ."
done_testing
