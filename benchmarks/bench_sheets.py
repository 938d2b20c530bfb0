"""Exercise-sheet acceptance figures (issue 12): word inclusion for corpus search / generation / the hybrid over
the CEFR-J A1 headwords, plausibility of corpus / generated / reranked items, sheet speed and model load time.

    python benchmarks/bench_sheets.py [--samples 1000] [--stride 1] [--compare none=PATH,wordnet=PATH]
        [--judge-out FILE] [--judged FILE] [--no-write]

* Word inclusion (paper Figure 5 layout): for every single-word CEFR-J A1 headword w (vocabulary cefr:A1 + the
  forms of w), the number of distinct sentences in `--samples` draws: corpus search = uniform draws from the
  embedded corpus items containing w; generation = generating up from w (SPINEDEP + P_V), every draw re-checked
  (vocabulary, safety); hybrid = half the draws from each, generated ones that copy a training sentence counted
  as corpus, new ones kept only at SLOR >= threshold (what a sheet may show).
* `--compare`: the same figures plus the mean SLOR and the share of new sentences at or above the threshold for
  other model files (e.g. unsmoothed vs WordNet-smoothed builds of build_default.py), to choose the smoother.
* Plausibility: `--judge-out FILE` writes a blind set (corpus items, raw generated sentences, sheet-selected
  generated sentences, shuffled, no labels) plus FILE.key.json; `--judged FILE --judge-key KEY` reads judgments (one line per
  sentence: `N<TAB>p|i<TAB>f|u` = plausible/implausible, classroom-fit/unfit) and reports the rates per source.
* Speed: model + corpus + scorer load time (cold, in a fresh process) and a 4-word x 10-item sheet (warm).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import attrs

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _results import machine_line, markdown_table, publish  # noqa: E402

from treegram.evaluation.significance import approximate_randomization  # noqa: E402
from treegram.formalism import load_model  # noqa: E402
from treegram.generation.constraints import NoSentenceError  # noqa: E402
from treegram.plugins.vocabgen.default import (default_corpus, default_fallback_path, default_model_path,  # noqa: E402
                                              default_scorer)
from treegram.plugins.vocabgen.generator import ConstrainedGenerator  # noqa: E402
from treegram.plugins.vocabgen.safety import is_safe  # noqa: E402
from treegram.plugins.vocabgen.default import default_ranker  # noqa: E402
from treegram.plugins.vocabgen.selection import (SHEET_THRESHOLD, SheetSource, default_source,  # noqa: E402
                                                 draw_passing, fit_order, select_sentences)  # noqa: E402
from treegram.plugins.vocabgen.vocab import cefr_vocabulary, headwords, word_forms  # noqa: E402

WORDS4 = ["school", "book", "family", "water"]

NOTES = """Notes. *Hybrid as shipped* = what a sheet's sampler outputs: 500 uniform corpus draws + 500 outputs of
`selection.draw_passing` with repeats (Figure 5 sampling): generation candidates are drawn until 500 *new* sentences
pass the ranker (copies of training sentences are corpus items, already in the corpus draws; every draw re-checked
for the level and the safety filter), at most `--gen-cap` draws per word.  Sheets ship no fallback model; with
`--fallback FILE` a word the default model covers poorly (< 20 distinct new sentences passing in a 1000-draw probe,
`poorly_covered`) is drawn from FILE first.  *Old hybrids* = 500 corpus + 500 generation *draws*.  *Other
models* (`--compare NAME=FILE`): the same rows with FILE as the only generator.  Inclusion rows: `nice -n 10 python
benchmarks/bench_sheets.py --parts inclusion --gen-cap 2000 --no-fallback [--compare wordnet-A1=FILE]` over all
1058 headwords, FILE = `python -m treegram.plugins.vocabgen.build_default --data ../shared/data --only wordnet
--out DIR` (the WordNet-smoothed SPINEDEP of section 6.3, eq. 1 with EM switches, pairs seen once discarded,
restricted to cefr:A1: 33,395 contexts, 73,794 entries, 0.83 MB; optional, not shipped).  *Fallback models*
(every 10th headword, 106 words, cap 2000, `--stride 10 --parts inclusion --gen-cap 2000 [--no-fallback | --fallback
FILE] --no-write`): the shipped route 17 / 41; + the once-seen-pairs model (`build_default --only fallback`, A1,
2.87 MB) 16 / 43 (i12d; over all 1058 words 160 / 404, run of 2026-11-26 with the same cap); + the WordNet-A1
model 17 / 41 (used for 53 words, 0.78 s per word against 0.31 s), over all 1058 words 174 / 381 (`--parts
inclusion --gen-cap 2000 --fallback FILE --no-write`, used for 564 words; that run's other rows differ from the
table's by a few words because the fallback consumes the shared random stream differently); the WordNet-A1 model as the only generator 17 / 41, over all
words in the table (with the paired test).  *Why smoothing moves the counts so little*: at ranker >= 1.26 generating up gives few distinct new
passing sentences per word (every 10th headword, 2000 draws, distinct draws only; an ad-hoc script over
`draw_passing`): default model median 1 (mean 7.4, none for 48 of 106 words), WordNet-A1 median 1 (mean 7.7, none
for 44), GloVe 500-cluster smoothing restricted to A1 (6.2 MB) median 3 (mean 9.5, none for 37); e.g. *horse*
(47 corpus items): 103 distinct new WordNet-model sentences in 2000 draws, none at >= 1.26 ("The horse is a
social animal." 1.14).  Most words short of 100 have 10-100 corpus items, so they need tens of passing new
sentences each.  The corpus cannot close the gap either: every safe graded-enja sentence of 3-15 tokens within
cefr:A1 (37,172, against the excerpt's 35,335 of <= 12 tokens) would give corpus search 174 / 387 (ad-hoc count,
expected distinct sentences in 1000 uniform draws).  *Threshold trade-off* (every 20th headword, 53 words, cap
5000, with the once-seen-pairs fallback, `--stride 20 --gen-cap 5000 --threshold T`; the goal scaled is < 7.5 and
> 30): ranker >= 1.26: 8 / 28; >= 0.5: 6 / 31; >= 0.0: 5 / 37 (this subset flatters the > 100 count: the old
hybrid at the ranker has 26 of 53 there, against 378 of all 1058 words).  The 0.5 route was judged on the third
blind set below: its items at 0.5 <= score < 1.26 were 70% plausible (32 of 46), so sheets keep the ranker's
threshold (1.26) and the goal is not reached.  *Judged sets* (benchmarks/judged/): written shuffled without source
labels by `--judge-out`, judged once from the text alone by the helper who built the system (one annotator inside
the team, not outside), then joined with the key: *plausible* = grammatical and meaningful as written;
*classroom-fit* = plausible, natural and suitable as a beginners' worksheet item.  First set (seed 12, 330: corpus
/ raw generated / old SLOR-reranked) and second set (seed 13, 100 ranker-passing + 50 corpus) as before; third set
(`--judge-out benchmarks/judged/route-set.tsv --judge-ranker --judge-n 100 --judge-seed 21`): 100 generated items
of the draw-until-pass route with the once-seen-pairs fallback at threshold 0.5 (written while
`selection.SHEET_THRESHOLD` was 0.5) + 50 corpus items; its score bands show what the shipped threshold keeps.  Fourth
set (`--judge-out benchmarks/judged/wordnet-set.tsv --judge-ranker --judge-model wordnet-A1=FILE --judge-n 100
--judge-seed 31`, 200 sentences, judged before the key was read): the WordNet-A1 model's items at >= 1.26 were
84% plausible / 75% classroom-fit (n = 100), the embedded model's in the same set 82% / 80% (n = 50; 89% and 96%
in the second and third sets), corpus 100% / 90%.  *Smoother choice*: the default model stays unsmoothed and
sheets do not use the WordNet-A1 model: its items are about as plausible as the default model's in the same set
but below ~90%, and as the only generator it moves the counts by 7 and 6 words of 1058 (173 / 386 against 180 /
380; significant, p = 0.018 / 0.030, but 24 and 215 words short of the goal); as the fallback 174 / 381 (WordNet smoothing reached 125 / 605 only in the old SLOR-floor
hybrid, i12a; 125 / 599 with the A1 model in the table)."""


def log(*a) -> None:
    print(*a, flush=True)


def inclusion(model, corpus, ranker, words, samples, seed=0, gen_cap=10000, fallback=None, threshold=None):
    """Per word, in `samples` outputs: corpus distinct, generation distinct, the old hybrids (500 corpus + 500
    generation *draws*, new ones kept at the SLOR floor / at the ranker threshold), and the hybrid as shipped:
    500 corpus draws + 500 outputs of the sheet's sampler (selection.draw_passing: draws until 500 are showable —
    excerpt copies or new at ranker >= threshold — at most `gen_cap` draws, then the fallback models).  Returns
    (rows, SLORs of new generated, per-word draws and seconds of the shipped sampler, words that hit the cap)."""
    vocab = cefr_vocabulary("A1")
    gen = ConstrainedGenerator(model.generation, model.system, vocab)
    fallbacks = tuple(ConstrainedGenerator(m.generation, m.system, vocab) for m in (fallback or []))
    threshold = threshold if threshold is not None else SHEET_THRESHOLD
    src = SheetSource(gen, corpus, ranker, threshold if threshold is not None else ranker.threshold,
                      floor=default_scorer()[1], fallbacks=fallbacks)
    rng = np.random.default_rng(seed)
    floor = default_scorer()[1]
    rows = {}
    all_slor = []
    cost = []
    capped = 0
    t0 = time.perf_counter()
    half = samples // 2
    for k, w in enumerate(words):
        forms = word_forms(w, "A1")
        allowed = vocab.with_words(forms - vocab.words)
        cand = corpus.candidates(vocab, set(forms))
        c_draw = set(rng.choice(cand, size=samples).tolist()) if cand else set()
        c_half = set(rng.choice(cand, size=half).tolist()) if cand else set()
        g_all, g_floor, g_rank, copies_half = set(), set(), set(), set()
        n_new = n_ok = n_rank = 0
        try:
            sents, _ = gen.sample(samples, rng, word=w, max_attempts=samples * 3)
        except NoSentenceError:
            sents = []
        for j, s in enumerate(sents):
            if allowed.missing(s.tokens) or not is_safe(s.tokens):
                continue
            g_all.add(s.text)
            if j >= half:
                continue
            i = corpus.find_copy(s.tokens)
            if i is not None or corpus.is_training_sentence(s.tokens):
                copies_half.add(("c", i) if i is not None else ("t", s.text))
                continue
            n_new += 1
            sl = ranker.slor(s.tokens)
            all_slor.append(sl)
            if sl >= floor:
                n_ok += 1
                g_floor.add(s.text)
            if ranker.score(s.tokens) >= ranker.threshold:
                n_rank += 1
                g_rank.add(s.text)
        base = len({("c", i) for i in c_half} | copies_half)
        # the hybrid as shipped: 500 corpus draws + 500 outputs of the sheet's own sampler
        t = time.perf_counter()
        try:
            d = draw_passing(src, w, samples - half, rng, forms=forms, allowed=allowed, unique=False,
                             count_copies=False, max_draws=gen_cap)
            shown = {("c", corpus.find_copy(s.tokens)) for s in d.copies} | {("g", s.text) for s in d.passed}
            cost.append((d.draws, time.perf_counter() - t, len(d.passed), d.fallback_used,
                         len({s.text for s in d.passed})))
            capped += d.capped
        except NoSentenceError:
            shown = set()
            cost.append((0, time.perf_counter() - t, 0, False, 0))
        shipped = len({("c", i) for i in c_half} | shown)
        rows[w] = (len(c_draw), len(g_all), base + len(g_floor), n_new, n_ok, base + len(g_rank), n_rank, shipped)
        if (k + 1) % 100 == 0:
            log(f"  {k + 1}/{len(words)} words [{time.perf_counter() - t0:.0f}s]")
    return rows, np.asarray(all_slor), cost, capped


def sheet_checks(corpora):
    """check(tokens, word, level) -> whether the sheet's own checks beyond words keep the sentence (quality.py:
    fragments, the word in a sense above the level), when this checkout has them; the corpora's sentences are
    parsed once, in batches (the sheet parses one at a time)."""
    try:
        from treegram.plugins.vocabgen.analysis import _display_tokens, _nlp, target_index
        from treegram.plugins.vocabgen.quality import fragment_reason, sense_reason
    except ImportError:
        return lambda tokens, word, level: True
    nlp = _nlp()
    if nlp is None:
        return lambda tokens, word, level: True
    from spacy.tokens import Doc

    parsed: dict[tuple, tuple] = {}

    def parse_many(batch):
        docs = (Doc(nlp.vocab, words=_display_tokens(t)) for t in batch)
        for t, doc in zip(batch, nlp.pipe(docs, batch_size=512)):
            parsed[t] = (tuple(x.tag_ for x in doc), tuple(-1 if x.head.i == x.i else x.head.i for x in doc),
                         tuple(x.dep_ for x in doc))

    t0 = time.perf_counter()
    parse_many(list(dict.fromkeys(tuple(t) for c in corpora for t in c.tokens)))
    log(f"  sheet checks: {len(parsed)} corpus sentences parsed [{time.perf_counter() - t0:.0f}s]")
    memo: dict[tuple, bool] = {}

    def check(tokens, word, level) -> bool:
        t = tuple(tokens)
        key = (t, word, level)
        if key not in memo:
            if t not in parsed:
                parse_many([t])
            p = parsed[t]
            idx = target_index(t, word)
            memo[key] = fragment_reason(t, p) is None and (idx is None or sense_reason(t, idx, word, level, p) is None)
        return memo[key]

    return check


#: what the levels tables in a section of their own (--section) do not say
LEVELS_NOTE = ("Counts of distinct sheet-quality sentences, not of judged ones: judged blind (kit gen25, "
               "`benchmarks/make_edit_kit.py`; RESULTS `exercise-kits-judged`), the edits a sheet shows were 85% "
               "plausible and 62% classroom-fit (majority of 2 judges) against 98% and 96% for the corpus sentences "
               "a sheet shows for the same words.  Both routes apply the classroom-fitness floor to generated items "
               "(selection.fit_order).")


def inclusion_levels(levels, samples, gen_cap, old_corpus_path, stride=1, seed=0, baseline=True):
    """Issue 25's inclusion tables (paper Figure 5 layout): for every single-word CEFR-J headword of each level
    (vocabulary cefr:LEVEL + the word's forms), the distinct *sheet-quality* sentences in `samples` outputs of:
    corpus search in the old excerpt (graded-enja, A1), in the merged excerpt (graded-enja + Tatoeba, A2), the
    merged excerpt's items at or above the corpus floor, and the shipped route (half the draws from the corpus
    items a sheet may show, half outputs of the sheet sampler `draw_passing`: new generated sentences at or above
    the scorer's threshold; the sheet sampler draws edits of real sentences first, edits.py).  `baseline` adds the
    same route without the edit generator (SPINEDEP alone, what shipped before).  Returns {level: (table rows, words,
    per-word counts, seconds, distinct new generated per word, distinct new edits per word)}."""
    from treegram.plugins.vocabgen.edits import EDIT_THRESHOLD, is_edit
    from treegram.plugins.vocabgen.corpus import CorpusIndex

    model = load_model(default_model_path())
    corpus = default_corpus()
    old = CorpusIndex.load(old_corpus_path) if old_corpus_path else None
    check = sheet_checks([corpus] + ([old] if old is not None else []))
    out = {}
    for level in levels:
        vocab = cefr_vocabulary(level)
        gen = ConstrainedGenerator(model.generation, model.system, vocab)
        src = default_source(gen)
        plain = attrs.evolve(src, editor=None)
        scores = src.scorer.score_batch(corpus.tokens) if src.corpus_floor is not None else None
        words = headwords(level, cumulative=False)[::stride]
        rng = np.random.default_rng(seed)
        fit = src.corpus_fitness if src.fitness is not None else None
        cols = {"old": [], "merged": [], "merged_floor": [], "merged_fit": [], "plain": [], "shipped": [],
                "generated": [], "edits": []}
        t0 = time.perf_counter()
        half = samples // 2
        for k, w in enumerate(words):
            forms = word_forms(w, level)
            allowed = vocab.with_words(forms - vocab.words)
            for name, c in (("old", old), ("merged", corpus)):
                if c is None:
                    continue  # no --old-corpus: no row
                cand = c.candidates(vocab, set(forms))
                cand = [i for i in cand if check(c.tokens[i], w, level)]
                cols[name].append(len(set(rng.choice(cand, size=samples).tolist())) if cand else 0)
            cand = [i for i in corpus.candidates(vocab, set(forms)) if check(corpus.tokens[i], w, level)]
            if scores is not None:
                cand = [i for i in cand if scores[i] >= src.corpus_floor]
            cols["merged_floor"].append(len(set(rng.choice(cand, size=samples).tolist())) if cand else 0)
            if fit is not None:  # the classroom-fitness floor (fitness.py): what sheets can show
                cand = [i for i in cand if fit[i] >= src.fitness.floor]
            cols["merged_fit"].append(len(set(rng.choice(cand, size=samples).tolist())) if cand else 0)
            c_half = {("c", i) for i in rng.choice(cand, size=half).tolist()} if cand else set()
            for name, s_ in (("plain", plain), ("shipped", src)) if baseline else (("shipped", src),):
                try:
                    d = draw_passing(s_, w, samples - half, np.random.default_rng([seed, k]), forms=forms,
                                     allowed=allowed, unique=False, max_draws=gen_cap)
                    shown = {("c", corpus.find_copy(s.tokens)) for s in d.copies
                             if check(corpus.tokens[corpus.find_copy(s.tokens)], w, level)}
                    fit_passed = [s for s in fit_order(s_, d.passed) if check(s.tokens, w, level)]
                    passed = {s.text for s in fit_passed}
                    shown |= {("g", t) for t in passed}
                    n_gen = len(passed)
                    n_edit = len({s.text for s in fit_passed if is_edit(s)})
                except NoSentenceError:
                    shown, n_gen, n_edit = set(), 0, 0
                cols[name].append(len(c_half | shown))
                if name == "shipped":
                    cols["generated"].append(n_gen)
                    cols["edits"].append(n_edit)
            if (k + 1) % 100 == 0:
                log(f"  {level}: {k + 1}/{len(words)} words [{time.perf_counter() - t0:.0f}s]")
        rows = []
        labels = {"old": "corpus alone, old excerpt (graded-enja, cefr:A1 sentences)",
                  "merged": "corpus alone, merged excerpt (graded-enja + Tatoeba, cefr:A2 sentences)",
                  "merged_floor": "corpus alone, merged excerpt, items at or above the corpus floor",
                  "merged_fit": "corpus alone, merged excerpt, items at or above the classroom-fitness floor "
                                "(what sheets show)",
                  "plain": f"the route without edits: 500 draws of those corpus items + 500 outputs of the SPINEDEP "
                           f"sheet sampler (new generated at scorer >= {src.threshold:.2f} and at or above the "
                           f"fitness floor, cap {gen_cap} draws)",
                  "shipped": f"**shipped route**: 500 draws of those corpus items + 500 outputs of the sheet sampler "
                             f"(edits of real sentences at scorer >= {EDIT_THRESHOLD:.2f} first, then SPINEDEP at "
                             f">= {src.threshold:.2f}; both at or above the fitness floor; cap {gen_cap} draws)"}
        for key, lab in labels.items():
            if not cols[key]:
                continue
            v = np.asarray(cols[key])
            rows.append([lab, int((v < 10).sum()), int((v > 100).sum()), f"{np.median(v):.0f}"])
        g = np.asarray(cols["generated"])
        out[level] = (rows, words, cols, time.perf_counter() - t0, g, np.asarray(cols["edits"]))
    return out


def sheet_mix(words, per_word, seed=0):
    """What sheets take from where: select_sentences(word, per_word) for each word with the default source."""
    from treegram.plugins.vocabgen.edits import is_edit

    model = load_model(default_model_path())
    gen = ConstrainedGenerator(model.generation, model.system, cefr_vocabulary("A1"))
    src = default_source(gen)
    stats: dict = {}
    short = 0
    for k, w in enumerate(words):
        groups, problems = select_sentences(src, [w], per_word, np.random.default_rng(seed + k), stats=stats)
        short += sum(len(v) for v in groups.values()) < per_word
        stats["edits_shown"] = stats.get("edits_shown", 0) + sum(is_edit(s) for v in groups.values() for s in v)
    return stats, short


def summarize(rows, col):
    vals = np.asarray([r[col] for r in rows.values()])
    return int((vals < 10).sum()), int((vals > 100).sum())


def judge_set(model, corpus, scorer, threshold, out: Path, n_each: int, seed: int):
    """Blind set: n_each corpus items, raw generated, and sheet-selected generated sentences (target A1 words)."""
    rng = np.random.default_rng(seed)
    vocab = cefr_vocabulary("A1")
    gen = ConstrainedGenerator(model.generation, model.system, vocab)
    words = [w for w in headwords("A1") if len(w) > 2]
    items = []
    seen = set()

    def add(text, src, word):
        if text not in seen:
            seen.add(text)
            items.append({"text": text, "source": src, "word": word})

    counts = {"corpus": 0, "generated": 0, "reranked": 0}
    source = SheetSource(gen, corpus, scorer, threshold, corpus_share=0.5)
    order = rng.permutation(len(words))
    for wi in order:
        w = words[int(wi)]
        if all(v >= n_each for v in counts.values()):
            break
        try:
            raw, _ = gen.sample(1, rng, word=w, unique=True)
        except NoSentenceError:
            continue
        if counts["generated"] < n_each and raw and corpus.find_copy(raw[0].tokens) is None \
                and not corpus.is_training_sentence(raw[0].tokens) and is_safe(raw[0].tokens):
            add(raw[0].text, "generated", w)
            counts["generated"] = sum(i["source"] == "generated" for i in items)
        groups, _ = select_sentences(source, [w], 2, rng)
        for s in groups.get(w, []):
            key = "reranked" if s.source == "generated" else "corpus"
            if counts[key] < n_each:
                add(s.text, key, w)
                counts[key] = sum(i["source"] == key for i in items)
    perm = rng.permutation(len(items))
    items = [items[int(i)] for i in perm]
    out.write_text("".join(f"{n}\t{it['text']}\n" for n, it in enumerate(items, start=1)), encoding="utf-8")
    Path(str(out) + ".key.json").write_text(json.dumps(items, ensure_ascii=False, indent=1), encoding="utf-8")
    log(f"wrote {len(items)} sentences to {out} (key: {out}.key.json): {counts}")


def judge_set_ranker(model, corpus, ranker, out: Path, n_gen: int, n_corpus: int, seed: int, others=()):
    """Second blind set, for the shipped ranker: n_gen generated items that pass it (what a sheet shows when the
    corpus lacks items: select_sentences with corpus_share 0, no below-threshold fill) for random A1 headwords,
    mixed with n_corpus corpus items, shuffled; written like judge_set (source "ranked" / "corpus").

    `others` = [(label, model, n)]: n ranker-passing items of each other model as well, for the same random words,
    and only items at or above the threshold for every model (max_below 0); each item's key says its "model"
    ("default" for the embedded one)."""
    rng = np.random.default_rng(seed)
    vocab = cefr_vocabulary("A1")
    gen = ConstrainedGenerator(model.generation, model.system, vocab)
    words = [w for w in headwords("A1") if len(w) > 2]
    import attrs

    src = attrs.evolve(default_source(gen), corpus_share=0.0)  # the shipped route (draw_passing, fallback)
    assert src.scorer is ranker or src.threshold == ranker.threshold
    sources = [("default", src, n_gen)]
    if others:
        sources = [(lab, attrs.evolve(s, max_below=0), n) for lab, s, n in sources]
        sources += [(lab, attrs.evolve(src, generator=ConstrainedGenerator(m.generation, m.system, vocab),
                                       fallbacks=(), max_below=0), n) for lab, m, n in others]
    items, seen = [], set()
    counts = {lab: 0 for lab, _, _ in sources}
    n_corp = 0
    for wi in rng.permutation(len(words)):
        w = words[int(wi)]
        if all(counts[lab] >= n for lab, _, n in sources) and n_corp >= n_corpus:
            break
        for lab, sc, n in sources:
            if counts[lab] >= n:
                continue
            groups, _ = select_sentences(sc, [w], 1, rng)
            for s in groups.get(w, []):
                if s.source == "generated" and counts[lab] < n and s.text not in seen:
                    seen.add(s.text)
                    it = {"text": s.text, "source": "ranked", "word": w, "score": s.score,
                          "fallback": "fallback model" in s.provenance}
                    if others:
                        it["model"] = lab
                    items.append(it)
                    counts[lab] += 1
        if n_corp < n_corpus:
            cand = corpus.candidates(gen.vocab, set(word_forms(w, "A1")))
            if cand:
                i = int(rng.choice(cand))
                if corpus.texts[i] not in seen:
                    seen.add(corpus.texts[i])
                    items.append({"text": corpus.texts[i], "source": "corpus", "word": w})
                    n_corp += 1
    items = [items[int(i)] for i in rng.permutation(len(items))]
    out.write_text("".join(f"{n}\t{it['text']}\n" for n, it in enumerate(items, start=1)), encoding="utf-8")
    key = out.with_name(out.name.removesuffix(".tsv") + ".key.json")
    key.write_text(json.dumps(items, ensure_ascii=False, indent=1), encoding="utf-8")
    log(f"wrote {len(items)} sentences to {out} (key: {key}): {counts}, corpus {n_corp}")


def judged_table(judged: Path, key_path: Path):
    key = json.loads(key_path.read_text(encoding="utf-8"))
    marks = {}
    for line in judged.read_text(encoding="utf-8").splitlines():
        parts = line.split("\t")
        if len(parts) >= 3 and parts[0].isdigit():
            marks[int(parts[0])] = (parts[1].strip() == "p", parts[2].strip() == "f")
    rows = []
    groups = [(s, lambda it, s=s: it["source"] == s) for s in ("corpus", "generated", "reranked", "ranked")]
    if any("model" in it for it in key):
        th = default_ranker().threshold
        for lab in dict.fromkeys(it["model"] for it in key if "model" in it):
            groups.append((f"ranked, {lab} model (all >= {th:.2f})", lambda it, lab=lab: it.get("model") == lab))
    elif any("fallback" in it for it in key):
        th = default_ranker().threshold
        r = lambda it: it["source"] == "ranked"  # noqa: E731
        groups += [("ranked, default model", lambda it: r(it) and not it.get("fallback")),
                   ("ranked, fallback model", lambda it: r(it) and it.get("fallback")),
                   (f"ranked, score >= {th:.2f} (what sheets show)", lambda it: r(it) and it["score"] >= th),
                   (f"... default model, score >= {th:.2f}",
                    lambda it: r(it) and not it.get("fallback") and it["score"] >= th),
                   (f"... fallback model, score >= {th:.2f}",
                    lambda it: r(it) and it.get("fallback") and it["score"] >= th),
                   (f"ranked, 0.5 <= score < {th:.2f} (only at the lower threshold)",
                    lambda it: r(it) and 0.5 <= it["score"] < th),
                   ("below 0.5 (a marked last-resort item)", lambda it: r(it) and it["score"] < 0.5)]
    for src, pick in groups:
        got = [marks[n] for n, it in enumerate(key, start=1) if pick(it) and n in marks]
        if got:
            rows.append([src, len(got), f"{100 * np.mean([p for p, _ in got]):.1f}%",
                         f"{100 * np.mean([f for _, f in got]):.1f}%"])
    return rows


def speed(samples_sheet=10):
    code = ("import time; t=time.perf_counter(); "
            "from treegram.plugins.vocabgen.default import load_default_model, default_corpus, default_scorer; "
            "m=load_default_model(); t1=time.perf_counter(); c=default_corpus(); t2=time.perf_counter(); "
            "default_scorer(); from treegram.plugins.vocabgen.default import default_ranker; default_ranker(); "
            "t3=time.perf_counter(); "
            "from treegram.plugins.vocabgen.vocab import cefr_vocabulary; v=cefr_vocabulary('A1'); "
            "t4=time.perf_counter(); print(t1-t, t2-t1, t3-t2, t4-t3)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    load = [float(x) for x in out]
    model = load_model(default_model_path())
    corpus = default_corpus()
    vocab = cefr_vocabulary("A1")
    t = time.perf_counter()
    gen = ConstrainedGenerator(model.generation, model.system, vocab)
    t_gen = time.perf_counter() - t
    src = default_source(gen)
    assert src.corpus is corpus
    select_sentences(src, WORDS4, samples_sheet, 1)  # warm-up (per-word samplers, corpus index)
    times = []
    for seed in range(5):
        t = time.perf_counter()
        groups, problems = select_sentences(src, WORDS4, samples_sheet, seed + 2)
        times.append(time.perf_counter() - t)
    n_items = sum(len(v) for v in groups.values())
    return load, t_gen, float(np.median(times)), n_items, problems


def previous_parts() -> dict[str, str]:
    """The blocks of the current `sheets` section, by their bold heading (for parts not rerun: --parts)."""
    import re

    from _results import RESULTS

    text = RESULTS.read_text(encoding="utf-8") if RESULTS.exists() else ""
    m = re.search(r"<!-- sheets:begin -->\n(.*?)<!-- sheets:end -->", text, flags=re.S)
    if not m:
        return {}
    out: dict[str, str] = {}
    key = None
    for line in m.group(1).splitlines():
        h = re.match(r"\*\*([^*]+)\*\*", line)
        if h:
            key = h.group(1).split(" (")[0].strip()
            out[key] = ""
        elif line.startswith(("Notes.", "Embedded data files", "Vocabulary cefr:A1")) or re.match(r"\d{4}-\d\d-\d\d, ", line):
            key = None
        if key:
            out[key] += line + "\n"
    return out


PARTS = ("inclusion", "levels", "mix", "judged", "speed")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--samples", type=int, default=1000)
    ap.add_argument("--stride", type=int, default=1, help="every K-th headword only (1 = all)")
    ap.add_argument("--gen-cap", type=int, default=10000,
                    help="draw cap per word of the shipped hybrid's sampler (selection.draw_passing)")
    ap.add_argument("--threshold", type=float, default=None,
                    help="ranker score the shipped hybrid's sampler needs (default: selection.SHEET_THRESHOLD)")
    ap.add_argument("--fallback", default="", help="model file(s) (comma-separated) tried as fallbacks by the "
                    "shipped hybrid's sampler (default: the embedded fallback, if any)")
    ap.add_argument("--no-fallback", action="store_true", help="the shipped hybrid's sampler without fallback models")
    ap.add_argument("--parts", default=",".join(PARTS),
                    help="which parts to run (inclusion,mix,judged,speed); the others are kept from RESULTS.md")
    ap.add_argument("--compare", default="", help="name=model.npz,... other models for the smoother choice")
    ap.add_argument("--judge-out", type=Path, default=None)
    ap.add_argument("--judge-n", type=int, default=110)
    ap.add_argument("--judge-ranker", action="store_true",
                    help="with --judge-out: the second set (items passing the shipped ranker + corpus items)")
    ap.add_argument("--judge-seed", type=int, default=13)
    ap.add_argument("--judged2", type=Path, default=None, help="judgments of the --judge-ranker set")
    ap.add_argument("--judge-key2", type=Path, default=None)
    ap.add_argument("--judged3", type=Path, default=None, help="judgments of the set of the shipped route")
    ap.add_argument("--judge-key3", type=Path, default=None)
    ap.add_argument("--judge-model", default="", help="with --judge-out --judge-ranker: NAME=FILE, --judge-n "
                    "ranker-passing items of FILE's model + --judge-n/2 of the embedded model + --judge-n/2 corpus")
    ap.add_argument("--judged4", type=Path, default=None, help="judgments of the --judge-model set")
    ap.add_argument("--judge-key4", type=Path, default=None)
    ap.add_argument("--judged", type=Path, default=None, help="judgments (N<TAB>p|i<TAB>f|u per line)")
    ap.add_argument("--judge-key", type=Path, default=None, help="the key written next to the --judge-out set")
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--levels", default="A1,A2", help="levels of the `levels` part (issue 25 inclusion tables)")
    ap.add_argument("--no-baseline", action="store_true",
                    help="levels part: skip the route without edits (SPINEDEP alone; halves the time)")
    ap.add_argument("--old-corpus", default="", help="the old corpus excerpt (e.g. `git show 295e913:plugins/vocabgen/"
                    "data/default-corpus.npz > old.npz`) for the `levels` part's corpus-alone row")
    ap.add_argument("--section", default="sheets",
                    help="RESULTS section to write; another than `sheets` takes the levels tables alone (with "
                         "--parts levels, e.g. `--stride 10 --section edits` for a quick figure that leaves the full "
                         "tables in `sheets` as they are)")
    ap.add_argument("--mix-stride", type=int, default=10, help="sheet mix over every K-th A1 headword")
    ap.add_argument("--mix-per-word", type=int, default=10)
    args = ap.parse_args()
    parts = set(args.parts.split(","))
    if parts - set(PARTS):
        sys.exit(f"--parts: unknown {sorted(parts - set(PARTS))} (choose from {', '.join(PARTS)})")
    old = previous_parts()
    corpus = default_corpus()
    scorer, threshold = default_scorer()
    model = load_model(default_model_path())
    if args.judge_out:
        if args.judge_ranker:
            others = []
            if args.judge_model:
                name, _, path = args.judge_model.partition("=")
                others = [(name, load_model(path), args.judge_n)]
            judge_set_ranker(model, corpus, default_ranker(), args.judge_out,
                             args.judge_n // 2 if others else args.judge_n, args.judge_n // 2,
                             seed=args.judge_seed, others=others)
        else:
            judge_set(model, corpus, scorer, threshold, args.judge_out, args.judge_n, seed=12)
        return
    ranker = default_ranker()
    words = headwords("A1")
    all_words = list(words)
    words = words[::args.stride]
    fb_paths = [Path(p) for p in args.fallback.split(",") if p] or \
        [p for p in [default_fallback_path()] if p is not None and p.is_file()]
    fb_paths = [] if args.no_fallback else fb_paths
    fallback = [load_model(p) for p in fb_paths]
    body = [f"Vocabulary cefr:A1 (embedded CEFR-J 1.5, {len(cefr_vocabulary('A1').words)} forms + names); "
            f"{len(words)} single-word A1 headwords; {args.samples} samples per word; corpus = the embedded "
            f"excerpt ({len(corpus)} graded-enja sentences); SLOR floor {threshold:.3f}; plausibility ranker "
            f"threshold {ranker.threshold:.3f} (benchmarks/bench_plausibility.py).", ""]
    if "inclusion" in parts:
        models = [("default (embedded)", model)]
        for spec in filter(None, args.compare.split(",")):
            name, _, path = spec.partition("=")
            models.append((name, load_model(path)))
        table = []
        cost_lines = []
        shipped_by_model = []
        for name, m in models:
            t = time.perf_counter()
            rows, slors, cost, capped = inclusion(m, corpus, ranker, words, args.samples, gen_cap=args.gen_cap,
                                                  fallback=fallback, threshold=args.threshold)
            dt = time.perf_counter() - t
            log(f"{name}: {dt:.0f}s")
            shipped_by_model.append((name, np.asarray([rows[w][7] for w in words], dtype=float)))
            if not table:
                c = summarize(rows, 0)
                table.append(["corpus search (embedded excerpt, 1000 draws)", c[0], c[1], "-", "-", "-"])
            g, h, hr, hs = summarize(rows, 1), summarize(rows, 2), summarize(rows, 5), summarize(rows, 7)
            new = sum(r[3] for r in rows.values())
            ok = sum(r[4] for r in rows.values())
            ok_r = sum(r[6] for r in rows.values())
            table.append([f"generation alone, {name} ({m.generation.n_entries} entries, 1000 draws)", g[0], g[1],
                          f"{slors.mean():.3f}" if len(slors) else "-", f"{100 * ok / max(new, 1):.1f}%",
                          f"{100 * ok_r / max(new, 1):.1f}%"])
            table.append([f"old hybrid: 500 corpus + 500 generation draws, new at SLOR >= floor, {name}", h[0], h[1],
                          "-", "-", "-"])
            table.append([f"old hybrid: 500 corpus + 500 generation draws, new at ranker >= threshold, {name}",
                          hr[0], hr[1], "-", "-", "-"])
            fb = f" + fallback {', '.join(p.name for p in fb_paths)}" if fb_paths else ""
            lead = "**hybrid as shipped**" if m is model else "hybrid with the sheet sampler"
            table.append([f"{lead}: 500 corpus draws + 500 outputs of the sheet sampler "
                          f"(draw_passing, ranker >= {args.threshold if args.threshold is not None else ranker.threshold:.2f}, cap {args.gen_cap} draws{fb}), {name}", hs[0], hs[1], "-", "-", "-"])
            draws = np.asarray([c[0] for c in cost])
            secs = np.asarray([c[1] for c in cost])
            outs = np.asarray([c[2] for c in cost])
            distinct = np.asarray([c[4] for c in cost])
            cost_line = (f"Sheet sampler cost ({name}): per word median {np.median(draws):.0f} draws (mean "
                         f"{draws.mean():.0f}, max {draws.max()}), median {np.median(secs):.2f} s (mean "
                         f"{secs.mean():.2f} s, total {secs.sum():.0f} s; + a 1000-draw coverage probe per word when "
                         f"a fallback exists); {capped} of {len(words)} words hit the cap before 500 new "
                         f"sentences passed (median passing outputs then "
                         f"{np.median(outs[draws >= args.gen_cap]) if (draws >= args.gen_cap).any() else 0:.0f}); "
                         f"fallback used for {sum(c[3] for c in cost)} words; distinct new sentences passing the "
                         f"ranker per word: median {np.median(distinct):.0f}, mean {distinct.mean():.1f}, none for "
                         f"{int((distinct == 0).sum())} words.")
            cost_lines.append(cost_line)
        for name, v in shipped_by_model[1:]:
            # paired over words (the same words, the same corpus draws): is the difference in either count real?
            base = shipped_by_model[0][1]
            p_lo = approximate_randomization(base < 10, v < 10, trials=10000, rng=0).p_value
            p_hi = approximate_randomization(base > 100, v > 100, trials=10000, rng=0).p_value
            cost_lines.append(f"Sheet sampler, {name} against {shipped_by_model[0][0]} (paired approximate "
                              f"randomization over the {len(words)} words, 10,000 trials): words with < 10 "
                              f"{int((v < 10).sum())} vs {int((base < 10).sum())}, p = {p_lo:.3f}; words with > 100 "
                              f"{int((v > 100).sum())} vs {int((base > 100).sum())}, p = {p_hi:.3f}.")
        inc = ["**Word inclusion** (paper Figure 5 layout; goal: < 150 words with < 10 and > 600 with > 100)", "",
               markdown_table(["system", "words with < 10", "words with > 100", "mean SLOR of new generated",
                               "new generated at SLOR >= floor", "new generated at ranker >= threshold"], table),
               "", "\n\n".join(cost_lines), ""]
        body.extend(inc)
    elif "Word inclusion" in old:
        body.append(old["Word inclusion"].rstrip() + "\n")
    levels_body: list[str] = []
    if "levels" in parts:
        res = inclusion_levels(args.levels.split(","), args.samples, args.gen_cap, args.old_corpus, args.stride,
                               baseline=not args.no_baseline)
        for level, (rows, words, cols, secs, g, ed) in res.items():
            levels_body += [f"**Inclusion {level}** (issue 25; {len(words)} single-word CEFR-J {level} headwords, vocabulary "
                     f"cefr:{level} + the word's forms, {args.samples} samples per word, {secs:.0f} s; goal: < 50 words "
                     "with < 10 sheet-quality sentences, > 600 with > 100 — scaled for other list lengths)", "",
                     markdown_table(["route", "words with < 10", "words with > 100", "median per word"], rows), "",
                     f"Distinct new generated sentences passing the scorer per word (shipped route): median "
                     f"{np.median(g):.0f}, mean {g.mean():.1f}, none for {int((g == 0).sum())} words; of them edits "
                     f"of real sentences: median {np.median(ed):.0f}, mean {ed.mean():.1f}, none for "
                     f"{int((ed == 0).sum())} words.", ""]
        if args.section == "sheets":
            body += levels_body
    if "levels" not in parts or args.section != "sheets":
        for k, v in old.items():
            if k.startswith("Inclusion A"):
                body.append(v.rstrip() + "\n")
    if "mix" in parts:
        t = time.perf_counter()
        mix_words = all_words[::args.mix_stride]
        stats, short = sheet_mix(mix_words, args.mix_per_word)
        n = stats["corpus"] + stats["generated"]
        body.append(f"**Sheet mix** (select_sentences with the default source, one sheet per word, --per-word "
                    f"{args.mix_per_word}, every {args.mix_stride}th A1 headword = {len(mix_words)} words, "
                    f"{time.perf_counter() - t:.0f} s): {n} items, {stats['corpus']} corpus "
                    f"({100 * stats['corpus'] / max(n, 1):.1f}%), {stats['generated']} generated "
                    f"({100 * stats['generated'] / max(n, 1):.1f}%: {stats.get('edits_shown', 0)} edits of real "
                    f"sentences), of which {stats['below_shown']} below the "
                    f"ranker threshold (marked, last resort); {short} words short of {args.mix_per_word}; "
                    f"{stats['draws']} generation draws in all.")
        body.append("")
    elif "Sheet mix" in old:
        body.append(old["Sheet mix"].rstrip() + "\n")
    if "judged" in parts:
        judged_sets = [
            (args.judged, args.judge_key,
             "**Plausibility** (blind judged set: see benchmarks/README.md for how it was judged)"),
            (args.judged2, args.judge_key2,
             "**Plausibility of the shipped ranker's items** (second blind set, `--judge-out FILE --judge-ranker "
             "--judge-n 100`, seed 13: 100 generated items that pass the ranker — what a sheet shows when the corpus "
             "lacks items — mixed with 50 corpus items, shuffled, judged the same way by the same one annotator; "
             "these sentences were not in the ranker's training set)"),
            (args.judged3, args.judge_key3,
             "**Plausibility of the draw-until-pass route** (third blind set, `--judge-out FILE --judge-ranker "
             "--judge-n 100 --judge-seed 21`: generated items of the route with the fallback at ranker >= 0.5, what "
             "a sheet at --per-word 1 shows when the corpus lacks items, mixed with corpus items, shuffled, labels "
             "hidden while judging, judged once by one annotator inside the team)"),
            (args.judged4, args.judge_key4,
             "**Plausibility of the WordNet-smoothed model's items** (fourth blind set, `--judge-out FILE "
             "--judge-ranker --judge-model wordnet-A1=FILE --judge-n 100 --judge-seed 31`: 100 items of the "
             "WordNet-smoothed A1 model and 50 of the embedded model, every one at ranker >= the threshold, for the "
             "same random A1 headwords (sheets at --per-word 1, corpus share 0, no below-threshold fill), + 50 corpus "
             "items, shuffled, labels hidden while judging, judged once by one annotator inside the team)"),
        ]
        for judged, key, title in judged_sets:
            if judged:
                body += [title, "", markdown_table(["source", "sentences", "plausible", "classroom-fit"],
                                                   judged_table(judged, key)), ""]
    else:
        for k in ("Plausibility", "Plausibility of the shipped ranker's items",
                  "Plausibility of the draw-until-pass route", "Plausibility of the WordNet-smoothed model's items"):
            if k in old:
                body.append(old[k].rstrip() + "\n")
    if "speed" in parts:
        load, t_gen, t_sheet, n_items, problems = speed()
        body.append("**Speed**")
        body.append("")
        body.append(markdown_table(["measure", "seconds"], [
            ["load embedded model (fresh process)", f"{load[0]:.2f}"], ["load corpus items", f"{load[1]:.2f}"],
            ["load scorer + ranker", f"{load[2]:.2f}"], ["cefr:A1 vocabulary (lemminflect)", f"{load[3]:.2f}"],
            ["constrain model to cefr:A1 (prune + G + P_V)", f"{t_gen:.2f}"],
            [f"sheet 4 words x 10 items, warm (median of 5; {n_items} items)", f"{t_sheet:.3f}"]]))
        body.append("")
    elif "Speed" in old:
        body.append(old["Speed"].rstrip() + "\n")
    size = {p.name: p.stat().st_size for p in default_model_path().parent.glob("default-*.npz")}
    body.append("Embedded data files: " + ", ".join(f"{k} {v / 1e6:.2f} MB" for k, v in sorted(size.items())) + ".")
    body.append("")
    body.append(NOTES)
    body.append("")
    body.append(machine_line() + "; `python benchmarks/bench_sheets.py " + " ".join(sys.argv[1:]) + "`")
    stamp = machine_line() + "; `python benchmarks/bench_sheets.py " + " ".join(sys.argv[1:]) + "`"
    if args.section != "sheets":  # the levels tables alone, in their own section; `sheets` is left as it is
        text = "\n".join(levels_body + [LEVELS_NOTE, "", stamp])
        publish(args.section, text, not args.no_write)
        return
    text = "\n".join(body)
    publish("sheets", text, not args.no_write)


if __name__ == "__main__":
    main()
