#!/bin/sh
# Carried merge fixes across nights, real binary, real git
# remotes, real make: tree api renames add() to sum(), tree user adds a caller of
# add(). Each builds with mainline; merged together they do not (plain git and make
# are the oracle). A `git format-patch` fix in user's `fixes:` directory is applied
# right after user's merge (`git am -3` in merge.log), and on three nights (the trees
# moving on) next builds and tests clean with both trees merged. When mainline takes
# api and user carries the change itself, the fix is reported as no longer needed.
. "$(dirname "$0")/lib.sh"

W=$TMP/world
mkdir -p "$W/src"
cd "$W/src" || exit 1
git_q init -q mainline && cd mainline || exit 1
cat >Makefile <<'EOF'
prog: $(wildcard */*.c) main.c
	$(CC) -Wall -Werror -o $@ $^
test: prog
	./prog
.PHONY: test
EOF
mkdir lib
printf 'int add(int a, int b);\n' >lib/add.h
printf '#include "add.h"\nint add(int a, int b) { return a + b; }\n' >lib/add.c
printf '#include "lib/add.h"\nint main(void) { return add(1, 2) == 3 ? 0 : 1; }\n' >main.c
printf 'prog\n' >.gitignore
git_q add -A && git_q commit -qm "initial" && cd ..

git_q clone -q mainline api
sed -i 's/add(/sum(/' api/lib/add.h api/lib/add.c api/main.c
git_q -C api commit -qam "api: rename add() to sum()"
git_q clone -q mainline user
mkdir user/drivers
printf '#include "../lib/add.h"\nint u(void) { return add(2, 2); }\n' >user/drivers/u.c
git_q -C user add -A && git_q -C user commit -qm "user: add u()"
publish_src() {
	for r in mainline api user; do
		if [ -d "$W/$r.git" ]; then git_q -C "$r" push -q -f "$W/$r.git" HEAD:master
		else git clone -q --bare "$r" "$W/$r.git"; fi
	done
}
publish_src

# The oracle: each tree builds with mainline, the two together do not.
check "api alone builds" make -s -C api test
check "user alone builds" make -s -C user test
git_q clone -q user both
git_q -C both pull -q --no-rebase --no-edit ../api master
check "git merges api and user without a conflict" test -f both/drivers/u.c
check "but the merge does not build" sh -c "! make -s -C both >/dev/null 2>&1"

# The fix, as a maintainer would carry it: format-patch of a commit on the merge.
sed -i 's/add(/sum(/' both/drivers/u.c
git -C both -c user.name="Fixer Fïx" -c user.email=fix@example.org commit -qam \
	"user: follow the rename of add() to sum()

Signed-off-by: Fixer Fïx <fix@example.org>"
check "the fixed merge builds" make -s -C both test
mkdir -p "$W/fixes"
git -C both format-patch -q -1 -o "$W/fixes/user" >/dev/null
FIX=$(ls "$W/fixes/user")
rm -rf both

cat >"$W/nextbot.yaml" <<EOF
workdir: state
base: {name: origin, url: "file://$W/mainline.git", branch: master}
trees:
  - {name: api, url: "file://$W/api.git", branch: master, contacts: ["api@example.org"]}
  - {name: user, url: "file://$W/user.git", branch: master, contacts: ["user@example.org"],
     fixes: fixes/user}
build:
  - {name: build, command: make, timeout: 60}
test:
  - {name: unit, command: make test, timeout: 60}
bisect: {confirm: 1, jobs: 1}
notify: {from: "nextbot <nextbot@example.org>", list: "list@example.org"}
EOF
NB() { "$NEXTBOT" -q -c "$W/nextbot.yaml" "$@"; }
REPO=$W/state/repo.git
S=$W/state

# night_is DATE: the night's run is clean, tagged, api and user merged, no flag
night_is_clean() {
	"$NEXTBOT" -c "$W/nextbot.yaml" --json status | $PYTHON -c '
import json, sys
run = [r for r in json.load(sys.stdin)["runs"] if r["date"] == sys.argv[1]][-1]
st = {t["name"]: t["state"] for t in run["trees"]}
ok = run["result"] == "clean" and st == {"origin": "merged", "api": "merged", "user": "merged"}
ok = ok and run["tag"] == "next-" + sys.argv[1].replace("-", "") and not run["flags"]
print("#", run["result"], st, run["flags"])
sys.exit(0 if ok else 1)' "$1"
}
next_builds() {
	rm -rf "$TMP/co" && git clone -q -b next "$REPO" "$TMP/co" && make -s -C "$TMP/co" test >/dev/null
}

for night in 1 2 3; do
	date=2026-12-0$night
	if [ "$night" -gt 1 ]; then
		for r in api user; do
			echo "$night" >"$r/$r-$night.txt"
			git_q -C "$r" add -A && git_q -C "$r" commit -qm "$r: day $night"
		done
		publish_src
	fi
	expect_exit 0 "night $night runs" NB run --date "$date"
	check "night $night: clean, api and user merged, nothing flagged" night_is_clean "$date"
	check "night $night: merge.log shows git am -3 of the fix" \
		grep -qx "\$ git am -3 .*/$FIX" "$S/runs/$date/merge.log"
	check "night $night: the fix comes right after user's merge" sh -c \
		"grep -A100 '^Merging user/master' '$S/runs/$date/merge.log' | grep -q 'git am -3'"
	check "night $night: next holds tonight's user and api tips" sh -c \
		"git -C '$REPO' merge-base --is-ancestor $(git -C user rev-parse HEAD) next &&
		 git -C '$REPO' merge-base --is-ancestor $(git -C api rev-parse HEAD) next"
	check "night $night: next carries the fix commit, by its author" sh -c \
		"git -C '$REPO' log --format='%an %s' next | grep -qx 'Fixer Fïx user: follow the rename of add() to sum()'"
	check "night $night: next builds and tests (make test in a clone)" next_builds
done
check "no flags at all" sh -c "'$NEXTBOT' -c '$W/nextbot.yaml' --json flagged |
	$PYTHON -c 'import json,sys; assert json.load(sys.stdin)[\"flags\"] == []'"

# --- night 4: mainline takes api, user follows the rename itself: the fix is not needed ---
git_q -C mainline pull -q --no-rebase --no-edit ../api master
sed -i 's/add(/sum(/' user/drivers/u.c
git_q -C user pull -q --no-rebase --no-edit ../mainline master
git_q -C user commit -qam "user: use sum()"
publish_src
expect_exit 0 "night 4 runs" NB run --date 2026-12-04
check "night 4: clean, both merged" night_is_clean 2026-12-04
check "night 4: status notes the fix as no longer needed" sh -c "'$NEXTBOT' -c '$W/nextbot.yaml' status |
	grep -q '^  note: user: fix $FIX (\"user: follow the rename of add() to sum()\") is no longer needed'"
check "night 4: so does run.json" grep -q "no longer needed" "$S/runs/2026-12-04/run.json"
check "night 4: the fix commit is not made again" sh -c \
	"! git -C '$REPO' log --format=%s next-20261204 --not refs/feeds/user | grep -q 'follow the rename'"
check "night 4: the summary says so" sh -c \
	"grep -l '\"kind\": *\"summary\"' '$S'/outbox/*.json | xargs grep -l 'next-20261204' | xargs grep -q 'no longer needed'"
check "night 4: next builds" next_builds
check "state.json is valid" $PYTHON -c "import json; json.load(open('$S/state.json'))"

done_testing
