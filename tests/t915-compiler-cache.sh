#!/bin/sh
# The compiler cache (runner.cache, issue 28).  First `nextbot cc-serve` on its own,
# builds run through its shims as a project's own Makefile runs them: plain `make`
# with implicit rules goes through the cache and a second clean build is all hits
# (an absolute /usr/bin/gcc cannot be caught, and is not); what a hit gives is what
# a direct compile gives, byte for byte (objects with -g, messages, -MD files); a
# service killed, absent or silent leaves builds working; the store keeps to its
# size.  Then two nights with runner.cache: tree "evil" first brings a commit whose
# build forges requests for the compiles of the next two commits (the right key
# with the wrong bytes, the right bytes' hash with a lie about the text), writes
# where the store and the shims are, and asks once honestly (so that the next
# night's probe of that commit is a hit: the forgeries were aimed right); the
# next night a commit of the tree breaks the answer, and the search flags it and
# nothing else, the commit before it passing.  About 30 s (90 s on a loaded machine).
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || { echo "# skipped: needs root (compiles run as nobody)"; echo "ok 1 # skip"; exit 0; }
[ -x /usr/bin/bwrap ] && [ -x /usr/bin/gcc ] || { echo "# skipped: needs bwrap and gcc"; echo "ok 1 # skip"; exit 0; }
SHIM=$(dirname "$NEXTBOT")/nextbot-cc
[ -x "$SHIM" ] || { echo "# no $SHIM: make builds it beside nextbot"; exit 1; }

# ---- part 1: the service on its own ----
W=$TMP/w
mkdir -p "$W/tree"
SERVE_PID=
serve() { # serve STORE [MAX]: a service for $W, its shims in $W/run/bin
	# (the files go first: the child truncates them only once it runs, and the last
	# service's "ready" must not be read before that)
	rm -f "$TMP/serve.out" "$TMP/serve.err"
	"$NEXTBOT" cc-serve --run "$W/run" --jobs "$W/jobs" --store "$1" --shim "$SHIM" \
		--bwrap /usr/bin/bwrap --user nobody --hide "$W" --path /usr/bin:/bin \
		${2:+--max "$2"} >"$TMP/serve.out" 2>"$TMP/serve.err" &
	SERVE_PID=$!
	i=0
	while ! grep -q ready "$TMP/serve.out" 2>/dev/null && [ $i -lt 300 ]; do
		sleep 0.1; i=$((i + 1))
	done
	grep -q ready "$TMP/serve.out" && return
	sed 's/^/# serve: /' "$TMP/serve.out" "$TMP/serve.err"
	return 1
}
unserve() { [ -n "$SERVE_PID" ] && kill "$SERVE_PID" 2>/dev/null; wait "$SERVE_PID" 2>/dev/null; SERVE_PID=; }
at_exit unserve
check "the service starts" serve "$W/store"
check "it made the shims for the compilers on its PATH" test -L "$W/run/bin/cc" -a -L "$W/run/bin/gcc"

cd "$W/tree" || exit 1
cat >Makefile <<'EOF'
main: main.o util.o
main.o util.o: util.h
clean:
	rm -f main *.o *.d
EOF
printf 'int answer(void);\n' >util.h
printf '#include "util.h"\nint answer(void) { return 42; }\n' >util.c
cat >main.c <<'EOF'
#include <stdio.h>
#include "util.h"
int main(void)
{
	unsigned u = 1; int i = -1;
	if (u)
		printf("%d\n", answer());
		return u < i;
}
EOF
CACHED="env PATH=$W/run/bin:/usr/bin:/bin NEXTBOT_CC_TRACE=$TMP/trace"
# (c) plain make: implicit rules, CC=cc, found on PATH
$CACHED make -s >/dev/null 2>&1
check "a first build compiles both through the service" \
	test "$(grep -c '^compiled' "$TMP/trace")" = 2
check "and links uncached" grep -q '^uncached .*: more than one source' "$TMP/trace"
: >"$TMP/trace"
make -s clean && $CACHED make -s >/dev/null 2>&1
check "a second clean build is all hits" test "$(grep -c '^hit' "$TMP/trace")" = 2
check "the program works" test "$(./main)" = 42
: >"$TMP/trace"
make -s clean && $CACHED make -s CC=/usr/bin/gcc >/dev/null 2>&1
check "an absolute /usr/bin/gcc does not go through the cache" test ! -s "$TMP/trace"

# (b) a hit is a direct compile, byte for byte: the object (with -g), the messages,
# the -MD file (-Wmisleading-indentation, which a compile of preprocessed text loses)
FLAGS="-g -O2 -Wall -MD"
for run in miss hit; do
	make -s clean
	$CACHED make -s CFLAGS="$FLAGS" main.o util.o >/dev/null 2>"$TMP/cached.err"
done
mkdir -p "$TMP/cached" && cp main.o util.o main.d util.d "$TMP/cached/"
make -s clean && make -s CFLAGS="$FLAGS" main.o util.o >/dev/null 2>"$TMP/direct.err"
check "the hit was a hit" test "$(grep -c '^hit' "$TMP/trace")" = 2
for f in main.o util.o main.d util.d; do
	check "$f from the cache is the direct compile's" cmp -s "$f" "$TMP/cached/$f"
done
check "the compiler's messages are the direct compile's" cmp -s "$TMP/cached.err" "$TMP/direct.err"
check "(misleading indentation among them)" grep -q misleading-indentation "$TMP/direct.err"
if [ -x /usr/bin/clang ]; then
	for run in miss hit; do
		make -s clean
		$CACHED make -s CC=clang CFLAGS="$FLAGS" main.o util.o >/dev/null 2>"$TMP/cached.err"
	done
	cp main.o util.o "$TMP/cached/"
	make -s clean && make -s CC=clang CFLAGS="$FLAGS" main.o util.o >/dev/null 2>"$TMP/direct.err"
	check "clang: the hit was a hit" test "$(grep -c '^hit' "$TMP/trace")" = 4
	check "clang: the objects and messages are the direct compile's" \
		sh -c "cmp -s main.o '$TMP/cached/main.o' && cmp -s util.o '$TMP/cached/util.o' &&
		       cmp -s '$TMP/cached.err' '$TMP/direct.err'"
fi

# a compile that fails is never answered from the cache: the box's own compiler says why
printf 'int broken(void) { return }\n' >bad.c
$CACHED cc -c bad.c -o bad.o 2>"$TMP/bad.err"
check "a failing compile fails with the compiler's own error" grep -q 'error: expected' "$TMP/bad.err"
check "and is not stored" sh -c "grep 'bad.c' '$TMP/trace' | grep -q '^uncached'"

# (f) direct mode: a hit the service's manifest vouches for runs no compiler in the
# box (the trace says "direct" only on that path); whatever changes what the
# compiler would read (a header's bytes, a header found first in an earlier -I
# folder or beside the source, a -isystem header) is compiled again, and the object
# is always a plain compile's
mkdir -p "$W/tree/d/inc1" "$W/tree/d/inc2" "$W/tree/d/sys" && cd "$W/tree/d" || exit 1
printf '#define V 1\n' >inc2/v.h
printf '#define S 10\n' >sys/s.h
printf '#include "v.h"\n#include <s.h>\n#include <stdio.h>\nint v(void) { return V + S; }\n' >d.c
DOPTS="-O2 -Iinc1 -Iinc2 -isystem sys"
# dcc NAME: compiles NAME.c through the cache and plainly; 0 when the objects are the same
dcc() {
	$CACHED gcc $DOPTS -c "$1.c" -o "$1.o" && /usr/bin/gcc $DOPTS -c "$1.c" -o "$1.ref.o" &&
		cmp -s "$1.o" "$1.ref.o"
}
last() { tail -n 1 "$TMP/trace"; }
: >"$TMP/trace"
check "direct: a first compile is compiled by the service" dcc d
check "(no manifest yet)" grep -q '^direct-miss d.c: no manifest' "$TMP/trace"
: >"$TMP/trace"
check "direct: the same compile again gives the same object" dcc d
check "(a direct hit: no preprocessing in the box)" test "$(cat "$TMP/trace")" = "hit d.c: direct"
: >"$TMP/trace"
printf '#define V 2\n' >inc2/v.h
check "direct: a header edited: the object of the new header" dcc d
check "(not a direct hit: the header is not the same)" \
	sh -c "grep -q '^direct-miss d.c: a file it lists' '$TMP/trace' && grep -q '^compiled d.c' '$TMP/trace'"
: >"$TMP/trace"
printf '#define V 3\n' >inc1/v.h
check "direct: a header put in an earlier -I folder: the object of it" dcc d
check "(not a direct hit: it would be found first)" \
	sh -c "grep -q '^direct-miss d.c: a header it does not list' '$TMP/trace' && grep -q '^compiled d.c' '$TMP/trace'"
: >"$TMP/trace"
printf '#define V 4\n' >v.h
check "direct: a header put beside the source: the object of it" dcc d
check "(not a direct hit)" \
	sh -c "grep -q '^direct-miss d.c: a header it does not list' '$TMP/trace' && grep -q '^compiled d.c' '$TMP/trace'"
: >"$TMP/trace"
check "direct: and again: the object of that header" dcc d
check "(a direct hit)" test "$(last)" = "hit d.c: direct"
: >"$TMP/trace"
printf '#define S 11\n' >sys/s.h
check "direct: a -isystem header edited: the object of the new one" dcc d
check "(not a direct hit)" \
	sh -c "grep -q '^direct-miss d.c' '$TMP/trace' && grep -q '^compiled d.c' '$TMP/trace'"
# a header that probes for a file's existence: never direct, a new file heeded
printf '#if __has_include("w.h")\n#define W 1\n#else\n#define W 0\n#endif\n' >inc2/h.h
printf '#include "h.h"\nint w(void) { return W; }\n' >h.c
: >"$TMP/trace"
dcc h && dcc h
check "direct: a header with __has_include is never a direct hit" \
	sh -c "! grep -q 'direct\$' '$TMP/trace' && test \"\$(grep -c '^hit h.c\$' '$TMP/trace')\" = 1"
printf '\n' >inc1/w.h
check "(and the file it probes for, once there, counts)" dcc h
# the probe hidden from a reading of the bytes: behind a line splice, made by a paste
printf '#if __has_\\\ninclude("w2.h")\n#define W 1\n#else\n#define W 0\n#endif\n' >inc2/sp.h
printf '#define CAT(a, b) a##b\n#if CAT(__has_, include)("w3.h")\n#define W3 1\n#else\n#define W3 0\n#endif\n' >inc2/pa.h
printf '#include "sp.h"\n#include "pa.h"\nint w(void) { return W + W3; }\n' >s.c
: >"$TMP/trace"
dcc s && dcc s
check "direct: __has_include behind a line splice or a paste is never a direct hit" \
	sh -c "! grep -q 'direct\$' '$TMP/trace' && test \"\$(grep -c '^hit s.c\$' '$TMP/trace')\" = 1"
printf '\n' >inc1/w2.h
check "(the file the splice probes for, once there, counts)" dcc s
printf '\n' >inc1/w3.h
check "(the file the paste probes for, once there, counts)" dcc s
# dependency files: the usual way (the -E pass writes them)
: >"$TMP/trace"
$CACHED gcc $DOPTS -MD -c d.c -o d.o && $CACHED gcc $DOPTS -MD -c d.c -o d.o
check "direct: never with -MD" sh -c "! grep -q direct '$TMP/trace' && grep -q '^hit d.c\$' '$TMP/trace'"
check "(and the -MD file is written)" grep -q 'sys/s.h' d.d
cd "$W/tree" || exit 1
unserve
check "the service counted its direct hits and misses (stats: requests hits compiled failed refused bytes direct-hits direct-misses)" \
	awk '/^stats/ { exit !($8 >= 3 && $9 >= 5) }' "$TMP/serve.out"
check "the service starts again" serve "$W/store"

# (d) the service dies, is gone, or stops answering: builds work, nothing hangs
kill -9 "$SERVE_PID"; wait "$SERVE_PID" 2>/dev/null; SERVE_PID=
make -s clean; : >"$TMP/trace"
start=$(date +%s)
check "a build with the service killed works" $CACHED make -s
check "(uncached)" grep -q 'no service' "$TMP/trace"
rm -rf "$W/run"
make -s clean
check "a build with the service's folder gone works" $CACHED make -s
check "the service starts again over the old store" serve "$W/store"
kill -STOP "$SERVE_PID"
make -s clean; : >"$TMP/trace"
check "a build with the service stopped works" $CACHED NEXTBOT_CC_SILENCE=1 make -s
check "(the shim gave up on the silent service)" grep -q 'went silent' "$TMP/trace"
check "nothing hung (${start}: $(($(date +%s) - start)) s)" test $(($(date +%s) - start)) -lt 30
kill -CONT "$SERVE_PID"
unserve

# (e) the store keeps to its size: 12 objects of about 8 KiB, a store of 40 KiB
check "a service with a 40 KiB store starts" serve "$W/small" 40K
mkdir -p "$W/tree/many" && cd "$W/tree/many" || exit 1
for i in $(seq 1 12); do
	printf 'char big%d[8000] = { %d };\n' "$i" "$i" >"f$i.c"
done
ok_cap=1
for i in $(seq 1 12); do
	$CACHED cc -c "f$i.c" -o "f$i.o" || ok_cap=0
	size=$(find "$W/small/v1" -type f -printf '%s\n' | awk '{s += $1} END {print s + 0}')
	[ "$size" -le 40960 ] || { ok_cap=0; echo "# store at $size bytes after f$i"; }
done
check "the store never held more than 40 KiB" test "$ok_cap" = 1
: >"$TMP/trace"
$CACHED cc -c f12.c -o f12.o
$CACHED cc -c f1.c -o f1.o
check "the newest entry is kept" grep -q '^hit f12.c' "$TMP/trace"
check "the oldest went first" grep -q '^compiled f1.c' "$TMP/trace"
unserve
cd "$TMP" || exit 1

# ---- part 2: two nights, a build that tries to poison the cache ----
N=$TMP/world
mkdir -p "$N/src"
cd "$N/src" || exit 1
git_q init -q mainline && cd mainline || exit 1
cp "$W/tree/Makefile" "$W/tree/util.h" "$W/tree/util.c" .
printf '#include <stdio.h>\n#include "util.h"\nint main(void) { printf("%%d\\n", answer()); return answer() != 42; }\n' >main.c
# the build: make, the program's answer, and what the shims said
cat >build.sh <<'EOF'
echo "util.c: $(grep return util.c)"
make -s && ./main; rc=$?
sed 's/^/cc: /' /tmp/cc-trace 2>/dev/null
exit $rc
EOF
git_q add -A && git_q commit -qm "initial" && cd ..
git_q clone -q mainline evil
cd evil || exit 1
B_UTIL='#include "util.h"\nint answer(void) { return 6 * 7; }\n'
C_UTIL='#include "util.h"\nint answer(void) { return 41; }\n'
# A: the attack, run by its build after the real one
cat >attack.py <<'EOF'
import hashlib, os, socket, struct, subprocess, tempfile
SOCK = "/run/nextbot-cc/sock"
B = b'#include "util.h"\nint answer(void) { return 6 * 7; }\n'
C = b'#include "util.h"\nint answer(void) { return 41; }\n'
C_FIXED = b'#include "util.h"\nint answer(void) { return 42; }\n'
H = b"int answer(void);\n"

def field(tag, s):
    b = s.encode()
    return tag.encode() + struct.pack(">I", len(b)) + b

def request(cc, cwd, text, files):
    h = field("P", cc) + field("D", cwd) + field("H", text)
    h += field("A", "util.c")   # make's implicit rule: cc -c -o util.o util.c
    for k in ("LANG", "LC_ALL", "LC_MESSAGES", "LC_CTYPE"):
        if k in os.environ:
            h += field("E", k + "=" + os.environ[k])
    for digest, path in files:
        h += field("F", digest + " " + path)
    return b"NBCC2\0" + struct.pack(">I", len(h)) + h

def ask(req, contents):
    s = socket.socket(socket.AF_UNIX)
    s.connect(SOCK)
    s.sendall(req)
    def tag():
        while True:
            t = s.recv(1)
            if t != b"K":
                return t.decode() or "-"
    t = tag()
    if t == "N":
        for c in contents:
            s.sendall(struct.pack(">Q", len(c)) + c)
        t = tag()
    s.close()
    return t

def text_of(util):  # what the box's -E -fdirectives-only pass makes of util.c
    d = tempfile.mkdtemp()
    open(d + "/util.c", "wb").write(util)
    open(d + "/util.h", "wb").write(H)
    t = subprocess.run([CC, "util.c", "-E", "-fdirectives-only"], cwd=d,
                       capture_output=True, check=True).stdout
    return hashlib.sha256(t).hexdigest()

def sha(b):
    return hashlib.sha256(b).hexdigest()

# the compiler the shim finds after itself on PATH
CC = next(p + "/cc" for p in os.environ["PATH"].split(":")
          if p != "/run/nextbot-cc/bin" and os.access(p + "/cc", os.X_OK))
top = os.getcwd().rsplit("/", 1)[0].rsplit("/", 1)[0]   # .../workers
for w in ("w0", "w1"):
    cwd = "%s/%s/tree" % (top, w)
    files = lambda util: [(sha(util), cwd + "/util.c"), (sha(H), cwd + "/util.h")]
    # B's key, C's bytes; C's key, a fixed C's bytes; B's files named, C's text claimed
    print("attack B-bogus %s: %s" % (w, ask(request(CC, cwd, text_of(B), files(B)), [C, H])))
    print("attack C-bogus %s: %s" % (w, ask(request(CC, cwd, text_of(C), files(C)), [C_FIXED, H])))
    print("attack lie %s: %s" % (w, ask(request(CC, cwd, text_of(C), files(B)), [C, H])))
print("control B: %s" % ask(request(CC, top + "/w0/tree", text_of(B),
      [(sha(B), top + "/w0/tree/util.c"), (sha(H), top + "/w0/tree/util.h")]), [B, H]))
for what, path in (("store", top.rsplit("/", 1)[0] + "/ccache/poison"),
                   ("shims", "/run/nextbot-cc/bin/cc"), ("socket", "/run/nextbot-cc/sock2")):
    try:
        open(path, "wb").write(b"poison")
        print("write %s: done" % what)
    except OSError as e:
        print("write %s: refused (%s)" % (what, e.strerror))
s = socket.socket(socket.AF_UNIX)
s.connect(SOCK)
s.sendall(b"NBCC2\0\xff\xff\xff\xff garbage")
print("garbage: %s" % (s.recv(1).decode() or "-"))
EOF
printf 'make -s && ./main; rc=$?\n/usr/bin/python3 attack.py\nsed "s/^/cc: /" /tmp/cc-trace\nexit $rc\n' >build.sh
git_q add -A && git_q commit -qm "evil: harmless looking"
cd .. || exit 1
for r in mainline evil; do git clone -q --bare "$r" "$N/$r.git"; done
cat >"$N/nextbot.yaml" <<EOF
workdir: state
base: {name: origin, url: "file://$N/mainline.git", branch: master}
trees:
  - {name: evil, url: "file://$N/evil.git", branch: master, contacts: ["evil@example.org"]}
build:
  - {name: build, command: "sh build.sh", timeout: 120, env: {NEXTBOT_CC_TRACE: /tmp/cc-trace}}
bisect: {confirm: 1, jobs: 1}
runner: {cache: {kind: ccache}}
notify: {from: "nextbot <nextbot@example.org>", list: "list@example.org"}
EOF
NB() { "$NEXTBOT" -c "$N/nextbot.yaml" "$@"; }
NB run --date 2026-12-11 --no-notify >"$TMP/night1.out" 2>"$TMP/night1.err"
check "night 1 ran" test $? = 0
# (the build runs twice: the second time B's key is in the store, and a forgery
# naming it gets B's honest entry before any of its bytes are read)
L1=$(cat "$N"/state/runs/2026-12-11/*.log 2>/dev/null)
for w in w0 w1; do
	for a in B-bogus C-bogus lie; do
		check "the forged request ($a, $w) was refused" sh -c "printf '%s' \"\$1\" | grep -q 'attack $a $w: X'" - "$L1"
	done
done
check "the honest request for B's compile was taken (the forgeries aimed right)" \
	sh -c "printf '%s' \"\$1\" | grep -q 'control B: O'" - "$L1"
for what in store shims socket; do
	check "the build could not write the $what" sh -c "printf '%s' \"\$1\" | grep -q 'write $what: refused'" - "$L1"
done
check "garbage was answered with a refusal" sh -c "printf '%s' \"\$1\" | grep -q 'garbage: [X-]'" - "$L1"
check "the night's builds went through the cache" sh -c "printf '%s' \"\$1\" | grep -q '^cc: compiled main.c'" - "$L1"
check "the night logged the cache's counts" grep -q 'compiler cache: .* refused' "$TMP/night1.err"
check "the old spelling (kind: ccache) works, with a warning that says what the cache is" \
	grep -q "runner.cache.kind: the cache is nextbot's own" "$TMP/night1.err"
check "nothing of the store is left in a box's sight" test ! -e "$N/state/workers/.cc"

cd "$N/src/evil" || exit 1
git_q rm -q attack.py
cp "$N/src/mainline/build.sh" build.sh
printf "$B_UTIL" >util.c
git_q commit -qam "evil: the answer as a product"
B=$(git rev-parse HEAD)
printf "$C_UTIL" >util.c
git_q commit -qam "evil: the answer is 41"
C=$(git rev-parse HEAD)
git push -q "$N/evil.git" HEAD:master
NB run --date 2026-12-12 --no-notify >"$TMP/night2.out" 2>"$TMP/night2.err"
check "night 2 ran" test $? = 0
NB --json flagged >"$TMP/flags.json"
check "one flag, on the commit that broke the answer" $PYTHON -c "
import json, sys
f = json.load(open('$TMP/flags.json'))['flags']
sys.exit(not (len(f) == 1 and f[0]['commit'] == '$C'))"
# the probes' logs, by the util.c each built
grep -l 'return 6 \* 7' "$N"/state/runs/2026-12-12/*.log >"$TMP/b.logs"
grep -l 'return 41' "$N"/state/runs/2026-12-12/*.log >"$TMP/c.logs"
check "the commit before it was probed" test -s "$TMP/b.logs"
check "and passed, its util.c a hit every time (the honest entry of night 1)" \
	sh -c "! grep -h '^cc: compiled util.c' \$(cat '$TMP/b.logs') &&
	       grep -h '^cc: hit util.c' \$(cat '$TMP/b.logs') && grep -hx 42 \$(cat '$TMP/b.logs')" >/dev/null
check "the culprit's probes compiled its util.c honestly (41)" \
	sh -c "grep -hx 41 \$(cat '$TMP/c.logs')" >/dev/null
done_testing
