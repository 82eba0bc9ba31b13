#!/bin/sh
# The command line and check-config with the real binary: help texts, exit codes,
# config path resolution, the example config, and every config error's message.
. "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/.." && pwd)

# --- help and usage ------------------------------------------------------------------
expect_exit 0 "--help exits 0" "$NEXTBOT" --help
for c in "sim init" "sim advance" "run" "daemon" "status" "flagged" "drop" "undrop" \
	"dismiss" "resolve" "bisect" "outbox list" "outbox flush" "report" "gc" "check-config" \
	"boot-test"; do
	check "--help lists '$c'" grep -q "^  $c\( \|\$\)" "$TMP/out"
done
expect_exit 0 "-h exits 0" "$NEXTBOT" -h
expect_exit 0 "help exits 0" "$NEXTBOT" help
check "help lists check-config" grep -q "check-config" "$TMP/out"
expect_exit 0 "--version exits 0" "$NEXTBOT" --version
check "--version prints it" grep -q "^nextbot [0-9]" "$TMP/out"

for c in sim run daemon status flagged drop undrop dismiss resolve bisect outbox report gc \
	check-config boot-test; do
	expect_exit 0 "$c --help exits 0" "$NEXTBOT" "$c" --help
	check "$c --help prints its usage" grep -q "^usage: nextbot $c" "$TMP/out"
done
expect_exit 0 "help drop" "$NEXTBOT" help drop
check "help drop shows --reason" grep -q -- "--reason TEXT" "$TMP/out"
expect_exit 0 "sim init --help" "$NEXTBOT" sim init --help
check "sim --help shows both forms" grep -q "or: nextbot sim advance" "$TMP/out"
# after "--" a --help belongs to the bisect command line, not to nextbot
expect_exit 0 "bisect --help" "$NEXTBOT" bisect --help

expect_exit 2 "unknown command exits 2" "$NEXTBOT" frobnicate
check "unknown command is named" grep -q "'frobnicate' is not a nextbot command" "$TMP/err"
expect_exit 2 "unknown option exits 2" "$NEXTBOT" --frob check-config
check "unknown option is named" grep -q "unknown option '--frob'" "$TMP/err"
expect_exit 2 "no command exits 2" "$NEXTBOT"
check "no command prints usage" grep -q "^usage: nextbot" "$TMP/err"
expect_exit 2 "-c without FILE exits 2" "$NEXTBOT" -c
expect_exit 2 "help of an unknown command exits 2" "$NEXTBOT" help frobnicate
expect_exit 2 "check-config with an argument exits 2" "$NEXTBOT" -c "$ROOT/configs/linux-next.yaml" \
	check-config extra

# --- the example config ----------------------------------------------------------------
export NEXTBOT_SMTP_PASSWORD=do-not-print-me
expect_exit 0 "linux-next.yaml is valid" "$NEXTBOT" -c "$ROOT/configs/linux-next.yaml" check-config
# the merge order: the lines from "trees, in merge order:" up to "never_merge:"
sed -n '/^trees, in merge order:/,/^never_merge:/p' "$TMP/out" | sed '1d;$d' >"$TMP/order"
check "merge order is listed" grep -q "mm-stable" "$TMP/order"
check "mm-next is merged" grep -q "\. mm-next " "$TMP/order"
check "no mm-unstable in the merge order" sh -c "! grep -q mm-unstable '$TMP/order'"
check "no mm-new in the merge order" sh -c "! grep -q 'mm-new' '$TMP/order'"
check "never_merge patterns shown" grep -q "^never_merge: mm-unstable mm-new" "$TMP/out"
check "build commands shown" grep -q "x86_64-allmodconfig (timeout 10800s): make" "$TMP/out"
check "test commands shown" grep -q "kunit (timeout 3600s)" "$TMP/out"
check "password named, not shown" grep -q 'password from \$NEXTBOT_SMTP_PASSWORD, set' "$TMP/out"
check "password value never printed" sh -c "! grep -q do-not-print-me '$TMP/out' '$TMP/err'"

expect_exit 0 "check-config --json" "$NEXTBOT" --json -c "$ROOT/configs/linux-next.yaml" check-config
check "--json is one JSON document without mm-unstable trees" "$PYTHON" -c "
import json, sys
p = json.load(open('$TMP/out'))
names = [t['name'] for t in p['trees']]
assert 'mm-next' in names and 'mm-stable' in names, names
assert not [n for n in names if n.startswith('mm-unstable') or n.startswith('mm-new')], names
assert p['never_merge'] == ['mm-unstable', 'mm-new'], p['never_merge']
assert p['notify']['smtp']['password_env'] == 'NEXTBOT_SMTP_PASSWORD'
assert p['build'][0]['env'] == {'ARCH': 'x86_64'}
assert p['schedule'] == '0 2 * * *' and p['keep_days'] == 60
"
check "--json never holds the password" sh -c "! grep -q do-not-print-me '$TMP/out'"

# --- config path resolution: -c, else $NEXTBOT_CONFIG, else ./nextbot.yaml -----------
mkdir -p "$TMP/cwd"
cat >"$TMP/cwd/nextbot.yaml" <<'EOF'
base: {name: origin, url: "https://example.org/a.git", branch: cwd-branch}
EOF
cat >"$TMP/env.yaml" <<'EOF'
base: {name: origin, url: "https://example.org/a.git", branch: env-branch}
EOF
(cd "$TMP/cwd" && unset NEXTBOT_CONFIG && "$NEXTBOT" check-config) >"$TMP/out" 2>&1
check "./nextbot.yaml is the default" grep -q "#cwd-branch" "$TMP/out"
(cd "$TMP/cwd" && NEXTBOT_CONFIG="$TMP/env.yaml" "$NEXTBOT" check-config) >"$TMP/out" 2>&1
check "\$NEXTBOT_CONFIG comes before ./nextbot.yaml" grep -q "#env-branch" "$TMP/out"
(cd "$TMP/cwd" && NEXTBOT_CONFIG="$TMP/env.yaml" "$NEXTBOT" -c nextbot.yaml check-config) \
	>"$TMP/out" 2>&1
check "-c comes before \$NEXTBOT_CONFIG" grep -q "#cwd-branch" "$TMP/out"
(cd "$TMP" && unset NEXTBOT_CONFIG && "$NEXTBOT" check-config) >"$TMP/out" 2>&1
check "a missing ./nextbot.yaml is a config error" sh -c "grep -q 'nextbot.yaml' '$TMP/out'"
check "workdir defaults to state beside the file" sh -c \
	"cd '$TMP/cwd' && '$NEXTBOT' check-config | grep -q '^workdir: /.*/cwd/state\$'"

# --- every config error: exit 2, FILE:LINE:, the key path, the reason --------------------
BASE='base: {name: origin, url: "https://example.org/linux.git", branch: master}'
n=0
# bad LINE KEYPATH REASON YAML-after-the-base-line
bad() {
	line=$1 key=$2 reason=$3 body=$4
	n=$((n + 1))
	f="$TMP/bad$n.yaml"
	printf '%s\n%b' "$BASE" "$body" >"$f"
	"$NEXTBOT" -c "$f" check-config >"$TMP/out" 2>"$TMP/err"
	rc=$?
	if [ $rc = 2 ] && grep -q "bad$n.yaml:$line:[0-9]*: $key: .*$reason" "$TMP/err"; then
		ok "$key: $reason"
	else
		not_ok "$key: $reason (exit $rc, wanted 2 and line $line)"
		sed 's/^/# /' "$TMP/err"
	fi
}
bad 4 "trees\[0\]" "malformed YAML" 'trees:\n  - name: a\n   url: b\n'
bad 2 "tress" "unknown key (did you mean 'trees'?)" 'tress: []\n'
bad 3 "trees\[0\].colour" "unknown key" 'trees:\n  - {name: a, url: b, branch: c, colour: red}\n'
bad 2 "trees" "expected a list of trees, got a mapping" 'trees: {name: a}\n'
bad 2 "keep_days" "expected an integer" 'keep_days: plenty\n'
bad 2 "notify" "expected a mapping, got a list" 'notify: [a]\n'
bad 3 "keep_days" "duplicate key (first at line 2)" 'keep_days: 3\nkeep_days: 4\n'
bad 4 "trees\[1\].name" "duplicate tree name 'a'" \
	'trees:\n  - {name: a, url: x, branch: b}\n  - {name: a, url: y, branch: c}\n'
bad 3 "trees\[0\].url" "missing" 'trees:\n  - {name: a, branch: b}\n'
bad 3 "trees\[0\].branch" "missing" 'trees:\n  - {name: a, url: b}\n'
bad 3 "trees\[0\].name" "missing" 'trees:\n  - {url: a, branch: b}\n'
bad 3 "build\[0\].timeout" "positive number of seconds" \
	'build:\n  - {name: a, command: make, timeout: -5}\n'
bad 3 "test\[0\].timeout" "duration" 'test:\n  - {name: a, command: make, timeout: 5x}\n'
bad 2 "schedule" "cron" 'schedule: "61 2 * * *"\n'
bad 2 "schedule" "cron" 'schedule: "0 2 * *"\n'
bad 3 "notify.smtp.tls" "not one of: none | starttls | implicit" \
	'notify:\n  smtp: {url: "smtp://x", tls: maybe}\n'
bad 2 "on_breakage" "not one of: revert-culprit" 'on_breakage: panic\n'
bad 2 "deadline" "HH:MM" 'deadline: "25:00"\n'
bad 5 "notify.smtp.password" "password_env" \
	'notify:\n  smtp:\n    url: "smtp://x"\n    password: hunter2\n'
bad 2 "trees\[0\].branch" "never_merge pattern 'mm-unstable'" \
	'trees: [{name: mm, url: x, branch: mm-unstable}]\n'
bad 3 "trees\[0\].name" "never_merge" 'trees:\n  - {name: mm-unstable, url: x, branch: y}\n'
bad 4 "trees\[0\].branch" "never_merge pattern 'mm-new\*' (line 2)" \
	'never_merge: ["mm-new*"]\ntrees:\n  - {name: n, url: x, branch: mm-new-4}\n'
bad 2 "a" "anchors and aliases are not allowed" 'a: &a [x]\n'
bad 3 "trees\[0\]" "aliases are not allowed" 'trees:\n  - *t\n'

# base missing or empty
printf 'base:\n' >"$TMP/nobase.yaml"
expect_exit 2 "empty base exits 2" "$NEXTBOT" -c "$TMP/nobase.yaml" check-config
check "empty base: line and key" grep -q "nobase.yaml:1:[0-9]*: base: must not be empty" "$TMP/err"

# an empty build: and test: are valid
printf '%s\nbuild:\ntest:\n' "$BASE" >"$TMP/empty.yaml"
expect_exit 0 "empty build: and test: are valid" "$NEXTBOT" -c "$TMP/empty.yaml" check-config
check "no build commands" grep -q "^build (after each merge): (none)" "$TMP/out"

# a billion laughs: refused at its first anchor (the refusal needs no expansion)
{
	echo "$BASE"
	echo 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'
	for x in b c d e f g h i j; do
		p=$(echo "$x" | tr 'b-j' 'a-i')
		echo "$x: &$x [*$p,*$p,*$p,*$p,*$p,*$p,*$p,*$p,*$p]"
	done
} >"$TMP/bomb.yaml"
expect_exit 2 "alias bomb refused" "$NEXTBOT" -c "$TMP/bomb.yaml" check-config
check "alias bomb: line 2 and the reason" grep -q "bomb.yaml:2:[0-9]*: a: anchors and aliases" "$TMP/err"

# 40 levels of nesting (libyaml itself has no limit)
{ echo "$BASE"; printf 'x:'; i=0; while [ $i -lt 40 ]; do printf '\n%*s- ' $((i * 2)) ''; i=$((i + 1)); done; echo 1; } \
	>"$TMP/deep.yaml"
expect_exit 2 "40-deep nesting refused" "$NEXTBOT" -c "$TMP/deep.yaml" check-config
check "deep nesting: line and reason" grep -q "deep.yaml:3[0-9]:[0-9]*: x.*nesting deeper than 32" "$TMP/err"

# 2 MiB
{ echo "$BASE"; head -c 2097152 /dev/zero | tr '\0' '#'; echo; } >"$TMP/big.yaml"
expect_exit 2 "2 MiB config refused" "$NEXTBOT" -c "$TMP/big.yaml" check-config
check "big config: named" grep -q "big.yaml:1:1: the config is larger than 1 MiB" "$TMP/err"

expect_exit 2 "missing config exits 2" "$NEXTBOT" -c "$TMP/nonexistent.yaml" check-config
check "missing config: named" grep -q "nonexistent.yaml" "$TMP/err"

# --- the man pages: the example in nextbot.yaml(5) is a valid config --------------------
sed -n '/^\.SH EXAMPLE/,/^\.fi/p' "$ROOT/man/nextbot.yaml.5" | sed '1,2d;$d' |
	sed 's/\\-/-/g; s/\\(ti/~/g' >"$TMP/man-example.yaml"
expect_exit 0 "nextbot.yaml(5) example is valid" "$NEXTBOT" -c "$TMP/man-example.yaml" check-config
check "nextbot.yaml(5) example has its trees" grep -q "3. mm-next " "$TMP/out"

# every key the loader knows is documented, and the pages render without warnings
for k in workdir base trees name url branch contacts fixes never_merge build test command \
	timeout env build_after_each_merge on_breakage bisect confirm jobs deadline \
	merge_identity runner kind user partition srun_args max_jobs git token_env ssh_key \
	publish notify from list report_url remind_days smtp tls password_env webhooks \
	secret_env schedule keep_days maintainers roles absent_days window_days audit_list; do
	check "nextbot.yaml(5) documents $k" grep -q "^\.BR $k " "$ROOT/man/nextbot.yaml.5"
done
# each key once in its mapping: no two entries of one name in one .RS block
cat >"$TMP/once.awk" <<'EOF'
/^\.RS/ { stack[++depth] = ++blocks }
/^\.RE/ { depth-- }
/^\.TP/ { tp = 1; next }
tp && /^\.BR? [a-z_]+/ { k = stack[depth] SUBSEP $2; if (k in seen) { print $2; bad = 1 }; seen[k] = 1 }
{ tp = 0 }
END { exit bad }
EOF
check "nextbot.yaml(5) documents each key once" awk -f "$TMP/once.awk" "$ROOT/man/nextbot.yaml.5"
if command -v groff >/dev/null; then
	for m in nextbot.1 nextbot.yaml.5; do
		check "$m renders without warnings" sh -c \
			"groff -man -ww -z '$ROOT/man/$m' 2>&1 | grep . && exit 1 || exit 0"
	done
fi

done_testing
