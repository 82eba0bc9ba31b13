#!/usr/bin/python3
"""Scores a kernel world's nights (tests/kernel/nights.sh) against its truth.json.

    score.py WORLD DAYS...
        every build, boot and semantic defect live on one of DAYS (the script's days
        the nights were played on) is flagged, its culprit named exactly (patch-id;
        a semantic one with its partner); every flag names a defect (a flaky one
        the flaky defect's tree); nobody else is flagged
    score.py infra WORLD
        nobody is flagged, and a mail says what failed: the operator's
        ("infrastructure problem") or, when the base failed the night's first
        check, the base-broken mail naming the boot

A problem is printed as "# ..."; the exit status says.
"""
import email
import email.policy
import glob
import json
import os
import subprocess
import sys

NEXTBOT = os.environ.get("NEXTBOT", "nextbot")


def flags(world):
    out = subprocess.run([NEXTBOT, "-c", os.path.join(world, "nextbot.yaml"), "--json",
                          "flagged"], check=True, capture_output=True, text=True).stdout
    return json.loads(out)["flags"]


def verdicts(world, days):
    truth = json.load(open(os.path.join(world, "truth.json")))
    got = flags(world)
    bad = []
    known = {}
    for d in truth["defects"]:
        known[d["patch_id"]] = d
        if d.get("partner"):
            known[d["partner"]["patch_id"]] = d
    for f in got:
        d = known.get(f["patch_id"])
        if f["kind"] == "flaky":
            if not any(x["kind"] == "flaky" and f["tree"] in x["trees"]
                       for x in truth["defects"]):
                bad.append("flaky flag %s on %s: no flaky defect there" % (f["id"], f["tree"]))
        elif not d:
            bad.append("flag %s blames %s (%s), not a defect" %
                       (f["id"], f["commit"], f["subject"]))
        elif d["kind"] == "flaky":
            bad.append("the flaky defect blamed as %s: %s" % (f["kind"], f["subject"]))
    due = found = 0
    for d in truth["defects"]:
        if d["kind"] not in ("build", "boot", "semantic"):
            continue
        live = [day for day in days if d["day"] <= day and
                (not d["dropped"] or day < d["day"] + 1)]
        if not live:
            continue
        due += 1
        f = next((x for x in got if x["patch_id"] == d["patch_id"]), None)
        if not f:
            bad.append("defect %s (%s in %s, day %d) not flagged: %s" %
                       (d["id"], d["kind"], ",".join(d["trees"]), d["day"], d["subject"]))
            continue
        if d["kind"] == "semantic" and \
                (f.get("partner") or {}).get("subject") != d["partner"]["subject"]:
            bad.append("semantic defect %s flagged without its partner %r" %
                       (d["id"], d["partner"]["subject"]))
            continue
        found += 1
    print("# named exactly %d/%d, flags %d" % (found, due, len(got)))
    for b in bad:
        print("#", b)
    return not bad


def infra(world):
    bad = ["flag %s: %s" % (f["id"], f["subject"]) for f in flags(world)]
    said = False
    for path in glob.glob(os.path.join(world, "state", "outbox", "*.json")):
        n = json.load(open(path))
        if n.get("channel") != "mail" or n.get("kind") not in ("operator", "base-broken"):
            continue
        msg = email.message_from_string(n["body"], policy=email.policy.default)
        body = msg.get_body(("plain",))
        text = body.get_content() if body else n["body"]
        # the base fails the night's own first check: "base broken", naming the
        # command; it fails only in a search's re-run: the operator's note
        said = said or "infrastructure problem" in text or \
            (n["kind"] == "base-broken" and "boot" in text)
    if not said:
        bad.append("no operator or base-broken mail says what failed")
    for b in bad:
        print("#", b)
    return not bad


def main(argv):
    if len(argv) == 3 and argv[1] == "infra":
        return infra(argv[2])
    if len(argv) >= 3:
        return verdicts(argv[1], [int(x) for x in argv[2:]])
    raise SystemExit(__doc__)


if __name__ == "__main__":
    sys.exit(0 if main(sys.argv) else 1)
