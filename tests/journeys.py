#!/usr/bin/python3
"""Scores nextbot's patch journeys against the simulator's truth.json (issue 31).

    journeys.py notices WORLD NIGHTS_DIR LIST
        (LIST: an address, or journey.list as a mapping, "GLOB=ADDR,GLOB=ADDR")
        NIGHTS_DIR/night.N lists the outbox files that night N (sim day N) added.
        Every journey event of truth.json from day 1 on (added, moved, replaced,
        removed, merged) has exactly one notice of its kind that night, answering the
        Message-ID the patch had then, naming the branch; no notice has no event; each
        goes to the patch's author and the people of its trailers as git
        interpret-trailers reads them (Signed-off-by, Reviewed-by, Acked-by,
        Tested-by, Co-developed-by; a replacement's old version's too; never Cc:
        addresses nor robots), Cc LIST and, for added and replaced (what asks for
        a review), the M: and R: people (not the L: lists) that mainline's
        MAINTAINERS names for the files of those commits (read here, F: and X: as
        paths and folders, through .mailmap).  A replacement's mail names exactly the
        reviews (Reviewed-by, Acked-by, Tested-by) the old commit has and the new
        one lacks, and has an interdiff exactly when both have the same parent tree.
    journeys.py patch WORLD NEXTBOT
        `nextbot --json patch <Message-ID>` of every patch of truth.json agrees with
        it: versions (patch-ids, Message-IDs), events (day, kind, branch, from),
        reviews, and the state its last event implies.
    journeys.py story WORLD DAY NIGHT_FILE PREV_STORE NEXTBOT
        Run right after night DAY (NIGHT_FILE: the outbox files it added; PREV_STORE:
        journeys.txt as the night before left it, may be missing): every journey mail
        of the night states a change of state that happened, and every such change
        has its mail.  held: the patch is held tonight (the store and `nextbot patch
        --json` agree), was not last night, and next does not carry it (its
        Message-ID in no commit of next since the base); released: it was held (or
        waiting to be released) and is in next tonight, in a tree `nextbot status
        --json` says merged tonight, with a review by someone other than its author
        (or it needed a held patch); no review-missing beside a [held] of the same
        patch.  The night's mails, in delivery order (their "order"), tell the moves,
        then the gate, then the rest, the summary last.
Prints one "# ..." line per disagreement; exits 1 if there is any.
"""
import collections
import datetime
import email
import email.policy
import fnmatch
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
            pass  # lists get no journey notice: the tree's journey list does
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


def list_of(lists, tree):
    """LIST as given: one address for every tree, or "GLOB=ADDR,..." (the first match)."""
    if "=" not in lists:
        return {lists}
    for item in lists.split(","):
        pattern, _, addr = item.partition("=")
        if fnmatch.fnmatchcase(tree or "", pattern):
            return {addr}
    return set()


def event_trees(truth):
    """(day, event, Message-ID) -> the trees the event concerns: a move's both, a
    merge's the one it left."""
    out = {}
    for p in truth["patches"]:
        before = None
        for e in p["events"]:
            trees = {e["branch"]}
            if e["event"] == "moved":
                trees.add(e["from"])
            elif e["event"] == "merged":
                trees = {before}
            out[(e["day"], e["event"], msgid_at(p, e["day"]))] = trees
            before = e["branch"]
    return out


def notices(world, nights_dir, list_addr):
    truth = json.load(open(os.path.join(world, "truth.json")))
    concerns = event_trees(truth)
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
            for tree in concerns.get((day, kind, reply), {None}):
                people |= list_of(list_addr, tree)
            # MAINTAINERS' people hear of what asks for a review: added, replaced;
            # never those the audit calls absent
            routed = maintainers_for(world, sections, commits) - absent \
                if kind in ("added", "replaced") else set()
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
        return {"removed", "dropped"}
    if last["branch"] == "mm-unstable":
        return {"watched"}
    return {"in-next", "held", "in-tree", "reverted-in-next"}


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


MOVES = ("patch-added", "patch-moved", "patch-replaced", "patch-removed", "patch-merged")
GATE = ("held", "released", "review-missing")


def unescape(f):
    if f == "\\N":
        return None
    return f.replace("\\t", "\t").replace("\\n", "\n").replace("\\r", "\r") \
        .replace("\\\\", "\\")


def store_of(path):
    """journeys.txt as {key: {state, tree, held, msgids, author, reviewers}}."""
    out, cur = {}, None
    if not os.path.exists(path):
        return out
    for line in open(path, encoding="utf-8"):
        f = [unescape(x) for x in line.rstrip("\n").split("\t")]
        if f[0] == "patch":
            cur = out[f[1]] = {"state": f[6], "tree": f[7], "held": f[11], "msgids": [],
                               "author": (f[4] or "").lower(), "reviewers": set()}
        elif f[0] == "version" and cur is not None:
            cur["msgids"].append(f[2])
            cur["reviewers"] = set()  # the latest version's count
        elif f[0] == "person" and cur is not None and \
                (f[1] or "").lower() in ("reviewed-by", "acked-by"):
            cur["reviewers"].add((f[3] or "").lower())
    return out


def next_msgids(world):
    """The Message-IDs (Link: trailers) of next's commits since the base, tonight."""
    r = subprocess.run(["git", "-C", os.path.join(world, "state/repo.git"), "log",
                        "--format=%B", "refs/feeds/origin..refs/heads/next"],
                       capture_output=True, text=True)
    return set(re.findall(r"^Link: https://lore.kernel.org/r/(\S+)$", r.stdout, re.M))


def story_mails(world, night_file):
    mails = []
    for name in open(night_file).read().split():
        n = json.load(open(os.path.join(world, "state/outbox", name)))
        if n["channel"] == "mail":
            mails.append(n)
    mails.sort(key=lambda n: (n.get("order", ""), n["id"]))
    return mails


def story(world, day, night_file, prev_path, nextbot):
    cfg = os.path.join(world, "nextbot.yaml")
    prev = store_of(prev_path)
    cur = store_of(os.path.join(world, "state/journeys.txt"))
    by_msgid = {m: k for k, p in cur.items() for m in p["msgids"]}
    status = json.loads(subprocess.run([nextbot, "--json", "-c", cfg, "status"],
                                       capture_output=True, text=True, check=True).stdout)
    run = status["runs"][0] if status.get("runs") else {"trees": []}
    merged = {t["name"] for t in run["trees"] if t["state"] in ("merged", "reverted", "stale")}
    in_next = next_msgids(world)
    mails = story_mails(world, night_file)
    bad, told, released_n = [], collections.defaultdict(list), 0
    for n in mails:
        if n["kind"] not in MOVES + GATE:
            continue
        msg = email.message_from_string(n["body"], policy=email.policy.default)
        reply = (msg["In-Reply-To"] or "").strip("<> ")
        key = by_msgid.get(reply)
        if key is None:
            bad.append("day %d: %s about <%s>, a patch the store does not know" %
                       (day, n["kind"], reply))
            continue
        told[key].append(n["kind"])
        if n["kind"] in GATE:
            r = subprocess.run([nextbot, "--json", "-c", cfg, "patch", reply],
                               capture_output=True, text=True)
            got = json.loads(r.stdout)["patches"] if r.returncode == 0 else []
            state = got[0]["state"] if len(got) == 1 else "?"
            if state != cur[key]["state"]:
                bad.append("day %d: <%s>: nextbot patch says %s, the store %s" %
                           (day, reply, state, cur[key]["state"]))
        if n["kind"] == "released":
            released_n += 1
            tree = re.search(r"\(([^()]*)\)$", n["subject"])
            if not tree or tree.group(1) not in merged:
                bad.append("day %d: %s, but status does not say that tree merged" %
                           (day, n["subject"]))
    for key, p in cur.items():
        was = prev.get(key, {"state": None, "held": None})
        kinds = told.get(key, [])
        mid = p["msgids"][-1]
        if p["state"] == "held" and mid in in_next:
            bad.append("day %d: <%s> held, but next carries it" % (day, mid))
        if p["state"] == "in-next" and mid not in in_next:
            bad.append("day %d: <%s> in-next, but next does not carry it" % (day, mid))
        new_hold = p["state"] == "held" and was["state"] != "held" and was["held"] is None
        if kinds.count("held") != (1 if new_hold and prev else 0):
            bad.append("day %d: <%s> (%s -> %s): %d [held] mail(s)" %
                       (day, mid, was["state"], p["state"], kinds.count("held")))
        released = was["held"] is not None and p["state"] == "in-next" and p["held"] is None
        if kinds.count("released") != (1 if released else 0):
            bad.append("day %d: <%s> (%s -> %s): %d [released] mail(s)" %
                       (day, mid, was["state"], p["state"], kinds.count("released")))
        if released and not (p["reviewers"] - {p["author"]}) and \
                "does not apply" not in (was["held"] or ""):
            bad.append("day %d: <%s> released into next without a review" % (day, mid))
        if "held" in kinds and "review-missing" in kinds:
            bad.append("day %d: <%s>: [review-missing] beside its [held]" % (day, mid))
        if kinds != sorted(kinds, key=lambda k: k in GATE):
            bad.append("day %d: <%s>: mails out of story order: %s" % (day, mid, kinds))
    place = [0 if n["kind"] in MOVES else 1 if n["kind"] in GATE else
             3 if n["kind"] == "summary" else 2 for n in mails]
    if place != sorted(place):
        bad.append("day %d: the night's mails out of story order: %s" %
                   (day, [n["kind"] for n in mails]))
    print("# day %d: %d mails, %d journey patches, %d held, %d released" %
          (day, len(mails), len(cur), sum(p["state"] == "held" for p in cur.values()),
           released_n))
    return bad


def main():
    if sys.argv[1] == "notices":
        bad = notices(sys.argv[2], sys.argv[3], sys.argv[4])
    elif sys.argv[1] == "story":
        bad = story(sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5], sys.argv[6])
    else:
        bad = patch(sys.argv[2], sys.argv[3])
    for b in bad[:40]:
        print("#", b)
    if len(bad) > 40:
        print("# ... and %d more" % (len(bad) - 40))
    sys.exit(1 if bad else 0)


main()
