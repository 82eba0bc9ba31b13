#!/usr/bin/env python3
"""A real maintainer's integration replayed: nextbot against the git command line.

realhist.py --repo PATH [--windows SPEC] [--runs N] [--dir DIR] [--nextbot PATH]

PATH is a clone of a project whose maintainer integrates topic branches with merge
commits (git.git: `git clone --bare https://github.com/git/git`); SPEC a comma list of
windows "DATE:N" (default "2010-01-01:150,2016-01-01:150,2022-01-01:150"): the first
N merges of BRANCH's first-parent history after DATE.  Each window is one night: the
base is the first merge's first parent, the trees are the merges' second parents (a
topic's tip as the maintainer merged it), in the maintainer's order, all served by
one bare repository on this host.

Both tools start from a copy of one bare repository into which git fetched the base
(a bot that has run before holds mainline), then:
  nextbot   `nextbot run`: its fetch of the base and the trees (reported as a phase),
            the merges, the Next/ files;
  git       `git fetch` of the base and of each tree into the bare repository, then per
            tree `git merge-tree --write-tree` onto the result so far, left out on a
            conflict, else `git commit-tree`; a tree already contained gets no commit.
Runs alternate (nextbot, git, nextbot, ...); medians of --runs.  Peak memory is the
largest sum of the resident sets of the command's whole process tree (sampled every
20 ms from /proc) and, beside it, the largest single process (wait4's ru_maxrss).
Every tree's outcome is compared: merged with the same tree, already merged, or left
out on a conflict.  Exits 1 when an outcome differs or a command fails; exits 0 with
"SKIPPED" when PATH does not exist (as on CI).
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

DATE = "2026-12-05"
IDENT = "nextbot <nextbot@example.org>"
GIT_ENV = dict(os.environ, GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL="/dev/null",
               GIT_AUTHOR_NAME="nextbot", GIT_AUTHOR_EMAIL="nextbot@example.org",
               GIT_COMMITTER_NAME="nextbot", GIT_COMMITTER_EMAIL="nextbot@example.org",
               GIT_AUTHOR_DATE="2026-12-05T00:00:00Z",
               GIT_COMMITTER_DATE="2026-12-05T00:00:00Z", LC_ALL="C")
HERE = os.path.dirname(os.path.abspath(__file__))


def say(*a):
    print(*a, flush=True)


def git(*args, cwd=None, check=True, input=None):
    p = subprocess.run(["git"] + list(args), cwd=cwd, env=GIT_ENV, capture_output=True,
                       text=True, input=input)
    if check and p.returncode != 0:
        raise RuntimeError("git %s: %s" % (" ".join(args), p.stderr.strip()))
    return p.stdout.strip()


class Result:
    pass


def tree_rss_kb(root):
    """The resident sets of `root` and all its descendants, summed (kB)."""
    kids, rss = {}, {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % pid) as f:
                st = f.read()
            ppid = int(st[st.rindex(")") + 2:].split()[1])
            with open("/proc/%s/statm" % pid) as f:
                pages = int(f.read().split()[1])
        except (OSError, ValueError, IndexError):
            continue
        kids.setdefault(ppid, []).append(int(pid))
        rss[int(pid)] = pages * os.sysconf("SC_PAGESIZE") // 1024
    total, todo = 0, [root]
    while todo:
        p = todo.pop()
        total += rss.get(p, 0)
        todo += kids.get(p, [])
    return total


def measure(argv, cwd=None, log=None):
    """Wall, CPU (with waited-for children), peak RSS of the tree and of one process."""
    r = Result()
    with tempfile.TemporaryFile() as out, open(log or os.devnull, "ab") as err:
        t0 = time.monotonic()
        p = subprocess.Popen(argv, cwd=cwd, env=GIT_ENV, stdout=out, stderr=err,
                             stdin=subprocess.DEVNULL)
        peak = [0]
        done = threading.Event()

        def sample():
            while not done.wait(0.02):
                peak[0] = max(peak[0], tree_rss_kb(p.pid))
        th = threading.Thread(target=sample)
        th.start()
        _, status, ru = os.wait4(p.pid, 0)
        r.wall = time.monotonic() - t0
        done.set()
        th.join()
        r.rc = os.waitstatus_to_exitcode(status)
        r.cpu = ru.ru_utime + ru.ru_stime
        r.rss_one = ru.ru_maxrss / 1024.0
        r.rss_tree = max(peak[0] / 1024.0, r.rss_one)
        out.seek(0)
        r.out = out.read().decode(errors="replace")
    return r


def window_merges(repo, branch, after, n):
    revs = git("rev-list", "--first-parent", "--merges", "--reverse", "--after=" + after,
               branch, cwd=repo).split()[:n]
    if len(revs) < n:
        raise RuntimeError("only %d merges after %s" % (len(revs), after))
    trees = []
    for m in revs:
        trees += git("rev-parse", "%s^@" % m, cwd=repo).split()[1:]
    return git("rev-parse", revs[0] + "^1", cwd=repo), trees, revs


def setup_window(root, cache, repo, base, tips):
    """The served repository (objects borrowed) and the starting one (the base fetched
    by git; kept in `cache` across invocations: it is made before the clock anyway)."""
    src = os.path.join(root, "src.git")
    git("init", "-q", "--bare", src)
    with open(os.path.join(src, "objects", "info", "alternates"), "w") as f:
        f.write(os.path.join(os.path.abspath(repo), "objects") + "\n")
    lines = ["update refs/heads/base %s" % base]
    lines += ["update refs/heads/t%03d %s" % (i, t) for i, t in enumerate(tips)]
    git("update-ref", "--stdin", cwd=src, input="\n".join(lines) + "\n")
    seed = os.path.join(cache, "seed-%s.git" % base)
    t0 = time.monotonic()
    if not os.path.isdir(seed):
        tmp = seed + ".tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        git("init", "-q", "--bare", tmp)
        git("config", "gc.auto", "0", cwd=tmp)
        git("fetch", "-q", "file://" + src, "+refs/heads/base:refs/feeds/origin", cwd=tmp)
        os.rename(tmp, seed)
    return src, seed, time.monotonic() - t0


def copy_seed(seed, dst):
    # hard links: the packs are never rewritten in place; both tools read the same files
    subprocess.run(["cp", "-al", seed, dst], check=True)


def nextbot_night(nextbot, d, src, seed, n):
    os.makedirs(os.path.join(d, "state"))
    copy_seed(seed, os.path.join(d, "state", "repo.git"))
    url = "file://" + src
    y = ["workdir: state", 'base: {name: origin, url: "%s", branch: base}' % url, "trees:"]
    for i in range(n):
        y += ["  - name: t%03d" % i, '    url: "%s"' % url, "    branch: t%03d" % i]
    y += ["build: []", "test: []", 'merge_identity: "%s"' % IDENT, "notify:",
          '  from: "%s"' % IDENT, '  list: "list@example.org"']
    cfg = os.path.join(d, "nextbot.yaml")
    with open(cfg, "w") as f:
        f.write("\n".join(y) + "\n")
    log = os.path.join(d, "run.log")
    r = measure([nextbot, "-c", cfg, "run", "--date", DATE, "--no-notify"], log=log)
    if r.rc:
        with open(log) as f:
            raise RuntimeError("nextbot run exited %d:\n%s" % (r.rc, f.read()[-3000:]))
    r.phases = phases(log)
    r.outcomes = nextbot_outcomes(d, n)
    return r


def phases(log):
    """Fetch and merge phases from the log's timestamps (1 s resolution)."""
    marks = {}
    with open(log) as f:
        for line in f:
            ts = line.split(" ", 1)[0]
            if len(ts) != 20 or not ts.endswith("Z"):
                continue
            t = time.mktime(time.strptime(ts, "%Y-%m-%dT%H:%M:%SZ"))
            for word in ("fetching", "merging"):
                if ": %s " % word in line:
                    marks.setdefault(word, t)
            marks["end"] = t
    if "fetching" not in marks or "merging" not in marks:
        return None
    return marks["merging"] - marks["fetching"], marks["end"] - marks["merging"]


def nextbot_outcomes(d, n):
    """Per tree: ("merged", tree), ("already", None) or ("left-out", None)."""
    repo = os.path.join(d, "state", "repo.git")
    with open(os.path.join(d, "state", "runs", DATE, "run.json")) as f:
        run = json.load(f)
    states = {t["name"]: t["state"] for t in run["trees"]}
    tag = "refs/tags/next-%s" % DATE.replace("-", "")
    chain = git("rev-list", "--first-parent", "--parents", tag + "^", "^refs/feeds/origin",
                cwd=repo).splitlines()
    merges = [l.split()[0] for l in reversed(chain) if len(l.split()) == 3]
    out, k = [], 0
    for i in range(n):
        s = states.get("t%03d" % i, "left-out")
        if s == "merged":
            out.append(("merged", git("rev-parse", merges[k] + "^{tree}", cwd=repo)))
            k += 1
        else:
            out.append((s if s == "already" else "left-out", None))
    return out


GIT_NIGHT = r"""
set -eu
cd "$1"; src=file://$2; n=$3
git config gc.auto 0
git config maintenance.auto false
git fetch -q "$src" "+refs/heads/base:refs/feeds/origin"
i=0
while [ $i -lt $n ]; do
	t=$(printf t%03d $i)
	git fetch -q "$src" "+refs/heads/$t:refs/feeds/$t"
	i=$((i + 1))
done
head=$(git rev-parse refs/feeds/origin)
i=0
while [ $i -lt $n ]; do
	t=$(printf t%03d $i)
	i=$((i + 1))
	if git merge-base --is-ancestor "refs/feeds/$t" "$head"; then
		echo "$t already"
		continue
	fi
	if tree=$(git merge-tree --write-tree --no-messages "$head" "refs/feeds/$t"); then
		head=$(git commit-tree "$tree" -p "$head" -p "refs/feeds/$t" -m "Merge branch '$t'")
		echo "$t merged $tree"
	else
		echo "$t left-out"
	fi
done
"""


def git_night(d, src, seed, n):
    repo = os.path.join(d, "repo.git")
    copy_seed(seed, repo)
    script = os.path.join(d, "night.sh")
    with open(script, "w") as f:
        f.write(GIT_NIGHT)
    r = measure(["sh", script, repo, src, str(n)], log=os.path.join(d, "git.log"))
    if r.rc:
        raise RuntimeError("the git night exited %d" % r.rc)
    r.outcomes = []
    for line in r.out.splitlines():
        w = line.split()
        r.outcomes.append((w[1], w[2] if len(w) > 2 else None))
    return r


def compare(a, g):
    diffs = [i for i, (x, y) in enumerate(zip(a, g)) if x != y]
    return diffs + list(range(min(len(a), len(g)), max(len(a), len(g))))


def med(rs, attr):
    return statistics.median(getattr(r, attr) for r in rs)


def run_window(args, root, spec):
    after, n = spec.split(":")
    base, tips, merges = window_merges(args.repo, args.branch, after, int(n))
    say("\n== %s: %d merges of %s's first-parent history after %s (%s .. %s), %d trees =="
        % (os.path.basename(os.path.abspath(args.repo.rstrip("/"))), len(merges),
           args.branch, after, merges[0][:12], merges[-1][:12], len(tips)))
    src, seed, t_seed = setup_window(root, args.cache or root, args.repo, base, tips)
    count = git("rev-list", "--count", "refs/feeds/origin", cwd=seed)
    say("  base %s (%s commits) fetched by git into the starting repository (%.0f s; "
        "reused from --cache if 0)" % (base[:12], count, t_seed))
    rs = {"nextbot": [], "git": []}
    for k in range(args.runs):
        for tool in ("nextbot", "git"):
            d = os.path.join(root, "%s-%d" % (tool, k))
            os.makedirs(d)
            os.chmod(d, 0o755)
            if tool == "nextbot":
                rs[tool].append(nextbot_night(args.nextbot, d, src, seed, len(tips)))
            else:
                rs[tool].append(git_night(d, src, seed, len(tips)))
            shutil.rmtree(d, ignore_errors=True)
    a, g = rs["nextbot"], rs["git"]
    diffs = set()
    for x, y in zip(a, g):
        diffs.update(compare(x.outcomes, y.outcomes))
    outs = g[0].outcomes
    merged = sum(1 for o in outs if o[0] == "merged")
    left = sum(1 for o in outs if o[0] == "left-out")
    already = sum(1 for o in outs if o[0] == "already")
    say("%-34s %7s %7s %9s %9s %7s %8s %5s" % ("tool", "wall s", "cpu s", "tree MB",
                                              "proc MB", "merged", "left out", "same"))
    for tool, r in (("nextbot", a), ("git", g)):
        label = tool
        if tool == "nextbot" and all(x.phases for x in r):
            label += " (fetch %.0f s, merge %.0f s)" % (
                statistics.median(x.phases[0] for x in r),
                statistics.median(x.phases[1] for x in r))
        say("%-34s %7.2f %7.2f %9.0f %9.0f %7d %8d %5s" % (
            label, med(r, "wall"), med(r, "cpu"), max(x.rss_tree for x in r),
            max(x.rss_one for x in r), merged, left, "yes" if not diffs else "NO"))
    ratio = med(a, "wall") / med(g, "wall")
    say("  %d trees: %d merged, %d left out on a conflict, %d already merged; medians of %d "
        "alternating runs" % (len(tips), merged, left, already, args.runs))
    say("  every merge's outcome equal to git's: %s" % ("yes" if not diffs else
        "NO, trees %s" % ", ".join("t%03d" % i for i in sorted(diffs))))
    say("  target nextbot wall <= 0.5 of git's: %.2f %s" % (ratio, "MET" if ratio <= 0.5
                                                            else "MISSED"))
    return not diffs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repo", default=os.environ.get("BENCH_REAL_REPO", ""))
    ap.add_argument("--branch", default=os.environ.get("BENCH_REAL_BRANCH", "master"))
    ap.add_argument("--windows", default=os.environ.get(
        "BENCH_REAL_WINDOWS", "2010-01-01:150,2016-01-01:150,2022-01-01:150"))
    ap.add_argument("--runs", type=int, default=int(os.environ.get("BENCH_RUNS", "3")))
    ap.add_argument("--dir", default=os.environ.get("BENCH_DIR", ""))
    ap.add_argument("--cache", default=os.environ.get("BENCH_REAL_CACHE", ""),
                    help="keep the starting repositories here between invocations")
    ap.add_argument("--nextbot", default=os.environ.get(
        "NEXTBOT", os.path.join(HERE, "..", "nextbot")))
    args = ap.parse_args()
    if not args.repo or not os.path.isdir(args.repo):
        say("realhist: SKIPPED: no real history given (BENCH_REAL_REPO or --repo: a bare "
            "clone of e.g. https://github.com/git/git); nothing measured")
        return 0
    root = tempfile.mkdtemp(prefix="nextbot-realhist.", dir=args.dir or None)
    os.chmod(root, 0o755)       # the runner user must reach nextbot's workdir
    if args.cache:
        os.makedirs(args.cache, exist_ok=True)
    ok = True
    try:
        for spec in args.windows.split(","):
            wroot = os.path.join(root, spec.replace(":", "-"))
            os.makedirs(wroot)
            os.chmod(wroot, 0o755)
            ok &= run_window(args, wroot, spec)
            shutil.rmtree(wroot, ignore_errors=True)
    finally:
        if not os.environ.get("BENCH_KEEP"):
            shutil.rmtree(root, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
