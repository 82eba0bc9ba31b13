#!/bin/sh
# Fault injection (a full disk, a failed fsync or rename anywhere): every open, write, fsync and rename
# that util/fileutil makes while a command saves state.json fails in turn
# (NEXTBOT_FAULT=op:N), or kills the process there (op:N:kill), until a run passes
# the last such call.  After each fault: the command failed (no pretending), and
# state.json is valid JSON holding the old or the new state, never half; the next
# run without a fault completes and leaves the new state.
. tests/lib.sh

WORK=$TMP/work
CFG=$TMP/nextbot.yaml
mkdir -p "$WORK"
cat >"$CFG" <<EOF
workdir: work
base: {name: origin, url: 'https://example.org/linux.git', branch: master}
EOF

# A state with a dropped flag: undrop reopens it, dismiss dismisses it.
cat >"$TMP/old.json" <<'EOF'
{"version": 1, "runs": [],
 "flags": [{"id": "0123456789ab", "fingerprint": "p\nx86_64\nerror: x", "kind": "build-failure",
            "tree": "mm", "commit": "0123456789abcdef0123456789abcdef01234567",
            "subject": "mm: frob", "author": {"name": "A U Thor", "email": "a@example.org"},
            "state": "dropped", "first_seen": "2026-12-01", "last_seen": "2026-12-02"}],
 "drops": [{"tree": "mm", "commit": "0123456789abcdef0123456789abcdef01234567",
            "subject": "mm: frob", "flag_id": "0123456789ab", "reason": "breaks the build",
            "when": "2026-12-02T02:00:00Z", "active": true}]}
EOF

# same_json A B: both parse and hold the same document.
same_json() {
	$PYTHON -c 'import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
sys.exit(0 if a == b else 1)' "$1" "$2" 2>/dev/null
}

# The state a clean run of each command leaves (the "new" state).
for cmd in undrop dismiss; do
	cp "$TMP/old.json" "$WORK/state.json"
	set -- "$cmd" 0123456789ab
	[ "$cmd" = dismiss ] && set -- "$@" --reason "not a real breakage"
	expect_exit 0 "$cmd without faults" "$NEXTBOT" -c "$CFG" "$@"
	cp "$WORK/state.json" "$TMP/new-$cmd.json"
	if same_json "$TMP/old.json" "$TMP/new-$cmd.json"; then
		not_ok "$cmd changes the state"
	else
		ok "$cmd changes the state"
	fi
done

# walk CMD OP MODE: N = 1, 2, … until a run does not hit the fault.  MODE is "" (EIO)
# or ":kill".  Prints the number of fault points found.
walk() {
	cmd=$1 op=$2 mode=$3 n=1 bad=0
	set -- "$cmd" 0123456789ab
	[ "$cmd" = dismiss ] && set -- "$@" --reason "not a real breakage"
	while [ "$n" -le 50 ]; do
		cp "$TMP/old.json" "$WORK/state.json"
		NEXTBOT_FAULT="$op:$n$mode" "$NEXTBOT" -c "$CFG" "$@" >"$TMP/out" 2>"$TMP/err"
		rc=$?
		if [ "$rc" = 0 ]; then
			# passed the last fault point: the new state, complete
			same_json "$WORK/state.json" "$TMP/new-$cmd.json" || bad=1
			break
		fi
		if [ "$mode" = ":kill" ] && [ "$rc" != 137 ]; then
			echo "# $cmd $op:$n$mode: exit $rc, expected a kill"; bad=1
		fi
		if [ "$mode" = "" ] && { [ "$rc" = 137 ] || ! grep -q 'state' "$TMP/err"; }; then
			echo "# $cmd $op:$n: exit $rc, stderr: $(cat "$TMP/err")"; bad=1
		fi
		if grep -q 'Sanitizer' "$TMP/err"; then # SAN=1: leaks on the error paths
			echo "# $op:$n$mode: $(grep -m1 'Sanitizer' "$TMP/err")"; bad=1
		fi
		if ! same_json "$WORK/state.json" "$TMP/old.json" &&
		   ! same_json "$WORK/state.json" "$TMP/new-$cmd.json"; then
			echo "# $cmd $op:$n$mode: state.json is neither old nor new:"
			head -c 300 "$WORK/state.json" | sed 's/^/#   /'; bad=1
		fi
		if [ "$mode" = "" ] && ls "$WORK" | grep -q '\.tmp'; then
			echo "# $cmd $op:$n: temp file left after a failed save"; bad=1
		fi
		# the next run, without faults, completes from whatever is there
		if ! "$NEXTBOT" -c "$CFG" status >/dev/null 2>"$TMP/err2"; then
			echo "# $cmd $op:$n$mode: status after the fault fails: $(cat "$TMP/err2")"; bad=1
		fi
		if same_json "$WORK/state.json" "$TMP/old.json" &&
		   ! "$NEXTBOT" -c "$CFG" "$@" >/dev/null 2>"$TMP/err2"; then
			echo "# $cmd $op:$n$mode: rerun fails: $(cat "$TMP/err2")"; bad=1
		fi
		same_json "$WORK/state.json" "$TMP/new-$cmd.json" || {
			echo "# $cmd $op:$n$mode: no new state after the rerun"; bad=1; }
		rm -f "$WORK"/state.json.tmp.*
		[ "$bad" = 0 ] || return 1
		n=$((n + 1))
	done
	points=$((n - 1))
	[ "$n" -le 50 ] || bad=1
	return $bad
}

for cmd in undrop dismiss; do
	for op in open write fsync rename; do
		for mode in ":kill" ""; do
			if walk "$cmd" "$op" "$mode"; then
				ok "$cmd: $points $op fault point(s)${mode:+ (kill)}, state old or new, rerun completes"
			else
				not_ok "$cmd: $op faults${mode:+ (kill)}"
			fi
			case "$op" in
			open|fsync) want=2 ;; # the temp file and the directory
			*) want=1 ;;
			esac
			[ "$points" -ge "$want" ] || not_ok "$cmd: only $points $op point(s), expected $want"
		done
	done
done

done_testing
