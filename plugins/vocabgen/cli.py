"""`treegram generate` and `treegram exercises`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from treegram.cli.commands import Command, add_json_flag
from treegram.errors import InputError, ModelFileError


def _add_model_vocab(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", type=Path, default=None,
                   help="vocabgen model from `treegram train vocabgen`, or any model with a generation view "
                        "(pcfg, tsg, tig) (default: the embedded WordNet-example model, built on first use and "
                        "cached)")
    p.add_argument("--vocab", required=True, metavar="SPEC",
                   help="cefr:A1..cefr:C2 (cefrpy), words:a,b,c, a word-list file or directory, or a CEFR-J csv")
    p.add_argument("--level", default=None, help="CEFR level for a CEFR-J csv vocabulary (A1..C2)")
    p.add_argument("--goodness", choices=["acyclic", "fixpoint", "one"], default="acyclic",
                   help="how G(c) is estimated for P_V (default: the paper's acyclic approximation)")
    p.add_argument("--seed", type=int, default=0, help="random seed (same seed, same sentences)")


def load_vocabgen(path: Path | None, ui):
    from treegram.formalism import load_model
    from treegram.plugins.vocabgen.default import build_default_model
    from treegram.plugins.vocabgen.model import VocabgenModel

    if path is None:
        model, info = build_default_model(ui)
        if not info.get("cached"):
            ui.note(f"default model built in {info['seconds']}s from {info['clauses']} sentences: {info['path']}")
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
def _configure_generate(p: argparse.ArgumentParser) -> None:
    _add_model_vocab(p)
    p.add_argument("--include", default=None, metavar="WORD", help="every sentence must contain this word")
    p.add_argument("-n", type=int, default=10, help="number of sentences (default 10)")
    p.add_argument("--unique", action="store_true", help="no sentence twice")
    add_json_flag(p)


def _run_generate(args: argparse.Namespace, ui) -> int:
    if args.n < 1:
        raise InputError(f"-n {args.n}: ask for at least one sentence", hint="e.g. -n 10")
    gen, vocab = _generator(args, ui)
    sents, stats = gen.sample(args.n, np.random.default_rng(args.seed), word=args.include, unique=args.unique)
    if not sents:
        raise InputError(f"no sentence found in {stats['attempts']} attempts", hint="try another seed or word")
    if args.json:
        ui.emit_json([s.to_json() for s in sents])
    else:
        for s in sents:
            ui.out.print(s.text, highlight=False, markup=False)
    if len(sents) < args.n:
        ui.note(f"only {len(sents)} different sentences found in {stats['attempts']} draws")
    return 0


# -- treegram exercises ------------------------------------------------------------------------------------
def _configure_exercises(p: argparse.ArgumentParser) -> None:
    _add_model_vocab(p)
    p.add_argument("--words", required=True, help="comma-separated words to practise")
    p.add_argument("--per-word", type=int, default=3, help="sentences per word (default 3)")
    p.add_argument("--kind", choices=["cloze", "translate", "reorder"], default="cloze")
    p.add_argument("--format", choices=["md", "html", "json"], default="md")
    p.add_argument("--out", default="-", help="file to write (default: stdout)")


def _run_exercises(args: argparse.Namespace, ui) -> int:
    from treegram.plugins.vocabgen.exercises import make_items, render
    from treegram.plugins.vocabgen.selection import select_sentences

    words = [w.strip().lower() for w in args.words.split(",") if w.strip()]
    if not words:
        raise InputError("--words is empty", hint="e.g. --words dog,school,book")
    if args.per_word < 1:
        raise InputError(f"--per-word {args.per_word}: must be at least 1", hint="e.g. --per-word 3")
    gen, vocab = _generator(args, ui)
    rng = np.random.default_rng(args.seed)
    groups, problems = select_sentences(gen, words, args.per_word, rng)
    for p in problems:
        ui.note(f"[yellow]note:[/] {p}")
    if not groups:
        raise InputError("no sentence for any of the words", hint="; ".join(problems)[:300])
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
