#!/bin/sh
# Regenerates the expected routing data of tests/test_people.c with the real
# scripts/get_maintainer.pl (Debian's linux-source package ships it), run once
# during development; CI never runs this (it needs linux-source), it reads the
# .expected files.  Usage: sh tests/people/gen-expected.sh [LINUX_SOURCE_DIR]
#
# For each case, a tree of empty files (the MAINTAINERS, the .mailmap, the files
# named in *.files) is made in a temporary folder and, in it:
#   perl get_maintainer.pl --no-tree --no-git --no-git-fallback --no-rolestats \
#        --no-keywords -f PATH...
# (with -f, 6.1's script matches K: against the files' contents, which nextbot
# never reads: newer scripts leave K: to patches; --no-tree because the folder is
# no kernel tree), and, patch mode, for each NAME-patches/*.patch, keywords on:
#   perl get_maintainer.pl --no-tree --no-git --no-git-fallback --no-rolestats \
#        PATCHFILE
# whose K: lines are matched against the patch's changed lines, as nextbot matches
# them against a commit's (activity_commit_lines()).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
src=${1:-/tmp/linux-source}
gm=$src/scripts/get_maintainer.pl
[ -f "$gm" ] || { echo "no $gm: apt-get install linux-source, then untar it" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# gen NAME: tests/people/NAME.{MAINTAINERS,mailmap,files,cases} -> NAME.expected
gen() {
	name=$1
	tree=$tmp/$name
	mkdir -p "$tree"
	cp "$here/$name.MAINTAINERS" "$tree/MAINTAINERS"
	[ -f "$here/$name.mailmap" ] && cp "$here/$name.mailmap" "$tree/.mailmap"
	while IFS= read -r f; do
		mkdir -p "$tree/$(dirname "$f")"
		[ -e "$tree/$f" ] || : > "$tree/$f"
	done < "$here/$name.files"
	out=$here/$name.expected
	{
		echo "# made by tests/people/gen-expected.sh with $(basename "$src")'s"
		echo "# scripts/get_maintainer.pl, in a tree of the files of $name.files:"
		echo "#   perl get_maintainer.pl --no-tree --no-git --no-git-fallback \\"
		echo "#        --no-rolestats --no-keywords -f PATH..."
		echo "# one block per case: '== PATH...', then what it printed"
		while IFS= read -r c; do
			case "$c" in ''|'#'*) continue ;; esac
			echo "== $c"
			# shellcheck disable=SC2086
			(cd "$tree" && perl "$gm" --no-tree --no-git --no-git-fallback \
				--no-rolestats --no-keywords -f $c)
		done < "$here/$name.cases"
	} > "$out"
	echo "wrote $out"
	[ -d "$here/$name-patches" ] || return 0
	out=$here/$name-patches.expected
	{
		echo "# made by tests/people/gen-expected.sh with $(basename "$src")'s"
		echo "# scripts/get_maintainer.pl, in a tree of the files of $name.files:"
		echo "#   perl get_maintainer.pl --no-tree --no-git --no-git-fallback \\"
		echo "#        --no-rolestats PATCHFILE"
		echo "# one block per patch of $name-patches/: '== NAME', then what it printed"
		for p in "$here/$name-patches"/*.patch; do
			echo "== $(basename "$p")"
			(cd "$tree" && perl "$gm" --no-tree --no-git --no-git-fallback \
				--no-rolestats "$p")
		done
	} > "$out"
	echo "wrote $out"
}

for n in ${CASES:-hand kernel}; do
	[ -f "$here/$n.cases" ] && gen "$n"
done
