"""`treegram compress` and `treegram eval-compression`: core commands over any compressor model (the contract of
`treegram.compression.compressor`), registered through the same hook as the other core commands.

`compress` reads text as typed (`treegram.text`) or, with ``--tokenized``, one tokenized sentence per line; each
line goes through `treegram.compression.run.compress_line`, in this process or, with ``--workers`` /
``--scheduler``, in Dask batches (`treegram.compression.batch`); every sentence returned unchanged, and every rate
not met, is reported with its reason on stderr (`_Notes`) and in ``--json``.  `eval-compression` scores files of
compressions or compresses the sources with ``--model`` first.  Without ``--model`` both use the shipped default
model (`treegram.compression.default`).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

import numpy as np

from treegram import argtypes
from treegram.compression.compressor import MAX_PARSE_LENGTH, RATE_TOLERANCE, rate_window
from treegram.errors import InputError


# -- treegram compress -------------------------------------------------------------------------------------------

def _configure_compress(p: argparse.ArgumentParser) -> None:
    p.add_argument("text", nargs="?", default=None,
                   help="the text to compress, as typed (one or more sentences); or give --input")
    p.add_argument("--model", type=Path, default=None,
                   help="a compression model (`treegram train stsg` or `treegram train channel`); default: the "
                        "model shipped with treegram")
    p.add_argument("--input", default=None,
                   help="a text file (each line: one or more sentences, as typed), - for stdin (the default when "
                        "no text is given), or the text itself")
    p.add_argument("--tokenized", action="store_true",
                   help="the input is one tokenized sentence per line (Penn Treebank tokens); the output is the "
                        "kept tokens, one sentence per line")
    p.add_argument("--out", default=None, help="write one compressed line per input line (aligned with the input), "
                                               "each as soon as it is computed")
    p.add_argument("--rate", type=argtypes.probability, default=None,
                   help="target share of kept tokens, e.g. 0.7: per sentence, the compression within "
                        "--rate-tolerance of it with the best model score (or the nearest one, with a note)")
    p.add_argument("--rate-tolerance", type=argtypes.probability, default=RATE_TOLERANCE,
                   help=f"how far from --rate a compression may be (default {RATE_TOLERANCE}; 0 = nearest)")
    p.add_argument("--strict-rate", action="store_true",
                   help="meet --rate even where the model's deletion constraints forbid every length near it (they "
                        "are then broken as little as possible, with a note); default: the nearest length they allow")
    p.add_argument("--reward", type=argtypes.finite_float, default=0.0,
                   help="log-scale reward per kept word: > 0 longer, < 0 shorter output (default 0)")
    p.add_argument("--resume", action="store_true",
                   help="continue an interrupted run: keep the lines already in --out and compress the rest")
    p.add_argument("--encoding", type=argtypes.encoding, default=None, help="input encoding (default UTF-8)")
    from treegram.cli.commands import add_batch_options

    add_batch_options(p, "compress", default_batch=50)
    p.add_argument("--json", action="store_true",
                   help="machine-readable JSON on stdout: per sentence the tokens, keep mask, rate, model score, "
                        "text and, for a sentence returned unchanged or a rate not met, a note saying why")


class _Source:
    """Where the input lines come from: a file, stdin, or the text given on the command line."""

    def __init__(self, args: argparse.Namespace, ui):
        if args.text is not None and args.input is not None:
            raise InputError("give the text or --input, not both", hint="e.g. treegram compress \"Some text.\"")
        value = args.input if args.input is not None else (args.text if args.text is not None else "-")
        self.encoding = args.encoding
        self.path: str | None = None
        self.text: str | None = None
        if args.text is None and (value == "-" or Path(value).is_file()):
            self.path = value
            if value == "-" and sys.stdin is not None and sys.stdin.isatty():
                raise InputError("no text to compress",
                                 hint='give it as an argument (treegram compress "Some text.") or --input FILE, or '
                                      "pipe it in")
        elif args.text is None and " " not in value.strip() and ("/" in value or value.endswith((".txt", ".tok"))):
            raise InputError(f"{value}: input file not found",
                             hint="give an existing file, - for stdin, or the text itself in quotes")
        else:
            self.text = value
            self._check_text(args.tokenized)

    def _check_text(self, tokenized: bool) -> None:
        from treegram.text import is_punctuation, split_sentences, tokenize

        if not self.text.strip():
            raise InputError("no text to compress (the text is empty)", hint='e.g. treegram compress "Some text."')
        line = " ".join(self.text.split("\n"))
        toks = line.split() if tokenized else [t for a, b in split_sentences(line) for t in tokenize(line[a:b])[0]]
        if all(is_punctuation(t) for t in toks):
            raise InputError(f"nothing to compress: {self.text.strip()!r} has no words, only punctuation",
                             hint="give a sentence with words")

    @property
    def name(self) -> str:
        return "stdin" if self.path == "-" else (self.path or "the text")

    def lines(self):
        from treegram.io import iter_lines

        if self.path is not None:
            return iter_lines(self.path, encoding=self.encoding)
        # text given on the command line: one line (line breaks inside it are spaces, as in a paragraph)
        return iter([" ".join(self.text.splitlines())])

    def total(self) -> int | None:
        from treegram.io import count_lines

        return count_lines(self.path) if self.path not in (None, "-") else (1 if self.text is not None else None)


class _Notes:
    """The notes of one run on stderr: every sentence returned unchanged or whose rate was not met, with the reason
    (the first `limit` one by one, then counts by reason)."""

    def __init__(self, ui, limit: int = 20):
        self.ui, self.limit, self.shown = ui, limit, 0
        self.reasons: Counter = Counter()

    def add(self, rec: dict) -> None:
        note = rec.get("note")
        if not note:
            return
        unchanged = bool(rec.get("keep")) and all(rec["keep"])
        what = "unchanged" if unchanged else f"rate {rec['rate']:.2f}"
        key = f"{what.split()[0]}: {note.split(';')[0].split(' (')[0]}"
        self.reasons[key] += 1
        if self.shown < self.limit:
            self.shown += 1
            where = f"line {rec['line']}" + (f", sentence {rec['sentence']}" if rec.get("sentence", 1) > 1 else "")
            self.ui.note(note, label=f"{where}: {what}")

    def close(self) -> None:
        rest = sum(self.reasons.values()) - self.shown
        if rest > 0:
            self.ui.note("all by reason: " + "; ".join(f"{k} x{v}" for k, v in self.reasons.most_common()),
                         label=f"and {rest} more notes;")


def _struck(rec: dict, tokenized: bool):
    """The sentence with its deleted words struck through (a rich Text, no markup), as typed."""
    from rich.text import Text

    from treegram.text import Sentence

    if tokenized:
        sent = Sentence.from_tokens(rec["tokens"])
    else:
        sent = Sentence.from_text(rec["source_text"])
    out, prev_end = Text(), 0
    for i, keep in enumerate(rec["keep"]):
        s, e = sent.spans[i]
        out.append(sent.text[prev_end:s])
        out.append(sent.text[s:e], style=None if keep else "strike dim")
        prev_end = max(prev_end, e)
    return out


def _settings(args: argparse.Namespace):
    from treegram.compression.run import CompressSettings

    return CompressSettings(rate=args.rate, reward=args.reward, tolerance=args.rate_tolerance,
                            tokenized=args.tokenized, strict_rate=args.strict_rate)


def _run_compress(args: argparse.Namespace, ui) -> int:
    import itertools
    import json

    from rich.text import Text

    from treegram.compression.default import load_compressor
    from treegram.compression.run import compress_line
    from treegram.io import open_output

    if args.resume and not args.out:
        raise InputError("--resume needs --out FILE", hint="resume continues the file an interrupted run wrote")
    if args.batch_size is not None and not (args.workers or args.scheduler):
        raise InputError("--batch-size is an option of batch compression", hint="add --workers N or --scheduler ADDRESS")
    source = _Source(args, ui)
    model, model_path = load_compressor(args.model)  # dispatch by the compressor contract, any plugin's model
    if args.workers or args.scheduler:
        return _run_compress_batches(args, ui, source, model_path)
    settings = _settings(args)
    lines = source.lines()
    first = next(lines, None)
    if first is None:
        raise InputError(f"{source.name}: no sentences (the input is empty)",
                         hint="give text, or one tokenized sentence per line with --tokenized")
    counts: Counter = Counter()
    parse_s = decode_s = 0.0
    seen = sentences = unchanged = 0
    terminal = ui.out.is_terminal
    notes = _Notes(ui)
    from rich.markup import escape

    from treegram.runstate import command_identity, run_record

    # the model (by content) and settings are recorded: --resume refuses to continue another run's output
    with run_record(args.out, command_identity(args, ignore=("text",)), resume=args.resume, note=lambda m: ui.note(escape(m))), \
            open_output(args.out or "-", resume=args.resume) as sink:
        skip = sink.done
        if args.json:
            sys.stdout.write('{"sentences": [')
        first_rec = True
        for lineno, line in enumerate(ui.track(itertools.chain([first], lines), total=source.total(),
                                               description="compressing"), 1):
            seen = lineno
            if lineno <= skip:
                continue
            res = compress_line(model, line, settings, lineno)
            parse_s += res.parse_seconds
            decode_s += res.decode_seconds
            counts.update(res.counts)
            for rec in res.records:
                if rec["status"] != "empty":
                    sentences += 1
                    unchanged += all(rec["keep"])
                notes.add(rec)
            if args.json:
                for rec in res.records:
                    sys.stdout.write(("" if first_rec else ",") + "\n  " + json.dumps(rec, ensure_ascii=False))
                    first_rec = False
                if args.out:
                    sink.write_line(res.output)
            elif args.out or not terminal:  # a file, or piped: the compressed lines
                sink.write_line(res.output)
            else:
                shown = [_struck(rec, args.tokenized) for rec in res.records if rec["status"] != "empty"]
                ui.print(Text(" ").join(shown))
        done = sum(counts[s] for s in ("ok", "failed", "too_long"))
        summary = {"lines": seen - skip, "sentences": sentences, "unchanged": unchanged,
                   **{s: counts[s] for s in ("ok", "failed", "too_long", "empty", "punctuation")},
                   "sentences_per_second": round(done / (parse_s + decode_s), 2) if done and parse_s + decode_s
                   else None,
                   "sentences_per_second_without_parsing": round(done / decode_s, 2) if done and decode_s else None}
        if args.json:
            sys.stdout.write("\n], \"summary\": " + json.dumps(summary) + "}\n")
            sys.stdout.flush()
    notes.close()
    ui.note(f"compressed {done} sentences ({summary['sentences_per_second']} sentences/s with parsing, "
            f"{summary['sentences_per_second_without_parsing']} without); {unchanged} returned unchanged; flat "
            f"fallback trees: {counts['failed']} unparseable, {counts['too_long']} longer than {MAX_PARSE_LENGTH} "
            f"tokens; {counts['empty']} empty lines left empty")
    return 0


def _run_compress_batches(args: argparse.Namespace, ui, source: _Source, model_path: Path) -> int:
    """`treegram compress --workers N | --scheduler ADDRESS`: `treegram.compression.batch` on a Dask cluster."""
    from treegram.compression.batch import compress_batches

    if not args.out:
        raise InputError("--workers/--scheduler need --out FILE",
                         hint="finished batches are kept beside the output file, so a killed run can resume")
    if source.path is None:
        raise InputError("--workers/--scheduler compress a file", hint="give --input FILE (or - for stdin)")
    from rich.markup import escape

    from treegram.runstate import command_identity, run_record

    # the same run record as the one-process path (--workers is not part of it)
    with run_record(Path(args.out), command_identity(args, ignore=("text",)), resume=args.resume,
                    note=lambda m: ui.note(escape(m))), \
            ui.task("compressing (batches on Dask)", source.total()) as advance:
        state = {"lines": 0}

        def progress(res):  # called as each batch finishes on the cluster
            state["lines"] += len(res["lines"])
            advance(len(res["lines"]), f"{state['lines']} lines")

        summary, records = compress_batches(source.path, Path(args.out), model=model_path, settings=_settings(args),
                                            batch_size=args.batch_size or 50, workers=args.workers,
                                            scheduler=args.scheduler, resume=args.resume, encoding=args.encoding,
                                            progress=progress)
    notes = _Notes(ui)
    for rec in records:
        notes.add(rec)
    notes.close()
    if args.json:
        ui.emit_json({"sentences": records, "summary": summary})
        return 0
    if summary["kept_lines"]:
        ui.note(f"resuming: {summary['kept_lines']} lines already in {args.out} kept")
    if summary["batches_resumed"]:
        ui.note(f"resumed: {summary['batches_resumed']} of {summary['batches']} batches were already finished")
    ui.note(f"compressed {summary['sentences']} sentences of {summary['new_lines']} lines on {summary['workers']} "
            f"workers in {summary['batches']} batches ({summary['sentences_per_second']:.1f} sentences/s); "
            f"{summary['unchanged']} returned unchanged; flat fallback trees: {summary['failed']} unparseable, "
            f"{summary['too_long']} longer than {MAX_PARSE_LENGTH} tokens; {summary['empty']} empty lines left empty")
    return 0


# -- treegram eval-compression -----------------------------------------------------------------------------------

def _configure_eval(p: argparse.ArgumentParser) -> None:
    p.add_argument("--source", required=True, type=Path, help="source sentences, one tokenized sentence per line")
    p.add_argument("--gold", required=True, nargs="+", type=Path, help="gold compressions (one file per annotator)")
    p.add_argument("--system", nargs="+", default=[], metavar="NAME=FILE",
                   help="system outputs, line-parallel with --source")
    p.add_argument("--model", nargs="*", default=None, metavar="[NAME=]MODEL",
                   help="compress the sources with these compression models, then score them (no value: the "
                        "model shipped with treegram, which is also what runs without --system and --model); "
                        "models come first, and the first system is compared with the others")
    p.add_argument("--rate", type=argtypes.probability, default=None,
                   help="--model: target share of kept tokens per sentence (as `treegram compress --rate`)")
    p.add_argument("--rate-tolerance", type=argtypes.probability, default=RATE_TOLERANCE,
                   help=f"--model: how far from --rate a compression may be (default {RATE_TOLERANCE})")
    p.add_argument("--strict-rate", action="store_true",
                   help="--model: meet --rate even where the deletion constraints forbid it (as `treegram compress`)")
    p.add_argument("--reward", type=argtypes.finite_float, default=0.0,
                   help="--model: log-scale reward per kept word (default 0)")
    p.add_argument("--lines", default=None, type=argtypes.line_range,
                   help="evaluate only lines A-B (1-based, inclusive), e.g. 1001-1170")
    p.add_argument("--no-rel", action="store_true", help="skip relational F1 (no spaCy needed)")
    p.add_argument("--trials", type=argtypes.positive_int, default=10000, help="approximate randomization trials (default 10000)")
    p.add_argument("--json", action="store_true", help="machine-readable JSON on stdout")


def model_keeps(model, sources: list[list[str]], settings, progress=None) -> list:
    """Keep masks of a compressor's compressions of tokenized sentences (each as `treegram compress --tokenized`
    compresses one line)."""
    from treegram.compression.run import compress_line

    out = []
    for toks in (progress(sources) if progress else sources):
        res = compress_line(model, " ".join(toks), settings)
        out.append(np.asarray(res.records[0]["keep"], dtype=bool) if toks else np.zeros(0, dtype=bool))
    return out


def evaluate_files(source: Path, golds: list[Path], systems: dict, *, lines: slice | None = None,
                   rel: bool = True, trials: int = 10000, settings=None, progress=None) -> dict:
    """Scores of systems against gold compressions of the `source` lines.  A system is a file of compressions
    (a Path, line-parallel with `source`) or a compressor model (compressed here with `settings`, a
    `treegram.compression.run.CompressSettings`; `progress(name)` wraps the iteration over the sentences)."""
    import attrs

    from treegram.compression.align import read_pairs
    from treegram.compression.evaluate import DependencyScorer, compare_systems, score_system
    from treegram.compression.run import CompressSettings

    if not systems:
        raise InputError("no systems to score", hint="give --system NAME=FILE or --model MODEL")
    gold_pairs = [read_pairs(source, g, text_alignment=True, lines=lines) for g in golds]
    ref = [p.line for p in gold_pairs[0]]
    sources = [p.source for p in gold_pairs[0]]
    if not sources:
        raise InputError(f"{source}: no sentences to score" + (" in --lines" if lines is not None else ""),
                         hint="check --source and --lines")
    scorer = DependencyScorer() if rel else None
    out: dict = {"sentences": len(sources), "gold_non_deletion": [sum(not p.pure_deletion for p in gp)
                                                                  for gp in gold_pairs], "systems": {}}
    if scorer:
        out["versions"] = scorer.versions
    gold_keeps = [[p.keep for p in gp] for gp in gold_pairs]
    items = {}
    settings = settings or CompressSettings(tokenized=True)
    for name, system in systems.items():
        if isinstance(system, (str, Path)):
            sp = read_pairs(source, system, text_alignment=True, lines=lines)
            if [p.line for p in sp] != ref:
                raise InputError(f"{system}: not line-parallel with {source}", hint="one compression per source line")
            keeps, non_deletion = [p.keep for p in sp], sum(not p.pure_deletion for p in sp)
        else:
            keeps = model_keeps(system, sources, attrs.evolve(settings, tokenized=True),
                                progress(name) if progress else None)
            non_deletion = 0
        summary, its = score_system(sources, keeps, gold_keeps, scorer)
        summary["non_deletion_outputs"] = non_deletion
        if not isinstance(system, (str, Path)) and settings.rate is not None:
            # the share of the sentences whose length allows the rate (some k/n within the tolerance) that met it
            possible = [k for k in keeps if rate_window(len(k), settings.rate, settings.tolerance)]
            summary["rate_possible"] = len(possible)
            summary["rate_met"] = round(100.0 * float(np.mean([abs(float(np.mean(k)) - settings.rate)
                                                               <= settings.tolerance + 1e-9 for k in possible])), 2) \
                if possible else None
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
    from treegram.compression.default import load_compressor
    from treegram.compression.run import CompressSettings

    systems: dict = {}
    if args.model is None:
        model_specs = [] if args.system else [None]  # neither --system nor --model: the shipped default model
    else:
        model_specs = args.model or [None]  # --model without a value: the shipped default model
    for spec in model_specs:
        if spec is None:
            name, path = "default", None
        else:
            name, sep, path = spec.partition("=")
            if not sep:
                name, path = Path(spec).stem, spec
        if name in systems:
            raise InputError(f"two systems are named {name!r}", hint="name them: --model NAME=FILE")
        systems[name] = load_compressor(Path(path) if path else None)[0]
    for spec in args.system:
        name, sep, path = spec.partition("=")
        if not sep:
            name, path = Path(spec).stem, spec
        if name in systems:
            raise InputError(f"two systems are named {name!r}", hint="name them: --system NAME=FILE")
        systems[name] = Path(path)
    settings = CompressSettings(rate=args.rate, reward=args.reward, tolerance=args.rate_tolerance, tokenized=True,
                                strict_rate=args.strict_rate)

    def progress(name):
        return lambda xs: ui.track(xs, description=f"compressing with {name}")

    res = evaluate_files(args.source, args.gold, systems, lines=_parse_lines(args.lines), rel=not args.no_rel,
                         trials=args.trials, settings=settings, progress=progress)
    if args.lines is not None:
        from treegram.io import count_lines

        (a, b), n = args.lines, count_lines(args.source)
        if n is not None and b > n:
            res["lines_scored"] = [a, n]
            ui.note(f"--lines {a}-{b}: {args.source} has only {n} lines, so lines {a}-{n} were scored "
                    f"({res['sentences']} sentences)", label="note")
    if args.json:
        ui.emit_json(res)
        return 0
    cols = ["system", "CompR", "token P", "token R", "token F1"] + ([] if args.no_rel else ["RelP", "RelR", "RelF1"])
    rows = []
    for name, s in res["systems"].items():
        row = [name, s["compression_rate"], s["token_precision"], s["token_recall"], s["token_f1"]]
        if not args.no_rel:
            row += [s["rel_precision"], s["rel_recall"], s["rel_f1"]]
        if args.rate is not None:
            row.append(s.get("rate_met", "-"))
        rows.append(row)
    if args.rate is not None:
        cols.append(f"rate within {args.rate_tolerance:g} (% of possible)")
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


def compression_commands():
    """`compress` and `eval-compression` (registered by treegram.corehooks)."""
    from treegram.cli.commands import Command

    return (
        Command("compress", "compress text (or tokenized sentences) with a compression model: deleted words "
                            "struck through on a terminal, the compressed text elsewhere", _configure_compress,
                _run_compress),
        Command("eval-compression", "compression rate, token F1 and relational F1 against gold compressions",
                _configure_eval, _run_eval),
    )
