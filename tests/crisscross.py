#!/usr/bin/env python3
"""Histories with many merge bases, for checking nextbot's merges against git's.

crisscross.py --seed N --out DIR [--steps N] [--bases K]

Writes DIR/repo.git (bare, by `git fast-import`) and DIR/pairs: one merge to check
per line, "<ours> <theirs>" commit ids.  The history is a maintainer's: a main line
and long-lived topic branches that are merged into it, merged back from it and into
one another (criss-cross), with merge commits whose trees are arbitrary resolutions
(sometimes with conflict markers committed, so that virtual merge bases conflict
with themselves).  Then groups of K branches merged into two lines in different
orders, so that the two lines have K merge bases, each pair of which has several
merge bases of its own (virtual bases inside virtual bases).  Files: text (some
CRLF, some without a final newline, lines from a small vocabulary so that edits
collide), binary, executable, symlinks, a submodule; edits, adds, deletes, renames
(with and without edits, across folders, whole folders, case-only), mode-only
changes, a file becoming a folder and back, a symlink becoming a file and back.
Pairs are every merge made in the history (its two parents) and the tips of every
group.  Deterministic for a seed.
"""
import argparse
import os
import random
import subprocess
import sys

VOCAB = ["int x;", "}", "{", "", "return 0;", "x++;", "if (x) {", "\tfoo();",
         "\tbar();", "/* note */", "#include <a.h>", "y = x;", "goto out;", "out:"]


class Gen:
    def __init__(self, seed, steps, group_bases):
        self.r = random.Random(seed)
        self.steps = steps
        self.group_bases = group_bases
        self.out = []           # fast-import stream, bytes
        self.mark = 0
        self.commits = {}       # mark -> (tree dict, parents marks)
        self.time = 1500000000
        self.pairs = []         # (mark, mark)
        self.uniq = 0

    # ---- contents ----
    def text(self, n=None):
        r = self.r
        n = n if n is not None else r.randint(3, 40)
        lines = []
        for _ in range(n):
            if r.random() < 0.5:
                lines.append(r.choice(VOCAB))
            else:
                self.uniq += 1
                lines.append("line %d %s" % (self.uniq, r.choice(VOCAB)))
        crlf = r.random() < 0.15
        nonl = r.random() < 0.2
        return self.join(lines, crlf, nonl)

    @staticmethod
    def join(lines, crlf, nonl):
        eol = "\r\n" if crlf else "\n"
        s = "".join(l + eol for l in lines)
        if nonl and s:
            s = s[:-len(eol)]
        return s.encode()

    @staticmethod
    def split(data):
        s = data.decode("utf-8", "replace")
        crlf = "\r\n" in s
        eol = "\r\n" if crlf else "\n"
        nonl = bool(s) and not s.endswith("\n")
        lines = s.split(eol)
        if not nonl and lines and lines[-1] == "":
            lines.pop()
        return lines, crlf, nonl

    def binary(self):
        self.uniq += 1
        return bytes([self.r.randint(0, 255) for _ in range(self.r.randint(8, 60))]) + \
            b"\0bin%d" % self.uniq

    def new_file(self):
        r = self.r.random()
        if r < 0.65:
            return ("100644", self.text())
        if r < 0.75:
            return ("100755", self.text())
        if r < 0.85:
            return ("100644", self.binary())
        self.uniq += 1
        return ("120000", b"target%d" % self.uniq)

    def gitlink(self):
        return ("160000", bytes("%040x" % self.r.getrandbits(160), "ascii"))

    # ---- trees ----
    def initial_tree(self):
        t = {}
        for d in ["", "src/", "src/core/", "doc/", "lib/", "Drivers/"]:
            for i in range(self.r.randint(2, 6)):
                t["%sf%d.c" % (d, i)] = self.new_file()
        t["hot.c"] = ("100644", self.join(["h%d" % i for i in range(30)], False, False))
        t["sub/module"] = self.gitlink()
        return t

    @staticmethod
    def dirs(t):
        ds = set()
        for p in t:
            parts = p.split("/")[:-1]
            for k in range(1, len(parts) + 1):
                ds.add("/".join(parts[:k]))
        return ds

    def free_path(self, t, d):
        while True:
            self.uniq += 1
            p = "%sn%d.c" % (d, self.uniq)
            if p not in t and p not in self.dirs(t):
                return p

    def edit(self, data):
        lines, crlf, nonl = self.split(data)
        r = self.r
        for _ in range(r.randint(1, 4)):
            op = r.randint(0, 2)
            pos = r.randint(0, len(lines))
            if op == 0 and lines:
                del lines[min(pos, len(lines) - 1)]
            elif op == 1:
                self.uniq += 1
                lines.insert(pos, r.choice(VOCAB + ["edit %d" % self.uniq]))
            elif lines:
                self.uniq += 1
                lines[min(pos, len(lines) - 1)] = "chg %d" % self.uniq
        if r.random() < 0.05:
            nonl = not nonl
        return self.join(lines, crlf, nonl)

    def mutate(self, t):
        t = dict(t)
        r = self.r
        for _ in range(r.randint(1, 3)):
            paths = sorted(t)
            if not paths:
                t[self.free_path(t, "")] = self.new_file()
                continue
            p = r.choice(paths)
            mode, data = t[p]
            op = r.random()
            d = p[:p.rfind("/") + 1]
            if op < 0.30 and mode in ("100644", "100755") and b"\0" not in data:
                t[p] = (mode, self.edit(data))
            elif op < 0.36:
                t["hot.c"] = ("100644", self.edit(t.get("hot.c", ("", b"x\n"))[1]))
            elif op < 0.44:
                t[self.free_path(t, r.choice(["", "src/", "doc/", "new/"]))] = self.new_file()
            elif op < 0.50:
                del t[p]
            elif op < 0.60:
                # rename, maybe across folders, maybe with an edit
                nd = r.choice([d, "src/", "lib/", "moved/"])
                q = nd + p[len(d):]
                if q in t or q in self.dirs(t):
                    q = self.free_path(t, nd)
                del t[p]
                if r.random() < 0.4 and mode in ("100644", "100755") and b"\0" not in data:
                    data = self.edit(data)
                t[q] = (mode, data)
            elif op < 0.64:
                base = p[len(d):]
                q = d + (base.upper() if base != base.upper() else base.lower())
                if q not in t and q not in self.dirs(t):
                    del t[p]
                    t[q] = (mode, data)
            elif op < 0.71 and mode in ("100644", "100755"):
                t[p] = ("100755" if mode == "100644" else "100644", data)
            elif op < 0.76 and mode != "160000":
                # a file becomes a folder
                del t[p]
                t[p + "/inner.c"] = ("100644", data if mode == "100644" else self.text())
            elif op < 0.80:
                # a folder becomes a file
                ds = sorted(self.dirs(t))
                if ds:
                    victim = r.choice(ds)
                    for q in [q for q in t if q.startswith(victim + "/")]:
                        del t[q]
                    t[victim] = ("100644", self.text())
            elif op < 0.85 and mode in ("100644", "120000"):
                t[p] = ("120000", b"link-" + p.encode()) if mode == "100644" else \
                    ("100644", self.text())
            elif op < 0.89 and mode == "100644" and b"\0" in data:
                t[p] = (mode, self.binary())
            elif op < 0.92 and mode == "160000":
                t[p] = self.gitlink()
            elif op < 0.96:
                # a whole folder moves
                ds = sorted(x for x in self.dirs(t) if "/" not in x)
                if ds:
                    src = r.choice(ds)
                    dst = src + "2"
                    if dst not in self.dirs(t) and dst not in t:
                        for q in [q for q in t if q.startswith(src + "/")]:
                            t[dst + q[len(src):]] = t.pop(q)
            else:
                t[self.free_path(t, d)] = (mode, data)      # a copy
        return t

    def resolve(self, ours, theirs):
        """An arbitrary resolution of a merge: ours, with some of theirs."""
        t = dict(ours)
        r = self.r
        for p in sorted(set(ours) | set(theirs)):
            if ours.get(p) == theirs.get(p) or r.random() < 0.5:
                continue
            if p in theirs:
                t[p] = theirs[p]
            else:
                t.pop(p, None)
        # no path may be both a file and a folder
        for d in sorted(self.dirs(t)):
            t.pop(d, None)
        if r.random() < 0.15:
            # conflict markers committed by a careless merge
            texts = [p for p in sorted(t) if t[p][0] == "100644" and b"\0" not in t[p][1]]
            if texts:
                p = r.choice(texts)
                lines, crlf, nonl = self.split(t[p][1])
                self.uniq += 1
                lines[len(lines) // 2:len(lines) // 2] = [
                    "<<<<<<< HEAD", "ours %d" % self.uniq, "=======", "theirs", ">>>>>>> x"]
                t[p] = ("100644", self.join(lines, crlf, nonl))
        return t

    # ---- commits ----
    def emit(self, s):
        self.out.append(s if isinstance(s, bytes) else s.encode())

    def commit(self, tree, parents, tie=False):
        self.mark += 1
        m = self.mark
        if not tie or self.r.random() < 0.5:
            self.time += self.r.randint(1, 100)
        self.emit("commit refs/heads/gen\nmark :%d\n" % m)
        self.emit("committer G <g@example.org> %d +0000\n" % self.time)
        msg = b"c%d\n" % m
        self.emit(b"data %d\n" % len(msg) + msg)
        if parents:
            self.emit("from :%d\n" % parents[0])
            for p in parents[1:]:
                self.emit("merge :%d\n" % p)
        self.emit("deleteall\n")
        for p in sorted(tree):
            mode, data = tree[p]
            if mode == "160000":
                self.emit("M 160000 %s %s\n" % (data.decode(), p))
            else:
                self.emit("M %s inline %s\n" % (mode, p))
                self.emit(b"data %d\n" % len(data) + data + b"\n")
        self.emit("\n")
        self.commits[m] = (tree, parents)
        return m

    def work(self, tip, n=1):
        for _ in range(n):
            tip = self.commit(self.mutate(self.commits[tip][0]), [tip])
        return tip

    def merge(self, ours, theirs, check=True):
        if check:
            self.pairs.append((ours, theirs))
        t = self.resolve(self.commits[ours][0], self.commits[theirs][0])
        return self.commit(t, [ours, theirs], tie=True)

    def run(self):
        r = self.r
        main = self.commit(self.initial_tree(), [])
        main = self.work(main, 2)
        topics = [self.work(main, r.randint(1, 3)) for _ in range(4)]
        for _ in range(self.steps):
            op = r.random()
            i = r.randrange(len(topics))
            if op < 0.35:
                topics[i] = self.work(topics[i])
            elif op < 0.55:
                main = self.merge(main, topics[i])
            elif op < 0.65:
                topics[i] = self.merge(topics[i], main)             # back-merge
            elif op < 0.80:
                j = r.randrange(len(topics))
                if i != j:
                    a, b = topics[i], topics[j]
                    topics[i] = self.merge(a, b)                    # criss-cross
                    topics[j] = self.merge(b, a)
            elif op < 0.90:
                main = self.work(main)
            else:
                topics[i] = self.work(main, 1)                      # a new topic
        for _ in range(2):
            self.group(main)
        self.group(topics[0])

    def group(self, start):
        """K branches with criss-crosses among them, merged into two lines."""
        r = self.r
        k = self.group_bases
        branches = [self.work(start, r.randint(1, 2)) for _ in range(k)]
        for i in range(k - 1):
            a, b = branches[i], branches[i + 1]
            branches[i] = self.merge(a, b)
            branches[i + 1] = self.merge(b, a)
            branches[i] = self.work(branches[i])
            branches[i + 1] = self.work(branches[i + 1])
        p = self.work(start)
        q = self.work(start)
        order = list(range(k))
        for i in order:
            p = self.merge(p, branches[i], check=False)
        r.shuffle(order)
        for i in order:
            q = self.merge(q, branches[i], check=False)
        p = self.work(p)
        q = self.work(q)
        self.pairs.append((p, q))
        self.pairs.append((q, p))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--bases", type=int, default=14)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    g = Gen(a.seed, a.steps, a.bases)
    g.run()
    repo = os.path.join(a.out, "repo.git")
    marks = os.path.join(a.out, "marks")
    subprocess.run(["git", "init", "-q", "--bare", repo], check=True)
    subprocess.run(["git", "-C", repo, "fast-import", "--quiet", "--export-marks=" + marks],
                   input=b"".join(g.out), check=True)
    ids = {}
    with open(marks) as f:
        for line in f:
            m, sha = line.split()
            ids[int(m[1:])] = sha
    with open(os.path.join(a.out, "pairs"), "w") as f:
        for o, t in g.pairs:
            f.write("%s %s\n" % (ids[o], ids[t]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
