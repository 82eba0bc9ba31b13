#!/bin/sh
# Flags follow the truth, on a small world of real remotes and a shell "build"
# (five nights, seconds):
#  - night 1: a build break in net and a semantic conflict (drv calls what api
#    renames) are flagged and reverted;
#  - night 2: net is left out (a conflict): its flag gets no reminder, the summary
#    says it is not in tonight's next and names net and vfs (at an older tip) with
#    their reasons; the semantic flag, seen again, is reminded in the threads of
#    its first mails;
#  - night 3: the base is broken (nothing merged), net was rebased without its
#    culprit and api dropped the rename: both flags are resolved all the same
#    ("left-tree"), with one resolved notice each;
#  - night 4: nothing more is said of them;
#  - night 5: api brings the rename back (the same patch-id): the flag is found
#    again and said to be back, in its threads.
# After every night, tests/season.py's checks (follow, remind, summary) hold too.
. "$(dirname "$0")/lib.sh"
SEASON=$(cd "$(dirname "$0")" && pwd)/season.py
export NEXTBOT

W=$TMP/world
mkdir -p "$W/src"
cd "$W/src" || exit 1
put() { mkdir -p "$(dirname "$1")"; printf '%s\n' "$2" >"$1"; git add "$1"; }
# commit AUTHOR SUBJECT: commits what is staged, with a sign-off and a Link
commit() {
	id=$(printf '%s' "$2" | tr -c 'a-z0-9' '-')
	git -c user.name="$1" -c user.email="$(echo "$1" | tr 'A-Z ' 'a-z.')@example.org" \
		commit -qm "$2

Signed-off-by: $1 <$(echo "$1" | tr 'A-Z ' 'a-z.')@example.org>
Link: https://lore.kernel.org/r/20261201-$id@example.org"
}

git_q init -q mainline && cd mainline || exit 1
cat >build.sh <<'EOF'
#!/bin/sh
# every call has its definition in include/api.h; nothing is marked broken
grep -q BROKEN base.txt && { echo "base.txt:1:1: error: the base is broken"; exit 1; }
for f in src/*.c; do
	for c in $(sed -n 's/.*call \([a-z_]*\).*/\1/p' "$f"); do
		grep -q "def $c" include/api.h || { echo "$f:1:1: error: '$c' undeclared"; exit 1; }
	done
	if grep -q BROKEN "$f"; then echo "$f:2:1: error: broken on purpose"; exit 1; fi
done
exit 0
EOF
put base.txt 'fine'
put shared.txt 'shared'
put include/api.h 'def api_old'
put src/main.c 'call api_old'
git add build.sh && git_q commit -qm "initial" && cd ..
for t in api fs vfs net drv; do git_q clone -q mainline $t; done
(cd api && put include/api.h 'def api_new' && put src/main.c 'call api_new' &&
	commit "Paula Pohl" "api: rename api_old to api_new")
(cd fs && put fs.txt 'fs' && commit "Fritz Falk" "fs: add fs.txt")
(cd vfs && put vfs.txt 'vfs' && commit "Vera Voss" "vfs: add vfs.txt")
(cd net && put src/net.c 'BROKEN' && commit "Nils Nord" "net: break the build" &&
	put net.txt 'net' && commit "Nils Nord" "net: add net.txt")
(cd drv && put src/drv.c 'call api_old' && commit "Dirk Dahl" "drv: probe through api_old")
for r in mainline api fs vfs net drv; do git clone -q --bare $r "$W/$r.git"; done

tree() {
	printf '  - name: %s\n    url: "file://%s/%s.git"\n    branch: master\n' "$1" "$W" "$1"
	printf '    contacts: ["%s Maint <%s@example.org>"]\n' "$1" "$1"
}
{
	printf 'workdir: state\nbase: {name: origin, url: "file://%s/mainline.git", branch: master}\n' "$W"
	echo "trees:"
	for t in api fs vfs net drv; do tree $t; done
	cat <<'EOF'
build:
  - {name: build, command: sh build.sh, timeout: 60}
bisect: {confirm: 1}
notify:
  from: "nextbot <nextbot@example.org>"
  list: "list@example.org"
  remind_days: 1
EOF
} >"$W/nextbot.yaml"
NB() { "$NEXTBOT" -q -c "$W/nextbot.yaml" "$@"; }
# push TREE: the clone's branch to its remote, forced (a rebase)
push() { git -C "$W/src/$1" push -q -f "$W/$1.git" HEAD:master; }
# checks DATE: tests/season.py's three checks after a night
checks() {
	check "$1: flags follow the truth" $PYTHON "$SEASON" follow "$W" "$1"
	check "$1: reminders only for what still shows, in thread" $PYTHON "$SEASON" remind "$W" "$1"
	check "$1: the summary names the open flags and the trees not at tonight's tip" \
		$PYTHON "$SEASON" summary "$W" "$1"
}
# tonight DATE FLAG: what notices of that flag the night queued, "kind subject" a line
tonight() {
	$PYTHON - "$W" "$1" "$2" <<'EOF'
import email, email.policy, json, os, sys
w, date, fid = sys.argv[1:4]
run = json.load(open(os.path.join(w, "state", "runs", date, "run.json")))
for i in run["notices"]:
    n = json.load(open(os.path.join(w, "state", "outbox", i + ".json")))
    if n["channel"] != "mail":
        continue
    m = email.message_from_string(n["body"], policy=email.policy.default)
    if m["X-Nextbot-Flag"] == fid:
        print(n["kind"], m["Subject"])
EOF
}
flag() { NB --json flagged | $PYTHON -c "
import json, sys
for f in json.load(sys.stdin)['flags']:
    if '$1' in (f['subject'], (f.get('partner') or {}).get('subject')):
        print(f['id'], f['state'], f.get('resolution')); break"; }
summary() { $PYTHON - "$W" "$1" <<'EOF'
import email, email.policy, glob, json, sys
for p in glob.glob(sys.argv[1] + "/state/outbox/*.json"):
    n = json.load(open(p))
    if n["kind"] == "summary" and n["channel"] == "mail" and \
            n["subject"].startswith("[next-%s]" % sys.argv[2].replace("-", "")):
        m = email.message_from_string(n["body"], policy=email.policy.default)
        print(m["Subject"])
        print(" ".join(m.get_content().split()))
EOF
}

# --- night 1: both found and reverted -----------------------------------------------
expect_exit 0 "night 1 runs" NB run --date 2026-12-02
A=$(flag "net: break the build" | cut -d' ' -f1)
B=$(flag "drv: probe through api_old" | cut -d' ' -f1)
check "night 1: the break and the semantic conflict are flagged" \
	test "$(flag "net: break the build" | cut -d' ' -f2) $(flag "drv: probe through api_old" |
		cut -d' ' -f2)" = "open open"
summary 2026-12-02 >"$TMP/sum1"
check "night 1: the subject says REGRESSION, two flags open, both new (reverted, still open)" \
	grep -q '^\[next-20261202\] BUILD REGRESSION [0-9a-f]\{12\} (2 flags open, 2 new)$' "$TMP/sum1"
checks 2026-12-02

# --- night 2: net and vfs are not at tonight's tip ----------------------------------
(cd "$W/src/vfs" && put shared.txt 'vfs' && commit "Vera Voss" "vfs: mark shared.txt") && push vfs
(cd "$W/src/fs" && put shared.txt 'fs' && commit "Fritz Falk" "fs: mark shared.txt") && push fs
(cd "$W/src/net" && put shared.txt 'net' && commit "Nils Nord" "net: mark shared.txt") && push net
expect_exit 0 "night 2 runs" NB run --date 2026-12-03
NB status --last 1 >"$TMP/st2"
check "night 2: vfs at an older tip, net left out" sh -c \
	"grep -q '^  vfs  *previous-version' '$TMP/st2' && grep -q '^  net  *left-out' '$TMP/st2'"
check "night 2: no reminder of the flag whose tree is left out" test -z "$(tonight 2026-12-03 "$A")"
check "night 2: the semantic flag, seen again, is reminded to both audiences" \
	test "$(tonight 2026-12-03 "$B" | grep -c '^build-failure Re: ')" = 2
summary 2026-12-03 >"$TMP/sum2"
check "night 2: the summary says where the flag of net is" \
	grep -q "$A build-failure in net, since 2026-12-02, not in tonight's next: its tree is left out" \
	"$TMP/sum2"
check "night 2: … and that the other was reverted again" \
	grep -q "$B build-failure in drv with api, since 2026-12-02, seen again tonight, reverted" \
	"$TMP/sum2"
check "night 2: the subject counts the trees not at tonight's tip" \
	grep -q '(2 flags open; 1 tree at an older tip, 1 left out)$' "$TMP/sum2"
checks 2026-12-03

# --- night 3: the base is broken; both culprits left their branches -----------------
(cd "$W/src/mainline" && put base.txt 'BROKEN' && git_q commit -qm "base: break") &&
	git -C "$W/src/mainline" push -q "$W/mainline.git" HEAD:master
(cd "$W/src/net" && git reset -q --hard origin/master && put net.txt 'net' &&
	commit "Nils Nord" "net: add net.txt") && push net
(cd "$W/src/api" && git reset -q --hard origin/master && put api.txt 'api' &&
	commit "Paula Pohl" "api: add api.txt") && push api
expect_exit 0 "night 3 runs" NB run --date 2026-12-04
check "night 3: the base is broken" sh -c "NB() { \"$NEXTBOT\" -q -c '$W/nextbot.yaml' \"\$@\"; }
	NB --json status | grep -q '\"result\":\"base-broken\"'"
check "night 3: the flag whose culprit left its tree is resolved: left-tree" \
	test "$(flag "net: break the build" | cut -d' ' -f2-)" = "resolved left-tree"
check "night 3: the flag whose partner left is resolved: left-tree" \
	test "$(flag "drv: probe through api_old" | cut -d' ' -f2-)" = "resolved left-tree"
check "night 3: one resolved notice each" $PYTHON - "$W" "$A" "$B" <<'EOF'
import email, email.policy, glob, json, sys
count = {}
for p in glob.glob(sys.argv[1] + "/state/outbox/*.json"):
    n = json.load(open(p))
    if n["kind"] == "resolved" and n["channel"] == "mail":
        m = email.message_from_string(n["body"], policy=email.policy.default)
        count[m["X-Nextbot-Flag"]] = count.get(m["X-Nextbot-Flag"], 0) + 1
print("#", count)
sys.exit(0 if count == {sys.argv[2]: 1, sys.argv[3]: 1} else 1)
EOF
summary 2026-12-04 >"$TMP/sum3"
check "night 3: the summary names both as resolved, having left the tree" sh -c \
	"grep -q '$A build-failure in net, left the tree:' '$TMP/sum3' &&
	 grep -q '$B build-failure in drv, with api, left the tree:' '$TMP/sum3'"
checks 2026-12-04

# --- night 4: the base is fixed; nothing more is said of them -----------------------
(cd "$W/src/mainline" && put base.txt 'fine' && git_q commit -qm "base: fix") &&
	git -C "$W/src/mainline" push -q "$W/mainline.git" HEAD:master
expect_exit 0 "night 4 runs" NB run --date 2026-12-05
check "night 4: no notice about either flag" \
	test -z "$(tonight 2026-12-05 "$A")$(tonight 2026-12-05 "$B")"
summary 2026-12-05 >"$TMP/sum4"
check "night 4: a clean night with no flag open counts only vfs, still at an older tip" \
	grep -q '^\[next-20261205\] BUILD SUCCESS [0-9a-f]\{12\} (1 tree at an older tip)$' \
	"$TMP/sum4"
checks 2026-12-05

# --- night 5: the rename comes back (the same patch): the flag is back -------------
(cd "$W/src/api" && put include/api.h 'def api_new' && put src/main.c 'call api_new' &&
	commit "Paula Pohl" "api: rename api_old to api_new") && push api
expect_exit 0 "night 5 runs" NB run --date 2026-12-06
check "night 5: the same flag is open again" \
	test "$(flag "drv: probe through api_old" | cut -d' ' -f1-2)" = "$B open"
check "night 5: why it was resolved is no longer said of it" sh -c "
	\"$NEXTBOT\" -q -c '$W/nextbot.yaml' --json flagged | $PYTHON -c '
import json, sys
f = [f for f in json.load(sys.stdin)[\"flags\"] if f[\"id\"] == \"$B\"][0]
sys.exit(0 if f[\"reason\"] is None and f[\"resolution\"] is None else 1)'"
tonight 2026-12-06 "$B" >"$TMP/back"
check "night 5: it is said to be back, to both audiences, in their threads" sh -c \
	"test \$(grep -c '^build-failure Re: ' '$TMP/back') = 2"
check "night 5: the mails say it is back" $PYTHON - "$W" "$B" <<'EOF'
import email, email.policy, glob, json, sys
n = 0
for p in glob.glob(sys.argv[1] + "/state/outbox/*.json"):
    x = json.load(open(p))
    if x["channel"] != "mail":
        continue
    m = email.message_from_string(x["body"], policy=email.policy.default)
    if m["X-Nextbot-Flag"] == sys.argv[2] and "is back as of next-20261206" in \
            " ".join(x["body"].split()):
        n += 1
sys.exit(0 if n == 2 else 1)
EOF
checks 2026-12-06
done_testing
