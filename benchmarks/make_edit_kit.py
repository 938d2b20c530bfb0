"""A blind judging kit for the edit generator (issue 25 item 5): new sentences made by derivation edits of real
corpus sentences (edits.py), mixed with real corpus sentences for the same words, in the sentences-kit format of
../shared/judging (plausible / classroom-fit; the judges' brief is ../judging/SENTENCE_BRIEF.md).

    python benchmarks/make_edit_kit.py OUTDIR [--seed 2525] [--items 100] [--controls 50] [--exclude WORDS_FILE]

* generated: random single-word CEFR-J headwords (half A1 on vocabulary cefr:A1, half A2 on cefr:A2, seeded), one
  new sentence each, taken exactly as a sheet takes an edit for a word (selection.py): the word's candidate edits
  in a seeded random order until 1 + margin pass the plausibility check (edits.acceptable), the best-scoring first,
  the classroom-fitness floor and bands (fit_order), the sheet's quality checks (quality.sheet_reason); a word with
  no such edit is skipped.  Words listed in --exclude (the development words) are never drawn;
* controls: for every other word that got an edit, the corpus item a sheet would show for it (selection.CorpusPool:
  the corpus floor, the fitness floor and bands, the same quality checks), so both sources serve the same words.

Writes OUTDIR/blind.txt (ID<TAB>sentence, normalised like every sentences kit by make_blind_sentences.norm, shuffled;
the only file judges see), the key OUTDIR.key.tsv *outside* OUTDIR (ID, source `generated`/`corpus`, level, word,
text; the format of bench_exercises.py's kits), and benchmarks/judged/NAME-sentences.key.json (+ NAME-sentences.tsv,
the blind lines, so the scorer build holds them out of its training data) with each item's host sentence,
attribution, plausibility and fitness scores.  After judging (OUTDIR/ratings-judgeA.tsv, ratings-judgeB.tsv):
`python benchmarks/judged_kits.py record NAME && python benchmarks/judged_kits.py score NAME --no-write`.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent
SHARED = ROOT.parent.parent / "shared"


def edit_for(src, word: str, level: str, rng):
    """The edit a sheet would show first for `word` (selection.draw_passing's edit step, then the order and checks
    of select_sentences), or None."""
    from treegram.plugins.vocabgen.quality import sheet_reason
    from treegram.plugins.vocabgen.selection import Draws, _allowed, _draw_edits, fit_order
    from treegram.plugins.vocabgen.vocab import word_forms

    forms = word_forms(word, level)
    out = Draws([], [], [])
    st = {"draws": 0, "rejected": 0, "below_threshold": 0}
    _draw_edits(src, word, 1 + src.margin, rng, forms, _allowed(src.vocab, forms), 10 ** 6, out, {}, st, False)
    ranked = sorted(out.passed, key=lambda s: -(s.score if s.score is not None else 0.0))
    for s in fit_order(src, ranked):
        if sheet_reason(s.tokens, word, level) is None:
            return s
    return None


def corpus_for(src, word: str, level: str, rng):
    """The corpus item a sheet would show first for `word` (CorpusPool + the sheet's quality checks), or None."""
    from treegram.plugins.vocabgen.quality import sheet_reason
    from treegram.plugins.vocabgen.selection import CorpusPool, _allowed
    from treegram.plugins.vocabgen.vocab import word_forms

    forms = word_forms(word, level)
    for s in CorpusPool(src, word, forms, _allowed(src.vocab, forms), rng):
        if sheet_reason(s.tokens, word, level) is None:
            return s
    return None


def main() -> None:
    from treegram.plugins.vocabgen.corpus import dedup_key
    from treegram.plugins.vocabgen.default import load_default_model
    from treegram.plugins.vocabgen.edits import edit_host
    from treegram.plugins.vocabgen.generator import ConstrainedGenerator
    from treegram.plugins.vocabgen.selection import default_source
    from treegram.plugins.vocabgen.vocab import cefr_vocabulary, headwords

    sys.path.insert(0, str(SHARED / "judging"))
    from make_blind_sentences import norm  # noqa: E402  the normalisation of every sentences kit

    ap = argparse.ArgumentParser()
    ap.add_argument("out", type=Path)
    ap.add_argument("--seed", type=int, default=2525)
    ap.add_argument("--items", type=int, default=100, help="new generated items (half A1, half A2)")
    ap.add_argument("--controls", type=int, default=50, help="corpus items for the same words")
    ap.add_argument("--exclude", type=Path, default=None, help="a file of words never drawn (one per line)")
    args = ap.parse_args()
    key_out = args.out.parent / (args.out.name + ".key.tsv")
    if args.out.exists() or key_out.exists():
        sys.exit(f"{args.out} or {key_out} exists: choose a new kit folder")
    exclude = {w.lower() for w in args.exclude.read_text(encoding="utf-8").split()} if args.exclude else set()
    rng = np.random.default_rng(args.seed)
    model = load_default_model()
    items: list[dict] = []
    seen: set[str] = set()

    def add(s, source, level, **kw):
        k = dedup_key(s.text)
        if k in seen:
            return False
        seen.add(k)
        items.append({"text": s.text, "source": source, "level": level, "word": s.word, "score": s.score,
                      "provenance": s.provenance, **kw})
        return True

    tried, ctl = {}, {}
    for level, n, n_ctl in (("A1", args.items // 2, args.controls // 2),
                            ("A2", args.items - args.items // 2, args.controls - args.controls // 2)):
        src = default_source(ConstrainedGenerator(model.generation, model.system, cefr_vocabulary(level)))
        words = [w for w in headwords(level, cumulative=False) if w.isalpha() and w.lower() not in exclude]
        got = tried[level] = ctl[level] = 0
        for wi in rng.permutation(len(words)):
            if got >= n:
                break
            w = words[int(wi)]
            tried[level] += 1
            s = edit_for(src, w, level, np.random.default_rng(int(rng.integers(1 << 31))))
            if s is None or not add(s, "generated", level, host=edit_host(s)):
                continue
            got += 1
            fit = src.fitness.score_batch([(s.tokens, s.provenance, s.source)])
            items[-1]["fitness"] = round(float(fit[0]), 3)
            if ctl[level] < n_ctl and got % 2 == 1:  # every other word: the corpus item a sheet shows for it
                c = corpus_for(src, w, level, np.random.default_rng(int(rng.integers(1 << 31))))
                if c is not None and add(c, "corpus", level):
                    items[-1]["fitness"] = round(float(src.fitness.score_batch([(c.tokens, c.provenance,
                                                                                  c.source)])[0]), 3)
                    ctl[level] += 1
    items = [items[int(i)] for i in rng.permutation(len(items))]
    for n, it in enumerate(items, start=1):
        it["id"], it["shown"] = f"s{n:03d}", norm(it["text"])
    args.out.mkdir(parents=True)
    (args.out / "blind.txt").write_text("".join(f"{it['id']}\t{it['shown']}\n" for it in items), encoding="utf-8")
    key_out.write_text("".join(f"{it['id']}\t{it['source']}\t{it['level']}\t{it['word']}\t{it['text']}\n"
                               for it in items), encoding="utf-8")
    name = args.out.name
    (ROOT / "judged" / f"{name}-sentences.key.json").write_text(json.dumps(items, ensure_ascii=False, indent=1) + "\n",
                                                              encoding="utf-8")
    (ROOT / "judged" / f"{name}-sentences.tsv").write_text((args.out / "blind.txt").read_text(encoding="utf-8"),
                                                         encoding="utf-8")
    counts = {(it["source"], it["level"]): 0 for it in items}
    for it in items:
        counts[it["source"], it["level"]] += 1
    print(f"kit {args.out}: {len(items)} items {dict(sorted(counts.items()))}; words tried {tried}; key {key_out}; "
          f"benchmarks/judged/{name}-sentences.key.json")


if __name__ == "__main__":
    main()
