#!/bin/sh
# `nextbot boot-test` with a fake QEMU (--qemu): the verdict from the console (marker,
# panic, oops, timeout, no marker), the console's last lines on a failure, QEMU's
# arguments (TCG without a usable /dev/kvm, -no-reboot, panic=-1) and the initramfs
# it gets (a newc cpio whose /init prints the marker); runner.devices in check-config.
# No kernel and no QEMU are needed; busybox-static is (else the boot parts skip).
. "$(dirname "$0")/lib.sh"

cat >"$TMP/qemu" <<'EOS'
#!/bin/sh
# a fake QEMU: records its arguments and the initramfs, prints the console of $FAKE
printf '%s\n' "$@" >"$FAKE_DIR/args"
while [ $# -gt 0 ]; do [ "$1" = -initrd ] && cp "$2" "$FAKE_DIR/initrd"; shift; done
i=0
while [ $i -lt 40 ]; do echo "[    0.$i] early line $i"; i=$((i + 1)); done
case "$FAKE" in
ok) printf 'Run /init as init process\nNEXTBOT-BOOT-OK\nreboot: Restarting system\n' ;;
panic) printf 'Kernel panic - not syncing: printk: no CPU hotplug callbacks: 183\n' ;;
oops) printf 'BUG: kernel NULL pointer dereference, address: 0000000000000008\nOops: 0002 [#1]\n' ;;
hang) echo 'Freeing unused kernel image memory'; sleep 60 ;;
quit) echo 'Run /init as init process' ;;
esac
EOS
chmod +x "$TMP/qemu"
export FAKE_DIR="$TMP"
: >"$TMP/bzImage"

expect_exit 2 "boot-test with a bad option exits 2" "$NEXTBOT" boot-test --frob
expect_exit 1 "boot-test without the kernel exits 1" "$NEXTBOT" boot-test --kernel "$TMP/none"
check "the missing kernel is named" grep -q "$TMP/none" "$TMP/err"

if [ ! -x /bin/busybox ]; then
	ok "# SKIP the boots: no /bin/busybox (scripts/deps --kernel installs busybox-static)"
	done_testing
	exit
fi

boot() { FAKE=$1 "$NEXTBOT" boot-test --kernel "$TMP/bzImage" --qemu "$TMP/qemu -name t" \
	--timeout "${2:-60}"; }
expect_exit 0 "the marker passes" boot ok
check "the pass is said" grep -q "^boot-test: PASS" "$TMP/out"
check "TCG without a usable /dev/kvm" grep -qx -- "tcg" "$TMP/args"
check "QEMU ends at a reboot" grep -qx -- "-no-reboot" "$TMP/args"
check "a panic reboots" grep -q "panic=-1" "$TMP/args"
check "the console is the serial port" grep -q "console=ttyS0" "$TMP/args"
check "the words of --qemu come first" sh -c "head -1 '$TMP/args' | grep -qx -- -name"
$PYTHON - "$TMP/initrd" >"$TMP/cpio" <<'EOS'
import sys
d = open(sys.argv[1], "rb").read()
i = 0
while True:
    h = d[i:i + 110]
    assert h[:6] == b"070701", h[:6]
    f = [int(h[6 + 8 * k:14 + 8 * k], 16) for k in range(13)]
    mode, size, namesize = f[1], f[6], f[11]
    i += 110
    name = d[i:i + namesize - 1].decode()
    i = (i + namesize + 3) & ~3
    data = d[i:i + size]
    i = (i + size + 3) & ~3
    if name == "TRAILER!!!":
        break
    print("%s %o %d %s" % (name, mode, size,
                           data.decode().replace("\n", "|") if name == "init" else ""))
EOS
check "the initramfs is a newc cpio" test -s "$TMP/cpio"
check "its /init prints the marker and reboots" \
	grep -qx "init 100755 [0-9]* #!/bin/sh|/bin/busybox echo NEXTBOT-BOOT-OK|/bin/busybox reboot -f|" \
	"$TMP/cpio"
check "it holds busybox" grep -q "^bin/busybox 100755 [1-9]" "$TMP/cpio"
check "it holds /dev/console" grep -q "^dev/console 20600 0" "$TMP/cpio"

expect_exit 1 "a panic fails" boot panic
check "the panic is named" grep -q "^boot-test: FAIL: kernel panic: Kernel panic - not syncing: printk" "$TMP/out"
check "the console's last lines are shown" grep -q "early line 39" "$TMP/out"
check "not the whole console" sh -c "! grep -q 'early line 3\$' '$TMP/out'"
expect_exit 1 "an oops fails" boot oops
check "the oops is named" grep -q "^boot-test: FAIL: kernel oops: BUG: kernel NULL pointer" "$TMP/out"
expect_exit 1 "a hang fails at the timeout" boot hang 2
check "the timeout is said" grep -q "^boot-test: FAIL: timeout: no NEXTBOT-BOOT-OK .* after 2s" "$TMP/out"
check "with the last line seen" grep -q "Freeing unused kernel image memory" "$TMP/out"
expect_exit 1 "QEMU ending without the marker fails" boot quit
check "that is said" grep -q "^boot-test: FAIL: QEMU exited without NEXTBOT-BOOT-OK" "$TMP/out"
expect_exit 1 "a QEMU that is not there fails" env FAKE=ok "$NEXTBOT" boot-test \
	--kernel "$TMP/bzImage" --qemu "$TMP/no-such-qemu"
check "and says which package" grep -q "qemu-system-x86" "$TMP/err"

# --- runner.devices ---------------------------------------------------------------
printf 'workdir: state\nbase: {name: origin, url: "%s", branch: master}\ntrees: []\n' \
	"$TMP" >"$TMP/base.yaml"
{ cat "$TMP/base.yaml"; echo "runner: {devices: [/dev/kvm]}"; } >"$TMP/kvm.yaml"
expect_exit 0 "runner.devices: [/dev/kvm] is accepted" "$NEXTBOT" -c "$TMP/kvm.yaml" check-config
check "the plan shows it" grep -q "^runner: .*, devices /dev/kvm" "$TMP/out"
{ cat "$TMP/base.yaml"; echo "runner: {devices: [/etc/shadow]}"; } >"$TMP/bad.yaml"
expect_exit 2 "a device outside /dev is refused" "$NEXTBOT" -c "$TMP/bad.yaml" check-config
check "with its line and key" grep -q "bad.yaml:4:.*runner.devices: '/etc/shadow' is not a device" "$TMP/err"
done_testing
