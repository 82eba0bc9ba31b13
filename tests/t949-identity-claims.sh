#!/bin/sh
# Identities that cannot be borrowed (issue 38): a patch is its patch-id and author; a
# Message-ID in a commit is a claim.  Mallory's patches carry the Link: of Ann's
# reviewed patch in another tree: one is dropped (Ann's stays in next, her journey is
# not "dropped"), one is unreviewed in a hold-gated tree (held: Ann's review is not
# its own), and neither takes Ann's journey.  Honest cases: a maintainer's rebase that
# adds a review keeps the patch (same patch-id); a changed patch under its own
# Message-ID by its own author is a new version.  `#nextbot drop` in answer to a
# [held] mail drops that thread's patch without an id.  review_gate.verify: mail: a
# trailer counts once its reviewer's own mail carrying it answered the patch's thread.
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
printf 'int main(void) { return 0; }\n' >main.c
git_q add -A && git_q commit -qm "initial" && cd ..
git_q clone -q mainline vfs
git_q clone -q mainline mm

# patch REPO WHO FILE CONTENT SUBJECT MSGID [TRAILER]: a commit by WHO (ann|mallory)
patch() {
	case $2 in
	ann) n="Ann Author" e=ann@example.org ;;
	*) n="Mallory" e=mallory@example.org ;;
	esac
	mkdir -p "$(dirname "$W/src/$1/$3")"
	printf '%s\n' "$4" >"$W/src/$1/$3"
	git -C "$W/src/$1" add -A
	git -C "$W/src/$1" -c user.name="$n" -c user.email=$e commit -qm "$5

Why $5.

Signed-off-by: $n <$e>
${7:+$7
}Link: https://lore.kernel.org/r/$6"
}
REV="Reviewed-by: Rev Iewer <rev@example.org>"
ANN=20261201-ann-1@example.org
patch vfs ann fs/a.c 'int fs_a(void) { return 1; }' "fs: add fs_a" $ANN "$REV"
patch mm mallory mm/x.c 'int mm_x(void) { return 2; }' "mm: add mm_x" $ANN "$REV"
patch mm mallory mm/y.c 'int mm_y(void) { return 3; }' "mm: add mm_y" $ANN
patch mm ann mm/own.c 'int mm_own(void) { return 4; }' "mm: add mm_own" \
	20261201-own-1@example.org "$REV"
for r in mainline vfs mm; do git clone -q --bare "$W/src/$r" "$W/$r.git"; done
push() { git -C "$W/src/$1" push -q -f "$W/$1.git" HEAD:master; }

cat >"$W/nextbot.yaml" <<EOF
workdir: state
base: {name: origin, url: "file://$W/mainline.git", branch: master}
trees:
  - {name: vfs, url: "file://$W/vfs.git", branch: master,
     contacts: ["Vic <vic@example.org>"]}
  - {name: mm-next, url: "file://$W/mm.git", branch: master,
     contacts: ["Andrea Morten <andrea@example.org>"]}
build:
  - {name: build, command: make, timeout: 60}
bisect: {confirm: 1, jobs: 1}
notify: {from: "nextbot <nextbot@example.org>", list: "list@example.org"}
journey: {trees: [vfs, mm-next]}
review_gate:
  - {trees: [mm-next], policy: hold, verify: trailers}
inbox: {max_tests: 0}
EOF
NB() { "$NEXTBOT" -q -c "$W/nextbot.yaml" "$@"; }
in_next() { git -C "$W/state/repo.git" cat-file -e "refs/heads/next:$1" 2>/dev/null; }
state_of() { # the subject's journey state(s), one a line
	NB --json patch "$1" | $PYTHON -c 'import json, sys
for p in json.load(sys.stdin)["patches"]:
    if p["subject"] == sys.argv[1]: print(p["state"])' "$1"
}

expect_exit 0 "night 1 runs" NB run --date 2026-12-05
check "night 1: Ann's patch is in next" in_next fs/a.c
check "night 1: Mallory's reviewed claim is in next" in_next mm/x.c
check "night 1: Mallory's unreviewed claim is held: Ann's review is not its review" \
	sh -c "! git -C '$W/state/repo.git' cat-file -e refs/heads/next:mm/y.c 2>/dev/null"
check "night 1: the claim is a patch of its own, held" test "$(state_of 'mm: add mm_y')" = held
check "night 1: Ann's patch keeps its own journey (in next, one event)" $PYTHON - \
	"$(NB --json patch 'fs: add fs_a')" <<'EOF'
import json, sys
ps = [p for p in json.loads(sys.argv[1])["patches"] if p["subject"] == "fs: add fs_a"]
assert len(ps) == 1, ps
assert ps[0]["state"] == "in-next", ps[0]
assert [e["event"] for e in ps[0]["events"]] == ["added"], ps[0]["events"]
assert [v["commit"] for v in ps[0]["versions"]].__len__() == 1, ps[0]["versions"]
EOF
X=$(git -C "$W/src/mm" rev-parse HEAD~2)
expect_exit 0 "the maintainer drops Mallory's mm_x" NB drop "$X" --reason "bad"
# night 2 also brings Ann's unreviewed mm_z: held, with a [held] mail
patch mm ann mm/z.c 'int mm_z(void) { return 5; }' "mm: add mm_z" 20261201-z-1@example.org
push mm
expect_exit 0 "night 2 runs" NB run --date 2026-12-06
check "night 2: mm_x is out of next" sh -c "! git -C '$W/state/repo.git' cat-file -e \
	refs/heads/next:mm/x.c 2>/dev/null"
check "night 2: Ann's patch is still in next" in_next fs/a.c
check "night 2: Ann's journey is not dropped" test "$(state_of 'fs: add fs_a')" = in-next
check "night 2: mm_x is the dropped one" test "$(state_of 'mm: add mm_x')" = dropped

HELD=$($PYTHON - "$W/state/outbox" <<'EOF'
import glob, json, sys
for f in glob.glob(sys.argv[1] + "/*.json"):
    n = json.load(open(f))
    if n["kind"] == "held" and n["channel"] == "mail" and "mm_z" in n["subject"]:
        print("<nextbot.%s@example.org>" % n["id"])
EOF
)
check "night 2: a [held] mail for mm_z" test -n "$HELD"
{
	printf 'From: Andrea Morten <andrea@example.org>\nTo: nextbot <nextbot@example.org>\n'
	printf 'Subject: Re: [held] mm: add mm_z\nMessage-ID: <andrea-1@example.org>\n'
	printf 'In-Reply-To: %s\nReferences: <20261201-z-1@example.org> %s\n\n' "$HELD" "$HELD"
	printf 'Not this one.\n\n#nextbot drop\n'
} >"$TMP/drop-held.eml"
expect_exit 0 "the maintainer's drop in answer to the [held] mail is handled" \
	sh -c "'$NEXTBOT' -q -c '$W/nextbot.yaml' mail-in <'$TMP/drop-held.eml'"
check "... and drops that thread's patch, without an id" $PYTHON - "$W/state/state.json" <<'EOF'
import json, sys
d = [d for d in json.load(open(sys.argv[1]))["drops"] if d["active"]]
assert sorted(x["subject"] for x in d) == ["mm: add mm_x", "mm: add mm_z"], d
assert [x["by"] for x in d if x["subject"] == "mm: add mm_z"] == ["andrea@example.org"], d
EOF

# night 3: honest cases: Ann's own mm patch changed in place (her Message-ID, her
# name) is a new version; Vic's rebase adding a tag keeps Ann's vfs patch as it is
git -C "$W/src/mm" reset -q --hard HEAD~2
patch mm ann mm/own.c 'int mm_own(void) { return 44; }' "mm: add mm_own" \
	20261201-own-1@example.org "$REV"
push mm
git -C "$W/src/vfs" -c user.name=Vic -c user.email=vic@example.org commit -q --amend \
	-m "$(git -C "$W/src/vfs" log -1 --format=%B)
Acked-by: Vic <vic@example.org>"
push vfs
expect_exit 0 "night 3 runs" NB run --date 2026-12-07
check "night 3: Ann's changed mm patch is a new version, not a claim" $PYTHON - \
	"$(NB --json patch 'mm: add mm_own')" <<'EOF'
import json, sys
ps = [p for p in json.loads(sys.argv[1])["patches"] if p["subject"] == "mm: add mm_own"]
assert len(ps) == 1, ps
assert [e["event"] for e in ps[0]["events"]][-1] == "replaced", ps[0]["events"]
EOF
check "night 3: Ann's rebased vfs patch is the same patch, still in next" $PYTHON - \
	"$(NB --json patch 'fs: add fs_a')" <<'EOF'
import json, sys
ps = [p for p in json.loads(sys.argv[1])["patches"] if p["subject"] == "fs: add fs_a"]
assert len(ps) == 1 and ps[0]["state"] == "in-next", ps
assert "replaced" not in [e["event"] for e in ps[0]["events"]], ps[0]["events"]
EOF
# nights 4-6: review_gate.verify: mail (the default with an inbox): Rev's trailer on
# mm_own counts once Rev's own mail carrying it answered the patch's thread; a mail
# by someone else carrying Rev's trailer does not make it count
sed -i 's/, verify: trailers}/}/' "$W/nextbot.yaml"
expect_exit 0 "night 4 runs (verify: mail)" NB run --date 2026-12-08
NB --json patch 'mm: add mm_own' >"$TMP/own4.json"
check "night 4: mm_own's review is unverified: held, and it says so" $PYTHON - "$TMP/own4.json" <<'EOF'
import json, sys
p = [p for p in json.load(open(sys.argv[1]))["patches"] if p["subject"] == "mm: add mm_own"][0]
assert p["state"] == "held", p
assert "unverified" in p["held"], p["held"]
EOF
review() { # FILE FROM MSGID: a mail carrying Rev's trailer in mm_own's thread
	{
		printf 'From: %s\nTo: list@example.org\nSubject: Re: [PATCH] mm: add mm_own\n' "$2"
		printf 'Message-ID: %s\nIn-Reply-To: <20261201-own-1@example.org>\n' "$3"
		printf 'References: <20261201-own-1@example.org>\n\nLooks good.\n\n'
		printf 'Reviewed-by: Rev Iewer <rev@example.org>\n'
	} >"$TMP/$1"
}
review eve.eml "Eve <eve@example.com>" "<eve-1@example.com>"
expect_exit 0 "a stranger's mail carrying Rev's trailer is handled" \
	sh -c "'$NEXTBOT' -q -c '$W/nextbot.yaml' mail-in <'$TMP/eve.eml'"
expect_exit 0 "night 5 runs" NB run --date 2026-12-09
check "night 5: still held: the trailer was not Rev's own mail" \
	test "$(state_of 'mm: add mm_own')" = held
review rev.eml "Rev Iewer <rev@example.org>" "<rev-1@example.org>"
expect_exit 0 "Rev's own review mail is handled" \
	sh -c "'$NEXTBOT' -q -c '$W/nextbot.yaml' mail-in <'$TMP/rev.eml'"
check "... and kept in state" $PYTHON - "$W/state/state.json" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
assert s["version"] == 2, s["version"]
r = s["reviews"]
assert [(x["by"], x["kind"], x["thread"]) for x in r] == \
    [("rev@example.org", "Reviewed-by", ["<20261201-own-1@example.org>"] * 2)], r
EOF
expect_exit 0 "night 6 runs" NB run --date 2026-12-10
check "night 6: mm_own's review is verified: in next" in_next mm/own.c
done_testing
