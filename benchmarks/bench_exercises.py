"""Exercise sheets: time to build items of each kind and to render each format (issue 12 items 4-5).

    python benchmarks/bench_exercises.py [--model M] [--vocab cefr:A1] [--words school,book,family,water]
                                         [--per-word 10] [--seed 0] [--no-write]

Sentences come from `select_sentences` once (timed separately: that is the generator's cost); then for each kind
the items are built from the same sentences (warm: the spaCy parser, lemminflect and WordNet tables are loaded
by a first untimed run), and the choice sheet is rendered in every format.  Writes the `exercises` section of
benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _results import machine_line, markdown_table, write_section  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", type=Path, default=None)
    ap.add_argument("--vocab", default="cefr:A1")
    ap.add_argument("--words", default="school,book,family,water")
    ap.add_argument("--per-word", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()

    from treegram.cli.ui import UI
    from treegram.plugins.vocabgen.cli import load_vocabgen
    from treegram.plugins.vocabgen.exercises import KINDS, make_sheet
    from treegram.plugins.vocabgen.formats import FORMATS, render
    from treegram.plugins.vocabgen.generator import ConstrainedGenerator
    from treegram.plugins.vocabgen.selection import select_sentences
    from treegram.plugins.vocabgen.vocab import parse_vocab_spec

    t0 = time.perf_counter()
    model = load_vocabgen(args.model, UI(quiet=True))
    t_load = time.perf_counter() - t0
    vocab = parse_vocab_spec(args.vocab)
    t0 = time.perf_counter()
    gen = ConstrainedGenerator(model.generation, model.system, vocab)
    t_gen = time.perf_counter() - t0
    words = args.words.split(",")
    t0 = time.perf_counter()
    groups, problems = select_sentences(gen, words, args.per_word, np.random.default_rng(args.seed))
    t_select = time.perf_counter() - t0
    n_sent = sum(len(v) for v in groups.values())

    t0 = time.perf_counter()
    make_sheet(groups, "choice", np.random.default_rng(args.seed), vocab)  # cold: loads parser/lemma tables
    make_sheet(groups, "reorder", np.random.default_rng(args.seed), vocab)
    t_cold = time.perf_counter() - t0
    rows = []
    sheets = {}
    from treegram.plugins.vocabgen.exercises import analyse, parse

    for kind in KINDS:
        analyse.cache_clear()  # every kind parses its sentences again (warm pipeline, no cached parses)
        parse.cache_clear()
        t0 = time.perf_counter()
        sheet = make_sheet(groups, kind, np.random.default_rng(args.seed + 1), vocab, hints=(kind == "cloze"))
        dt = time.perf_counter() - t0
        sheets[kind] = sheet
        rows.append([kind, len(sheet.items), round(1000 * dt, 1), round(1000 * dt / max(1, len(sheet.items)), 2)])
    tiles = [len(i.tiles) for i in sheets["reorder"].items]
    split = sum(any(t.split()[0] in ("n't", "'s", "'m", "'re", "'ll", "'ve", "'d", "-") or t.endswith("-")
                    for t in i.tiles) for i in sheets["reorder"].items)
    examples = [" / ".join(i.tiles) for i in sheets["reorder"].items[:3]]
    frows = []
    for fmt in FORMATS:
        render(sheets["choice"], fmt)  # first use imports the library (fpdf2, genanki)
        t0 = time.perf_counter()
        data = render(sheets["choice"], fmt)
        dt = time.perf_counter() - t0
        frows.append([fmt, len(data), round(1000 * dt, 1)])

    body = "\n".join([
        f"`python benchmarks/bench_exercises.py --vocab {args.vocab} --words {args.words} --per-word {args.per_word}"
        f" --seed {args.seed}`" + (f" --model {args.model}" if args.model else " (default model)"),
        "", machine_line() + f"; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores during the run "
        "(shared machine)", "",
        f"Model load {t_load:.2f} s; constrained generator for {vocab.name} {t_gen:.2f} s; select_sentences "
        f"({len(words)} words x {args.per_word}): {n_sent} sentences in {t_select:.2f} s"
        + (f" ({len(problems)} word(s) short)" if problems else "") + f"; first item build (loads spaCy, "
        f"the embedded PCFG, lemminflect, WordNet sense counts): {t_cold:.2f} s.", "",
        "Items from the same sentences (warm; reorder parses every sentence with treegram's PCFG, choice/cloze "
        "hints tag with spaCy):", "",
        markdown_table(["kind", "items", "ms", "ms/item"], rows), "",
        f"Reorder tiles (constituents of the PCFG's Viterbi parse): {np.mean(tiles):.1f} tiles per item "
        f"(min {min(tiles)}, max {max(tiles)}); {sum(t >= 3 for t in tiles)} of {len(tiles)} items have >= 3 "
        f"tiles; {split} items with a tile starting with a clitic or hyphen. Examples (shuffled as shown): "
        + "; ".join(f"*{e}*" for e in examples) + ".", "",
        "Rendering the multiple-choice sheet:", "",
        markdown_table(["format", "bytes", "ms"], frows), "",
    ])
    print(body)
    if not args.no_write:
        write_section("exercises", body)


if __name__ == "__main__":
    main()
