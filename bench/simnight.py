#!/usr/bin/env python3
"""The simulator's kernel-sized world: nextbot's first night (with fetch) and an
ordinary night after it, against the git command line doing the same (issue 29).

simnight.py [--dir DIR] [--seed 7] [--trees 400] [--files 90000] [--history 200000]
            [--world W] [--nextbot PATH] [--keep]

`nextbot sim init DIR/w --seed S --trees N --files F --history H` writes the world; its
nextbot.yaml is used as it is (--world W: a copy of W, a world `sim init` wrote and
nothing has run in yet, instead of making one), except `build: []` and `test: []` (the merges are
compared, not the simulated builds).  Then:

  night 1  nextbot: `nextbot run` from a fresh work directory: it fetches mainline
           (H commits), every tree and the watched branch, and merges.
           git: a fresh bare repository; `git fetch` of mainline and of every tree
           (one process each), then per tree `git merge-tree --write-tree` onto the
           result so far, left out on a conflict, else `git commit-tree`.
  advance  `nextbot sim advance DIR/w` (a day of the feeds; not timed).
  night 2  the same again in the same two repositories: the ordinary night.

Each command runs under `/usr/bin/time -v`: its wall time ("Elapsed") and its peak
memory ("Maximum resident set size": the largest single process among the command
and the children it waited for).  Beside it the largest sum of resident sets of the
whole process tree, sampled every 20 ms (bench/realhist.py's measure).  One run of
each: the first night cannot be repeated on the same world without making it again.
Targets: night 1 nextbot/git wall <= 0.33 and peak < 300 MB; night 2 <= 0.2 and
< 300 MB.  Outcomes (merged with git's tree, already merged, left out) are compared
tree by tree and reported; on night 2 nextbot may merge a tree's last good tip where
git leaves the tree out, which is counted, not an error.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import realhist  # noqa: E402  (measure(), git(), GIT_ENV)

DATES = ("2026-12-05", "2026-12-06")

GIT_NIGHT = r"""
set -eu
repo=$1; list=$2; SKIP=${3-}
cd "$repo"
git config gc.auto 0
git config maintenance.auto false
while read -r name url branch; do
	git fetch -q "$url" "+refs/heads/$branch:refs/feeds/$name"
done < "$list"
head=$(git rev-parse refs/feeds/origin)
while read -r name url branch; do
	[ "$name" = origin ] && continue
	case " $SKIP " in *" $name "*) continue ;; esac
	if git merge-base --is-ancestor "refs/feeds/$name" "$head"; then
		echo "$name already"
		continue
	fi
	if tree=$(git merge-tree --write-tree --no-messages "$head" "refs/feeds/$name"); then
		head=$(git commit-tree "$tree" -p "$head" -p "refs/feeds/$name" -m "Merge branch '$name'")
		echo "$name merged $tree"
	else
		echo "$name left-out"
	fi
done < "$list"
"""


def say(*a):
    print(*a, flush=True)


def feeds(cfg, world):
    """(name, absolute url, branch) of the base, the trees and the watched branches,
    in the config's order, and the names never merged (the watched ones)."""
    out, watched, section, cur = [], [], None, None
    with open(cfg) as f:
        for line in f:
            m = re.match(r'base: \{name: (\S+), url: "([^"]+)", branch: (\S+)\}', line)
            if m:
                out.append(("origin", m.group(2), m.group(3)))
                continue
            if re.match(r"^(trees|watch):", line):
                section = line.split(":")[0]
                continue
            if re.match(r"^\S", line):
                section = None
            if section is None:
                continue
            m = re.match(r"\s+- name: (\S+)", line)
            if m:
                cur = [m.group(1), None, None]
                continue
            m = re.match(r'\s+url: "([^"]+)"', line)
            if m and cur:
                cur[1] = m.group(1)
            m = re.match(r"\s+branch: (\S+)", line)
            if m and cur:
                cur[2] = m.group(1)
                out.append(tuple(cur))
                if section == "watch":
                    watched.append(cur[0])
                cur = None
    return [(n, os.path.normpath(os.path.join(world, u)), b) for n, u, b in out], watched


def no_builds(cfg):
    """The world's config with `build: []` and `test: []` (other keys as written)."""
    with open(cfg) as f:
        lines = f.read().splitlines()
    out, skip = [], False
    for line in lines:
        if re.match(r"^(build|test|bisect):", line):
            skip = True
            continue
        if skip and (line.startswith(" ") or line.startswith("#")):
            continue
        skip = False
        out.append(line)
    out += ["build: []", "test: []"]
    path = cfg.replace(".yaml", "-merge-only.yaml")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")
    return path


def time_v(argv, log):
    """measure() under /usr/bin/time -v: (result, wall s, peak MB) from time's report."""
    tv = log + ".time"
    r = realhist.measure(["/usr/bin/time", "-v", "-o", tv] + argv, log=log)
    wall, peak = None, None
    with open(tv) as f:
        for line in f:
            line = line.strip()
            if line.startswith("Elapsed (wall clock) time"):
                t = line.rsplit(" ", 1)[1].split(":")
                wall = sum(float(x) * 60 ** i for i, x in enumerate(reversed(t)))
            elif line.startswith("Maximum resident set size"):
                peak = int(line.rsplit(" ", 1)[1]) / 1024.0
    r.tv_wall, r.tv_peak = wall, peak
    return r


def nextbot_outcomes(world, date):
    with open(os.path.join(world, "state", "runs", date, "run.json")) as f:
        run = json.load(f)
    return {t["name"]: t["state"] for t in run["trees"]}


def nextbot_tree(world, date):
    repo = os.path.join(world, "state", "repo.git")
    tag = "refs/tags/next-%s" % date.replace("-", "")
    return realhist.git("rev-parse", tag + "^^{tree}", cwd=repo)


def night(args, k, world, cfg, grepo, listf, skip):
    date = DATES[k - 1]
    a = time_v([args.nextbot, "-c", cfg, "run", "--date", date, "--no-notify"],
               os.path.join(args.dir, "nextbot-night%d.log" % k))
    if a.rc:
        raise RuntimeError("nextbot run exited %d (see %s)" % (a.rc, args.dir))
    script = os.path.join(args.dir, "git-night.sh")
    with open(script, "w") as f:
        f.write(GIT_NIGHT)
    g = time_v(["sh", script, grepo, listf, " ".join(skip)], os.path.join(args.dir, "git-night%d.log" % k))
    if g.rc:
        raise RuntimeError("the git night exited %d (see %s)" % (g.rc, args.dir))
    a.phases = realhist.phases(os.path.join(args.dir, "nextbot-night%d.log" % k))
    states = nextbot_outcomes(world, date)
    same, differ = 0, []
    last_tree = None
    for line in g.out.splitlines():
        w = line.split()
        if w[1] == "merged":
            last_tree = w[2]
        s = states.get(w[0], "left-out")
        s = s if s in ("merged", "already") else "left-out"
        if s == w[1] or (s == "merged" and w[1] == "already"):
            # a tip next already holds (mm-stable is mainline on day 0): nextbot's
            # run.json says "merged" with nothing merged; the final trees are compared
            same += 1
        else:
            differ.append("%s (nextbot %s, git %s)" % (w[0], s, w[1]))
    a.ntree = nextbot_tree(world, date)
    g.ntree = last_tree
    g.count = len(g.out.splitlines())
    g.merged = sum(1 for line in g.out.splitlines() if line.split()[1] == "merged")
    return a, g, same, differ


def report(k, what, a, g, same, differ, goal):
    say("\n== night %d: %s ==" % (k, what))
    say("%-40s %8s %8s %12s %12s" % ("tool", "wall s", "cpu s", "peak MB (-v)",
                                     "tree MB"))
    label = "nextbot run"
    if a.phases:
        label += " (fetch %.0f s, merge %.0f s)" % a.phases
    say("%-40s %8.2f %8.2f %12.0f %12.0f" % (label, a.tv_wall, a.cpu, a.tv_peak, a.rss_tree))
    say("%-40s %8.2f %8.2f %12.0f %12.0f" % ("git fetch + merge-tree chain", g.tv_wall, g.cpu,
                                             g.tv_peak, g.rss_tree))
    say("  trees: git merged %d of %d; outcomes equal on %d%s" % (
        g.merged, g.count, same, "" if not differ else "; differ: " + ", ".join(differ)))
    say("  final trees: nextbot %s, git %s: %s" % (a.ntree[:12], (g.ntree or "-")[:12],
        "same" if a.ntree == g.ntree else "DIFFERENT"))
    ratio = a.tv_wall / g.tv_wall
    say("  target nextbot wall <= %.2f of git's: %.2f %s" % (
        goal, ratio, "MET" if ratio <= goal else "MISSED"))
    say("  target nextbot peak < 300 MB: %.0f MB %s" % (
        a.tv_peak, "MET" if a.tv_peak < 300 else "MISSED"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", default=os.environ.get("BENCH_DIR", ""))
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--trees", type=int, default=400)
    ap.add_argument("--files", type=int, default=90000)
    ap.add_argument("--history", type=int, default=200000)
    ap.add_argument("--world", default="", help="copy this untouched world instead of sim init")
    ap.add_argument("--keep", action="store_true", default=bool(os.environ.get("BENCH_KEEP")))
    ap.add_argument("--nextbot", default=os.environ.get(
        "NEXTBOT", os.path.join(HERE, "..", "nextbot")))
    args = ap.parse_args()
    args.nextbot = os.path.abspath(args.nextbot)
    args.dir = tempfile.mkdtemp(prefix="nextbot-simnight.", dir=args.dir or None)
    os.chmod(args.dir, 0o755)
    try:
        world = os.path.join(args.dir, "w")
        if args.world:
            if os.path.exists(os.path.join(args.world, "state")):
                raise RuntimeError("%s has been run in: not a fresh world" % args.world)
            subprocess.run(["cp", "-a", args.world, world], check=True)
            say("# world copied from %s (made by sim init)" % args.world)
        else:
            r = time_v([args.nextbot, "sim", "init", world, "--seed", str(args.seed),
                        "--trees", str(args.trees), "--files", str(args.files),
                        "--history", str(args.history)], os.path.join(args.dir, "init.log"))
            if r.rc:
                raise RuntimeError("sim init exited %d" % r.rc)
            say("# sim init --seed %d --trees %d --files %d --history %d: %.1f s, %.0f MB" % (
                args.seed, args.trees, args.files, args.history, r.tv_wall, r.tv_peak))
        cfg = no_builds(os.path.join(world, "nextbot.yaml"))
        fl, watched = feeds(cfg, world)
        listf = os.path.join(args.dir, "feeds.txt")
        with open(listf, "w") as f:
            f.write("".join("%s %s %s\n" % x for x in fl))
        grepo = os.path.join(args.dir, "git.git")
        realhist.git("init", "-q", "--bare", grepo)
        say("# %d feeds (base, %d trees, %d watched, fetched but not merged)" % (
            len(fl), len(fl) - 1 - len(watched), len(watched)))
        a, g, same, differ = night(args, 1, world, cfg, grepo, listf, watched)
        report(1, "fresh work directories: fetch %d commits of mainline and every tree, "
               "merge" % args.history, a, g, same, differ, 0.33)
        r = time_v([args.nextbot, "sim", "advance", world],
                   os.path.join(args.dir, "advance.log"))
        if r.rc:
            raise RuntimeError("sim advance exited %d" % r.rc)
        a, g, same, differ = night(args, 2, world, cfg, grepo, listf, watched)
        report(2, "an ordinary night after a day of the feeds (sim advance)", a, g, same,
               differ, 0.2)
    finally:
        if not args.keep:
            shutil.rmtree(args.dir, ignore_errors=True)
        else:
            say("# kept %s" % args.dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
