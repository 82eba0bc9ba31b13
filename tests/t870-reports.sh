#!/bin/sh
# Reports a maintainer can act on from their own desk, on a small
# hand-made world of real git remotes, two nights (about 20 s):
#  - duplicates as linux-next reports them: mm-stable inside mm-next is none, the
#    same patch cherry-picked into another tree is one;
#  - a conflict mail names the other tree and reaches both trees' maintainers and
#    both authors; the operator's instructions go to notify.operator only; the
#    follow-up when it is gone answers the first mail;
#  - a semantic conflict reaches both trees' maintainers and both authors on every
#    notice, and its resolved mail says why and which night showed it;
#  - no mail to anyone but the operator holds the workdir path; every prose line is
#    at most 78 columns; the report's Reproduce: block (next published: from
#    publish.url and the night's tag), run in an empty folder with only the
#    remotes reachable, fails with the flag's first error line;
#  - the dashboard, served over HTTP and opened in headless Chromium.
. "$(dirname "$0")/lib.sh"
MAILS=$(cd "$(dirname "$0")" && pwd)/mails.py
DASH=$(cd "$(dirname "$0")" && pwd)/dashboard.py

W=$TMP/world
mkdir -p "$W/src"
cd "$W/src" || exit 1

# commit AUTHOR EMAIL SUBJECT: commits what is staged, with a sign-off and a Link
commit() {
	id=$(printf '%s' "$3" | tr -c 'a-z0-9' '-')
	git -c user.name="$1" -c user.email="$2" commit -qm "$3

Signed-off-by: $1 <$2>
Link: https://lore.kernel.org/r/20261201-$id@example.org"
}
put() { mkdir -p "$(dirname "$1")"; printf '%s\n' "$2" >"$1"; git add "$1"; }

git_q init -q mainline && cd mainline || exit 1
cat >Makefile <<'EOF'
SRCS := $(wildcard */*.c) main.c
prog: $(SRCS)
	$(CC) -Wall -Iinclude -o $@ $(SRCS)
.PHONY: test
test: prog
	./prog
EOF
put include/shared.h '#define SHARED 1'
put include/api.h 'int api_old(int x);'
put lib/api.c 'int api_old(int x) { return x; }'
put main.c '#include "shared.h"
#include "api.h"
int main(void) { return api_old(SHARED) == 1 ? 0 : 1; }'
git add Makefile && git_q commit -qm "initial" && cd ..

git_q clone -q mainline mm && cd mm
git checkout -q -b mm-stable
put mm/a.c 'int mm_a(void) { return 1; }'
commit "Anna Adler" anna@example.org "mm: add mm_a"
git checkout -q -b mm-next
put mm/b.c 'int mm_b(void) { return 2; }'
commit "Anna Adler" anna@example.org "mm: add mm_b"
cd ..

git_q clone -q mainline net && cd net
git fetch -q ../mm mm-stable && git -c user.name=N -c user.email=n@example.org cherry-pick FETCH_HEAD >/dev/null
put include/shared.h '#define SHARED 1 /* net */'
commit "Nils Nord" nils@example.org "net: mark the shared define"
cd ..

git_q clone -q mainline vfs && cd vfs
put include/shared.h '#define SHARED 1 /* vfs */'
commit "Vera Voss" vera@example.org "fs: mark the shared define"
cd ..

git_q clone -q mainline api && cd api
put include/api.h 'int api_new(int x);'
put lib/api.c 'int api_new(int x) { return x; }'
put main.c '#include "shared.h"
#include "api.h"
int main(void) { return api_new(SHARED) == 1 ? 0 : 1; }'
commit "Paula Pohl" paula@example.org "api: rename api_old to api_new"
cd ..

git_q clone -q mainline drv && cd drv
put drv/d.c '#include "api.h"
int drv_probe(void) { return api_old(2); }'
# markup in a subject stays text everywhere
commit "Dirk Dahl" dirk@example.org 'drv: probe through <b class="injected">api_old()</b> & co'
cd ..

for r in mainline mm net vfs api drv; do git clone -q --bare $r "$W/$r.git"; done
git init -q --bare "$W/pub.git"
git -C mm push -q "$W/mm.git" mm-stable mm-next

cat >"$W/nextbot.yaml" <<EOF
workdir: state
base: {name: origin, url: "file://$W/mainline.git", branch: master}
trees:
  - {name: mm-stable, url: "file://$W/mm.git", branch: mm-stable, contacts: ["MM <mm@example.org>"]}
  - {name: mm-next, url: "file://$W/mm.git", branch: mm-next, contacts: ["MM <mm@example.org>"]}
  - {name: net, url: "file://$W/net.git", branch: master, contacts: ["Net Maint <net@example.org>"]}
  - {name: vfs, url: "file://$W/vfs.git", branch: master, contacts: ["Vfs Maint <vfs@example.org>"]}
  - {name: api, url: "file://$W/api.git", branch: master, contacts: ["Api Maint <api@example.org>"]}
  - {name: drv, url: "file://$W/drv.git", branch: master, contacts: ["Drv Maint <drv@example.org>"]}
build:
  - {name: build, command: make, timeout: 60}
test:
  - {name: unit, command: make test, timeout: 60}
bisect: {confirm: 1}
keep_days: 1
publish: {url: "file://$W/pub.git", branch: master}
notify:
  from: "nextbot <nextbot@example.org>"
  list: "list@example.org"
  operator: "Op <op@example.org>"
EOF
NB() { "$NEXTBOT" -q -c "$W/nextbot.yaml" "$@"; }
OUTBOX=$W/state/outbox

# mail_json KIND SUBJECT-PART: the outbox notices (mails) of that kind whose subject
# holds SUBJECT-PART, as one JSON list
mails() {
	$PYTHON - "$OUTBOX" "$1" "$2" <<'EOF'
import email, email.policy, glob, json, sys
out = []
for p in sorted(glob.glob(sys.argv[1] + "/*.json")):
    n = json.load(open(p))
    if n["channel"] != "mail" or n["kind"] != sys.argv[2] or sys.argv[3] not in n["subject"]:
        continue
    m = email.message_from_string(n["body"], policy=email.policy.default)
    part = m.get_body(("plain",)) if m.is_multipart() else m
    out.append({"subject": n["subject"], "to": str(m["To"] or ""), "cc": str(m["Cc"] or ""),
                "rcpts": [r["to"] for r in n["recipients"]],
                "msgid": m["Message-ID"], "in_reply_to": m["In-Reply-To"],
                "flag": m["X-Nextbot-Flag"], "body": part.get_content().replace("\r\n", "\n")})
json.dump(out, sys.stdout)
EOF
}

# --- night 1 --------------------------------------------------------------------------------
expect_exit 0 "night 1 runs" NB run --date 2026-12-05
NB --json flagged >"$TMP/flags1.json"

mails summary "[next-20261205]" >"$TMP/summary.json"
check "duplicates: the cherry-pick is named, mm-stable inside mm-next is not" $PYTHON - "$TMP/summary.json" <<'EOF'
import json, sys
body = json.load(open(sys.argv[1]))[0]["body"]
sec = body.split("Duplicate patches", 1)[1].split("\n\n", 2)[1]
print("#", sec.replace("\n", "\n# "))
assert "mm: add mm_a" in sec, sec
pairs = [l.split() for l in sec.splitlines() if l.startswith("    ")]
assert pairs, sec
for p in pairs:
    trees = {p[0], p[2]}
    assert trees != {"mm-stable", "mm-next"}, p
    assert "net" in trees, p
EOF

mails merge-conflict "manual merge" >"$TMP/conflict.json"
check "the conflict mail names the other tree and reaches both trees and authors" $PYTHON - "$TMP/conflict.json" <<'EOF'
import json, sys
ms = json.load(open(sys.argv[1]))
assert len(ms) == 1, [m["subject"] for m in ms]
m = ms[0]
assert m["subject"] == "next-20261205: manual merge of the vfs tree with the net tree", m["subject"]
assert "net@example.org" in m["to"] and "vfs@example.org" in m["to"], m["to"]
for who in ("nils@example.org", "vera@example.org", "list@example.org"):
    assert who in m["cc"], (who, m["cc"])
b = m["body"]
assert "include/shared.h" in b, b
assert '("net: mark the shared define")\n\nfrom the net tree and commit:' in b, b
assert '("fs: mark the shared define")\n\nfrom the vfs tree.' in b, b
assert "I have left the vfs tree out of today's next." in b, b
assert "nextbot resolve" not in b and "state/resolve" not in b, b
EOF
mails merge-conflict "[nextbot operator]" >"$TMP/operator.json"
check "the operator alone gets the resolve instructions" $PYTHON - "$TMP/operator.json" "$W/state" <<'EOF'
import json, sys
ms = json.load(open(sys.argv[1]))
assert len(ms) == 1 and ms[0]["rcpts"] == ["op@example.org"], ms
assert "`nextbot resolve vfs`" in ms[0]["body"] and sys.argv[2] + "/resolve" in ms[0]["body"], ms[0]["body"]
EOF
check "nextbot status shows the operator the conflict to resolve" sh -c \
	"$NEXTBOT -c '$W/nextbot.yaml' status | grep -q 'nextbot resolve vfs'"

mails build-failure "" >"$TMP/semantic.json"
check "the semantic conflict: both maintainers and both authors on report and maintainer mail" \
	$PYTHON - "$TMP/semantic.json" "$TMP/flags1.json" <<'EOF'
import json, sys
ms = json.load(open(sys.argv[1]))
flags = json.load(open(sys.argv[2]))["flags"]
f = [f for f in flags if f["partner"]]
assert len(f) == 1, flags
f = f[0]
assert f["tree"] == "drv" and f["partner"]["tree"] == "api", f
assert len(ms) == 2, [m["subject"] for m in ms]
for m in ms:
    assert m["flag"] == f["id"], m
    everyone = m["to"] + m["cc"]
    for who in ("drv@example.org", "api@example.org", "dirk@example.org", "paula@example.org"):
        assert who in everyone, (m["subject"], who, everyone)
report = [m for m in ms if m["subject"].startswith("Re: ")][0]
assert "dirk@example.org" in report["to"] and "paula@example.org" in report["to"], report["to"]
maint = [m for m in ms if not m["subject"].startswith("Re: ")][0]
assert "drv@example.org" in maint["to"] and "api@example.org" in maint["to"], maint["to"]
assert "api: rename api_old to api_new" in report["body"], report["body"]
EOF
# next is published: the steps start from publish.url and the night's tag (t810 covers
# the steps that rebuild next from the trees' URLs)
check "the semantic report's Reproduce: block starts from the published tag" \
	grep -q "git fetch -q --no-tags file://$W/pub.git tag next-20261205" "$OUTBOX"/*.json
check "the semantic report's Reproduce: block fails as the night did, away from the workdir" \
	$PYTHON "$MAILS" repro "$OUTBOX" "$TMP/flags1.json" --expose "$W/pub.git" \
	--expose "$W/drv.git"

# --- night 2: vfs drops its change, drv is fixed -----------------------------------------------
cd "$W/src/vfs" && git reset -q --hard HEAD~1
put fs/x.c 'int fs_x(void) { return 4; }'
commit "Vera Voss" vera@example.org "fs: add fs_x"
git push -q -f "$W/vfs.git" HEAD:master
cd "$W/src/drv"
put drv/d.c '#include "api.h"
int drv_probe(void) { return api_new(2); }'
put include/api.h 'int api_new(int x);'
put lib/api.c 'int api_new(int x) { return x; }'
put main.c '#include "shared.h"
#include "api.h"
int main(void) { return api_new(SHARED) == 1 ? 0 : 1; }'
commit "Dirk Dahl" dirk@example.org "drv: follow the rename to api_new()"
git push -q "$W/drv.git" HEAD:master
cd "$W/src"
expect_exit 0 "night 2 runs" NB run --date 2026-12-06

mails merge-conflict "Re: next-20261205: manual merge of the vfs tree with the net tree" \
	>"$TMP/gone.json"
check "the conflict's follow-up answers the first mail" $PYTHON - "$TMP/conflict.json" "$TMP/gone.json" <<'EOF'
import json, sys
first = json.load(open(sys.argv[1]))[0]
gone = json.load(open(sys.argv[2]))
assert len(gone) == 1, gone
g = gone[0]
assert g["in_reply_to"] == first["msgid"], (g["in_reply_to"], first["msgid"])
assert "is gone as of next-20261206" in g["body"].replace("\n", " "), g["body"]
assert "net@example.org" in g["to"] and "vfs@example.org" in g["to"], g["to"]
EOF
mails resolved "" >"$TMP/resolved.json"
check "the resolved mail: both authors and trees, why, and the night" $PYTHON - "$TMP/resolved.json" "$TMP/semantic.json" <<'EOF'
import json, sys
ms = json.load(open(sys.argv[1]))
report = [m for m in json.load(open(sys.argv[2])) if m["subject"].startswith("Re: ")][0]
assert len(ms) == 1, [m["subject"] for m in ms]
m = ms[0]
everyone = m["to"] + m["cc"]
for who in ("drv@example.org", "api@example.org", "dirk@example.org", "paula@example.org"):
    assert who in everyone, (who, everyone)
body = m["body"].replace("\n", " ")
assert "gone as of next-20261206" in body and "Why: " in body, m["body"]
assert m["in_reply_to"] == report["msgid"], (m["in_reply_to"], report["msgid"])
EOF

check "no mail but the operator's holds the workdir path" \
	$PYTHON "$MAILS" private "$OUTBOX" "$W/state" op@example.org
check "every prose line of every mail is at most 78 columns" $PYTHON "$MAILS" width "$OUTBOX"
check "without an inbox, no mail lists #nextbot commands" sh -c "! grep -l '#nextbot' '$OUTBOX'/*.json"

# --- the dashboard, as a maintainer opens it (headless Chromium, about 30 s) ----------------
expect_exit 0 "report --html" NB report --html "$TMP/site"
NB --json flagged >"$TMP/flags2.json"
NB --json status >"$TMP/status2.json"
check "the dashboard in Chromium: verdicts coloured, culprits visible, every link 200" \
	$PYTHON "$DASH" "$TMP/site" "$TMP/flags2.json" "$TMP/status2.json"
check "no page of the dashboard holds the workdir path" sh -c "! grep -rq '$W/state' '$TMP/site'"
check "the operator's mail is not on the dashboard" sh -c "! grep -rq 'nextbot operator' '$TMP/site'"
expect_exit 0 "gc drops the first night" NB gc
expect_exit 0 "report --html again" NB report --html "$TMP/site"
NB --json status >"$TMP/status3.json"
check "after gc: the first night's page is gone and every link still answers 200" sh -c \
	"test ! -e '$TMP/site/nights/2026-12-05.html' &&
	 $PYTHON '$DASH' '$TMP/site' '$TMP/flags2.json' '$TMP/status3.json' --links-only"
done_testing
