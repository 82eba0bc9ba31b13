#!/usr/bin/python3
"""The bookkeeping of `nextbot maintainers` over `git log` output, for bench/run.

    maintainers_book.py MAINTAINERS MAILMAP LOG AS_OF ABSENT_DAYS

LOG is `git log --no-merges --name-only --format=%x00%ct%x01%ae%x01%(trailers:...)`
over the audit's window.  Sections are read as the simulator writes them (F: and X:
are folders ending in '/' or whole file names; no globs), people through the
.mailmap's "<new> <old>" and "Name <new> <old>" lines, case ignored.  Prints the
absent addresses, one a line, sorted.
"""
import re
import sys


def sections(path):
    out, cur = [], None
    for line in open(path, encoding="utf-8", errors="replace"):
        line = line.rstrip("\r\n")
        m = re.match(r"^([A-Z]):\s*(.*)$", line)
        if not m:
            if line.strip() and not line.lstrip().startswith("#"):
                cur = {"name": line, "people": [], "f": [], "x": []}
                out.append(cur)
            continue
        if cur is None:
            continue
        t, v = m.groups()
        if t in "MR":
            a = re.search(r"<([^>]+)>", v)
            cur["people"].append((a.group(1) if a else v).strip())
        elif t == "F":
            cur["f"].append(v)
        elif t == "X":
            cur["x"].append(v)
    return [s for s in out if s["people"] or s["f"]]


def matches(pats, path):
    return any(path.startswith(p) if p.endswith("/") else path == p for p in pats)


def main(argv):
    secs = sections(argv[1])
    mm = {}
    for line in open(argv[2], encoding="utf-8", errors="replace"):
        a = re.findall(r"<([^>]*)>", line.split("#", 1)[0])
        if len(a) == 2:
            mm[a[1].lower()] = a[0].lower()
    canon = lambda e: mm.get(e.lower(), e.lower())
    as_of, absent_days = int(argv[4]), int(argv[5])
    last = {}
    cache = {}
    with open(argv[3], encoding="utf-8", errors="replace") as f:
        blob = f.read()
    for rec in blob.split("\0")[1:]:
        head, _, names = rec.partition("\n\n") if "\n\n" in rec else (rec, "", "")
        parts = head.split("\x01")
        when, author = int(parts[0]), parts[1]
        people = {canon(author)}
        people.update(canon(a) for a in re.findall(r"<([^>]+)>", parts[2] if len(parts) > 2
                                                     else ""))
        touched = set()
        for path in names.split("\n"):
            if not path:
                continue
            if path not in cache:
                cache[path] = [i for i, s in enumerate(secs)
                               if matches(s["f"], path) and not matches(s["x"], path)]
            touched.update(cache[path])
        for i in touched:
            for p in secs[i]["people"]:
                k = (i, canon(p))
                if k[1] in people and last.get(k, 0) < when:
                    last[k] = when
    absent = set()
    for i, s in enumerate(secs):
        for p in s["people"]:
            t = last.get((i, canon(p)), 0)
            if not t or as_of - t > absent_days * 86400:
                absent.add(canon(p))
    for a in sorted(absent):
        print(a)


if __name__ == "__main__":
    main(sys.argv)
