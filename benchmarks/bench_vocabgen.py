"""vocabgen acceptance figures: correctness of the constraint, closeness to the rejection sampler, word
inclusion vs corpus search, speed vs the rejection sampler, and the default model's first-build time.

    /tmp/venv/bin/python benchmarks/bench_vocabgen.py [--samples 10000] [--close 20000] [--per-word 1000]
                                                      [--graded N] [--default-build]

Model: SPINEDEP (MLE, pairs seen once discarded) on the gold dependency trees of ptb-sample-dep/train and UD
English EWT+GUM train (3-15 words), plus, with --graded N, the first N graded-enja sentences parsed by spaCy
(cached).  Vocabulary: CEFR-J 1.5 A1 with inflections.  Writes the `vocabgen` section of RESULTS.md.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _results import machine_line, markdown_table, require_shared, write_section  # noqa: E402

from treegram.generation.sampling import sample_entries  # noqa: E402
from treegram.plugins.vocabgen.constraints import (NoSentenceError, constrain, entry_keys,  # noqa: E402
                                                   log_likelihood_ratio, rejection_sample_entries)
from treegram.plugins.vocabgen.generator import ConstrainedGenerator  # noqa: E402
from treegram.plugins.vocabgen.model import VocabgenModel, read_tree_paths  # noqa: E402
from treegram.plugins.vocabgen.vocab import parse_vocab_spec  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--samples", type=int, default=10000)
    ap.add_argument("--close", type=int, default=20000)
    ap.add_argument("--per-word", type=int, default=1000)
    ap.add_argument("--graded", type=int, default=0)
    ap.add_argument("--default-build", action="store_true")
    args = ap.parse_args()
    shared = require_shared()
    t0 = time.perf_counter()
    deps = read_tree_paths([shared / "ptb-sample-dep/train", shared / "ud-english/EWT/en_ewt-ud-train.conllu",
                            shared / "ud-english/GUM/en_gum-ud-train.conllu"])
    source = f"{len(deps)} gold trees (ptb-sample-dep train, UD EWT+GUM train)"
    if args.graded:
        from treegram.plugins.vocabgen.parsing import parse_sentences, read_sentences
        from treegram.plugins.vocabgen.vocab import user_cache_dir

        texts = read_sentences([shared / "sentences/graded-enja/dist/easy"])[: args.graded]
        parsed = parse_sentences(texts, cache_dir=user_cache_dir() / "parses")
        deps += parsed
        source += f" + {len(parsed)} graded-enja sentences parsed by spaCy"
    model = VocabgenModel.train(deps)
    g = model.generation
    print(f"model {g} in {time.perf_counter() - t0:.1f}s", flush=True)
    csv = shared / "vocab/cefrj/cefrj-vocabulary-profile-1.5.csv"
    vocab = parse_vocab_spec(str(csv), "A1")
    gen = ConstrainedGenerator(g, model.system, vocab)
    rng = np.random.default_rng(0)
    rows = []

    # 1. correctness + diversity, vocabulary only
    t = time.perf_counter()
    sents, stats = gen.sample(args.samples, rng)
    ours_rate = len(sents) / (time.perf_counter() - t)
    ok = sum(all(tok in vocab for tok in s.tokens) for s in sents)
    uniq = len({s.text for s in sents})
    rows.append(["in vocabulary (vocab only)", f"{ok}/{len(sents)} = {100 * ok / len(sents):.2f}%"])
    rows.append(["unique sentences (vocab only)", f"{uniq}/{len(sents)} = {100 * uniq / len(sents):.1f}%"])

    # 2. rejection sampler speed and acceptance
    from treegram.plugins.vocabgen.constraints import oov_outcomes

    oov = oov_outcomes(g, vocab)
    n_rs, draws = min(2000, args.close), 0
    t = time.perf_counter()
    rs_samples = []
    for _ in range(n_rs):
        ent, tries = rejection_sample_entries(g, oov, rng, max_nodes=300)
        draws += tries
        rs_samples.append(entry_keys(g, ent))
    rs_rate = n_rs / (time.perf_counter() - t)
    rows.append(["rejection sampler acceptance (vocab only)", f"{100 * n_rs / draws:.2f}% ({n_rs}/{draws})"])
    rows.append(["speed vocab only: ours / RS (sentences/s)", f"{ours_rate:.0f} / {rs_rate:.0f} = "
                                                              f"{ours_rate / rs_rate:.1f}x"])

    # 3. closeness (-LLR vs RS samples, same number each)
    n_close = args.close
    while len(rs_samples) < n_close:
        ent, tries = rejection_sample_entries(g, oov, rng, max_nodes=300)
        draws += tries
        rs_samples.append(entry_keys(g, ent))
    variants = {"uniform": constrain(gen.pruned, np.ones(gen.pruned.n_contexts), uniform=True),
                "G=1": constrain(gen.pruned, np.ones(gen.pruned.n_contexts)),
                "G estimated (acyclic)": gen.pv,
                "G exact (fixpoint)": ConstrainedGenerator(g, model.system, vocab, method="fixpoint").pv}
    for name, pv in variants.items():
        ours = []
        while len(ours) < n_close:
            ent = sample_entries(pv, rng, max_nodes=300)
            if not isinstance(ent, np.ndarray):
                continue
            ours.append(entry_keys(pv, ent))
        rows.append([f"-LLR vs RS ({n_close} samples each): {name}",
                     f"{log_likelihood_ratio(ours, rs_samples):.1f}"])
    print(rows, flush=True)

    # 4. word inclusion over the A1 list: ours vs corpus search; speed with a required word
    a1_heads = set()
    import csv as _csv

    with open(csv, encoding="utf-8-sig") as fh:
        for row in _csv.DictReader(fh):
            if row["CEFR"].strip() == "A1":
                for alt in row["headword"].split("/"):
                    if alt.strip().isalpha():
                        a1_heads.add(alt.strip().lower())
    corpus_in_vocab = [s for s in {" ".join(x) for x in model.corpus} if all(t in vocab for t in s.split())]
    by_word = Counter(w for s in corpus_in_vocab for w in set(s.split()))
    ours_lt10 = ours_gt100 = corp_lt10 = corp_gt100 = 0
    t_word, n_word, impossible = 0.0, 0, 0
    for w in sorted(a1_heads):
        c = by_word.get(w, 0)
        corp_lt10 += c < 10
        corp_gt100 += c > 100
        try:
            up = gen.sampler_for(w)
        except NoSentenceError:
            impossible += 1
            ours_lt10 += 1
            continue
        t = time.perf_counter()
        seen = set()
        for _ in range(args.per_word):
            ent = up.sample_entries(rng)
            if isinstance(ent, np.ndarray):
                seen.add(entry_keys(up.model, ent))
        t_word += time.perf_counter() - t
        n_word += args.per_word
        u = len(seen)
        ours_lt10 += u < 10
        ours_gt100 += u > 100
    word_rate = n_word / t_word if t_word else float("nan")
    rows.append([f"A1 headwords ({len(a1_heads)}): < 10 / > 100 unique in {args.per_word} samples, ours",
                 f"{ours_lt10} / {ours_gt100} ({impossible} cannot appear under the vocabulary)"])
    rows.append([f"A1 headwords: < 10 / > 100 in-vocabulary corpus sentences (corpus search)",
                 f"{corp_lt10} / {corp_gt100}"])
    # RS with a required word: measured on a few frequent words
    rs_word_rates = []
    for w in ["know", "go", "good", "time"]:
        try:
            up = gen.sampler_for(w)
        except NoSentenceError:
            continue
        cw = np.array([c[0][1] == w for c in g.contexts])
        t = time.perf_counter()
        k, tries_total = 0, 0
        while time.perf_counter() - t < 5 and k < 200:
            ent, tries = rejection_sample_entries(g, oov, rng, cw=cw, max_nodes=300, max_tries=200000)
            tries_total += tries
            k += ent is not None
        rs_word_rates.append((w, k / (time.perf_counter() - t), k / max(tries_total, 1)))
    for w, r, acc in rs_word_rates:
        rows.append([f"speed with required word '{w}': ours / RS", f"{word_rate:.0f} / {r:.1f} sentences/s = "
                     f"{word_rate / max(r, 1e-9):.0f}x (RS acceptance {100 * acc:.3f}%)"])

    # 5. default model first build
    if args.default_build:
        from treegram.plugins.vocabgen.default import build_default_model

        with tempfile.TemporaryDirectory() as tmp:
            os.environ["TREEGRAM_CACHE"] = tmp
            t = time.perf_counter()
            _, info = build_default_model()
            rows.append(["default model first build (WordNet examples, spaCy parse + train)",
                         f"{time.perf_counter() - t:.1f}s ({info['clauses']} clauses)"])
    body = (f"Model: SPINEDEP MLE (pairs seen once discarded) on {source}: {g.n_contexts} contexts, "
            f"{g.n_entries} entries. Vocabulary: CEFR-J 1.5 A1 + inflections ({len(vocab)} words). "
            f"Pruned model: {gen.report.contexts} contexts, {gen.report.entries} entries.\n\n"
            "Unsmoothed only: the semantic-class smoothing of section 3 is not implemented yet, so the paper's "
            "Figure 3 smoothed diversity rows are missing.\n\n"
            + markdown_table(["measure", "value"], rows) + f"\n\n{machine_line()}; "
            f"`python benchmarks/bench_vocabgen.py --samples {args.samples} --close {args.close} "
            f"--per-word {args.per_word}{' --graded ' + str(args.graded) if args.graded else ''}"
            f"{' --default-build' if args.default_build else ''}`\n")
    print(body)
    write_section("vocabgen", body)


if __name__ == "__main__":
    main()
