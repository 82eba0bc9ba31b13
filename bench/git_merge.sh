#!/bin/sh
# The night as linux-next's transcript (Next/merge.log) shows it, with the git command
# line in a work tree:  git_merge.sh REPO BASE LIST
#   REPO  a non-bare repository holding refs/feeds/<name> for the base and every tree
#   BASE  the base's name (refs/feeds/BASE)
#   LIST  one "name branch url" line per tree, in merge order
# git checkout master; git reset --hard BASE; then per tree git merge --no-ff, and on a
# conflict git merge --abort (the tree is left out, as linux-next does when it has no
# older version to fall back to).  Prints the final commit id; the transcript goes to
# REPO/.git/bench-merge.log.
set -eu
repo=$1 base=$2
list=$(cd "$(dirname "$3")" && pwd)/$(basename "$3")
cd "$repo"
log=.git/bench-merge.log
{
	echo "$ git checkout master"
	git checkout -q master
	echo "$ git reset --hard $base/master"
	git reset -q --hard "refs/feeds/$base"
	while read -r name branch url; do
		echo "Merging $name/$branch ($(git log -1 --format='%h %s' "refs/feeds/$name"))"
		echo "$ git merge --no-ff -m Merge branch '$branch' of $url $name/$branch"
		if ! git merge --no-ff -m "Merge branch '$branch' of $url" "refs/feeds/$name" 2>&1; then
			echo "# $name: left out: conflict"
			git merge --abort
		fi
	done <"$list"
} >"$log" 2>&1
git rev-parse HEAD
