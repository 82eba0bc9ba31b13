#!/usr/bin/python3
# Writes the hand-made seed inputs of each fuzz target into tests/fuzz/corpus/<target>/
# as seed-<name> (realistic and hostile inputs; see the targets for the layouts).
# Run from anywhere: python3 tests/fuzz/seeds.py.  Existing seeds are overwritten;
# files found by fuzzing (crash-*, merged inputs) are left alone.
import os
import struct

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def put(target, name, data):
    d = os.path.join(ROOT, target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(d, "seed-" + name), "wb") as f:
        f.write(data)


def fields(*parts):
    return b"\0".join(p.encode() if isinstance(p, str) else p for p in parts)


BASE = "base: {name: origin, url: 'https://example.org/linux.git', branch: master}\n"
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def config():
    with open(os.path.join(REPO, "configs", "linux-next.yaml"), "rb") as f:
        put("config", "linux-next", f.read())
    put("config", "minimal", BASE)
    put("config", "full", BASE + """workdir: state
trees:
  - {name: mm, url: 'https://example.org/mm.git', branch: mm-stable,
     contacts: ['Andrew <akpm@example.org>', 'linux-mm@example.org'], fixes: fixes/mm}
  - name: net
    url: https://example.org/net.git
    branch: main
never_merge: [mm-unstable, 'wip-*']
build:
  - {name: x86_64, command: 'make -j8', timeout: 1h30m, env: {ARCH: x86_64}}
test:
  - {name: kunit, command: './tools/testing/kunit/kunit.py run', timeout: 900}
build_after_each_merge: false
on_breakage: previous-version
bisect: {confirm: 3, jobs: 4}
deadline: '06:30'
runner: {kind: slurm, user: builder, partition: build, srun_args: [--exclusive], max_jobs: 8}
git: {token_env: GIT_TOKEN, ssh_key: ~/.ssh/id_ed25519}
publish: {url: 'https://example.org/next.git', branch: master}
notify:
  from: 'nextbot <nextbot@example.org>'
  list: linux-next@example.org
  report_url: 'https://next.example.org/flag/{id}'
  remind_days: 7
  smtp: {url: 'smtp://127.0.0.1:2525', tls: none, user: bot, password_env: SMTP_PW}
  webhooks: [{url: 'https://hooks.example.org/x', secret_env: HOOK_SECRET}]
schedule: '0 2 * * *'
keep_days: 30
""")
    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n"
    for i in range(1, 10):
        bomb += "%s: &%s [%s]\n" % (chr(97 + i), chr(97 + i), ", ".join(["*" + chr(96 + i)] * 9))
    put("config", "alias-bomb", BASE + bomb)
    put("config", "deep-flow", BASE + "trees: " + "[" * 200 + "]" * 200 + "\n")
    put("config", "deep-block", BASE + "".join("  " * i + "k%d:\n" % i for i in range(60)))
    put("config", "duplicate-key", BASE + "keep_days: 3\nkeep_days: 4\n")
    put("config", "unknown-key", BASE + "keep_dayz: 3\n")
    put("config", "wrong-type", BASE + "keep_days: [1]\nbisect: {jobs: many}\n")
    put("config", "never-merge", BASE + "trees:\n  - {name: mm-unstable, url: u, branch: mm-unstable}\n")
    put("config", "bad-tree-name", BASE + "trees:\n  - {name: '../../etc', url: u, branch: 'a..b'}\n")
    put("config", "invalid-utf8", BASE.encode() + b"notify: {from: \"\xff\xfe bot <b@x.org>\"}\n")
    put("config", "nul-byte", BASE.encode() + b"keep_days: 3\0\n")
    put("config", "crlf", BASE.replace("\n", "\r\n") + "keep_days: 2\r\n")
    put("config", "bom", b"\xef\xbb\xbf" + BASE.encode())
    put("config", "tabs", BASE + "trees:\n\t- name: x\n")
    put("config", "two-documents", BASE + "---\n" + BASE)
    put("config", "anchor", BASE + "x: &anchor 1\n")
    put("config", "tag", BASE + "keep_days: !!str 5\n")
    put("config", "control-chars", BASE + "build: [{name: \"a\\x1b[31m\", command: \"make\\r\\n\"}]\n")
    put("config", "long-line", BASE + "schedule: '" + "1" * 3000 + "'\n")
    put("config", "empty", "")
    put("config", "null", "~\n")
    put("config", "scalar", "just a string\n")
    put("config", "durations", BASE + "build: [{name: a, command: b, timeout: 99999999999999999999d}]\n"
        "deadline: 25:61\n")
    put("config", "contacts-crlf", BASE + "trees:\n  - {name: a, url: u, branch: b, contacts: [\"x\\r\\nBcc: y@z <a@b>\"]}\n")
    put("config", "merge-keys", BASE + "d: &d {jobs: 2}\nbisect:\n  <<: *d\n")


def mail_input(sel, fn, **kw):
    order = ["name", "email", "subject", "excerpt", "msgid", "tree", "commit", "pname",
             "pemail", "psubject", "contact1", "contact2", "list", "cmdline", "bisect", "why",
             "from", "url", "tag"]
    defaults = {
        "name": "Jane Doe", "email": "jane@example.org",
        "subject": "mm/slub: fix the frobnicator",
        "excerpt": "mm/slub.c:123:5: error: 'x' undeclared (first use in this function)\n"
                   "  123 |     x = 1;\n      |     ^\nmake[2]: *** [mm/slub.o] Error 1\n",
        "msgid": "<20261203101010.12345-1-jane@example.org>", "tree": "mm",
        "commit": "0123456789abcdef0123456789abcdef01234567", "pname": "Bob",
        "pemail": "bob@example.org", "psubject": "net: change the frob API",
        "contact1": "Andrew Morton <akpm@example.org>", "contact2": "linux-mm@example.org",
        "list": "linux-next@example.org", "cmdline": "make -j$(nproc)",
        "bisect": "git bisect good 0123456789ab", "why": "fixed upstream",
        "from": "", "url": "https://example.org/mm.git", "tag": "next-20261203",
    }
    defaults.update(kw)
    return bytes([sel, fn]) + fields(*[defaults[k] for k in order])


def mail():
    for fn, what in enumerate(["breakage", "dropped", "resolved", "conflict", "base", "summary"]):
        put("mail", "real-" + what, mail_input(0, fn))
        put("mail", "real-partner-" + what, mail_input(0xff, fn))
    put("mail", "flaky", mail_input(2, 0))
    put("mail", "crlf-name", mail_input(4, 0, name="Eve\r\nBcc: victim@example.org",
                                        pname="Mallory\rX-Evil: 1"))
    put("mail", "smtp-injection", mail_input(0, 0, email="a@b>\r\nRCPT TO:<x@y>",
                                             contact1="x@y\r\nDATA", contact2="<a@b> <c@d>"))
    put("mail", "long-subject", mail_input(0, 0, subject="frob " * 240, msgid=""))
    put("mail", "long-word-subject", mail_input(0, 1, subject="x" * 1200, msgid=""))
    put("mail", "invalid-utf8", mail_input(0, 0, name=b"J\xfcrgen \xc3\x28 Gro\xdf",
                                           subject=b"\xff\xfe\xed\xa0\x80 bad \xc0\xaf",
                                           excerpt=b"\x80\x81 \xe2\x82 \x7f\x1b[31mred\n"))
    put("mail", "non-ascii", mail_input(0, 0, name="Jürgen Groß", subject="ärger: 日本語 🎉 émoji",
                                        excerpt="naïve café\n"))
    put("mail", "encoded-lookalike", mail_input(0, 0, subject="=?UTF-8?B?SGk=?= raw", msgid="",
                                                name="=?utf-8?q?x?="))
    put("mail", "body-bare-lf-cr", mail_input(0, 4, excerpt="a\rb\nc\r\n.\n..dot\n" + "y" * 2000 + "\n"))
    put("mail", "bad-msgid", mail_input(0, 0, msgid="<a@b>\r\nBcc: x@y"))
    put("mail", "long-msgid", mail_input(0, 2, msgid="<" + "m" * 200 + "@" + "h" * 40 + ">"))
    # regression: a 73-character msg-id was RFC 2047-encoded in References (fixed)
    put("mail", "long-msgid-real", mail_input(0, 1, msgid="<20261203101010.12345-1-firstname.lastname"
                                                        "@some-company.example.com>"))
    put("mail", "space-run-subject", mail_input(0, 0, subject="a" + " " * 1200 + "b", msgid=""))
    put("mail", "empty-subject-long-tree", mail_input(0, 0, subject="", msgid="", tree="t" * 70))
    put("mail", "msgid-no-brackets", mail_input(0, 0, msgid="x.y@z"))
    put("mail", "quoted-name", mail_input(0, 0, name='Doe, "John" \\ (x)', contact1='"Doe, J" <j@x.org>'))
    put("mail", "long-name", mail_input(0, 0, name="N" * 300))
    put("mail", "bad-from", mail_input(0, 0, **{"from": "nextbot <a@b\r\n>"}))
    put("mail", "from-bare", mail_input(0, 5, **{"from": "bot@example.org"}))
    put("mail", "no-recipients", mail_input(0, 0, email="", contact1="", contact2="", list=""))
    put("mail", "all-refused", mail_input(0, 0, email="no-at", contact1="also bad", contact2="<x>"))
    put("mail", "controls-everywhere", mail_input(0x7f, 3, tree="t\x01\x02\x03", psubject="o\x7f\x1b",
                                                  why="\x85\x9b c1", tag="next-\t2026"))
    put("mail", "report-url-id", mail_input(0, 0, url="https://x/{id}/{id}\r\n"))
    put("mail", "empty", b"")
    put("mail", "two-bytes", b"\0\0")


def addr():
    for i, a in enumerate([
            "a@b.c", "jane.doe+tag@example.org", "Jane Doe <jane@example.org>",
            '"Doe, Jane" <jane@example.org>', "<jane@example.org>", "a@b>\r\nRCPT TO:<x@y>",
            "a@b\rc", "a@b\nc", "a b@c.d", "a..b@c.d", ".a@b.c", "a.@b.c", "a@-b.c", "a@b-.c",
            "a@b..c", "a@b@c", "ü@example.de", "a@exämple.de", "x" * 64 + "@a.b",
            "x" * 65 + "@a.b", "a@" + "l" * 63 + ".x", "a@" + "l" * 64 + ".x",
            "a@" + ".".join(["abcdefghi"] * 26), "<a@b> <c@d>", "Name <a@b> trailing",
            "Name a@b>", "Name <a@b", "", "@", "a@", "@b", "Eve\r\n <eve@x.org>",
            "=?UTF-8?B?SGk=?= <a@b.c>", "\x7f@b.c", "a\x00@b.c", "<20261203.1-1-a@b.c>",
            "msgid@host", "<a@b>\r\n", "  <a@b.c>  ", "N\xc2\x85me <a@b.c>",
            "Very Long Name " * 10 + "<a@b.c>", "\"\" <a@b.c>", "'quote' <a@b.c>"]):
        put("addr", "%02d" % i, a.encode("utf-8", "surrogateescape"))
    put("addr", "invalid-utf8-name", b"\xff\xfe <a@b.c>")


def webhook():
    def hook(code, flags, *f):
        return struct.pack("<i", code) + bytes([flags]) + fields(*f)
    put("webhook", "real", hook(2, 0x20, "build-failure", "0123456789ab", "next-20261203", "mm",
                                "0123456789ab", "mm: fix", "Jane", "jane@example.org", "<a@b>",
                                "net: x", "x86_64", "error: x\n  | ^\n", "git bisect good",
                                "git bisect bad"))
    put("webhook", "all-null", hook(0, 0x0b, "summary"))
    put("webhook", "everything", hook(-1, 0xff, "flaky", "id", "tag", "tree", "c", "s", "n", "e",
                                      "m", "ps", "cmd", "ex", "l1", "l2"))
    put("webhook", "invalid-utf8", hook(1, 0x24, b"ev\xff", b"\xc3\x28", b"\xed\xa0\x80",
                                        b"\xf4\x90\x80\x80", b"\xc0\xaf", b"sub\x7f\x1b[0m",
                                        b"J\xfcrgen", b"a@b\r\nX: y", b"<\x85>", b"\xe2\x82",
                                        b"\x01\x02", b"line1\r\nline2\rline3\x7f\n", b"\x9b",
                                        b"\xc2\x9b"))
    put("webhook", "quotes", hook(255, 0x60, '"}{\\', "\\u0000", "</script>", "\u2028\u2029",
                                  "a\tb", "a\nb"))
    put("webhook", "int-extremes", hook(-2147483648, 0xa0, "x"))


def excerpt():
    put("excerpt", "gcc", "make -C /srv/nextbot/work/w3 all\n"
        "  CC      mm/slub.o\n"
        "/srv/nextbot/work/w3/mm/slub.c: In function 'frob':\n"
        "/srv/nextbot/work/w3/mm/slub.c:123:5: error: 'x' undeclared (first use in this function)\n"
        "  123 |     x = 1;\n      |     ^\n"
        "mm/slub.c:130:1: warning: unused variable 'y'\n"
        "make[2]: *** [scripts/Makefile.build:243: mm/slub.o] Error 1\n"
        "make[1]: *** [Makefile:1913: mm] Error 2\nmake: *** [Makefile:234: __sub-make] Error 2\n")
    put("excerpt", "linker", "  LD      vmlinux\n"
        "ld: kernel/fork.o: in function `copy_process':\n"
        "fork.c:(.text+0x1d2f): undefined reference to `frob_init'\n"
        "ld: drivers/x.o: multiple definition of `foo'; drivers/y.o: first defined here\n"
        "make: *** [Makefile:1160: vmlinux] Error 1\n")
    put("excerpt", "tap", "TAP version 13\n1..4\nok 1 - boots\nnot ok 2 - frob works\n"
        "# Assertion failed: frob() == 0, got -22 at tests/frob.c:44\nok 3\n"
        "[   12.345678] BUG: kernel NULL pointer dereference, address: 0000000000000008\n"
        "[   12.345999] Kernel panic - not syncing: Fatal exception\nSegmentation fault (core dumped)\n")
    put("excerpt", "colours", "\x1b[1m\x1b[31merror:\x1b[0m thing at 0xdeadbeef on 2026-12-03 02:00:01\n"
        "progress 10%\rprogress 50%\rprogress 100%\r\n\x1b]0;title\x07done\n")
    put("excerpt", "no-match", "".join("line %d of a log with nothing wrong\n" % i for i in range(100)))
    put("excerpt", "many-errors", "".join("f%d.c:%d:1: error: bad %d\n" % (i, i, i) for i in range(200)))
    put("excerpt", "long-line", "error: " + "é" * 600 + "\n" + "x" * 5000 + "\n")
    put("excerpt", "invalid-utf8", b"\xff\xfe error: \xc3\x28 \xed\xa0\x80\n\x80\x80\x80\n")
    put("excerpt", "controls", b"a\x00b\x01c\x7f error:\x08\x08 thing\n\x1b[\n\x1b")
    put("excerpt", "blank", "\n\n   \n\t\n")
    put("excerpt", "prefix-only", "/srv/nextbot/work/w3/\n/srv/nextbot/work/w3\n")
    put("excerpt", "prefix-nested", "/srv/nextbot/work/w3/srv/nextbot/work/w3/x.c:1:1: error: y\n"
        "/srv/nextbot/work/srv/nextbot/work/w3/w3/z.c: error\n")
    put("excerpt", "normalise", "line 12: error at 0x7ffe1234 id 1a2b3c4d5e6f7 on 2026-12-03T02:00:01Z"
        " [ 1.234567] t=12:34:56 Line 7 line12 deadbeef123\n")
    put("excerpt", "crlf", "error: a\r\nerror: b\r\n\r\n")
    put("excerpt", "ninja", "[1/2] CC x.o\nFAILED: x.o\nx.c:1: error: y\nninja: build stopped: subcommand failed.\n")


def trailer():
    put("trailer", "kernel", "mm/slub: fix the frobnicator\n\nThe frobnicator was broken.\n\n"
        "Fixes: 0123456789ab (\"mm: add frob\")\n"
        "Signed-off-by: Jane Doe <jane@example.org>\n"
        "Link: https://lore.kernel.org/r/20261203101010.12345-1-jane@example.org\n"
        "Signed-off-by: Andrew Morton <akpm@example.org>\n")
    put("trailer", "crlf", "subject line\r\ncontinued\r\n\r\nbody\r\n\r\nSigned-off-by: A <a@b>\r\n"
        "Message-Id: <x@y>\r\n\r\n\r\n")
    put("trailer", "long-subject", "x" * 1000 + "\n\nSigned-off-by: a@b\n")
    put("trailer", "links", "s\n\nLink: https://lore.kernel.org/linux-mm/abc%40example.org/\n"
        "Link: https://patch.msgid.link/def%40example.org\nLink: https://bugzilla.example.org/123\n"
        "Link: <https://lore.kernel.org/r/%3Cx@y%3E>\nLink: https://lore.kernel.org/r/a%00b@c\n")
    put("trailer", "message-id", "s\n\nMessage-ID: <a@b>\nmessage-id:   c@d  \nMESSAGE-ID: <no-at>\n")
    put("trailer", "empty", "")
    put("trailer", "blank", "\n\n  \n\t\n")
    put("trailer", "cr-only", "a\rb\r\rc\rSigned-off-by: x <y@z>\r")
    put("trailer", "signoffs", "s\n\nSigned-off-by:\nSigned-off-by: <>\nSigned-off-by: a <b> <c>\n"
        "signed-off-by: Lower <l@x>\nSigned-off-by: No Brackets\nSigned-off-by:  <  spaced@x  >  \n"
        "Signed-off-by: a < b > c\n")
    put("trailer", "garbage", b"\xff\xfe\x00\x01junk\n\n\x80Signed-off-by: \xc3\x28 <\xff@x>\n")
    put("trailer", "weird-space", "\x0b\x0c subject \x0c\n\x0b\n body \x0b\x0c\n\x0c\n")


def utf8():
    for cs in range(9):
        put("utf8", "text-cs%d" % cs, bytes([cs]) + "Grüße, 日本語, emoji 🎉, ascii".encode())
    put("utf8", "overlong", b"\x01\xc0\xaf\xe0\x80\xaf\xf0\x80\x80\xaf\xc1\xbf")
    put("utf8", "surrogates", b"\x01\xed\xa0\x80\xed\xbf\xbf\xed\x9f\xbf")
    put("utf8", "too-big", b"\x01\xf4\x90\x80\x80\xf5\x80\x80\x80\xf8\x88\x80\x80\x80\xff")
    put("utf8", "truncated", b"\x01\xe2\x82\xf0\x9f\x8e\xc3")
    put("utf8", "controls", b"\x01a\x00b\x01\x09\x0a\x0d\x1b[31m\x7f\xc2\x80\xc2\x85\xc2\x9f\xc2\xa0")
    put("utf8", "latin1", b"\x02J\xfcrgen Gro\xdf caf\xe9 \x85\x9b")
    put("utf8", "shift-jis", b"\x05\x93\xfa\x96\x7b\x8c\xea\x82\xa0\x80\xff")
    put("utf8", "utf16", b"\x06\xff\xfeh\x00i\x00\x00\xd8")
    put("utf8", "empty-charset", b"\x08abc\xff")


def cron():
    for i, e in enumerate([
            "0 2 * * *", "*/15 * * * *", "0 0 1 1 *", "30 4 1,15 * 5", "0 0 29 2 *",
            "0 0 31 2 *", "0 0 30 2 *", "5-10/2 1-3 * jan-mar mon-fri", "0 0 * * 7", "0 0 * * sun,SAT",
            "@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly",
            "@reboot", "", "* * * *", "* * * * * *", "60 * * * *", "* 24 * * *", "* * 0 * *",
            "* * 32 * *", "* * * 13 *", "* * * * 8", "*/0 * * * *", "5-1 * * * *",
            "1,,2 * * * *", "-1 * * * *", "99999999999999999999 * * * *", "*/99999999999 * * * *",
            "1-59/60 * * * *", "0 0 31 4,6,9,11 *", "0 0 31 * 1", "\t0\t2 *  *\n*",
            "0 2 * * * # comment", "jan * * * *", "0 0 * foo *", "59 23 31 12 6",
            "0-59 0-23 1-31 1-12 0-7", "3/5 * * * *", "*/1,*/2 * * * *", "00 02 01 01 00"]):
        put("cron", "%02d" % i, e.replace("\\t", "\t").replace("\\n", "\n"))


def inbox():
    """Answers to nextbot's mails, as mail clients and servers write them, and worse."""
    head = ("Return-Path: <viktor@vfs.example.org>\r\n"
            "Authentication-Results: mx.example.org; dkim=pass header.d=vfs.example.org;\r\n"
            " dmarc=pass header.from=vfs.example.org\r\n"
            "From: Viktor Lindqvist <viktor@vfs.example.org>\r\n"
            "To: nextbot <nextbot@example.org>\r\nCc: zoe@example.org, \"A, B\" <l@x.org>\r\n"
            "Subject: Re: [vfs] build failure: fs: add\r\n fs_x\r\n"
            "Message-ID: <cmd-1@vfs.example.org>\r\nIn-Reply-To: <nextbot.ab@example.org>\r\n"
            "References: <p@example.org>\r\n <nextbot.ab@example.org>\r\n")
    put("inbox", "plain", head + "\r\n> quoted\r\n#nextbot drop wrong locking\r\n-- \r\nsig\r\n")
    put("inbox", "lf", head.replace("\r\n", "\n") + "\n#nextbot invalid not a bug\n")
    put("inbox", "mime", "From: =?ISO-8859-1?Q?Zo=EB?= <zoe@example.org>\n"
        "Subject: =?UTF-8?B?UmU6IFpvw6s=?= =?utf-8?q?_x?=\n"
        "Content-Type: multipart/mixed; boundary=\"o\"\n\n--o\n"
        "Content-Type: multipart/alternative; boundary=o-i\n\n--o-i\n"
        "Content-Type: text/html\n\n<p>#nextbot drop</p><blockquote>#nextbot undrop</blockquote>\n"
        "--o-i\nContent-Type: text/plain; charset=iso-8859-1\n"
        "Content-Transfer-Encoding: quoted-printable\n\nGr=FC=DFe\n#nextbot fix: a lo=\nng one\n"
        "--o-i--\n--o\nContent-Disposition: attachment\n\n#nextbot drop\n--o--\n")
    put("inbox", "base64", "From: a@example.org\nContent-Transfer-Encoding: base64\n\n"
        "I25leHRib3QgaW52YWxp\nZCBub3QgYSBidWcK\n")
    put("inbox", "flowed", "From: a@example.org\nContent-Type: text/plain; format=flowed; delsp=yes\n\n"
        "#nextbot test: https://git.example.org/x.git \nfix-branch\n")
    put("inbox", "bounce", "From: MAILER-DAEMON@mx.example.org\nReturn-Path: <>\n"
        "Auto-Submitted: auto-replied\nContent-Type: multipart/report; boundary=x\n\n"
        "--x\n\n#nextbot drop\n--x\nContent-Type: message/rfc822\n\nFrom: b@c.org\n\n"
        "#nextbot undrop\n--x--\n")
    put("inbox", "binary", b"From: \"a\x01\xff\" <a@example.org>\r\nSubject: \x1b[31m\xc3\x28\r\n"
        b"Message-ID: <bad id@x>\r\n\r\n#nextbot drop \xfe\xff\x00ok\r\n" + bytes(range(256)))
    put("inbox", "mbox", "From a@example.org Thu Jan  1 00:00:00 2026\nFrom: a@example.org\n\nx\n")
    put("inbox", "not-a-mail", "hello\n\n#nextbot drop\n")
    put("inbox", "deep", "From: a@example.org\nContent-Type: multipart/mixed; boundary=b0\n\n" +
        "".join("--b%d\nContent-Type: multipart/mixed; boundary=b%d\n\n" % (i, i + 1)
                for i in range(12)) + "--b12\n\n#nextbot drop\n")
    put("inbox", "words", "From: =?x?q?=?= <a@b.org>\nSubject: =?utf-8?q?a?= =?utf-8?b?====?= "
        "=?../../etc?q?x?= =?utf-7?q?+AGEAYgBj-?= =?unknown*en?b?YWJj?=\n\n")
    put("inbox", "auth-forged", "Authentication-Results: mx.example.org; dmarc=fail\n"
        "Received: from x\nAuthentication-Results: mx.example.org; dmarc=pass\n"
        "Authentication-Results: mx.example.org (a(b)c) ; dkim=pass header.i=\"@a.org\"\n"
        "From: x@a.org\n\n#nextbot drop\n")


for gen in (config, mail, addr, webhook, excerpt, trailer, utf8, cron, inbox):
    gen()
