#!/bin/sh
# kill -9 at any moment of `nextbot run`: on a small world with one build
# breakage (t800's, with a quick stand-in for cc), a run is killed after a delay (0.1 s,
# 0.3 s, … until a run completes first) and at every rename file_write_atomic makes
# (NEXTBOT_FAULT=rename:N:kill: every verdict, state, outbox and runs/ write), then the
# night is run again uninterrupted.  Each time the outcome must be that of a run never
# killed: the same flags (id, commit, state), runs, tree states, next's tree and outbox
# notice ids; every notice and state.json parse; no temp file outlives the next run.
# The rename walks run their nights without the sandbox (a night so run must make the
# sandboxed reference too): they kill in nextbot's own writes, and bwrap was a quarter
# of their CPU.
. "$(dirname "$0")/lib.sh"

W=$TMP/world
DATE=2026-12-05
mkdir -p "$W/src"
cd "$W/src" || exit 1

git_q init -q mainline && cd mainline || exit 1
mkdir lib
printf 'int add(int a, int b) { return a + b; }\n' >lib/add.c
printf 'int add(int, int);\nint main(void) { return add(1, 2) == 3 ? 0 : 1; }\n' >main.c
git_q add -A && git_q commit -qm "initial" && cd ..

# patch FILE CONTENT SUBJECT: a commit with an author, a sign-off and a Link trailer
patch() {
	mkdir -p "$(dirname "$1")"
	printf '%s\n' "$2" >"$1"
	git add -A
	id=$(printf '%s' "$3" | tr -c 'a-z0-9' '-')
	git -c user.name="Zoë Ångström" -c user.email=zoe@example.org commit -qm "$3

Signed-off-by: Zoë Ångström <zoe@example.org>
Link: https://lore.kernel.org/r/20261201-$id@example.org"
}

git_q clone -q mainline net && cd net
patch net/a.c 'int net_a(void) { return 1; }' "net: add net_a"
patch net/b.c 'int net_b(void) { return 2 }' "net: add net_b"
patch net/c.c 'int net_c(void) { return 3; }' "net: add net_c"
cd ..
git_q clone -q mainline vfs && cd vfs
patch fs/x.c 'int fs_x(void) { return 4; }' "fs: add fs_x"
cd ..
for r in mainline net vfs; do git clone -q --bare $r "$W/$r.git"; done
cd "$W" || exit 1

# A stand-in for cc that is quick (the night runs some 40 times here): a missing ';'
# before '}' is an error, reported as cc would.
cat >"$W/cc.sh" <<'EOF'
exec awk '/return [0-9]+ }/ {
	print FILENAME ":" FNR ": error: expected ; before } token"; bad = 1 }
	END { exit bad }' $(find . -name '*.c' | sort)
EOF
cat >"$W/nextbot.yaml" <<EOF
workdir: state
base: {name: origin, url: "file://$W/mainline.git", branch: master}
trees:
  - {name: net, url: "file://$W/net.git", branch: master, contacts: ["net@example.org"]}
  - {name: vfs, url: "file://$W/vfs.git", branch: master, contacts: ["vfs@example.org"]}
build:
  - {name: build, command: "sh $W/cc.sh", timeout: 60}
runner: {read_only: ["$W/cc.sh"]}
test:
  - {name: unit, command: "test -f main.c", timeout: 60}
bisect: {confirm: 2, jobs: 1}
notify: {from: "nextbot <nextbot@example.org>", list: "list@example.org"}
EOF
CFG=$W/nextbot.yaml
STATE=$W/state
NB() { "$NEXTBOT" -q -c "$CFG" "$@"; }

# sound: every notice and state.json (when there is one) parse; prints what does not.
sound() {
	$PYTHON - "$STATE" <<'EOF'
import glob, json, os, sys
bad = []
for p in sorted(glob.glob(sys.argv[1] + "/outbox/*.json")) + \
	 [p for p in [sys.argv[1] + "/state.json"] if os.path.exists(p)]:
    try:
        json.load(open(p))
    except Exception as e:
        bad.append("%s: %s" % (os.path.basename(p), e))
for b in bad:
    print("# half-written: " + b)
sys.exit(1 if bad else 0)
EOF
}

# outcome FILE: what an uninterrupted night decides, as canonical JSON.
outcome() {
	$PYTHON - "$STATE" "$DATE" >"$1" <<'EOF'
import glob, json, os, subprocess, sys
d, date = sys.argv[1:3]
st = json.load(open(d + "/state.json"))
runs = sorted(st["runs"], key=lambda r: r["date"])
tree = subprocess.run(["git", "-C", d + "/repo.git", "rev-parse", "next^{tree}"],
                      capture_output=True, text=True).stdout.strip()
print(json.dumps({
    "flags": sorted([f["id"], f["commit"], f["state"], f["kind"]] for f in st["flags"]),
    "runs": [[r["date"], r["result"], r.get("tag"), sorted(r.get("flags") or []),
              [[t["name"], t["state"], t.get("sha1")] for t in r["trees"]]] for r in runs],
    "next_tree": tree,
    "notices": sorted(os.path.basename(p)[:-5] for p in glob.glob(d + "/outbox/*.json")),
}, indent=1, sort_keys=True))
EOF
}

# same LABEL: the night's outcome equals the reference; prints the difference.
same() {
	outcome "$TMP/got"
	if cmp -s "$TMP/ref" "$TMP/got"; then ok "$1: same outcome as a run never killed"; else
		not_ok "$1: same outcome as a run never killed"
		diff "$TMP/ref" "$TMP/got" | sed 's/^/# /' | head -30
	fi
}

# --- the reference: one uninterrupted night ------------------------------------------------
expect_exit 0 "the reference night runs" NB run --date $DATE
outcome "$TMP/ref"
check "the reference has a flag, a revert and notices" $PYTHON -c "
import json; r = json.load(open('$TMP/ref'))
assert len(r['flags']) == 1 and r['runs'][0][1] == 'regression' and len(r['notices']) >= 2, r"

# after_kill LABEL RC: the killed run's leftovers are sound, the next run makes the reference.
after_kill() {
	check "$1: killed run left sound files (exit $2)" sound
	temps=$((temps + $(find "$STATE" -name '*.tmp.*' 2>/dev/null | wc -l)))
	expect_exit 0 "$1: the next run completes" NB run --date $DATE
	check "$1: everything parses after it" sound
	check "$1: no temp file is left after it" \
		sh -c "! find '$STATE' -name '*.tmp.*' -not -path '*/repo.git/*' | grep ."
	same "$1"
}

temps=0
# --- SIGKILL after a delay ---------------------------------------------------------------------
for delay in 0.1 0.3 0.6 1 1.5 2 3 5 8 13 21 34 55; do
	rm -rf "$W/state"
	"$NEXTBOT" -q -c "$W/nextbot.yaml" run --date $DATE >/dev/null 2>"$TMP/kill.err" &
	pid=$!
	sleep $delay
	kill -9 $pid 2>/dev/null
	wait $pid 2>/dev/null
	rc=$?
	case $rc in 0|137) ;; *) echo "# after ${delay}s: exit $rc"; sed 's/^/#   /' "$TMP/kill.err";;
	esac
	after_kill "kill -9 after ${delay}s" $rc
	[ $rc = 137 ] || break
done
check "some run completed before its kill" test "$rc" = 0

# The walks below kill at file writes, never inside a command: their nights run without
# the sandbox (27 bwrap starts a night, a quarter of its CPU), and such a night must
# make the very same outcome as the sandboxed reference.
sed 's/^runner: {/runner: {sandbox: none, /' "$W/nextbot.yaml" >"$W/nobox.yaml"
CFG=$W/nobox.yaml
rm -rf "$W/state"
expect_exit 0 "a night without the sandbox runs" NB run --date $DATE
same "a night without the sandbox"

# --- SIGKILL at every rename through file_write_atomic -------------------------------------------
# kill_point DIR N LABEL [INIT]: in DIR, a copy of the config (its workdir DIR/state),
# starting from INIT's state if given, the night killed at rename N, then after_kill;
# the TAP lines go to DIR/tap (ok/not_ok marked for the replay), the exit code and
# the temp files left to DIR/rc.
kill_point() {
	(
		d=$1 TMP=$1 CFG=$1/nextbot.yaml STATE=$1/state temps=0
		ok() { echo "@ok $*"; }
		not_ok() { echo "@not_ok $*"; }
		mkdir -p "$d" && cp "$W/nobox.yaml" "$CFG" && cp "$REF" "$d/ref" || exit 1
		[ -z "${4:-}" ] || cp -a "$4" "$STATE" || exit 1
		NEXTBOT_FAULT="rename:$2:kill" "$NEXTBOT" -q -c "$CFG" run --date $DATE \
			>/dev/null 2>"$d/kill.err"
		rc=$?
		case $rc in 0|137) ;; *) echo "# rename:$2:kill: exit $rc"; sed 's/^/#   /' "$d/kill.err";;
		esac
		after_kill "$3 $2" $rc
		echo "$rc $temps" >"$d/rc"
	) >"$1.tap" 2>&1
}

# walk LABEL [INIT]: kills at rename 1, 2, … until a run passes the last rename, as
# the loop one kill at a time would, WALK_JOBS kill points at once (each in a folder of
# its own); their results are told in order, and stop at the first run that completed.
# Sets n (the first rename a run passed) and rc (its exit code).
WALK_JOBS=${WALK_JOBS:-3}
walk() {
	n=1
	rc=137
	while [ "$rc" = 137 ] && [ $n -le 100 ]; do
		b=$n
		while [ $b -lt $((n + WALK_JOBS)) ] && [ $b -le 100 ]; do
			kill_point "$TMP/k$b" $b "$1" "${2:-}" &
			b=$((b + 1))
		done
		wait
		while [ $n -lt $b ]; do
			while IFS= read -r line; do
				case $line in
				"@ok "*) ok "${line#@ok }" ;;
				"@not_ok "*) not_ok "${line#@not_ok }" ;;
				*) printf '%s\n' "$line" ;;
				esac
			done <"$TMP/k$n.tap"
			read -r rc t <"$TMP/k$n/rc" || { rc=; t=0; not_ok "kill point $n ran"; }
			temps=$((temps + t))
			[ "$rc" = 137 ] || break
			n=$((n + 1))
		done
		rm -rf "$TMP"/k[0-9]*
	done
}
REF=$TMP/ref
walk "kill at rename"
check "the walk passed the last rename (after $((n - 1)) kill points)" test "$rc" = 0
# A kill before a rename leaves its temp file behind; the next run sweeps them away.
echo "# temp files the kills left behind: $temps"

# --- night 2 on top of night 1's state: net was rebased without the bad patch ------------------
# The flag becomes resolved and its author is told once, whatever the kill.
rm -rf "$W/state"
expect_exit 0 "night 1 for night 2" NB run --date $DATE
cp -a "$W/state" "$TMP/state1"
cd "$W/src/net" && git rebase -q --onto HEAD~2 HEAD~1 && git push -q -f "$W/net.git" HEAD:master &&
	cd "$W" || exit 1
DATE=2026-12-06
expect_exit 0 "the reference night 2 runs" NB run --date $DATE
outcome "$TMP/ref"
check "in it the flag is resolved" $PYTHON -c "
import json; r = json.load(open('$TMP/ref'))
assert [f[2] for f in r['flags']] == ['resolved'] and r['runs'][1][1] == 'clean', r"
walk "night 2, kill at rename" "$TMP/state1"
check "night 2's walk passed the last rename (after $((n - 1)) kill points)" test "$rc" = 0

done_testing
