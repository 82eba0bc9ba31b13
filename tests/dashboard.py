#!/usr/bin/python3
"""Checks a `nextbot report --html` site the way a maintainer sees it.

    dashboard.py SITE FLAGS_JSON STATUS_JSON [--screenshot PNG] [--links-only]
                 [--patches JOURNEYS_JSON]

Serves SITE over HTTP (python's http.server, a free port on 127.0.0.1, stopped at
the end), then:
  - follows every link and src of every page from index.html: each answers 200;
  - opens the pages in headless Chromium (/usr/bin/chromium) through a probe page
    on the same server that loads each in an iframe and reports what was rendered:
    every night's verdict class is applied (the class is there and its background
    is coloured), every flag's culprit subject is visible text on the index (not a
    tooltip), the pages have a viewport, markup in commit subjects stays text, and
    at 390 px (a phone) and 1280 px every page fits: the document does not scroll
    sideways, no element's box reaches past the viewport (text inside a <pre> or a
    .scroll block may scroll within it), no table cell clips its content, and nothing
    is cut by overflow: hidden.
With --patches (workdir/journeys.txt): every patch still in a tree has its page,
linked from its tree's list, showing its subject as text; the trees' lists and the
patch pages of the longest subjects fit a phone's width.
Prints "# ..." lines; exits 1 on the first failed check.
"""
import html.parser
import http.server
import json
import os
import re
import shutil
import socketserver
import subprocess
import sys
import tempfile
import threading
import urllib.error
import urllib.parse
import urllib.request

CHROMIUM = "/usr/bin/chromium"

PROBE = r"""<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>probe</title></head><body>
<pre id="out">pending</pre>
<script>
const pages = %(pages)s;
const results = {};
function visit(i) {
  if (i >= pages.length) {
    document.getElementById("out").textContent = "RESULT " + JSON.stringify(results);
    return;
  }
  const p = pages[i];
  const f = document.createElement("iframe");
  f.style.width = p.width + "px";
  f.style.height = "800px";
  f.onload = function () {
    const d = f.contentDocument, w = f.contentWindow;
    const r = {classes: [], text: d.body.innerText, viewport: null, injected: 0,
               scrollWidth: d.documentElement.scrollWidth, width: w.innerWidth};
    const vp = d.querySelector('meta[name="viewport"]');
    r.viewport = vp ? vp.getAttribute("content") : null;
    for (const el of d.querySelectorAll("[class]")) {
      for (const c of el.classList)
        r.classes.push([el.tagName.toLowerCase(), c, w.getComputedStyle(el).backgroundColor,
                        el.getClientRects().length > 0]);
    }
    r.injected = d.querySelectorAll("script, .injected, img[onerror]").length;
    // ids (hex) and kinds/verdicts are words: none may break across lines
    r.broken = [];
    const word = /^[("]*([0-9a-f]{8,40}|build-failure|test-failure|flaky|previous-version|left-out|fetch-failed|base-broken|reverted-in-next|in-next|regression|unfinished)[)":,;.]*$/;
    for (const el of d.body.querySelectorAll("td, th, li, h1")) {
      const walk = d.createTreeWalker(el, NodeFilter.SHOW_TEXT);
      let t;
      while ((t = walk.nextNode())) {
        if (t.parentElement.closest("pre")) continue;
        const re = /\S+/g;
        let m;
        while ((m = re.exec(t.data))) {
          if (!word.test(m[0])) continue;
          const rg = d.createRange();
          rg.setStart(t, m.index);
          rg.setEnd(t, m.index + m[0].length);
          const tops = new Set();
          for (const x of rg.getClientRects())
            if (x.width > 0) tops.add(Math.round(x.top));
          if (tops.size > 1) r.broken.push(el.tagName.toLowerCase() + ": " + m[0]);
        }
      }
    }
    // the phone: no element's box past the viewport, no table cell clipping its text
    r.past = []; r.clipped = []; r.hidden = [];
    const vw = d.documentElement.clientWidth;
    for (const el of d.body.querySelectorAll("*")) {
      const b = el.getBoundingClientRect(), cs = w.getComputedStyle(el);
      const inScroller = (el.closest("pre") && !el.matches("pre")) ||
                         (el.closest(".scroll") && !el.matches(".scroll"));
      if (b.width > 0 && b.right > vw + 1 && !inScroller)
        r.past.push(el.tagName.toLowerCase() + "." + el.className + " right " +
                    Math.round(b.right) + ": " + (el.textContent || "").slice(0, 40));
      if ((el.tagName === "TD" || el.tagName === "TH") && el.scrollWidth > el.clientWidth + 1)
        r.clipped.push(el.tagName.toLowerCase() + ": " + (el.textContent || "").slice(0, 40));
      if ((cs.overflowX === "hidden" || cs.overflow === "hidden") &&
          el.scrollWidth > el.clientWidth + 1)
        r.hidden.push(el.tagName.toLowerCase() + "." + el.className);
    }
    results[p.name] = r;
    f.remove();
    visit(i + 1);
  };
  f.src = p.url;
  document.body.appendChild(f);
}
visit(0);
</script></body></html>
"""


class Links(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.links = []

    def handle_starttag(self, tag, attrs):
        for k, v in attrs:
            if k in ("href", "src") and v:
                self.links.append(v)


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *a):
        pass


def fail(msg):
    print("# FAILED:", msg)
    sys.exit(1)


def crawl(base):
    seen, todo, pages = set(), ["index.html"], []
    while todo:
        rel = todo.pop()
        if rel in seen:
            continue
        seen.add(rel)
        url = urllib.parse.urljoin(base, rel)
        try:
            with urllib.request.urlopen(url, timeout=30) as r:
                status, body, ctype = r.status, r.read(), r.headers.get("Content-Type", "")
        except urllib.error.HTTPError as e:
            fail("%s answered %d" % (rel, e.code))
        if status != 200:
            fail("%s answered %d" % (rel, status))
        if not ctype.startswith("text/html"):
            continue
        pages.append(rel)
        p = Links()
        p.feed(body.decode("utf-8"))
        for link in p.links:
            full = urllib.parse.urljoin(url, link)
            if not full.startswith(base):
                continue  # lore links and the like are not ours to check
            todo.append(full[len(base):].split("#")[0])
    return seen, pages


def main(argv):
    site, flags_path, status_path = argv[1:4]
    shot = argv[argv.index("--screenshot") + 1] if "--screenshot" in argv else None
    flags = json.load(open(flags_path))["flags"]
    runs = json.load(open(status_path))["runs"]
    root = tempfile.mkdtemp(prefix="nb-dash.")
    try:
        shutil.copytree(site, os.path.join(root, "site"))
        handler = lambda *a, **kw: Quiet(*a, directory=root, **kw)
        server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), handler)
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
        base = "http://127.0.0.1:%d/site/" % server.server_address[1]
        seen, pages = crawl(base)
        print("# %d links answered 200 (%d pages)" % (len(seen), len(pages)))
        nights = [p for p in pages if p.startswith("nights/")]
        if len(nights) != len(runs):
            fail("%d night pages for %d nights" % (len(nights), len(runs)))
        if "--links-only" in argv:
            return 0
        journeys = None
        if "--patches" in argv:
            journeys = read_journeys(argv[argv.index("--patches") + 1])
        probe = [{"name": p, "url": "site/" + p, "width": 1280} for p in sorted(pages)]
        probe += [{"name": "390:" + p, "url": "site/" + p, "width": 390} for p in sorted(pages)
                  if not p.endswith(".txt")]
        if journeys is not None:
            probe += patch_probes(pages, journeys)
        with open(os.path.join(root, "probe.html"), "w") as f:
            f.write(PROBE % {"pages": json.dumps(probe)})
        flags_ = ["--headless", "--no-sandbox", "--disable-gpu",
                  "--disable-background-networking", "--disable-component-update",
                  "--disable-sync", "--no-first-run", "--disable-quic",
                  "--disable-dev-shm-usage", "--hide-scrollbars",
                  "--user-data-dir=" + os.path.join(root, "profile")]
        out = subprocess.run([CHROMIUM] + flags_ + ["--virtual-time-budget=60000", "--dump-dom",
                              base.replace("site/", "probe.html")],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=300)
        dom = out.stdout.decode("utf-8", "replace")
        if "RESULT " not in dom:
            fail("the probe page did not finish: %s" % dom[-2000:])
        res = json.loads(html.unescape(dom.split("RESULT ", 1)[1].split("</pre>", 1)[0]))
        check(res, flags, runs)
        if journeys is not None:
            check_patches(res, pages, journeys)
        if shot:
            subprocess.run([CHROMIUM] + flags_ + ["--window-size=1000,1100",
                            "--screenshot=" + shot, base + "index.html"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300)
            print("# screenshot", shot)
        server.shutdown()
        server.server_close()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


def read_journeys(path):
    """The patches of a journeys.txt: key, subject, tree (see bot/journey/store.c)."""
    def field(s):
        if s == "\\N":
            return None
        return re.sub(r"\\(.)", lambda m: {"t": "\t", "n": "\n", "r": "\r"}.get(m.group(1),
                                                                          m.group(1)), s)
    out = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            f_ = [field(x) for x in line.rstrip("\n").split("\t")]
            if f_[0] == "patch":
                out.append({"key": f_[1], "subject": f_[2], "tree": f_[7]})
    return out


def patch_page_name(key):
    if re.fullmatch(r"[0-9a-f]{40}", key):
        return "patches/%s.html" % key
    h = 1469598103934665603
    for c in key.encode():
        h = ((h ^ c) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return "patches/m%016x.html" % h


def patch_probes(pages, journeys):
    """Each tree's list at a phone's width; the pages of the 10 longest subjects, both."""
    out = [{"name": "phone:" + p, "url": "site/" + p, "width": 375}
           for p in pages if p.startswith("patches/tree-")]
    longest = sorted((j for j in journeys if j.get("tree")), key=lambda j: -len(j["subject"]))
    for j in longest[:10]:
        p = patch_page_name(j["key"])
        out.append({"name": "phone:" + p, "url": "site/" + p, "width": 375})
        out.append({"name": p, "url": "site/" + p, "width": 1100})
    return out


def check_patches(res, pages, journeys):
    current = [j for j in journeys if j.get("tree")]
    for j in current:
        p = patch_page_name(j["key"])
        if p not in pages:
            fail("patch %r: no page linked from its tree's list (%s)" % (j["subject"], p))
        tree = "patches/tree-%s.html" % j["tree"]
        if tree not in pages:
            fail("tree %s: no list of its patches" % j["tree"])
    print("# each of %d patches in a tree has its page, linked from its tree's list" %
          len(current))
    shown = 0
    for name, r in res.items():
        if not name.startswith("phone:"):
            continue
        if r["scrollWidth"] > r["width"] + 2:
            fail("%s scrolls sideways at %d px (%d px wide)" % (name[6:], r["width"],
                                                                r["scrollWidth"]))
        if name.startswith("phone:patches/tree-"):
            continue
        j = next(j for j in current if "phone:" + patch_page_name(j["key"]) == name)
        words = [w for w in re.split(r"\s+", j["subject"]) if w.isprintable()][:3]
        if not all(w in r["text"] for w in words):
            fail("%s: the subject %r is not visible text" % (name[6:], j["subject"][:80]))
        shown += 1
    print("# the trees' lists and %d patch pages fit a phone's width" % shown)


def coloured(bg):
    return bg not in ("rgba(0, 0, 0, 0)", "transparent", "rgb(255, 255, 255)")


def check(res, flags, runs):
    idx = res["index.html"]
    for name, r in res.items():
        name = name.split(":", 1)[-1]
        if name.endswith(".txt"):
            continue
        if not r["viewport"] or "width=device-width" not in r["viewport"]:
            fail("%s: no viewport" % name)
        if r["injected"]:
            fail("%s: %d script or injected elements" % (name, r["injected"]))
    verdicts = {"clean", "regression", "base-broken", "unfinished", "failed", "merged",
                "reverted", "previous-version", "stale", "left-out", "fetch-failed"}
    applied = {(t, c) for t, c, bg, shown in idx["classes"] if c in verdicts and coloured(bg)}
    for run in runs:
        if ("th", run["result"]) not in applied:
            fail("night %s: its verdict '%s' is not a coloured <th>" % (run["date"], run["result"]))
        for t in run["trees"]:
            if ("td", t["state"]) not in applied:
                fail("night %s: tree %s '%s' is not a coloured <td>" % (run["date"], t["name"],
                                                                      t["state"]))
    print("# verdict classes applied and coloured on %d nights" % len(runs))
    # the night grid is in the colours of each night's result: green only when clean
    green = "rgb(183, 228, 176)"
    for run in runs:
        night = "night-" + run["result"]
        cells = [(t, bg) for t, c, bg, shown in idx["classes"] if c == night]
        if run["trees"] and not any(t == "td" for t, bg in cells):
            fail("night %s: its grid column is not in the colours of its result '%s'" %
                 (run["date"], run["result"]))
        if run["result"] != "clean" and any(bg == green for t, bg in cells):
            fail("night %s (%s): green in its grid column" % (run["date"], run["result"]))
        if run["result"] == "regression" and not any(
                t == "th" and bg.startswith("rgb(2") and bg != green for t, bg in cells):
            fail("night %s: its 'regression' header is not red" % run["date"])
    print("# the night grid's colours are the nights' results (green only when clean)")
    n = 0
    for f in flags:
        if f["kind"] == "flaky" or not f["subject"]:
            continue
        if f["subject"] not in idx["text"]:
            fail("flag %s: its culprit's subject %r is not visible on the index" %
                 (f["id"], f["subject"]))
        if f["partner"] and f["partner"]["subject"] not in idx["text"]:
            fail("flag %s: its partner %r is not visible" % (f["id"], f["partner"]["subject"]))
        page = "flags/%s.html" % f["id"]
        if page not in res or f["subject"] not in res[page]["text"]:
            fail("flag %s: no page of its own showing the subject" % f["id"])
        n += 1
    print("# every culprit's subject (%d) is visible text, and each flag has its page" % n)
    for f in flags:
        if f["kind"] != "flaky":
            continue
        for who in (f.get("author") or {}, (f.get("partner") or {}).get("author") or {}):
            name = who.get("name") or who.get("email")
            page = res.get("flags/%s.html" % f["id"], {"text": ""})["text"]
            if name and name in page:
                fail("flaky flag %s names %r on its page: it blames no one" % (f["id"], name))
    for name, r in res.items():
        if name.split(":", 1)[-1].startswith(("patches/", "people/")):
            continue  # the journey's and the people's pages are theirs
        if r.get("broken"):
            fail("%s: at %d px ids or kinds break mid-word: %s" % (name, r["width"],
                                                                   r["broken"][:3]))
    print("# no id or kind breaks mid-word at 390 or 1280 px")
    n = 0
    for name, r in res.items():
        if name.endswith(".txt"):
            continue
        if r["scrollWidth"] > r["width"] + 1:
            fail("%s: at %d px the page scrolls sideways (%d px wide)" % (name, r["width"],
                                                                         r["scrollWidth"]))
        if r["past"]:
            fail("%s: at %d px %d element(s) reach past the viewport: %s" %
                 (name, r["width"], len(r["past"]), r["past"][:3]))
        if r["clipped"]:
            fail("%s: at %d px table cells clip their content: %s" % (name, r["width"],
                                                                      r["clipped"][:3]))
        if r["hidden"]:
            fail("%s: content cut by overflow: hidden: %s" % (name, r["hidden"][:3]))
        n += 1
    print("# %d page views at 390 and 1280 px: none scrolls sideways, no box past the "
          "viewport, no cell clipped" % n)
    nights = [p for p in res if p.startswith("nights/") and p.endswith(".html")]
    if len(nights) != len(runs):
        fail("%d night pages for %d nights" % (len(nights), len(runs)))
    for p in nights:
        if "merge.log" not in res[p]["text"] or "Notices sent" not in res[p]["text"]:
            fail("%s: no merge.log or notices" % p)
    print("# a page per night, with merge.log and the notices sent")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
