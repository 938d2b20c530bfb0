"""Max-rule decoding speed (issue 16, "speed kept"): sentences/s of `decode_maxrule` on TIG and TSG models with
the current chart kernels and with those of a baseline commit, in the same process, alternating, on the same
sentences, and whether the two give the same trees.

The baseline's `outside_pass` (charts/kernels.py) and `_rule_posteriors` (charts/decoders.py) are compiled from
`git show REF:...` into side modules and swapped into the current package for the "before" runs (everything else
- the coarse pass, the inside chart, the CKY, the back-transform - is shared, so the difference is the two
kernels).  MPD is timed too, for reference.  CPU seconds (process_time) of the parses after a warm-up sentence.

    nice -n 10 python benchmarks/bench_maxrule_speed.py --model tig=MODEL --model tsg=MODEL --sentences 30 --baseline main

`--write` rewrites the `maxrule-speed` section of benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _results import ROOT, machine_line, markdown_table, module_at, require_shared, write_section  # noqa: E402

SECTION = "maxrule-speed"


def load_baseline(ref: str, tmp: Path) -> dict:
    """{name: function} of the baseline commit's two kernels, compiled from its sources."""
    out = {}
    # the rule-posterior kernel is swapped with its Python wrapper (the kernel's return layout changed in 9de5742)
    for path, mod_name, fn in (("core/charts/kernels.py", "_baseline_kernels", "outside_pass"),
                               ("core/charts/decoders.py", "_baseline_decoders", "rule_posteriors")):
        out[fn] = getattr(module_at(ref, path, mod_name, tmp), fn)
    return out


class Swap:
    """Context manager: the baseline's kernels in place of the current ones."""

    def __init__(self, baseline: dict | None):
        self.baseline = baseline

    def __enter__(self):
        from treegram.charts import decoders, kernels

        self.saved = (kernels.outside_pass, decoders.rule_posteriors)
        if self.baseline:
            kernels.outside_pass = self.baseline["outside_pass"]
            decoders.rule_posteriors = self.baseline["rule_posteriors"]

    def __exit__(self, *exc):
        from treegram.charts import decoders, kernels

        kernels.outside_pass, decoders.rule_posteriors = self.saved


def run(model, sentences, decoder: str) -> tuple[float, list[str]]:
    from treegram.charts.decoders import decode
    from treegram.errors import ParseFailure

    trees = []
    t0 = time.process_time()
    for tokens in sentences:
        try:
            trees.append(decode(model, tokens, decoder).to_bracket())
        except ParseFailure:
            trees.append("(failed)")
    return time.process_time() - t0, trees


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", action="append", default=[], metavar="NAME=PATH", help="a model to time (repeat)")
    ap.add_argument("--sentences", type=int, default=30, help="the first N ptb-sample dev sentences")
    ap.add_argument("--baseline", default="main", help="git ref whose kernels are the 'before' (default main)")
    ap.add_argument("--no-mpd", action="store_true", help="skip the MPD reference timing")
    ap.add_argument("--write", action="store_true", help="rewrite the maxrule-speed section of RESULTS.md")
    ap.add_argument("--section", default=SECTION,
                    help="the RESULTS.md section --write rewrites; another name than maxrule-speed writes a plain "
                         "comparison of the given models (use --baseline HEAD: both columns time the current code)")
    args = ap.parse_args()

    from treegram.formalism import load_model
    from treegram.trees import read_treebank

    shared = require_shared()
    dev = [t.leaves() for t in read_treebank([shared / "ptb-sample" / "dev"])][: args.sentences]
    words = sum(len(s) for s in dev)
    base_commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", args.baseline], check=True,
                                 capture_output=True, text=True).stdout.strip()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        baseline = load_baseline(args.baseline, Path(tmp))
        for spec in args.model:
            name, path = spec.split("=", 1)
            model = load_model(path)
            size = f"{model.cfg.num_rules:,} CFG rules, {model.cfg.num_symbols:,} symbols"
            for which in (baseline, None):  # warm-up (numba compile) outside the timing
                with Swap(which):
                    run(model, dev[:1], "maxrule")
            # alternate: before, after, before, after (the machine's load drifts)
            secs = {"before": 0.0, "after": 0.0}
            trees = {}
            half = max(1, len(dev) // 2)
            for chunk in (dev[:half], dev[half:]):
                for label, which in (("before", baseline), ("after", None)):
                    with Swap(which):
                        s, t = run(model, chunk, "maxrule")
                    secs[label] += s
                    trees.setdefault(label, []).extend(t)
            same = sum(a == b for a, b in zip(trees["before"], trees["after"]))
            mpd_s = None
            if not args.no_mpd:
                run(model, dev[:1], "mpd")
                mpd_s, _ = run(model, dev, "mpd")
            row = [name, Path(path).name, size, len(dev), words,
                   round(len(dev) / secs["before"], 3), round(len(dev) / secs["after"], 3),
                   round(secs["before"] / secs["after"], 2), f"{same}/{len(dev)}",
                   "-" if mpd_s is None else round(len(dev) / mpd_s, 3)]
            print(row, flush=True)
            rows.append(row)
    if args.write:
        plain = args.section != SECTION  # a plain comparison of models, not the before / after of the kernels
        cmd = ("nice -n 10 python benchmarks/bench_maxrule_speed.py "
               + " ".join(f"--model {m}" for m in args.model)
               + f" --sentences {args.sentences} --baseline {args.baseline}" + (" --no-mpd" if args.no_mpd else "")
               + (f" --section {args.section}" if plain else "") + " --write")
        title = (f"Max-rule parse speed per CPU second ({args.section})" if plain else
                 "Max-rule decoding speed before / after the live-entry kernels (issue 16)")
        timed = ["maxrule sent/s (1)", "maxrule sent/s (2)", "ratio"] if plain else \
            ["maxrule sent/s before", "maxrule sent/s after", "speed-up"]
        body = [f"## {title}\n",
                f"Command: `{cmd}` (baseline {args.baseline} = {base_commit}) — {machine_line()}.\n",
                ("The first N ptb-sample dev sentences (all lengths) decoded with each model's `maxrule`, the "
                 "baseline's kernels and the current ones alternating in one process (with --baseline HEAD both "
                 "are the current code: the two columns are two timings of it); sent/s per CPU second after a "
                 "warm-up sentence; MPD on the same chart for reference. Models are named on the command line "
                 "(see the section that scores them).\n") if plain else
                ("The first N ptb-sample dev sentences (all lengths) decoded with `maxrule` by the baseline's "
                 "outside pass and rule-posterior kernel and by the current ones, alternating in one process on "
                 "the same sentences (two halves each); sent/s per CPU second after a warm-up sentence; "
                 "'same trees' = identical bracketed outputs. MPD (the same chart, Viterbi) for reference. "
                 "Models of the 2026-11-26 run: tig = `treegram train tig --treebank ptb-sample/train --seed 1` with "
                 "the shipped defaults (tig0, --tsg-init 100, 10 sweeps; the model the `parsing-defaults-tig-full` "
                 "section scores), tsg = `treegram train tsg --treebank ptb-sample/train --seed 1` with its shipped "
                 "defaults (100 Gibbs sweeps, posterior average of 5 samples). Where the time went before (TIG, 4 "
                 "sentences of a 1-sweep model, per stage): the outside pass ~2.5x and the rule posteriors ~2x the "
                 "inside pass; in the chart of one 50-word sentence 94% of the 1.9M post entries have outside score "
                 "0 (89% of all are the never-pruned `~flat` insertion symbols), and the TIG closure has 15M pairs "
                 "(up to 12,753 children per symbol). The new kernels skip what cannot contribute (exactly: the same "
                 "terms in the same order). The inside pass, shared with MPD, is unchanged and is now about 40% of a "
                 "TIG max-rule parse (the outside pass another 40%). "
                 "The machine was shared with other jobs (nice 10), so absolute speeds are rough; the ratio is "
                 "measured within the run.\n"),
                markdown_table(["model", "file", "parsing grammar", "sentences", "words", *timed, "same trees",
                                "mpd sent/s"], rows)]
        write_section(args.section, "\n".join(body))
        print(f"wrote the {args.section} section of benchmarks/RESULTS.md")


if __name__ == "__main__":
    main()
