#!/usr/bin/env python3
"""Runs the walk-throughs of the README and the user guide, so that the docs cannot rot.

Every fenced block whose info string is `sh run` is executed, in the order of the page, by one
bash process per page (so later blocks see the files earlier ones wrote) in a fresh working
directory that mirrors the repository root (its top-level entries symlinked, plus an empty `out/`),
with the tested `sfumato` first on the PATH. A command line ending in `# exit N` must exit with N
(the docs say so to the reader); every other command must exit 0 (`set -e`, `pipefail`). The
page also fails when a relative Markdown link in it points at no file or at a heading its file does not
have, and the README when it grows past its line budget.

usage: run_docs.py SFUMATO SOURCE_DIR OUT_DIR PAGE.md [--timeout SECONDS] [--max-lines N]
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import time

FENCE = re.compile(r"^```(.*)$")
EXPECT = re.compile(r"^(?P<cmd>.*?)\s+#\s*exit\s+(?P<code>\d+)\s*$")
LINK = re.compile(r"\]\(([^)\s]+)\)")


def runnable_blocks(text):
    """(first line number, lines) of every ```sh run block."""
    blocks, state, cur, start = [], "text", [], 0
    for no, line in enumerate(text.split("\n"), 1):
        m = FENCE.match(line)
        if state == "text":
            if m:
                state = "run" if m.group(1).split() == ["sh", "run"] else "other"
                cur, start = [], no + 1
        elif line.startswith("```"):
            if state == "run":
                blocks.append((start, cur))
            state = "text"
        elif state == "run":
            cur.append(line)
    if state != "text":
        sys.exit(f"FAIL: unterminated fenced block from line {start - 1}")
    return blocks


HEAD_PIPE = re.compile(r"^(?P<cmd>[^#|]+(?:\|[^#|]+)*?)\|\s*head\s+(?P<args>-n?\s*\d+)\s*$")


def to_script(blocks, page):
    """One bash script: each block announced, `# exit N` lines checked for their exit code."""
    out = ["set -eo pipefail"]
    for start, lines in blocks:
        out.append(f"echo '>>> {page}:{start}'")
        heredoc = None
        for i, line in enumerate(lines):
            if heredoc is not None:  # inside a here-document: copy verbatim
                out.append(line)
                if line.strip() == heredoc:
                    heredoc = None
                continue
            h = re.search(r"<<-?\s*'?\"?(\w+)'?\"?", line)
            m = EXPECT.match(line)
            if m and not h:
                code, cmd = int(m.group("code")), m.group("cmd")
                where = f"{page}:{start + i}"
                out.append(f"set +e; ( {cmd} ); rc=$?; set -e; "
                           f"if [ $rc -ne {code} ]; then echo 'FAIL {where}: exit '$rc', the docs say {code}'; exit 1; fi")
            elif not h and HEAD_PIPE.match(line):
                # `A | head -N`: head may close the pipe before A has written everything, and
                # A's SIGPIPE (141) would fail the page under pipefail at random.  Run A to the
                # end into a file, so its own exit status is still checked, then show its head.
                hm = HEAD_PIPE.match(line)
                out.append(f"( {hm.group('cmd')} ) > .docs_head_pipe.txt; "
                           f"head {hm.group('args')} .docs_head_pipe.txt; rm -f .docs_head_pipe.txt")
            else:
                out.append(line)
            if h:
                heredoc = h.group(1)
    return "\n".join(out) + "\n"


def heading_anchors(path):
    """The anchors GitHub gives the headings of a Markdown file: lower case, punctuation but hyphens and
    underscores dropped, spaces as hyphens, a repeated heading suffixed -1, -2, ...; fenced blocks skipped."""
    seen, anchors, fence = {}, set(), False
    for line in open(path, encoding="utf-8"):
        if line.startswith("```"):
            fence = not fence
            continue
        m = None if fence else re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        title = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", m.group(1))
        slug = re.sub(r"[^\w\- ]", "", title.strip().lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        anchors.add(slug if n == 0 else f"{slug}-{n}")
        seen[slug] = n + 1
    return anchors


def check_links(page_path, text):
    """Relative links to missing files, and links to a heading (file.md#anchor, #anchor) no heading has."""
    bad = []
    for target in LINK.findall(text):
        if re.match(r"^[a-z]+:", target):
            continue
        file, _, anchor = target.partition("#")
        path = os.path.normpath(os.path.join(os.path.dirname(page_path), file)) if file else page_path
        if not os.path.exists(path):
            bad.append(target)
        elif anchor and path.endswith(".md") and anchor not in heading_anchors(path):
            bad.append(target + " (no such heading)")
    return bad


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("sfumato")
    ap.add_argument("source")
    ap.add_argument("out")
    ap.add_argument("page")
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--max-lines", type=int, default=0)
    a = ap.parse_args()

    page_path = os.path.join(a.source, a.page)
    text = open(page_path, encoding="utf-8").read()
    if a.max_lines and text.count("\n") > a.max_lines:
        sys.exit(f"FAIL: {a.page} has {text.count(chr(10))} lines, more than its budget of {a.max_lines}")
    bad = check_links(page_path, text)
    if bad:
        sys.exit(f"FAIL: {a.page} links to missing files or headings: {', '.join(bad)}")
    blocks = runnable_blocks(text)
    if not blocks:
        sys.exit(f"FAIL: {a.page} has no ```sh run block (a walk-through must run)")

    work = os.path.join(a.out, re.sub(r"[^A-Za-z0-9_.-]", "_", a.page))
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(os.path.join(work, "out"))
    for entry in os.listdir(a.source):
        if entry in ("out", ".git") or entry.startswith("build"):
            continue
        os.symlink(os.path.join(a.source, entry), os.path.join(work, entry))
    bindir = os.path.dirname(os.path.abspath(a.sfumato))
    os.symlink(os.path.dirname(bindir), os.path.join(work, "build"))
    script = to_script(blocks, a.page)
    with open(os.path.join(work, "walkthrough.sh"), "w") as f:
        f.write(script)
    env = dict(os.environ, PATH=bindir + os.pathsep + os.environ.get("PATH", ""),
               SFUMATO_BUILD_DIR=os.path.dirname(bindir), PYTHONDONTWRITEBYTECODE="1")
    env.pop("SFUMATO_CONFIG", None)
    t0 = time.time()
    try:
        p = subprocess.run(["bash", "walkthrough.sh"], cwd=work, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=a.timeout, start_new_session=True)
        output, code = p.stdout.decode(errors="replace"), p.returncode
    except subprocess.TimeoutExpired as e:
        output = (e.stdout or b"").decode(errors="replace")
        code = f"timeout after {a.timeout:.0f} s"
    with open(os.path.join(work, "walkthrough.log"), "w") as f:
        f.write(output)
    took = time.time() - t0
    if code != 0:
        print(output[-6000:])
        sys.exit(f"FAIL: {a.page}: the walk-through stopped ({code}); script and log in {work}")
    print(f"{a.page}: {len(blocks)} blocks ran in {took:.1f} s (log: {work}/walkthrough.log)")


if __name__ == "__main__":
    main()
