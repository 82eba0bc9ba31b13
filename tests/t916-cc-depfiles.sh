#!/bin/sh
# The compiler cache's dependency files (issue 37): for every way of asking for one
# (-MD, -MMD, -MF, -MT, -MQ, -MP, -Wp,-MD,F, -Wp,-MMD,F as kbuild's CC and HOSTCC
# do), the file a miss and a hit write is the one gcc writes without the cache,
# byte for byte, at the path gcc names, relative to the compile's folder; the
# objects too.  Real gcc, `nextbot cc-serve` on its own (as t915).  About 20 s.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || { echo "# skipped: needs root (compiles run as nobody)"; echo "ok 1 # skip"; exit 0; }
[ -x /usr/bin/bwrap ] && [ -x /usr/bin/gcc ] || { echo "# skipped: needs bwrap and gcc"; echo "ok 1 # skip"; exit 0; }
SHIM=$(dirname "$NEXTBOT")/nextbot-cc
[ -x "$SHIM" ] || { echo "# no $SHIM: make builds it beside nextbot"; exit 1; }

W=$TMP/w
mkdir -p "$W/tree"
SERVE_PID=
"$NEXTBOT" cc-serve --run "$W/run" --jobs "$W/jobs" --store "$W/store" --shim "$SHIM" \
	--bwrap /usr/bin/bwrap --user nobody --hide "$W" --path /usr/bin:/bin \
	>"$TMP/serve.out" 2>"$TMP/serve.err" &
SERVE_PID=$!
unserve() { [ -n "$SERVE_PID" ] && kill "$SERVE_PID" 2>/dev/null; wait "$SERVE_PID" 2>/dev/null; SERVE_PID=; }
at_exit unserve
i=0
while ! grep -q ready "$TMP/serve.out" 2>/dev/null && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
check "the service starts" grep -q ready "$TMP/serve.out"

T=$W/tree
mkdir -p "$T/sub" "$T/inc" "$T/obj" "$T/deps"
printf '#define H 3\n' >"$T/inc/h.h"
printf '#define PRE 1\n' >"$T/inc/pre.h"
printf '#include "h.h"\n#include <stdio.h>\n#ifndef PRE\n#define PRE 0\n#endif\nint a(void) { return H + PRE; }\n' >"$T/sub/a.c"
CACHED="env PATH=$W/run/bin:/usr/bin:/bin NEXTBOT_CC_TRACE=$TMP/trace"

# dep NAME DIR FILES -- ARGS: the compile of ARGS in $T/DIR, plainly, then through the
# cache twice (a miss, a hit; -DCASE=NAME makes the key its own); FILES (from DIR, space-separated: the dependency file
# first) must be the plain compile's each time
dep() {
	name=$1 dir=$T/$2 files=$3; shift 4
	set -- "-DCASE=$name" "$@"   # a key of its own: its first compile is a miss
	bad=
	cd "$dir" || return 1
	rm -f $files
	/usr/bin/gcc "$@" || { echo "# $name: the plain compile failed"; return 1; }
	for f in $files; do cp "$f" "$f.ref" || return 1; done
	for run in miss hit; do
		rm -f $files
		: >"$TMP/trace"
		$CACHED gcc "$@" || bad="$bad $run:failed"
		want=compiled; [ $run = hit ] && want=hit
		grep -q "^$want " "$TMP/trace" || bad="$bad $run:$(cat "$TMP/trace")"
		for f in $files; do
			cmp -s "$f" "$f.ref" || { bad="$bad $run:$f"; diff "$f.ref" "$f" | head -n 6 | sed 's/^/#   /'; }
		done
	done
	rm -f $files
	for f in $files; do rm -f "$f.ref"; done
	cd "$TMP" || return 1
	[ -z "$bad" ] || { echo "# $name:$bad"; return 1; }
}

C="-O2 -Iinc -c sub/a.c"
check "-MD: obj/a.d, named after -o" dep md . "obj/a.d obj/a.o" -- -MD $C -o obj/a.o
check "-MMD: obj/a.d without system headers" dep mmd . "obj/a.d obj/a.o" -- -MMD $C -o obj/a.o
check "-MD -MF FILE" dep mf . "deps/a.dep obj/a.o" -- -MD -MF deps/a.dep $C -o obj/a.o
check "-MD -MFFILE (joined)" dep mfj . "deps/j.dep obj/a.o" -- -MD -MFdeps/j.dep $C -o obj/a.o
check "-MMD -MT -MQ: targets as given" \
	dep mt . "deps/t.dep obj/a.o" -- -MMD -MF deps/t.dep -MT 'tgt one' -MQ 'q$x' $C -o obj/a.o
check "-MD -MP: phony targets" dep mp . "obj/a.d obj/a.o" -- -MD -MP $C -o obj/a.o
check "-MD without -o: a.d and a.o here" dep noo . "a.d a.o" -- -MD $C
check "-MD -o without a suffix" dep nosuf . "obj/a.d obj/a" -- -MD $C -o obj/a
check "-Wp,-MD,FILE" dep wpmd . "deps/.a.o.d obj/a.o" -- -Wp,-MD,deps/.a.o.d $C -o obj/a.o
check "-Wp,-MMD,FILE (kbuild's HOSTCC)" \
	dep wpmmd . "sub/.a.o.d sub/a.o" -- -Wp,-MMD,sub/.a.o.d -Wall -O2 -Iinc -c -o sub/a.o sub/a.c
check "kbuild's CC: -Wp,-MMD,FILE, -nostdinc, -include, -fmacro-prefix-map" \
	dep kbuild . "sub/.a.o.d sub/a.o" -- -Wp,-MMD,sub/.a.o.d -nostdinc -isystem \
	"$(gcc -print-file-name=include)" -I/usr/include -I/usr/include/x86_64-linux-gnu -Iinc \
	-include inc/pre.h -fmacro-prefix-map=./= -DKBUILD_BASENAME='"a"' -O2 -c -o sub/a.o sub/a.c
check "from a folder below: paths relative to it" \
	dep below sub "../obj/a.d ../obj/a.o" -- -MD -O2 -I../inc -c a.c -o ../obj/a.o
check "from a folder below, -Wp,-MMD with ../" \
	dep belowwp sub "../deps/.b.d ../obj/a.o" -- -Wp,-MMD,../deps/.b.d -O2 -I../inc -c a.c -o ../obj/a.o
unserve
done_testing
