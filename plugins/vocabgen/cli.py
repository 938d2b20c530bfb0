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
                   help="vocabgen model from `treegram train vocabgen` (default: the embedded WordNet-example "
                        "model, built on first use and cached)")
    p.add_argument("--vocab", required=True, metavar="SPEC",
                   help="cefr:A1..cefr:C2 (cefrpy), words:a,b,c, a word-list file or directory, or a CEFR-J csv")
    p.add_argument("--level", default=None, help="CEFR level for a CEFR-J csv vocabulary (A1..C2)")
    p.add_argument("--goodness", choices=["acyclic", "fixpoint", "one"], default="acyclic",
                   help="how G(c) is estimated for P_V (default: the paper's acyclic approximation)")
    p.add_argument("--seed", type=argtypes.seed, default=0, help="random seed, any integer (same seed, same sentences)")


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
    if not isinstance(model, VocabgenModel):
        raise ModelFileError(f"{path}: a {model.formalism} model, not a vocabgen model",
                             hint="train one with `treegram train vocabgen`")
    return model


def _generator(args, ui):
    from treegram.plugins.vocabgen.generator import ConstrainedGenerator
    from treegram.plugins.vocabgen.vocab import parse_vocab_spec

    vocab = parse_vocab_spec(args.vocab, args.level)
    model = load_vocabgen(args.model, ui)
    return ConstrainedGenerator(model.generation, model.system, vocab, method=args.goodness), vocab


# -- treegram generate -------------------------------------------------------------------------------------------
def _configure_generate(p: argparse.ArgumentParser) -> None:
    _add_model_vocab(p)
    p.add_argument("--include", default=None, metavar="WORD", help="every sentence must contain this word")
    p.add_argument("-n", type=argtypes.positive_int, default=10, help="number of sentences (default 10)")
    p.add_argument("--unique", action="store_true", help="no sentence twice")
    p.add_argument("--out", default="-", help="file to write, one sentence per line as generated (default: stdout)")
    p.add_argument("--resume", action="store_true",
                   help="continue an interrupted run: keep the sentences already in --out (same --seed) and add "
                        "the rest")
    add_json_flag(p)


def stream_sentences(gen, n: int, rng, *, word: str | None = None, unique: bool = False, stats: dict | None = None):
    """Yield the sentences `gen.sample(n, rng, word=word, unique=unique)` returns, in the same order, as they are
    drawn: small batches first (the first sentence appears at once), the same overall attempt budget, and a
    `unique` filter applied in the same place, so the stream equals the single call."""
    stats = {} if stats is None else stats
    stats.update(attempts=0, failed=0, rejected_by_check=0, duplicates=0)
    budget = 20 * n + 100
    seen: set[str] = set()
    made, batch = 0, 1
    while made < n and stats["attempts"] < budget:
        want = min(batch, n - made)
        sents, st = gen.sample(want, rng, word=word, unique=False, max_attempts=budget - stats["attempts"])
        for k in ("attempts", "failed", "rejected_by_check"):
            stats[k] += st.get(k, 0)
        for sent in sents:
            if unique:
                if sent.text in seen:
                    stats["duplicates"] += 1
                    continue
                seen.add(sent.text)
            made += 1
            yield sent
        if not sents:
            break
        batch = min(batch * 2, 256)


def _run_generate(args: argparse.Namespace, ui) -> int:
    import json

    from treegram.cli.argtypes import seed_entropy
    from treegram.io import open_output

    if args.resume and args.out == "-":
        raise InputError("--resume needs --out FILE", hint="resume continues the file an interrupted run wrote")
    gen, vocab = _generator(args, ui)
    stats: dict = {}
    made = 0
    stream = stream_sentences(gen, args.n, np.random.default_rng(seed_entropy(args.seed)), word=args.include,
                              unique=args.unique, stats=stats)
    plain = args.out != "-" or not ui.out.is_terminal
    with open_output(args.out, resume=args.resume, flush_every=1 if args.n <= 1000 else 64) as sink:
        skip = sink.done
        if args.json:
            sys.stdout.write("[")
        for sent in stream:
            made += 1
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
                ui.out.print(sent.text, highlight=False, markup=False)
        if args.json:
            sys.stdout.write("\n]\n")
            sys.stdout.flush()
    if not made:
        raise InputError(f"no sentence found in {stats['attempts']} attempts", hint="try another seed or word")
    if made < args.n:
        ui.note(f"only {made} different sentences found in {stats['attempts']} draws")
    return 0


# -- treegram exercises ------------------------------------------------------------------------------------
def _configure_exercises(p: argparse.ArgumentParser) -> None:
    _add_model_vocab(p)
    p.add_argument("--words", required=True, help="comma-separated words to practise")
    p.add_argument("--per-word", type=argtypes.positive_int, default=3, help="sentences per word (default 3)")
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
    rng = np.random.default_rng(argtypes.seed_entropy(args.seed))
    groups, problems = select_sentences(gen, words, args.per_word, rng)
    for p in problems:
        ui.note(f"[yellow]note:[/] {p}")
    if not groups:
        raise InputError("no sentence for any of the words", hint="; ".join(problems)[:300])
    items = make_items(groups, args.kind, rng)
    text = render(items, kind=args.kind, fmt=args.format, vocab_name=vocab.name, words=list(groups))
    from treegram.io import write_output

    write_output(args.out, text)  # atomic for a file, streamed for -, a FIFO or a device
    if args.out != "-":
        ui.note(f"wrote {len(items)} exercises to {args.out}")
    return 0


COMMANDS = [
    Command("generate", "sentences using only a vocabulary (optionally containing a required word)",
            _configure_generate, _run_generate),
    Command("exercises", "a printable exercise sheet (cloze/translate/reorder) with an answer key",
            _configure_exercises, _run_exercises),
]
