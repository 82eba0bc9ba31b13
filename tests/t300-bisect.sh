#!/bin/sh
# `nextbot bisect` with the real binary: a 1,000-commit line (steps, rounds, skips),
# git bisect run as the oracle, the replayable log, DIR untouched, exit 3 when only
# skipped commits remain, hung and crashing commands, usage errors; no config needed.
. "$(dirname "$0")/lib.sh"
cd "$TMP" || exit 1

# A line of N commits c1..cN, each with file n holding its number (fast-import: quick).
make_line() {
	git_q init -q "$1" && (cd "$1" && awk -v n="$2" 'BEGIN {
		for (i = 1; i <= n; i++) {
			printf "commit refs/heads/master\nmark :%d\n", i
			printf "committer A <a@example.org> %d +0000\n", 1000000 + i * 10
			printf "data <<EOT\nc%d\nEOT\n", i
			if (i > 1) printf "from :%d\n", i - 1
			printf "M 644 inline n\ndata <<EOT\n%d\nEOT\n\n", i
		} }' | git fast-import --quiet && git reset -q --hard master)
}
# json FILE KEY: a top-level value of nextbot's --json output.
json() { $PYTHON -c 'import json,sys; v=json.load(open(sys.argv[1]))[sys.argv[2]]; print(v if not isinstance(v, list) else " ".join(v))' "$1" "$2"; }
rev() { git -C line rev-parse "$1"; }
# c REPO K [N]: the id of commit cK of a line of N (default 1000) commits.
c() { git -C "$1" rev-parse "master~$((${3:-1000} - $2))"; }

make_line line 1000
ROOT=$(rev master~999)
C637=$(c line 637)

# --- 1,000 commits: at most 10 steps ----------------------------------------------------
expect_exit 0 "bisect finds the culprit" \
	"$NEXTBOT" --json bisect --repo line --good "$ROOT" --bad master -- \
	sh -c 'test $(cat n) -lt 637'
cp "$TMP/out" out.json
check "first_bad is c637" test "$(json out.json first_bad)" = "$C637"
check "subject is c637" test "$(json out.json subject)" = c637
steps=$(json out.json steps)
check "at most 10 steps ($steps)" test "$steps" -le 10

# --- with a skipped commit: at most 11 ---------------------------------------------------
expect_exit 0 "bisect with a skip" \
	"$NEXTBOT" --json bisect --repo line --good "$ROOT" --bad master -- \
	sh -c 'n=$(cat n); [ $n = 500 ] && exit 125; test $n -lt 637'
cp "$TMP/out" skip.json
check "skip: first_bad is c637" test "$(json skip.json first_bad)" = "$C637"
steps=$(json skip.json steps)
check "skip: at most 11 steps ($steps)" test "$steps" -le 11
check "skip: c500 listed as skipped" test "$(json skip.json skipped)" = "$(c line 500)"

# --- three jobs: at most 5 rounds ----------------------------------------------------------
for culprit in 2 333 637 999 1000; do
	expect_exit 0 "--jobs 3 finds c$culprit" \
		"$NEXTBOT" --json bisect --repo line --jobs 3 --good "$ROOT" --bad master -- \
		sh -c "test \$(cat n) -lt $culprit"
	cp "$TMP/out" j3.json
	check "--jobs 3: c$culprit" test "$(json j3.json first_bad)" = "$(c line $culprit)"
	rounds=$(json j3.json rounds)
	check "--jobs 3: at most 5 rounds ($rounds)" test "$rounds" -le 5
done

# --- git bisect run is the oracle; the log replays ------------------------------------------
cmd='n=$(cat n); case " 13 250 251 499 " in *" $n "*) exit 125;; esac; test $n -lt 254'
expect_exit 0 "bisect (text output)" "$NEXTBOT" bisect --repo line --good "$ROOT" --bad master -- sh -c "$cmd"
cp "$TMP/out" text.out
ours=$(sed -n 's/ is the first bad commit$//p' text.out)
ours_steps=$(grep -c '^git bisect \(good\|bad\|skip\)' text.out)
git clone -q line oracle
(cd oracle && git bisect start master "$ROOT" >/dev/null &&
	git bisect run sh -c "echo >>../count; $cmd" >../git.out 2>&1; git bisect reset >/dev/null 2>&1)
theirs=$(sed -n 's/ is the first bad commit$//p' git.out)
check "same first bad commit as git bisect run" test -n "$ours" -a "$ours" = "$theirs"
check "no more steps than git ($ours_steps <= $(wc -l <count))" test "$ours_steps" -le "$(wc -l <count)"
git clone -q line replay
(cd replay && git bisect replay ../text.out >../replay.out 2>&1; git bisect reset >/dev/null 2>&1)
check "git bisect replay accepts the log" grep -q "^$ours is the first bad commit" replay.out

# --- the command runs in a git working tree: HEAD is the commit under test -------------------
# (a script that asks git, as the kernel's scripts/setlocalversion does; it failed quietly
# in a folder that was not a repository, and the bad end was reported as the culprit)
gitcmd='test "$(git rev-parse HEAD)" = "$NEXTBOT_COMMIT" || exit 255; test -z "$(git status --porcelain)" || exit 255; git log -1 --format=%s HEAD | grep -qx "c\(.\|..\|[0-5]..\|6[0-2].\|63[0-6]\)"'
expect_exit 0 "a command asking git about HEAD" \
	"$NEXTBOT" --json bisect --repo line --jobs 2 --good "$ROOT" --bad master -- sh -c "$gitcmd"
cp "$TMP/out" git.json
check "git in the command: first_bad is c637" test "$(json git.json first_bad)" = "$C637"
expect_exit 0 "git rev-list and diff work in the command" \
	"$NEXTBOT" --json bisect --repo line --good "$ROOT" --bad master -- \
	sh -c 'git diff --quiet HEAD~1 HEAD -- n && exit 1; test $(git rev-list --count HEAD) -lt 637'
cp "$TMP/out" git2.json
check "git rev-list and diff in the command: first_bad is c637" test "$(json git2.json first_bad)" = "$C637"

# --- DIR's HEAD and work tree untouched ---------------------------------------------------
echo dirty >line/n
echo new >line/untracked
git -C line status --porcelain >status.before
head_before=$(rev HEAD)
expect_exit 0 "bisect in a dirty repository" \
	"$NEXTBOT" bisect --repo line --jobs 2 --good "$ROOT" --bad master -- sh -c 'test $(cat n) -lt 10'
git -C line status --porcelain >status.after
check "work tree untouched" cmp status.before status.after
check "HEAD untouched" test "$(rev HEAD)" = "$head_before"
check "no bisect state left in DIR" test ! -e line/.git/BISECT_LOG
git -C line checkout -q -- n && rm line/untracked

# --- only skipped commits left: exit 3, listing them ------------------------------------------
make_line small 20
SROOT=$(git -C small rev-parse master~19)
expect_exit 3 "only skipped commits left: exit 3" \
	"$NEXTBOT" --json bisect --repo small --good "$SROOT" --bad master -- \
	sh -c 'n=$(cat n); [ $n = 9 -o $n = 10 ] && exit 125; test $n -lt 10'
cp "$TMP/out" only.json
want=$(printf '%s\n' $(c small 9 20) $(c small 10 20) $(c small 11 20) | sort | tr '\n' ' ')
got=$(json only.json candidates | tr ' ' '\n' | sort | tr '\n' ' ')
check "the candidates are c9, c10 and c11" test "$got" = "$want"
check "first_bad is null" test "$(json only.json first_bad)" = None
expect_exit 3 "text output lists them" \
	"$NEXTBOT" bisect --repo small --good "$SROOT" --bad master -- \
	sh -c 'n=$(cat n); [ $n = 9 -o $n = 10 ] && exit 125; test $n -lt 10'
check "text names the range" grep -q "could be any of" "$TMP/out"

# --- a hang is killed at its timeout and counts as bad; so does a crash -----------------------
expect_exit 0 "hung command: killed, bisection goes on" \
	"$NEXTBOT" --json bisect --repo small --timeout 1 --good "$SROOT" --bad master -- \
	sh -c 'test $(cat n) -lt 14 || sleep 600'
cp "$TMP/out" hang.json
check "hang: first bad is c14" test "$(json hang.json first_bad)" = "$(c small 14 20)"
expect_exit 0 "a crash by signal is bad (git bisect run would abort instead)" \
	"$NEXTBOT" --json bisect --repo small --good "$SROOT" --bad master -- \
	sh -c 'test $(cat n) -lt 7 || kill -SEGV $$'
cp "$TMP/out" segv.json
check "crash: first bad is c7" test "$(json segv.json first_bad)" = "$(c small 7 20)"

# --- usage errors ----------------------------------------------------------------------------
expect_exit 2 "no --good" "$NEXTBOT" bisect --repo small --bad master -- true
expect_exit 2 "no command" "$NEXTBOT" bisect --repo small --good "$SROOT" --bad master
expect_exit 2 "unknown revision" "$NEXTBOT" bisect --repo small --good nope --bad master -- true
expect_exit 2 "good and bad swapped" "$NEXTBOT" bisect --repo small --good master --bad "$SROOT" -- true
expect_exit 2 "not a repository" "$NEXTBOT" bisect --repo "$TMP/nowhere" --good a --bad b -- true
expect_exit 2 "--jobs 0" "$NEXTBOT" bisect --repo small --jobs 0 --good "$SROOT" --bad master -- true
check "no config file was needed" test ! -e nextbot.yaml

done_testing
