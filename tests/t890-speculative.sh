#!/bin/sh
# Speculative builds (build_after_each_merge, runner.max_jobs 4, no matrix): six
# trees, the second with a patch that breaks the build, the fourth conflicting with
# the first.  The night builds next after several trees at once, yet ends exactly
# as with max_jobs 1: the same flags, next (so the same merge.log), notices and
# notes; a merge made ahead of its turn and then redone tells its conflict once;
# fewer build rounds.  About 40 s.
. "$(dirname "$0")/lib.sh"

W=$TMP/world
mkdir -p "$W/src"
cd "$W/src" || exit 1
git_q init -q mainline && cd mainline || exit 1
cat >Makefile <<'EOF'
SRCS := $(wildcard */*.c) main.c
prog: $(SRCS)
	$(CC) -Wall -o $@ $(SRCS)
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
	patch b/two.c 'int b_two(void) { return 2 }' "b: add b_two" &&
	patch b/three.c 'int b_three(void) { return 3; }' "b: add b_three")
git_q clone -q mainline tc && (cd tc && patch c/c.c 'int c_c(void) { return 3; }' "c: add c_c")
git_q clone -q mainline td && (cd td && patch lib/limit.c 'int limit = 3;' "lib: lower the limit")
git_q clone -q mainline te && (cd te && patch e/e.c 'int e_e(void) { return 5; }' "e: add e_e")
git_q clone -q mainline tf && (cd tf && patch f/f.c 'int f_f(void) { return 6; }' "f: add f_f")
for r in mainline ta tb tc td te tf; do git clone -q --bare $r "$W/$r.git"; done
BAD=$(git -C tb rev-parse HEAD~1)

config() {
	{
		echo "workdir: state-$1"
		echo "base: {name: origin, url: \"file://$W/mainline.git\", branch: master}"
		echo "trees:"
		for t in ta tb tc td te tf; do
			echo "  - {name: $t, url: \"file://$W/$t.git\", branch: master, contacts: [\"$t@example.org\"]}"
		done
		echo "build:"
		echo "  - {name: build, command: make, timeout: 60}"
		echo "runner: {max_jobs: $1}"
		echo "bisect: {confirm: 1}"
		echo "notify: {from: \"nextbot <nextbot@example.org>\", list: \"list@example.org\"}"
	} >"$W/j$1.yaml"
}
config 1
config 4
for j in 1 4; do
	expect_exit 0 "the night runs with max_jobs $j" "$NEXTBOT" -c "$W/j$j.yaml" run --date 2026-12-05
	grep -o '[0-9]* build round(s)' "$TMP/err" | cut -d' ' -f1 >"$TMP/rounds-$j"
done
check "the culprit is flagged and reverted, the conflict told" sh -c "
	'$NEXTBOT' -c '$W/j4.yaml' --json flagged | grep -q '\"commit\":\"$BAD\"' &&
	git -C '$W/state-4/repo.git' log --format=%s next | grep -q '^Revert \"b: add b_two\"' &&
	'$NEXTBOT' -c '$W/j4.yaml' --json status | grep -q '\"name\":\"td\",'"
conflicts() { grep -l '"kind":"merge-conflict"' "$W/state-$1"/outbox/*.json 2>/dev/null | wc -l; }
check "one conflict notice for td's conflict, as sequentially" sh -c "
	test $(conflicts 4) = $(conflicts 1) && test $(conflicts 4) -ge 1"
outcome() {
	"$NEXTBOT" -c "$W/j$1.yaml" --json flagged | $PYTHON -c '
import json, sys
for f in json.load(sys.stdin)["flags"]:
    print(f["id"], f["state"], f["commit"], f["action"] if "action" in f else "", f["error"])'
	"$NEXTBOT" -c "$W/j$1.yaml" --json status | $PYTHON -c '
import json, sys
for r in json.load(sys.stdin)["runs"]:
    print(r["date"], r["result"], r["next"], [(t["name"], t["state"], t.get("reason")) for t in r["trees"]], r.get("notes"))'
	git -C "$W/state-$1/repo.git" for-each-ref --format='%(refname) %(objectname)' refs/heads refs/tags
	(cd "$W/state-$1/outbox" && ls | sort)
}
outcome 1 >"$TMP/j1.out"
outcome 4 >"$TMP/j4.out"
check "max_jobs 1 and 4: the same flags, next (merge.log included), notices and notes" \
	cmp "$TMP/j1.out" "$TMP/j4.out"
check "speculative builds take fewer build rounds ($(cat "$TMP/rounds-4") vs $(cat "$TMP/rounds-1"))" \
	test "$(cat "$TMP/rounds-4")" -lt "$(cat "$TMP/rounds-1")"
done_testing
