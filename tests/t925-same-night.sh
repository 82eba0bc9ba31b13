#!/bin/sh
# The same night gives the same verdict.  A small C project whose Makefile misses
# every header dependency (objects depend on their .c file only, so a kept tree
# keeps objects built against an older header) and four trees with merges in
# them: mm changes a constant in a header (a test break that a kept tree's stale
# object hides), net breaks the build, vfs renames a function on a side branch it
# merges, sched adds a caller of the old name (a semantic conflict with vfs).
# The night is run in three fresh workdirs (no verdict cache, no known facts), all
# at the same time (the machine loaded by real nights rather than by a spinning hog,
# whose CPU was spent for nothing): each gives exactly the planted flags (kind,
# culprit, partner), and all three the same.  Three loaded runs prove it as five
# did (two more, one after another, cost 40% of the test's CPU and half its wall
# time and were less loaded, not more).  RUNS=N to change the count (beyond three,
# the rest run one after another);
# KEPT=1: the entries set `incremental: true` (probes in kept trees, contradictions
# searched again clean): the same flags are wanted.
. "$(dirname "$0")/lib.sh"
RUNS=${RUNS:-3}
R=$TMP/remotes
DATE=2026-12-05

# commit FILE CONTENT SUBJECT: writes, adds and commits in the current repository
# noise N PREFIX: N harmless patches (comments in their own files)
noise() {
	i=1
	while [ "$i" -le "$1" ]; do
		commit_file "doc/$2-$i.txt" "note $i\n" "$2: document step $i"
		i=$((i + 1))
	done
}

mkdir -p "$R" "$TMP/src"
cd "$TMP/src" || exit 1
git_q init -q
commit_file Makefile 'CFLAGS ?= -O0\nOBJS := $(sort $(patsubst %.c,%.o,$(wildcard lib/*.c))) main.o\n\nprog: $(OBJS)\n\t$(CC) -o $@ $(OBJS)\n\n%.o: %.c\n\t$(CC) $(CFLAGS) -Wall -Werror=implicit-function-declaration -Iinclude -c -o $@ $<\n\ntest: prog\n\t./prog --selftest\n\n.PHONY: test\n' "build: a Makefile (no header dependencies)"
commit_file include/api.h '#define LIMIT 10\nint a_value(void);\nint b_value(void);\n' "api: the interface"
commit_file lib/a.c '#include "api.h"\nint a_value(void)\n{\n\treturn LIMIT * 2;\n}\n' "lib: a_value()"
commit_file lib/b.c '#include "api.h"\nint b_value(void)\n{\n\treturn 5;\n}\n' "lib: b_value()"
commit_file main.c '#include <stdio.h>\n#include <string.h>\n#include "api.h"\n\nint main(int argc, char **argv)\n{\n\tif (argc > 1 && !strcmp(argv[1], "--selftest")) {\n\t\tif (a_value() != 20) {\n\t\t\tprintf("main.c:10: FAIL: a_value() is %d, want 20\\n", a_value());\n\t\t\treturn 1;\n\t\t}\n\t\tprintf("selftest: ok\\n");\n\t\treturn 0;\n\t}\n\tprintf("%d\\n", a_value() + b_value());\n\treturn 0;\n}\n' "main: the program and its self-test"
git_q clone -q --bare . "$R/mainline.git"
base=$(git rev-parse HEAD)

# tree BRANCH: a branch of the project from the base, pushed to its own remote
tree() {
	git_q checkout -q -B "$1" "$base"
}
push() {
	git_q clone -q --bare --branch "$1" . "$R/$1.git"
}

tree mm
noise 2 mm
commit_file include/api.h '#define LIMIT 11\nint a_value(void);\nint b_value(void);\n' "api: raise LIMIT to 11"
noise 2 mm-more
push mm

tree net
noise 1 net
git_q checkout -q -b net-side
noise 2 net-side
git_q checkout -q net
git_q merge -q --no-ff -m "Merge branch 'net-side' into net" net-side
commit_file lib/b.c '#include "api.h"\nint b_value(void)\n{\n\treturn b_undefined_thing;\n}\n' "net: read b_value from the device"
noise 2 net-more
push net

tree vfs
noise 1 vfs
git_q checkout -q -b vfs-rename
commit_file include/api.h '#define LIMIT 10\nint a_value(void);\nint b_count(void);\n' "api: rename b_value() to b_count()"
sed 's/b_value/b_count/' lib/b.c >lib/b.c.new && mv lib/b.c.new lib/b.c
sed 's/b_value/b_count/' main.c >main.c.new && mv main.c.new main.c
git_q commit -q -a --amend --no-edit
noise 1 vfs-rename
git_q checkout -q vfs
git_q merge -q --no-ff -m "Merge branch 'vfs-rename' into vfs" vfs-rename
noise 2 vfs-more
push vfs

tree sched
noise 2 sched
commit_file lib/c.c '#include "api.h"\nint c_value(void)\n{\n\treturn b_value() + 1;\n}\n' "sched: c_value() on top of b_value()"
noise 2 sched-more
push sched
cd "$TMP" || exit 1

inc=false
[ -n "${KEPT:-}" ] && inc=true
cat >"$TMP/base.yaml" <<EOF
base: {name: origin, url: "$R/mainline.git", branch: master}
trees:
  - {name: mm, url: "$R/mm.git", branch: mm, contacts: ["MM <mm@example.org>"]}
  - {name: net, url: "$R/net.git", branch: net, contacts: ["Net <net@example.org>"]}
  - {name: vfs, url: "$R/vfs.git", branch: vfs, contacts: ["VFS <vfs@example.org>"]}
  - {name: sched, url: "$R/sched.git", branch: sched, contacts: ["Sched <sched@example.org>"]}
build:
  - {name: build, command: make, timeout: 120, incremental: $inc}
test:
  - {name: test, command: make test, timeout: 120, incremental: $inc}
bisect: {confirm: 2}
notify: {from: "nextbot <nextbot@example.org>", list: "next@example.org"}
EOF

# night K: the night in a fresh workdir of its own; its flags to $TMP/flags-K
night() {
	mkdir -p "$TMP/run-$1"
	{ echo "workdir: state"; cat "$TMP/base.yaml"; } >"$TMP/run-$1/nextbot.yaml"
	"$NEXTBOT" -q -c "$TMP/run-$1/nextbot.yaml" run --date "$DATE" --no-notify \
		>"$TMP/run-$1/out" 2>&1
	echo $? >"$TMP/run-$1/rc"
	"$NEXTBOT" -c "$TMP/run-$1/nextbot.yaml" --json flagged >"$TMP/flags-$1.json"
}

start=$(date +%s)
# three at once, more than the 2 cores make check runs on: each is loaded by the others
k=1
while [ "$k" -le "$RUNS" ] && [ "$k" -le 3 ]; do
	night "$k" &
	k=$((k + 1))
done
wait
while [ "$k" -le "$RUNS" ]; do
	night "$k"
	k=$((k + 1))
done
echo "# $RUNS nights took $(($(date +%s) - start)) s"

k=1
while [ "$k" -le "$RUNS" ]; do
	check "run $k ends with exit 0" test "$(cat "$TMP/run-$k/rc")" = 0
	check "run $k flags exactly the planted breakages" $PYTHON - "$TMP/flags-$k.json" <<'EOF'
import json, sys
flags = json.load(open(sys.argv[1]))["flags"]
got = sorted((f["kind"], f["subject"], (f["partner"] or {}).get("subject")) for f in flags)
want = sorted([
    ("test-failure", "api: raise LIMIT to 11", None),
    ("build-failure", "net: read b_value from the device", None),
    ("build-failure", "sched: c_value() on top of b_value()",
     "api: rename b_value() to b_count()"),
])
for g in got:
    print("#   flagged:", g)
if got != want:
    print("# wanted:", want)
sys.exit(got != want)
EOF
	k=$((k + 1))
done
check "the $RUNS runs give the same flags (ids, culprits, errors)" $PYTHON - "$TMP" "$RUNS" <<'EOF'
import json, sys
tmp, runs = sys.argv[1], int(sys.argv[2])
def key(path):
    return sorted((f["id"], f["commit"], f["partner"] and f["partner"]["commit"], f["error"])
                  for f in json.load(open(path))["flags"])
first = key("%s/flags-1.json" % tmp)
sys.exit(any(key("%s/flags-%d.json" % (tmp, k)) != first for k in range(2, runs + 1)))
EOF
done_testing
