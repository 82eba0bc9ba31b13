#!/bin/sh
# RELIABILITY 33 (the private half): the workdir is nextbot's alone. A workdir left
# open by an older nextbot (0755 folders, 0644 files) is tightened by the next
# night: the workdir 0711, every folder 0700 and file 0600 but workers/ (0711, the
# way to each worker) and repo.git (readable by the runner user's group, nobody
# else: the checkouts are made as that user); no file of the state is readable by
# another user. The worker is the runner user's git working tree. A workdir
# below a folder the runner user cannot search is named at once by check-config
# (exit 1) and by the night (exit 1, before anything runs), instead of failing every
# command. About 3 s.
. "$(dirname "$0")/lib.sh"

W=$TMP/world
mkdir -p "$W/src"
git_q init -q "$W/src/mainline"
printf 'all:\n\ttrue\n' >"$W/src/mainline/Makefile"
git_q -C "$W/src/mainline" add -A && git_q -C "$W/src/mainline" commit -qm initial
git_q clone -q "$W/src/mainline" "$W/src/net"
printf 'x\n' >"$W/src/net/x" && git_q -C "$W/src/net" add -A && git_q -C "$W/src/net" commit -qm "net: x"
for r in mainline net; do git clone -q --bare "$W/src/$r" "$W/$r.git"; done
cat >"$W/nextbot.yaml" <<EOF
workdir: state
base: {name: origin, url: "file://$W/mainline.git", branch: master}
trees:
  - {name: net, url: "file://$W/net.git", branch: master, contacts: ["net@example.org"]}
build:
  - {name: build, command: make, timeout: 60}
notify: {from: "nextbot <nextbot@example.org>", list: "list@example.org"}
EOF
S=$W/state
# what an older nextbot left: open folders and files
mkdir -p "$S/runs/2026-01-01" "$S/outbox" && chmod 755 "$S" "$S/runs" "$S/runs/2026-01-01" "$S/outbox"
echo '{"version": 1, "runs": [], "flags": []}' >"$S/state.json" && chmod 644 "$S/state.json"
echo '{}' >"$S/runs/2026-01-01/run.json" && chmod 644 "$S/runs/2026-01-01/run.json"
echo 'x' >"$S/outbox/m.json" && chmod 644 "$S/outbox/m.json"

expect_exit 0 "a night on a workdir left open" "$NEXTBOT" -q -c "$W/nextbot.yaml" run --date 2026-02-01 --no-notify
mode() { stat -c %a "$1"; }
check "the workdir is 0711" [ "$(mode "$S")" = 711 ]
check "state.json is 0600" [ "$(mode "$S/state.json")" = 600 ]
check "an old run's file is 0600" [ "$(mode "$S/runs/2026-01-01/run.json")" = 600 ]
check "the outbox is 0700" [ "$(mode "$S/outbox")" = 700 ]
check "tonight's run folder is 0700" [ "$(mode "$S/runs/2026-02-01")" = 700 ]
check "workers/ is 0711" [ "$(mode "$S/workers")" = 711 ]
open=$(find "$S" \( -path "$S/workers" -o -path "$S/repo.git" \) -prune -o \( -perm /044 -print \) |
	grep -v "^$S/workers$\|^$S/repo.git$")
check "nothing but workers/ and repo.git is readable by group or others" [ -z "$open" ]
[ -z "$open" ] || echo "$open" | head -5 | sed 's/^/# /'
if [ "$(id -u)" = 0 ]; then
	check "repo.git is the runner user's group's, 2750" [ "$(stat -c %a:%G "$S/repo.git")" = 2750:nogroup ]
	check "nothing in repo.git is readable by others" [ -z "$(find "$S/repo.git" -perm /004)" ]
	check "the worker's tree and git dir are the runner user's, 0700" \
		[ "$(stat -c %a:%U "$S/workers/w0/tree") $(stat -c %a:%U "$S/workers/w0/git")" = "700:nobody 700:nobody" ]
	check "the worker is a clean git working tree of a commit of next" sh -c \
		"cd '$S/workers/w0/tree' && su -s /bin/sh nobody -c 'git merge-base --is-ancestor HEAD next && test -z \"\$(git status --porcelain)\"'"
	check "the runner user cannot read state.json" \
		sh -c "! su -s /bin/sh nobody -c 'cat $S/state.json' >/dev/null 2>&1"
	check "the runner user cannot list the workdir" \
		sh -c "! su -s /bin/sh nobody -c 'ls $S' >/dev/null 2>&1"

	# a workdir below a folder the runner user cannot search
	chmod 700 "$W"
	expect_exit 1 "check-config: the runner user cannot reach the workdir" \
		"$NEXTBOT" -c "$W/nextbot.yaml" check-config
	check "check-config names the folder that stops it" grep -q "'$W' (0700 root" "$TMP/err"
	expect_exit 1 "the night stops at once" "$NEXTBOT" -q -c "$W/nextbot.yaml" run --date 2026-02-02 --no-notify
	check "the night names the folder that stops it" grep -q "cannot reach.*'$W' (0700" "$TMP/err"
	check "nothing ran: no run folder for that night" [ ! -e "$S/runs/2026-02-02" ]
	chmod 755 "$W"

	# nextbot's own binary in a folder only root enters (a build in a `mktemp -d`
	# clone, /root): the runner user starts the workers' copy of it instead
	mkdir -m 700 "$TMP/private-bin"
	cp "$NEXTBOT" "$TMP/private-bin/nextbot"
	rm -rf "$S/verdicts"   # so that the build really runs
	expect_exit 0 "a night run by a binary in a 0700 folder" \
		"$TMP/private-bin/nextbot" -q -c "$W/nextbot.yaml" run --date 2026-02-03 --no-notify
	check "its build ran: no infrastructure note" sh -c \
		"! '$NEXTBOT' -c '$W/nextbot.yaml' status --last 1 | grep -q infrastructure &&
		 ls '$S/runs/2026-02-03' | grep -q '^step-000-build-'"
	check "the copy is the binary, 0755, root's" sh -c \
		"cmp -s '$TMP/private-bin/nextbot' '$S/workers/nextbot-exe' &&
		 test \"\$(stat -c %a:%U '$S/workers/nextbot-exe')\" = 755:root"
fi
done_testing
