"""Trees: the immutable `Tree`, bracketed I/O, normalization, head rules, binarization, unknown-word
signatures, drawing and flat integer arrays."""

from treegram.trees.arrays import TreeArrays, TreebankArrays
from treegram.trees.binarize import binarize, unbinarize
from treegram.trees.bracket import (
    TREE_FILE_SUFFIXES,
    ReadProblem,
    ReadResult,
    escape_tree,
    escape_word,
    format_tree,
    parse_brackets,
    read_tree_file,
    read_treebank,
    tree_files,
    unescape_tree,
    unescape_word,
    write_treebank,
)
from treegram.trees.draw import ascii_tree, rich_tree
from treegram.trees.heads import HEAD_RULES, base_category, head_child, head_child_by_category, head_word_index
from treegram.trees.labels import (
    BinarizedLabel,
    base_label,
    binarized_head_side,
    is_binarized_node,
    parse_binarized_label,
    strip_annotations,
)
from treegram.trees.normalize import NO_NORMALIZATION, NormalizeOptions, normalize_tree, remove_empty_top, strip_label
from treegram.trees.signatures import RareWordMapper, word_signature
from treegram.trees.tree import Child, Tree, bottom_up

__all__ = [
    "HEAD_RULES",
    "NO_NORMALIZATION",
    "TREE_FILE_SUFFIXES",
    "BinarizedLabel",
    "Child",
    "NormalizeOptions",
    "RareWordMapper",
    "ReadProblem",
    "ReadResult",
    "Tree",
    "TreeArrays",
    "TreebankArrays",
    "ascii_tree",
    "base_category",
    "base_label",
    "binarize",
    "binarized_head_side",
    "bottom_up",
    "escape_tree",
    "escape_word",
    "format_tree",
    "head_child",
    "head_child_by_category",
    "head_word_index",
    "is_binarized_node",
    "normalize_tree",
    "parse_binarized_label",
    "parse_brackets",
    "read_tree_file",
    "read_treebank",
    "remove_empty_top",
    "rich_tree",
    "strip_annotations",
    "strip_label",
    "tree_files",
    "unbinarize",
    "unescape_tree",
    "unescape_word",
    "word_signature",
    "write_treebank",
]
