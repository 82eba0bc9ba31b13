#!/bin/sh
# `nextbot daemon`: catches up once after a missed slot, keeps its old config when a
# SIGHUP finds a broken one, and on SIGTERM exits 0 with the lock released.
. "$(dirname "$0")/lib.sh"

W=$TMP/w
"$NEXTBOT" -q sim init "$W" --seed 2 >/dev/null || exit 1
"$NEXTBOT" -q sim advance "$W" --days 1 >/dev/null || exit 1
$PYTHON - "$W/nextbot.yaml" <<'EOF'
import re, sys
p = sys.argv[1]
s = open(p).read()
s = re.sub(r"(?m)^build:\n(?:  - [^\n]*\n)+", "build: []\n", s)
s = re.sub(r"(?m)^test:\n(?:  - [^\n]*\n)+", "test: []\n", s)
open(p, "w").write(s + 'schedule: "0 2 * * *"\n')
EOF
expect_exit 0 "a first night" "$NEXTBOT" -q -c "$W/nextbot.yaml" run --date 2026-11-30
# that night started three days ago: the 02:00 slots since then were missed
$PYTHON - "$W/state/state.json" <<'EOF'
import json, sys, time
p = sys.argv[1]
st = json.load(open(p))
st["runs"][-1]["started"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 3 * 86400))
json.dump(st, open(p, "w"))
EOF

"$NEXTBOT" -c "$W/nextbot.yaml" daemon >"$TMP/daemon.out" 2>"$TMP/daemon.err" &
pid=$!
today=$(date -u +%Y-%m-%d)
i=0
while [ $i -lt 120 ]; do
	grep -q "night $today" "$TMP/daemon.err" && grep -q "daemon: next night at" "$TMP/daemon.err" && break
	sleep 0.5
	i=$((i + 1))
done
check "the missed night is caught up at once" sh -c "$NEXTBOT -c '$W/nextbot.yaml' --json status |
	$PYTHON -c 'import json,sys; d=[r[\"date\"] for r in json.load(sys.stdin)[\"runs\"]]; assert \"$today\" in d, d'"
check "then it waits for the next slot" grep -q "daemon: next night at" "$TMP/daemon.err"
check "only once" test "$(grep -c "night $today: " "$TMP/daemon.err")" -le 2

printf 'bogus: [\n' >>"$W/nextbot.yaml"
kill -HUP $pid
sleep 1
check "a broken config on SIGHUP keeps the old one" sh -c "grep -q 'keeping the old config' '$TMP/daemon.err' &&
	kill -0 $pid"

kill -TERM $pid
i=0
while kill -0 $pid 2>/dev/null && [ $i -lt 40 ]; do sleep 0.25; i=$((i + 1)); done
wait $pid
check "SIGTERM: exits 0" test $? = 0
check "the lock is free afterwards" flock -n "$W/state/lock" true
done_testing
