#!/bin/sh
# Every sentence true (issue 38): a second season, of seed 7 (SEED=, NIGHTS= for
# others; 20 nights in make check), with journeys on every tree, a hold gate on
# mm-next and a journey list per tree (mm-next's own, the other mm trees' one, none
# for the rest).  t945 plays seed 1 with one list and digests.
#  - every night (tests/journeys.py story): each journey mail states a change of the
#    patch's state that happened (its store, `nextbot patch --json`, `status --json`
#    and next itself agree), none is missing, released only into next, review-missing
#    never beside [held], the night's mails in story order (moves, the gate, the
#    rest, the summary last);
#  - every journey event of truth.json has its one notice, to the patch's people and
#    the list of each tree it concerns, and no other list (tests/journeys.py notices).
. tests/lib.sh

NIGHTS=${NIGHTS:-20}
SEED=${SEED:-7}
W=$TMP/w
LISTS="mm-next=mm-next-commits@lists.example.org,mm-*=mm-commits@lists.example.org"
"$NEXTBOT" -q sim init "$W" --seed "$SEED" --no-cache ||
	{ not_ok "sim init"; done_testing; exit 1; }
$PYTHON - "$W/nextbot.yaml" <<'PYEOF'
import re, sys
p = sys.argv[1]
s = open(p).read()
s = re.sub(r"build:\n(  - .*\n)+test:\n(  - .*\n)+", "build: []\ntest: []\n", s)
s += ("journey:\n  trees: ['*']\n  list: {mm-next: mm-next-commits@lists.example.org,\n"
      "         'mm-*': mm-commits@lists.example.org}\n"
      "review_gate:\n  - {trees: [mm-next], policy: hold}\n")
open(p, "w").write(s)
PYEOF
mkdir -p "$TMP/nights"
failed=0
start=$(date +%s)
i=0
while [ $i -le "$NIGHTS" ]; do
	if [ $i -gt 0 ] && ! "$NEXTBOT" -q sim advance "$W"; then
		failed=1
		break
	fi
	d=$(date -u -d "2025-01-06 +$i days" +%F)
	ls "$W/state/outbox" 2>/dev/null | sort >"$TMP/before"
	cp "$W/state/journeys.txt" "$TMP/prev.txt" 2>/dev/null || rm -f "$TMP/prev.txt"
	"$NEXTBOT" -q -c "$W/nextbot.yaml" run --date "$d" || failed=1
	ls "$W/state/outbox" | sort | comm -13 "$TMP/before" - >"$TMP/nights/night.$i"
	$PYTHON tests/journeys.py story "$W" $i "$TMP/nights/night.$i" "$TMP/prev.txt" \
		"$NEXTBOT" >>"$TMP/story.out" || echo $i >>"$TMP/story.failed"
	i=$((i + 1))
done
echo "# $NIGHTS nights in $(($(date +%s) - start)) s"
check "every night ran" test $failed = 0
check "every night's journey mails say what changed, all of it, in story order" \
	sh -c "test ! -e '$TMP/story.failed' ||
		{ grep -v '^# day [0-9]*: [0-9]* mails, ' '$TMP/story.out' | head -20; false; }"
check "some night held patches and some released them (the gate was tried)" \
	sh -c "grep '^# day [0-9]*: [0-9]* mails, ' '$TMP/story.out' | grep -qv ', 0 held, ' &&
		grep '^# day [0-9]*: [0-9]* mails, ' '$TMP/story.out' | grep -qv ', 0 released\$'"
check "every journey event has its one notice, to its people and its trees' lists alone" \
	$PYTHON tests/journeys.py notices "$W" "$TMP/nights" "$LISTS"
check "check-config shows the lists per tree and the gate's follow" sh -c "
	'$NEXTBOT' --json -c '$W/nextbot.yaml' check-config | $PYTHON -c 'import json, sys
c = json.load(sys.stdin)
assert c[\"journey\"][\"list\"][\"mm-next\"] == \"mm-next-commits@lists.example.org\", c
assert c[\"review_gate\"][0][\"follow\"] is True, c'"
done_testing
