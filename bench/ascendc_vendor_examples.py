#!/usr/bin/python3
"""Runs the vendor's public per-API Ascend C example programs on sfumato, unmodified.

Each example directory of the vendor's asc-devkit repository (examples/01_simd_cpp_api/03_basic_api
and 04_advanced_api) that says it supports Atlas A2 is exported from a local mirror into a scratch
directory, configured with its own CMakeLists.txt against sfumato's installed package
(find_package(ASC) -> sfumato-asc), built, and run the way its README's command block says:
gen_data.py, ./demo, verify_result.py. The demo runs twice on configs/ascend910b-like.ini, in
functional mode (data; verified) and in timing mode (no data), and the two cycle counts must be
equal. Prints one line per example (built / ran / matched / cycles) and the totals.

Nothing of the vendor's is copied into sfumato: the examples run from the mirror into a scratch
directory. Without a mirror (CI has no network) the script says so and exits 0.

  bench/ascendc_vendor_examples.py --mirror /work/.mirror/cannmirror+asc-devkit/repo \
      [--prefix INSTALLED_SFUMATO] [--build-dir BUILD] [--filter REGEX] [--basic] [--extra-roots] [--keep DIR]
      [--timeout S]

--mirror is a git directory (bare or not) or a plain checkout of asc-devkit. --prefix is an
installed sfumato (cmake --install); without it the build tree (--build-dir, default build/) is
installed into the scratch directory first. A run of ./demo that takes longer than --timeout seconds
(default 120) is stopped and reported as a timeout. Simplified: only the scenario the README's
command block sets (the CMakeLists default when it sets none) is run.
"""
import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile

EXAMPLE_ROOTS = ("examples/01_simd_cpp_api/03_basic_api/", "examples/01_simd_cpp_api/04_advanced_api/")
# The other groups of single-kernel programs with the same README steps (mkdir build, cmake, gen_data.py, ./demo,
# verify_result.py): the introduction, the best practices and the compatibility guide (--extra-roots).
EXTRA_ROOTS = ("examples/01_simd_cpp_api/00_introduction/", "examples/01_simd_cpp_api/05_best_practices/",
               "examples/01_simd_cpp_api/06_compatibility_guide/")


class Mirror:
    """Files of the vendor's repository, from a git directory or a checkout."""

    def __init__(self, path):
        self.path = path
        self.git = os.path.isdir(os.path.join(path, "objects")) or os.path.isdir(os.path.join(path, ".git"))
        if self.git and not os.path.isdir(os.path.join(path, "examples")):
            self.gitdir = path if os.path.isdir(os.path.join(path, "objects")) else os.path.join(path, ".git")
        else:
            self.git = False

    def files(self):
        if self.git:
            out = subprocess.run(["git", "--git-dir", self.gitdir, "ls-tree", "-r", "--name-only", "HEAD"],
                                 capture_output=True, text=True, check=True).stdout
            return out.splitlines()
        res = []
        for root, _, names in os.walk(os.path.join(self.path, "examples")):
            for n in names:
                res.append(os.path.relpath(os.path.join(root, n), self.path))
        return res

    def read(self, rel):
        if self.git:
            r = subprocess.run(["git", "--git-dir", self.gitdir, "show", "HEAD:" + rel], capture_output=True)
            return r.stdout.decode("utf-8", "replace") if r.returncode == 0 else ""
        try:
            with open(os.path.join(self.path, rel), encoding="utf-8", errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def export(self, rel, dest):
        if self.git:
            os.makedirs(dest, exist_ok=True)
            arch = subprocess.run(["git", "--git-dir", self.gitdir, "archive", "HEAD", rel], capture_output=True,
                                  check=True).stdout
            subprocess.run(["tar", "-x", "-C", dest, "--strip-components", str(rel.count("/") + 1)], input=arch,
                           check=True)
        else:
            shutil.copytree(os.path.join(self.path, rel), dest)


def a2_examples(mirror, basic_only, extra=False):
    files = mirror.files()
    all_roots = EXAMPLE_ROOTS + EXTRA_ROOTS
    dirs = sorted({f[: -len("/CMakeLists.txt")] for f in files
                   if f.endswith("/CMakeLists.txt") and f.startswith(all_roots)})
    roots = EXAMPLE_ROOTS[:1] if basic_only else all_roots if extra else EXAMPLE_ROOTS
    res = []
    for d in dirs:
        if not d.startswith(roots):
            continue
        if "Atlas A2" in mirror.read(d + "/README.md"):
            res.append(d)
    return res


def commands(readme):
    """The README's command block (the fenced bash block that runs ./demo), comments removed."""
    for block in re.findall(r"```bash\n(.*?)```", readme, re.S):
        if "./demo" not in block:
            continue
        lines = []
        for ln in block.splitlines():
            ln = re.sub(r"\s+#.*$", "", ln.strip())
            if ln and not ln.startswith("#"):
                lines.append(ln)
        return lines
    return []


def expected_output(readme):
    """The lines the README says a successful run prints (the fenced block after its run-result
    heading, "执行结果"), or [] when it shows none."""
    m = re.search(r"执行结果.*?```[a-z]*\n(.*?)```", readme, re.S)
    return [ln.strip() for ln in m.group(1).splitlines() if ln.strip()] if m else []


def sh(cmd, cwd, env, timeout):
    """Runs cmd; on timeout its whole process group (the shell and what it started) is killed."""
    p = subprocess.Popen(["bash", "-c", cmd], cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, start_new_session=True)
    try:
        out, _ = p.communicate(timeout=timeout)
        return p.returncode, out
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        return 124, "timeout after %d s" % timeout


def cycles_of(out_dir):
    try:
        with open(os.path.join(out_dir, "summary.json")) as f:
            s = json.load(f)
    except (OSError, ValueError):
        return None
    ops = s.get("ops", [])
    return sum(int(o.get("cycles", 0)) for o in ops) if ops else s.get("cycles")


def run_example(mirror, rel, scratch, prefix, env0, run_timeout):
    name = rel.split("/", 2)[2]
    work = os.path.join(scratch, name.replace("/", "__"))
    mirror.export(rel, work)
    lines = commands(mirror.read(rel + "/README.md"))
    res = {"example": name, "built": False, "ran": False, "matched": False, "cycles": None, "timing_cycles": None,
           "note": ""}
    # The README's variables: lines of assignments only (`SCENARIO_NUM=1 ASC_ARCH=dav-2201` sets two).
    vars_ = [a for ln in lines if re.match(r"^[A-Za-z_]\w*=\S*(\s+[A-Za-z_]\w*=\S*)*$", ln) for a in ln.split()]
    cmake_defs = " ".join("-D%s=%s" % tuple(v.split("=", 1)) for v in vars_)
    prelude = "; ".join(vars_) + ("; " if vars_ else "")
    build = os.path.join(work, "build")
    os.makedirs(build, exist_ok=True)
    code, out = sh("cmake -DCMAKE_PREFIX_PATH=%s -DCMAKE_ASC_ARCHITECTURES=dav-2201 %s .. && make -j2" %
                   (prefix, cmake_defs), build, env0, 600)
    if code != 0:
        errs = [ln for ln in out.splitlines() if "error:" in ln] or [ln for ln in out.splitlines() if "rror" in ln]
        res["note"] = (errs[0] if errs else (out.strip().splitlines() or [""])[-1]).strip()[:240]
        return res
    res["built"] = True
    gen = [ln for ln in lines if "gen_data.py" in ln]
    # The demo's own line of the README (its arguments: `./demo $TESTCASE`), or a bare ./demo.
    demo = next((ln for ln in lines if ln.startswith("./demo")), "./demo")
    ver = [ln for ln in lines if "verify_result.py" in ln]
    # Two examples' scripts (matmul_ibshareB, add_broadcast) import TensorFlow: where it is not installed, the
    # same scripts unmodified with bench/stand_ins' numpy stand-in for the calls they make on PYTHONPATH.
    env_tf = dict(env0, PYTHONPATH=os.pathsep.join(
        [os.path.join(os.path.dirname(os.path.abspath(__file__)), "stand_ins")] +
        ([env0["PYTHONPATH"]] if env0.get("PYTHONPATH") else [])))
    for g in gen:
        code, out = sh(prelude + g.replace("python3", "/usr/bin/python3"), build, env0, 300)
        if code != 0 and "No module named 'tensorflow'" in out:
            env0 = env_tf
            code, out = sh(prelude + g.replace("python3", "/usr/bin/python3"), build, env0, 300)
            res["note"] = "data: bench/stand_ins/tensorflow (numpy; TensorFlow is not installed)"
        if code != 0:
            res["note"] = "gen_data: " + out.strip()[-200:]
            return res
    for mode in ("functional", "timing"):
        env = dict(env0, SFUMATO_CONFIG="ascend910b-like", SFUMATO_MODE=mode, SFUMATO_TRACE="off",
                   SFUMATO_OUT=os.path.join(build, "sim_" + mode), SFUMATO_QUIET="1")
        code, out = sh(prelude + demo, build, env, run_timeout)
        if mode == "functional":
            res["ran"] = code == 0
            res["cycles"] = cycles_of(env["SFUMATO_OUT"])
            if code != 0:
                res["note"] = out.strip()[-300:].replace("\n", " | ")
                return res
            demo_out = out
            if ver:
                ok = True
                for v in ver:
                    c2, o2 = sh(prelude + v.replace("python3", "/usr/bin/python3"), build, env0, 300)
                    ok = ok and c2 == 0 and re.search(r"pass|success", o2, re.I) is not None
                    if not ok:
                        res["note"] = "verify: " + o2.strip()[-200:].replace("\n", " | ")
                res["matched"] = ok
            else:
                # Examples without a verify script check themselves and print the verdict, or
                # print what their README's run result shows (every line of it must appear).
                want = expected_output(mirror.read(rel + "/README.md"))
                shown = want and all(w in demo_out for w in want)
                res["matched"] = (shown or re.search(r"pass|success", demo_out, re.I) is not None) and \
                    re.search(r"\b(fail|failed|error)\b", demo_out, re.I) is None
                if not res["matched"]:
                    res["note"] = "self-check: " + demo_out.strip()[-200:].replace("\n", " | ")
        else:
            # A program checking its own data fails its check in timing mode (no data), yet
            # ran: its cycles count when sfumato wrote them (no sfumato error, exit 2/3/4).
            res["timing_cycles"] = cycles_of(env["SFUMATO_OUT"]) if code not in (2, 3, 4) else None
            if res["timing_cycles"] is None:
                res["note"] = "timing mode: " + out.strip()[-200:].replace("\n", " | ")
    return res


def install(build_dir, dest):
    r = subprocess.run(["cmake", "--install", build_dir, "--prefix", dest], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("ascendc_vendor_examples: cmake --install %s failed:\n%s" % (build_dir, r.stdout + r.stderr))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mirror", required=True)
    ap.add_argument("--prefix")
    ap.add_argument("--build-dir", default=os.environ.get("SFUMATO_BUILD_DIR", "build"))
    ap.add_argument("--filter", default="")
    ap.add_argument("--basic", action="store_true", help="only the basic-API examples")
    ap.add_argument("--extra-roots", action="store_true",
                    help="also the introduction, best-practice and compatibility-guide examples (EXTRA_ROOTS)")
    ap.add_argument("--keep", help="scratch directory to keep (default: a temporary one, removed)")
    ap.add_argument("--json", help="write the per-example results here")
    ap.add_argument("--timeout", type=int, default=120,
                    help="seconds one run of an example's ./demo may take (default 120; each takes a few)")
    a = ap.parse_args()
    if not os.path.isdir(a.mirror):
        print("ascendc_vendor_examples: skipped: no mirror at %s (fetch cannmirror/asc-devkit first)" % a.mirror)
        return 0
    mirror = Mirror(a.mirror)
    scratch = a.keep or tempfile.mkdtemp(prefix="ascendc_examples.")
    os.makedirs(scratch, exist_ok=True)
    prefix = a.prefix
    if not prefix:
        prefix = os.path.join(scratch, "_install")
        install(a.build_dir, prefix)
    env0 = dict(os.environ)
    env0["PATH"] = os.path.join(prefix, "bin") + os.pathsep + env0.get("PATH", "")
    examples = [e for e in a2_examples(mirror, a.basic, a.extra_roots) if re.search(a.filter, e)]
    results = []
    print("%-70s %5s %4s %7s %12s %s" % ("example", "built", "ran", "matched", "cycles", "note"))
    for rel in examples:
        r = run_example(mirror, rel, scratch, prefix, env0, a.timeout)
        same = r["cycles"] is not None and r["cycles"] == r["timing_cycles"]
        if r["ran"] and not same and not r["note"]:
            r["note"] = "timing-mode cycles %s differ" % r["timing_cycles"]
        r["modes_equal"] = same
        results.append(r)
        print("%-70s %5s %4s %7s %12s %s" % (r["example"], "yes" if r["built"] else "no", "yes" if r["ran"] else "no",
                                             "yes" if r["matched"] else "no",
                                             r["cycles"] if r["cycles"] is not None else "-", r["note"]), flush=True)
    n = len(results)
    print("total %d  built %d  ran %d  matched %d  functional==timing cycles %d" %
          (n, sum(r["built"] for r in results), sum(r["ran"] for r in results), sum(r["matched"] for r in results),
           sum(r["modes_equal"] for r in results)))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)
    if not a.keep:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
