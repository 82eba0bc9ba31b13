#!/bin/sh
# nextbot sim: a 10-day world with seed 1, checked with git and make as oracles
# (the defects it injects are where truth.json says, with the patch-ids git computes).
. tests/lib.sh

W=$TMP/w
C=$TMP/c
export GIT_CONFIG_NOSYSTEM=1 HOME=$TMP
git config --global user.name t
git config --global user.email t@example.org
git config --global advice.detachedHead false

start=$(date +%s)
expect_exit 0 "sim init" "$NEXTBOT" -q sim init "$W" --seed 1
expect_exit 2 "sim init refuses an existing world" "$NEXTBOT" -q sim init "$W"
expect_exit 2 "sim advance wants a directory" "$NEXTBOT" -q sim advance
expect_exit 1 "sim advance of no world fails" "$NEXTBOT" -q sim advance "$TMP/nothing"
check "nextbot.yaml, truth.json and the bare repos exist" \
	test -f "$W/nextbot.yaml" -a -f "$W/truth.json" -a -d "$W/remotes/mainline.git" \
	-a -d "$W/remotes/mm.git" -a -d "$W/remotes/net-next.git" -a -d "$W/remotes/vfs.git" \
	-a -d "$W/remotes/sched.git"
check "the config never merges mm-unstable, watches it, names the remotes beside itself" \
	sh -c "grep -q 'never_merge: \[mm-unstable\]' '$W/nextbot.yaml' &&
	       grep -q 'url: \"./remotes/mainline.git\"' '$W/nextbot.yaml' &&
	       ! sed -n '/^trees:/,/^[a-z]/p' '$W/nextbot.yaml' | grep -q 'name: mm-unstable' &&
	       sed -n '/^watch:/,/^[a-z]/p' '$W/nextbot.yaml' | grep -q 'name: mm-unstable' &&
	       '$NEXTBOT' -q -c '$W/nextbot.yaml' check-config >/dev/null"
# the compiler cache: on where check-config accepts it (bwrap is installed), --no-cache off
if command -v bwrap >/dev/null 2>&1 || [ -x /usr/bin/bwrap ]; then
	check "bwrap is here: the config turns the compiler cache on" \
		grep -qx 'runner: {cache: {max: 5G}}' "$W/nextbot.yaml"
else
	check "no bwrap here: the config leaves the compiler cache off" \
		sh -c "! grep -q '^runner:' '$W/nextbot.yaml'"
fi
expect_exit 0 "sim init --no-cache" "$NEXTBOT" -q sim init "$TMP/w0" --seed 1 --no-cache
check "--no-cache: no runner key, check-config accepts the config, the same world" \
	sh -c "! grep -q '^runner:' '$TMP/w0/nextbot.yaml' &&
	       '$NEXTBOT' -q -c '$TMP/w0/nextbot.yaml' check-config >/dev/null &&
	       test \"\$(git ls-remote '$TMP/w0/remotes/mm.git')\" = \"\$(git ls-remote '$W/remotes/mm.git')\""
expect_exit 2 "sim advance refuses --no-cache" "$NEXTBOT" -q sim advance "$W" --no-cache

git_q init -q "$C"
for r in mainline mm net-next vfs sched; do
	git -C "$C" remote add "$r" "file://$W/remotes/$r.git"
done
fetch() { git -C "$C" fetch -q --all --prune --force 2>/dev/null; }
fetch
ref_of() { # branch -> remote-tracking ref
	case $1 in
	master) echo mainline/master ;;
	mm-*) echo "mm/$1" ;;
	*) echo "$1/$1" ;;
	esac
}
commit_of() { # branch msgid -> the commit carrying that Message-ID
	git -C "$C" log --format=%H -F --grep="lore.kernel.org/r/$2" "$(ref_of "$1")" | head -1
}
patch_id_of() {
	git -C "$C" diff-tree -p --no-renames "$1^" "$1" | git patch-id --stable | cut -d' ' -f1
}
co() { git -C "$C" checkout -q -f --detach "$1" && git -C "$C" clean -q -fdx; }
# on: checks out keeping the last build's objects, so the next make is incremental (the
# project's Makefile makes every object depend on every header, the tests on the
# library): the second build of a pair costs what the patch changed, as in a clean tree.
on() { git -C "$C" checkout -q -f --detach "$1"; }
mk() { make -C "$C" -s "$@" >"$TMP/make.log" 2>&1; }

# Lists today's live defects: id kind branch-list msgid patch_id partner_msgid
live_defects() {
	$PYTHON - "$W/truth.json" <<'EOF'
import json, sys
t = json.load(open(sys.argv[1]))
for d in t["defects"]:
    if d["dropped"] or not d["branches"]:
        continue
    p = d["partner"] or {}
    print(d["id"], d["kind"], ",".join(d["branches"]), d["message_id"], d["patch_id"],
          p.get("message_id", "-"), p.get("patch_id", "-"))
EOF
}

seen=" "
pid_bad=0
pid_checked=0
for day in 1 2 3 4 5 6 7 8 9 10; do
	"$NEXTBOT" -q sim advance "$W" || not_ok "sim advance day $day"
	fetch
	if [ $day = 4 ] || [ $day = 5 ]; then
		git -C "$C" log --format=%H mm/mm-stable..mm/mm-next >"$TMP/ids.$day"
		git -C "$C" log -p --no-renames mm/mm-stable..mm/mm-next | git patch-id --stable |
			sort >"$TMP/pids.$day"
	fi
	live_defects >"$TMP/live"
	while read -r id kind branches msgid pid pmsgid ppid; do
		for b in $(echo "$branches" | tr , ' '); do
			c=$(commit_of "$b" "$msgid")
			pid_checked=$((pid_checked + 1))
			if [ -z "$c" ] || [ "$(patch_id_of "$c")" != "$pid" ]; then
				pid_bad=$((pid_bad + 1))
				echo "# day $day defect $id: $b: commit '$c' patch-id differs"
			fi
		done
		case "$seen" in *" $kind "*) continue ;; esac
		case $branches in mm-unstable) continue ;; esac
		b=${branches%%,*}
		c=$(commit_of "$b" "$msgid")
		case $kind in
		build)
			co "$c^" && mk && on "$c" && ! mk && grep -q 'error:' "$TMP/make.log" &&
				ok "day $day: build defect $id fails make, its parent builds" &&
				seen="$seen$kind " && sed -n '/error:/{p;q}' "$TMP/make.log" | sed 's/^/# /'
			;;
		test)
			co "$c^" && mk test && on "$c" && mk && ! mk test &&
				grep -q 'FAIL:' "$TMP/make.log" &&
				ok "day $day: test defect $id builds, fails make test; its parent passes" &&
				seen="$seen$kind " && grep FAIL: "$TMP/make.log" | sed 's/^/# /'
			;;
		flaky)
			co "$c" && mk test
			fails=0
			for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
				for t in "$C"/tests/test_*_chunks*; do
					case $t in *.c | *.o) continue ;; esac
					"$t" >/dev/null 2>&1 || { fails=$((fails + 1)); break; }
				done
			done
			echo "# flaky defect $id: $fails of 20 runs failed"
			if [ $fails -gt 0 ] && [ $fails -lt 20 ]; then
				ok "day $day: flaky defect $id fails some runs only"
				seen="$seen$kind "
			fi
			;;
		conflict | semantic)
			[ "$pmsgid" = - ] && continue
			pb=$(echo "$branches" | cut -d, -f1)
			pc=""
			for r in mm/mm-next net-next/net-next vfs/vfs sched/sched; do
				pc=$(git -C "$C" log --format=%H -F --grep="r/$pmsgid" "$r" | head -1)
				[ -n "$pc" ] && break
			done
			[ -n "$pc" ] || { not_ok "day $day: partner of $id not found"; continue; }
			if [ "$ppid" != "$(patch_id_of "$pc")" ]; then
				not_ok "day $day: partner patch-id of $id differs"
			fi
			if [ $kind = conflict ]; then
				co "$pc" && ! git -C "$C" merge -q --no-edit "$c" >"$TMP/merge.log" 2>&1 &&
					grep -q CONFLICT "$TMP/merge.log" &&
					ok "day $day: conflict pair $id conflicts under git merge" &&
					seen="$seen$kind "
				git -C "$C" merge --abort 2>/dev/null
			else
				co "$c" && mk && on "$pc" && mk &&
					git -C "$C" merge -q --no-edit "$c" >/dev/null 2>&1 && ! mk &&
					grep -q 'error:' "$TMP/make.log" &&
					ok "day $day: semantic pair $id builds alone, fails merged" &&
					seen="$seen$kind " &&
					sed -n '/error:/{p;q}' "$TMP/make.log" | sed 's/^/# /'
			fi
			;;
		esac
	done <"$TMP/live"
done
end=$(date +%s)
echo "# init and 10 days (with checks) took $((end - start)) s"

for k in build test flaky conflict semantic; do
	case "$seen" in *" $k "*) ok "a $k defect sat in a merged tree and behaved" ;;
	*) not_ok "no $k defect was seen in a merged tree" ;; esac
done
check "recorded patch-ids equal git patch-id on every listed branch ($pid_checked checked)" \
	test "$pid_bad" = 0 -a "$pid_checked" -gt 5

check "truth.json holds all five kinds and its schema" $PYTHON - "$W/truth.json" <<'EOF'
import json, sys
t = json.load(open(sys.argv[1]))
assert t["seed"] == 1 and t["days"] == 10, t
kinds = {d["kind"] for d in t["defects"]}
assert kinds == {"build", "test", "flaky", "conflict", "semantic"}, kinds
keys = {"id", "day", "kind", "trees", "branches", "subject", "patch_id", "message_id",
        "author", "partner", "dropped", "maintainers"}
for d in t["defects"]:
    assert set(d) == keys, set(d) ^ keys
    assert len(d["patch_id"]) == 40 and "@" in d["message_id"] and "<" in d["author"]
    assert (d["partner"] is None) == (d["kind"] not in ("conflict", "semantic"))
    assert d["dropped"] == (not d["branches"])
    assert (d["maintainers"] == []) == (d["kind"] == "flaky"), d
m = t["maintainers"]
assert len(m["absent"]) == 3 and m["orphans"] == ["NB TUNABLES"], m
EOF

# Journeys (issue 31): the world's own stream is the one it was before journeys were
# added (seed 1's defects, their days, trees, patch-ids and Message-IDs are pinned);
# review trailers, versions and moves come from a stream of their own.
check "seed 1 keeps the defects it had before journeys" $PYTHON - "$W/truth.json" <<'EOF'
import hashlib, json, sys
ds = json.load(open(sys.argv[1]))["defects"]
s = "\n".join("%d %d %s %s %s %s %s" % (d["id"], d["day"], d["kind"], ",".join(d["trees"]),
                                        d["patch_id"], d["message_id"], d["dropped"])
              for d in ds)
assert hashlib.sha1(s.encode()).hexdigest() == "9949f0f121f260c16a456a93142ab9eacd710b60", s
EOF
# Every patch still in a branch: its commit there (found by the Link of its latest
# version) carries the reviews truth.json lists, as git interpret-trailers reads them,
# and its versions' patch-ids are git's.
$PYTHON - "$W/truth.json" >"$TMP/journeys" <<'EOF'
import json, sys
t = json.load(open(sys.argv[1]))
for p in t["patches"]:
    e = p["events"][-1]
    if e["event"] in ("removed", "merged"):
        continue
    revs = ",".join(sorted(r["trailer"] + ":" + r["email"] for r in p["reviews"])) or "-"
    print(e["branch"], p["message_id"], p["patch_id"], revs)
EOF
# git as the oracle, a few processes a branch (not ten a patch): each branch's log with
# its messages and trailers as git parses them (%(trailers:only,unfold) is
# `git interpret-trailers --parse`), and git patch-id over its log -p.
for b in $(cut -d' ' -f1 "$TMP/journeys" | sort -u); do
	git -C "$C" log -z --format='%H%n%(trailers:only,unfold)%x1f%B' "$(ref_of "$b")" \
		>"$TMP/log.$b"
	git -C "$C" log -p --no-renames --no-merges --format='commit %H' "$(ref_of "$b")" |
		git patch-id --stable >"$TMP/pids.$b"
done
$PYTHON - "$TMP" "$TMP/journeys" >"$TMP/journeys.got" <<'EOF2'
import re, sys
tmp = sys.argv[1]
logs, pids = {}, {}
for line in open(sys.argv[2]):
    b, msgid, pid, revs = line.split()
    if b not in logs:
        logs[b] = []
        for e in open("%s/log.%s" % (tmp, b), encoding="utf-8").read().split("\0"):
            if e.strip():
                h, rest = e.lstrip("\n").split("\n", 1)
                trailers, body = rest.split("\x1f", 1)
                logs[b].append((h, trailers, body))
        pids[b] = dict(l.split()[::-1] for l in open("%s/pids.%s" % (tmp, b)) if l.strip())
    c = next((h for h, t, body in logs[b] if "lore.kernel.org/r/" + msgid in body), "")
    t = next((t for h, t, body in logs[b] if h == c), "")
    got = ",".join(sorted(m.group(1) + ":" + m.group(2) for m in
                          (re.match(r"^(Reviewed-by|Acked-by): .*<(.*)>$", l)
                           for l in t.split("\n")) if m))
    print(b, msgid, c or "-", got or "-", revs, pids[b].get(c, "-") if c else "-", pid)
EOF2
rev_bad=0
rev_checked=0
while read -r b msgid c got revs cpid pid; do
	[ "$c" = - ] && c=
	# a merge commit has no patch-id in log -p: its diff against the first parent then
	[ -n "$c" ] && [ "$cpid" = - ] && cpid=$(patch_id_of "$c")
	rev_checked=$((rev_checked + 1))
	if [ -z "$c" ] || [ "$got" != "$revs" ] || [ "$cpid" != "$pid" ]; then
		rev_bad=$((rev_bad + 1))
		echo "# $b $msgid: commit '$c' reviews '$got' (truth '$revs')"
	fi
done <"$TMP/journeys.got"
check "reviews and patch-ids in truth.json are those of the branches ($rev_checked patches)" \
	test "$rev_bad" = 0 -a "$rev_checked" -gt 10
check "truth.json's patches: journeys, versions, reviews of every sort" \
	$PYTHON - "$W/truth.json" <<'EOF'
import json, sys
t = json.load(open(sys.argv[1]))
ps = t["patches"]
keys = {"id", "patch_id", "message_id", "subject", "author", "versions", "events", "reviews"}
for p in ps:
    assert set(p) == keys, set(p) ^ keys
    assert p["events"][0]["event"] == "added", p
    assert p["message_id"] == p["versions"][-1]["message_id"]
    assert len({v["message_id"] for v in p["versions"]}) == len(p["versions"]), p
    assert sum(e["event"] == "replaced" for e in p["events"]) == len(p["versions"]) - 1, p
    for e in p["events"]:
        assert (e["from"] is not None) == (e["event"] == "moved"), e
events = {e["event"] for p in ps for e in p["events"]}
assert events == {"added", "moved", "replaced", "removed", "merged"}, events
author = lambda p: p["author"]["email"]
assert any(not p["reviews"] for p in ps)
assert any(p["reviews"] and all(r["email"] == author(p) for r in p["reviews"]) for p in ps)
assert any(any(r["email"] != author(p) for r in p["reviews"]) for p in ps)
assert {r["trailer"] for p in ps for r in p["reviews"]} == {"Reviewed-by", "Acked-by"}
vs = [(a, b) for p in ps for a, b in zip(p["versions"], p["versions"][1:])]
assert any(a["patch_id"] != b["patch_id"] for a, b in vs), "no version changed the code"
assert any(a["patch_id"] == b["patch_id"] for a, b in vs), "no version kept the code"
moves = {(e["from"], e["branch"]) for p in ps for e in p["events"] if e["event"] == "moved"}
assert ("mm-unstable", "mm-next") in moves and ("mm-next", "mm-stable") in moves, moves
EOF

check "mm-next commit ids differ between day 4 and day 5" \
	sh -c "! grep -qxFf '$TMP/ids.4' '$TMP/ids.5' && test -s '$TMP/ids.5'"
cut -d' ' -f1 "$TMP/pids.4" | sort >"$TMP/p4"
cut -d' ' -f1 "$TMP/pids.5" | sort >"$TMP/p5"
check "mm-next patch-ids persist from day 4 to day 5" \
	test "$(comm -12 "$TMP/p4" "$TMP/p5" | wc -l)" -ge 3

git -C "$C" log mm/mm-next -12 >"$TMP/mmlog"
check "mm-next's log shows authors, Signed-off-by and Link trailers" \
	sh -c "grep -q '^Author: ' '$TMP/mmlog' && grep -q 'Signed-off-by: ' '$TMP/mmlog' &&
	       grep -q 'Link: https://lore.kernel.org/r/' '$TMP/mmlog' &&
	       grep -q 'Signed-off-by: Andrea Morten' '$TMP/mmlog'"
check "authors include non-ASCII names" \
	sh -c "git -C '$C' log --all --format=%an | grep -q -e 'Jörg Rödel' -e 'Zoë Ångström' -e '李雷'"
check "mainline absorbed a tree (merge commits)" \
	test "$(git -C "$C" rev-list --merges --count mainline/master)" -ge 1

branches_ok=1
for r in $(git -C "$C" for-each-ref --format='%(refname:short)' refs/remotes); do
	co "$r" || branches_ok=0
done
check "every branch checks out" test $branches_ok = 1
co mainline/master
check "the base builds and passes make test" mk test

# The same commands again, played as one --days 10, give the same world.
W2=$TMP/w2
"$NEXTBOT" -q sim init "$W2" --seed 1 && "$NEXTBOT" -q sim advance "$W2" --days 10
same=1
for r in mainline mm net-next vfs sched; do
	a=$(git ls-remote "$W/remotes/$r.git")
	b=$(git ls-remote "$W2/remotes/$r.git")
	[ -n "$a" ] && [ "$a" = "$b" ] || same=0
done
check "seed 1 twice gives identical branch tips" test $same = 1
check "seed 1 twice gives the same truth.json" cmp -s "$W/truth.json" "$W2/truth.json"
"$NEXTBOT" -q sim init "$TMP/w3" --seed 2 && "$NEXTBOT" -q sim init "$TMP/w4" --seed 1
check "another seed gives another world" \
	test "$(git ls-remote "$TMP/w3/remotes/mm.git")" != "$(git ls-remote "$TMP/w4/remotes/mm.git")"

# --history N: N commits under the initial import; the world's days are the same.
W5=$TMP/w5
"$NEXTBOT" -q sim init "$W5" --seed 1 --history 300 && "$NEXTBOT" -q sim advance "$W5" --days 2
W4=$TMP/w4
"$NEXTBOT" -q sim advance "$W4" --days 2
M5=$W5/remotes/mainline.git
check "--history 300: the mainline's first day has 301 commits, linear, fsck-clean" \
	sh -c "test \$(git -C '$M5' rev-list --count --first-parent master) -ge 301 &&
	       test \$(git -C '$M5' rev-list --count master~0 --max-parents=0) = 1 &&
	       git -C '$M5' fsck --strict --no-dangling >/dev/null 2>&1"
check "--history 300: the import's tree and today's trees are those without history" \
	sh -c "test \$(git -C '$M5' rev-parse 'master^{tree}') = \
		    \$(git -C '$W4/remotes/mainline.git' rev-parse 'master^{tree}') &&
	       test \$(git -C '$W5/remotes/mm.git' rev-parse 'mm-next^{tree}') = \
		    \$(git -C '$W4/remotes/mm.git' rev-parse 'mm-next^{tree}')"
expect_exit 2 "sim init refuses --history -1" "$NEXTBOT" -q sim init "$TMP/w6" --history -1

done_testing
