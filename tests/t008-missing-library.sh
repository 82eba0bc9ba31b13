#!/bin/sh
# A library the build needs and pkg-config does not find is named before anything
# compiles, with the way to get it; a build that has them all goes on.  The machine's
# .pc files are linked into a folder of their own, libcurl's left out, and pkg-config
# is pointed at that folder alone (PKG_CONFIG_LIBDIR), so nothing is uninstalled.
. "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PC=$TMP/pc
mkdir -p "$PC"
for d in $(pkg-config --variable pc_path pkg-config | tr ':' ' '); do
	[ -d "$d" ] || continue
	for f in "$d"/*.pc; do
		[ -e "$f" ] && [ ! -e "$PC/$(basename "$f")" ] && ln -s "$f" "$PC/"
	done
done
check "libcurl.pc is among the machine's (scripts/deps installs it)" test -e "$PC/libcurl.pc"
rm -f "$PC/libcurl.pc"

# the build's own folder: nothing of the checkout's build is touched; a plain make,
# whatever make (SAN=1, -j) runs this test
sub_make() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u SAN "$@"; }
expect_exit 2 "make stops without libcurl" \
	sub_make PKG_CONFIG_LIBDIR="$PC" PKG_CONFIG_PATH= make -C "$ROOT" -s BUILD="$TMP/build" nextbot
check "... naming it and the way to get it" \
	grep -q "pkg-config does not find: libcurl (run scripts/deps, or set PKG_CONFIG_PATH)" "$TMP/err"
check "... and only it" sh -c "! grep -q 'libgit2\|json-c' '$TMP/err'"
check "... before anything compiled" sh -c "! find '$TMP/build' -name '*.o' 2>/dev/null | grep -q ."
expect_exit 0 "with libcurl back, the check passes" \
	sub_make PKG_CONFIG_LIBDIR="$PC:$(dirname "$(pkg-config --path libcurl)")" PKG_CONFIG_PATH= \
	make -C "$ROOT" -s BUILD="$TMP/build" pkgcheck
done_testing
