"""Dependency readers (CoNLL-U and .dp) on small files, head validation, and the shared corpora."""

from __future__ import annotations

import pytest

from treegram.corpora import (
    DepSentence,
    head_problem,
    read_conllu,
    read_dependency_dir,
    read_dp,
    read_treebank,
)
from treegram.errors import InputError

CONLLU = """# newdoc id = doc1
# sent_id = 1
# text = I can't go.
1	I	I	PRON	PRP	_	4	nsubj	_	_
2-3	can't	_	_	_	_	_	_	_	_
2	ca	can	AUX	MD	_	4	aux	_	_
3	n't	not	PART	RB	_	4	advmod	_	_
4	go	go	VERB	_	_	0	root	_	_
4.1	gone	go	VERB	VBN	_	_	_	4:conj	_
5	.	.	PUNCT	.	_	4	punct	_	_

# sent_id = 2
1	Hi	hi	INTJ	UH	_	0	root	_	_
"""


def test_read_conllu(tmp_path):
    f = tmp_path / "x.conllu"
    f.write_text(CONLLU)
    first, second = read_conllu(f)
    assert first.words == ("I", "ca", "n't", "go", ".")
    assert first.tags == ("PRP", "MD", "RB", "VERB", ".")  # XPOS, UPOS where XPOS is "_"
    assert first.heads == (4, 4, 4, 0, 4)
    assert first.relations == ("nsubj", "aux", "advmod", "root", "punct")
    assert first.children(4) == [1, 2, 3, 5] and first.children(0) == [4]
    assert second == DepSentence(["Hi"], ["UH"], [0], ["root"])


@pytest.mark.parametrize(
    "bad_line, message",
    [
        ("2\tx\tx\tX\tX\t_\tfoo\tdep\t_\t_", "head 'foo' is not an integer"),
        ("2\tx\tx\tX\tX\t_\t1\tdep", "expected 10 tab-separated fields"),
        ("3\tx\tx\tX\tX\t_\t1\tdep\t_\t_", "out of sequence"),
    ],
)
def test_conllu_errors_name_the_line(tmp_path, bad_line, message):
    f = tmp_path / "bad.conllu"
    f.write_text("# c\n1\ta\ta\tX\tX\t_\t0\troot\t_\t_\n" + bad_line + "\n\n1\tb\tb\tX\tX\t_\t0\troot\t_\t_\n")
    with pytest.raises(InputError) as info:
        read_conllu(f)
    assert str(info.value).startswith(f"{f}:3:") and message in str(info.value)
    kept = read_conllu(f, on_error="skip")
    assert [s.words for s in kept] == [("b",)] and kept.problems[0].line == 3


def test_read_dp(tmp_path):
    f = tmp_path / "x.dp"
    f.write_text("The\tDT\t2\nDog\tNN\t3\nbarks\tVBZ\t0\n\nHi\tUH\t0\n")
    a, b = read_dp(f)
    assert a == DepSentence(["The", "Dog", "barks"], ["DT", "NN", "VBZ"], [2, 3, 0])
    assert a.relations is None and b.words == ("Hi",)
    g = tmp_path / "rel.dp"
    g.write_text("The\tDT\t2\tdet\nDog\tNN\t0\tROOT\n")
    (c,) = read_dp(g)
    assert c.relations == ("det", "ROOT")


@pytest.mark.parametrize(
    "heads, problem",
    [
        ([2, 0], None),
        ([2, 3, 0], None),
        ([0, 0], None),  # several roots are allowed (some corpora have them)
        ([2, 1], "cycle"),
        ([2, 3, 2, 0], "cycle"),
        ([1], "its own head"),
        ([5, 0], "outside 0..2"),
        ([-1], "outside"),
    ],
)
def test_head_validation(heads, problem):
    found = head_problem(heads)
    assert (found is None) if problem is None else (problem in found)


def test_bad_heads_name_file_and_sentence(tmp_path):
    f = tmp_path / "cyc.dp"
    f.write_text("a\tX\t0\n\nb\tX\t2\nc\tX\t1\n\nd\tX\t0\n")
    with pytest.raises(InputError) as info:
        read_dp(f)
    assert str(f) in str(info.value) and "sentence 2" in str(info.value) and "cycle" in str(info.value)
    seen = []
    kept = read_dp(f, on_error="skip", on_problem=seen.append)
    assert [s.words for s in kept] == [("a",), ("d",)] and len(seen) == 1


def test_read_dependency_dir(tmp_path):
    (tmp_path / "b.dp").write_text("x\tX\t0\n")
    (tmp_path / "a.conllu").write_text("1\ty\ty\tY\tY\t_\t0\troot\t_\t_\n")
    (tmp_path / "readme.txt").write_text("ignored")
    assert [s.words for s in read_dependency_dir(tmp_path)] == [("y",), ("x",)]
    with pytest.raises(InputError):
        read_dependency_dir(tmp_path / "nope")
    with pytest.raises(InputError):
        read_dp(tmp_path / "missing.dp")


# -- shared corpora --------------------------------------------------------------------------------------------
def test_ptb_sample_dep_matches_the_constituency_sample(shared_data):
    dev = read_dependency_dir(shared_data / "ptb-sample-dep" / "dev")
    trees = read_treebank(shared_data / "ptb-sample" / "dev")
    assert len(dev) == len(trees) == 273
    # Same sentences (the dependency version has no empty elements).
    assert all(s.words == tuple(t.leaves()) for s, t in zip(dev, trees))
    assert all(s.heads.count(0) >= 1 for s in dev)


def test_ud_english_ewt_dev(shared_data):
    sents = read_conllu(shared_data / "ud-english" / "EWT" / "en_ewt-ud-dev.conllu")
    text = (shared_data / "ud-english" / "EWT" / "en_ewt-ud-dev.conllu").read_text(encoding="utf-8")
    assert len(sents) == text.count("# sent_id")
    assert not sents.problems
    assert all(s.heads.count(0) == 1 for s in sents)  # UD trees have exactly one root


def test_training_treebanks_go_through_a_plugins_corpus_reader(tmp_path):
    """`register_corpus_readers` is consumed: a file a plugin's tree reader claims is read by it, in argument order
    with bracketed files, when a formalism loads its --treebank paths."""
    import argparse

    import treegram
    from treegram.corpora.registry import CorpusReader
    from treegram.corpora.treebank import load_treebanks
    from treegram.plugin_manager import get_plugin_manager
    from treegram.trees import Tree

    def read_toy(path):  # one tree per line: "word/TAG word/TAG ..."
        return [Tree("S", tuple(Tree(t, (w,)) for w, t in (x.split("/") for x in line.split())))
                for line in path.read_text().splitlines() if line.strip()]

    class ToyReader:
        @treegram.hookimpl
        def register_corpus_readers(self, register):
            register(CorpusReader("toytrees", ("*.toy",), "trees", read_toy, "word/TAG lines"))

    (tmp_path / "a.toy").write_text("the/DT dog/NN\n")
    (tmp_path / "b.mrg").write_text("(S (NP (DT a) (NN cat)))\n")

    class UI:
        def note(self, _msg):
            pass

    args = argparse.Namespace(treebank=[tmp_path / "b.mrg", tmp_path / "a.toy"], limit=None, skip_bad_trees=False)
    pm = get_plugin_manager()
    plugin = ToyReader()
    pm.register(plugin, name="toy-reader")
    try:
        trees = load_treebanks(args, UI())
    finally:
        pm.unregister(plugin)
    assert [t.leaves() for t in trees] == [["a", "cat"], ["the", "dog"]]
    assert trees[1].pos() == [("the", "DT"), ("dog", "NN")]
