#!/bin/sh
# The command line on a small hand-made world (one tree, two authors, a patch that
# breaks the build and is reverted), about 20 s:
#  - every command takes --json after its name as before it: the same exit code,
#    the same output for the commands that only read, never "unrecognized option";
#    the commands are the ones `nextbot --help` lists, so a new one is tried too;
#  - `nextbot patch`: "reverted in next" for a patch next carries reverted, several
#    matches listed with their authors, exit 1 when nothing matches (2 for an ID
#    too short to look for).
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
printf 'NETWORKING\nM:\tNet Maint <net@example.org>\nL:\tnetdev@example.org\nS:\tMaintained\nF:\tnet/\n' >MAINTAINERS
git_q add -A && git_q commit -qm "initial" && cd ..

# patch NAME EMAIL FILE CONTENT SUBJECT: a commit with a sign-off and a Link
patch() {
	mkdir -p "$(dirname "$3")"
	printf '%s\n' "$4" >"$3"
	git add -A
	id=$(printf '%s' "$5" | tr -c 'a-z0-9' '-')
	git -c user.name="$1" -c user.email="$2" commit -qm "$5

Signed-off-by: $1 <$2>
Link: https://lore.kernel.org/r/20261201-$id@example.org"
}
git_q clone -q mainline net && cd net
patch "Nils Nord" nils@example.org net/a.c 'int net_a(void) { return 1; }' "net: add net_a"
patch "Bea Broken" bea@example.org net/b.c 'int net_b(void) { return }' "net: add net_b"
cd ..
for r in mainline net; do git clone -q --bare $r "$W/$r.git"; done

cat >"$W/nextbot.yaml" <<EOF
workdir: state
base: {name: origin, url: "file://$W/mainline.git", branch: master}
trees:
  - {name: net, url: "file://$W/net.git", branch: master, contacts: ["net@example.org"]}
build:
  - {name: build, command: make, timeout: 60}
bisect: {confirm: 1, jobs: 1}
schedule: "0 3 1 1 *"
notify: {from: "nextbot <nextbot@example.org>"}
journey: {trees: [net]}
EOF
NB() { "$NEXTBOT" -q -c "$W/nextbot.yaml" "$@"; }
expect_exit 0 "night 1 runs" NB run --date 2026-12-02
check "night 1: net_b is flagged and reverted" sh -c \
	"'$NEXTBOT' -c '$W/nextbot.yaml' --json flagged | grep -q 'net: add net_b'"

# --- nextbot patch ------------------------------------------------------------------------
expect_exit 0 "patch net_b" NB patch net_b
check "patch: a patch next carries reverted is 'reverted in next'" \
	grep -q "^  state:   reverted in next" "$TMP/out"
expect_exit 0 "patch net_a" NB patch net_a
check "patch: a patch next carries as it is is 'in next'" grep -q "^  state:   in next" "$TMP/out"
expect_exit 0 "patch --json net_b" NB --json patch net_b
check "patch --json: state reverted-in-next" $PYTHON -c "
import json, sys
ps = json.load(open('$TMP/out'))['patches']
assert [p['state'] for p in ps] == ['reverted-in-next'], ps"
expect_exit 0 "patch 'net: add' matches both" NB patch "net: add"
check "patch: several matches are listed with their authors" $PYTHON - "$TMP/out" <<'EOF'
import sys
out = open(sys.argv[1]).read()
print("# " + out.replace("\n", "\n# "))
assert out.startswith("2 patches match 'net: add':"), out
for who in ("Nils Nord <nils@example.org>", "Bea Broken <bea@example.org>"):
    assert "by " + who in out, (who, out)
assert "reverted in next" in out and "in next" in out, out
EOF
expect_exit 1 "patch: nothing matches: exit 1" NB patch "no such patch"
check "patch: nothing matches: said so" grep -q "no patch's journey matches" "$TMP/err"
expect_exit 2 "patch: an ID too short to look for: exit 2" NB patch ab

# --- --json after the command's name --------------------------------------------------------
"$NEXTBOT" --help | sed -n '/^commands:/,/^exit codes/p' |
	sed -n 's/^  \([a-z][a-z-]*\).*/\1/p' | sort -u >"$TMP/commands"
# args CMD: the arguments each command is tried with (read: the output is compared too)
args() {
	case $1 in
	sim) echo "advance $TMP/no-world" ;;
	run) echo "--date 2026-12-03" ;;
	patch) echo "net_b" ;;
	drop | undrop) echo "0000deadbeef" ;;
	dismiss) echo "0000deadbeef --reason no" ;;
	resolve) echo "net" ;;
	bisect) echo "--repo $W/src/mainline --good HEAD --bad HEAD -- true" ;;
	outbox) echo "list" ;;
	report) echo "--html $TMP/site" ;;
	reviews) echo "net" ;;
	*) echo "" ;;
	esac
}
reads() { case $1 in status | flagged | patch | outbox | maintainers | reviews | check-config) ;;
	*) return 1 ;; esac; }
check "the commands --help lists are the ones tried" test "$(wc -l <"$TMP/commands")" -ge 19
while read -r c; do
	a=$(args "$c")
	# shellcheck disable=SC2086 # the args are words
	if [ "$c" = daemon ]; then
		timeout -s TERM 3 "$NEXTBOT" -c "$W/nextbot.yaml" --json daemon >"$TMP/before" \
			2>"$TMP/before.err"
		b=$?
		timeout -s TERM 3 "$NEXTBOT" -c "$W/nextbot.yaml" daemon --json >"$TMP/after" \
			2>"$TMP/after.err"
		r=$?
	elif [ "$c" = mail-in ]; then
		"$NEXTBOT" -c "$W/nextbot.yaml" --json mail-in </dev/null >"$TMP/before" \
			2>"$TMP/before.err"
		b=$?
		"$NEXTBOT" -c "$W/nextbot.yaml" mail-in --json </dev/null >"$TMP/after" \
			2>"$TMP/after.err"
		r=$?
	else
		"$NEXTBOT" -c "$W/nextbot.yaml" --json $c $a >"$TMP/before" 2>"$TMP/before.err"
		b=$?
		"$NEXTBOT" -c "$W/nextbot.yaml" $c --json $a >"$TMP/after" 2>"$TMP/after.err"
		r=$?
	fi
	check "$c --json: exits as --json $c does ($b)" test "$r" = "$b"
	check "$c --json: no option refused" sh -c \
		"! grep -qi -e 'unrecognized option' -e 'unknown option' '$TMP/after.err'"
	if reads "$c"; then
		check "$c --json: the same output as --json $c" cmp -s "$TMP/before" "$TMP/after"
		check "$c --json: one JSON document" $PYTHON -c "import json; json.load(open('$TMP/after'))"
	fi
done <"$TMP/commands"
check "maintainers --json exits 0" sh -c "'$NEXTBOT' -c '$W/nextbot.yaml' maintainers --json >/dev/null"
done_testing
