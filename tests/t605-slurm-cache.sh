#!/bin/sh
# The compiler cache on a cluster (runner.cache.listen), on the tests' private
# single-node Slurm cluster: the same simulated world (seed 5 unless $SEED) plays
# $NIGHTS nights (2) with the local runner and its cache, and on Slurm with
# `cache: {listen: 127.0.0.1:0}`:
#  - on Slurm the builds' compiles reached the service through the nodes' relays
#    (TCP, with the night's token; none refused), and were answered from the store;
#  - the same flags, next trees and notices as the local runner's;
#  - no token file is left after a night, and a config that asks for the cache on
#    Slurm without listen is refused, naming the key.
# Where Slurm cannot start this test fails, it never passes silently.
. "$(dirname "$0")/lib.sh"
SEED=${SEED:-5}
NIGHTS=${NIGHTS:-2}
W=$TMP/w

slurm_cluster_start

# play LABEL: $NIGHTS nights in $W; next's tree per night, flags and notice ids to $TMP.
play() {
	label=$1
	: >"$TMP/$label.trees"
	: >"$TMP/$label.log"
	n=1
	while [ "$n" -le "$NIGHTS" ]; do
		"$NEXTBOT" sim advance "$W" --days 1 >/dev/null 2>&1 || not_ok "$label: sim advance $n"
		date=$(date -u -d "2026-12-01 + $n days" +%Y-%m-%d)
		expect_exit 0 "$label: night $n ($date) runs" \
			"$NEXTBOT" -c "$W/nextbot.yaml" run --date "$date"
		cat "$TMP/err" >>"$TMP/$label.log"
		tag=next-$(echo "$date" | tr -d -)
		echo "$date $(git -C "$W/state/repo.git" rev-parse -q --verify "$tag^{tree}")" \
			>>"$TMP/$label.trees"
		n=$((n + 1))
	done
	"$NEXTBOT" -c "$W/nextbot.yaml" --json flagged >"$TMP/$label.flags.json"
	ls "$W/state/outbox" >"$TMP/$label.outbox"
}

expect_exit 0 "sim init --seed $SEED" "$NEXTBOT" sim init "$W" --seed "$SEED"
sed -i 's/^bisect: {confirm: 3}$/bisect: {confirm: 1}/' "$W/nextbot.yaml"
check "the world confirms once and has the compiler cache" \
	sh -c "grep -qx 'bisect: {confirm: 1}' '$W/nextbot.yaml' &&
	       grep -q '^runner: {cache: {' '$W/nextbot.yaml'"
cp -a "$W" "$TMP/pristine"

# ---- the local runner, its cache on this host's socket ----
play local
mv "$W" "$TMP/local-world"

# ---- the cache on Slurm without listen: refused, naming the key ----
slurm_cluster_ready
cp -a "$TMP/pristine" "$W"
sed -i '/^runner: /d' "$W/nextbot.yaml"
printf 'runner: {kind: slurm, max_jobs: 2, cache: {kind: ccache}}\n' >>"$W/nextbot.yaml"
expect_exit 2 "the cache on Slurm without listen is refused" \
	"$NEXTBOT" -c "$W/nextbot.yaml" check-config
check "... naming listen" grep -q 'needs listen: HOST:PORT' "$TMP/err"
sed -i '/^runner: /d' "$W/nextbot.yaml"
printf 'runner: {kind: slurm, max_jobs: 2, cache: {kind: ccache, listen: "0.0.0.0:0"}}\n' \
	>>"$W/nextbot.yaml"
expect_exit 2 "a wildcard listen address is refused" \
	"$NEXTBOT" -c "$W/nextbot.yaml" check-config
check "... saying the nodes need an address to dial" grep -q 'not the wildcard' "$TMP/err"

# ---- the same nights on Slurm, the cache reached over TCP ----
sed -i '/^runner: /d' "$W/nextbot.yaml"
printf 'runner: {kind: slurm, max_jobs: 2, cache: {kind: ccache, listen: "127.0.0.1:0"}}\n' \
	>>"$W/nextbot.yaml"
play slurm

check "the same next tree every night" cmp -s "$TMP/local.trees" "$TMP/slurm.trees"
check "every night tagged a next" sh -c "! grep -q ' $' '$TMP/local.trees'"
check "the same notices (outbox ids)" cmp -s "$TMP/local.outbox" "$TMP/slurm.outbox"
check "the same flags" $PYTHON - "$TMP/local.flags.json" "$TMP/slurm.flags.json" <<'EOF'
import json, sys
local, slurm = (json.load(open(p))["flags"] for p in sys.argv[1:3])
def key(f):
    return (f["id"], f["tree"], f["commit"], f["kind"], f["state"], f["error"], f["excerpt"])
a = sorted(key(f) for f in local if f["kind"] != "flaky")
b = sorted(key(f) for f in slurm if f["kind"] != "flaky")
for f in a:
    print("# flag:", " ".join(str(x) for x in f[:5]))
sys.exit(0 if a == b and a else 1)
EOF
# "compiler cache: N connections of the nodes' relays over TCP, M without the night's token"
check "on Slurm the compiles reached the service through the relays, none refused" \
	$PYTHON - "$TMP/slurm.log" "$TMP/local.log" <<'EOF'
import re, sys
slurm, local = (open(p).read() for p in sys.argv[1:3])
relays = [(int(a), int(b)) for a, b in re.findall(
    r"compiler cache: (\d+) connections of the nodes' relays over TCP, (\d+) without", slurm)]
asked = [(int(a), int(b)) for a, b in re.findall(
    r"compiler cache: (\d+) compiles asked, (\d+) answered from the store", slurm)]
print("# relays' connections, refused, per night:", relays)
print("# compiles asked, answered from the store, per night:", asked)
ok = relays and all(r > 0 and bad == 0 for r, bad in relays)
ok = ok and asked and sum(h for _, h in asked) > 0
ok = ok and "relays over TCP" not in local
sys.exit(0 if ok else 1)
EOF
check "no token file is left after the nights" test ! -e "$W/state/workers/.cc-token"
check "no relay socket is left in the workers" \
	sh -c "! find '$W/state/workers' -name '.nextbot-slurm-*' | grep -q ."
done_testing
