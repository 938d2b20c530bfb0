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
import importlib.util
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _results import ROOT, machine_line, markdown_table, require_shared, write_section  # noqa: E402

SECTION = "ostag-parse-speed"
#: (source file, function, modules whose attribute of that name is replaced by the baseline's)
SWAPS = [("core/grammar/closure.py", "compute_unary_closure", ["treegram.grammar.closure", "treegram.grammar.cfg"])]


def load_baseline(ref: str, tmp: Path) -> dict:
    """{(module, name): baseline function} for every entry of SWAPS, compiled from the baseline's sources."""
    out = {}
    for i, (path, fn, targets) in enumerate(SWAPS):
        src = subprocess.run(["git", "-C", str(ROOT), "show", f"{ref}:{path}"], check=True, capture_output=True,
                             text=True).stdout
        mod_name = f"_baseline_{i}_{Path(path).stem}"
        f = tmp / f"{mod_name}.py"
        f.write_text(src, encoding="utf-8")
        spec = importlib.util.spec_from_file_location(mod_name, f)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[mod_name] = mod
        spec.loader.exec_module(mod)
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tsg", required=True, help="the source TSG model")
    ap.add_argument("--ostag", required=True, help="the OSTAG model (`train ostag --from-tsg TSG` defaults)")
    ap.add_argument("--build", action="store_true", help="train --ostag from --tsg if it does not exist")
    ap.add_argument("--sentences", type=int, default=30, help="the first N ptb-sample dev sentences")
    ap.add_argument("--chunks", type=int, default=3, help="alternate before/after over this many chunks")
    ap.add_argument("--baseline", default="main", help="git ref whose SWAPS functions are the 'before'")
    ap.add_argument("--write", action="store_true", help=f"rewrite the {SECTION} section of RESULTS.md")
    args = ap.parse_args()

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
    dev = [t.leaves() for t in read_treebank([shared / "ptb-sample" / "dev"])][: args.sentences]
    words = sum(len(s) for s in dev)
    base_commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", args.baseline], check=True,
                                 capture_output=True, text=True).stdout.strip()
    rows, stage_rows, results = [], {}, {}
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
    ratio = {k: results["OSTAG3"]["secs"][k] / results["TSG"]["secs"][k] for k in ("before", "after")}
    print(f"OSTAG3 / TSG CPU time: before {ratio['before']:.2f}x, after {ratio['after']:.2f}x")
    cols = [("TSG", "after"), ("OSTAG3", "before"), ("OSTAG3", "after")]
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
    print(markdown_table(["stage (CPU s)", "TSG", "OSTAG3 before", "OSTAG3 after"], srows))
    if args.write:
        cmd = (f"nice -n 10 python benchmarks/bench_ostag_speed.py --tsg {args.tsg} --ostag {args.ostag}"
               + (" --build" if args.build else "") + f" --sentences {args.sentences} --chunks {args.chunks}"
               f" --baseline {args.baseline}")
        body = ["## OSTAG3-from-TSG parsing speed: where the time goes, before / after (issue 16)\n",
                f"Command: `{cmd}` (baseline {args.baseline} = {base_commit}) — {machine_line()}.\n",
                "Models: the source TSG = `treegram train tsg --treebank ptb-sample/train --seed 1` (shipped defaults), "
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
                "Where the time goes (CPU s over all N sentences, share of the model's total; exclusive of the "
                "other stages; `stage_timer` in the script):\n",
                markdown_table(["stage", "TSG", "OSTAG3 before", "OSTAG3 after"], srows)]
        write_section(SECTION, "\n".join(body))
        print(f"wrote the {SECTION} section of benchmarks/RESULTS.md")


if __name__ == "__main__":
    main()
