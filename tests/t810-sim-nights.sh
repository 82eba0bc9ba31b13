#!/bin/sh
# The season test: $NIGHTS simulated nights on each of $SEEDS ("1 7"), one world
# per seed played once, the seeds side by side; notify.remind_days: 1.  Issue 28's
# season is NIGHTS=20 (about 1300 s of CPU today: every search confirms each
# culprit with 7 pristine runs, a build and a test of the simulated project each,
# about 1 s of CPU a command); `make check` plays the first 5 nights of both seeds (about 300 s of CPU,
# as the ten nights of one seed this test played before), which hold a build, a
# test and a semantic defect each, reminders, a drop and flags that leave.
# After every night (tests/season.py, against git and the simulator's truth):
#  - no flag is open whose culprit (or semantic partner) left every merged branch,
#    and a flag resolved as "left-tree" did leave;
#  - every reminder is about a breakage tonight's build still shows (the flag was
#    seen tonight and next carries its culprit) and answers the first mail of its
#    own audience;
#  - the summary names every flag still open and every tree kept at an older tip
#    or left out, with its reason; its subject counts the open flags;
#  - a patch the maintainer dropped (after night 4) is not in next.
# At the end of the season:
#  - recall and precision 1.00 against truth.json: every build, test and semantic
#    defect that sat in next is flagged with its patch (and partner); every flag
#    blames a defect, a flaky one a flaky defect of its own tree; nothing that is
#    only in mm-unstable is flagged, merged or mailed;
#  - each flag gets one report to its submitter, threaded to its Message-ID;
#  - every mail's prose lines fit 78 columns, no mail holds the workdir path, and
#    every report's Reproduce: block, run at the end (after mm-next and
#    mm-unstable were rebased) in an empty folder where only the remotes are
#    reachable, fails with the flag's first error line (a flag whose patch left its
#    tree since: the block says so, and fails), and its bisect logs replay in the
#    checkout where the block rebuilds next commit for commit (not after a drop).
# Each night's time (sim advance, run, and the night's phases and commands from its
# metrics.prom) is printed; runner.cache is on where this nextbot has it (NO_CACHE=1:
# off).  The season, and longer ones, run outside `make check`:
# NIGHTS=20 sh tests/t810-sim-nights.sh; SEEDS="1 2 3 7" NIGHTS=30 sh tests/t810-…
. "$(dirname "$0")/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
MAILS=$HERE/mails.py
SEASON=$HERE/season.py
NIGHTS=${NIGHTS:-5}
export NEXTBOT

# profile METRICS: where the night's time went, from its metrics.prom
profile() {
	awk '/^nextbot_night_phase_seconds/ { split($1, a, "\""); p = p a[2] " " $2 " s, " }
	     /^nextbot_night_commands / { c = $2 }
	     /^nextbot_night_command_cpu_seconds / { cpu = $2 }
	     /^nextbot_night_bisect_probes / { b = $2 }
	     /^nextbot_night_confirm_runs / { k = $2 }
	     END { printf "%s%d commands (%.1f s of CPU), %d bisect probes, %d confirmation runs",
		   p, c, cpu, b, k }' "$1"
}
# now: seconds since the epoch, with fractions
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

# season SEED: plays and checks one seed's season; TAP lines on stdout
season() {
	seed=$1
	TMP=$TMP/seed-$seed   # expect_exit's files are the seed's own
	mkdir -p "$TMP"
	W=$TMP/world
	expect_exit 0 "seed $seed: sim init" "$NEXTBOT" sim init "$W" --seed "$seed" \
		${NO_CACHE:+--no-cache}
	cfg=$W/nextbot.yaml
	# reminders every night a breakage still shows
	sed -i 's/^notify:$/&\n  remind_days: 1/' "$cfg"
	grep -q '^  remind_days: 1$' "$cfg" || not_ok "seed $seed: remind_days set"
	# every probe of a search builds a clean tree: with the compiler cache, which sim
	# init turns on where this nextbot has it (bwrap), a clean build costs little more
	# than preprocessing; without it the season takes several times as long
	if [ -z "${NO_CACHE:-}" ] && { command -v bwrap >/dev/null 2>&1 || [ -x /usr/bin/bwrap ]; }; then
		grep -qx 'runner: {cache: {max: 5G}}' "$cfg" ||
			not_ok "seed $seed: sim init turned the compiler cache on"
	else
		grep -q '^runner:' "$cfg" && not_ok "seed $seed: sim init left the compiler cache off"
	fi
	"$NEXTBOT" -q -c "$cfg" check-config >/dev/null 2>&1 ||
		not_ok "seed $seed: check-config accepts the world's config"
	if grep -q '^runner: {cache' "$cfg"; then
		echo "# seed $seed: with the compiler cache"
	else
		echo "# seed $seed: without a compiler cache"
	fi
	dropped=
	night=1
	while [ "$night" -le "$NIGHTS" ]; do
		t0=$(now)
		"$NEXTBOT" sim advance "$W" --days 1 >/dev/null 2>&1 || not_ok "sim advance $night"
		t1=$(now)
		date=$(date -u -d "2026-12-01 + $night days" +%Y-%m-%d)
		expect_exit 0 "seed $seed: night $night runs" "$NEXTBOT" -q -c "$cfg" run --date "$date"
		t2=$(now)
		echo "# seed $seed night $night: sim advance $(secs "$t0" "$t1") s," \
			"run $(secs "$t1" "$t2") s: $(profile "$W/state/metrics.prom")"
		# (before anything else changes the flags)
		check "seed $seed night $night: flags follow the truth" \
			$PYTHON "$SEASON" follow "$W" "$date"
		check "seed $seed night $night: reminders only for what still shows, in thread" \
			$PYTHON "$SEASON" remind "$W" "$date"
		check "seed $seed night $night: the summary names open flags, trees not at the tip" \
			$PYTHON "$SEASON" summary "$W" "$date"
		# after night 4, the maintainer drops the first open flag's patch
		if [ "$night" = 4 ]; then
			dropped=$("$NEXTBOT" -c "$cfg" --json flagged | $PYTHON -c '
import json, sys
for f in json.load(sys.stdin)["flags"]:
    if f["state"] == "open" and f["kind"] != "flaky" and f["patch_id"]:
        print(f["id"], f["patch_id"]); break')
			if [ -n "$dropped" ]; then
				expect_exit 0 "seed $seed: drop ${dropped% *}" "$NEXTBOT" -q -c "$cfg" \
					drop "${dropped% *}" --reason "test drop"
			fi
		fi
		if [ -n "$dropped" ] && [ "$night" -gt 4 ]; then
			check "seed $seed night $night: the dropped patch is not in next" \
				sh -c "! git -C '$W/state/repo.git' log --format=%H refs/heads/next \
					--not refs/feeds/origin | while read c; do
					git -C '$W/state/repo.git' diff-tree -p --no-renames \$c^ \$c 2>/dev/null |
					git patch-id --stable; done | grep -q '^${dropped#* } '"
		fi
		night=$((night + 1))
	done
	"$NEXTBOT" -c "$cfg" --json flagged >"$TMP/flags-$seed.json"
	check "seed $seed: recall and precision 1.00 against truth.json" \
		$PYTHON "$SEASON" truth "$W"
	# reports a submitter can act on from their own desk
	check "seed $seed: every prose line of every mail is at most 78 columns" \
		$PYTHON "$MAILS" width "$W/state/outbox"
	check "seed $seed: no mail holds the workdir path" $PYTHON "$MAILS" private "$W/state/outbox" \
		"$W/state"
	check "seed $seed: every report's Reproduce: block fails as its night did, after the rebases" \
		$PYTHON "$MAILS" repro "$W/state/outbox" "$TMP/flags-$seed.json" \
		--expose "$W/remotes" --expose "$W/sim"
	check "seed $seed: nothing from mm-unstable in next" sh -c "
		git -C '$W/state/repo.git' show next:Next/Trees | grep -qv mm-unstable &&
		! git -C '$W/state/repo.git' show next:Next/Trees | grep -q mm-unstable"
	# objects of an earlier mm-next may live on in today's mm-unstable: what matters
	# is that tonight's next holds no commit that only mm-unstable has
	check "seed $seed: next holds no commit that only mm-unstable has" sh -c "
		for c in \$(git -C '$W/remotes/mm.git' rev-list mm-unstable --not mm-next mm-stable); do
			git -C '$W/state/repo.git' cat-file -e \$c 2>/dev/null || continue
			git -C '$W/state/repo.git' merge-base --is-ancestor \$c refs/feeds/origin && continue
			git -C '$W/state/repo.git' merge-base --is-ancestor \$c refs/heads/next && exit 1
		done; exit 0"
	check "seed $seed: every mail of the outbox parses, headers within limits and clean" \
		$PYTHON - "$W/state/outbox" <<'EOF'
import email, email.policy, glob, json, sys
bad = []
allowed = {"from", "to", "cc", "subject", "date", "message-id", "in-reply-to", "references",
           "mime-version", "content-type", "content-transfer-encoding", "auto-submitted",
           "x-nextbot-event", "x-nextbot-flag"}
for path in glob.glob(sys.argv[1] + "/*.json"):
    n = json.load(open(path))
    if n["channel"] != "mail":
        continue
    raw = n["body"].encode("utf-8")
    head = raw.split(b"\r\n\r\n", 1)[0]
    rest = raw.replace(b"\r\n", b"")
    if b"\n" in rest or b"\r" in rest:
        bad.append("%s: bare CR or LF" % path)
    for line in head.split(b"\r\n"):
        if len(line) > 998:
            bad.append("%s: header line of %d octets" % (path, len(line)))
        if any(c > 126 for c in line):
            bad.append("%s: 8-bit header" % path)
    m = email.message_from_bytes(raw, policy=email.policy.default)
    names = {k.lower() for k in m.keys()}
    if not names <= allowed:
        bad.append("%s: unexpected headers %s" % (path, names - allowed))
    if m["Auto-Submitted"] != "auto-generated" or not m["Message-ID"]:
        bad.append("%s: Auto-Submitted or Message-ID missing" % path)
    if n["kind"] in ("build-failure", "test-failure", "flaky", "resolved", "dropped") and \
            not m["X-Nextbot-Flag"]:
        bad.append("%s: a notice about a flag without X-Nextbot-Flag" % path)
    (m.get_body(("plain",)) if m.is_multipart() else m).get_content()
for b in bad:
    print("#", b)
sys.exit(1 if bad else 0)
EOF
}

# one world per seed, played once, the seeds side by side
t0=$(now)
for seed in ${SEEDS:-1 7}; do
	season "$seed" >"$TMP/season-$seed.tap" 2>&1 &
done
wait
for seed in ${SEEDS:-1 7}; do
	while IFS= read -r line; do
		case "$line" in
		"not ok "*) not_ok "${line#not ok * - }" ;;
		"ok "*) ok "${line#ok * - }" ;;
		*) echo "$line" ;;
		esac
	done <"$TMP/season-$seed.tap"
done
echo "# the season: $NIGHTS nights of seeds ${SEEDS:-1 7} in $(secs "$t0" "$(now)") s"
done_testing
