"""The stsg plugin's hook implementations: the `stsg` formalism (`treegram train stsg`), `treegram compress` and
`treegram eval-compression`."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import attrs

from treegram.cli.argtypes import open_probability, positive_float, positive_int
from treegram.cli import argtypes
from treegram.errors import InputError
from treegram.formalism import Formalism, option
from treegram.plugin_manager import hookimpl


@attrs.frozen
class STSGOptions:
    """`treegram train stsg` options (the settings fields are the command-line options; see treegram.formalism)."""

    pairs: list = option(required=True, nargs=2, metavar=("SRC", "TGT"), type=Path,
                         help="line-parallel files: long sentences and their compressions, one tokenized "
                              "sentence per line")
    parser: Path = option(required=True, type=Path,
                          help="a treegram parsing model (pcfg, tsg, ...) for the source sentences")
    method: str = option("gibbs", choices=("gibbs", "em", "vb", "svm", "mcdonald"),
                         help="gibbs: Bayesian STSG (default); em / vb: fixed-grammar baselines; svm: large-margin "
                              "STSG (Cohn & Lapata 2007); mcdonald: McDonald (2006) word-deletion labelling")
    iterations: int | None = option(None, type=positive_int,
                                    help="Gibbs sweeps (annealed T 5 -> 0; default 5000), EM/VB iterations "
                                         "(default 30) or SVM cutting-plane passes (default 50)")
    alpha: float = option(100.0, help="DP concentration (default 100)", type=positive_float)
    beta: float = option(0.1, help="expansion probability of the base (default 0.1)", type=open_probability)
    limit: int | None = option(None, help="use only the first N pairs", type=positive_int)
    parse_cache: Path | None = option(None, type=Path,
                                      help="directory for cached source parses (bracket files keyed by input + "
                                           "parser)")
    loss: str = option("bp2", choices=("prec", "bp1", "bp2", "hamming"), group="svm",
                       help="svm: loss of the loss-augmented decoding: 1 - unigram precision (prec), times the "
                            "one-sided (bp1) or two-sided (bp2, default) brevity penalty, or the Hamming loss")
    C: float = option(0.01, type=positive_float, group="svm",
                      help="svm: regularisation trade-off C of 1/2|w|^2 + C/n sum xi (default 0.01, as the paper; best "
                           "of 0.01-100 on held-out training pairs: benchmarks/RESULTS.md stsg-svm-select)")
    rescaling: str = option("slack", choices=("slack", "margin"), group="svm",
                            help="svm: slack (default, as the paper) or margin rescaling of the loss")
    epsilon: float = option(0.01, type=positive_float, group="svm",
                            help="svm: add a constraint when it is violated by more than this (default 0.01)")
    checkpoint: Path | None = option(None, type=Path, help="checkpoint file (Gibbs sweeps, SVM passes)")
    resume: bool = option(False, help="continue from --checkpoint if it exists")
    epochs: int = option(10, type=positive_int, group="mcdonald",
                         help="passes over the training pairs (--method mcdonald; default 10)")
    update: str = option("mira", choices=("mira", "perceptron"), group="mcdonald",
                         help="1-best MIRA (default) or the averaged perceptron (--method mcdonald)")
    mira_c: float = option(1.0, type=positive_float, group="mcdonald",
                           help="largest MIRA step (--method mcdonald; default 1)")


class STSGFormalism(Formalism):
    name = "stsg"
    description = ("Bayesian synchronous TSG for extractive sentence compression (Gibbs; em / vb baselines; svm: "
                   "large-margin STSG; mcdonald: McDonald 2006)")
    trains_on = "pairs"
    Settings = STSGOptions

    def train(self, corpus, options: STSGOptions, ctx):
        from treegram.formalism import load_model

        from treegram.plugins.stsg.align import alignment_report, read_pairs
        from treegram.plugins.stsg.compressor import train_stsg
        from treegram.plugins.stsg.treeprep import model_fingerprint

        ui = ctx.ui
        if not options.parser.is_file():
            raise InputError(f"{options.parser}: parser model not found",
                             hint="train one first, e.g. `treegram train pcfg --treebank ... --out pcfg.model`")
        parser = load_model(options.parser)
        if not hasattr(parser, "parse"):
            raise InputError(f"{options.parser}: a {parser.formalism} model cannot parse sentences",
                             hint="pass a parsing model (pcfg, tsg, tig, ostag)")
        pairs = read_pairs(options.pairs[0], options.pairs[1], text_alignment=True,
                           lines=slice(0, options.limit) if options.limit else None)
        rep = alignment_report(pairs)
        ui.note(f"read {rep['pairs']} pairs ({rep['pure_deletion']} pure deletions, {rep['non_deletion']} projected "
                f"onto their longest common subsequence); gold compression rate {rep['compression_rate']}%")
        if options.method == "mcdonald":
            from treegram.plugins.stsg.mcdonald import train_mcdonald

            return train_mcdonald(pairs, parser, epochs=options.epochs, update=options.update, C=options.mira_c,
                                  seed=ctx.seed, parser_id=model_fingerprint(options.parser),
                                  cache_dir=options.parse_cache, ui=ui)
        return train_stsg(pairs, parser, method=options.method, iterations=options.iterations, alpha=options.alpha,
                          beta=options.beta, seed=ctx.seed, parser_id=model_fingerprint(options.parser),
                          cache_dir=options.parse_cache, checkpoint=options.checkpoint, resume=options.resume, ui=ui,
                          **({"loss": options.loss, "C": options.C, "rescaling": options.rescaling,
                              "epsilon": options.epsilon} if options.method == "svm" else {}))

    def load_model(self, meta, arrays):
        from treegram.plugins.stsg.compressor import STSGModel

        if meta.get("kind") == "mcdonald":
            from treegram.plugins.stsg.mcdonald import McDonaldModel

            return McDonaldModel.from_bundle(meta, arrays)
        if meta.get("kind") == "svm":
            from treegram.plugins.stsg.largemargin import SVMSTSGModel

            return SVMSTSGModel.from_bundle(meta, arrays)
        return STSGModel.from_bundle(meta, arrays)


# -- treegram compress -------------------------------------------------------------------------------------------

def _configure_compress(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", required=True, type=Path, help="a model from `treegram train stsg`")
    p.add_argument("--input", default="-",
                   help="file with one tokenized sentence per line, a sentence given as text, or - for stdin")
    p.add_argument("--out", default=None, help="write one tokenized compression per line (aligned with the input), "
                                               "each as soon as it is computed")
    p.add_argument("--rate", type=argtypes.probability, default=None,
                   help="target share of kept words, e.g. 0.7 (searches the per-word reward per sentence)")
    p.add_argument("--reward", type=argtypes.finite_float, default=0.0,
                   help="log-scale reward per kept word: > 0 longer, < 0 shorter output (default 0)")
    p.add_argument("--resume", action="store_true",
                   help="continue an interrupted run: keep the lines already in --out and compress the rest")
    p.add_argument("--encoding", type=argtypes.encoding, default=None, help="input encoding (default UTF-8)")
    p.add_argument("--json", action="store_true", help="machine-readable JSON on stdout")


def _input_lines(value: str, encoding: str | None = None):
    """The input sentences, streamed (a file or stdin), or the argument itself as one sentence."""
    from treegram.io import iter_lines

    if value == "-" or Path(value).is_file():
        return iter_lines(value, encoding=encoding)
    if " " not in value.strip() and ("/" in value or value.endswith((".txt", ".tok"))):
        raise InputError(f"{value}: input file not found",
                         hint="give an existing file, - for stdin, or the sentence itself in quotes")
    return iter([value])


def _run_compress(args: argparse.Namespace, ui) -> int:
    import itertools
    import json

    from treegram.formalism import load_model
    from treegram.io import count_lines, open_output

    if args.resume and not args.out:
        raise InputError("--resume needs --out FILE", hint="resume continues the file an interrupted run wrote")
    model = load_model(args.model)
    if model.formalism != "stsg":
        raise InputError(f"{args.model}: a {model.formalism} model cannot compress sentences",
                         hint="train one with `treegram train stsg`")
    lines = _input_lines(args.input, args.encoding)
    first = next(lines, None)
    if first is None:
        raise InputError(f"{'stdin' if args.input == '-' else args.input}: no sentences (the input is empty)",
                         hint="give one tokenized sentence per line")
    counts = {"ok": 0, "failed": 0, "too_long": 0, "empty": 0}
    parse_s = decode_s = 0.0
    seen = 0
    terminal = ui.out.is_terminal
    from treegram.cli.ui import escape

    with open_output(args.out or "-", resume=args.resume) as sink:
        skip = sink.done
        if args.json:
            sys.stdout.write('{"sentences": [')
        total = count_lines(args.input) if args.input != "-" and Path(args.input).is_file() else None
        for lineno, line in enumerate(ui.track(itertools.chain([first], lines), total=total,
                                               description="compressing"), 1):
            seen = lineno
            if lineno <= skip:
                continue
            tokens = line.split()
            if not tokens:
                counts["empty"] += 1
                r = {"line": lineno, "status": "empty", "input": "", "compression": "", "keep": [], "rate": None,
                     "tree": ""}
            else:
                t0 = time.perf_counter()
                tree, status = model.source_tree(tokens)
                t1 = time.perf_counter()
                comp = model.compress_tree(tree, tokens, rate=args.rate, reward=args.reward)
                t2 = time.perf_counter()
                parse_s += t1 - t0
                decode_s += t2 - t1
                counts[status] += 1
                r = {"line": lineno, "status": status, "input": " ".join(tokens),
                     "compression": " ".join(comp.compressed), "keep": [bool(k) for k in comp.keep],
                     "rate": round(comp.rate, 4), "tree": comp.tree.to_bracket() if comp.tree is not None else ""}
            if args.json:
                sys.stdout.write(("" if lineno == skip + 1 else ",") + "\n  " + json.dumps(r, ensure_ascii=False))
                if args.out:
                    sink.write_line(r["compression"])
            elif args.out or not terminal:  # a file, or piped: plain compressions, one per line
                sink.write_line(r["compression"])
            else:
                words = r["input"].split()
                ui.print(" ".join(escape(w) if k else f"[strike dim]{escape(w)}[/]"
                                  for w, k in zip(words, r["keep"])), highlight=False)
        done = seen - skip - counts["empty"]
        summary = {"sentences": seen - skip, **counts,
                   "sentences_per_second": round(done / (parse_s + decode_s), 2) if done and parse_s + decode_s
                   else None,
                   "sentences_per_second_without_parsing": round(done / decode_s, 2) if done and decode_s else None}
        if args.json:
            sys.stdout.write("\n], \"summary\": " + json.dumps(summary) + "}\n")
            sys.stdout.flush()
    ui.note(f"compressed {done} sentences ({summary['sentences_per_second']} sentences/s with parsing, "
            f"{summary['sentences_per_second_without_parsing']} without); flat fallback trees: {counts['failed']} "
            f"unparseable, {counts['too_long']} longer than 100 words; {counts['empty']} empty lines left empty")
    return 0


# -- treegram eval-compression -----------------------------------------------------------------------------------

def _configure_eval(p: argparse.ArgumentParser) -> None:
    p.add_argument("--source", required=True, type=Path, help="source sentences, one tokenized sentence per line")
    p.add_argument("--gold", required=True, nargs="+", type=Path, help="gold compressions (one file per annotator)")
    p.add_argument("--system", required=True, nargs="+", metavar="NAME=FILE",
                   help="system outputs, line-parallel with --source (the first is compared with the others)")
    p.add_argument("--lines", default=None, type=argtypes.line_range,
                   help="evaluate only lines A-B (1-based, inclusive), e.g. 1001-1170")
    p.add_argument("--no-rel", action="store_true", help="skip relational F1 (no spaCy needed)")
    p.add_argument("--trials", type=argtypes.positive_int, default=10000, help="approximate randomization trials (default 10000)")
    p.add_argument("--json", action="store_true", help="machine-readable JSON on stdout")


def evaluate_files(source: Path, golds: list[Path], systems: dict[str, Path], *, lines: slice | None = None,
                   rel: bool = True, trials: int = 10000) -> dict:
    from treegram.plugins.stsg.align import read_pairs
    from treegram.plugins.stsg.evaluate import DependencyScorer, compare_systems, score_system

    gold_pairs = [read_pairs(source, g, text_alignment=True, lines=lines) for g in golds]
    ref = [p.line for p in gold_pairs[0]]
    sources = [p.source for p in gold_pairs[0]]
    scorer = DependencyScorer() if rel else None
    out: dict = {"sentences": len(sources), "gold_non_deletion": [sum(not p.pure_deletion for p in gp)
                                                                  for gp in gold_pairs], "systems": {}}
    if scorer:
        out["versions"] = scorer.versions
    gold_keeps = [[p.keep for p in gp] for gp in gold_pairs]
    items = {}
    for name, path in systems.items():
        sp = read_pairs(source, path, text_alignment=True, lines=lines)
        if [p.line for p in sp] != ref:
            raise InputError(f"{path}: not line-parallel with {source}", hint="one compression per source line")
        summary, its = score_system(sources, [p.keep for p in sp], gold_keeps, scorer)
        summary["non_deletion_outputs"] = sum(not p.pure_deletion for p in sp)
        out["systems"][name] = summary
        items[name] = its
    names = list(systems)
    out["significance"] = {f"{names[0]} vs {n}": compare_systems(items[names[0]], items[n], trials=trials)
                           for n in names[1:]}
    return out


def _parse_lines(value: tuple[int, int] | None) -> slice | None:
    """`--lines` (already checked by `argtypes.line_range`) as a slice."""
    return None if value is None else slice(value[0] - 1, value[1])


def _run_eval(args: argparse.Namespace, ui) -> int:
    systems = {}
    for spec in args.system:
        name, sep, path = spec.partition("=")
        if not sep:
            name, path = Path(spec).stem, spec
        systems[name] = Path(path)
    res = evaluate_files(args.source, args.gold, systems, lines=_parse_lines(args.lines), rel=not args.no_rel,
                         trials=args.trials)
    if args.json:
        ui.emit_json(res)
        return 0
    cols = ["system", "CompR", "token P", "token R", "token F1"] + ([] if args.no_rel else ["RelP", "RelR", "RelF1"])
    rows = []
    for name, s in res["systems"].items():
        row = [name, s["compression_rate"], s["token_precision"], s["token_recall"], s["token_f1"]]
        if not args.no_rel:
            row += [s["rel_precision"], s["rel_recall"], s["rel_f1"]]
        rows.append(row)
    ui.table(f"compression scores, {res['sentences']} sentences, averaged over {len(args.gold)} annotator(s)",
             cols, rows)
    if len(args.gold) > 1:
        per = []
        for name, s in res["systems"].items():
            for r in s["per_annotator"]:
                per.append([name, r["annotator"], r["token_f1"]] + ([] if args.no_rel else [r["rel_f1"]]))
        ui.table("per annotator", ["system", "annotator", "token F1"] + ([] if args.no_rel else ["RelF1"]), per)
    if res["significance"]:
        ui.table("approximate randomization (pooled over annotators)", ["comparison", "metric", "difference", "p"],
                 [(k, m, v["difference"], f"{v['p_value']:.4f}") for k, d in res["significance"].items()
                  for m, v in d.items()])
    return 0


@hookimpl
def register_formalisms(register):
    register(STSGFormalism())


@hookimpl
def register_commands(register):
    from treegram.cli.commands import Command

    register(Command("compress", "compress tokenized sentences with an STSG model (deleted words struck through)",
                     _configure_compress, _run_compress))
    register(Command("eval-compression", "compression rate, token F1 and relational F1 against gold compressions",
                     _configure_eval, _run_eval))
