"""The built-in mini treebank (`treegram demo`, tests and examples that need trees without ../shared)."""

from __future__ import annotations

from importlib import resources


def demo_trees():
    """The trees of ``treegram/data/demo_treebank.mrg`` (hand-written, shipped with the package)."""
    from treegram.trees import parse_brackets

    text = resources.files("treegram").joinpath("data/demo_treebank.mrg").read_text(encoding="utf-8")
    return parse_brackets(text, source="demo_treebank.mrg")
