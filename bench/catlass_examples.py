#!/usr/bin/python3
"""Builds and runs the examples of the vendor's open template library catlass on sfumato, unmodified.

The catlass repository (hicann/catlass) is exported from a local mirror into a scratch directory and
each Atlas A2 example (examples/NN_name, not the ascend950 ones) is built the way its README says,
`bash scripts/build.sh NAME`, in the environment of the installed package's set_env.sh (sourced, as the
vendor's README says of the toolkit's: ASCEND_HOME_PATH, CMAKE_PREFIX_PATH, PATH and LD_LIBRARY_PATH name
sfumato; find_package(ASC) -> sfumato-asc). A built example runs with its README's command line
(`./NAME m n k 0` from output/bin, or `./output/bin/NAME ...` from the repository; the shell variables its
script sets, after its own gen_data.py with the README's arguments where it has one: see readme_steps; where
that script cannot run for want of torch.float8_e4m3fn, bench/catlass_data.py's generator of the same data) on
configs/ascend910b-like.ini in functional mode (it compares
with its own host golden and prints "Compare success.") and in timing mode (no data; the cycles
must be equal). Prints one line per example (built / ran / matched / cycles) and the totals; a
build that fails reports its first compiler error.

Nothing of the vendor's is copied into sfumato: the library runs from the mirror in a scratch
directory. Without a mirror (CI has no network) the script says so and exits 0.

  bench/catlass_examples.py --mirror /work/.mirror/hicann+catlass/repo --prefix INSTALLED_SFUMATO \
      [--filter REGEX] [--keep DIR] [--timeout S] [--build-timeout S]
"""
import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import catlass_data  # noqa: E402
from ascendc_vendor_examples import cycles_of, install, sh  # noqa: E402


def git(gitdir, *args, **kw):
    return subprocess.run(["git", "--git-dir", gitdir] + list(args), capture_output=True, check=True, **kw).stdout


def examples(gitdir):
    names = git(gitdir, "ls-tree", "--name-only", "HEAD", "examples/", text=True).split()
    res = []
    for rel in names:
        name = rel.split("/", 1)[1]
        if re.match(r"^\d+_", name) and "ascend950" not in name:
            res.append(name)
    return sorted(res, key=lambda n: int(n.split("_", 1)[0]))


def package_env(prefix):
    """The environment of a user who sourced the package's set_env.sh (as the vendor's README says of the
    toolkit's): ASCEND_HOME_PATH, CMAKE_PREFIX_PATH, PATH and LD_LIBRARY_PATH naming the installed sfumato."""
    script = os.path.join(prefix, "share", "sfumato", "set_env.sh")
    if not os.path.exists(script):
        sys.exit("catlass_examples: %s is missing (an install of this sfumato has it)" % script)
    out = subprocess.run(["bash", "-c", 'source "$1" && env -0', "bash", script], capture_output=True, check=True,
                         env=os.environ).stdout.decode()
    return dict(kv.split("=", 1) for kv in out.split("\0") if "=" in kv)


def readme_steps(readme, name):
    """What the README runs: (the shell variables it sets, as assignments to run first; its data step or "";
    the directory the data step runs in and the directory the program runs in, relative to the repository; its
    command line of the program).

    Its command blocks (bash, sh, shell, or text blocks holding a shell script, as 23_flash_attention_infer's)
    are read for `var=value` lines (run verbatim before each step, so `$var` expands as the README sets it), the
    line that runs gen_data.py (with this script's python, which has numpy, for the README's `python`/`python3`;
    from the repository when the line changes directory itself or names examples/NAME/gen_data.py, else from the
    example's directory, as the READMEs say) and the program's line: `./NAME ...` (run from output/bin) or
    `./output/bin/NAME ...` (run from the repository, as 29_a2_fp8_e4m3_matmul's README does)."""
    blocks = re.findall(r"```(?:bash|sh|shell|text)\n(.*?)```", readme, re.S)
    lines = [ln.strip() for block in blocks for ln in block.splitlines()]
    assigns = [ln for ln in lines if re.match(r"^[A-Za-z_]\w*=\S", ln)]
    prelude = "".join(ln + "\n" for ln in assigns)
    # `export VAR=...` lines (102_dynamic_optimized_matmul's LD_LIBRARY_PATH=$PWD/output/shared_lib:..., 103's
    # /path/to/catlass/output/shared_lib/lib/), run from the repository, where the README runs them before it
    # changes to output/bin.
    exports = "".join(ln + "\n" for ln in lines if re.match(r"^export [A-Za-z_]\w*=\S", ln))
    run, run_dir = "./" + name, os.path.join("output", "bin")
    for ln in lines:
        if ln.startswith("./" + name + " "):
            run = ln
            break
        if ln.startswith("./output/bin/" + name + " "):
            run, run_dir = ln, "."
            break
    gen = next((ln for ln in lines if re.search(r"(^|&&\s*)python3? \S*gen_data\.py\b", ln)), "")
    gen_dir = "."
    if gen:
        script = re.search(r"python3? (\S*gen_data\.py)", gen).group(1)
        if not gen.startswith("cd ") and "/" not in script:
            gen_dir = os.path.join("examples", name)
        gen = re.sub(r"(^|&&\s*)python3?(?= )", lambda m: m.group(1) + shlex.quote(sys.executable), gen)
    return prelude, exports, gen, gen_dir, run, run_dir


def run_example(gitdir, src, name, env0, run_timeout, build_timeout=900):
    res = {"example": name, "built": False, "ran": False, "matched": False, "cycles": None, "timing_cycles": None,
           "note": ""}
    code, out = sh("bash scripts/build.sh %s" % name, src, env0, build_timeout)
    exe = os.path.join(src, "output", "bin", name)
    if code != 0 or not os.path.exists(exe):
        # The compiler's first diagnostic (file:line:col: error: or c++: error:), not the configure-time
        # warnings of catlass's CANN version probe.
        errs = [ln for ln in out.splitlines() if ": error:" in ln] or [ln for ln in out.splitlines() if "rror" in ln]
        res["note"] = (errs[0] if errs else (out.strip().splitlines() or [""])[-1]).strip()[:240]
        return res
    res["built"] = True
    readme = git(gitdir, "show", "HEAD:examples/%s/README.md" % name).decode("utf-8", "replace")
    prelude, exports, gen, gen_dir, run, run_dir = readme_steps(readme, name)
    if exports:
        # 103's README writes the repository as /path/to/catlass: the user puts theirs there.
        exports = exports.replace("/path/to/catlass", shlex.quote(src))
        prelude = "cd %s\n%scd - >/dev/null\n%s" % (shlex.quote(src), exports, prelude)
    if gen:
        # The README's data step (its gen_data.py with the README's arguments), where the README runs it.
        code, out = sh(prelude + gen, os.path.join(src, gen_dir), env0, run_timeout)
        if code != 0 and ("float8_e4m3fn" in out or "No module named 'torch'" in out) and \
                name in catlass_data.GENERATORS:
            # The script needs torch >= 2.1 (torch.float8_e4m3fn; or torch is not installed at all): the same step
            # with sfumato's generator of the same data (bench/catlass_data.py, numpy only) in place of the script;
            # the binary and its check unmodified.
            ours = re.sub(r"\S*python3?'?\s+\S*gen_data\.py", lambda _: "%s %s %s" % (
                shlex.quote(sys.executable), shlex.quote(os.path.abspath(catlass_data.__file__)), name), gen)
            code, out = sh(prelude + ours, os.path.join(src, gen_dir), env0, run_timeout)
            res["note"] = "data: bench/catlass_data.py (its gen_data.py needs torch with float8_e4m3fn)"
        if code != 0:
            lines = out.strip().splitlines()
            res["note"] = "its data step failed: " + (lines[-1] if lines else "exit %d" % code)[:240]
            return res
    for mode in ("functional", "timing"):
        env = dict(env0, SFUMATO_CONFIG="ascend910b-like", SFUMATO_MODE=mode, SFUMATO_TRACE="off",
                   SFUMATO_OUT=os.path.join(src, "sim_" + name + "_" + mode), SFUMATO_QUIET="1")
        code, out = sh(prelude + run, os.path.join(src, run_dir), env, run_timeout)
        if mode == "functional":
            res["ran"] = code == 0
            res["cycles"] = cycles_of(env["SFUMATO_OUT"])
            res["matched"] = code == 0 and "Compare success" in out
            if not res["matched"]:
                res["note"] = out.strip()[-300:].replace("\n", " | ")
                return res
        else:
            res["timing_cycles"] = cycles_of(env["SFUMATO_OUT"]) if code not in (2, 3, 4) else None
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mirror", required=True, help="the catlass git directory (fetch github:hicann/catlass)")
    ap.add_argument("--prefix", help="an installed sfumato (cmake --install); default: build/ installed")
    ap.add_argument("--build-dir", default=os.environ.get("SFUMATO_BUILD_DIR", "build"))
    ap.add_argument("--filter", default="")
    ap.add_argument("--keep", help="scratch directory to keep (default: a temporary one, removed)")
    ap.add_argument("--timeout", type=int, default=300, help="seconds one run of an example may take")
    ap.add_argument("--build-timeout", type=int, default=900,
                    help="seconds one example's build may take (102 compiles over 100 kernel units)")
    a = ap.parse_args()
    if not os.path.isdir(a.mirror):
        print("catlass_examples: skipped: no mirror at %s (fetch hicann/catlass first)" % a.mirror)
        return 0
    gitdir = a.mirror if os.path.isdir(os.path.join(a.mirror, "objects")) else os.path.join(a.mirror, ".git")
    scratch = a.keep or tempfile.mkdtemp(prefix="catlass_examples.")
    os.makedirs(scratch, exist_ok=True)
    prefix = a.prefix
    if not prefix:
        prefix = os.path.join(scratch, "_install")
        install(a.build_dir, prefix)
    prefix = os.path.abspath(prefix)
    src = os.path.join(scratch, "catlass")
    shutil.rmtree(src, ignore_errors=True)
    os.makedirs(src)
    subprocess.run(["tar", "-x", "-C", src], input=git(gitdir, "archive", "HEAD"), check=True)
    env0 = package_env(prefix)
    # catlass's scripts/build.sh runs `cmake --build ... -j` (no limit): make starts every compile of an
    # example at once (over 100 for 102_dynamic_optimized_matmul). -l keeps make from starting jobs while
    # the load is above the machine's core count.
    env0["MAKEFLAGS"] = (env0.get("MAKEFLAGS", "") + " -l%d" % (os.cpu_count() or 2)).strip()
    results = []
    print("%-52s %5s %4s %7s %12s %s" % ("example", "built", "ran", "matched", "cycles", "note"))
    for name in examples(gitdir):
        if not re.search(a.filter, name):
            continue
        r = run_example(gitdir, src, name, env0, a.timeout, a.build_timeout)
        r["modes_equal"] = r["cycles"] is not None and r["cycles"] == r["timing_cycles"]
        if r["matched"] and not r["modes_equal"]:
            r["note"] = "timing-mode cycles %s differ" % r["timing_cycles"]
        results.append(r)
        print("%-52s %5s %4s %7s %12s %s" % (name, "yes" if r["built"] else "no", "yes" if r["ran"] else "no",
                                             "yes" if r["matched"] else "no",
                                             r["cycles"] if r["cycles"] is not None else "-", r["note"]), flush=True)
    print("total %d  built %d  ran %d  matched %d  functional==timing cycles %d" %
          (len(results), sum(r["built"] for r in results), sum(r["ran"] for r in results),
           sum(r["matched"] for r in results), sum(r["modes_equal"] for r in results)))
    if not a.keep:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
