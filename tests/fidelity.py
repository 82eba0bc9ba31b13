#!/usr/bin/python3
"""Exact worker trees (issue 28): a history generator, a tree oracle and a hostile command.

  fidelity.py gen DIR SEED [COMMITS]
      A repository at DIR (branch master, linear) of COMMITS commits (default 64)
      whose every kind of change a checkout meets is drawn from SEED: .gitattributes
      (text, eol, -text, text=auto, ident, export-ignore, a macro; changed over time,
      some in subfolders), a submodule (a gitlink, moved and removed), files that
      become folders and back, case-only renames of files and folders, symlinks,
      execute bits, binary files.  Blobs are normalised (LF, "$Id$" collapsed), so
      that a tree rebuilt from a checkout is the commit's tree again.  marker.txt
      holds the commit's number (4 digits): a bisection's verdict.

  fidelity.py step
      The command a bisection runs in each tree.  It checks the tree against the
      commit's, then (with FID_MUTATE=1) damages it as a hostile build would, and
      exits 1 (bad) when marker.txt says FID_K or more, else 0.  Environment:
        FID_COPY    a copy of the repository the test holds: the oracle's truth
        FID_LOG     a line per step is appended: "OK <commit>" or "WRONG <commit> <what>"
        FID_K       the first bad commit's number
        FID_ANCESTOR  instead (a real history): bad from this commit on
        FID_MUTATE  1: damage the tree after the check
        FID_SEED    the seed of the damage (with the commit id)
        FID_RESET   1: `git reset --hard` after the check (for `git bisect run`)
        FID_WORK    scratch space of the oracle (reference checkouts, private indexes);
                    FID_WORK/outside is where links the damage plants point: it stays empty

The check is done twice.  As the issue says: a private index (GIT_INDEX_FILE),
`git add -A` and `git write-tree` in the worker, compared with the commit's tree
read from FID_COPY (a submodule counts as "a folder is there").  And byte for
byte, mode and type, against a checkout of the commit made by git from FID_COPY
(the rebuilt tree cannot see line endings that the clean filter folds back).
Untracked files the damage left are allowed: their names end in ".nbjunk", or
their first line says NBJUNK.  External filter drivers and working-tree-encoding
are not generated: libgit2 1.5 has neither.
"""
import hashlib
import os
import random
import shutil
import stat
import subprocess
import sys
import tempfile

JUNK = ".nbjunk"
GITLINK = "160000"


def git(*args, cwd=None, env=None, data=None):
    full = dict(os.environ)
    full.update(env or {})
    return subprocess.run(["git"] + list(args), cwd=cwd, env=full, input=data,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=True).stdout


# --------------------------------------------------------------------------- generator

WORDS = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi".split()
TOPS = ["src", "Lib", "docs", "tools", "src/core", "src/core/deep", "win", "data"]
EXTS = [".c", ".h", ".txt", ".bat", ".md", ".bin", ".sh", ".py", ".id"]
ATTR_RULES = [
    "*.txt text", "*.bat text eol=crlf", "*.bat crlftext", "*.md text=auto",
    "*.bin -text", "*.bin binary", "*.id ident", "*.c text eol=lf", "*.h text=auto eol=crlf",
    "docs/** export-ignore", "*.sh text eol=crlf", "*.py ident text eol=crlf",
    "* text=auto", "*.md eol=crlf",
]
SUB_RULES = ["* text eol=crlf", "*.c ident", "* -text", "*.txt eol=crlf", "* text=auto eol=crlf"]


class Gen:
    def __init__(self, seed):
        self.r = random.Random(seed)
        self.files = {}         # path -> (mode, bytes or gitlink hex)
        self.n = 0

    def text(self, path):
        r = self.r
        lines = []
        for _ in range(r.randint(1, 12)):
            lines.append(" ".join(r.choice(WORDS) for _ in range(r.randint(1, 8))))
        if path.endswith((".id", ".py", ".c")) and r.random() < 0.6:
            lines.insert(r.randint(0, len(lines)), "/* $Id$ */")
        return ("\n".join(lines) + "\n").encode()

    def content(self, path):
        r = self.r
        if path.endswith(".bin") or r.random() < 0.05:
            # a NUL: binary to git and libgit2 alike (their other tests differ)
            return b"\0" + bytes(r.choice(b"\0\1\2\n abcxyz\xff\x7f")
                                  for _ in range(r.randint(8, 200)))
        return self.text(path)

    def name(self):
        r = self.r
        base = r.choice(WORDS) + ("-" if r.random() < 0.1 else "") + str(r.randint(0, 99))
        if r.random() < 0.2:
            base = base.capitalize()
        top = r.choice(TOPS + [""])
        return (top + "/" if top else "") + base + r.choice(EXTS)

    def folders(self):
        out = set()
        for p in self.files:
            parts = p.split("/")[:-1]
            for i in range(1, len(parts) + 1):
                out.add("/".join(parts[:i]))
        return out

    def free(self, path):
        """Whether path can be a file now: nothing at it, no file on its way."""
        if path in self.files or path in self.folders():
            return False
        parts = path.split("/")
        return all("/".join(parts[:i]) not in self.files for i in range(1, len(parts)))

    def add(self, path, mode=None, data=None):
        if not self.free(path) or path.lower().startswith(".git/") or path == ".git":
            return False
        if mode is None:
            mode = "100755" if path.endswith(".sh") or self.r.random() < 0.1 else "100644"
        self.files[path] = (mode, data if data is not None else self.content(path))
        return True

    def regular(self):
        return sorted(p for p, (m, _) in self.files.items()
                      if m in ("100644", "100755") and p not in ("marker.txt",)
                      and not p.endswith(".gitattributes") and p != ".gitmodules")

    def attributes(self, sub=False):
        r = self.r
        rules = r.sample(SUB_RULES if sub else ATTR_RULES, r.randint(1, 4))
        head = "" if sub else "[attr]crlftext text eol=crlf\n"
        return (head + "\n".join(rules) + "\n").encode()

    def gitlink(self):
        return hashlib.sha1(str(self.r.random()).encode()).hexdigest()

    def initial(self):
        self.files["marker.txt"] = ("100644", b"0000\n")
        self.files[".gitattributes"] = ("100644", self.attributes())
        for _ in range(self.r.randint(40, 90)):
            self.add(self.name())
        self.files["ext/lib"] = (GITLINK, self.gitlink())
        self.files[".gitmodules"] = ("100644", b'[submodule "lib"]\n\tpath = ext/lib\n'
                                     b'\turl = ../lib.git\n')
        for p in self.r.sample(self.regular(), 3):
            head, base = os.path.split(p)
            self.add(os.path.join(head, "link-" + base), "120000", base.encode())
        self.add("dangling", "120000", b"../../nowhere/at/all")

    def op(self):
        r, regular = self.r, self.regular()
        kind = r.choice(["edit", "edit", "edit", "add", "del", "file2dir", "dir2file", "case",
                         "casedir", "chmod", "link", "unlink", "attrs", "subattrs", "gitlink",
                         "gitlinkmove"])
        if kind == "edit" and regular:
            p = r.choice(regular)
            self.files[p] = (self.files[p][0], self.content(p))
        elif kind == "add":
            self.add(self.name())
        elif kind == "del" and regular:
            del self.files[r.choice(regular)]
        elif kind == "file2dir" and regular:
            p = r.choice(regular)
            del self.files[p]
            self.add(p + "/" + r.choice(WORDS) + ".txt")
        elif kind == "dir2file":
            folders = sorted(f for f in self.folders() if f not in ("ext",) and
                             not any(q.startswith(f + "/") and self.files[q][0] == GITLINK
                                     for q in self.files))
            if folders:
                d = r.choice(folders)
                for q in [q for q in self.files if q.startswith(d + "/")]:
                    del self.files[q]
                self.add(d)
        elif kind == "case" and regular:
            p = r.choice(regular)
            head, base = os.path.split(p)
            new = os.path.join(head, base.swapcase())
            if new != p and self.free(new):
                self.files[new] = self.files.pop(p)
        elif kind == "casedir":
            folders = sorted(f for f in self.folders() if "/" not in f and f != "ext")
            if folders:
                d = r.choice(folders)
                new = d.swapcase()
                if new != d and new not in self.folders() and new not in self.files:
                    for q in [q for q in self.files if q.startswith(d + "/")]:
                        self.files[new + q[len(d):]] = self.files.pop(q)
        elif kind == "chmod" and regular:
            p = r.choice(regular)
            m, d = self.files[p]
            self.files[p] = ("100755" if m == "100644" else "100644", d)
        elif kind == "link" and regular:
            p = r.choice(regular)
            self.files[p] = ("120000", r.choice(regular).encode())
        elif kind == "unlink":
            links = sorted(p for p, (m, _) in self.files.items() if m == "120000")
            if links:
                p = r.choice(links)
                self.files[p] = ("100644", self.content(p))
        elif kind == "attrs":
            self.files[".gitattributes"] = ("100644", self.attributes())
        elif kind == "subattrs":
            folders = sorted(f for f in self.folders() if f != "ext")
            if folders:
                p = r.choice(folders) + "/.gitattributes"
                if p in self.files and r.random() < 0.5:
                    del self.files[p]
                elif self.free(p) or p in self.files:
                    self.files[p] = ("100644", self.attributes(sub=True))
        elif kind == "gitlink":
            if "ext/lib" in self.files:
                self.files["ext/lib"] = (GITLINK, self.gitlink())
        elif kind == "gitlinkmove":
            if "ext/lib" in self.files and r.random() < 0.5:
                del self.files["ext/lib"]
                self.add("ext/lib", "100644", b"no submodule here\n")
            elif self.files.get("ext/lib", (GITLINK,))[0] != GITLINK:
                del self.files["ext/lib"]
                self.files["ext/lib"] = (GITLINK, self.gitlink())

    def commit_text(self, out, i):
        out.append(b"commit refs/heads/master\nmark :%d\n" % i)
        out.append(b"committer F <f@example.org> %d +0000\n" % (1000000000 + i * 60))
        msg = b"c%d\n" % i
        out.append(b"data %d\n%s" % (len(msg), msg))
        if i > 1:
            out.append(b"from :%d\n" % (i - 1))
        out.append(b"deleteall\n")
        for p in sorted(self.files):
            m, d = self.files[p]
            q = p.encode()
            if m == GITLINK:
                out.append(b"M 160000 %s %s\n" % (d.encode(), q))
            else:
                out.append(b"M %s inline %s\ndata %d\n%s\n" % (m.encode(), q, len(d), d))
        out.append(b"\n")


def gen(directory, seed, commits):
    g = Gen(seed)
    g.initial()
    out = []
    for i in range(1, commits + 1):
        if i > 1:
            for _ in range(g.r.randint(1, 4)):
                g.op()
        g.files["marker.txt"] = ("100644", b"%04d\n" % i)
        g.commit_text(out, i)
    git("init", "-q", directory)
    git("fast-import", "--quiet", cwd=directory, data=b"".join(out))
    git("-c", "core.autocrlf=false", "checkout", "-q", "-f", "master", cwd=directory)


# --------------------------------------------------------------------------- oracle

def is_junk(root, rel):
    if any(part.endswith(JUNK) for part in rel.split("/")):
        return True
    path = os.path.join(root, rel)
    if os.path.islink(path) or not os.path.isfile(path):
        return False
    try:
        with open(path, "rb") as f:
            return b"NBJUNK" in f.readline()
    except OSError:
        return False


def ls_tree(copy, treeish, env=None):
    """{path: (mode, id)} of a tree, recursively (gitlinks as entries)."""
    out = {}
    raw = git("--git-dir=" + copy, "ls-tree", "-r", "-z", "--full-tree", treeish, env=env)
    for rec in raw.split(b"\0"):
        if not rec:
            continue
        meta, path = rec.split(b"\t", 1)
        mode, _kind, oid = meta.decode().split()
        out[path.decode("utf-8", "surrogateescape")] = (mode, oid)
    return out


def reference(work, copy, commit):
    """git's own checkout of the commit, made once per commit."""
    ref = os.path.join(work, "ref-" + commit)
    if os.path.isdir(ref):
        return ref
    tmp = "%s.tmp%d" % (ref, os.getpid())
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    env = {"GIT_INDEX_FILE": tmp + ".index"}
    git("--git-dir=" + copy, "read-tree", commit, env=env)
    git("--git-dir=" + copy, "--work-tree=" + tmp, "-c", "core.autocrlf=false",
        "checkout-index", "-a", "-f", env=env)
    os.unlink(tmp + ".index")
    try:
        os.rename(tmp, ref)
    except OSError:         # another step made it meanwhile
        shutil.rmtree(tmp)
    return ref


def rebuilt_tree(work, copy, tree_dir):
    """The tree `git add -A` and `git write-tree` make of the worker, with a private index."""
    idx = os.path.join(work, "private-index")
    objects = os.path.join(work, "private-objects")
    os.makedirs(objects, exist_ok=True)
    if os.path.exists(idx):
        os.unlink(idx)
    env = {"GIT_INDEX_FILE": idx, "GIT_OBJECT_DIRECTORY": objects,
           "GIT_ALTERNATE_OBJECT_DIRECTORIES": os.path.join(copy, "objects")}
    # -f: a tracked file the repository's .gitignore matches (real histories have them)
    git("add", "-A", "-f", cwd=tree_dir, env=env)
    tree = git("write-tree", cwd=tree_dir, env=env).decode().strip()
    return ls_tree(copy, tree, env=env)


def check(tree_dir, copy, commit, work, private):
    """What is wrong with the worker's tree, as a list of words (empty: nothing)."""
    wrong = []
    want = ls_tree(copy, commit)
    ref = reference(work, copy, commit)
    got = rebuilt_tree(private, copy, tree_dir)
    for path, (mode, oid) in want.items():
        full = os.path.join(tree_dir, path)
        if mode == GITLINK:
            if os.path.islink(full) or not os.path.isdir(full):
                wrong.append("no folder for submodule " + path)
            continue
        if got.get(path) != (mode, oid):
            wrong.append("rebuilt %s: %s, not %s %s" % (path, got.get(path), mode, oid))
        if os.path.realpath(os.path.dirname(full)) != os.path.join(
                os.path.realpath(tree_dir), os.path.dirname(path)).rstrip("/"):
            wrong.append("a link on the way to " + path)
            continue
        try:
            st = os.lstat(full)
        except OSError:
            wrong.append("missing " + path)
            continue
        rst = os.lstat(os.path.join(ref, path))
        if stat.S_IFMT(st.st_mode) != stat.S_IFMT(rst.st_mode):
            wrong.append("type of " + path)
        elif stat.S_ISLNK(st.st_mode):
            if os.readlink(full) != os.readlink(os.path.join(ref, path)):
                wrong.append("link target of " + path)
        else:
            if (st.st_mode & 0o100) != (rst.st_mode & 0o100):
                wrong.append("execute bit of " + path)
            with open(full, "rb") as a, open(os.path.join(ref, path), "rb") as b:
                if a.read() != b.read():
                    wrong.append("bytes of " + path)
    for path in got:
        if path not in want and not is_junk(tree_dir, path) and \
                not any(path.startswith(p + "/") for p, (m, _) in want.items() if m == GITLINK):
            wrong.append("left over: " + path)
    return wrong


# --------------------------------------------------------------------------- damage

def tracked(copy, commit):
    return {p: m for p, (m, _) in ls_tree(copy, commit).items()}


def damage(tree_dir, copy, commit, r, outside):
    """What a hostile build does to a tree; the kinds of the issue, and a few more."""
    files = tracked(copy, commit)
    regular = sorted(p for p, m in files.items() if m in ("100644", "100755"))
    links = sorted(p for p, m in files.items() if m == "120000")
    folders = sorted({os.path.dirname(p) for p in files if "/" in p})
    full = lambda p: os.path.join(tree_dir, p)
    done = []
    for _ in range(r.randint(2, 5)):
        kind = r.choices(["same-size", "marker", "delete", "file2dir", "dir2file", "chmod",
                          "chmod000", "link-swap", "link-retarget", "junk", "junk-attrs",
                          "mtime", "git-status", "submodule-junk", "folder-ro", "hardlink",
                          "fifo", "folder000", "dir-link"],
                         [8, 6, 5, 4, 2, 3, 1, 1, 2, 3, 2, 2, 2, 1, 1, 1, 1, 1, 1])[0]
        try:
            if kind in ("same-size", "marker") and regular:
                p = "marker.txt" if kind == "marker" else r.choice(regular + [".gitattributes"])
                if not os.path.isfile(full(p)) or os.path.islink(full(p)):
                    continue
                st = os.lstat(full(p))
                with open(full(p), "rb") as f:
                    data = f.read()
                new = b"9999" + data[4:] if kind == "marker" else \
                    bytes((b + 1) % 256 if b not in (10, 13) else b for b in data)
                with open(full(p), "wb") as f:
                    f.write(new)
                os.utime(full(p), ns=(st.st_atime_ns, st.st_mtime_ns))
            elif kind == "delete" and (regular or links):
                p = r.choice(regular + links)
                os.unlink(full(p))
            elif kind == "file2dir" and regular:
                p = r.choice(regular)
                if os.path.isfile(full(p)):
                    os.unlink(full(p))
                    os.mkdir(full(p))
                    with open(os.path.join(full(p), "x" + JUNK), "w") as f:
                        f.write("junk\n")
            elif kind == "dir2file" and folders:
                d = r.choice(folders)
                if os.path.isdir(full(d)) and not os.path.islink(full(d)):
                    shutil.rmtree(full(d))
                    with open(full(d), "w") as f:
                        f.write("NBJUNK where a folder was\n")
            elif kind == "chmod" and regular:
                p = r.choice(regular)
                os.chmod(full(p), os.lstat(full(p)).st_mode ^ 0o111)
            elif kind == "chmod000" and regular:
                os.chmod(full(r.choice(regular)), 0)
            elif kind == "link-swap" and regular:
                p = r.choice(regular)
                os.unlink(full(p))
                os.symlink(r.choice(["/etc/passwd", "../" * 6 + "tmp", r.choice(regular)]),
                           full(p))
            elif kind == "link-retarget" and links:
                p = r.choice(links)
                target = os.readlink(full(p))
                os.unlink(full(p))
                if r.random() < 0.5:
                    os.symlink(target[::-1] or "x", full(p))
                else:
                    with open(full(p), "w") as f:
                        f.write(target)
            elif kind == "junk":
                d = full(r.choice(folders + [""]))
                if os.path.isdir(d):
                    with open(os.path.join(d, "out%d%s" % (r.randint(0, 9), JUNK)), "w") as f:
                        f.write("build output\n")
            elif kind == "junk-attrs":
                d = r.choice(folders + [""])
                if os.path.isdir(full(d)) and d + "/.gitattributes" not in files and \
                        (d or ".gitattributes" not in files):
                    with open(os.path.join(full(d), ".gitattributes"), "w") as f:
                        f.write("# NBJUNK\n* text eol=crlf ident\n")
            elif kind == "mtime" and regular:
                p = r.choice(regular)
                os.utime(full(p), (1000000, 1000000))
            elif kind == "git-status":
                subprocess.run(["git", "status", "--porcelain"], cwd=tree_dir,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            elif kind == "submodule-junk" and os.path.isdir(full("ext/lib")):
                with open(full("ext/lib/built" + JUNK), "w") as f:
                    f.write("x\n")
            elif kind == "folder-ro" and folders:
                d = full(r.choice(folders))
                if os.path.isdir(d) and not os.path.islink(d):
                    os.chmod(d, 0o555)
            elif kind == "hardlink" and regular:
                p = r.choice(regular)
                if os.path.isfile(full(p)):
                    os.link(full(p), full("hard" + JUNK))
            elif kind == "fifo" and regular:
                p = r.choice(regular)
                os.unlink(full(p))
                os.mkfifo(full(p))
            elif kind == "dir-link" and folders:
                d = full(r.choice(folders))
                if os.path.isdir(d) and not os.path.islink(d):
                    shutil.rmtree(d)
                    os.symlink(outside, d)
            elif kind == "folder000" and folders:
                d = full(r.choice(folders))
                if os.path.isdir(d) and not os.path.islink(d):
                    os.chmod(d, 0)
            else:
                continue
            done.append(kind)
        except OSError:
            pass
    return done


def step():
    copy, log, work = os.environ["FID_COPY"], os.environ["FID_LOG"], os.environ["FID_WORK"]
    tree_dir = os.getcwd()
    commit = git("rev-parse", "HEAD").decode().strip()
    named = os.environ.get("NEXTBOT_COMMIT")
    wrong = []
    if named and named != commit:
        wrong.append("HEAD is %s, not %s" % (commit, named))
        commit = named
    private = tempfile.mkdtemp(dir=work)
    try:
        wrong += check(tree_dir, copy, commit, work, private)
    finally:
        shutil.rmtree(private)
    if os.environ.get("FID_ANCESTOR"):
        # a real history: bad from that commit on (the steps' trees are what is checked)
        verdict = 1 - subprocess.run(["git", "--git-dir=" + copy, "merge-base", "--is-ancestor",
                                      os.environ["FID_ANCESTOR"], commit]).returncode
    else:
        try:
            with open("marker.txt", "rb") as f:
                n = int(f.read(4))
        except (OSError, ValueError):
            n = 9999
        verdict = 1 if n >= int(os.environ["FID_K"]) else 0
    done = []
    if os.environ.get("FID_RESET") == "1":
        # git's checkout keeps a file whose blob did not change when its attributes
        # did; git then takes it for a local change and will not check out the next
        # commit: `git bisect run` needs the file rewritten
        git("reset", "-q", "--hard")
    if os.environ.get("FID_MUTATE") == "1":
        r = random.Random("%s %s" % (os.environ.get("FID_SEED", "0"), commit))
        outside = os.path.join(work, "outside")
        os.makedirs(outside, exist_ok=True)
        done = damage(tree_dir, copy, commit, r, outside)
    with open(log, "a") as f:
        if wrong:
            f.write("WRONG %s %s\n" % (commit, "; ".join(wrong[:5])))
        else:
            f.write("OK %s %s\n" % (commit, " ".join(done)))
    return verdict


def main():
    if len(sys.argv) >= 4 and sys.argv[1] == "gen":
        gen(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]) if len(sys.argv) > 4 else 64)
        return 0
    if len(sys.argv) == 2 and sys.argv[1] == "step":
        return step()
    sys.stderr.write(__doc__)
    return 128


if __name__ == "__main__":
    sys.exit(main())
