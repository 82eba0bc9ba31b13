#!/bin/sh
# Publishing, real binary, real git: with `publish` a local
# bare repository receives next (as publish.branch) and each night's tag, forced, as
# next is rebuilt every night and a night run again is re-tagged. A push to an
# unreachable url (a missing repository, a refused port) is reported in the night's
# notes and summary and the night still completes (exit 0, tag and next in the work
# repository); `outbox flush` pushes again once the configured url is reachable.
. "$(dirname "$0")/lib.sh"

W=$TMP/world
mkdir -p "$W/src"
cd "$W/src" || exit 1
git_q init -q mainline
echo base >mainline/README && git_q -C mainline add . && git_q -C mainline commit -qm "initial"
git_q clone -q mainline t1
# day N: a new commit in t1, published to its remote
day() {
	echo "$1" >"t1/day-$1" && git_q -C t1 add . && git_q -C t1 commit -qm "t1: day $1"
	if [ -d "$W/t1.git" ]; then git_q -C t1 push -q -f "$W/t1.git" HEAD:master
	else git clone -q --bare t1 "$W/t1.git"; fi
}
git clone -q --bare mainline "$W/mainline.git"
day 1
git init -q --bare "$W/pub.git"

# config PUBLISH-URL: writes the config with that publish url
config() {
	cat >"$W/nextbot.yaml" <<EOF
workdir: state
base: {name: origin, url: "file://$W/mainline.git", branch: master}
trees:
  - {name: t1, url: "file://$W/t1.git", branch: master, contacts: ["t1@example.org"]}
build: []
test: []
publish: {url: "$1", branch: master}
notify: {from: "nextbot <nextbot@example.org>", list: "list@example.org"}
EOF
}
NB() { "$NEXTBOT" -q -c "$W/nextbot.yaml" "$@"; }
REPO=$W/state/repo.git
S=$W/state
rev() { git -C "$1" rev-parse -q --verify "$2" 2>/dev/null; }
# same REF-IN-REPO REF-IN-PUB PUB: both name the same object (and exist)
same() {
	a=$(rev "$REPO" "$1") && b=$(rev "$3" "$2") && test "$a" = "$b"
}
notes() { "$NEXTBOT" -c "$W/nextbot.yaml" status | grep '^  note: ' || true; }
summary_of() {
	grep -l '"kind": *"summary"' "$S"/outbox/*.json | xargs grep -l "$1" | head -1
}

# --- night 1: pub.git receives next and the tag ---------------------------------------------
config "file://$W/pub.git"
expect_exit 0 "night 1 runs" NB run --date 2026-12-01
check "pub.git master is next" same refs/heads/next refs/heads/master "$W/pub.git"
check "pub.git has tonight's tag, same object" same refs/tags/next-20261201 refs/tags/next-20261201 "$W/pub.git"
check "the tag is next" sh -c "test \"\$(git -C '$W/pub.git' rev-parse next-20261201^{commit})\" = \"\$(git -C '$W/pub.git' rev-parse master)\""
check "pub.git got no other branch" test "$(git -C "$W/pub.git" for-each-ref --format=x refs/heads | wc -l)" = 1
check "pub.git is complete (fsck)" sh -c "git -C '$W/pub.git' fsck --no-progress --no-dangling 2>/dev/null"
check "no publishing note" test -z "$(notes)"
N1=$(rev "$REPO" refs/heads/next)

# --- night 2: next is rebuilt, not a fast-forward: the push is forced -------------------------
day 2
expect_exit 0 "night 2 runs" NB run --date 2026-12-02
check "pub.git master moved to night 2's next" same refs/heads/next refs/heads/master "$W/pub.git"
check "night 2's next is not a descendant of night 1's (forced)" sh -c \
	"! git -C '$REPO' merge-base --is-ancestor $N1 next"
check "both tags are there" sh -c "git -C '$W/pub.git' tag | tr '\n' ' ' | grep -qx 'next-20261201 next-20261202 '"
T2=$(rev "$W/pub.git" refs/tags/next-20261202)
day 2b
expect_exit 0 "night 2 again, t1 moved on" NB run --date 2026-12-02
check "the re-made tag replaced the published one" sh -c \
	"test \"\$(git -C '$W/pub.git' rev-parse refs/tags/next-20261202)\" != '$T2'"
check "and it is the work repository's" same refs/tags/next-20261202 refs/tags/next-20261202 "$W/pub.git"
check "pub.git master follows" same refs/heads/next refs/heads/master "$W/pub.git"

# --- night 3: the url is unreachable: reported, the night completes ---------------------------
config "file://$W/later.git"
day 3
expect_exit 0 "night 3 runs (exit 0) although the push fails" NB run --date 2026-12-03
check "night 3 is tagged in the work repository" sh -c "test -n \"\$(git -C '$REPO' rev-parse -q --verify refs/tags/next-20261203)\""
check "next is night 3's" sh -c "test \"\$(git -C '$REPO' rev-parse next-20261203^{commit})\" = \"\$(git -C '$REPO' rev-parse next)\""
check "night 3 is recorded clean" sh -c "'$NEXTBOT' -c '$W/nextbot.yaml' --json status |
	$PYTHON -c 'import json,sys; r=json.load(sys.stdin)[\"runs\"][-1]; assert r[\"date\"]==\"2026-12-03\" and r[\"result\"]==\"clean\" and r[\"tag\"]==\"next-20261203\", r'"
check "status notes the failed publish" sh -c "'$NEXTBOT' -c '$W/nextbot.yaml' status |
	grep -q '^  note: publishing to file://$W/later.git failed'"
# the summary's notes are prose, wrapped: compare with the line breaks as spaces
check "the night's summary says so" $PYTHON -c '
import json, re, sys
body = json.load(open(sys.argv[1]))["body"]
sys.exit(0 if sys.argv[2] in re.sub(r"\s+", " ", body) else 1)' \
	"$(summary_of next-20261203)" "publishing to file://$W/later.git failed"
check "pub.git kept night 2" same refs/tags/next-20261202 refs/heads/master "$W/pub.git"
check "nothing was created at the url" test ! -e "$W/later.git"

# --- the repository appears; outbox flush publishes night 3 -----------------------------------
git init -q --bare "$W/later.git"
expect_exit 0 "outbox flush" "$NEXTBOT" -c "$W/nextbot.yaml" outbox flush
check "later.git master is next" same refs/heads/next refs/heads/master "$W/later.git"
check "later.git has night 3's tag" same refs/tags/next-20261203 refs/tags/next-20261203 "$W/later.git"
check "the note is gone once published" test -z "$(notes)"
check "state.json is valid" $PYTHON -c "import json; json.load(open('$S/state.json'))"

# --- night 4: a refused port; a flush that fails again keeps the note -------------------------
config "http://127.0.0.1:9/next.git"
day 4
expect_exit 0 "night 4 runs (exit 0) with a refused port" NB run --date 2026-12-04
check "night 4 is tagged" sh -c "git -C '$REPO' rev-parse -q --verify refs/tags/next-20261204 >/dev/null"
check "status notes the failed publish" sh -c "'$NEXTBOT' -c '$W/nextbot.yaml' status |
	grep -q '^  note: publishing to http://127.0.0.1:9/next.git failed'"
expect_exit 0 "outbox flush with the url still unreachable" "$NEXTBOT" -c "$W/nextbot.yaml" outbox flush
check "the note stays" sh -c "'$NEXTBOT' -c '$W/nextbot.yaml' status | grep -q '^  note: publishing to http://127.0.0.1:9/'"
config "file://$W/later.git"
expect_exit 0 "outbox flush with the url fixed in the config" "$NEXTBOT" -c "$W/nextbot.yaml" outbox flush
check "later.git has night 4's next and tag" sh -c \
	"test \"\$(git -C '$W/later.git' rev-parse next-20261204^{commit})\" = \"\$(git -C '$REPO' rev-parse next)\" &&
	 test \"\$(git -C '$W/later.git' rev-parse master)\" = \"\$(git -C '$REPO' rev-parse next)\""
check "the note is gone" test -z "$(notes)"

done_testing
