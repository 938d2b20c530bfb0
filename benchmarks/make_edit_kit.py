"""A blind judging kit for the edit generator (issue 25 item 5): new sentences made by derivation edits of real
corpus sentences (edits.py), mixed with real corpus sentences as controls, in the sentences-kit format of
../shared/judging (plausible / classroom-fit).

    python benchmarks/make_edit_kit.py OUTDIR [--seed 2525] [--items 160] [--controls 50] [--exclude WORDS_FILE]

* generated: random CEFR-J headwords (half A1 on cefr:A1, half A2 on cefr:A2, seeded), one new sentence each, drawn
  exactly as a sheet draws edits for a word the corpus covers poorly (selection.draw_passing's edit step: the
  word's candidate edits in a seeded random order, the first that passes the plausibility check, edits.acceptable);
  a word with no passing edit is skipped.  Words listed in --exclude (the development words) are never drawn;
* controls: random corpus items (real sentences) of the same sheets' levels, half graded-enja, half Tatoeba-only.

The kit is written by ../shared/judging/make_blind_sentences.py (the same normalisation for every item, shuffled):
OUTDIR/blind.txt and a brief; its key.tsv is moved out of OUTDIR to OUTDIR.key.tsv, and the items with their
original text, word, host sentence and attribution go to benchmarks/judged/<kit>.key.json (+ <kit>.tsv, the blind
lines, so the scorer build holds them out of its training data).  `score_sentences.py OUTDIR` (with the key put
back, after judging) gives the majority vote per source.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent
SHARED = ROOT.parent.parent / "shared"

BRIEF = """# Judging brief: sentences

You see one file, blind.txt: one line per item, `ID<TAB>sentence`. For every line write one line into
ratings-<your name>.tsv:

    ID<TAB>plausible yes|no<TAB>classroom yes|no<TAB>reason (a few words, optional)

* plausible = grammatical and sensible as written (a native speaker could say or write it);
* classroom = a teacher of beginners (CEFR A1-A2) would use it on a worksheet as is.

Judge each sentence on its own, from the text alone; capitalisation and punctuation were normalised on purpose
(names may be lower-case), so do not judge those. Do not look for the items' sources.
"""


def edit_item(gen, scorer, word: str, rng):
    """The first candidate edit for `word` (in a seeded random order) that passes the plausibility check, as a
    sheet's sampler would take it, with its score; None when none passes."""
    from treegram.plugins.vocabgen.edits import acceptable

    edits = gen.edits(word)
    if not edits:
        return None
    order = [edits[int(i)] for i in rng.permutation(len(edits))]
    for a in range(0, len(order), 16):
        part = order[a:a + 16]
        sc = scorer.score_batch([e.tokens for e in part] + [gen.corpus.tokens[e.item] for e in part])
        for e, s, h in zip(part, sc[:len(part)], sc[len(part):]):
            if acceptable(e, float(s), float(h)):
                return e, float(s)
    return None


def main() -> None:
    from treegram.plugins.vocabgen.corpus import NO_FILE, dedup_key
    from treegram.plugins.vocabgen.default import default_corpus, default_ranker
    from treegram.plugins.vocabgen.edits import EditGenerator, default_edit_data
    from treegram.plugins.vocabgen.quality import sheet_reason
    from treegram.plugins.vocabgen.vocab import cefr_vocabulary, headwords

    ap = argparse.ArgumentParser()
    ap.add_argument("out", type=Path)
    ap.add_argument("--seed", type=int, default=2525)
    ap.add_argument("--items", type=int, default=160, help="new generated items (half A1, half A2)")
    ap.add_argument("--controls", type=int, default=50, help="real corpus sentences")
    ap.add_argument("--exclude", type=Path, default=None, help="a file of words never drawn (one per line)")
    args = ap.parse_args()
    if args.out.exists():
        sys.exit(f"{args.out} exists: choose a new kit folder")
    exclude = set(args.exclude.read_text(encoding="utf-8").split()) if args.exclude else set()
    rng = np.random.default_rng(args.seed)
    corpus = default_corpus()
    data = default_edit_data()
    scorer = default_ranker()
    items: list[dict] = []
    seen: set[str] = set()

    def add(text, source, **kw):
        k = dedup_key(text)
        if k in seen:
            return False
        seen.add(k)
        items.append({"text": text, "source": source, **kw})
        return True

    tried = {}
    for level, n in (("A1", args.items // 2), ("A2", args.items - args.items // 2)):
        gen = EditGenerator(data, cefr_vocabulary(level), level)
        words = [w for w in headwords(level, cumulative=False) if w.isalpha() and w.lower() not in exclude]
        got = tried[level] = 0
        for wi in rng.permutation(len(words)):
            if got >= n:
                break
            w = words[int(wi)]
            tried[level] += 1
            found = edit_item(gen, scorer, w, np.random.default_rng(int(rng.integers(1 << 31))))
            if found is None:
                continue
            e, score = found
            if sheet_reason(e.tokens, w, level) is not None:
                continue  # the sheet's own checks (fragments, senses above the level) would skip it
            s = gen.sentence(e, w, score)
            if add(e.text, f"edit-{level}", word=w, kind=e.kind, score=round(score, 3), host=corpus.texts[e.item],
                   provenance=s.provenance):
                got += 1
    order = rng.permutation(len(corpus))
    graded = [int(i) for i in order if int(corpus.file[int(i)]) != NO_FILE]
    tat = [int(i) for i in order if int(corpus.file[int(i)]) == NO_FILE]
    for pool, label in ((graded, "corpus-graded"), (tat, "corpus-tatoeba")):
        got = 0
        for i in pool:
            if got >= args.controls // 2:
                break
            if sheet_reason(corpus.tokens[i], corpus.tokens[i][0], None) is None:
                got += add(corpus.texts[i], label, provenance=corpus.provenance(i))
    tmp = args.out.parent / (args.out.name + ".src")
    tmp.mkdir(parents=True, exist_ok=True)
    labels = sorted({it["source"] for it in items})
    specs = []
    for lab in labels:
        f = tmp / f"{lab}.txt"
        f.write_text("".join(it["text"] + "\n" for it in items if it["source"] == lab), encoding="utf-8")
        specs.append(f"{f},{lab}")
    subprocess.run([sys.executable, str(SHARED / "judging" / "make_blind_sentences.py"), str(args.out), *specs,
                    "--controls", "0", "--per-file", "1000", "--seed", str(args.seed)], check=True)
    key_out = args.out.parent / (args.out.name + ".key.tsv")
    shutil.move(str(args.out / "key.tsv"), key_out)
    (args.out / "BRIEF.md").write_text(BRIEF, encoding="utf-8")
    sys.path.insert(0, str(SHARED / "judging"))
    from make_blind_sentences import norm  # noqa: E402  the kit's own normalisation, to join texts to IDs

    blind = dict(line.rstrip("\n").split("\t", 1) for line in (args.out / "blind.txt").open(encoding="utf-8"))
    by_norm = {norm(it["text"]): it for it in items}
    joined = [dict(by_norm[text], id=ident, shown=text) for ident, text in blind.items()]
    name = args.out.name
    (ROOT / "judged" / f"{name}.key.json").write_text(json.dumps(joined, ensure_ascii=False, indent=1) + "\n",
                                                    encoding="utf-8")
    shutil.copy(args.out / "blind.txt", ROOT / "judged" / f"{name}.tsv")
    shutil.rmtree(tmp)
    counts = {lab: sum(it["source"] == lab for it in items) for lab in labels}
    print(f"kit {args.out}: {len(joined)} items {counts}; words tried {tried}; key {key_out}; "
          f"benchmarks/judged/{name}.key.json")


if __name__ == "__main__":
    main()
