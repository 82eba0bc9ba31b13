#!/bin/sh
# A build matrix on a small hand-made world (real git remotes, real make): a patch
# whose #ifndef path breaks two of three ARCH cells is one flag listing both cells,
# reported once; the same nights with runner.max_jobs 1 and 3 end alike; a cell that
# starts failing later for the same culprit joins the flag without a new report.
# About a minute (two workdirs side by side, two nights each).
. "$(dirname "$0")/lib.sh"
MAILS=$(cd "$(dirname "$0")" && pwd)/mails.py

W=$TMP/world
mkdir -p "$W/src"
cd "$W/src" || exit 1

git_q init -q mainline && cd mainline || exit 1
cat >Makefile <<'EOF'
ARCH ?= x86_64
SRCS := $(wildcard */*.c) main.c
prog-$(ARCH): $(SRCS)
	$(CC) -Wall -DARCH_$(ARCH) -o $@ $(SRCS)
test: prog-$(ARCH)
	./prog-$(ARCH)
.PHONY: test
EOF
mkdir lib
printf 'int add(int a, int b) { return a + b; }\n' >lib/add.c
printf 'int add(int, int);\nint main(void) { return add(1, 2) == 3 ? 0 : 1; }\n' >main.c
git_q add -A && git_q commit -qm "initial" && cd ..

patch() {
	mkdir -p "$(dirname "$1")"
	printf '%s\n' "$2" >"$1"
	git add -A
	id=$(printf '%s' "$3" | tr -c 'a-z0-9' '-')
	git -c user.name="Zoë Ångström" -c user.email=zoe@example.org commit -qm "$3

Body of $3.

Signed-off-by: Zoë Ångström <zoe@example.org>
Link: https://lore.kernel.org/r/20261201-$id@example.org"
}

git_q clone -q mainline net && cd net
patch net/a.c 'int net_a(void) { return 1; }' "net: add net_a"
# only x86_64 has the fast path; every other ARCH compiles the broken one
patch net/b.c '#ifdef ARCH_x86_64
int net_b(void) { return 2; }
#else
int net_b(void) { return 2 }
#endif' "net: add net_b with an x86 fast path"
patch net/c.c 'int net_c(void) { return 3; }' "net: add net_c"
cd ..
git_q clone -q mainline vfs && cd vfs
patch fs/x.c 'int fs_x(void) { return 4; }' "fs: add fs_x"
cd ..
for r in mainline net vfs; do git clone -q --bare $r "$W/$r.git"; done
BAD=$(git -C net rev-parse HEAD~1)

# config W JOBS ARCHES: a workdir per max_jobs, the same remotes
config() {
	cat >"$W/$1.yaml" <<EOF
workdir: state-$1
base: {name: origin, url: "file://$W/mainline.git", branch: master}
trees:
  - {name: net, url: "file://$W/net.git", branch: master, contacts: ["Net Maintainer <net@example.org>"]}
  - {name: vfs, url: "file://$W/vfs.git", branch: master, contacts: ["vfs@example.org"]}
build:
  - {name: build, command: 'make ARCH=\$ARCH', timeout: 60, matrix: {ARCH: [$3]}}
test:
  - {name: unit, command: make test, timeout: 60}
runner: {max_jobs: $2}
bisect: {confirm: 1, jobs: 1}
notify: {from: "nextbot <nextbot@example.org>", list: "list@example.org"}
EOF
}
config j1 1 "x86_64, arm64, riscv"
config j3 3 "x86_64, arm64, riscv"

expect_exit 0 "check-config prints the cells" "$NEXTBOT" -c "$W/j3.yaml" check-config
check "three cells, each with the entries that run in it" sh -c "
	grep -q '^cells: 3, each in its own worker, up to 3 at once' '$TMP/out' &&
	grep -q '^  ARCH=arm64: build\[ARCH=arm64\] unit\[ARCH=arm64\]\$' '$TMP/out'"

# nights J... DATE: the night in each workdir, side by side (they share nothing but
# the remotes they read); its exit code, output and errors kept for replay J
nights() {
	date=$1; shift
	for j in "$@"; do
		{ "$NEXTBOT" -q -c "$W/$j.yaml" run --date "$date" >"$TMP/$j.night.out" \
			2>"$TMP/$j.night.err"; echo $? >"$TMP/$j.night.rc"; } &
	done
	wait
}
replay() { cat "$TMP/$1.night.out"; cat "$TMP/$1.night.err" >&2; return "$(cat "$TMP/$1.night.rc")"; }
nights 2026-12-05 j1 j3
for j in j1 j3; do
	expect_exit 0 "night 1 runs ($j)" replay "$j"
done
"$NEXTBOT" -c "$W/j3.yaml" --json flagged >"$TMP/flags.json"
check "one flag on the culprit, listing the two cells it breaks" $PYTHON - "$TMP/flags.json" "$BAD" <<'EOF'
import json, sys
flags = json.load(open(sys.argv[1]))["flags"]
assert len(flags) == 1, flags
f = flags[0]
assert f["tree"] == "net" and f["commit"] == sys.argv[2], f
assert f["kind"] == "build-failure" and f["command"] == "build", f
cells = {c["name"]: c for c in f["cells"]}
assert sorted(cells) == ["build[ARCH=arm64]", "build[ARCH=riscv]"], cells
for name, arch in (("build[ARCH=arm64]", "arm64"), ("build[ARCH=riscv]", "riscv")):
    c = cells[name]
    assert c["env"] == {"ARCH": arch}, c
    assert "net/b.c" in c["first_error"], c
    assert c["first_seen"] == "2026-12-05", c
EOF
REPO=$W/state-j3/repo.git
check "next has the revert and builds in every cell" sh -c "
	git -C '$REPO' log --format=%s next | grep -q '^Revert \"net: add net_b' &&
	rm -rf '$TMP/co' && git clone -q -b next '$REPO' '$TMP/co' &&
	for a in x86_64 arm64 riscv; do make -s -C '$TMP/co' test ARCH=\$a >/dev/null || exit 1; done"
check "each cell built in its own worker" sh -c "
	for a in x86_64 arm64 riscv; do test -d '$W/state-j3/workers/ARCH='\$a/w0/tree || exit 1; done"
# mails J: counts the submitter's build-failure reports in the outbox; bodies to $TMP/report.N
mails() {
	$PYTHON - "$W/state-$1/outbox" "$TMP/report" <<'EOF'
import email, email.policy, json, os, sys
n = 0
for name in sorted(os.listdir(sys.argv[1])):
    m = json.load(open(os.path.join(sys.argv[1], name)))
    if m.get("channel") != "mail":
        continue
    msg = email.message_from_string(m.get("body") or "", policy=email.policy.default)
    if m["kind"] == "build-failure" and "zoe@example.org" in str(msg["To"] or ""):
        n += 1
        part = msg.get_body(preferencelist=("plain",)) if msg.is_multipart() else msg
        open("%s.%d" % (sys.argv[2], n), "w").write(part.get_content().replace("\r\n", "\n"))
print(n)
EOF
}
check "one report to the submitter" test "$(mails j3)" = 1
R=$TMP/report.1
check "the report lists both cells and reproduces in one" sh -c "
	grep -q 'It fails in 2 cells of the build matrix' '$R' &&
	grep -q '^  build\[ARCH=arm64\]  .*net/b.c' '$R' &&
	grep -q '^  build\[ARCH=riscv\]  .*net/b.c' '$R' &&
	grep -q '^  export ARCH=.arm64.\$' '$R' &&
	grep -qF '  make ARCH=\$ARCH' '$R'"
check "the report's Reproduce: block fails with the flag's first error, from an empty folder" \
	$PYTHON "$MAILS" repro "$W/state-j3/outbox" "$TMP/flags.json" --expose "$W"

# outcome J: what must not depend on max_jobs (flags, next, notices)
outcome() {
	"$NEXTBOT" -c "$W/$1.yaml" --json flagged | $PYTHON -c '
import json, sys
for f in json.load(sys.stdin)["flags"]:
    print(f["id"], f["state"], f["commit"], [(c["name"], c["first_error"]) for c in f["cells"]])'
	git -C "$W/state-$1/repo.git" rev-parse next
	(cd "$W/state-$1/outbox" && ls | sed 's/\.[a-z]*$//' | sort)
	"$NEXTBOT" -c "$W/$1.yaml" --json status | $PYTHON -c '
import json, sys
for r in json.load(sys.stdin)["runs"]:
    print(r["date"], r["result"], r["next"], [(t["name"], t["state"]) for t in r["trees"]], r.get("notes"))'
}
outcome j1 >"$TMP/j1.out"; outcome j3 >"$TMP/j3.out"
check "max_jobs 1 and 3: the same flags, next and notices" cmp "$TMP/j1.out" "$TMP/j3.out"

# night 2: a fourth cell; the culprit breaks it too; it joins the flag, no new mail
config j1 1 "x86_64, arm64, riscv, s390"
config j3 3 "x86_64, arm64, riscv, s390"
ls "$W/state-j3/outbox" >"$TMP/outbox1"
nights 2026-12-06 j1 j3
for j in j1 j3; do
	expect_exit 0 "night 2 runs with a fourth cell ($j)" replay "$j"
done
"$NEXTBOT" -c "$W/j3.yaml" --json flagged >"$TMP/flags2.json"
check "the new cell joined the same flag" $PYTHON - "$TMP/flags.json" "$TMP/flags2.json" <<'EOF'
import json, sys
f1 = json.load(open(sys.argv[1]))["flags"]
f2 = json.load(open(sys.argv[2]))["flags"]
assert len(f2) == 1 and f2[0]["id"] == f1[0]["id"], (f1, f2)
cells = {c["name"]: c["first_seen"] for c in f2[0]["cells"]}
assert cells == {"build[ARCH=arm64]": "2026-12-05", "build[ARCH=riscv]": "2026-12-05",
                 "build[ARCH=s390]": "2026-12-06"}, cells
EOF
check "still one report to the submitter" test "$(mails j3)" = 1
"$NEXTBOT" -c "$W/j3.yaml" status >"$TMP/status"
check "status shows the flag's cells" grep -q 'cell build\[ARCH=s390\] (since 2026-12-06): .*net/b.c' "$TMP/status"
expect_exit 0 "report --html" "$NEXTBOT" -c "$W/j3.yaml" report --html "$TMP/html"
check "the dashboard lists the cells" grep -q '<code>build\[ARCH=s390\]</code> since 2026-12-06' "$TMP/html/index.html"
outcome j1 >"$TMP/j1.out"; outcome j3 >"$TMP/j3.out"
check "night 2 with max_jobs 1 and 3: the same flags, next and notices" cmp "$TMP/j1.out" "$TMP/j3.out"

done_testing
