#!/bin/sh
# The kernel nights (`make kernel-check`, outside `make check`): a kernel world made by
# `nextbot sim init --kernel` from the real Linux source, its nights played with
# `nextbot run` (a tinyconfig build, a boot under QEMU), scored against truth.json by
# tests/kernel/score.py: every planted culprit named exactly, nobody else flagged.
#
# The source: $NEXTBOT_KERNEL_SRC (a tarball or a tree), else Debian's
# /usr/src/linux-source-*.tar.xz (apt-get install linux-source); absent: skipped.
# NIGHTS=N (default 1): nights on days 0..N-1 of the world's script (day 0: the tinyconfig
# build break in mm-next; 1: the boot panic in printk; 2: the semantic conflict of
# mm-next and printk; 3: the flaky boot).  CACHE=0: without the compiler cache.
# INFRA=1: one more night whose boot cannot start anywhere (QEMU given a machine that
# does not exist): nobody blamed, the operator's mail says what failed.
# KEEP=1 keeps the world (it is printed).  A kernel build takes minutes: a night, many.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
NEXTBOT=${NEXTBOT:-$ROOT/nextbot}
export NEXTBOT
src=${NEXTBOT_KERNEL_SRC:-}
[ -n "$src" ] || src=$(ls /usr/src/linux-source-*.tar.xz 2>/dev/null | tail -1)
if [ -z "$src" ] || [ ! -e "$src" ]; then
	echo "# SKIP the kernel nights: no kernel source (set NEXTBOT_KERNEL_SRC, or"
	echo "# apt-get install linux-source for /usr/src/linux-source-*.tar.xz)"
	exit 0
fi
for tool in qemu-system-x86_64 /bin/busybox bwrap; do
	command -v "$tool" >/dev/null || { echo "# missing $tool: scripts/deps --kernel"; exit 1; }
done
# a world is 2 GB: under build/ (KERNEL_WORLDS=DIR elsewhere)
W=$(mktemp -d "${KERNEL_WORLDS:-$ROOT/build}/kernel-world.XXXXXX")
[ -n "${KEEP:-}" ] && echo "# world: $W" || trap 'rm -rf "$W"' EXIT
rm -rf "$W"
failed=0
t0=$(date +%s)
opt=
[ "${CACHE:-1}" = 0 ] && opt=--no-cache
"$NEXTBOT" sim init "$W" --kernel "$src" $opt || exit 1
echo "# sim init --kernel: $(( $(date +%s) - t0 )) s"
days=
d=0
while [ "$d" -lt "${NIGHTS:-1}" ]; do
	[ "$d" -gt 0 ] && { "$NEXTBOT" sim advance "$W" || exit 1; }
	t=$(date +%s)
	"$NEXTBOT" -c "$W/nextbot.yaml" run --date "2025-01-0$((6 + d))" >"$W/night-$d.log" 2>&1
	rc=$?
	echo "# night $d: exit $rc, $(( $(date +%s) - t )) s"
	grep -E "flag|infrastructure|base broken|culprit" "$W/night-$d.log" | sed 's/^/#   /'
	days="$days $d"
	d=$((d + 1))
done
if /usr/bin/python3 "$ROOT/tests/kernel/score.py" "$W" $days; then
	echo "ok - the planted culprits named exactly, nobody else flagged"
else
	echo "not ok - the kernel nights' verdicts"; failed=1
fi
if [ -n "${INFRA:-}" ]; then
	"$NEXTBOT" sim advance "$W" >/dev/null || exit 1
	sed -i "s#boot-test --kernel#boot-test --qemu 'qemu-system-x86_64 -machine none-such' --kernel#" \
		"$W/nextbot.yaml"
	rm -rf "$W/state"
	"$NEXTBOT" -c "$W/nextbot.yaml" run --date 2025-01-20 >"$W/night-infra.log" 2>&1
	if /usr/bin/python3 "$ROOT/tests/kernel/score.py" infra "$W"; then
		echo "ok - a boot that fails everywhere blames nobody, the operator hears"
	else
		echo "not ok - the infrastructure night"; failed=1
	fi
fi
echo "# kernel nights: $(( $(date +%s) - t0 )) s"
exit $failed
