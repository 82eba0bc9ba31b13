#!/usr/bin/python3
"""Checks of a simulated season (tests/t810-sim-nights.sh), after each night and at
its end, against the simulator's truth.json and git itself (the work repository's
refs/feeds/<tree>: what each branch carried the night it was fetched).

    season.py follow WORLD DATE
        no flag is open whose culprit (by patch-id; by commit id or Message-ID when
        it has none) or semantic partner no merged branch carries tonight; every
        flag resolved tonight as "left-tree" did leave; a resolved flag says why
    season.py remind WORLD DATE
        every reminder queued tonight is about a breakage tonight's build still
        shows (the flag was seen tonight, and next carries its culprit, reverted
        or not) and answers the first mail of its own audience (In-Reply-To and
        the end of References: that mail's Message-ID; the same recipients)
    season.py summary WORLD DATE
        tonight's summary names every flag still open (id, tree, since) and every
        tree kept at an older tip or left out, with its reason; its subject counts
        the open flags
    season.py truth WORLD
        recall and precision 1.00 against truth.json: every build, test and
        semantic defect that sat in next on some night (reverted or not; with its
        partner) is flagged (with its partner); every flag blames a defect of
        truth.json, and a flaky flag a flaky defect of its own tree (the flaky
        defects themselves are random: finding them is not asked); one submitter
        report per flag, threaded to the patch
WORLD is the folder of `nextbot sim init`; its config is WORLD/nextbot.yaml and
its workdir WORLD/state.  A problem is printed as "# ..."; the exit status says.
"""
import email
import email.policy
import glob
import json
import os
import re
import subprocess
import sys

NEXTBOT = os.environ.get("NEXTBOT", "nextbot")


def nextbot_json(world, *args):
    out = subprocess.run([NEXTBOT, "-c", os.path.join(world, "nextbot.yaml"), "--json"] +
                         list(args), check=True, stdout=subprocess.PIPE).stdout
    return json.loads(out)


def git(world, *args):
    return subprocess.run(["git", "-C", os.path.join(world, "state", "repo.git")] +
                          list(args), check=True, stdout=subprocess.PIPE).stdout.decode(
                              "utf-8", "replace")


def trees(world):
    """The configured trees (`trees:`, not a list of branches only watched), in order."""
    names, inside = [], False
    for line in open(os.path.join(world, "nextbot.yaml")):
        if re.match(r"[a-z_]+:", line):
            inside = line.startswith("trees:")
        m = re.match(r"  - name: (\S+)", line)
        if m and inside:
            names.append(m.group(1))
    return names


def patches(world, tip, upto):
    """{patch_id: commit}, {commit}, {message_id: commit} of tip's commits not in upto."""
    pids, commits, mids = {}, set(), {}
    log = git(world, "log", "--no-merges", "--format=%H", tip, "--not", upto)
    commits.update(log.split())
    diff = subprocess.run(
        "git -C '%s' log -p --no-merges --no-renames --format='commit %%H' %s --not %s | "
        "git patch-id --stable" % (os.path.join(world, "state", "repo.git"), tip, upto),
        shell=True, check=True, stdout=subprocess.PIPE).stdout.decode()
    for line in diff.split("\n"):
        if line:
            pid, commit = line.split()
            pids[pid] = commit
    bodies = git(world, "log", "--no-merges", "--format=%H%x00%B%x01", tip, "--not", upto)
    for rec in bodies.split("\x01"):
        if "\x00" not in rec:
            continue
        commit, body = rec.strip("\n").split("\x00", 1)
        for m in re.finditer(r"^(?:Link: \S*/r/|Message-ID: <?)([^\s>]+)", body, re.M):
            mids[m.group(1)] = commit
    return pids, commits, mids


def carried(world):
    """What the merged branches carry tonight: patch-ids, commits, Message-IDs."""
    pids, commits, mids = {}, set(), {}
    for t in trees(world):
        ref = "refs/feeds/%s" % t
        if subprocess.run(["git", "-C", os.path.join(world, "state", "repo.git"),
                           "rev-parse", "-q", "--verify", ref], stdout=subprocess.DEVNULL
                          ).returncode:
            continue
        p, c, m = patches(world, ref, "refs/feeds/origin")
        pids.update(p)
        commits |= c
        mids.update(m)
    return pids, commits, mids


def in_base(world, commit):
    return commit and subprocess.run(
        ["git", "-C", os.path.join(world, "state", "repo.git"), "merge-base",
         "--is-ancestor", commit, "refs/feeds/origin"], stderr=subprocess.DEVNULL).returncode == 0


def patch_id_of(world, commit):
    out = subprocess.run(
        "git -C '%s' diff-tree -p --no-renames %s^ %s 2>/dev/null | git patch-id --stable" %
        (os.path.join(world, "state", "repo.git"), commit, commit), shell=True,
        stdout=subprocess.PIPE).stdout.decode().split()
    return out[0] if out else None


def is_carried(world, have, patch_id, message_id, commit):
    pids, commits, mids = have
    if patch_id:
        return patch_id in pids or in_base(world, commit)
    return commit in commits or (message_id and message_id.strip("<>") in mids) or \
        in_base(world, commit)


def follow(world, date):
    flags = nextbot_json(world, "flagged")["flags"]
    have = carried(world)
    bad = []
    for f in flags:
        if f["kind"] == "flaky" or f["state"] not in ("open", "resolved"):
            continue
        here = is_carried(world, have, f["patch_id"], f["message_id"], f["commit"])
        p = f.get("partner")
        there = True
        if p and p.get("commit"):
            there = is_carried(world, have, patch_id_of(world, p["commit"]), None, p["commit"])
        if f["state"] == "open" and not (here and there):
            bad.append("flag %s (%s, %s) is open, but its %s left every merged branch" %
                       (f["id"], f["tree"], f["subject"], "culprit" if not here else
                        "partner %s" % p["subject"]))
        if f["state"] == "resolved" and f.get("resolution") == "left-tree" and \
                f["last_seen"] and here and there and resolved_tonight(world, f, date):
            bad.append("flag %s resolved as left-tree tonight, but its culprit and partner "
                       "are still carried" % f["id"])
        if f["state"] == "resolved" and f.get("resolution") not in ("left-tree", "fixed",
                                                                    "gone"):
            bad.append("flag %s resolved without a resolution: %r" % (f["id"],
                                                                     f.get("resolution")))
    for b in bad:
        print("#", b)
    return not bad


def resolved_tonight(world, f, date):
    for n in tonight(world, date):
        if n["kind"] == "resolved" and n["channel"] == "mail":
            msg = email.message_from_string(n["body"], policy=email.policy.default)
            if msg["X-Nextbot-Flag"] == f["id"]:
                return True
    return False


def run_of(world, date):
    with open(os.path.join(world, "state", "runs", date, "run.json")) as f:
        return json.load(f)


def outbox(world):
    out = {}
    for path in glob.glob(os.path.join(world, "state", "outbox", "*.json")):
        with open(path) as f:
            n = json.load(f)
        out[n["id"]] = n
    return out


def tonight(world, date):
    box = outbox(world)
    return [box[i] for i in run_of(world, date).get("notices", []) if i in box]


def parse(n):
    return email.message_from_string(n["body"], policy=email.policy.default)


def rcpts(msg):
    return sorted(a.addr_spec for h in ("To", "Cc") for a in
                  (msg[h].addresses if msg[h] else ()))


def is_reminder(n, msg):
    if n["channel"] != "mail" or n["kind"] not in ("build-failure", "test-failure", "flaky"):
        return False
    part = msg.get_body(("plain",)) if msg.is_multipart() else msg
    text = squeeze(part.get_content())
    return (msg["In-Reply-To"] or "").startswith("<nextbot.") or \
        "This is a reminder" in text or "is back as of" in text


def remind(world, date):
    run = run_of(world, date)
    flags = {f["id"]: f for f in nextbot_json(world, "flagged")["flags"]}
    box = [(n, parse(n)) for n in outbox(world).values() if n["channel"] == "mail"]
    ids = {str(m["Message-ID"]): (n, m) for n, m in box}
    in_next = None
    bad, seen = [], 0
    for n in tonight(world, date):
        msg = parse(n)
        if not is_reminder(n, msg):
            continue
        seen += 1
        fid = msg["X-Nextbot-Flag"]
        f = flags.get(fid)
        if not f:
            bad.append("%s: a reminder about no flag (%s)" % (n["subject"], fid))
            continue
        if fid not in run["flags"]:
            bad.append("%s: a reminder of flag %s, not seen on %s" % (n["subject"], fid, date))
        if f["kind"] != "flaky":
            if in_next is None:
                in_next = patches(world, run["next"], "refs/feeds/origin")[0]
            if f["patch_id"] and f["patch_id"] not in in_next:
                bad.append("%s: a reminder of flag %s, whose culprit is not in %s" %
                           (n["subject"], fid, run["tag"]))
        first = ids.get(str(msg["In-Reply-To"]))
        refs = str(msg["References"] or "").split()
        if not first or is_reminder(*first) or parse(first[0])["X-Nextbot-Flag"] != fid:
            bad.append("%s: In-Reply-To %s is not a first mail of flag %s" %
                       (n["subject"], msg["In-Reply-To"], fid))
        elif rcpts(first[1]) != rcpts(msg):
            bad.append("%s: answers a mail to %s, itself to %s" %
                       (n["subject"], rcpts(first[1]), rcpts(msg)))
        elif not refs or refs[-1] != str(msg["In-Reply-To"]):
            bad.append("%s: References %s do not end with its In-Reply-To" %
                       (n["subject"], refs))
    for b in bad:
        print("#", b)
    if seen:
        print("# %d reminder(s) on %s" % (seen, date))
    return not bad


def squeeze(s):
    return " ".join(s.split())


def summary(world, date):
    run = run_of(world, date)
    flags = nextbot_json(world, "flagged")["flags"]
    tag = run["tag"] or "next-" + date.replace("-", "")
    mails = [n for n in tonight(world, date)
             if n["kind"] == "summary" and n["channel"] == "mail"]
    if len(mails) != 1:
        print("# %d summary mails on %s" % (len(mails), date))
        return False
    n = mails[0]
    msg = parse(n)
    part = msg.get_body(("plain",)) if msg.is_multipart() else msg
    body = squeeze(part.get_content())
    subject = str(msg["Subject"])
    bad = []
    if not subject.startswith("[%s] BUILD " % tag):
        bad.append("subject %r" % subject)
    still = [f for f in flags if f["state"] == "open"]
    # 0-day's words: SUCCESS only for a clean next with no flag open
    word = "SUCCESS" if run["result"] == "clean" and not still else "REGRESSION"
    if not subject.startswith("[%s] BUILD %s " % (tag, word)):
        bad.append("subject %r: want BUILD %s (night %s, %d open)" %
                   (subject, word, run["result"], len(still)))
    for f in still:
        line = "%s %s in %s" % (f["id"], f["kind"], f["tree"])
        if line not in body or "since %s" % f["first_seen"] not in body:
            bad.append("open flag %s (%s, since %s) not named" % (f["id"], f["tree"],
                                                                  f["first_seen"]))
    if still and "(%d flag%s open" % (len(still), "" if len(still) == 1 else "s") \
            not in subject:
        bad.append("subject %r does not count the %d open flags" % (subject, len(still)))
    for t in run["trees"]:
        if t["state"] in ("previous-version", "stale", "left-out", "fetch-failed"):
            want = squeeze("%s %s: %s" % (t["name"], t["state"], t["reason"] or ""))
            if want not in body:
                bad.append("tree %s (%s: %s) not named with its reason" %
                           (t["name"], t["state"], t["reason"]))
    # a flag is never "held" (a tree's reason may say the review gate held patches)
    for f in still:
        at = body.find("%s %s in %s" % (f["id"], f["kind"], f["tree"]))
        line = body[at:].split("(", 1)[0] if at >= 0 else ""
        if re.search(r"\bheld\b", line):
            bad.append("the summary says open flag %s is 'held'" % f["id"])
    for b in bad:
        print("#", b)
    return not bad


def truth(world):
    with open(os.path.join(world, "truth.json")) as f:
        t = json.load(f)
    flags = nextbot_json(world, "flagged")["flags"]
    runs = [json.load(open(p)) for p in
            sorted(glob.glob(os.path.join(world, "state", "runs", "*", "run.json")))]
    bad = []
    known = {}
    for d in t["defects"]:
        for key in (d.get("patch_id"), d.get("message_id")):
            if key:
                known[key] = d
        p = d.get("partner") or {}
        for key in (p.get("patch_id"), p.get("message_id")):
            if key:
                known[key] = d
    # precision: every flag blames a defect; a flaky one a flaky defect of its tree
    right = 0
    for f in flags:
        ok = True
        if f["tree"] == "mm-unstable":
            bad.append("flag in mm-unstable: %s" % f["id"])
            ok = False
        if f["kind"] == "flaky":
            if not any(d["kind"] == "flaky" and f["tree"] in d["trees"]
                       for d in t["defects"]):
                bad.append("flaky flag %s on %s (first seen %s: %s): no flaky defect there" %
                           (f["id"], f["tree"], f["first_seen"], f["error"]))
                ok = False
        elif f["patch_id"] not in known and f["message_id"] not in known:
            bad.append("flag %s blames %s (%s), not a defect" % (f["id"], f["commit"],
                                                                f["subject"]))
            ok = False
        elif (known.get(f["patch_id"]) or known.get(f["message_id"]))["kind"] == "flaky":
            bad.append("flaky defect blamed as %s: %s" % (f["kind"], f["subject"]))
            ok = False
        right += ok
    # recall: every build, test and semantic defect that sat in next on some night
    # (reverted or not; a semantic one with its partner) is flagged
    nexts = []
    for r in runs:
        base = next((x["sha1"] for x in r["trees"] if x["name"] == "origin"), None)
        if r.get("next") and base:
            nexts.append(patches(world, r["next"], base)[0])
    due = found = 0
    for d in t["defects"]:
        if d["kind"] not in ("build", "test", "semantic"):
            continue
        p = (d.get("partner") or {}).get("patch_id")
        if not any(d["patch_id"] in pids and (not p or p in pids) for pids in nexts):
            continue
        due += 1
        f = flagged(flags, d)
        if not f and d["kind"] == "semantic":
            f = next((x for x in flags if x["patch_id"] == p), None)
        if not f:
            bad.append("defect %s (%s, %s, day %d) sat in next but is not flagged: %s" %
                       (d["id"], d["kind"], d["trees"], d["day"], d["subject"]))
            continue
        if d["kind"] == "semantic" and not f.get("partner"):
            bad.append("semantic defect %s flagged without a partner" % d["id"])
            continue
        if d["kind"] == "semantic" and d.get("partner") and \
                f["partner"]["subject"] != d["partner"]["subject"] and \
                f["subject"] != d["partner"]["subject"]:
            bad.append("semantic defect %s: partner %r, truth says %r" %
                       (d["id"], f["partner"]["subject"], d["partner"]["subject"]))
            continue
        found += 1
    print("# recall %d/%d = %.2f, precision %d/%d = %.2f" %
          (found, due, found / due if due else 1.0, right, len(flags),
           right / len(flags) if flags else 1.0))
    # one report per flag to the submitter, threaded to the patch's Message-ID
    reports = {}
    for n in outbox(world).values():
        if n.get("channel") != "mail" or n["kind"] not in ("build-failure", "test-failure"):
            continue
        m = parse(n)
        if m["In-Reply-To"] and not m["In-Reply-To"].startswith("<nextbot."):
            reports.setdefault(m["In-Reply-To"].strip("<>"), []).append(n["id"])
    for f in flags:
        if f["kind"] == "flaky" or not f["message_id"]:
            continue
        got = reports.get(f["message_id"], [])
        if len(got) != 1:
            bad.append("flag %s: %d submitter reports threaded to %s" %
                       (f["id"], len(got), f["message_id"]))
    # nothing of mm-unstable in any night's trees
    for r in runs:
        for x in r["trees"]:
            if x["name"] == "mm-unstable" and x["state"] != "left-out":
                bad.append("mm-unstable merged on %s" % r["date"])
    for b in bad:
        print("#", b)
    return not bad


def flagged(flags, d):
    for f in flags:
        if f["patch_id"] == d["patch_id"] or \
                (d.get("message_id") and f["message_id"] == d["message_id"]):
            return f
    return None


def main(argv):
    cmds = {"follow": follow, "remind": remind, "summary": summary}
    if len(argv) == 4 and argv[1] in cmds:
        return cmds[argv[1]](argv[2], argv[3])
    if len(argv) == 3 and argv[1] == "truth":
        return truth(argv[2])
    raise SystemExit(__doc__)


if __name__ == "__main__":
    sys.exit(0 if main(sys.argv) else 1)
