#!/bin/sh
# Wide nights on the private Slurm cluster (tests/slurm-cluster.sh): a two-cell build
# matrix (ARCH x86_64, arm64) and speculative builds, `runner: {kind: slurm,
# max_jobs: 8}` (four prefixes of the merge order at once, each cell its own job),
# against the same night with the local runner and max_jobs 1:
#  - the same flags (the culprit breaks arm64 only: one flag, one cell), next (so the
#    same merge.log), notices and notes;
#  - every cell of every prefix ran as a job of its own, and the queue is empty after;
#  - the prefix built ahead with the culprit in it, whose build would sleep 300 s, is
#    cancelled in Slurm (scancel) once the culprit's prefix fails: the night does not
#    wait for it.
# One cluster, one night each; about a minute and a half.
. "$(dirname "$0")/lib.sh"
# The cluster starts while the world is made and the local night runs (they need no
# Slurm), instead of before them.
slurm_cluster_start

W=$TMP/world
mkdir -p "$W/src"
cd "$W/src" || exit 1
git_q init -q mainline && cd mainline || exit 1
cat >Makefile <<'EOF'
ARCH ?= x86_64
SRCS := $(wildcard */*.c) main.c
prog-$(ARCH): $(SRCS)
	$(CC) -Wall -DARCH_$(ARCH) -o $@ $(SRCS)
EOF
mkdir lib
printf 'int add(int a, int b) { return a + b; }\n' >lib/add.c
printf 'int limit = 1;\n' >lib/limit.c
printf 'int add(int, int);\nint main(void) { return add(1, 2) == 3 ? 0 : 1; }\n' >main.c
git_q add -A && git_q commit -qm "initial" && cd ..
patch() {
	mkdir -p "$(dirname "$1")"
	printf '%s\n' "$2" >"$1"
	git add -A
	id=$(printf '%s' "$3" | tr -c 'a-z0-9' '-')
	git -c user.name="Ann Author" -c user.email=ann@example.org commit -qm "$3

Signed-off-by: Ann Author <ann@example.org>
Link: https://lore.kernel.org/r/20261201-$id@example.org"
}
git_q clone -q mainline ta && (cd ta && patch lib/limit.c 'int limit = 2;' "lib: raise the limit")
git_q clone -q mainline tb && (cd tb &&
	patch b/one.c 'int b_one(void) { return 1; }' "b: add b_one" &&
	patch b/two.c '#ifdef ARCH_arm64
int b_two(void) { return 2 }
#endif' "b: add b_two for arm64" &&
	patch b/three.c 'int b_three(void) { return 3; }' "b: add b_three")
git_q clone -q mainline tc && (cd tc && patch c/c.c 'int c_c(void) { return 3; }' "c: add c_c")
git_q clone -q mainline td && (cd td && patch lib/limit.c 'int limit = 3;' "lib: lower the limit")
git_q clone -q mainline te && (cd te && patch e/e.c 'int e_e(void) { return 5; }' "e: add e_e")
git_q clone -q mainline tf && (cd tf && patch f/f.c 'int f_f(void) { return 6; }' "f: add f_f")
for r in mainline ta tb tc td te tf; do git clone -q --bare $r "$W/$r.git"; done
BAD=$(git -C tb rev-parse HEAD~1)

# Only next with both b's culprit and e's patch builds slowly: a sequential night never
# builds that (it reverts the culprit first); a speculative one starts it, and must
# cancel it.
config() {
	{
		echo "workdir: state-$1"
		echo "base: {name: origin, url: \"file://$W/mainline.git\", branch: master}"
		echo "trees:"
		for t in ta tb tc td te tf; do
			echo "  - {name: $t, url: \"file://$W/$t.git\", branch: master, contacts: [\"$t@example.org\"]}"
		done
		echo "build:"
		echo "  - name: build"
		echo "    command: 'make ARCH=\$ARCH && { ! test -e b/two.c || ! test -e e/e.c || sleep 300; }'"
		echo "    timeout: 600"
		echo "    matrix: {ARCH: [x86_64, arm64]}"
		echo "runner: $2"
		echo "bisect: {confirm: 1}"
		echo "notify: {from: \"nextbot <nextbot@example.org>\", list: \"list@example.org\"}"
	} >"$W/$1.yaml"
}
config local "{kind: local, max_jobs: 1}"
config slurm "{kind: slurm, max_jobs: 8}"
expect_exit 0 "the night runs locally, max_jobs 1" "$NEXTBOT" -c "$W/local.yaml" run --date 2026-12-05
slurm_cluster_ready
start=$(date +%s)
expect_exit 0 "the night runs on Slurm, max_jobs 8" "$NEXTBOT" -c "$W/slurm.yaml" run --date 2026-12-05
took=$(($(date +%s) - start))
echo "# the Slurm night took $took s; $(grep -o '[0-9]* build round(s)' "$TMP/err")"
check "the Slurm night did not wait for the cancelled 300 s build" test "$took" -lt 240
check "the queue is empty after the night" test -z "$(squeue -h -o '%i %j %T' 2>&1)"
"$NEXTBOT" -c "$W/slurm.yaml" --json flagged >"$TMP/flags.json"
check "one flag on the culprit, its one cell" $PYTHON - "$TMP/flags.json" "$BAD" <<'EOF'
import json, sys
flags = json.load(open(sys.argv[1]))["flags"]
assert len(flags) == 1 and flags[0]["commit"] == sys.argv[2], flags
assert [c["name"] for c in flags[0]["cells"]] == ["build[ARCH=arm64]"], flags[0]["cells"]
EOF
outcome() {
	"$NEXTBOT" -c "$W/$1.yaml" --json flagged | $PYTHON -c '
import json, sys
for f in json.load(sys.stdin)["flags"]:
    print(f["id"], f["state"], f["commit"], f["error"], [(c["name"], c["first_error"]) for c in f["cells"]])'
	"$NEXTBOT" -c "$W/$1.yaml" --json status | $PYTHON -c '
import json, sys
for r in json.load(sys.stdin)["runs"]:
    print(r["date"], r["result"], r["next"], [(t["name"], t["state"], t.get("reason")) for t in r["trees"]], r.get("notes"))'
	git -C "$W/state-$1/repo.git" for-each-ref --format='%(refname) %(objectname)' refs/heads refs/tags
	(cd "$W/state-$1/outbox" && ls | sort)
}
outcome local >"$TMP/local.out"
outcome slurm >"$TMP/slurm.out"
check "local max_jobs 1 and Slurm max_jobs 8: the same flags, next, notices and notes" \
	cmp "$TMP/local.out" "$TMP/slurm.out"
check "each cell of each prefix was a job of its own; the slow one was cancelled" $PYTHON - \
	"$CLUSTER/jobcomp.txt" "$W/state-slurm" <<'EOF'
import re, sys
jobs = [l for l in open(sys.argv[1]) if "WorkDir=%s/" % sys.argv[2] in l]
dirs = {re.search(r"WorkDir=(\S+)", l).group(1)[len(sys.argv[2]):] for l in jobs}
cancelled = [l for l in jobs if "JobState=CANCELLED" in l]
print("# %d jobs in %d worker folders, %d cancelled" % (len(jobs), len(dirs), len(cancelled)))
for d in sorted(dirs):
    print("#   ", d)
# prefixes in w0..w3 of both cells' folders
assert {"/workers/ARCH=x86_64/w1/tree", "/workers/ARCH=arm64/w3/tree"} <= dirs, dirs
assert cancelled, "no job was cancelled"
EOF
done_testing
