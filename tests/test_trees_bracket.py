"""Bracketed-tree reading and writing on hand-written strings (no shared data needed)."""

from __future__ import annotations

import numpy as np
import pytest

from treegram.errors import InputError, TreeSyntaxError
from treegram.trees import (
    NO_NORMALIZATION,
    NormalizeOptions,
    Tree,
    format_tree,
    normalize_tree,
    parse_brackets,
    read_tree_file,
    read_treebank,
    write_treebank,
)
from treegram.trees.bracket import _scan_fast

T = Tree


def both_engines(text: str) -> list[Tree]:
    fast = parse_brackets(text)
    slow = parse_brackets(text, engine="lark")
    assert fast == slow
    return fast


def test_simple_tree_and_several_per_input():
    trees = both_engines("(S (NP (DT the) (NN dog)) (VP (VBD barked)))\n(NP (NNP Kim))")
    assert trees == [
        T("S", [T("NP", [T("DT", ["the"]), T("NN", ["dog"])]), T("VP", [T("VBD", ["barked"])])]),
        T("NP", [T("NNP", ["Kim"])]),
    ]


def test_any_whitespace_and_newlines():
    text = "\n\n  ( S\t(NP\n   (NN dogs) )\r\n (VP (VBP bark)\n)\n)   \n\n(X (Y z))"
    trees = both_engines(text)
    assert trees[0] == T("S", [T("NP", [T("NN", ["dogs"])]), T("VP", [T("VBP", ["bark"])])])
    assert trees[1] == T("X", [T("Y", ["z"])])


def test_empty_top_bracket_is_kept_raw():
    (t,) = both_engines("( (S (NP (PRP I)) (VP (VBD ran))) )")
    assert t.label == ""
    assert t.children[0].label == "S"


def test_odd_symbols_are_labels_and_words():
    text = "(S (-LRB- -LRB-) (-NONE- *T*-1) (CD 0) (NN john.doe@example.com) (PRP$ his) (: --) (`` ``) (-RRB- -RRB-))"
    (t,) = both_engines(text)
    assert t.pos() == [
        ("-LRB-", "-LRB-"), ("*T*-1", "-NONE-"), ("0", "CD"), ("john.doe@example.com", "NN"),
        ("his", "PRP$"), ("--", ":"), ("``", "``"), ("-RRB-", "-RRB-"),
    ]


def test_frontier_nonterminal_and_mixed_children():
    (t,) = both_engines("(S (NP ) (VP x (V y)))")
    assert t == T("S", [T("NP", []), T("VP", ["x", T("V", ["y"])])])


@pytest.mark.parametrize(
    "text, line, column, words",
    [
        ("(S (NP x)\n  (VP y)", 1, 1, "never closed"),
        ("(S (NP x))\n(S (NP y)))", 2, 11, "no bracket is open"),
        ("(S x)\nstray (S y)", 2, 1, "outside brackets"),
        ("(S x)\n\n( (S y) z)", 3, 9, "without a label"),
        ("(A a)\n(B b)\n   (C (D d)\n", 3, 4, "never closed"),
        (")", 1, 1, "no bracket is open"),
    ],
)
def test_malformed_input_names_source_line_and_column(text, line, column, words):
    with pytest.raises(TreeSyntaxError) as info:
        parse_brackets(text, source="my.mrg")
    message = str(info.value)
    assert message.startswith(f"my.mrg:{line}:{column}:"), message
    assert words in message
    assert info.value.hint


def test_fast_scanner_rejects_exactly_what_the_grammar_rejects():
    # Random token soups: the fast path and lark must agree on acceptance (and on the trees when accepted).
    rng = np.random.default_rng(7)
    alphabet = ["(", ")", "(", ")", "NP", "x", " ", "\n"]
    for _ in range(400):
        text = "".join(rng.choice(alphabet, size=int(rng.integers(1, 14))))
        fast = _scan_fast(text)
        try:
            slow = parse_brackets(text, engine="lark")
        except TreeSyntaxError:
            slow = None
        assert fast == slow, text


def test_deep_tree_reads_without_recursion():
    depth = 5000
    text = "(X " * depth + "w" + ")" * depth
    (t,) = parse_brackets(text)
    assert t.height() == depth + 1
    (t2,) = parse_brackets(text, engine="lark")
    assert t2 == t


def test_format_round_trip_plain_and_pretty():
    text = "( (S (NP-SBJ (DT the) (NN dog)) (VP (VBD saw) (NP (-NONE- *T*-1)) (PP (IN at) (NP (NN noon)))) (. .)) )"
    (t,) = parse_brackets(text)
    assert parse_brackets(format_tree(t)) == [t]
    pretty = format_tree(t, pretty=True)
    assert "\n" in pretty
    assert parse_brackets(pretty) == [t]
    # Indentation grows with depth: the VP's PP is indented further than the VP.
    lines = pretty.splitlines()
    vp = next(l for l in lines if l.lstrip().startswith("(VP"))
    pp = next(l for l in lines if l.lstrip().startswith("(PP"))
    assert len(pp) - len(pp.lstrip()) > len(vp) - len(vp.lstrip())


def test_format_refuses_unreadable_symbols():
    with pytest.raises(InputError):
        format_tree(T("S", [T("NN", ["a b"])]))
    with pytest.raises(InputError):
        format_tree(T("N(P", [T("NN", ["x"])]))
    with pytest.raises(InputError):
        format_tree(T("", ["word"]))


def test_write_and_read_treebank(tmp_path):
    trees = parse_brackets("(S (NP (NN a)) (VP (VB b)))\n(S (NP (NN c)) (VP (VB d) (NP (NN e))))")
    out = tmp_path / "sub" / "out.mrg"
    write_treebank(trees, out)
    assert out.read_text().count("\n") == 2
    assert read_tree_file(out) == trees
    assert not [p for p in (tmp_path / "sub").iterdir() if p.name != "out.mrg"]  # no temp file left behind


def test_read_tree_file_normalizes_by_default(tmp_path):
    f = tmp_path / "a.mrg"
    f.write_text("( (S (NP-SBJ-1 (-NONE- *)) (VP (VBD ran))) )\n")
    assert read_tree_file(f) == [T("S", [T("VP", [T("VBD", ["ran"])])])]
    raw = read_tree_file(f, normalize=None)
    assert raw[0].label == "" and raw[0].children[0].children[0].label == "NP-SBJ-1"
    assert read_tree_file(f, normalize=NO_NORMALIZATION) == raw


def test_fused_normalization_equals_normalize_tree():
    text = (
        "( (S (NP-SBJ=2 (NP (-NONE- *)) (SBAR (-NONE- 0) (S (-NONE- *T*-1)))) (VP-TPC-3 (VB go) (NP (-NONE- *))) (. .)) )\n"
        "(ROOT (NP (-LRB- -LRB-) (NN x) (-RRB- -RRB-)))\n(TOP (-NONE- *))\n"
    )
    raw = parse_brackets(text)
    for opts in [NormalizeOptions(), NormalizeOptions(remove_traces=False), NormalizeOptions(strip_indices=False),
                 NormalizeOptions(strip_function_tags=False), NormalizeOptions(remove_empty_top=False)]:
        expected = [n for n in (normalize_tree(t, opts) for t in raw) if n is not None]
        fused = _scan_fast(text, opts)
        if opts.remove_empty_top:
            from treegram.trees import remove_empty_top

            fused = [remove_empty_top(t) for t in fused]
        assert fused == expected, opts


def test_skip_mode_keeps_the_rest_of_the_batch(tmp_path):
    good1 = "(S (NP (NN a)) (VP (VB b)))"
    bad = "(S (NP (NN c)) (VP (VB d)"  # unclosed
    good2 = "(S (NP (NN e)))"
    f = tmp_path / "mixed.mrg"
    f.write_text("\n".join([good1, bad, good2, "junk here", good1]) + "\n")
    with pytest.raises(TreeSyntaxError):
        read_tree_file(f)
    seen = []
    result = read_tree_file(f, on_error="skip", on_problem=seen.append)
    assert len(result) == 3
    assert [p.line for p in result.problems] == [2, 4]
    assert seen == result.problems
    assert all(p.source == str(f) for p in result.problems)


def test_skip_mode_separates_trees_on_one_line(tmp_path):
    f = tmp_path / "line.mrg"
    f.write_text("(S (X a)) (S (X b)) oops (S (X c))\n(S (Y d)\n  (Z e))\n(S (X f)\n(S (X g))\n")
    result = read_tree_file(f, on_error="skip")
    assert [t.leaves() for t in result] == [["a"], ["b"], ["c"], ["d", "e"], ["g"]]
    assert [(p.line, p.column) for p in result.problems] == [(1, 21), (4, 1)]
    assert "outside brackets" in result.problems[0].message and "never closed" in result.problems[1].message


def test_read_treebank_directories_and_errors(tmp_path):
    d = tmp_path / "tb"
    d.mkdir()
    (d / "b.mrg").write_text("(S (X b))\n")
    (d / "a.ptb").write_text("(S (X a))\n(S (X a2))\n")
    (d / "c.tree").write_text("(S (X c))\n")
    (d / "notes.txt").write_text("(S (X ignored))\n")
    (d / "bad.mrg").write_text("(S (X oops)\n")
    with pytest.raises(TreeSyntaxError):
        read_treebank(d)
    with pytest.warns(UserWarning, match="skipped 1"):
        trees = read_treebank(d, on_error="skip")
    assert [t.leaves()[0] for t in trees] == ["a", "a2", "b", "c"]  # sorted file order, notes.txt ignored
    assert len(trees.problems) == 1 and trees.problems[0].source.endswith("bad.mrg")
    # A file and a directory together; a single path as a string.
    assert len(read_treebank([d / "c.tree", str(d / "a.ptb")])) == 3
    assert len(read_treebank(str(d / "a.ptb"))) == 2
    with pytest.raises(InputError) as info:
        read_treebank(tmp_path / "missing")
    assert info.value.hint
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(InputError):
        read_treebank(empty)


def test_undecodable_file(tmp_path):
    f = tmp_path / "latin.mrg"
    f.write_bytes(b"(S (NN caf\xe9))\n")
    with pytest.raises(InputError, match="UTF-8"):
        read_tree_file(f)
    result = read_tree_file(f, on_error="skip")
    assert list(result) == [] and len(result.problems) == 1
