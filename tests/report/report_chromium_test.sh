#!/usr/bin/env bash
# `sfumato report` in a real browser (run by CTest; Debian's chromium, which scripts/deps
# installs). Writes the reports of a matmul run, a membench run, a small sweep and a serve run on
# the tiny preset, opens each in headless Chromium (fresh profile, no network features), and checks:
#   - the page's own self-check (report/html_page.h) ran and passed: every <svg class="plot">
#     drew all its marks with a non-empty box, and the number of plots it saw is the number of
#     plots in the file (and at least the plots the report must have);
#   - independently, in the dumped DOM: each plot holds the marks it declares; the roofline has
#     one mark per op with FLOPs and bytes; each sweep plot has one mark per completed point;
#   - no script error on the page (its onerror hook) and no console message but the self-check;
#   - a screenshot of each page is saved in OUTPUT_DIR (with the HTML and the DOM dumps).
# Every browser call has a time limit. usage: report_chromium_test.sh SFUMATO SOURCE_DIR OUTPUT_DIR
set -euo pipefail
SFUMATO=$1
SRC=$2
OUT=$3
PY=/usr/bin/python3
CHROMIUM=${SFUMATO_CHROMIUM:-/usr/bin/chromium}
[ -x "$CHROMIUM" ] || { echo "SKIP: $CHROMIUM not installed (scripts/deps installs chromium)"; exit 77; }

rm -rf "$OUT"
mkdir -p "$OUT"
W=$(mktemp -d /tmp/sfumato-report.XXXXXX)
# Overall limit below CTest's (400 s): the watchdog ends the running step and this shell.
( sleep 360 </dev/null >/dev/null 2>&1 && { echo "FAIL: the test ran past its limit of 360 s"; kill -TERM $$; pkill -TERM -P $$; } ) 2>/dev/null &
watchdog=$!
cleanup() {
  pkill -TERM -P "$watchdog" 2>/dev/null  # its sleep: the watchdog then ends without firing
  rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
fail() { echo "FAIL: $*"; exit 1; }
CFG=$SRC/configs/tiny.ini

# --- the three directories -------------------------------------------------------------------
timeout 120 "$SFUMATO" kernel matmul --m 128 --n 128 --k 256 --config "$CFG" --out "$W/matmul" >/dev/null || fail "matmul run"
timeout 120 "$SFUMATO" membench --config "$CFG" --pattern seq --op read --bytes 256K --out "$W/membench" >/dev/null ||
  fail "membench run"
cat > "$W/spec.ini" <<SPEC
[sweep]
command = kernel matmul --m 64 --n 64 --k 128 --mode timing --trace off
config = $CFG
[grid]
chip.l2.size_kib = 256, 1024
chip.hbm.data_rate_mtps = 1600, 3200
arg.m = 64, 256
SPEC
timeout 300 "$SFUMATO" sweep "$W/spec.ini" --out "$W/sweep" -j 2 >/dev/null 2>&1 || fail "sweep"
timeout 120 "$SFUMATO" serve tiny --config "$CFG" --set serve.block_size=64 --trace off --out "$W/serve" \
  --generate n=24,rate=20000,prompt=uniform:32:96,output=uniform:8:24,seed=5 >/dev/null || fail "serve run"

# --- report, browser, checks ------------------------------------------------------------------
# check NAME DIR MIN_PLOTS
check() {
  local name=$1 dir=$2 min_plots=$3
  timeout 120 "$SFUMATO" report "$dir" -o "$OUT/$name.html" >/dev/null || fail "sfumato report $dir"
  local flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking
               --disable-component-update --disable-sync --disable-extensions --disable-default-apps
               --enable-logging=stderr --v=0 --virtual-time-budget=10000)
  timeout 90 "$CHROMIUM" "${flags[@]}" --user-data-dir="$W/profile-$name-dom" --dump-dom "file://$OUT/$name.html" \
    > "$OUT/$name.dom.html" 2> "$OUT/$name.dom.log" || fail "$name: chromium --dump-dom (log: $OUT/$name.dom.log)"
  timeout 90 "$CHROMIUM" "${flags[@]}" --user-data-dir="$W/profile-$name-shot" --window-size=1280,2000 --hide-scrollbars \
    --screenshot="$OUT/$name.png" "file://$OUT/$name.html" > /dev/null 2> "$OUT/$name.shot.log" ||
    fail "$name: chromium --screenshot (log: $OUT/$name.shot.log)"
  [ -s "$OUT/$name.png" ] || fail "$name: no screenshot"
  $PY - "$name" "$dir" "$OUT/$name.html" "$OUT/$name.dom.html" "$min_plots" "$OUT/$name.dom.log" "$OUT/$name.shot.log" <<'PYCODE'
import csv, json, re, sys
from html.parser import HTMLParser
name, run_dir, html_path, dom_path, min_plots = sys.argv[1:6]
logs = sys.argv[6:]
html, dom = open(html_path).read(), open(dom_path).read()

class Dom(HTMLParser):
    def __init__(self):
        super().__init__()
        self.svgs, self.stack, self.divs = [], [], {}
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        cls = (a.get("class") or "").split()
        if tag == "svg" and "plot" in cls:
            self.svgs.append({"id": a.get("id"), "want": int(a.get("data-expected-marks", "0")), "marks": 0})
            self.stack.append(tag)
        elif self.stack and tag != "svg":
            if "mark" in cls:
                self.svgs[-1]["marks"] += 1
        if tag == "div" and a.get("id") in ("selfcheck", "errors"):
            self.divs[a["id"]] = a
    def handle_endtag(self, tag):
        if tag == "svg" and self.stack:
            self.stack.pop()

d = Dom()
d.feed(dom)
problems = []
in_file = len(re.findall(r'<svg class="plot"', html))
sc, er = d.divs.get("selfcheck", {}), d.divs.get("errors", {})
if sc.get("data-status") != "ok":
    problems.append("self-check %r: %s" % (sc.get("data-status"), re.search(r'id="selfcheck"[^>]*>([^<]*)', dom).group(1)))
if int(sc.get("data-plots", "-1")) != in_file:
    problems.append("self-check saw %s plots, the file has %d" % (sc.get("data-plots"), in_file))
if in_file < int(min_plots):
    problems.append("%d plots, expected at least %s" % (in_file, min_plots))
if er.get("data-count") != "0":
    problems.append("page errors: " + re.search(r'id="errors"[^>]*>([^<]*)', dom).group(1))
for s in d.svgs:
    if s["want"] < 1 or s["marks"] != s["want"]:
        problems.append("plot %s: %d marks, declares %d" % (s["id"], s["marks"], s["want"]))
marks = {s["id"]: s["marks"] for s in d.svgs}
if name == "matmul":
    ops = json.load(open(run_dir + "/summary.json"))["ops"]
    placed = sum(1 for o in ops if o.get("flops", 0) > 0 and o.get("bytes", 0) > 0 and o.get("time_us", 0) > 0)
    if marks.get("roofline") != placed:
        problems.append("roofline: %s marks for %d ops" % (marks.get("roofline"), placed))
    for p in ("pipe-util", "timeline-0"):
        if p not in marks: problems.append("no plot " + p)
if name == "membench":
    for p in ("bandwidth", "hit-rates", "latency", "mem-timeline-0"):
        if p not in marks: problems.append("no plot " + p)
if name == "sweep":
    rows = list(csv.DictReader(open(run_dir + "/sweep.csv")))
    done = sum(1 for r in rows if r["status"] == "done")
    # One plot per figure and parameter, plus the energy-against-time plot (docs/energy.md).
    sweep_plots = [k for k in marks if k.startswith("sweep-") and k != "sweep-energy-delay"]
    if len(sweep_plots) % 3 or not sweep_plots:
        problems.append("%d sweep plots: not one per figure and each of the 3 parameters" % len(sweep_plots))
    if "sweep-energy-delay" not in marks: problems.append("no plot sweep-energy-delay")
    for k in sweep_plots + ["sweep-energy-delay"]:
        if marks[k] != done: problems.append("%s: %d marks for %d done points" % (k, marks[k], done))
if name == "serve":
    served = json.load(open(run_dir + "/summary.json"))["serve"]["metrics"]["served"]
    steps = sum(1 for _ in open(run_dir + "/steps.csv")) - 1
    for p in ("serve-cdf-ttft", "serve-cdf-tpot", "serve-cdf-e2e"):
        if marks.get(p) != served: problems.append("%s: %s marks for %d served requests" % (p, marks.get(p), served))
    for p in ("serve-waiting", "serve-batch", "serve-kv"):
        if marks.get(p) != steps: problems.append("%s: %s marks for %d steps" % (p, marks.get(p), steps))
# The console: only the report's own self-check line may appear.
for log in logs:
    for line in open(log, errors="replace"):
        if ":CONSOLE" in line and "sfumato report self-check: ok" not in line:
            problems.append("console: " + line.strip())
if problems:
    print("%s: %s" % (name, "\n  ".join(problems)))
    sys.exit(1)
print("%s: %d plots rendered (%s), no page errors" % (name, in_file, ", ".join("%s=%d" % kv for kv in sorted(marks.items()))[:300]))
PYCODE
}

check matmul "$W/matmul" 3
check membench "$W/membench" 4
check sweep "$W/sweep" 3
check serve "$W/serve" 6
echo "PASS (screenshots in $OUT)"
