"""A blind judging kit for the sheet scorer (issue 25): generated sentences mixed with corpus sentences and known-bad
items, in the sentences-kit format of ../shared/judging (plausible / classroom-fit), to measure the scorer's AUC on
sentences it never saw and that no one in the team labelled.

    python benchmarks/make_scorer_kit.py OUTDIR [--seed 25] [--gen-a1 100] [--gen-a2 50] [--corpus 40] [--bad 30]

* generated: for random CEFR-J A1 (and A2) headwords, one sentence each from the default model, drawn exactly as
  `treegram generate --vocab cefr:LEVEL --include WORD -n 1 --seed S` draws it (cli.stream_sentences), new ones
  only (not a training or corpus sentence), no ranker applied: the whole range of quality;
* corpus: random corpus items of the embedded excerpt, half graded-enja, half Tatoeba-only (new in issue 25);
* known-bad: other corpus items with two adjacent words swapped or a noun replaced by a random A1 noun (judges
  still decide: a swap can be harmless).
The kit is written by ../shared/judging/make_blind_sentences.py (same normalisation for every item, shuffled):
OUTDIR/blind.txt and a brief; its key.tsv is moved out of OUTDIR to OUTDIR.key.tsv, and the items with their
original text and source go to benchmarks/judged/<kit>.key.json (+ <kit>.tsv, the blind lines, so the scorer
build holds them out of its training data).
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


def main() -> None:
    from treegram.generation.constraints import NoSentenceError
    from treegram.plugins.vocabgen.cli import stream_sentences
    from treegram.plugins.vocabgen.corpus import NO_FILE, dedup_key
    from treegram.plugins.vocabgen.default import default_corpus, load_default_model
    from treegram.plugins.vocabgen.generator import ConstrainedGenerator
    from treegram.plugins.vocabgen.safety import is_safe
    from treegram.plugins.vocabgen.vocab import cefr_vocabulary, headwords

    ap = argparse.ArgumentParser()
    ap.add_argument("out", type=Path)
    ap.add_argument("--seed", type=int, default=25)
    ap.add_argument("--gen-a1", type=int, default=100)
    ap.add_argument("--gen-a2", type=int, default=50)
    ap.add_argument("--corpus", type=int, default=40)
    ap.add_argument("--bad", type=int, default=30)
    args = ap.parse_args()
    if args.out.exists():
        sys.exit(f"{args.out} exists: choose a new kit folder")
    rng = np.random.default_rng(args.seed)
    corpus = default_corpus()
    model = load_default_model()
    items: list[dict] = []
    seen: set[str] = set()

    def add(text, source, **kw):
        k = dedup_key(text)
        if k in seen:
            return False
        seen.add(k)
        items.append({"text": text, "source": source, **kw})
        return True

    for level, n in (("A1", args.gen_a1), ("A2", args.gen_a2)):
        vocab = cefr_vocabulary(level)
        gen = ConstrainedGenerator(model.generation, model.system, vocab)
        words = headwords(level, cumulative=False)
        got = 0
        for wi in rng.permutation(len(words)):
            if got >= n:
                break
            w = words[int(wi)]
            seed = int(rng.integers(1 << 31))
            try:
                sents = list(stream_sentences(gen, 1, np.random.default_rng(seed), word=w))
            except (NoSentenceError, Exception):  # noqa: BLE001 - a word the model cannot generate is skipped
                continue
            for s in sents:
                if corpus.is_training_sentence(s.tokens) or not is_safe(s.tokens):
                    continue
                if add(s.text, f"generated-{level}", word=w, seed=seed,
                       command=f"treegram generate --vocab cefr:{level} --include {w} -n 1 --seed {seed}"):
                    got += 1
    order = rng.permutation(len(corpus))
    graded = [int(i) for i in order if int(corpus.file[int(i)]) != NO_FILE]
    tat = [int(i) for i in order if int(corpus.file[int(i)]) == NO_FILE]
    for pool, label in ((graded, "corpus-graded"), (tat, "corpus-tatoeba")):
        got = 0
        for i in pool:
            if got >= args.corpus // 2:
                break
            got += add(corpus.texts[i], label, provenance=corpus.provenance(i))
    a1_nouns = sorted(w for w, p in _pos_words("A1") if p == "noun")
    got = 0
    for i in order[::-1]:
        if got >= args.bad:
            break
        toks = list(corpus.tokens[int(i)])
        words_at = [k for k, t in enumerate(toks) if t[:1].isalpha()]
        if len(words_at) < 4:
            continue
        if got % 2 == 0:
            k = int(rng.integers(len(words_at) - 1))
            a, b = words_at[k], words_at[k + 1]
            if b != a + 1 or toks[a].lower() == toks[b].lower():
                continue
            toks[a], toks[b] = toks[b], toks[a]
            kind = "known-bad-swap"
        else:
            nouns = [k for k in words_at if toks[k].lower() in set(a1_nouns) and k > 0]
            if not nouns:
                continue
            k = nouns[int(rng.integers(len(nouns)))]
            toks[k] = a1_nouns[int(rng.integers(len(a1_nouns)))]
            kind = "known-bad-noun"
        text = " ".join(toks)
        got += add(text, kind, from_text=corpus.texts[int(i)])
    # the shared kit maker: one .txt per label, no extra controls (corpus items are ours, labelled)
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
    joined = []
    for ident, text in blind.items():
        it = dict(by_norm[text], id=ident, shown=text)
        joined.append(it)
    name = args.out.name
    (ROOT / "judged" / f"{name}.key.json").write_text(json.dumps(joined, ensure_ascii=False, indent=1) + "\n",
                                                    encoding="utf-8")
    shutil.copy(args.out / "blind.txt", ROOT / "judged" / f"{name}.tsv")
    shutil.rmtree(tmp)
    counts = {lab: sum(it["source"] == lab for it in items) for lab in labels}
    print(f"kit {args.out}: {len(joined)} items {counts}; key {key_out}; benchmarks/judged/{name}.key.json")


def _pos_words(level: str):
    from treegram.plugins.vocabgen.vocab import LEVELS, cefrj_entries

    lim = LEVELS.index(level) + 1
    return [(hw, pos) for hw, pos, lv in cefrj_entries() if lv <= lim and hw.isalpha()]


if __name__ == "__main__":
    main()
