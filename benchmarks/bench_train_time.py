"""Where the training time of the TIG and Bayesian OSTAG defaults goes (issue 26 item 2), in CPU seconds.

    nice -n 10 python benchmarks/bench_train_time.py [--limit 300] [--formalisms tig,ostag-bayes] [--no-write]

Runs `treegram train tig` / `treegram train ostag-bayes` with their defaults (`--seed 1`, the first `--limit` trees
of ptb-sample/train) in this process, through the command line's own `main`, with timers (process CPU time) wrapped
around the phases: data preparation, the TSG Gibbs start, the blocked sweeps (per-tree MH steps: proposal grammar +
chart + sample, the model and proposal densities, count updates; the per-sweep count rebuild and hyperparameter
resampling), the averaging snapshots and the grammar extraction.  Each formalism is trained twice in the same
process, with and without the decode memo of `TypeTableState._decoded` (the speed-up of this stop), in alternating
order, and the two model files are compared (they must be the same model; only the per-sweep seconds differ).
Writes the `train-time-split` section.
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
import tempfile
import time
import zipfile
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _results import markdown_table, machine_line, require_shared, write_section  # noqa: E402

PHASES = [
    ("prepare", "data preparation (treebank PCFG, tree tables)"),
    ("gibbs", "TSG Gibbs start (collapsed Gibbs sweeps, --tsg-init)"),
    ("gibbs_hyper", "  of which hyperparameter resampling"),
    ("steps", "blocked sweeps: per-tree MH steps"),
    ("propose", "  proposal (anchored grammar build + chart + sample)"),
    ("density", "  model and proposal densities (log_p, log_q)"),
    ("counts", "  count updates (remove / add)"),
    ("sweep_stats", "blocked sweeps: per-sweep count rebuild + hyperparameter resampling"),
    ("snapshots", "averaging snapshots"),
    ("extract", "grammar extraction (averaged over 5 samples)"),
]


class Timers:
    """Process-CPU timers wrapped around methods (only the outermost call of a label counts)."""

    def __init__(self):
        self.cpu: dict[str, float] = defaultdict(float)
        self._depth: dict[str, int] = defaultdict(int)
        self._undo: list = []

    def wrap(self, owner, name: str, label: str) -> None:
        f = getattr(owner, name)

        @functools.wraps(f)
        def timed(*a, **k):
            self._depth[label] += 1
            t0 = time.process_time()
            try:
                return f(*a, **k)
            finally:
                self._depth[label] -= 1
                if not self._depth[label]:
                    self.cpu[label] += time.process_time() - t0

        self._undo.append((owner, name, f))
        setattr(owner, name, timed)

    def undo(self) -> None:
        for owner, name, f in reversed(self._undo):
            setattr(owner, name, f)
        self._undo.clear()


def instrument(t: Timers) -> None:
    from treegram.bayes.averaging import SampleCollector
    from treegram.bayes.blocked import BlockedMH
    from treegram.elementary import gibbs
    from treegram.elementary.types import TypeTableState
    from treegram.plugins.ostag.bayes_sampler import BlockedOSTAG
    from treegram.plugins.ostag.formalism import BayesianOSTAG
    from treegram.plugins.tig.formalism import TIGFormalism
    from treegram.plugins.tig.sampler import BlockedTIG

    for cls in (TIGFormalism, BayesianOSTAG):
        t.wrap(cls, "prepare", "prepare")
        t.wrap(cls, "extract_model", "extract")
    t.wrap(gibbs.GibbsTSG, "sweep", "gibbs")
    t.wrap(gibbs.TSGState, "resample_hyperparameters", "gibbs_hyper")
    t.wrap(BlockedMH, "_step", "steps")
    for cls in (BlockedTIG, BlockedOSTAG):
        t.wrap(cls, "propose", "propose")
        t.wrap(cls, "sweep_stats", "sweep_stats")
    for name in ("log_p", "log_q"):
        t.wrap(TypeTableState, name, "density")
    for name in ("remove", "add"):
        t.wrap(TypeTableState, name, "counts")
    t.wrap(SampleCollector, "after_sweep", "snapshots")


def same_model(a: Path, b: Path) -> bool:
    """The same model: every array byte-identical, the metadata equal but for measured seconds."""
    def load(p):
        z = zipfile.ZipFile(p)
        files = {n: z.read(n) for n in z.namelist()}
        meta = json.loads(files.pop("__meta__.json"))

        def strip(o):
            if isinstance(o, dict):
                return {k: strip(v) for k, v in o.items() if k not in ("seconds", "train_seconds")}
            return [strip(v) for v in o] if isinstance(o, list) else o
        return files, strip(meta)

    return load(a) == load(b)


def train_once(formalism: str, limit: int, out: Path, memo: bool) -> tuple[float, dict[str, float]]:
    from treegram.cli.app import main
    from treegram.elementary.types import TypeTableState

    plain = TypeTableState._decoded
    if not memo:  # the code before this stop: decode every time
        TypeTableState._decoded = lambda self, item, enc: self.decode(item, enc)
    timers = Timers()
    instrument(timers)
    try:
        t0 = time.process_time()
        rc = main(["-q", "train", formalism, "--treebank", str(require_shared() / "ptb-sample" / "train"),
                   "--limit", str(limit), "--seed", "1", "--out", str(out)])
        total = time.process_time() - t0
    finally:
        timers.undo()
        TypeTableState._decoded = plain
    if rc != 0:
        sys.exit(f"treegram train {formalism} failed")
    return total, dict(timers.cpu)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--limit", type=int, default=300, help="training trees (default 300)")
    ap.add_argument("--formalisms", default="tig,ostag-bayes")
    ap.add_argument("--no-write", action="store_true")
    opts = ap.parse_args()
    results = {}
    with tempfile.TemporaryDirectory(prefix="treegram-train-time-") as tmp:
        for formalism in opts.formalisms.split(","):
            runs = {}
            # memo off first, then on: any warm-up (numba cache loads, imports) lands on the baseline
            for memo in (False, True):
                out = Path(tmp) / f"{formalism}-{'memo' if memo else 'plain'}.model"
                runs[memo] = train_once(formalism, opts.limit, out, memo)
                print(formalism, "memo" if memo else "plain", f"{runs[memo][0]:.1f} CPU-s", flush=True)
            same = same_model(Path(tmp) / f"{formalism}-plain.model", Path(tmp) / f"{formalism}-memo.model")
            results[formalism] = (runs, same)
    rows = []
    for key, label in [("total", "whole command (reading the treebank, plugins, saving included)"), *PHASES]:
        row = [label]
        for formalism, (runs, _same) in results.items():
            for memo in (False, True):
                total, cpu = runs[memo]
                v = total if key == "total" else cpu.get(key)
                row.append("-" if v is None else f"{v:.1f}")
        rows.append(row)
    columns = ["phase (CPU s)"]
    for formalism in results:
        columns += [f"{formalism}: before", f"{formalism}: decode memo"]
    verdicts = "; ".join(f"{f}: {'the same model' if s else 'DIFFERENT models'} with and without the memo"
                         for f, (_r, s) in results.items())
    body = "\n".join([
        "## Where the training time of the TIG and Bayesian OSTAG defaults goes (issue 26 item 2)",
        "",
        f"`nice -n 10 python benchmarks/bench_train_time.py --limit {opts.limit} --formalisms {opts.formalisms}` -- "
        f"{machine_line()}.",
        "",
        f"`treegram train FORMALISM --limit {opts.limit} --seed 1` with the shipped defaults (10 blocked sweeps, "
        "grammar averaged over 5 samples), process CPU seconds per phase (nested rows are part of the row above "
        "them). *before*: every MH step decodes the old and the proposed derivation three times each; *decode "
        f"memo*: `TypeTableState._decoded` remembers them. {verdicts}.",
        "",
        markdown_table(columns, rows),
    ])
    print(body)
    if not opts.no_write:
        write_section("train-time-split", body)


if __name__ == "__main__":
    main()
