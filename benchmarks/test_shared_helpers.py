"""Checks of the helpers the benchmark scripts share (`_results.py`, `_stsg_experiment.py`)."""

from __future__ import annotations

import time

import numpy as np
import pytest

import _results
from _stsg_experiment import BroadcastNews


class _Parser:
    """Parses by a flat bracketing; fails on sentences holding "FAIL"; counts its calls."""

    def __init__(self):
        self.calls = 0

    def __call__(self, tokens):
        from treegram.errors import ParseFailure
        from treegram.formalism import flat_fallback

        self.calls += 1
        if "FAIL" in tokens:
            raise ParseFailure("no parse")
        return flat_fallback(tokens)


def test_parse_timed_falls_back_flat_counts_failures_and_warms_up_outside_the_timing():
    from treegram.formalism import flat_fallback

    parse, ticks = _Parser(), []

    def clock():  # records how many parses had run when the timing started and ended
        ticks.append(parse.calls)
        return float(len(ticks))

    sentences = [["FAIL", "a"], ["b", "c"], ["FAIL"]]
    trees, failed, seconds = _results.parse_timed(parse, sentences, clock=clock)
    assert failed == 2 and seconds == 1.0
    assert [t.to_bracket() for t in trees] == [flat_fallback(s).to_bracket() for s in sentences]
    assert ticks == [1, 4]  # the warm-up parse (which failed: no matter) ran before the clock started
    parse = _Parser()
    _results.parse_timed(parse, sentences, warm=False)
    assert parse.calls == 3


def test_parse_timed_stats_does_not_count_the_warm_up():
    class Model:
        def parse(self, tokens):
            return _Parser()(tokens)

        def parse_with_stats(self, tokens):
            return self.parse(tokens), {"adjunctions": len(tokens)}, {7: 1}

    trees, failed, stats, used, seconds = _results.parse_timed_stats(Model(), [["a", "b"], ["FAIL"], ["c"]])
    assert len(trees) == 3 and failed == 1 and seconds >= 0.0
    assert stats == {"adjunctions": 3} and used == {7: 2}


def test_parseval_and_its_significance_on_the_same_sentences():
    from treegram.trees import parse_brackets

    gold = [parse_brackets("(S (NP (DT the) (NN dog)) (VP (VBD saw) (NP (PRP it))))", source="t")[0],
            parse_brackets("(S (NP (NNS dogs)) (VP (VBP bark) (ADVP (RB loudly))))", source="t")[0]]
    flat = [parse_brackets("(S (DT the) (NN dog) (VBD saw) (PRP it))", source="t")[0],
            parse_brackets("(S (NNS dogs) (VBP bark) (RB loudly))", source="t")[0]]
    all_len, le40 = _results.parseval(gold, gold)
    assert all_len.f1 == le40.f1 == 100.0
    worse, _ = _results.parseval(gold, flat)
    assert worse.f1 < 100.0
    res = _results.parseval_ar(all_len, worse, seed=1)
    assert res.difference == pytest.approx(all_len.f1 - worse.f1) and 0.0 <= res.p_value <= 1.0


def test_ptb_sample_reads_a_split_and_its_first_n(shared_data):
    dev = _results.ptb_sample("dev", 3)
    assert len(dev) == 3 and all(t.leaves() for t in dev)


def test_publish_prints_and_writes_the_section_only_when_asked(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(_results, "RESULTS", tmp_path / "RESULTS.md")
    monkeypatch.setattr(_results, "ARCHIVE", tmp_path / "RESULTS-archive.md")
    _results.publish("demo", "## demo\n\nfirst", write=False)
    assert "first" in capsys.readouterr().out and not (tmp_path / "RESULTS.md").exists()
    _results.publish("demo", "## demo\n\nsecond")
    _results.publish("demo", "## demo\n\nthird")
    text = (tmp_path / "RESULTS.md").read_text(encoding="utf-8")
    assert "third" in text and "second" not in text and text.count("<!-- demo:begin -->") == 1
    assert "wrote the demo section of benchmarks/RESULTS.md" in capsys.readouterr().out


def _experiment() -> BroadcastNews:
    from treegram.compression.align import Pair
    from treegram.compression.treeprep import wrap_root
    from treegram.corpora.demo import demo_trees

    rng = np.random.default_rng(0)
    trees = [wrap_root(t) for t in demo_trees()][:6]
    keeps = [rng.random(len(t.leaves())) < 0.7 for t in trees]
    keeps = [k if k.any() else np.ones_like(k) for k in keeps]
    pairs = [Pair(t.leaves(), [w for w, x in zip(t.leaves(), k) if x], k, True) for t, k in zip(trees, keeps)]
    tokens = [t.leaves() for t in trees]
    return BroadcastNews(every={}, sentences=tokens, sources=trees, parse_counts={}, parser=None, parser_path=None,
                         train_annotators="1", train_pairs=pairs[:4], train_src=trees[:4], dev_src=trees[4:],
                         dev_tokens=tokens[4:], gold=[[k.astype(int).tolist() for k in keeps[4:]]] * 2)


def test_the_training_corpus_is_built_once_per_beta():
    ex = _experiment()
    a = ex.corpus()
    assert ex.corpus(beta=0.1) is a and ex.corpus(beta=0.2) is not a and ex.corpus(beta=0.2).beta == 0.2


def test_score_runs_is_score_system_per_run_with_the_items_averaged():
    from treegram.compression.evaluate import score_system

    ex = _experiment()
    runs = [[[1] * len(t) for t in ex.dev_tokens], [g for g in ex.gold[0]]]
    sums, items = ex.score_runs(runs, None)
    direct = [score_system(ex.dev_tokens, [np.asarray(k, bool) for k in keeps], ex.gold, None) for keeps in runs]
    assert sums == [s for s, _ in direct] and ex.score(runs[1], None)[0] == direct[1][0]
    assert direct[1][0]["token_f1"] == 100.0 and sums[0]["compression_rate"] == 100.0
    for k in ("token", "rel"):
        np.testing.assert_array_equal(items[k], np.mean([it[k] for _, it in direct], axis=0))


def test_parse_timed_measures_on_the_clock_it_is_given():
    _, _, seconds = _results.parse_timed(lambda tokens: time.sleep(0.01) or _Parser()(tokens), [["a"]] * 3,
                                         clock=time.perf_counter, warm=False)
    assert seconds >= 0.03
