"""Exercise sheets: time to build items of each kind and to render each format (issue 12 items 4-5); blind
judging kits of what sheets print for random words (issue 25).

    python benchmarks/bench_exercises.py [--model M] [--vocab cefr:A1] [--words school,book,family,water]
                                         [--per-word 10] [--seed 0] [--no-write]
    python benchmarks/bench_exercises.py --kit NAME [--kit-words 120] [--kit-seed 2511] [--kit-sheet 10]
                                         [--kit-per-word 1] [--kit-out /work/judging]

Kits (`make_kits`): random A1/A2 headwords (seeded, none the checks were tuned on), sheets built as the CLI
builds them; OUT/NAME-choice/blind.txt and OUT/NAME-sentences/blind.txt in the formats of shared/judging (README
there), each key beside its folder (OUT/NAME-*.key.tsv), never inside it.

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
from _results import machine_line, markdown_table, publish  # noqa: E402


#: words the choice and cloze checks were developed on (issue 25): never in a judging kit
DEV_WORDS = frozenset("""school book family water umbrella dark expensive go eat happy cold big money run friend red
government""".split())


#: (words, seed) of the development kits whose items were read while tuning: their words are no kit's either
#: (400, 2511) is kit mc25: its judged labels trained the classroom-fitness model and its judged choice items
#: guided the open-slot rules of choice.py, so later kits measure on other words
DEV_KITS = ((30, 7), (80, 11), (100, 23), (400, 2511))


def kit_words(n: int, seed: int, exclude: frozenset[str] = DEV_WORDS) -> dict[str, list[str]]:
    """n random single-word CEFR-J headwords, half A1 and half A2 (each practised at its own level), seeded, none
    of `exclude`."""
    from treegram.plugins.vocabgen.vocab import headwords

    rng = np.random.default_rng(seed)
    out = {}
    for level, k in (("A1", n - n // 2), ("A2", n // 2)):
        pool = [w for w in headwords(level, cumulative=False) if len(w) >= 2 and w not in exclude]
        out[level] = sorted(pool[int(i)] for i in rng.choice(len(pool), size=k, replace=False))
    return out


def used_words(until: tuple[int, int] | None = None) -> set[str]:
    """The words of DEV_WORDS and of every kit of DEV_KITS before `until`, each kit drawn as it was: the first
    three excluding DEV_WORDS only, each later one excluding everything before it."""
    dev = set(DEV_WORDS)
    first = set(DEV_WORDS)
    for k, (n, seed) in enumerate(DEV_KITS):
        if (n, seed) == until:
            break
        ws = kit_words(n, seed, frozenset(first if k < 3 else dev))
        dev.update(w for level in ws.values() for w in level)
    return dev


def _norm(text: str) -> str:
    """The judging kits' normalisation (shared/judging/make_blind_sentences.py), so formatting gives no source
    away."""
    import importlib.util

    path = Path(__file__).resolve().parents[2] / "shared" / "judging" / "make_blind_sentences.py"
    if path.is_file():
        spec = importlib.util.spec_from_file_location("make_blind_sentences", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod.norm(text)
    return " ".join(text.split())


def make_kits(args) -> None:
    """Blind judging kits of what sheets print for random words (the CLI's route: spares, checks, make_sheet):
    OUT/<kit>-choice/blind.txt (ID, prompt, options) with the key in OUT/<kit>-choice.key.tsv, and
    OUT/<kit>-sentences/blind.txt (ID, sentence: every sentence the cloze sheets print) with its key beside it."""
    from treegram.cli.ui import UI
    from treegram.errors import InputError
    from treegram.io import atomic_write_text
    from treegram.plugins.vocabgen.default import load_vocabgen
    from treegram.plugins.vocabgen.selection import spare_factor
    from treegram.plugins.vocabgen.exercises import make_sheet
    from treegram.plugins.vocabgen.generator import ConstrainedGenerator
    from treegram.plugins.vocabgen.selection import select_sentences
    from treegram.plugins.vocabgen.vocab import parse_vocab_spec

    out = Path(args.kit_out)
    dev = used_words(until=(args.kit_words, args.kit_seed))
    words = kit_words(args.kit_words, args.kit_seed, frozenset(dev))
    model = load_vocabgen(args.model, UI(quiet=True))
    rng = np.random.default_rng(args.kit_seed)
    choice_rows, sent_rows, stats = [], [], {"choice": [0, 0], "cloze": [0, 0], "seconds": 0.0,
                                                "alternatives": 0}
    t0 = time.perf_counter()
    for level, ws in words.items():
        vocab = parse_vocab_spec(f"cefr:{level}")
        gen = ConstrainedGenerator(model.generation, model.system, vocab)
        for start in range(0, len(ws), args.kit_sheet):
            chunk = ws[start:start + args.kit_sheet]
            for kind in ("choice", "cloze"):
                spare = spare_factor(kind, False, None)
                groups, _ = select_sentences(gen, chunk, args.kit_per_word * spare, rng)
                if not groups:
                    stats[kind][0] += len(chunk) * args.kit_per_word
                    continue
                stats[kind][0] += len(chunk) * args.kit_per_word
                try:
                    sheet = make_sheet(groups, kind, rng, vocab, per_word=args.kit_per_word)
                except InputError:  # no item for any word of this sheet
                    continue
                stats[kind][1] += len(sheet.items)
                for i in sheet.items:
                    if kind == "choice":
                        choice_rows.append((i.prompt, i.choices, i.answer, i.sentence, level, i.word, i.source))
                    else:
                        sent_rows.append((i.sentence, level, i.word, i.source))
                        stats["alternatives"] += bool(i.alternatives)
    stats["seconds"] = time.perf_counter() - t0
    kr = np.random.default_rng(args.kit_seed + 1)
    name = args.kit_name
    letters = "abcdefgh"
    order = kr.permutation(len(choice_rows))
    blind, key = [], []
    for n, k in enumerate(order, start=1):
        prompt, choices, answer, sentence, level, word, source = choice_rows[int(k)]
        cid = f"c{n:03d}"
        blind.append(f"{cid}\t{' '.join(prompt.split())}\t" + " | ".join(f"({letters[j]}) {c}"
                                                                      for j, c in enumerate(choices)))
        key.append(f"{cid}\t{answer}\t{'|'.join(choices)}\t{sentence}\t{level}\t{word}\t{source}")
    (out / f"{name}-choice").mkdir(parents=True, exist_ok=True)
    atomic_write_text(out / f"{name}-choice" / "blind.txt", "\n".join(blind) + "\n")
    atomic_write_text(out / f"{name}-choice.key.tsv", "\n".join(key) + "\n")
    seen, srows = set(), []
    for row in sent_rows:
        if _norm(row[0]) not in seen:
            seen.add(_norm(row[0]))
            srows.append(row)
    order = kr.permutation(len(srows))
    blind, key = [], []
    for n, k in enumerate(order, start=1):
        sentence, level, word, source = srows[int(k)]
        sid = f"s{n:03d}"
        blind.append(f"{sid}\t{_norm(sentence)}")
        key.append(f"{sid}\t{source}\t{level}\t{word}\t{sentence}")
    (out / f"{name}-sentences").mkdir(parents=True, exist_ok=True)
    atomic_write_text(out / f"{name}-sentences" / "blind.txt", "\n".join(blind) + "\n")
    atomic_write_text(out / f"{name}-sentences.key.tsv", "\n".join(key) + "\n")
    n_words = sum(len(v) for v in words.values())
    body = "\n".join([
        f"`python benchmarks/bench_exercises.py --kit {name} --kit-words {args.kit_words} --kit-seed {args.kit_seed} "
        f"--kit-sheet {args.kit_sheet} --kit-per-word {args.kit_per_word} --kit-out {out}`", "",
        machine_line() + f"; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", "",
        f"{n_words} random CEFR-J headwords (seed {args.kit_seed}; {len(words['A1'])} A1 on cefr:A1 sheets, "
        f"{len(words['A2'])} A2 on cefr:A2 sheets; none of the words the checks were developed on, nor of the development "
        f"kits {', '.join(f'{n} words seed {s}' for n, s in DEV_KITS)}), sheets of "
        f"{args.kit_sheet} words x {args.kit_per_word} item(s), the CLI's route (spare sentences, fragment / sense "
        "checks, one-right-answer checks):", "",
        markdown_table(["kind", "items asked", "items printed", "share"],
                       [[k, stats[k][0], stats[k][1], f"{100 * stats[k][1] / max(1, stats[k][0]):.1f}%"]
                        for k in ("choice", "cloze")]), "",
        f"Kits: {out / (name + '-choice')}/blind.txt ({len(choice_rows)} choice items; key "
        f"{out / (name + '-choice.key.tsv')}), {out / (name + '-sentences')}/blind.txt ({len(srows)} sheet "
        f"sentences, {sum(r[3] == 'generated' for r in srows)} generated; key {out / (name + '-sentences.key.tsv')}). "
        f"Cloze items whose blank also admits another word of the box (accepted in the key): "
        f"{stats['alternatives']} of {stats['cloze'][1]}. "
        f"Built in {stats['seconds']:.0f} s.", "",
        "Notes. The kits are what the CLI prints for words never used in development: the choice kit holds every "
        "multiple-choice item the sheets printed (judge brief: shared/judging README, *choice items*: the fitting "
        "letters; `score_choice.py` gives the share with exactly one fitting option, goal >= 98%), the sentence "
        "kit every sentence the cloze sheets printed (plausible? classroom-fit? goal >= 98% / 85%; "
        "`score_sentences.py` by source: corpus / generated). Keys stay outside the judges' folders. Judged "
        "figures go below when the judges have run (a helper cannot judge its own items blind). Choice coverage "
        "is low by design: a sentence whose blank has no informative context (\"This _____ will be hers.\"), an "
        "adjective, adverb or modal blank, or a blank for which fewer than two options pass every check gives no "
        "item (plugins/vocabgen/README.md `One right answer`); cloze coverage is the sentence supply at each "
        "word's level (since the merged graded-enja + Tatoeba excerpt with its A2 part, 98% of asked cloze items, "
        "all corpus sentences).",
    ])
    publish("exercise-kits", body, not args.no_write)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", type=Path, default=None)
    ap.add_argument("--vocab", default="cefr:A1")
    ap.add_argument("--words", default="school,book,family,water")
    ap.add_argument("--per-word", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--kit", dest="kit_name", default=None, metavar="NAME",
                    help="write blind judging kits NAME-choice / NAME-sentences instead of timing")
    ap.add_argument("--kit-words", type=int, default=120, help="random A1/A2 headwords in the kits")
    ap.add_argument("--kit-seed", type=int, default=2511)
    ap.add_argument("--kit-sheet", type=int, default=10, help="words per sheet")
    ap.add_argument("--kit-per-word", type=int, default=1)
    ap.add_argument("--kit-out", default="/work/judging")
    args = ap.parse_args()
    if args.kit_name:
        make_kits(args)
        return

    from treegram.cli.ui import UI
    from treegram.plugins.vocabgen.default import load_vocabgen
    from treegram.exercises import export_formats, kind_names
    from treegram.plugins.vocabgen.exercises import make_sheet
    from treegram.plugins.vocabgen.formats import render
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

    for kind in kind_names():
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
    for fmt in export_formats():
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
    publish("exercises", body, not args.no_write)


if __name__ == "__main__":
    main()
