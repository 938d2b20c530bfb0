"""STSG data pipeline: deletion alignment by LCS, re-alignment of differently tokenized compressions, target trees."""

from __future__ import annotations

import numpy as np
import pytest

from treegram.errors import InputError
from treegram.trees import parse_brackets
from treegram.compression.align import align_text, align_tokens, alignment_report, lcs_keep, read_pairs
from treegram.compression.treeprep import derive_target, parse_sentences, wrap_root


def _lcs_len(a, b):
    t = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) - 1, -1, -1):
        for j in range(len(b) - 1, -1, -1):
            t[i][j] = t[i + 1][j + 1] + 1 if a[i] == b[j] else max(t[i + 1][j], t[i][j + 1])
    return t[0][0]


def _is_subsequence(sub, seq):
    it = iter(seq)
    return all(any(x == y for y in it) for x in sub)


def test_pure_deletion_with_repeated_words():
    src = "the cat saw the dog and the bird .".split()
    tgt = "the cat saw the bird .".split()
    al = align_tokens(src, tgt)
    assert al.pure_deletion and al.unmatched == 0
    assert [w for w, k in zip(src, al.keep) if k] == tgt


def test_non_deletion_pair_is_reported_not_crashed():
    src = "the cat sat on the mat".split()
    tgt = "a cat sat on the rug".split()  # two substitutions
    al = align_tokens(src, tgt)
    assert not al.pure_deletion
    assert al.unmatched == 2
    assert [w for w, k in zip(src, al.keep) if k] == "cat sat on the".split()


def test_empty_and_identical_targets():
    src = "one two three".split()
    assert not align_tokens(src, []).keep.any() and align_tokens(src, []).pure_deletion
    assert align_tokens(src, src).keep.all()


@pytest.mark.parametrize("seed", range(5))
def test_lcs_matches_brute_force_length(seed):
    rng = np.random.default_rng(seed)
    a = [str(x) for x in rng.integers(0, 4, size=rng.integers(0, 15))]
    b = [str(x) for x in rng.integers(0, 4, size=rng.integers(0, 15))]
    keep = lcs_keep(a, b)
    kept = [w for w, k in zip(a, keep) if k]
    assert len(kept) == _lcs_len(a, b)
    assert _is_subsequence(kept, b)


def test_text_alignment_of_differently_tokenized_compression():
    src = "Rick Riordan 's new book , `` Staff of Serapis , '' is out .".split()
    al = align_text(src, "Rick Riordan's new book is out.")
    assert al.pure_deletion
    assert [w for w, k in zip(src, al.keep) if k] == "Rick Riordan 's new book is out .".split()
    al = align_text("Comedian Kathy Griffin will host the show".split(), "comedian Kathy Griffin will host")
    assert al.pure_deletion  # case-insensitive re-capitalisation
    al = align_text("the company has completed its deal".split(), "the company that completed its deal")
    assert not al.pure_deletion and al.unmatched > 0


def test_read_pairs_checks_parallel_files_and_skips_empty_sources(tmp_path):
    s, t = tmp_path / "s.txt", tmp_path / "t.txt"
    s.write_text("a b c\n\nd e\n", encoding="utf-8")
    t.write_text("a c\n\nd x\n", encoding="utf-8")
    pairs = read_pairs(s, t)
    assert [p.line for p in pairs] == [1, 3]
    assert pairs[0].target == ["a", "c"] and pairs[0].pure_deletion
    assert not pairs[1].pure_deletion and pairs[1].target == ["d"] and pairs[1].original_target == ["d", "x"]
    assert alignment_report(pairs) == {"pairs": 2, "pure_deletion": 1, "non_deletion": 1, "compression_rate": 60.0}
    t.write_text("a c\n", encoding="utf-8")
    with pytest.raises(InputError, match="lines"):
        read_pairs(s, t)
    with pytest.raises(InputError, match="not found"):
        read_pairs(tmp_path / "missing.txt", t)


def test_derive_target_prunes_and_collapses():
    src = wrap_root(parse_brackets("(S (NP (NP (DT the) (NN cat)) (PP (IN on) (NP (DT the) (NN mat)))) "
                                   "(VP (VBD slept)) (. .))")[0])
    keep = [1, 1, 0, 0, 0, 1, 1]
    tgt = derive_target(src, keep)
    assert tgt.to_bracket() == "(ROOT (S (NP (DT the) (NN cat)) (VP (VBD slept)) (. .)))"
    assert derive_target(src, [0] * 7).to_bracket() == "(ROOT)"
    assert derive_target(src, [1] * 7) == src
    with pytest.raises(InputError):
        derive_target(src, [1, 1])


def test_parse_cache_round_trip(tmp_path):
    class Fake:
        calls = 0

        def parse(self, toks):
            Fake.calls += 1
            from treegram.errors import ParseFailure

            if toks[0] == "bad":
                raise ParseFailure("no")
            return parse_brackets("(S " + " ".join(f"(X {w})" for w in toks) + ")")[0]

    sents = [["a", "b"], ["bad", "x"]]
    trees, counts = parse_sentences(sents, Fake(), parser_id="p1", cache_dir=tmp_path)
    assert counts == {"ok": 1, "failed": 1, "too_long": 0} and Fake.calls == 2
    again, counts2 = parse_sentences(sents, Fake(), parser_id="p1", cache_dir=tmp_path)
    assert Fake.calls == 2 and again == trees and counts2 == counts
    parse_sentences(sents, Fake(), parser_id="p2", cache_dir=tmp_path)  # another parser: parsed again
    assert Fake.calls == 4
    assert trees[1].label == "S" and trees[1].leaves() == ["bad", "x"]  # flat fallback


def test_shared_corpora_alignment(shared_data):
    from treegram.compression.align import load_broadcast_news, load_google_slahan

    bn = load_broadcast_news(shared_data / "compression" / "broadcast-news", 1, "dev")
    assert len(bn) == 170 and all(p.pure_deletion for p in bn)
    sl = load_google_slahan(shared_data / "compression" / "google" / "slahan-1000")
    assert len(sl) == 1000 and alignment_report(sl)["pure_deletion"] == 1000
