"""Cold start (issue 26 item 1): what a user waits for on the first run of the README's commands after an install.

    nice -n 10 python benchmarks/bench_coldstart.py --refs 5f88c22,HEAD [--repeats 1] [--no-write]

For every git ref: a fresh clone of this repository in a temporary folder, installed editable into a fresh venv
(`pip install --no-deps -e`; the dependencies are this interpreter's, seen through a folder of links, so every ref
runs on the same libraries), then each job below run twice with NUMBA_CACHE_DIR pointed at a new empty folder:
cold (empty numba cache: every kernel the command uses compiles) and warm (the cache the cold run filled).  A
fresh clone's kernels would cache in its own __pycache__ folders; NUMBA_CACHE_DIR only moves that cache where the
benchmark can empty it.  Wall seconds and CPU seconds (user + sys of the child) are both reported because the
machine is shared (8 sessions on 2 cores): CPU seconds are the load-independent figure.  The jobs:

  * `treegram --version`;
  * the README's first command, the exercise sheet (`treegram exercises --vocab cefr:A1 --words
    school,book,family,water --per-word 3`);
  * the README's compression command on its example sentence (`treegram compress "Police said ..."`, the shipped
    default compressor);
  * `treegram parse` of 5 ptb-sample dev sentences with a PCFG trained on ptb-sample train (trained once, before
    the timings, by this checkout; needs ../shared/data).

Outputs are compared across refs (stdout of the sheet and compression, the parse file): the "same output" column.
Refs run one after the other, jobs in the order above; --repeats N runs the cold/warm pair N times per job and
reports the median.  Section `coldstart` of RESULTS.md.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _results import ROOT, machine_line, markdown_table, publish, require_shared  # noqa: E402

from treegram.jit import stale_shipped  # noqa: E402

SHEET = ["exercises", "--vocab", "cefr:A1", "--words", "school,book,family,water", "--per-word", "3"]
COMPRESS = ["compress", "Police said on Monday that the man, a teacher from Ohio, was arrested after a long chase."]


def _deps_folder(tmp: Path) -> Path:
    """Links to everything in this interpreter's site-packages except treegram's own install (its metadata and
    editable finder), so a fresh venv sees the same dependencies and only its own treegram."""
    site = Path(sysconfig.get_paths()["purelib"])
    deps = tmp / "deps"
    deps.mkdir()
    for entry in site.iterdir():
        name = entry.name
        if name.startswith(("treegram", "__editable__")) or name.endswith(".pth") or name == "__pycache__":
            continue
        (deps / name).symlink_to(entry)
    return deps


def install_ref(ref: str, tmp: Path, deps: Path) -> Path:
    """A fresh clone of `ref` installed editable into a fresh venv; returns the venv's `treegram` executable."""
    clone = tmp / f"clone-{ref.replace('/', '_')}"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
    subprocess.run(["git", "-C", str(clone), "checkout", "--quiet", _commit(ref)], check=True)
    venv = tmp / f"venv-{ref.replace('/', '_')}"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    purelib = subprocess.run([str(venv / "bin" / "python"), "-c",
                              "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             check=True, capture_output=True, text=True).stdout.strip()
    Path(purelib, "_deps.pth").write_text(f"{deps}\n", encoding="utf-8")
    # this interpreter's pip installs into the new venv (the build backend in pip's usual isolated build env)
    subprocess.run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "--quiet",
                    "--no-deps", "-e", str(clone)], check=True,
                   stdout=subprocess.DEVNULL)
    return venv / "bin" / "treegram"


def _commit(ref: str) -> str:
    return subprocess.run(["git", "-C", str(ROOT), "rev-parse", ref], check=True, capture_output=True,
                          text=True).stdout.strip()


GNU_TIME = Path("/usr/bin/time").exists()


def timed(cmd: list[str], cwd: Path, env: dict) -> tuple[float, float, float, bytes]:
    """(wall s, CPU s = user + sys, max RSS MB, stdout) of one run of `cmd`; a failure stops the benchmark.

    CPU from wait4 (the command and what it waited for); max RSS from GNU time's %M when it is installed (a forked
    child's own ru_maxrss would include the benchmark process's memory from before the exec), else nan."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.NamedTemporaryFile("r") as rss:
        run = ["/usr/bin/time", "-q", "-f", "%M", "-o", rss.name, *cmd] if GNU_TIME else cmd
        t0 = time.perf_counter()
        proc = subprocess.Popen(run, cwd=cwd, env=env, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if proc.returncode != 0:
            sys.exit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{err.read().decode(errors='replace')[-2000:]}")
        text = rss.read().strip()
        mb = int(text.splitlines()[-1]) / 1024 if GNU_TIME and text else float("nan")
        return wall, usage.ru_utime + usage.ru_stime, mb, out.read()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--refs", default="main,HEAD", help="git refs to compare, comma-separated (default main,HEAD)")
    ap.add_argument("--repeats", type=int, default=1, help="cold/warm pairs per job and ref (median reported)")
    ap.add_argument("--no-write", action="store_true", help="print the table only")
    args = ap.parse_args()
    shared = require_shared()
    refs = [r for r in args.refs.split(",") if r]

    with tempfile.TemporaryDirectory(prefix="treegram-coldstart-") as tmpname:
        tmp = Path(tmpname)
        work = tmp / "work"
        work.mkdir()
        # the job inputs, made once by this checkout (warm: not timed)
        model = work / "pcfg.model"
        from treegram.trees import read_treebank

        subprocess.run([sys.executable, "-m", "treegram.cli.app", "-q", "train", "pcfg", "--treebank",
                        str(shared / "ptb-sample" / "train"), "--out", str(model)], check=True,
                       stdout=subprocess.DEVNULL)
        dev = list(read_treebank(shared / "ptb-sample" / "dev"))[:5]
        sentences = work / "five.txt"
        sentences.write_text("".join(" ".join(t.leaves()) + "\n" for t in dev), encoding="utf-8")

        deps = _deps_folder(tmp)
        exes = {ref: install_ref(ref, tmp, deps) for ref in refs}
        rows, outputs = [], {}
        for ref in refs:
            exe = exes[ref]
            jobs = {"--version": [str(exe), "--version"],
                    "sheet (README)": [str(exe), *SHEET],
                    "compress (README)": [str(exe), *COMPRESS],
                    "parse 5 sentences (PCFG)": [str(exe), "parse", "--model", str(model), "--input",
                                                 str(sentences), "--out", "-"]}
            for job, cmd in jobs.items():
                cold, warm = [], []
                for r in range(args.repeats):
                    cache = tmp / f"numba-{len(rows)}-{r}"
                    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache))
                    # this process's treegram set numba's locator list; an older ref has no treegram.jit
                    env.pop("NUMBA_CACHE_LOCATOR_CLASSES", None)
                    cold.append(timed(cmd, work, env))
                    warm.append(timed(cmd, work, env))
                    shutil.rmtree(cache, ignore_errors=True)
                outputs.setdefault(job, {})[ref] = hashlib.sha1(cold[0][3]).hexdigest()
                med = [statistics.median(x[i] for x in runs) for runs in (cold, warm) for i in range(3)]
                row = [job, f"{ref} ({_commit(ref)[:7]})", med[0], med[1], med[3], med[4], f"{max(med[2], med[5]):.0f}"]
                rows.append(row)
                print(" | ".join(str(v) for v in row), flush=True)

    stale = stale_shipped()
    for row in rows:
        job = row[0]
        same = len(set(outputs[job].values())) == 1
        row.append("yes" if same else "no")
    table = markdown_table(["job", "ref", "cold wall s", "cold CPU s", "warm wall s", "warm CPU s", "max RSS MB",
                            "same output across refs"], rows)
    body = "\n".join([
        "## Cold start: the README's commands from an empty numba cache (issue 26 item 1)", "",
        f"`nice -n 10 python benchmarks/bench_coldstart.py --refs {args.refs} --repeats {args.repeats}`. "
        "Each ref is a fresh clone installed editable into a fresh venv (same dependencies); cold = "
        "NUMBA_CACHE_DIR empty, warm = the same command again.  CPU s = user + sys of the command (the machine is "
        "shared by 8 sessions on 2 cores, so wall seconds include waiting for a core).", "",
        table, "", machine_line() + f"; load average at the end {os.getloadavg()[0]:.1f}.  Kernel modules changed since "
        f"the shipped numba cache (core/data/numba-cache) was built (it is used only when none are): {', '.join(stale) or 'none'}.",
    ])
    publish("coldstart", body, not args.no_write)


if __name__ == "__main__":
    main()
