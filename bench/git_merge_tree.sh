#!/bin/sh
# The same night with `git merge-tree --write-tree` chained in memory (no index, no work
# tree) and `git commit-tree` for each merge commit:  git_merge_tree.sh REPO BASE LIST
# (arguments as for git_merge.sh; REPO may be bare).  A tree already contained in the
# result gets no commit, a conflicting tree is left out.  Prints the final commit id.
set -eu
repo=$1 base=$2
list=$(cd "$(dirname "$3")" && pwd)/$(basename "$3")
cd "$repo"
head=$(git rev-parse "refs/feeds/$base")
while read -r name branch url; do
	tip=refs/feeds/$name
	if git merge-base --is-ancestor "$tip" "$head"; then
		continue
	fi
	if tree=$(git merge-tree --write-tree --no-messages "$head" "$tip"); then
		head=$(git commit-tree "$tree" -p "$head" -p "$tip" \
			-m "Merge branch '$branch' of $url")
	fi
done <"$list"
echo "$head"
