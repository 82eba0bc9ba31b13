#!/bin/sh
# The night's fetch with the git command line, as linux-next's is: one `git fetch` per
# tree into one bare repository.  git_fetch.sh REPO BASE_URL LIST
#   REPO      the bare repository (created when missing)
#   BASE_URL  mainline's url: its master becomes refs/feeds/origin
#   LIST      one "name branch url" line per tree: refs/feeds/<name>
# Automatic gc is off (with 400 packs git would repack in the middle of the night;
# nextbot writes a multi-pack-index instead), as in a tuned linux-next setup.
set -eu
repo=$1 base_url=$2
list=$(cd "$(dirname "$3")" && pwd)/$(basename "$3")
[ -d "$repo" ] || git init -q --bare "$repo"
cd "$repo"
git config gc.auto 0
git config maintenance.auto false
git fetch -q "$base_url" "+refs/heads/master:refs/feeds/origin"
while read -r name branch url; do
	git fetch -q "$url" "+refs/heads/$branch:refs/feeds/$name"
done <"$list"
