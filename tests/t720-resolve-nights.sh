#!/bin/sh
# Conflict memory across nights, real binary, real git
# remotes: trees a and b change the same line of f, so b conflicts with next on
# night 1 and its conflicted file is left in resolve/b/. The maintainer edits it and
# runs `nextbot resolve b`; the next three nights (both trees moving on) merge both
# trees with that resolution ("Resolved 'f' using previous resolution." in
# merge.log, next holds the resolved line, no conflict notice). Night 5 brings a
# second, new conflict hunk in the same file: it is a conflict again (reported,
# b not merged with tonight's tip), and resolve/b/ holds the new conflict.
. "$(dirname "$0")/lib.sh"

W=$TMP/world
mkdir -p "$W/src"
cd "$W/src" || exit 1
git_q init -q mainline
seq 1 30 >mainline/f
git_q -C mainline add f && git_q -C mainline commit -qm "initial"
git_q clone -q mainline a
git_q clone -q mainline b
# edit REPO FILE SED-SCRIPT SUBJECT: a commit in a tree's working clone
edit() {
	sed -i "$3" "$1/$2" && git_q -C "$1" add "$2" && git_q -C "$1" commit -qm "$4"
}
# more REPO N: an unrelated commit, so each night brings a new tip
more() {
	echo "$1 $2" >"$1/$1-$2.txt" && git_q -C "$1" add . && git_q -C "$1" commit -qm "$1: day $2"
}
publish_src() {
	for r in mainline a b; do
		if [ -d "$W/$r.git" ]; then git_q -C "$r" push -q -f "$W/$r.git" HEAD:master
		else git clone -q --bare "$r" "$W/$r.git"; fi
	done
}
edit a f 's/^5$/five-a/' "a: five"
edit b f 's/^5$/five-b/' "b: five"
publish_src

cat >"$W/nextbot.yaml" <<EOF
workdir: state
base: {name: origin, url: "file://$W/mainline.git", branch: master}
trees:
  - {name: a, url: "file://$W/a.git", branch: master, contacts: ["a@example.org"]}
  - {name: b, url: "file://$W/b.git", branch: master, contacts: ["B Maintainer <b@example.org>"]}
build: []
test: []
notify: {from: "nextbot <nextbot@example.org>", list: "list@example.org", operator: "op@example.org"}
EOF
NB() { "$NEXTBOT" -q -c "$W/nextbot.yaml" "$@"; }
REPO=$W/state/repo.git
S=$W/state

# tree_states DATE: "a=<state> b=<state>" of that night, from status --json
tree_states() {
	"$NEXTBOT" -c "$W/nextbot.yaml" --json status | $PYTHON -c '
import json, sys
run = [r for r in json.load(sys.stdin)["runs"] if r["date"] == sys.argv[1]][-1]
print(" ".join("%s=%s" % (t["name"], t["state"]) for t in run["trees"] if t["name"] != "origin"))
' "$1"
}
# conflict_notices: how many merge-conflict mails to the trees the outbox holds
conflict_notices() {
	grep -l '"kind": *"merge-conflict"' "$S"/outbox/*.json 2>/dev/null |
		xargs grep -l '"subject": *"next-' 2>/dev/null | wc -l
}

# --- night 1: b conflicts with a in f ---------------------------------------------------
expect_exit 0 "night 1 runs" NB run --date 2026-12-01
check "night 1: a merged, b left out" test "$(tree_states 2026-12-01)" = "a=merged b=left-out"
check "the merge.log shows the conflict" \
	grep -q "CONFLICT (content): Merge conflict in f" "$S/runs/2026-12-01/merge.log"
check "one merge-conflict notice" test "$(conflict_notices)" = 1
check "the operator's mail says where the files are and how to resolve" sh -c \
	"grep -l '\"subject\": *\"\[nextbot operator\]' '$S'/outbox/*.json | xargs cat | tr -d '\n' |
	 grep -q \"nextbot resolve b\""
check "so does nextbot status" sh -c "'$NEXTBOT' -c '$W/nextbot.yaml' status | grep -q 'nextbot resolve b'"
check "the mail to the trees does not" sh -c \
	"! grep -l '\"subject\": *\"next-' '$S'/outbox/*.json | xargs grep -l 'nextbot resolve'"
check "the conflicted file is left with markers" grep -q '^<<<<<<< ' "$S/resolve/b/f"
check "it holds both sides" sh -c "grep -qx five-a '$S/resolve/b/f' && grep -qx five-b '$S/resolve/b/f'"
check "resolve/b.meta names the file" grep -qx "path f" "$S/resolve/b.meta"

# --- the maintainer resolves it once -------------------------------------------------------
expect_exit 1 "resolve with the markers still in: refused" NB resolve b
sed -i '/^<<<<<<< /,/^>>>>>>> /c\five-ab' "$S/resolve/b/f"
check "the edited file has no marker left" sh -c "! grep -q '^[<=>]\{7\}' '$S/resolve/b/f'"
expect_exit 0 "nextbot resolve b" "$NEXTBOT" -c "$W/nextbot.yaml" resolve b
check "it reports the recorded hunk" grep -q "^Recorded resolution for 'f' (1 hunk" "$TMP/out"
check "one record under rerere/" test "$(ls "$S/rerere" | wc -l)" = 1
check "status lists the recorded resolution" sh -c \
	"'$NEXTBOT' -c '$W/nextbot.yaml' status | grep -A1 '^recorded resolutions: 1' | grep -q ' b .* f '"

# --- nights 2-4: both trees move on; the conflict is resolved from memory ---------------------
for night in 2 3 4; do
	date=2026-12-0$night
	more a "$night"; more b "$night"; publish_src
	expect_exit 0 "night $night runs" NB run --date "$date"
	check "night $night: a and b merged" test "$(tree_states "$date")" = "a=merged b=merged"
	check "night $night: merge.log says the resolution was reused" grep -qx \
		"Resolved 'f' using previous resolution." "$S/runs/$date/merge.log"
	check "night $night: next has tonight's b tip" sh -c \
		"git -C '$REPO' merge-base --is-ancestor \$(git -C '$W/src/b' rev-parse HEAD) next"
	check "night $night: next's f is the resolution" sh -c \
		"git -C '$REPO' show next:f | grep -qx five-ab && ! git -C '$REPO' show next:f | grep -q '^[<=>]\{7\}'"
	check "night $night: no new conflict notice" test "$(conflict_notices)" = 1
	check "night $night: result clean, tagged" sh -c "'$NEXTBOT' -c '$W/nextbot.yaml' --json status |
		$PYTHON -c 'import json,sys; r=json.load(sys.stdin)[\"runs\"][-1]; assert r[\"result\"]==\"clean\" and r[\"tag\"]==\"next-$(echo $date | tr -d -)\", r'"
done
check "Next/merge.log of night 4 carries the resolution too" sh -c \
	"git -C '$REPO' show next-20261204:Next/merge.log | grep -qx \"Resolved 'f' using previous resolution.\""

# --- night 5: a new, different conflict in the same file ---------------------------------------
edit a f 's/^20$/twenty-a/' "a: twenty"
edit b f 's/^20$/twenty-b/' "b: twenty"
publish_src
B5=$(git -C b rev-parse HEAD)
expect_exit 0 "night 5 runs" NB run --date 2026-12-05
st5=$(tree_states 2026-12-05)
check "night 5: b is not merged with tonight's tip ($st5)" sh -c \
	"test '$st5' = 'a=merged b=left-out' || test '$st5' = 'a=merged b=previous-version'"
check "night 5: tonight's b tip is not in next" sh -c \
	"! git -C '$REPO' merge-base --is-ancestor $B5 next"
check "night 5: b's reason names the conflict" sh -c "'$NEXTBOT' -c '$W/nextbot.yaml' --json status |
	$PYTHON -c 'import json,sys; r=json.load(sys.stdin)[\"runs\"][-1]; t=[t for t in r[\"trees\"] if t[\"name\"]==\"b\"][0]; assert \"onflict\" in (t[\"reason\"] or \"\"), t'"
check "night 5: merge.log reports the conflict in f" \
	grep -q "CONFLICT (content): Merge conflict in f" "$S/runs/2026-12-05/merge.log"
check "night 5: merge.log says only part of it was known" \
	grep -q "f: 1 of 2 conflict hunks have a recorded resolution" "$S/runs/2026-12-05/merge.log"
check "night 5: a second merge-conflict notice" test "$(conflict_notices)" = 2
newest=$(ls -t "$S"/outbox/*.json | xargs grep -l '"kind": *"merge-conflict"' |
	xargs grep -l '"subject": *"next-' | head -1)
check "night 5: the new notice is tonight's, about b and f" $PYTHON - "$newest" <<'EOF2'
import json, sys
n = json.load(open(sys.argv[1]))
assert n["subject"] == "next-20261205: manual merge of the b tree with the a tree", n["subject"]
assert "\r\n  f\r\n" in n["body"] and "b: twenty" in n["body"] and "a: twenty" in n["body"], n["body"]
EOF2
if [ "$st5" = "a=merged b=previous-version" ]; then
	check "night 5: b's previous version is merged with the recorded resolution" sh -c \
		"grep -qx \"Resolved 'f' using previous resolution.\" '$S/runs/2026-12-05/merge.log' &&
		 git -C '$REPO' show next:f | grep -qx five-ab && git -C '$REPO' show next:f | grep -qx twenty-a"
fi
check "night 5: resolve/b/ holds tonight's conflict" sh -c \
	"grep -qx twenty-b '$S/resolve/b/f' && grep -qx 'date 2026-12-05' '$S/resolve/b.meta'"
check "state.json is valid" $PYTHON -c "import json; json.load(open('$S/state.json'))"

done_testing
