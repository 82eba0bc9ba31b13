#!/usr/bin/python3
"""Two versions of a patch series, many times over, for test_rangediff's oracle.

rangediff_series.py DIR FIRST LAST: makes the repository DIR (one `git fast-import`)
and, for each seed from FIRST to LAST, a base and two series drawn from the seed: v1,
then v2 made from v1 by keeping, rewording, touching up, rewriting, dropping, adding
and swapping patches, on the same base or on a base one unrelated commit further.
Prints one line a seed: "seed old_base old_tip new_base new_tip".
"""
import random
import subprocess
import sys

WORDS = ("alpha beta gamma delta page slab vma folio lru zone node memcg swap anon file "
         "dirty clean lock spin count limit scan batch shrink reclaim").split()


class Stream:
    def __init__(self):
        self.out, self.mark, self.tick = [], 0, 1700000000

    def data(self, text):
        raw = text.encode()
        self.out.append(b"data %d\n" % len(raw) + raw + b"\n")

    def commit(self, ref, parent, msg, files):
        self.mark += 1
        self.tick += 60
        self.out.append(b"commit %s\nmark :%d\n" % (ref.encode(), self.mark))
        self.out.append(b"author A U Thor <author@example.org> %d +0000\n" % self.tick)
        self.out.append(b"committer C O Mitter <c@example.org> %d +0000\n" % self.tick)
        self.data(msg)
        if parent:
            self.out.append(b"from :%d\n" % parent)
        for name, lines in sorted(files.items()):
            self.out.append(b"M 100644 inline %s\n" % name.encode())
            self.data("".join(x + "\n" for x in lines))
        return self.mark


def line(rng):
    return "\t%s(%s);" % ("_".join(rng.sample(WORDS, 2)), ", ".join(rng.sample(WORDS, 3)))


def apply(files, edit):
    """An edit: (file, at, remove, new lines); positions are clamped to the file."""
    name, at, remove, new = edit
    lines = files[name]
    at = min(at, len(lines))
    files[name] = lines[:at] + new + lines[at + remove:]


def new_edit(rng, files):
    name = rng.choice(sorted(files))
    return (name, rng.randrange(len(files[name])), rng.randrange(0, 4),
            [line(rng) for _ in range(rng.randrange(1, 6))])


def series(st, ref, base, files, edits):
    files = {k: list(v) for k, v in files.items()}
    tip = base
    for subject, body, edit in edits:
        apply(files, edit)
        tip = st.commit(ref, tip, "%s\n\n%s\n" % (subject, body), files)
    return tip


def v2_of(rng, files, v1):
    v2 = []
    for subject, body, edit in v1:
        r = rng.random()
        if r < 0.15:
            continue                                   # dropped
        if r < 0.3:
            body += "\n\nReviewed-by: R <r@example.org>"  # reworded
        elif r < 0.5:
            name, at, remove, new = edit              # touched up
            new = list(new)
            new[rng.randrange(len(new))] = line(rng)
            edit = (name, at, remove, new)
        elif r < 0.6:
            edit = new_edit(rng, files)               # rewritten
        v2.append((subject, body, edit))
        if rng.random() < 0.15:
            v2.append(("mm: new in v2 %d" % len(v2), "Added.", new_edit(rng, files)))
    if len(v2) > 2 and rng.random() < 0.3:
        v2[0], v2[1] = v2[1], v2[0]
    return v2


def main():
    d, first, last = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    st = Stream()
    marks = []
    for seed in range(first, last + 1):
        rng = random.Random(seed)
        files = {"mm/f%d.c" % i: [line(rng) for _ in range(40)] for i in range(3)}
        base = st.commit("refs/s%d/base" % seed, None, "base %d\n" % seed, files)
        v1 = [("mm: change %d of series %d" % (i, seed), "Why %d." % i, new_edit(rng, files))
              for i in range(rng.randrange(3, 9))]
        old_tip = series(st, "refs/s%d/v1" % seed, base, files, v1)
        new_base = base
        if rng.random() < 0.5:  # rebased onto a base with an unrelated change
            moved = dict(files, README=["moved on %d" % seed])
            new_base = st.commit("refs/s%d/nb" % seed, base, "unrelated %d\n" % seed, moved)
            files = moved
        v2 = v2_of(rng, files, v1)
        new_tip = series(st, "refs/s%d/v2" % seed, new_base, files, v2) if v2 else new_base
        marks.append((seed, base, old_tip, new_base, new_tip))
    subprocess.run(["git", "init", "-q", d], check=True)
    subprocess.run(["git", "-C", d, "fast-import", "--quiet", "--export-marks=marks"],
                   input=b"".join(st.out), check=True)
    with open("%s/marks" % d) as f:  # --export-marks is relative to the repository
        ids = dict(x.split() for x in f)
    for seed, *m in marks:
        print(seed, *(ids[":%d" % x] for x in m))


main()
