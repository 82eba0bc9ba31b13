#!/bin/sh
# `nextbot resolve TREE` with the real binary: a conflict left in resolve/ (made here
# by git merge, as a night leaves it) is recorded per hunk under rerere/, keyed as
# git rerere keys it (git's own rr-cache is the oracle); usage errors, markers left,
# edits outside the conflict, nothing to resolve, the lock.
. "$(dirname "$0")/lib.sh"
cd "$TMP" || exit 1

cat >nextbot.yaml <<'EOF'
workdir: state
base: {name: origin, url: "https://example.org/linux.git", branch: master}
trees:
  - {name: t1, url: "https://example.org/t1.git", branch: for-next}
  - {name: t2, url: "https://example.org/t2.git", branch: next}
EOF

# The conflict: git merge with rerere on, so git records its own preimage id.
git_q init -q r
(cd r && git_q config rerere.enabled true && seq 1 30 >f && git_q add f &&
	git_q commit -q -m base && git_q checkout -q -b t2 &&
	sed -i 's/^5$/five-t2/; s/^20$/twenty-t2/' f && git_q commit -q -am t2 &&
	git_q checkout -q master && sed -i 's/^5$/five-t1/; s/^20$/twenty-t1/' f &&
	git_q commit -q -am t1 && git_q merge t2 >/dev/null 2>&1)
check "git left a conflict with two hunks" test "$(grep -c '^<<<<<<< ' r/f)" = 2
mkdir -p state/resolve/t2 state/resolve/t2.orig
cp r/f state/resolve/t2/f
cp r/f state/resolve/t2.orig/f
printf 'tree t2\ndate 2026-05-01\nnext %s\ntip %s\npath f\nother modify/delete g\n' \
	"$(git -C r rev-parse HEAD)" "$(git -C r rev-parse t2)" >state/resolve/t2.meta

expect_exit 2 "resolve needs a tree" "$NEXTBOT" -c nextbot.yaml resolve
expect_exit 2 "resolve takes one tree" "$NEXTBOT" -c nextbot.yaml resolve t1 t2
expect_exit 2 "an unknown tree is a usage error" "$NEXTBOT" -c nextbot.yaml resolve nosuch
check "it names the tree" grep -q "nosuch" "$TMP/err"
expect_exit 1 "nothing to resolve for t1" "$NEXTBOT" -c nextbot.yaml resolve t1
check "says there is no conflict of t1" grep -q "no conflict of t1 to resolve" "$TMP/err"
expect_exit 1 "markers left: refused" "$NEXTBOT" -c nextbot.yaml resolve t2
check "says markers are left" grep -q "f: still has conflict markers" "$TMP/err"
check "nothing recorded" test ! -e state/rerere

# Resolve the first hunk, but touch a line outside the conflicts too: refused.
awk '/^<<<<<<< /{n++; if (n == 1) {print "five-both"; s=1; next}}
     s && /^>>>>>>> /{s=0; next} !s' r/f >state/resolve/t2/f
sed -i 's/^1$/one/' state/resolve/t2/f
sed -i '/^<<<<<<< /,/^>>>>>>> /c\twenty-both' state/resolve/t2/f
expect_exit 1 "an edit outside the conflicts: refused" "$NEXTBOT" -c nextbot.yaml resolve t2
check "says so" grep -q "edit only the conflicts" "$TMP/err"
check "still nothing recorded" test ! -e state/rerere

sed -i 's/^one$/1/' state/resolve/t2/f
expect_exit 0 "resolve t2" "$NEXTBOT" -c nextbot.yaml resolve t2
check "reports the hunks recorded" grep -qx "Recorded resolution for 'f' (2 hunks)." "$TMP/out"
check "reports what it cannot remember" grep -q "Not recorded: modify/delete g" "$TMP/out"
check "two records" test "$(ls state/rerere | wc -l)" = 2
for d in state/rerere/*; do
	printf '%s\n' "$(cat "$d/preimage")" >>"$TMP/pre"
	cat "$d/postimage" >>"$TMP/post"
done
check "preimages are normalised (sides sorted, labels gone)" sh -c "grep -c '^<<<<<<<\$' '$TMP/pre' | grep -qx 2 && grep -q '^five-t1\$' '$TMP/pre' && ! grep -q 'HEAD' '$TMP/pre'"
check "postimages are the resolutions" sh -c "sort '$TMP/post' | tr '\n' ' ' | grep -qx 'five-both twenty-both '"
check "records say file and tree" grep -qx "tree t2" state/rerere/*/meta

# Oracle: for a one-hunk conflict our id is git rerere's (git hashes all hunks of a file).
git_q init -q r1
(cd r1 && git_q config rerere.enabled true && seq 1 9 >f && git_q add f &&
	git_q commit -q -m base && git_q checkout -q -b side && sed -i 's/^5$/five-t2/' f &&
	git_q commit -q -am side && git_q checkout -q master && sed -i 's/^5$/five-t1/' f &&
	git_q commit -q -am main && git_q merge side >/dev/null 2>&1)
gitid=$(ls r1/.git/rr-cache)
check "git rerere's id for five-t1/five-t2 is one of ours" test -d "state/rerere/$gitid"

# The lock: a writer holds it, resolve exits 1 at once.
$PYTHON -c '
import fcntl, os, time
fd = os.open("state/lock", os.O_RDWR | os.O_CREAT)
fcntl.flock(fd, fcntl.LOCK_EX)
open("state/held", "w").close()
time.sleep(5)' &
holder=$!
while [ ! -e state/held ]; do sleep 0.1; done
expect_exit 1 "the lock is held" "$NEXTBOT" -c nextbot.yaml resolve t2
kill "$holder" 2>/dev/null; wait "$holder" 2>/dev/null
done_testing
