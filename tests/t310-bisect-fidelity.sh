#!/bin/sh
# Exact worker trees (issue 28): whatever a command did to the tracked files of its tree
# (edited at the same size with the mtime put back, deleted, swapped for a folder or a
# link, chmod), the next step's tree is the commit's, byte for byte, mode and type.
# First the issue's smallest cases, then generated histories (tests/fidelity.py:
# attributes, a submodule, file<->folder and case-only renames, symlinks, exec bits)
# bisected by `nextbot bisect` with a command that checks its tree against the commit's
# and damages it: zero wrong steps, the first bad commit of `git bisect run` (undamaged).
# SEEDS="1 2 3 4 5 6" sh tests/t310-bisect-fidelity.sh runs more histories.
. "$(dirname "$0")/lib.sh"
FID="$(cd "$(dirname "$0")" && pwd)/fidelity.py"
cd "$TMP" || exit 1
export TMPDIR="$TMP"

# --- the smallest case: 16 commits with .gitattributes -------------------------------------
# c11 breaks a.txt; the command reads it, then rewrites it at the same size with its mtime
# put back (only the ctime tells), deletes b.txt, and leaves build output (kept, as git does)
small() { # small DIR WITH_ATTRIBUTES
	git_q init -q "$1" && (cd "$1" &&
		if [ "$2" = 1 ]; then echo '*.txt text' >.gitattributes; fi &&
		echo good >a.txt && echo b >b.txt && echo 0 >0.txt && git add . &&
		git_q commit -qm c0 && for i in $(seq 1 15); do
			echo $i >n.txt; if [ $i = 11 ]; then echo 'bad!' >a.txt; fi
			git add -A && git_q commit -qm c$i || exit 1; done)
}
cat >damage.sh <<'EOF'
#!/bin/sh
v=$(cat a.txt); b=$(cat b.txt 2>/dev/null); z=$(cat 0.txt 2>/dev/null)
echo "$(git log -1 --format=%s) a=$v b=$b 0=$z kept=$(cat kept.o 2>/dev/null)" >>"$LOG"
cp -p a.txt ../a.ref && printf 'bad!\n' >a.txt && touch -r ../a.ref a.txt && rm -f b.txt
if [ "$FOLDER" = 1 ]; then rm -f 0.txt && mkdir 0.txt && echo x >0.txt/o; fi
echo built >kept.o
test "$v" = good
EOF
chmod +x damage.sh
run_small() { # run_small NAME WITH_ATTRIBUTES FILE_TO_FOLDER
	rm -rf small small.log
	small small "$2"
	C11=$(git -C small rev-parse HEAD~4)
	LOG=$TMP/small.log FOLDER=$3 expect_exit 0 "smallest case ($1): nextbot bisect" \
		"$NEXTBOT" --json bisect --repo small --good HEAD~15 --bad HEAD -- "$TMP/damage.sh"
	check "smallest case ($1): c11 is the first bad commit" \
		grep -q "\"first_bad\": *\"$C11\"" "$TMP/out"
	check "smallest case ($1): every step saw its commit's a.txt, b.txt and 0.txt" \
		awk '{ n = substr($1, 2) + 0; want = n >= 11 ? "a=bad!" : "a=good"
			if ($2 != want || $3 != "b=b" || $4 != "0=0") bad = 1 } END { exit bad }' small.log
	sed 's/^/# /' small.log
	check "smallest case ($1): build output stays, as with git" \
		test "$(grep -c 'kept=built' small.log)" -ge 2
}
run_small "with attributes" 1 0
run_small "a file made a folder" 0 1

# --- generated histories ---------------------------------------------------------------
# a bisection of each history, the first bad commit's number drawn from the seed (and a
# second one when SEEDS is given)
for seed in ${SEEDS:-1 2 3}; do
	rm -rf hist copy.git work log.* oracle
	$PYTHON "$FID" gen hist "$seed" 64 || { not_ok "seed $seed: generating the history"; continue; }
	git clone -q --bare hist copy.git
	mkdir work
	first=$(git -C hist rev-list --max-parents=0 HEAD)
	# the oracle itself: git's fresh checkout passes, one damaged file does not
	if [ "$seed" = "$(echo ${SEEDS:-1} | cut -d" " -f1)" ]; then
		rm -rf fresh && git clone -q hist fresh
		(cd fresh && FID_COPY=$TMP/copy.git FID_LOG=$TMP/log.self FID_K=99 FID_WORK=$TMP/work \
			$PYTHON "$FID" step && f=$(git ls-files '*.txt' | head -1) &&
			cp -p "$f" ../ref && printf x | dd of="$f" bs=1 seek=1 conv=notrunc 2>/dev/null &&
			touch -r ../ref "$f" && FID_COPY=$TMP/copy.git FID_LOG=$TMP/log.self FID_K=99 \
			FID_WORK=$TMP/work $PYTHON "$FID" step)
		check "seed $seed: the oracle passes git's checkout and catches a damaged file" \
			test "$(cut -c1-3 log.self | tr '\n' ' ')" = "OK  WRO "
	fi
	ks="$((5 + seed * 7 % 50))"
	[ -n "${SEEDS:-}" ] && ks="$ks $((20 + seed * 13 % 44))"
	for k in $ks; do
		culprit=$(git -C hist rev-list --reverse HEAD | sed -n "${k}p")
		jobs=$(( (seed + k) % 3 == 1 ? 3 : 1 ))
		FID_COPY=$TMP/copy.git FID_LOG=$TMP/log.nb FID_K=$k FID_MUTATE=1 FID_SEED=$seed \
			FID_WORK=$TMP/work expect_exit 0 "seed $seed, k $k: nextbot bisect --jobs $jobs" \
			"$NEXTBOT" --json bisect --repo hist --jobs $jobs --good "$first" --bad master -- \
			$PYTHON "$FID" step
		ours=$($PYTHON -c 'import json,sys; print(json.load(open(sys.argv[1]))["first_bad"])' \
			"$TMP/out" 2>/dev/null)
		rm -rf oracle && git clone -q hist oracle && (cd oracle &&
			git bisect start master "$first" >/dev/null &&
			FID_COPY=$TMP/copy.git FID_LOG=$TMP/log.git FID_K=$k FID_MUTATE=0 FID_RESET=1 \
			FID_WORK=$TMP/work git bisect run $PYTHON "$FID" step >../git.out 2>&1)
		theirs=$(sed -n 's/ is the first bad commit$//p' git.out)
		check "seed $seed, k $k: git bisect run finds commit $k" test "$theirs" = "$culprit"
		check "seed $seed, k $k: the same first bad commit as git bisect run" \
			test -n "$ours" -a "$ours" = "$theirs"
		steps=$(grep -c . log.nb)
		check "seed $seed, k $k: $steps steps, none in a wrong tree" \
			test "$steps" -ge 5 -a "$(grep -c '^WRONG' log.nb)" = 0
		grep '^WRONG' log.nb | head -5 | sed 's/^/# /'
		# git itself keeps a file whose blob did not change when its attributes did
		echo "# git bisect run: $(grep -c '^WRONG' log.git) of $(grep -c . log.git) steps" \
			"not in the commit's exact tree"
		check "seed $seed, k $k: the tree was damaged at every step" \
			test -z "$(awk 'NF < 3' log.nb)"
		check "seed $seed, k $k: nothing was written through a planted link" \
			test -z "$(ls -A work/outside 2>/dev/null)"
		rm -f log.nb log.git
	done
done
check "no scratch checkout left behind" test -z "$(ls -d "$TMP"/nextbot-bisect.* 2>/dev/null)"

done_testing
