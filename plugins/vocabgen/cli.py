"""`treegram generate` and `treegram exercises`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from treegram.cli import argtypes
from treegram.cli.commands import Command, add_json_flag
from treegram.errors import InputError, ModelFileError


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
    p.add_argument("--seed", type=argtypes.seed, default=0, help="random seed (same seed, same sentences)")


def load_vocabgen(path: Path | None, ui):
    from treegram.formalism import load_model
    from treegram.plugins.vocabgen.default import build_default_model
    from treegram.plugins.vocabgen.model import VocabgenModel

    if path is None:
        model, _info = build_default_model(ui)
        return model
    if not Path(path).is_file():
        raise InputError(f"{path}: model file not found", hint="train one with `treegram train vocabgen`, "
                                                               "or leave out --model for the default")
    model = load_model(path)
    if isinstance(model, VocabgenModel):
        return model
    view = getattr(model, "generation_view", None)  # PCFG / TSG / TIG: the parsing grammar as a generation system
    if view is None:
        raise ModelFileError(f"{path}: a {model.formalism} model has no generation view",
                             hint="use a vocabgen, pcfg, tsg or tig model (`treegram train vocabgen` trains one)")
    from types import SimpleNamespace

    generation, system = view()
    return SimpleNamespace(generation=generation, system=system, formalism=model.formalism)


def _generator(args, ui):
    from treegram.plugins.vocabgen.generator import ConstrainedGenerator
    from treegram.plugins.vocabgen.vocab import parse_vocab_spec

    vocab = parse_vocab_spec(args.vocab, args.level)
    model = load_vocabgen(args.model, ui)
    return ConstrainedGenerator(model.generation, model.system, vocab, method=args.goodness), vocab


# -- treegram generate -------------------------------------------------------------------------------------
#: --unique runs stop after this many sentences (a vocabulary rarely allows more distinct ones)
MAX_UNIQUE = 20000
#: --unique runs stop after this many draws in a row without a new sentence
UNIQUE_PATIENCE = 20000


def _configure_generate(p: argparse.ArgumentParser) -> None:
    _add_model_vocab(p)
    p.add_argument("--include", default=None, metavar="WORD", help="every sentence must contain this word")
    p.add_argument("-n", type=argtypes.positive_int, default=10, help="number of sentences (default 10)")
    p.add_argument("--unique", action="store_true", help=f"no sentence twice (at most {MAX_UNIQUE:,})")
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


def _run_generate(args: argparse.Namespace, ui) -> int:
    include = check_target_word(args.include) if args.include is not None else None
    n = args.n
    if args.unique and n > MAX_UNIQUE:
        ui.note(f"[yellow]note:[/] -n {n:,} --unique capped at {MAX_UNIQUE:,} different sentences")
        n = MAX_UNIQUE
    gen, vocab = _generator(args, ui)
    rng = np.random.default_rng(argtypes.seed_entropy(args.seed))
    with ui.task("generating", total=n) as advance:
        sents, stats = gen.sample(n, rng, word=include, unique=args.unique,
                                  patience=UNIQUE_PATIENCE if args.unique else None, progress=advance)
    if not sents:
        raise InputError(f"no sentence found in {stats['attempts']} attempts", hint="try another seed or word")
    if args.json:
        ui.emit_json([s.to_json() for s in sents])
    else:
        ui.out.print("\n".join(s.text for s in sents), highlight=False, markup=False, soft_wrap=True)
    if len(sents) < n:
        why = (f"no new one in {UNIQUE_PATIENCE:,} draws in a row" if stats.get("stopped_early")
               else f"{stats['attempts']:,} draws")
        ui.note(f"[yellow]note:[/] only {len(sents):,} different sentences found ({why}): this vocabulary and "
                "model allow few more")
    elif not args.unique and len(sents) >= 20:
        distinct = len({s.text for s in sents})
        if distinct < 0.5 * len(sents):
            ui.note(f"[yellow]note:[/] {distinct:,} of {len(sents):,} sentences are different "
                    f"({100 * distinct / len(sents):.1f}%); add --unique for no repeats")
    return 0


# -- treegram exercises ------------------------------------------------------------------------------------
def _configure_exercises(p: argparse.ArgumentParser) -> None:
    _add_model_vocab(p)
    p.add_argument("--words", required=True, help="comma-separated words to practise")
    p.add_argument("--per-word", type=argtypes.positive_int, default=3,
                   help="sentences per word (default 3, at most 50)")
    p.add_argument("--kind", choices=["cloze", "translate", "reorder"], default="cloze")
    p.add_argument("--format", choices=["md", "html", "json"], default="md")
    p.add_argument("--out", default="-", help="file to write (default: stdout)")


def _run_exercises(args: argparse.Namespace, ui) -> int:
    from treegram.plugins.vocabgen.exercises import make_items, render
    from treegram.plugins.vocabgen.selection import select_sentences

    words = [check_target_word(w, "--words").lower() for w in args.words.split(",") if w.strip()]
    if not words:
        raise InputError("--words is empty", hint="e.g. --words dog,school,book")
    if args.per_word < 1:
        raise InputError(f"--per-word {args.per_word}: must be at least 1", hint="e.g. --per-word 3")
    gen, vocab = _generator(args, ui)
    rng = np.random.default_rng(argtypes.seed_entropy(args.seed))
    with ui.task("choosing sentences", total=len(words)) as advance:
        groups, problems = select_sentences(gen, words, args.per_word, rng, progress=advance)
    for p in problems:
        ui.note(f"[yellow]note:[/] {p}")
    if not groups:
        raise InputError("no sentence for any of the words", hint="; ".join(problems)[:300])
    from treegram.plugins.vocabgen.selection import names_used

    names = names_used(groups, vocab)
    if names:  # proper names outside the word list (vocab.PROPER_NAMES): the teacher introduces them
        ui.note(f"names on this sheet: {', '.join(names)}")
    items = make_items(groups, args.kind, rng)
    text = render(items, kind=args.kind, fmt=args.format, vocab_name=vocab.name, words=list(groups))
    if args.out == "-":
        sys.stdout.write(text)
    else:
        from treegram.io import atomic_write_text

        atomic_write_text(args.out, text)
        ui.note(f"wrote {len(items)} exercises to {args.out}")
    return 0


COMMANDS = [
    Command("generate", "sentences using only a vocabulary (optionally containing a required word)",
            _configure_generate, _run_generate),
    Command("exercises", "a printable exercise sheet (cloze/translate/reorder) with an answer key",
            _configure_exercises, _run_exercises),
]
