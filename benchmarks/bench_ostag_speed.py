"""OSTAG3-from-TSG parsing speed (issue 16, "speed kept"): where `treegram parse` spends its time on the shipped
`train ostag --from-tsg` model and on the TSG it was built from, and sentences per CPU second with the current code
and with a baseline commit's, in the same process, alternating, on the same dev sentences, with the trees compared.

Both models are parsed as `treegram parse` parses them (their saved default decoder, `maxrule`).  The baseline's
versions of the functions in `SWAPS` are compiled from `git show REF:path` into side modules and swapped in for the
"before" runs (everything else is shared).  Stages are CPU seconds (process_time) accumulated by wrappers around the
pipeline's functions, exclusive of the wrapped functions they call (`stage_timer`):

    coarse PCFG pass (mask)          the treebank PCFG's inside + outside, for coarse-to-fine pruning (TSG and OSTAG)
    OSTAG coarse grammar build       the site-agnostic coarse grammar of the sentence's usable nodes (restrict.py)
    OSTAG coarse chart               its inside + outside under the mask: which nodes / spines / sites are alive
    OSTAG exact reduction build/trim the sentence's exact CFG (pairs of spine nodes x adjunction sites), trimmed
    unary closure + indexes          `WeightedCFG.index` of a per-sentence grammar (OSTAG coarse or exact; the TSG's
                                     is built once per model, at the warm-up sentence)
    fine inside / outside + rule posteriors / max-rule CKY / back-transform    the decoder on the fine grammar

Models: the source TSG is `treegram train tsg --treebank ptb-sample/train --seed 1` (shipped defaults), the OSTAG
`treegram train ostag --from-tsg TSG --treebank ptb-sample/train --seed 1` (shipped defaults: base route, P_adj
0.01, 0 EM, the TSG's pruning 1e-5); `--build` trains the OSTAG from --tsg if --ostag does not exist yet.

    nice -n 10 python benchmarks/bench_ostag_speed.py --tsg TSG.model --ostag OSTAG.model --build --sentences 30 \
        --baseline main --write

`--write` rewrites the `ostag-parse-speed` section of benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _results import ROOT, machine_line, markdown_table, module_at, require_shared, write_section  # noqa: E402

SECTION = "ostag-parse-speed"
#: (source file, function, modules whose attribute of that name is replaced by the baseline's)
SWAPS = [("core/grammar/closure.py", "compute_unary_closure", ["treegram.grammar.closure", "treegram.grammar.cfg"])]


def load_baseline(ref: str, tmp: Path) -> dict:
    """{(module, name): baseline function} for every entry of SWAPS, compiled from the baseline's sources."""
    out = {}
    for i, (path, fn, targets) in enumerate(SWAPS):
        mod = module_at(ref, path, f"_baseline_{i}_{Path(path).stem}", tmp)
        for t in targets:
            out[(t, fn)] = getattr(mod, fn)
    return out


@contextmanager
def swapped(baseline: dict | None):
    """The baseline's functions in place of the current ones (None: the current code)."""
    import importlib

    saved = []
    for (modname, fn), f in (baseline or {}).items():
        mod = importlib.import_module(modname)
        saved.append((mod, fn, getattr(mod, fn)))
        setattr(mod, fn, f)
    try:
        yield
    finally:
        for mod, fn, f in saved:
            setattr(mod, fn, f)


@contextmanager
def stage_timer(model):
    """Yields {stage: CPU seconds} filled while the block runs: wrappers around the pipeline's functions record the
    time spent in each, exclusive of the other wrapped functions it calls (see the module docstring)."""
    import treegram.charts as charts
    import treegram.charts.decoders as dec
    from treegram.grammar.cfg import WeightedCFG

    acc: dict[str, float] = {}
    stack: list[list] = []

    def wrap(fn, label):
        def inner(*a, **k):
            lab = label(stack) if callable(label) else label
            frame = [lab, 0.0]
            stack.append(frame)
            t0 = time.process_time()
            try:
                return fn(*a, **k)
            finally:
                el = time.process_time() - t0
                stack.pop()
                acc[lab] = acc.get(lab, 0.0) + el - frame[1]
                if stack:
                    stack[-1][1] += el
        return inner

    def closure_label(st):
        coarse = any(f[0].startswith("OSTAG coarse chart") for f in st)
        return f"unary closure + indexes ({'OSTAG coarse' if coarse else 'fine'} grammar)"

    patches = [(charts, "coarse_to_fine_mask", "coarse PCFG pass (mask)"),
               (dec, "_inside_chart", "fine inside"),
               (dec, "rule_posteriors", "fine outside + rule posteriors"),
               (dec, "_maxrule_cky", "max-rule CKY"),
               (type(model), "category_tree", "back-transform"),
               (WeightedCFG, "_build_index", closure_label)]
    if getattr(model, "formalism", "") == "ostag":
        from treegram.plugins.ostag import grammar, restrict
        from treegram.plugins.ostag import model as omod

        patches += [(restrict, "coarse_grammar", "OSTAG coarse grammar build"),
                    (restrict, "coarse_filter", "OSTAG coarse chart (inside + outside)"),
                    (grammar.OSTAG, "build_cfg", "OSTAG exact reduction build"),
                    (omod.OSTAGModel, "_trimmed", "OSTAG exact reduction trim")]
    saved = [(owner, name, getattr(owner, name)) for owner, name, _ in patches]
    for owner, name, label in patches:
        setattr(owner, name, wrap(getattr(owner, name), label))
    try:
        yield acc
    finally:
        for owner, name, fn in saved:
            setattr(owner, name, fn)


def run(model, sentences) -> tuple[float, list[str], dict[str, float]]:
    """(CPU seconds, bracketed trees, stage seconds) of parsing `sentences` as `treegram parse` does."""
    from treegram.charts.decoders import parse_default
    from treegram.errors import ParseFailure

    parse = parse_default(model)
    trees = []
    with stage_timer(model) as stages:
        t0 = time.process_time()
        for tokens in sentences:
            try:
                trees.append(parse(list(tokens)).to_bracket())
            except ParseFailure:
                trees.append("(failed)")
        secs = time.process_time() - t0
    return secs, trees, dict(stages)


def prune_variant(name: str, model, dev, gold, trees: list[str], secs: float, threshold: float) -> list:
    """Row: `model` parsed again with coarse-to-fine threshold `threshold` (current code): speed, changed trees and
    bracket F1 on these sentences against the run with the model's saved threshold."""
    import attrs

    from treegram.evaluation.parseval import ParsevalParams, score_corpus
    from treegram.trees import parse_brackets

    if getattr(model, "formalism", "") == "ostag":
        saved = model.settings.prune_threshold
        model.settings = attrs.evolve(model.settings, prune_threshold=threshold)
    else:
        saved = model.prune_threshold
        model.prune_threshold = threshold
    try:
        run(model, dev[:1])
        s_, t, _st = run(model, dev)
    finally:
        if getattr(model, "formalism", "") == "ostag":
            model.settings = attrs.evolve(model.settings, prune_threshold=saved)
        else:
            model.prune_threshold = saved

    def f1(out: list[str]) -> float:
        parsed = [parse_brackets(b, source="bench")[0] if b != "(failed)" else None for b in out]
        from treegram.formalism import flat_fallback

        parsed = [p if p is not None else flat_fallback(w) for p, w in zip(parsed, dev)]
        return round(score_corpus(gold, parsed, ParsevalParams()).f1, 2)

    row = [name, f"{saved:g}", round(len(dev) / secs, 3), round(len(dev) / s_, 3), round(secs / s_, 2),
           f"{sum(a != b for a, b in zip(trees, t))}/{len(dev)}", f1(trees), f1(t)]
    print(row, flush=True)
    return row


def tradeoff(specs: list[str], threshold: float, sentences: int, write: bool) -> None:
    """`--tradeoff`: each NAME=PATH model parsed on the first N dev sentences with its saved coarse-to-fine threshold
    and with `threshold` (current code): CPU sent/s, bracket F1 all / <= 40, exact match, trees changed, and the
    paired approximate randomization p-value (10,000 trials) of the F1 difference.  Section `ostag-prune-tradeoff`."""
    import attrs
    import numpy as np

    from treegram.evaluation.parseval import ParsevalParams, score_corpus
    from treegram.evaluation.significance import approximate_randomization, parseval_f1
    from treegram.formalism import flat_fallback, load_model
    from treegram.trees import parse_brackets, read_treebank

    shared = require_shared()
    gold = read_treebank([shared / "ptb-sample" / "dev"])[:sentences]
    dev = [t.leaves() for t in gold]
    rows = []
    for spec in specs:
        name, path = spec.split("=", 1)
        model = load_model(path)
        saved = model.settings.prune_threshold
        out = {}
        for t in (saved, threshold):
            model.settings = attrs.evolve(model.settings, prune_threshold=t)
            run(model, dev[:1])
            secs, trees, _st = run(model, dev)
            parsed = [flat_fallback(w) if b == "(failed)" else parse_brackets(b, source="bench")[0]
                      for b, w in zip(trees, dev)]
            res = score_corpus(gold, parsed, ParsevalParams())
            counts = np.array([[x.matched, x.gold_brackets, x.test_brackets] if x.counted else [0, 0, 0]
                               for x in res.sentences], float)
            out[t] = (secs, trees, res, score_corpus(gold, parsed, ParsevalParams(max_length=40)), counts)
        (s0, t0, r0, l0, c0), (s1, t1, r1, l1, c1) = out[saved], out[threshold]
        p = approximate_randomization(c1, c0, metric=parseval_f1, trials=10000, rng=1).p_value
        row = [name, len(dev), f"{saved:g}", f"{threshold:g}", round(len(dev) / s0, 3), round(len(dev) / s1, 3),
               round(s0 / s1, 2), f"{sum(a != b for a, b in zip(t0, t1))}/{len(dev)}", round(r0.f1, 2),
               round(r1.f1, 2), round(l0.f1, 2), round(l1.f1, 2), round(r0.exact, 2), round(r1.exact, 2),
               round(r1.f1 - r0.f1, 2), round(p, 3)]
        print(row, flush=True)
        rows.append(row)
        del model
    if write:
        cmd = (f"nice -n 10 python benchmarks/bench_ostag_speed.py --tradeoff {threshold:g} "
               + " ".join(f"--extra '{e}'" for e in specs) + f" --sentences {sentences} --write")
        body = ["## OSTAG3-from-TSG: coarse-to-fine threshold, speed vs accuracy (issue 16; not shipped)\n",
                f"Command: `{cmd}` — {machine_line()}.\n",
                "The shipped `--from-tsg` OSTAG3 (base route, P_adj 0.01, 0 EM) inherits the TSG's pruning threshold "
                "1e-5; here each model is parsed on the first N ptb-sample dev sentences with that threshold and with "
                "a coarser one (current code, maxrule, CPU seconds). F1 = bracket F1 (all / <= 40 words); p = paired "
                "approximate randomization, 10,000 trials. A coarser threshold changes trees (unlike the exact "
                "changes of the `ostag-parse-speed` section); whether to ship it is a defaults decision.\n",
                markdown_table(["model", "sentences", "saved threshold", "new threshold", "sent/s saved",
                                "sent/s new", "speed-up", "trees changed", "F1 saved", "F1 new", "F1<=40 saved",
                                "F1<=40 new", "exact saved", "exact new", "F1 new - saved", "p"], rows)]
        write_section("ostag-prune-tradeoff", "\n".join(body))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tsg", help="the source TSG model (required unless --tradeoff)")
    ap.add_argument("--ostag", help="the OSTAG model (`train ostag --from-tsg TSG` defaults; required unless "
                                    "--tradeoff)")
    ap.add_argument("--build", action="store_true", help="train --ostag from --tsg if it does not exist")
    ap.add_argument("--extra", action="append", default=[], metavar="NAME=PATH",
                    help="another model to time with the current code only (stages too), e.g. the no-aux control")
    ap.add_argument("--prune-variant", type=float, default=None, metavar="T",
                    help="also time TSG and OSTAG3 (current code) with coarse-to-fine threshold T instead of their "
                         "saved one, and count the trees that change (a speed / accuracy trade-off, not exact)")
    ap.add_argument("--sentences", type=int, default=30, help="the first N ptb-sample dev sentences")
    ap.add_argument("--chunks", type=int, default=3, help="alternate before/after over this many chunks")
    ap.add_argument("--baseline", default="main", help="git ref whose SWAPS functions are the 'before'")
    ap.add_argument("--write", action="store_true", help=f"rewrite the {SECTION} section of RESULTS.md")
    ap.add_argument("--tradeoff", type=float, default=None, metavar="T",
                    help="only: parse each --extra OSTAG model with its saved threshold and with T on the first N "
                         "dev sentences (F1, p-value, speed; section ostag-prune-tradeoff)")
    args = ap.parse_args()
    if args.tradeoff is not None:
        tradeoff(args.extra, args.tradeoff, args.sentences, args.write)
        return
    if not (args.tsg and args.ostag):
        ap.error("--tsg and --ostag are required (unless --tradeoff)")

    from treegram.formalism import load_model
    from treegram.trees import read_treebank

    shared = require_shared()
    ostag_path = Path(args.ostag)
    train_cmd = ["treegram", "train", "ostag", "--from-tsg", args.tsg, "--treebank",
                 str(shared / "ptb-sample" / "train"), "--seed", "1", "--out", str(ostag_path)]
    if not ostag_path.exists():
        if not args.build:
            sys.exit(f"{ostag_path} does not exist: pass --build to train it from --tsg")
        from treegram.cli.app import main as treegram_main

        if treegram_main(["-q", *train_cmd[1:]]) != 0:
            sys.exit(f"{' '.join(train_cmd)} failed")
    gold = read_treebank([shared / "ptb-sample" / "dev"])[: args.sentences]
    dev = [t.leaves() for t in gold]
    words = sum(len(s) for s in dev)
    base_commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", args.baseline], check=True,
                                 capture_output=True, text=True).stdout.strip()
    rows, stage_rows, results, prune_rows = [], {}, {}, []
    with tempfile.TemporaryDirectory() as tmp:
        baseline = load_baseline(args.baseline, Path(tmp))
        for name, path in (("TSG", args.tsg), ("OSTAG3", str(ostag_path))):
            model = load_model(path)
            for which in (baseline, None):  # warm-up (numba compiles, per-model indexes) outside the timing
                with swapped(which):
                    run(model, dev[:1])
            secs = {"before": 0.0, "after": 0.0}
            trees: dict[str, list[str]] = {"before": [], "after": []}
            stages: dict[str, dict[str, float]] = {"before": {}, "after": {}}
            size = max(1, -(-len(dev) // args.chunks))
            for lo in range(0, len(dev), size):  # alternate (the machine's load drifts)
                for label, which in (("before", baseline), ("after", None)):
                    with swapped(which):
                        s, t, st = run(model, dev[lo:lo + size])
                    secs[label] += s
                    trees[label] += t
                    for k, v in st.items():
                        stages[label][k] = stages[label].get(k, 0.0) + v
            same = sum(a == b for a, b in zip(trees["before"], trees["after"]))
            results[name] = {"secs": secs, "trees": trees, "stages": stages}
            if args.prune_variant is not None:
                prune_rows.append(prune_variant(name, model, dev, gold, trees["after"], secs["after"],
                                                args.prune_variant))
            row = [name, Path(path).name, len(dev), words, round(secs["before"], 1), round(secs["after"], 1),
                   round(len(dev) / secs["before"], 3), round(len(dev) / secs["after"], 3),
                   round(secs["before"] / secs["after"], 2), f"{same}/{len(dev)}"]
            print(row, flush=True)
            rows.append(row)
            for label in ("before", "after"):
                for k, v in stages[label].items():
                    stage_rows.setdefault(k, {})[(name, label)] = v
                stage_rows.setdefault("other (loop, glue)", {})[(name, label)] = (
                    secs[label] - sum(stages[label].values()))
            del model
        extra_rows = []
        for spec in args.extra:  # current code only: where the time goes in related models
            name, path = spec.split("=", 1)
            model = load_model(path)
            run(model, dev[:1])
            s_, _t, st = run(model, dev)
            results[name] = {"secs": {"after": s_}, "stages": {"after": st}}
            for k, v in st.items():
                stage_rows.setdefault(k, {})[(name, "after")] = v
            stage_rows.setdefault("other (loop, glue)", {})[(name, "after")] = s_ - sum(st.values())
            row = [name, Path(path).name, round(s_, 1), round(len(dev) / s_, 3),
                   round(s_ / results["TSG"]["secs"]["after"], 2)]
            print(row, flush=True)
            extra_rows.append(row)
            del model
    ratio = {k: results["OSTAG3"]["secs"][k] / results["TSG"]["secs"][k] for k in ("before", "after")}
    print(f"OSTAG3 / TSG CPU time: before {ratio['before']:.2f}x, after {ratio['after']:.2f}x")
    cols = [("TSG", "after"), ("OSTAG3", "before"), ("OSTAG3", "after")] + [
        (spec.split("=", 1)[0], "after") for spec in args.extra]
    heads = ["TSG", "OSTAG3 before", "OSTAG3 after"] + [spec.split("=", 1)[0] for spec in args.extra]
    order = sorted(stage_rows, key=lambda k: -stage_rows[k].get(("OSTAG3", "after"), 0.0))
    srows = []
    for k in order:
        cells = []
        for c in cols:
            v = stage_rows[k].get(c, 0.0)
            tot = results[c[0]]["secs"][c[1]]
            cells.append(f"{v:.2f} ({100 * v / tot:.0f}%)" if v else "-")
        srows.append([k, *cells])
    srows.append(["total", *[f"{results[c[0]]['secs'][c[1]]:.2f}" for c in cols]])
    print(markdown_table(["stage (CPU s)", *heads], srows))
    if args.write:
        cmd = (f"nice -n 10 python benchmarks/bench_ostag_speed.py --tsg {args.tsg} --ostag {args.ostag}"
               + (" --build" if args.build else "") + "".join(f" --extra '{e}'" for e in args.extra)
               + ("" if args.prune_variant is None else f" --prune-variant {args.prune_variant:g}")
               + f" --sentences {args.sentences} --chunks {args.chunks}"
               f" --baseline {args.baseline}")
        body = ["## OSTAG3-from-TSG parsing speed: where the time goes, before / after (issue 16)\n",
                f"Command: `{cmd}` (baseline {args.baseline} = {base_commit}) — {machine_line()}.\n",
                "Models: the source TSG = `treegram train tsg --treebank ptb-sample/train --seed 1` (shipped "
                "defaults), "
                f"OSTAG3 = `{' '.join(train_cmd)}` (shipped `--from-tsg` defaults: the TSG's base route, P_adj 0.01, "
                "0 EM, pruning 1e-5). The first N ptb-sample dev sentences, each model parsed as `treegram parse` "
                "parses it (saved default decoder: maxrule). 'before' = the baseline's "
                + ", ".join(f"`{fn}` ({path})" for path, fn, _t in SWAPS)
                + " swapped in, 'after' = the current code, alternating in one process over "
                f"{args.chunks} chunks; sent/s per CPU second after a warm-up sentence; 'same trees' = identical "
                "bracketed outputs before and after. The machine was shared with other jobs (nice 10): absolute "
                "speeds are rough, the ratios are measured within the run.\n",
                markdown_table(["model", "file", "sentences", "words", "CPU s before", "CPU s after",
                                "sent/s before", "sent/s after", "speed-up", "same trees"], rows),
                f"\nOSTAG3 / TSG CPU time on the same sentences: {ratio['before']:.2f}x before, "
                f"{ratio['after']:.2f}x after.\n",
                *([f"Not exact, for the trade-off only: the same two models with the coarse-to-fine threshold "
                   f"{args.prune_variant:g} instead of their saved one (current code; F1 = bracket F1 on these "
                   "N sentences only, not a dev result):\n",
                   markdown_table(["model", "saved threshold", "sent/s saved", f"sent/s at {args.prune_variant:g}",
                                   "speed-up", "trees changed", "F1 saved", f"F1 at {args.prune_variant:g}"],
                                  prune_rows), ""] if prune_rows else []),
                *(["Related models, current code only (same sentences, same run):\n",
                   markdown_table(["model", "file", "CPU s", "sent/s", "CPU time / TSG's"], extra_rows), ""]
                  if extra_rows else []),
                "Where the time goes (CPU s over all N sentences, share of the model's total; exclusive of the "
                "other stages; `stage_timer` in the script):\n",
                markdown_table(["stage", *heads], srows)]
        write_section(SECTION, "\n".join(body))


if __name__ == "__main__":
    main()
