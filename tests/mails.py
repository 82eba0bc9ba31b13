#!/usr/bin/python3
"""Checks over every mail of an outbox, for the scenario tests.

    mails.py width OUTBOX
        every prose line of every mail's text is at most 78 columns; excepted are
        lines that hold a URL and indented quoted output (command output, commit
        lines, the Reproduce: block, the "| " tags)
    mails.py private OUTBOX WORKDIR [OPERATOR]
        no mail or webhook but the operator's contains the workdir path
    mails.py repro OUTBOX FLAGS_JSON [--expose DIR]... [--only FLAG_ID]... [--replay no]
        runs the Reproduce: block of every submitter report with `bash -e` in an
        empty folder, under bwrap: /tmp and the home folder are empty (the bot's
        workdir is not reachable), only the exposed directories (the trees'
        remotes) are visible, no network; the block must fail with the flag's
        first error line in its output.  Then each attached bisect log
        (bisect-N-*.log) must replay with `git bisect replay` in the block's
        checkout to the first bad commit the log names (not with --replay no:
        after a tree's old commits are gone, its logs cannot).  Prints one line
        per report.
"""
import email
import email.policy
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

URL = re.compile(r"[a-z]+://")


def notices(outbox):
    for path in sorted(glob.glob(os.path.join(outbox, "*.json"))):
        with open(path) as f:
            yield json.load(f)


def text_of(notice):
    msg = email.message_from_string(notice["body"], policy=email.policy.default)
    part = msg.get_body(preferencelist=("plain",)) if msg.is_multipart() else msg
    return msg, part.get_content().replace("\r\n", "\n")


def width(outbox):
    bad = []
    for n in notices(outbox):
        if n["channel"] != "mail":
            continue
        _, text = text_of(n)
        for line in text.split("\n"):
            # quoted output (command output, commit lines, the Reproduce: block,
            # the tags) is indented; a line with a URL may be as long as the URL
            if line.startswith((" ", "\t", "|")) or URL.search(line):
                continue
            if len(line) > 78:
                bad.append("%s (%s): %d columns: %s" % (n["id"][:12], n["subject"],
                                                       len(line), line))
    for b in bad:
        print("#", b)
    return not bad


def private(outbox, workdir, operator=None):
    bad = []
    for n in notices(outbox):
        to = [r["to"] for r in n.get("recipients", [])]
        if operator and to == [operator]:
            continue
        for key in ("body", "body8", "subject"):
            if workdir in (n.get(key) or ""):
                bad.append("%s (%s, to %s): the workdir path in its %s" %
                           (n["id"][:12], n["subject"], ", ".join(to), key))
    for b in bad:
        print("#", b)
    return not bad


def block(text):
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if line.startswith("Reproduce:"):
            out = []
            for l in lines[i + 1:]:
                if not l.strip():
                    break
                out.append(l[2:] if l.startswith("  ") else l)
            return "\n".join(out) + "\n"
    return None


def replay(repo, logs):
    """Replays each bisect log in repo; returns the problems."""
    bad = []
    for name, text in logs:
        want = re.findall(r"^# first bad commit: \[([0-9a-f]{40})\]", text, re.M)
        if not want:
            continue  # only skipped commits were left: nothing to replay to
        path = os.path.join(os.path.dirname(repo), name)
        with open(path, "w") as f:
            f.write(text)
        r = subprocess.run(["git", "-C", repo, "bisect", "replay", path],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        out = r.stdout.decode("utf-8", "replace")
        got = re.findall(r"^([0-9a-f]{40}) is the first bad commit", out, re.M)
        subprocess.run(["git", "-C", repo, "bisect", "reset", "-q"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if got != want[-1:]:
            bad.append("%s replays to %s, not %s:\n%s" % (name, got, want[-1], out[-1500:]))
        else:
            print("# %s replays to %s" % (name, want[-1][:12]))
    return bad


def norm(text):
    """Text with its numbers (line numbers, addresses, counts) made alike."""
    return re.sub(r"(0x)?[0-9a-f]*[0-9][0-9a-f]*", "N", text)


def run_block(script, expose, logs=()):
    with tempfile.TemporaryDirectory(prefix="nb-repro.") as tmp:
        work = os.path.join(tmp, "empty")
        home = os.path.join(tmp, "home")
        os.mkdir(work)
        os.mkdir(home)
        path = os.path.join(tmp, "block.sh")
        with open(path, "w") as f:
            f.write(script)
        cmd = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
               "--tmpfs", "/tmp", "--tmpfs", "/root", "--tmpfs", "/home"]
        for d in expose:
            cmd += ["--ro-bind", d, d]
        cmd += ["--bind", work, work, "--bind", home, home, "--ro-bind", path, path,
                "--chdir", work, "--setenv", "HOME", home, "--unsetenv", "NEXTBOT_CONFIG",
                "--unshare-all", "--die-with-parent", "bash", "-e", path]
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=600)
        repos = [d for d in glob.glob(os.path.join(work, "*", ".git"))]
        bad = replay(os.path.dirname(repos[0]), logs) if repos and logs else []
        if logs and not repos:
            bad.append("no checkout to replay the bisect logs in")
        return r.returncode, r.stdout.decode("utf-8", "replace"), bad


def bisect_logs(msg):
    """The attached bisect logs of a mail: [(file name, text)]."""
    out = []
    for part in msg.iter_attachments():
        name = part.get_filename() or ""
        if name.startswith("bisect-") and name.endswith(".log"):
            out.append((name, part.get_content()))
    return out


def repro(outbox, flags_path, expose, only, replay=True):
    with open(flags_path) as f:
        flags = {fl["id"]: fl for fl in json.load(f)["flags"]}
    bad, ran = [], 0
    for n in notices(outbox):
        if n["channel"] != "mail" or n["kind"] not in ("build-failure", "test-failure"):
            continue
        msg, text = text_of(n)
        fid = msg["X-Nextbot-Flag"]
        if "maintainer" in n["subject"] or " failure after merge of the " in n["subject"]:
            continue  # the maintainer mail; the report has the same block
        if (msg["In-Reply-To"] or "").startswith("<nextbot."):
            continue  # a reminder: its report has the block of the night it was found
        if only and fid not in only:
            continue
        script = block(text)
        if fid not in flags or script is None:
            bad.append("%s: no flag %s or no Reproduce: block" % (n["subject"], fid))
            continue
        # the logs name next's own commits: the steps make them again only when they
        # say they rebuild next commit for commit (a dropped patch, fixes or a
        # recorded resolution make other ids, bot/night/repro.c)
        exact = "# next as the night made it, commit for commit" in script
        logs = bisect_logs(msg) if replay else ()
        if logs and not exact:
            print("# %s: the steps do not rebuild next commit for commit: its logs are "
                  "not replayed" % fid)
            logs = ()
        code, out, replays = run_block(script, expose, logs)
        ran += 1
        bad += ["%s: %s" % (fid, r) for r in replays]
        # the flag holds the first error line of the night it was last seen; line
        # numbers and addresses may have moved since this report's night
        err = flags[fid]["error"]
        ok = code != 0 and err and (err in out or norm(err) in norm(out))
        # a culprit whose patch left its tree since (the flag resolved so): nothing can
        # fail as that night did; the steps must say that the patch left, and fail
        left = flags[fid].get("resolution") == "left-tree" and \
            re.search(r"^note: no commit of patch-id \S+ on \S+ today: it left the tree$",
                      out, re.M)
        if not ok and code != 0 and left:
            print("# %s: its patch left the tree since, and the steps say so" % fid)
            ok = True
        print("# %s %s: exit %d, first error %s" % ("ok" if ok else "FAILED", fid, code,
                                                    "found" if ok else repr(err)))
        if not ok:
            bad.append("%s (%s): exit %d, wanted %r in:\n%s" % (fid, n["subject"], code,
                                                             err, out[-3000:]))
    for b in bad:
        print("#", b.replace("\n", "\n#   "))
    if not ran:
        print("# no report ran")
    return ran > 0 and not bad


def main(argv):
    if argv[1] == "width":
        return width(argv[2])
    if argv[1] == "private":
        return private(argv[2], argv[3], argv[4] if len(argv) > 4 else None)
    if argv[1] == "repro":
        expose, only, rest, replay = [], [], argv[4:], True
        while rest:
            opt, val, rest = rest[0], rest[1], rest[2:]
            if opt == "--replay":
                replay = val != "no"
                continue
            (expose if opt == "--expose" else only).append(val)
        return repro(argv[2], argv[3], expose, only, replay)
    raise SystemExit(__doc__)


if __name__ == "__main__":
    sys.exit(0 if main(sys.argv) else 1)
