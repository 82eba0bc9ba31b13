#!/usr/bin/python3
"""Scores nextbot's patch journeys against the simulator's truth.json (issue 31).

    journeys.py notices WORLD NIGHTS_DIR LIST
        NIGHTS_DIR/night.N lists the outbox files that night N (sim day N) added.
        Every journey event of truth.json from day 1 on (added, moved, replaced,
        removed, merged) has exactly one notice of its kind that night, answering the
        Message-ID the patch had then, naming the branch; no notice has no event; each
        goes to the patch's author and the people of its trailers as git
        interpret-trailers reads them (Signed-off-by, Reviewed-by, Acked-by,
        Tested-by, Co-developed-by; a replacement's old version's too; never Cc:
        addresses nor robots), Cc LIST and the people and lists that mainline's
        MAINTAINERS names for the files of those commits (read here, F: and X: as
        paths and folders, through .mailmap).  A replacement's mail names exactly the
        reviews (Reviewed-by, Acked-by, Tested-by) the old commit has and the new
        one lacks, and has an interdiff exactly when both have the same parent tree.
    journeys.py patch WORLD NEXTBOT
        `nextbot --json patch <Message-ID>` of every patch of truth.json agrees with
        it: versions (patch-ids, Message-IDs), events (day, kind, branch, from),
        reviews, and the state its last event implies.
Prints one "# ..." line per disagreement; exits 1 if there is any.
"""
import collections
import datetime
import email
import email.policy
import glob
import json
import os
import re
import subprocess
import sys

EPOCH = datetime.date(2025, 1, 6)
KINDS = {"patch-added": "added", "patch-moved": "moved", "patch-replaced": "replaced",
         "patch-removed": "removed", "patch-merged": "merged"}
PEOPLE = ("signed-off-by", "reviewed-by", "acked-by", "tested-by", "co-developed-by")


def date(day):
    return (EPOCH + datetime.timedelta(days=day)).isoformat()


def msgid_at(p, day):
    """The Message-ID of the version current on `day`."""
    return [v for v in p["versions"] if v["day"] <= day][-1]["message_id"]


def expected_events(truth):
    want = collections.Counter()
    for p in truth["patches"]:
        for e in p["events"]:
            if e["day"] >= 1:
                want[(e["day"], e["event"], msgid_at(p, e["day"]), e["branch"])] += 1
    return want


def suffix(kind, branch):
    return {"added": " added to ", "moved": " to ", "replaced": " replaced in ",
            "removed": " removed from ", "merged": " merged into mainline"}[kind] + \
        (branch if kind != "merged" else "")


def trailer_people(world, commit):
    """Addresses of the commit's trailers that get journey mail, by git's own parser."""
    msg = subprocess.run(["git", "-C", os.path.join(world, "sim/store.git"), "log", "-1",
                          "--format=%B", commit], capture_output=True, text=True,
                         check=True).stdout
    out = subprocess.run(["git", "interpret-trailers", "--parse"], input=msg,
                         capture_output=True, text=True, check=True).stdout
    got = set()
    for line in out.splitlines():
        key, _, value = line.partition(": ")
        m = re.search(r"<([^>]+)>", value)
        if key.lower() in PEOPLE and m and not re.search(r"\brobot\b|\bbot\b", value, re.I):
            got.add(m.group(1).lower())
    return got


def reviews_of(world, commit):
    msg = git_out(world, "log", "-1", "--format=%B", commit)
    out = subprocess.run(["git", "interpret-trailers", "--parse"], input=msg,
                         capture_output=True, text=True, check=True).stdout
    return {line for line in out.splitlines()
            if line.split(":", 1)[0].lower() in ("reviewed-by", "acked-by", "tested-by")}


def git_out(world, *args):
    return subprocess.run(["git", "-C", os.path.join(world, "sim/store.git")] + list(args),
                          capture_output=True, text=True, check=True).stdout


def delta_problems(world, text, old, new):
    """The lost reviews and the interdiff of a replacement's mail, against git."""
    bad = []
    lost = sorted(reviews_of(world, old) - reviews_of(world, new))
    m = re.search(r"Reviews the old version had and this one does not:\n((?:  .*\n)+)", text)
    listed = sorted(l.strip() for l in m.group(1).splitlines()) if m else []
    if listed != lost:
        bad.append("lost reviews %s, git says %s" % (listed, lost))
    same_base = git_out(world, "rev-parse", old + "^^{tree}") == \
        git_out(world, "rev-parse", new + "^^{tree}")
    if same_base != ("The interdiff (both versions have the same base)" in text):
        bad.append("interdiff shown %s, same base %s" % (not same_base, same_base))
    return bad


def maintainers_of(world):
    """The sections of mainline's MAINTAINERS as [(F:, X:, addresses)], addresses through
    its .mailmap: this test's own reading (the simulator writes plain paths and
    folders, no globs), not the routing code's."""
    def show(name):
        return subprocess.run(["git", "-C", os.path.join(world, "remotes/mainline.git"),
                               "show", "HEAD:" + name], capture_output=True,
                              text=True).stdout
    mailmap = {}
    for line in show(".mailmap").splitlines():
        found = re.findall(r"<([^>]+)>", line)
        if len(found) == 2:
            mailmap[found[1].lower()] = found[0].lower()
    sections, cur = [], None
    for line in show("MAINTAINERS").splitlines():
        m = re.match(r"^([A-Z]):\t(.*)$", line)
        if not m:
            cur = None
            continue
        if cur is None:
            cur = ([], [], set())
            sections.append(cur)
        key, value = m.groups()
        if key in "MR":
            a = re.search(r"<([^>]+)>", value).group(1).lower()
            cur[2].add(mailmap.get(a, a))
        elif key == "L":
            cur[2].add(value.strip().lower())
        elif key in "FX":
            cur[0 if key == "F" else 1].append(value.strip())
    return sections


def in_pattern(path, pattern):
    return path == pattern or (pattern.endswith("/") and path.startswith(pattern))


def maintainers_for(world, sections, commits):
    """The addresses MAINTAINERS names for the files the commits change."""
    files = set()
    for c in commits:
        files |= set(git_out(world, "diff-tree", "--no-commit-id", "--name-only", "-r",
                             c).split())
    got = set()
    for f_pats, x_pats, addresses in sections:
        if any(any(in_pattern(f, p) for p in f_pats) and
               not any(in_pattern(f, p) for p in x_pats) for f in files):
            got |= addresses
    return got


def commits_in(text, lead):
    """The 12-hex commit on the line after `lead`, or None."""
    m = re.search(re.escape(lead) + r"\n  ([0-9a-f]{12}) ", text)
    return m.group(1) if m else None


def notices(world, nights_dir, list_addr):
    truth = json.load(open(os.path.join(world, "truth.json")))
    authors = {p["message_id"]: p["author"]["email"] for p in truth["patches"]}
    for p in truth["patches"]:
        for v in p["versions"]:
            authors[v["message_id"]] = p["author"]["email"]
    want = expected_events(truth)
    got = collections.Counter()
    bad = []
    deltas = [0]
    routed_n = [0]
    sections = maintainers_of(world)
    # people the MAINTAINERS audit calls absent get no notice (truth.json's absent)
    absent = {a.lower() for a in truth.get("maintainers", {}).get("absent", [])}
    for path in sorted(glob.glob(os.path.join(nights_dir, "night.*"))):
        day = int(path.rsplit(".", 1)[1])
        for name in open(path).read().split():
            n = json.load(open(os.path.join(world, "state/outbox", name)))
            if n["kind"] not in KINDS or n["channel"] != "mail":
                continue
            msg = email.message_from_string(n["body"], policy=email.policy.default)
            text = msg.get_body(preferencelist=("plain",)).get_content().replace("\r\n", "\n")
            reply = (msg["In-Reply-To"] or "").strip("<> ")
            kind = KINDS[n["kind"]]
            branch = [k[3] for k in want if k[:3] == (day, kind, reply)]
            branch = branch[0] if branch else "?"
            if not n["subject"].endswith(suffix(kind, branch)):
                branch = "? (%s)" % n["subject"]
            got[(day, kind, reply, branch)] += 1
            rcpt = {r["to"].lower() for r in n["recipients"]}
            people = {authors.get(reply, "?")}
            commits = [c for c in (commits_in(text, lead) for lead in
                                   ("Its commit:", "The version it replaces:")) if c]
            for c in commits:
                people |= trailer_people(world, c)
            people.add(list_addr)
            routed = maintainers_for(world, sections, commits) - absent
            people |= routed
            routed_n[0] += len(routed)
            if kind == "replaced":
                old = commits_in(text, "The version it replaces:")
                new = commits_in(text, "Its commit:")
                bad += ["day %d replaced <%s>: %s" % (day, reply, b)
                        for b in delta_problems(world, text, old, new)]
                deltas[0] += 1
            if rcpt != people:
                bad.append("day %d %s <%s>: to %s, wanted %s" % (day, kind, reply,
                                                               sorted(rcpt), sorted(people)))
    for k in sorted(set(want) | set(got)):
        if want[k] != got[k]:
            bad.append("day %d %s <%s> %s: %d notice(s) for %d event(s)" %
                       (k[0], k[1], k[2], k[3], got[k], want[k]))
    print("# %d events from day 1 on, %d notices (%d replacements' deltas checked, %d "
          "recipients from MAINTAINERS)" % (sum(want.values()), sum(got.values()), deltas[0],
                                           routed_n[0]))
    return bad


def state_of(p, gone_ok):
    last = p["events"][-1]
    if last["event"] == "merged":
        return {"merged"}
    if last["event"] == "removed":
        return {"gone", "dropped"}
    if last["branch"] == "mm-unstable":
        return {"in-review"}
    return {"in-next", "held", "in-review"}


def patch(world, nextbot):
    truth = json.load(open(os.path.join(world, "truth.json")))
    cfg = os.path.join(world, "nextbot.yaml")
    bad = []
    for p in truth["patches"]:
        r = subprocess.run([nextbot, "--json", "-c", cfg, "patch", p["message_id"]],
                           capture_output=True, text=True)
        if r.returncode:
            bad.append("%s: exit %d: %s" % (p["message_id"], r.returncode, r.stderr.strip()))
            continue
        got = json.loads(r.stdout)["patches"]
        if len(got) != 1:
            bad.append("%s: %d patches" % (p["message_id"], len(got)))
            continue
        g = got[0]
        tv = [(v["patch_id"], v["message_id"]) for v in p["versions"]]
        gv = [(v["patch_id"], v["message_id"]) for v in g["versions"]]
        te = [(date(e["day"]), e["event"], e["branch"], e["from"]) for e in p["events"]]
        ge = [(e["date"], e["event"], e["branch"], e["from"]) for e in g["events"]
              if e["event"] in ("added", "moved", "replaced", "removed", "merged")]
        tr = sorted((r["trailer"], r["email"]) for r in p["reviews"])
        gr = sorted((r["trailer"], r["email"]) for r in g["reviews"])
        what = []
        if tv != gv:
            what.append("versions %s, truth %s" % (gv, tv))
        if te != ge:
            what.append("events %s, truth %s" % (ge, te))
        if tr != gr:
            what.append("reviews %s, truth %s" % (gr, tr))
        if g["state"] not in state_of(p, True):
            what.append("state %s, truth's last event %s" % (g["state"], p["events"][-1]))
        if g["subject"] != p["subject"]:
            what.append("subject %r, truth %r" % (g["subject"], p["subject"]))
        for w in what:
            bad.append("%s (%s): %s" % (p["message_id"], p["subject"], w))
    print("# %d patches compared" % len(truth["patches"]))
    return bad


def main():
    if sys.argv[1] == "notices":
        bad = notices(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        bad = patch(sys.argv[2], sys.argv[3])
    for b in bad[:40]:
        print("#", b)
    if len(bad) > 40:
        print("# ... and %d more" % (len(bad) - 40))
    sys.exit(1 if bad else 0)


main()
