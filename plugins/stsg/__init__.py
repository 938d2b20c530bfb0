"""Synchronous tree-substitution grammars for extractive sentence compression (Yamangil & Shieber 2010).

- `align`: pair corpora and the deletion alignment (LCS; character-level re-alignment of differently tokenized text)
- `treeprep`: ROOT wrapping, target trees derived from the source parse, cached parsing with any treegram parser
- `model`: `PairCorpus` (integer-coded tree pairs), `STSGSampler` (Gibbs over source-node alignments, numba sweeps,
  counts in the core hash table `treegram.bayes.hashtable`, for `treegram.bayes.GibbsSampler`), readable elementary
  tree pairs (`fragment_pair`, `Fragment`)
- `grammar`: `FiniteSTSG` (MAP counts + Laplace smoothing + copy/delete rules) and `SentenceChart`, its rule
  applications over a source tree for the core tree chart (`treegram.charts.treechart`): Viterbi decoding with a
  per-word reward / target rate, (tp, fp) increments for loss-augmented decoding
- `em`: MAP-EM and VB baselines over a fixed extracted rule set (inside-outside on the core tree chart)
- `induce`: Cohn & Lapata (2007) grammar induction (minimal + composed rules with counts) for the large-margin STSG
- `features`: its rule features (section 3.3), indexed; `qp`: the working-set dual QP (SMO-style coordinate ascent)
- `largemargin`: structured SVM (cutting planes, slack/margin rescaling, loss-augmented decoding over the (tp, fp)
  stratified chart, gold derivations), `SVMGrammar`, `SVMSTSGModel` (`treegram train stsg --method svm`)
- `evaluate`: compression rate, token P/R/F1, relational F1 (spaCy triples), approximate randomization
- `compressor`: `STSGModel` (model file with the embedded parser), the parsed training corpus, a Gibbs run's model
- `baselines`: the em / vb / svm trainers; `train`: `train_stsg`, the library entry point of every method
- `formalism`: `treegram train stsg` (settings, `STSGFormalism` on the core sampling loop); `plugin`: the hook
"""

# Defaults of `treegram train stsg --method svm`, chosen without dev on held-out training pairs (lines 801-1000 after
# training on 1-800: RelF1 at the held-out gold rate, benchmarks/RESULTS.md `stsg-svm-select`).
SVM_LOSS = "hamming"
SVM_C = 1.0

# Annealed Gibbs sweeps of `treegram train stsg` (method gibbs).  The paper runs 5000; on broadcast news (1000 pairs)
# 50 give the same dev quality at a tenth of the time of the earlier default 500: CompR / token F1 / RelF1 76.17 /
# 78.70 / 66.68 (mean of seeds 0-2; 100 sweeps: 76.38 / 78.33 / 65.24) against 78.59 / 79.08 / 66.14 for 500 sweeps
# (seed 0; AR p 0.46 / 0.54) and 77.28 / 78.75 / 66.42 for 500 over seeds 0-4; 7.5 vs 58 CPU s of sampling
# (benchmarks/RESULTS.md `stsg-train-time`, `compression`).
GIBBS_SWEEPS = 50
# Temperatures of the first and last Gibbs sweep, linear in between (the paper's schedule; --anneal-start/-end).
ANNEAL = (5.0, 0.0)
