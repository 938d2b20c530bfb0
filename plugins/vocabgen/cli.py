"""`treegram generate` and `treegram exercises`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from treegram import argtypes
from treegram.argtypes import nonnegative_int, positive_int
from treegram.cli.commands import Command, add_json_flag
from treegram.errors import InputError


def _add_model_vocab(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", type=Path, default=None,
                   help="vocabgen model from `treegram train vocabgen`, or any model with a generation view "
                        "(pcfg, tsg, tig) (default: the embedded model trained on graded-enja, CC BY-SA 4.0)")
    p.add_argument("--vocab", required=True, metavar="SPEC",
                   help="cefr:A1..cefr:C2 (embedded CEFR-J 1.5 + Octanove C1/C2, cumulative), cefrpy:A1.. (opt-in "
                        "cefrpy levels), words:a,b,c, a word-list file or directory, or a CEFR-J style csv")
    p.add_argument("--level", default=None, help="CEFR level for a CEFR-J csv vocabulary (A1..C2)")
    p.add_argument("--goodness", choices=["acyclic", "fixpoint", "one"], default="acyclic",
                   help="how G(c) is estimated for P_V (default: the paper's acyclic approximation)")
    p.add_argument("--seed", type=argtypes.seed, default=0, help="random seed, any integer (same seed, same sentences)")


def _generator(args, ui, vocab=None):
    from treegram.plugins.vocabgen.default import load_vocabgen
    from treegram.plugins.vocabgen.generator import ConstrainedGenerator
    from treegram.plugins.vocabgen.vocab import parse_vocab_spec

    vocab = vocab if vocab is not None else parse_vocab_spec(args.vocab, args.level)
    model = load_vocabgen(args.model, ui)
    return ConstrainedGenerator(model.generation, model.system, vocab, method=args.goodness), vocab


# -- treegram generate -------------------------------------------------------------------------------------
#: --unique runs stop after this many sentences (a vocabulary rarely allows more distinct ones)
MAX_UNIQUE = 20000
#: --unique runs stop after this many draws in a row without a new sentence
UNIQUE_PATIENCE = 20000
#: up to this many sentences, `generate` gives different ones unless --no-unique (a short list of repeats reads
#: as a bug; large runs are samples, where repeats carry the model's frequencies)
UNIQUE_UP_TO = 200


def _configure_generate(p: argparse.ArgumentParser) -> None:
    _add_model_vocab(p)
    p.add_argument("--include", default=None, metavar="WORD", help="every sentence must contain this word")
    p.add_argument("-n", type=argtypes.positive_int, default=10, help="number of sentences (default 10)")
    p.add_argument("--unique", action=argparse.BooleanOptionalAction, default=None,
                   help=f"no sentence twice (at most {MAX_UNIQUE:,}); the default for -n <= {UNIQUE_UP_TO} "
                        "(--no-unique: repeats allowed, as drawn)")
    p.add_argument("--out", default="-", help="file to write, one sentence per line as generated (default: stdout)")
    p.add_argument("--resume", action="store_true",
                   help="continue an interrupted run: keep the sentences already in --out (same --seed) and add "
                        "the rest")
    add_json_flag(p)


def check_target_word(word: str, option: str = "--include") -> str:
    """A practised / required word: letters (apostrophes and hyphens inside), not punctuation or a number."""
    import re

    w = word.strip()
    if not w:
        raise InputError(f"{option} is empty", hint="give a word, e.g. water")
    if not re.fullmatch(r"[^\W\d_]+(?:['’-][^\W\d_]+)*", w):
        raise InputError(f"{option} {word!r} is not a word (punctuation, digits or spaces)",
                         hint="give a single word made of letters, e.g. water")
    return w


def stream_sentences(gen, n: int, rng, *, word: str | None = None, unique: bool = False,
                     patience: int | None = None, stats: dict | None = None):
    """Yield the sentences of `gen.sample(n, rng, word=word, unique=unique)` as they are drawn: small batches first
    (the first sentence appears at once), the same overall attempt budget, the `unique` filter applied in the same
    order (and `patience` checked per batch), so memory stays flat and a resumed run draws the same sequence."""
    stats = {} if stats is None else stats
    stats.update(attempts=0, failed=0, rejected_by_check=0, duplicates=0, stopped_early=False)
    budget = 20 * n + 100
    seen: set[str] = set()
    made, batch, since_new = 0, 1, 0
    while made < n and stats["attempts"] < budget:
        want = min(batch, n - made)
        sents, st = gen.sample(want, rng, word=word, unique=False, max_attempts=budget - stats["attempts"])
        for k in ("attempts", "failed", "rejected_by_check"):
            stats[k] += st.get(k, 0)
        new = 0
        for sent in sents:
            if unique:
                if sent.text in seen:
                    stats["duplicates"] += 1
                    continue
                seen.add(sent.text)
            made += 1
            new += 1
            yield sent
        since_new = 0 if new else since_new + st.get("attempts", 0)
        if not sents or (patience is not None and since_new >= patience):
            stats["stopped_early"] = bool(sents)
            break
        batch = min(batch * 2, 256)


def _run_generate(args: argparse.Namespace, ui) -> int:
    import json

    from treegram.io import open_output

    include = check_target_word(args.include) if args.include is not None else None
    n = args.n
    if args.unique is None:
        args.unique = n <= UNIQUE_UP_TO
    if args.unique and n > MAX_UNIQUE:
        ui.note(f"-n {n:,} --unique capped at {MAX_UNIQUE:,} different sentences", label="note")
        n = MAX_UNIQUE
    if args.resume and args.out == "-":
        raise InputError("--resume needs --out FILE", hint="resume continues the file an interrupted run wrote")
    gen, vocab = _generator(args, ui)
    stats: dict = {}
    made = 0
    distinct: set[int] = set()  # for the repetition note: hashes of the first 100,000 sentences
    stream = stream_sentences(gen, n, np.random.default_rng(argtypes.seed_entropy(args.seed)), word=include,
                              unique=args.unique, patience=UNIQUE_PATIENCE if args.unique else None, stats=stats)
    plain = args.out != "-" or not ui.out.is_terminal
    from rich.markup import escape

    from treegram.runstate import command_identity, run_record

    # model (by content), vocabulary, seed and settings are recorded: --resume refuses to mix two runs
    with run_record(args.out, command_identity(args), resume=args.resume, note=lambda m: ui.note(escape(m))), \
            open_output(args.out, resume=args.resume, flush_every=1 if n <= 1000 else 64) as sink, \
            ui.task("generating", total=n) as advance:
        skip = sink.done
        if args.json:
            sys.stdout.write("[")
        for sent in stream:
            made += 1
            advance(1)
            if made <= 100_000:
                distinct.add(hash(sent.text))
            if made <= skip:
                continue  # already in --out: the same seed draws the same sentences again
            if args.json:
                sys.stdout.write(("" if made == skip + 1 else ",") + "\n  " + json.dumps(sent.to_json(),
                                                                                       ensure_ascii=False))
                if args.out != "-":
                    sink.write_line(sent.text)
            elif plain:
                sink.write_line(sent.text)
            else:
                ui.out.print(sent.text, highlight=False, markup=False, soft_wrap=True)
        if args.json:
            sys.stdout.write("\n]\n")
            sys.stdout.flush()
    if not made:
        raise InputError(f"no sentence found in {stats['attempts']} attempts", hint="try another seed or word")
    if made < n:
        why = (f"no new one in {UNIQUE_PATIENCE:,} draws in a row" if stats.get("stopped_early")
               else f"{stats['attempts']:,} draws")
        ui.note(f"only {made:,} different sentences found ({why}): this vocabulary and "
                "model allow few more", label="note")
    elif not args.unique and made >= 20:
        k = min(made, 100_000)
        if len(distinct) < 0.5 * k:
            ui.note(f"{len(distinct):,} of {k:,} sentences are different "
                    f"({100 * len(distinct) / k:.1f}%); add --unique for no repeats", label="note")
    return 0


# -- treegram exercises ------------------------------------------------------------------------------------
def _configure_exercises(p: argparse.ArgumentParser) -> None:
    from treegram.exercises import export_formats, exercise_kinds, kind_choices

    _add_model_vocab(p)
    p.add_argument("--words", default=None, help="comma-separated words to practise")
    p.add_argument("--from-corrections", dest="from_corrections", default=None, metavar="REPORT",
                   help="practise the most frequent error types of a `treegram corrections --json` report "
                        "(instead of --words)")
    p.add_argument("--top-errors", type=positive_int, default=None, metavar="N",
                   help="with --from-corrections: how many error types (default 3)")
    p.add_argument("--per-word", type=positive_int, default=3, help="sentences per word (default 3, at most 50)")
    p.add_argument("--kind", choices=kind_choices(), default="cloze",
                   help=", ".join(k.help or k.name for k in exercise_kinds().values()))
    p.add_argument("--hints", action="store_true", help="cloze: show the lemma after each blank, e.g. (go)")
    p.add_argument("--format", choices=list(export_formats()), default="md",
                   help=", ".join(f.help or f.name for f in export_formats().values()))
    p.add_argument("--out", default="-", help="file to write (default: stdout; pdf/anki need a file or a pipe)")
    p.add_argument("--allow-above", dest="allow_above", action="store_true",
                   help="keep --words above the vocabulary's level (or unknown to it) on purpose: they are an error "
                        "otherwise, reported before any work")
    p.add_argument("--allow-unchecked", dest="allow_unchecked", action="store_true",
                   help="fill a word short of sentences with generated ones below the plausibility threshold "
                        "(marked in the key); never printed otherwise")
    add_json_flag(p)


def check_practice_words(words: list[str], vocab, allow_above: bool, ui) -> None:
    """Words outside the vocabulary (above its level, or unknown: "did you mean") are one error before any work,
    unless `allow_above` keeps them on purpose (then a note)."""
    from treegram.plugins.vocabgen.vocab import practice_word_problems

    problems = practice_word_problems(words, vocab)
    if not problems:
        return
    if not allow_above:
        raise InputError("; ".join(problems),
                         hint="leave them out, use a vocabulary that has them, or add --allow-above to practise "
                              "them anyway")
    for p in problems:
        ui.note(f"{p}; kept (--allow-above)", label="note")


def _run_exercises(args: argparse.Namespace, ui) -> int:
    from treegram.plugins.vocabgen.exercises import make_sheet, normalise_kind
    from treegram.exercises import get_format
    from treegram.plugins.vocabgen.formats import render, write_output
    from treegram.plugins.vocabgen.selection import select_sentences

    binary, ext = get_format(args.format).binary, get_format(args.format).extension
    if args.json and args.out == "-" and args.format not in ("md", "json"):
        raise InputError(f"--json prints the sheet as JSON on stdout: --format {args.format} needs --out FILE",
                         hint=f"add --out sheet{ext} (the JSON then describes the file)")
    if binary and args.out == "-" and sys.stdout.isatty() and not args.json:  # fail before any slow work
        raise InputError(f"--format {args.format} is a binary file and stdout is a terminal",
                         hint=f"give --out FILE{ext}")
    if args.out != "-":
        folder = Path(args.out).parent
        if not folder.is_dir():
            raise InputError(f"--out {args.out}: the folder {folder} does not exist",
                             hint=f"create it first (mkdir -p {folder}) or write somewhere else")
    if args.words is not None and args.from_corrections is not None:
        raise InputError("give --words or --from-corrections, not both", hint="the report chooses the words")
    if args.top_errors is not None and args.from_corrections is None:
        raise InputError("--top-errors counts the error types of --from-corrections REPORT",
                         hint="drop --top-errors, or practise a report's errors with --from-corrections")
    kind: str | dict = normalise_kind(args.kind)
    hints: bool | dict = args.hints
    focus = None
    pos: dict = {}
    notes: list[str] = []
    if args.from_corrections is not None:
        from treegram.plugins.vocabgen.from_corrections import plan, read_report

        report = read_report(args.from_corrections)
        gen, vocab = _generator(args, ui)
        practices, notes = plan(report, vocab, top=args.top_errors or 3)
        if not practices:
            raise InputError(f"{args.from_corrections}: no error type in the report can be practised",
                             hint="; ".join(notes)[:300] or "the report has no corrections")
        kind, hints, focus, pos, words = {}, {}, {}, {}, []
        for pr in practices:
            for w in pr.words:
                if w not in kind:
                    kind[w], hints[w], focus[w] = pr.kind, pr.hints, pr.label
                    if pr.pos:
                        pos[w] = pr.pos
                    words.append(w)
            ui.note(f"practising {pr.label}: {pr.count} correction(s); words {', '.join(pr.words)}; {pr.kind}")
    else:
        if args.words is None:
            raise InputError("give --words (or --from-corrections REPORT)", hint="e.g. --words dog,school,book")
        given = [check_target_word(w, "--words").lower() for w in args.words.split(",") if w.strip()]
        words = list(dict.fromkeys(given))  # each word practised once, however often it is listed
        if not words:
            raise InputError("--words is empty", hint="e.g. --words dog,school,book")
        if len(words) < len(given):
            ui.note(f"--words lists {len(given) - len(words):,} repeat(s); each word is practised once", label="note")
        from treegram.plugins.vocabgen.vocab import parse_vocab_spec

        vocab = parse_vocab_spec(args.vocab, args.level)
        check_practice_words(list(dict.fromkeys(words)), vocab, args.allow_above, ui)  # before the model loads
        gen, vocab = _generator(args, ui, vocab)
    rng = np.random.default_rng(argtypes.seed_entropy(args.seed))
    from treegram.plugins.vocabgen.selection import MAX_PER_WORD, spare_factor

    spare = spare_factor(kind, hints, focus)

    with ui.task("choosing sentences", total=len(words)) as advance:
        groups, problems = select_sentences(gen, words, min(args.per_word * spare, max(MAX_PER_WORD, args.per_word)),
                                            rng, progress=advance, allow_unchecked=args.allow_unchecked)
    if spare > 1:  # the spares were extra: a word is short only when make_sheet says so
        problems = [p for p in problems if "different sentence(s)" not in p]
    for p in notes + problems:
        ui.note(f"{p}", label="note")
    if not groups:
        raise InputError("no sentence for any of the words", hint="; ".join(problems)[:300])
    title = None
    if focus:
        title = "Practice: " + "; ".join(dict.fromkeys(focus[w] for w in groups if w in focus))
    sheet = make_sheet(groups, kind, rng, vocab, hints=hints, focus=focus, pos=pos if focus else None,
                       per_word=args.per_word, title=title, notes=notes + problems)
    for p in sheet.notes[len(notes) + len(problems):]:
        ui.note(f"{p}", label="note")
    if sheet.names:  # proper names outside the word list (vocab.PROPER_NAMES), listed on the sheet
        ui.note(f"names on this sheet: {', '.join(sheet.names)}")
    if args.json and args.out == "-":
        ui.emit_json(sheet.to_json())
        return 0
    path = write_output(render(sheet, args.format), args.out, args.format)
    if path is not None:
        ui.note(f"wrote {len(sheet.items)} exercises ({args.format}) to {path}")
    if args.json:
        ui.emit_json({"out": path, "format": args.format, "items": len(sheet.items), "words": list(sheet.words),
                      "kinds": sheet.kinds(), "notes": list(sheet.notes), "names": list(sheet.names)})
    return 0


# -- treegram serve ----------------------------------------------------------------------------------------
def _configure_serve(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", type=Path, default=None, help="vocabgen model (default: the embedded default model)")
    p.add_argument("--vocab", default=None, metavar="SPEC",
                   help="an extra vocabulary offered on the page besides CEFR A1..C2 (and selected first)")
    p.add_argument("--port", type=nonnegative_int, default=8765, help="port (default 8765; 0 = any free port)")
    p.add_argument("--host", default="127.0.0.1", help="loopback address to bind (default 127.0.0.1)")
    p.add_argument("--allow-unchecked", dest="allow_unchecked", action="store_true",
                   help="sheets may fill a word short of sentences with generated ones below the plausibility "
                        "threshold (marked in the key)")


def _run_serve(args: argparse.Namespace, ui) -> int:
    from treegram.plugins.vocabgen.serve import run_server

    return run_server(args, ui)


COMMANDS = [
    Command("generate", "sentences using only a vocabulary (optionally containing a required word)",
            _configure_generate, _run_generate),
    Command("exercises", "an exercise sheet (cloze/choice/reorder/translate) with an answer key, in every "
            "format teachers import", _configure_exercises, _run_exercises),
    Command("serve", "a local web page for building exercise sheets (127.0.0.1)", _configure_serve, _run_serve),
]
