#!/bin/sh
# `nextbot drop ID --push` on hand-made remotes (file:// bare repositories): the tree's
# branch is rewritten without the patch (and without a later patch that needed it), the
# rest keep their patch-ids; when the remote moved after the fetch nothing is pushed.
. "$(dirname "$0")/lib.sh"

W=$TMP/world
mkdir -p "$W/src"
cd "$W/src" || exit 1

git_q init -q mainline && cd mainline || exit 1
printf 'int main(void) { return 0; }\n' >main.c
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
patch net/b.c 'int net_b(void) { return 2; }' "net: add net_b"
patch net/c.c 'int net_c(void) { return 3; }' "net: add net_c"
patch net/b.c 'int net_b(void) { return 22; }' "net: net_b returns 22"
patch net/e.c 'int net_e(void) { return 5; }' "net: add net_e"
cd ..
for r in mainline net; do git clone -q --bare $r "$W/$r.git"; done
B=$(git -C net rev-parse HEAD~3)     # the patch to drop
D=$(git -C net rev-parse HEAD~1)     # changes b.c: no longer applies without B
OLD_TIP=$(git -C net rev-parse HEAD)

cat >"$W/nextbot.yaml" <<EOF
workdir: state
base: {name: origin, url: "file://$W/mainline.git", branch: master}
trees:
  - {name: net, url: "file://$W/net.git", branch: master, contacts: ["net@example.org"]}
build:
  - {name: build, command: "true", timeout: 60}
test:
  - {name: unit, command: "true", timeout: 60}
notify: {from: "nextbot <nextbot@example.org>"}
EOF
NB() { "$NEXTBOT" -q -c "$W/nextbot.yaml" "$@"; }
# pids GITDIR RANGE: the stable patch-ids of the range's commits, sorted
pids() { git -C "$1" log -p --no-merges "$2" | git patch-id --stable | cut -d' ' -f1 | sort; }
pid_of() { git -C "$1" show "$2" | git patch-id --stable | cut -d' ' -f1; }

expect_exit 0 "a night fetches the trees" NB run --date 2026-12-05
REPO=$W/state/repo.git
git -C "$W/net.git" fetch -q "$W/mainline.git" master:refs/tmp/base

# --- drop B with --push -------------------------------------------------------------------
PB=$(pid_of net "$B"); PD=$(pid_of net "$D")
pids net "origin/master..HEAD" | grep -v -e "$PB" -e "$PD" >"$TMP/want"
expect_exit 0 "drop --push of a patch in the middle of net" NB drop "$B" --reason bad --push
cp "$TMP/out" "$TMP/drop.out"
check "the [dropped] mail of a patch with no flag names no flag and answers the posting" \
	$PYTHON - "$W/state/outbox" <<'EOF'
import email, email.policy, glob, json, sys
ms = [json.load(open(p)) for p in glob.glob(sys.argv[1] + "/*.json")]
ms = [n for n in ms if n["kind"] == "dropped" and n["channel"] == "mail"]
assert len(ms) == 1, ms
m = email.message_from_string(ms[0]["body"], policy=email.policy.default)
text = (m.get_body(("plain",)) if m.is_multipart() else m).get_content()
assert "Flag:" not in text and "flag " not in text, text
assert m["X-Nextbot-Flag"] is None, m["X-Nextbot-Flag"]
assert m["In-Reply-To"] == "<20261201-net--add-net-b@example.org>", m["In-Reply-To"]
assert "nextbot." not in str(m["References"]), m["References"]
EOF
NEW=$(git -C "$W/net.git" rev-parse master)
check "the remote branch was rewritten" test "$NEW" != "$OLD_TIP"
check "no commit on the remote has the dropped patch-id" \
	sh -c "! git -C '$W/net.git' log -p master | git patch-id --stable | grep -q '^$PB'"
pids "$W/net.git" "refs/tmp/base..master" >"$TMP/have"
check "the other patches are there with the same patch-ids" cmp -s "$TMP/want" "$TMP/have"
check "three patches are left" test "$(wc -l <"$TMP/have")" -eq 3
check "the later patches have new commit ids" sh -c "
	! git -C '$W/net.git' rev-list refs/tmp/base..master |
	grep -q -e '$(git -C net rev-parse HEAD)' -e '$(git -C net rev-parse HEAD~2)'"
check "the rewritten branch still sits on the base" \
	git -C "$W/net.git" merge-base --is-ancestor refs/tmp/base master
git -C "$W/net.git" log --reverse --format='%an|%s' refs/tmp/base..master >"$TMP/log"
printf '%s\n' "Zoë Ångström|net: add net_a" "Zoë Ångström|net: add net_c" \
	"Zoë Ångström|net: add net_e" >"$TMP/log.want"
check "it keeps the order and the authors" cmp -s "$TMP/log.want" "$TMP/log"
check "the output names the pushed tips" grep -q "pushed net's master without the patch" \
	"$TMP/drop.out"
check "the output names the later patch left out" grep -q \
	"left out $(echo "$D" | cut -c1-12) (\"net: net_b returns 22\"): no longer applies" \
	"$TMP/drop.out"
check "the work repository follows the pushed tip" \
	test "$(git -C "$REPO" rev-parse refs/feeds/net)" = "$NEW"
check "the drop is recorded" $PYTHON - "$W/state/state.json" "$PB" <<'EOF'
import json, sys
drops = json.load(open(sys.argv[1]))["drops"]
assert [d["patch_id"] for d in drops] == [sys.argv[2]], drops
EOF
check "the remote is sound" git -C "$W/net.git" fsck --no-dangling --no-progress

# --- the remote moved after the fetch: refused, nothing pushed ------------------------------
C=$(git -C "$W/net.git" rev-list --reverse refs/tmp/base..master | sed -n 2p)
git_q clone -q "$W/net.git" net2 && cd net2 &&
	patch net/f.c 'int net_f(void) { return 6; }' "net: add net_f" &&
	git push -q origin HEAD:master && cd ..
MOVED=$(git -C "$W/net.git" rev-parse master)
expect_exit 1 "drop --push refuses when the remote moved since the fetch" \
	NB drop "$C" --reason bad --push
check "it says the branch moved and names both ids" \
	grep -q "moved: it is $MOVED, not $NEW as last fetched" "$TMP/err"
check "it says the drop is recorded" grep -q "the drop itself is recorded" "$TMP/err"
check "the remote is unchanged" test "$(git -C "$W/net.git" rev-parse master)" = "$MOVED"
check "the work repository has no leftover push ref" \
	sh -c "! git -C '$REPO' rev-parse -q --verify refs/nextbot/push-src >/dev/null"
check "both drops are recorded" $PYTHON -c "
import json; assert len(json.load(open('$W/state/state.json'))['drops']) == 2"

# --- after the next fetch the same push goes through ----------------------------------------
expect_exit 0 "the next night fetches the moved branch" NB run --date 2026-12-06
PC=$(pid_of "$W/net.git" "$C")
expect_exit 0 "drop --push again after the fetch" NB drop "$C" --push
check "now the remote lacks that patch too" \
	sh -c "! git -C '$W/net.git' log -p master | git patch-id --stable | grep -q '^$PC'"
check "the retry recorded no second drop" $PYTHON -c "
import json; assert len(json.load(open('$W/state/state.json'))['drops']) == 2"
check "it says the patch was already dropped" grep -q "was already dropped" "$TMP/out"
check "and keeps net_f" \
	sh -c "git -C '$W/net.git' log --format=%s master | grep -q 'net: add net_f'"

# --- an unreachable remote: push fails, exit 1, the drop stays recorded ----------------------
mv "$W/net.git" "$W/net.gone"
expect_exit 1 "drop --push to an unreachable remote exits 1" \
	NB drop "$(git -C "$W/net.gone" rev-parse master~1)" --push
check "it says the drop is recorded anyway" grep -q "the drop itself is recorded" "$TMP/err"
mv "$W/net.gone" "$W/net.git"
expect_exit 0 "undrop of the patch whose drop --push was retried" NB undrop "$C"

done_testing
