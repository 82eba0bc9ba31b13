#!/usr/bin/python3
"""Generates the benchmark world with git fast-import: a linux-next night at scale.

    bench/gen_world.py DIR [--trees 400] [--files 20000] [--patches 20] [--seed 1]
                           [--history 0] [--fork-spread 0]

DIR/remotes/feeds.git holds everything: `master` (mainline: a root commit with
--files files, then --history commits that each rewrite one line of one document,
then 30 small commits in Documentation/) and one branch tNNN per tree.
Tree i forks from a mainline commit a little behind master (1 to 11 commits; with
--fork-spread S, 1 to S commits: trees forked months apart) and carries --patches
new commits: most change or add files in its own folder (<top>/sNNN/), three touch
files every tree shares (MAINTAINERS, include/linux/ids.h, <top>/Makefile) at the
tree's own lines, so those merge as real three-way content merges. Every tenth tree
is two topic branches joined by a merge commit. Three pairs conflict (the later
tree edits the earlier tree's line of ids.h): a merge leaves the later one out.
Tree t003 is an old mainline commit: "Already up to date.".

DIR/remotes/mainline.git and DIR/remotes/tNNN.git are bare repositories that borrow
feeds.git's objects (objects/info/alternates) and hold only their own branch, so a
fetch opens one connection per tree, as linux-next's does.  Deterministic: the same
arguments give the same commit ids.
"""
import argparse
import os
import random
import subprocess
import sys

TOPS = ["arch", "block", "crypto", "drivers", "fs", "kernel", "lib", "mm", "net",
        "security", "sound", "virt"]
BASE_COMMITS = 30
CONFLICTS = [(7, 31), (150, 190), (320, 377)]   # (earlier, later): later conflicts
ALREADY = 3                                     # tree whose tip is in mainline


def c_file(rng, tag, nfunc):
    out = ["// SPDX-License-Identifier: GPL-2.0", "/* %s: generated for the benchmark */" % tag,
           "#include <linux/kernel.h>", "#include <linux/ids.h>", ""]
    for f in range(nfunc):
        out += ["static int %s_fn%d(int x)" % (tag.replace("/", "_").replace(".", "_"), f),
                "{", "\tint y = x * %d;" % rng.randrange(1, 97), "",
                "\treturn y + %d;" % f, "}", ""]
    return out


class World:
    def __init__(self, args):
        self.a = args
        self.rng = random.Random(args.seed)
        self.out = []
        self.mark = 0
        self.time = 1700000000
        self.files = {}          # path -> list of lines, as at mainline's root

    # --- fast-import stream ---------------------------------------------------------
    def w(self, s):
        self.out.append(s)

    def data(self, text):
        b = text.encode()
        self.w("data %d\n" % len(b))
        self.out.append(b)
        self.w("\n")

    def commit(self, ref, who, subject, body, parents, changes):
        self.mark += 1
        self.time += 60
        self.w("commit %s\nmark :%d\n" % (ref, self.mark))
        self.w("author %s %d +0000\ncommitter %s %d +0000\n" % (who, self.time, who, self.time))
        self.data("%s\n\n%s\n" % (subject, body))
        if parents:
            self.w("from :%d\n" % parents[0])
            for p in parents[1:]:
                self.w("merge :%d\n" % p)
        for path, lines in changes:
            self.w("M 100644 inline %s\n" % path)
            self.data("\n".join(lines) + "\n")
        self.w("\n")
        return self.mark

    # --- mainline ---------------------------------------------------------------------
    def own_dir(self, i):
        return "%s/s%03d" % (TOPS[i % len(TOPS)], i)

    def layout(self):
        a = self.a
        per_tree = max(4, int(a.files * 0.8) // a.trees)
        self.own = []
        for i in range(a.trees):
            d = self.own_dir(i)
            self.own.append(["%s/f%02d.c" % (d, k) for k in range(per_tree)])
            for p in self.own[i]:
                self.files[p] = c_file(self.rng, p, 3)
        rest = max(0, a.files - per_tree * a.trees)
        for k in range(rest // 2):
            p = "include/linux/h%04d.h" % k
            self.files[p] = c_file(self.rng, p, 1)
        for k in range(rest - rest // 2):
            p = "Documentation/d%02d/doc%04d.rst" % (k % 50, k)
            self.files[p] = ["Document %d" % k, "=" * 12, ""] + \
                ["Line %d of document %d." % (j, k) for j in range(12)]
        self.files["MAINTAINERS"] = self.maintainers()
        self.files["include/linux/ids.h"] = self.ids()
        for t in TOPS:
            self.files["%s/Makefile" % t] = self.makefile(t)

    def maintainers(self):
        out = ["List of maintainers", ""]
        for i in range(self.a.trees):
            out += ["SUBSYSTEM %03d" % i, "M:\tMaintainer %03d <m%03d@example.org>" % (i, i),
                    "L:\tlist%03d@example.org" % i, "S:\tMaintained",
                    "F:\t%s/" % self.own_dir(i), ""]
        return out

    def ids(self):
        out = ["#ifndef _LINUX_IDS_H", "#define _LINUX_IDS_H", ""]
        for i in range(self.a.trees):
            out += ["/* subsystem %03d */" % i, "#define ID_%03d 0" % i, ""]
        return out + ["#endif"]

    def makefile(self, top):
        out = ["# SPDX-License-Identifier: GPL-2.0", ""]
        for i in range(self.a.trees):
            if TOPS[i % len(TOPS)] == top:
                out += ["# s%03d" % i, "obj-$(CONFIG_S%03d) += s%03d/" % (i, i), ""]
        return out

    def history(self, marks, docs, who):
        """--history commits: commit n sets the "Revision:" line of one document, so a
        file keeps its size however long the history (no tree touches Documentation/)."""
        if not docs:
            docs.append("Documentation/history.rst")
            self.files[docs[0]] = ["History", "=" * 7, ""]
        for n in range(1, self.a.history + 1):
            p = docs[(n * 7919) % len(docs)]
            lines = self.files[p]
            if not lines[-1].startswith("Revision: "):
                lines = lines + [""]
            self.files[p] = lines = lines[:-1] + ["Revision: %d" % n]
            marks.append(self.commit("refs/heads/master", who, "Documentation: revision %d" % n,
                                     "Signed-off-by: %s" % who, [marks[-1]], [(p, lines)]))

    def mainline(self):
        who = "Linus Torvalds <torvalds@example.org>"
        marks = [self.commit("refs/heads/master", who, "Initial import", "",
                             [], sorted(self.files.items()))]
        docs = [p for p in sorted(self.files) if p.startswith("Documentation/")]
        if self.a.history:
            self.history(marks, list(docs), who)
        for n in range(1, BASE_COMMITS + 1):
            ch = []
            for p in self.rng.sample(docs, min(3, len(docs))):
                self.files[p] = self.files[p] + ["Revised in mainline commit %d." % n]
                ch.append((p, self.files[p]))
            if not ch:
                p = "Documentation/mainline.rst"
                self.files[p] = self.files.get(p, []) + ["Commit %d." % n]
                ch.append((p, self.files[p]))
            marks.append(self.commit("refs/heads/master", who, "Documentation: update %d" % n,
                                     "Signed-off-by: %s" % who, [marks[-1]], ch))
        self.base = marks
        self.base_files = dict(self.files)
        # the files as they stand at each fork point differ only in Documentation/,
        # which no tree touches, so one snapshot serves every tree

    # --- trees ------------------------------------------------------------------------
    def edit(self, cur, path, fn):
        lines = list(cur.get(path, self.base_files.get(path, [])))
        fn(lines)
        cur[path] = lines
        return (path, lines)

    def patch_own(self, i, k, cur, side):
        d = self.own_dir(i)
        own = self.own[i]
        half = len(own) // 2
        if side is not None:    # the two topics of a tree touch different files
            own = own[:half] if side == 0 else own[half:]
        if k % 5 == 4:
            p = "%s/new%02d.c" % (d, k)
            cur[p] = c_file(self.rng, p, 2)
            return (p, cur[p])
        p = own[self.rng.randrange(len(own))]

        def fn(lines):
            at = next(j for j, l in enumerate(lines) if l.startswith("\treturn"))
            lines.insert(at, "\ty += %d; /* s%03d patch %d */" % (self.rng.randrange(1000), i, k))
        return self.edit(cur, p, fn)

    def patch_shared(self, i, k, cur):
        if k == 0:
            def fn(lines):
                at = lines.index("SUBSYSTEM %03d" % i) + 3
                lines[at] = "S:\tSupported"
            return self.edit(cur, "MAINTAINERS", fn)
        if k == 1:
            def fn(lines):
                lines[lines.index("#define ID_%03d 0" % i)] = "#define ID_%03d 1" % i
            return self.edit(cur, "include/linux/ids.h", fn)
        top = TOPS[i % len(TOPS)]

        def fn(lines):
            at = lines.index("obj-$(CONFIG_S%03d) += s%03d/" % (i, i))
            lines[at] = "obj-$(CONFIG_S%03d) += s%03d/ s%03d_extra/" % (i, i, i)
        return self.edit(cur, "%s/Makefile" % top, fn)

    def tree(self, i):
        ref = "refs/heads/t%03d" % i
        who = "Developer %03d <dev%03d@example.org>" % (i, i)
        mnt = "Maintainer %03d <m%03d@example.org>" % (i, i)
        if i == ALREADY and i < self.a.trees:
            self.w("reset %s\nfrom :%d\n\n" % (ref, self.base[-6]))
            return
        if self.a.fork_spread:      # 1..S commits behind master, spread over the trees
            fork = self.base[-1 - min(1 + (i * 7919) % self.a.fork_spread, len(self.base) - 1)]
        else:
            fork = self.base[-2 - (i * 7) % 11]
        later = {e: l for e, l in CONFLICTS}
        cur = {}
        n = self.a.patches
        shared_at = {n // 4: 0, n // 2: 1, (3 * n) // 4: 2}
        topic = i % 10 == 9
        heads = [fork, fork]
        for k in range(n):
            side = 1 if topic and k >= n // 2 else 0
            if k in shared_at:
                ch = self.patch_shared(i, shared_at[k], cur)
                subj = "s%03d: shared file %s" % (i, ch[0])
            else:
                ch = self.patch_own(i, k, cur, side if topic else None)
                subj = "s%03d: patch %d in %s" % (i, k, ch[0])
            if k == n - 1 and i in later.values():
                e = [x for x, y in CONFLICTS if y == i][0]

                def fn(lines, e=e):
                    lines[lines.index("#define ID_%03d 0" % e)] = "#define ID_%03d 2" % e
                ch2 = self.edit(cur, "include/linux/ids.h", fn)
                ch = [ch, ch2]
                subj = "s%03d: take over ID_%03d" % (i, e)
            else:
                ch = [ch]
            body = ("Change %d of subsystem %03d.\n\nLink: https://lore.example.org/r/"
                    "s%03d-%d@example.org\nSigned-off-by: %s\nSigned-off-by: %s"
                    % (k, i, i, k, who, mnt))
            heads[side] = self.commit(ref if side == 0 else "refs/topic/t%03d" % i, who, subj,
                                      body, [heads[side]], ch)
        if topic:
            self.commit(ref, mnt, "Merge branch 'topic' into t%03d" % i,
                        "Signed-off-by: %s" % mnt, [heads[0], heads[1]], sorted(cur.items()))

    # --- output -------------------------------------------------------------------------
    def stream(self):
        for x in self.out:
            yield x if isinstance(x, bytes) else x.encode()


def bare(path, branch, alt, tip):
    os.makedirs(os.path.join(path, "objects", "info"), exist_ok=True)
    os.makedirs(os.path.join(path, "objects", "pack"), exist_ok=True)
    os.makedirs(os.path.join(path, "refs", "heads"), exist_ok=True)
    os.makedirs(os.path.join(path, "refs", "tags"), exist_ok=True)
    with open(os.path.join(path, "HEAD"), "w") as f:
        f.write("ref: refs/heads/%s\n" % branch)
    with open(os.path.join(path, "config"), "w") as f:
        f.write("[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = true\n")
    with open(os.path.join(path, "objects", "info", "alternates"), "w") as f:
        f.write(alt + "\n")
    with open(os.path.join(path, "refs", "heads", branch), "w") as f:
        f.write(tip + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--trees", type=int, default=400)
    ap.add_argument("--files", type=int, default=20000)
    ap.add_argument("--patches", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--history", type=int, default=0)
    ap.add_argument("--fork-spread", type=int, default=0)
    a = ap.parse_args()
    if a.trees < 1 or a.trees > 999 or a.patches < 4 or a.history < 0 or a.fork_spread < 0:
        sys.exit("gen_world: --trees 1..999, --patches >= 4, --history and --fork-spread >= 0")
    root = os.path.abspath(a.dir)
    feeds = os.path.join(root, "remotes", "feeds.git")
    os.makedirs(os.path.dirname(feeds), exist_ok=True)
    subprocess.run(["git", "init", "-q", "--bare", feeds], check=True)
    w = World(a)
    w.layout()
    w.mainline()
    for i in range(a.trees):
        w.tree(i)
    p = subprocess.Popen(["git", "-C", feeds, "fast-import", "--quiet"], stdin=subprocess.PIPE)
    for chunk in w.stream():
        p.stdin.write(chunk)
    p.stdin.close()
    if p.wait() != 0:
        sys.exit("gen_world: git fast-import failed")
    refs = subprocess.run(["git", "-C", feeds, "for-each-ref", "--format=%(objectname) %(refname)",
                           "refs/heads/"], check=True, capture_output=True, text=True).stdout
    alt = os.path.join(feeds, "objects")
    for line in refs.split("\n"):
        if not line:
            continue
        oid, ref = line.split()
        name = ref[len("refs/heads/"):]
        repo = "mainline.git" if name == "master" else name + ".git"
        bare(os.path.join(root, "remotes", repo), name, alt, oid)


if __name__ == "__main__":
    main()
