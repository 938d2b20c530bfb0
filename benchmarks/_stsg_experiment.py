"""The broadcast-news compression experiment shared by the benchmarks (bench_stsg.py, bench_compression.py).

Clarke & Lapata's broadcast-news corpus: lines 1-1000 train, 1001-1170 dev, three annotators.  Sources are parsed
by the foundation PCFG (h=2 v=2 trained on ptb-sample train + gum-const), cached in a work directory; the training
corpus pairs each parsed source with annotator(s)' deletions and the target tree derived from the source parse.
One place builds this, so every system in the compression table sees the same trees, pairs and gold standard.
"""

from __future__ import annotations

from pathlib import Path

import attrs
import numpy as np

from treegram.compression.align import Pair, load_broadcast_news
from treegram.compression.treeprep import derive_target, model_fingerprint, parse_sentences, wrap_root

__all__ = ["BroadcastNews", "foundation_parser", "load_experiment"]


@attrs.define
class BroadcastNews:
    every: dict  # annotator -> all 1170 pairs
    sentences: list  # tokenized sources, all lines
    sources: list  # ROOT-wrapped source parses, all lines
    parse_counts: dict
    parser: object
    parser_path: Path
    train_annotators: str
    train_pairs: list
    train_src: list
    dev_src: list
    dev_tokens: list
    gold: list  # [annotator][sentence] keep masks on dev
    _corpora: dict = attrs.field(factory=dict, init=False, repr=False)  # beta -> PairCorpus

    def corpus(self, beta: float = 0.1):
        """The integer-coded training corpus of the Bayesian/EM models, built on first use and shared by every run
        with the same beta (training only reads it)."""
        from treegram.plugins.stsg.model import PairCorpus

        if beta not in self._corpora:
            self._corpora[beta] = PairCorpus(
                self.train_src, [derive_target(s, p.keep) for s, p in zip(self.train_src, self.train_pairs)],
                [p.keep for p in self.train_pairs], beta=beta)
        return self._corpora[beta]

    def score(self, keeps, scorer):
        """`score_system` of one run's dev keep masks against the three annotators: (summary, per-item counts)."""
        from treegram.compression.evaluate import score_system

        return score_system(self.dev_tokens, [np.asarray(k, bool) for k in keeps], self.gold, scorer)

    def score_runs(self, runs, scorer):
        """`score` of each run's keep masks (e.g. one run per seed): the summaries, and the per-item counts averaged
        over the runs (for the approximate-randomization tests)."""
        got = [self.score(keeps, scorer) for keeps in runs]
        return [s for s, _ in got], {k: np.mean([it[k] for _, it in got], axis=0) for k in ("token", "rel")}

    def gold_rate(self) -> float:
        total = sum(len(t) for t in self.dev_tokens)
        return float(np.mean([100.0 * sum(int(np.sum(k)) for k in g) / total for g in self.gold]))


def foundation_parser(shared: Path, work: Path):
    """The PCFG (h=2 v=2, ptb-sample train + gum-const) that parses the sources, trained once into `work`."""
    from treegram.formalism import load_model

    path = work / "pcfg.model"
    if not path.exists():
        from treegram.grammar.pcfg import PCFGModel, PCFGSettings
        from treegram.trees import read_treebank

        trees = list(read_treebank([shared / "ptb-sample" / "train", shared / "gum-const" / "const"],
                                   on_error="skip", on_problem=lambda p: None))
        PCFGModel.train(trees, PCFGSettings(horizontal=2, vertical=2)).save(path)
    return load_model(path), path


def load_experiment(shared: Path, work: Path, *, train_annotators: str = "1", progress=None) -> BroadcastNews:
    """Parse (or read the cached parses of) the broadcast-news corpus and split it into train and dev."""
    work.mkdir(parents=True, exist_ok=True)
    bn = shared / "compression" / "broadcast-news"
    parser, parser_path = foundation_parser(shared, work)
    every = {a: load_broadcast_news(bn, a, "all") for a in (1, 2, 3)}
    sentences = [p.source for p in every[1]]
    trees, counts = parse_sentences(sentences, parser, parser_id=model_fingerprint(parser_path),
                                    cache_dir=work / "cache", progress=progress)
    sources = [wrap_root(t) for t in trees]
    train_pairs: list[Pair] = []
    train_src = []
    for a in (int(c) for c in train_annotators):
        train_pairs += every[a][:1000]
        train_src += sources[:1000]
    return BroadcastNews(every=every, sentences=sentences, sources=sources, parse_counts=counts, parser=parser,
                         parser_path=parser_path, train_annotators=train_annotators, train_pairs=train_pairs,
                         train_src=train_src, dev_src=sources[1000:], dev_tokens=sentences[1000:],
                         gold=[[p.keep for p in every[a][1000:]] for a in (1, 2, 3)])
