"""Reading and writing Penn-Treebank-style bracketed trees.

The format is specified by the lark grammar `ptb.lark` beside this file.  Parsing goes through two engines that
accept exactly the same language:

* a fast path: one regular-expression tokenization plus an explicit-stack builder (which can also normalize
  while building).  Reading a whole treebank is the common case and must take seconds; lark's per-token
  overhead (over 10 microseconds here) made the grammar alone about 10x slower on real treebanks (gum-const:
  24 s with lark, 2.5 s with the fast path);
* lark (LALR, contextual lexer), used whenever the fast path rejects its input, to say where and why the input
  is malformed, and available directly with `engine="lark"` (the test-suite checks that both engines agree).

Both are iterative, so arbitrarily deep trees are fine.  Errors are `TreeSyntaxError`s naming the source, line and
column.  In `on_error="skip"` mode a malformed file is cut into its top-level brackets (see `_chunks`); a malformed
one is skipped and reported as a `ReadProblem` while the rest of the batch is kept.
"""

from __future__ import annotations

import os
import re
import warnings
from collections.abc import Callable, Iterable
from functools import lru_cache
from pathlib import Path
from typing import Literal

import attrs
import lark

from treegram.errors import InputError, TreeSyntaxError
from treegram.io import atomic_write_text, read_text
from treegram.trees.normalize import TRACE_LABEL, NormalizeOptions, normalize_tree, remove_empty_top, strip_label
from treegram.trees.tree import Child, Tree

TREE_FILE_SUFFIXES = (".mrg", ".ptb", ".tree")
OnError = Literal["raise", "skip"]

_TOKEN = re.compile(r"[()]|[^\s()]+")
_UNREADABLE = re.compile(r"[\s()]")


# -- problems collected in "skip" mode ------------------------------------------------------------------------
@attrs.frozen(slots=True)
class ReadProblem:
    """Something skipped while reading in `on_error="skip"` mode (line/column 1-based; 0 when unknown)."""

    source: str
    line: int
    column: int
    message: str

    def __str__(self) -> str:
        return f"{self.source}:{self.line}:{self.column}: {self.message}"


class ReadResult(list):
    """A plain list of what was read, plus `.problems`: what was skipped in `on_error="skip"` mode."""

    def __init__(self, items: Iterable = (), problems: Iterable[ReadProblem] = ()):
        super().__init__(items)
        self.problems: list[ReadProblem] = list(problems)


ProblemCallback = Callable[[ReadProblem], None]


def _check_on_error(on_error: str) -> None:
    if on_error not in ("raise", "skip"):
        raise ValueError(f"on_error must be 'raise' or 'skip', not {on_error!r}")


def _line_col(text: str, pos: int) -> tuple[int, int]:
    line = text.count("\n", 0, pos) + 1
    col = pos - (text.rfind("\n", 0, pos) + 1) + 1
    return line, col


# -- fast path --------------------------------------------------------------------------------------------------
def _scan_fast(text: str, normalize: NormalizeOptions | None = None) -> list[Tree] | None:
    """The trees in `text`, or None if it is not in the language of ptb.lark (lark then says why).

    With `normalize`, traces, emptied constituents and label decorations are removed while building, which
    gives the same trees as `normalize_tree` (except the top-bracket removal, done afterwards) at a fraction of
    the cost of a second pass.
    """
    remove_traces = normalize is not None and normalize.remove_traces
    strip = normalize is not None and (normalize.strip_function_tags or normalize.strip_indices)
    stripped: dict[str, str] = {}
    out: list[Tree] = []
    stack: list[list | None] = []
    # The innermost open bracket: [label or None, "a child was dropped", child, child, ...].
    frame: list | None = None
    fresh = False  # directly after "(": a symbol here is the label
    for tok in _TOKEN.findall(text):
        if tok == "(":
            if fresh:
                frame[0] = ""  # type: ignore[index]  # "( (" : the outer bracket is unlabelled
            stack.append(frame)
            frame = [None, False]
            fresh = True
        elif tok == ")":
            if frame is None:
                return None
            label = frame[0]
            if label is None:
                label = ""
            parent = stack.pop()
            fresh = False
            if remove_traces and (label == TRACE_LABEL or (frame[1] and len(frame) == 2)):
                if parent is not None:
                    parent[1] = True
                frame = parent
                continue
            if strip:
                new = stripped.get(label)
                if new is None:
                    new = stripped[label] = strip_label(
                        label, function_tags=normalize.strip_function_tags, indices=normalize.strip_indices  # type: ignore[union-attr]
                    )
                label = new
            node = Tree(label, frame[2:])
            frame = parent
            if frame is None:
                out.append(node)
            else:
                frame.append(node)
        elif fresh:
            frame[0] = tok  # type: ignore[index]
            fresh = False
        elif frame is None or frame[0] == "":
            return None  # text outside brackets, or a word inside an unlabelled bracket
        else:
            frame.append(tok)
    if frame is not None:
        return None
    return out


def _remove_top(trees: list[Tree], normalize: NormalizeOptions | None) -> list[Tree]:
    if normalize is None or not normalize.remove_empty_top:
        return trees
    return [remove_empty_top(t) for t in trees]


# -- lark: the reference grammar and the error reporter ---------------------------------------------------------
class _ToTree(lark.Transformer):
    def start(self, kids: list) -> list[Tree]:
        return kids

    def labelled(self, kids: list) -> Tree:
        return Tree(str(kids[0]), kids[1:])

    def unlabelled(self, kids: list) -> Tree:
        return Tree("", kids)

    def word(self, kids: list) -> str:
        return str(kids[0])


@lru_cache(maxsize=1)
def _lark_parser() -> lark.Lark:
    grammar = Path(__file__).with_name("ptb.lark").read_text(encoding="utf-8")
    return lark.Lark(grammar, parser="lalr", lexer="contextual", transformer=_ToTree())


def _unclosed_opener(text: str) -> int:
    """Offset of the `(` that opens the still-unclosed top-level bracket at the end of `text`."""
    depth = 0
    opener = 0
    for m in re.finditer(r"[()]", text):
        if m.group() == "(":
            if depth == 0:
                opener = m.start()
            depth += 1
        elif depth > 0:
            depth -= 1
    return opener


def _parse_with_lark(text: str, source: str, line_offset: int = 0) -> list[Tree]:
    try:
        return _lark_parser().parse(text)
    except lark.exceptions.UnexpectedInput as exc:
        tok = getattr(exc, "token", None)
        if tok is None or tok.type == "$END":
            pos = _unclosed_opener(text)
            message = "unbalanced '(': this bracket is never closed"
        else:
            pos = tok.start_pos
            depth = text.count("(", 0, pos) - text.count(")", 0, pos)
            if tok.type == "RPAR":
                message = "unbalanced ')': no bracket is open here"
            elif tok.type == "SYMBOL" and depth == 0:
                message = f"text outside brackets: {str(tok)!r}"
            elif tok.type == "SYMBOL":
                message = f"word {str(tok)!r} inside a bracket without a label (only subtrees may follow '( (')"
            else:
                message = f"unexpected {str(tok)!r}"
        line, col = _line_col(text, pos)
        err = TreeSyntaxError(
            f"{source}:{line + line_offset}:{col}: {message}",
            hint="fix the brackets there, or read with on_error='skip' to drop the malformed tree",
        )
        err.problem = ReadProblem(source, line + line_offset, col, message)  # type: ignore[attr-defined]
        raise err from None


# -- public reading API -------------------------------------------------------------------------------------------
def parse_brackets(text: str, *, source: str = "<string>", engine: Literal["fast", "lark"] = "fast") -> list[Tree]:
    """Every bracketed tree in `text`, unnormalized (raw labels, traces and empty top brackets kept)."""
    if engine == "fast":
        trees = _scan_fast(text)
        if trees is not None:
            return trees
    elif engine != "lark":
        raise ValueError(f"engine must be 'fast' or 'lark', not {engine!r}")
    return _parse_with_lark(text, source)


def _parse_normalized(text: str, source: str, normalize: NormalizeOptions | None, line_offset: int = 0) -> list[Tree]:
    trees = _scan_fast(text, normalize)
    if trees is not None:
        return _remove_top(trees, normalize)
    raw = _parse_with_lark(text, source, line_offset)  # raises TreeSyntaxError with the position
    if normalize is None:
        return raw
    return [n for n in (normalize_tree(t, normalize) for t in raw) if n is not None]


def _chunks(text: str) -> list[tuple[int, int]]:
    """(begin, end) offsets of top-level brackets and of stray text between them.

    Brackets are balanced as usual, except that a `(` at the start of a line while a bracket is still open
    begins a new chunk: top-level trees start at column 0 in every treebank we know and their inner lines are
    indented, so this is where a tree with a missing `)` is taken to end.
    """
    spans: list[tuple[int, int]] = []
    depth = 0
    begin = -1
    for m in _TOKEN.finditer(text):
        tok, pos = m.group(), m.start()
        at_line_start = pos == 0 or text[pos - 1] == "\n"
        if tok == "(":
            if depth > 0 and at_line_start:
                spans.append((begin, pos))
                depth = 0
            if depth == 0:
                if begin >= 0 and (not spans or spans[-1][0] != begin):
                    spans.append((begin, pos))  # stray text before this bracket
                begin = pos
            depth += 1
        elif tok == ")" and depth > 0:
            depth -= 1
            if depth == 0:
                spans.append((begin, m.end()))
                begin = -1
        elif depth == 0 and begin < 0:
            begin = pos  # stray text (or a stray ")") outside brackets starts a chunk of its own
    if begin >= 0 and (not spans or spans[-1][0] != begin):
        spans.append((begin, len(text)))
    return spans


def _parse_skipping(text: str, source: str, normalize: NormalizeOptions | None, problems: list[ReadProblem]) -> list[Tree]:
    """Parse tree by tree (see `_chunks`), skipping and reporting malformed ones."""
    trees = _scan_fast(text, normalize)
    if trees is not None:
        return _remove_top(trees, normalize)
    out: list[Tree] = []
    for begin, end in _chunks(text):
        chunk = text[begin:end]
        line_offset = text.count("\n", 0, begin)
        try:
            # Pad with the chunk's column so that reported columns are those of the file.
            column = begin - (text.rfind("\n", 0, begin) + 1)
            out.extend(_parse_normalized(" " * column + chunk, source, normalize, line_offset=line_offset))
        except TreeSyntaxError as exc:
            problems.append(exc.problem)  # type: ignore[attr-defined]
    return out


def read_tree_file(
    path: str | os.PathLike,
    *,
    normalize: NormalizeOptions | None = NormalizeOptions(),
    on_error: OnError = "raise",
    on_problem: ProblemCallback | None = None,
    encoding: str | None = None,
) -> ReadResult:
    """The trees of one bracketed file, normalized unless `normalize=None`.

    `on_error="skip"` drops malformed trees (and an undecodable file) and lists them in the result's `.problems`
    (and passes each to `on_problem`); trees that normalize to nothing are dropped silently in both modes.
    """
    _check_on_error(on_error)
    path = Path(path)
    source = str(path)
    if not path.is_file():
        raise InputError(
            f"{source}: no such file" if not path.exists() else f"{source}: not a file",
            hint="give a bracketed tree file (.mrg/.ptb/.tree) or a directory of them",
        )
    problems: list[ReadProblem] = []
    try:
        text = read_text(path, encoding=encoding, what="tree")
    except InputError as exc:
        if on_error == "raise":
            raise
        problems.append(ReadProblem(source, 0, 0, str(exc).removeprefix(source + ":").strip()))
        text = ""
    if on_error == "raise":
        trees = _parse_normalized(text, source, normalize)
    else:
        trees = _parse_skipping(text, source, normalize, problems)
    if on_problem is not None:
        for p in problems:
            on_problem(p)
    return ReadResult(trees, problems)


def tree_files(directory: str | os.PathLike) -> list[Path]:
    """The tree files (*.mrg, *.ptb, *.tree) directly inside `directory`, sorted by name."""
    directory = Path(directory)
    return sorted(p for p in directory.iterdir() if p.is_file() and p.suffix in TREE_FILE_SUFFIXES)


def read_treebank(
    paths: str | os.PathLike | Iterable[str | os.PathLike],
    *,
    normalize: NormalizeOptions | None = NormalizeOptions(),
    on_error: OnError = "raise",
    on_problem: ProblemCallback | None = None,
) -> ReadResult:
    """All trees from files and/or directories (a directory contributes its *.mrg, *.ptb, *.tree files, sorted).

    A missing path or a directory without tree files is an `InputError` in both modes; in `on_error="skip"` mode
    malformed trees are skipped, collected in `.problems`, and summarised in one warning unless `on_problem` is
    given.
    """
    _check_on_error(on_error)
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    files: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            found = tree_files(p)
            if not found:
                raise InputError(
                    f"{p}: directory contains no tree files",
                    hint=f"expected files ending in {', '.join(TREE_FILE_SUFFIXES)}",
                )
            files.extend(found)
        elif p.is_file():
            files.append(p)
        else:
            raise InputError(f"{p}: no such file or directory", hint="check the path (relative paths start at the current directory)")
    result = ReadResult()
    for f in files:
        part = read_tree_file(f, normalize=normalize, on_error=on_error, on_problem=on_problem)
        result.extend(part)
        result.problems.extend(part.problems)
    if result.problems and on_problem is None:
        warnings.warn(
            f"skipped {len(result.problems)} malformed tree(s); first: {result.problems[0]}", stacklevel=2
        )
    return result


# -- escaping words (Penn Treebank conventions) ---------------------------------------------------------------------
#: Whole-token escapes the Penn Treebank uses; parentheses are also escaped inside words, so every word reads back.
PTB_ESCAPES = {"(": "-LRB-", ")": "-RRB-", "{": "-LCB-", "}": "-RCB-", "[": "-LSB-", "]": "-RSB-"}
PTB_UNESCAPES = {v: k for k, v in PTB_ESCAPES.items()}
_INNER_ESCAPE = re.compile(r"[()]")
_INNER_UNESCAPE = re.compile(r"-LRB-|-RRB-")


def _rewrite(word: str, whole: dict[str, str], inner: re.Pattern) -> str:
    """`word` as the table `whole` maps the whole token, else with every `inner` match mapped by it."""
    hit = whole.get(word)
    if hit is not None:
        return hit
    return inner.sub(lambda m: whole[m.group()], word)


def escape_word(word: str) -> str:
    """A word as the Penn Treebank writes it: `(` -> -LRB-, `)` -> -RRB-, `{` -> -LCB-, `[` -> -LSB- (and the
    closing ones); parentheses inside a word become -LRB-/-RRB- too, so the word can be written in brackets.

    >>> escape_word("("), escape_word("f(x)"), escape_word("[")
    ('-LRB-', 'f-LRB-x-RRB-', '-LSB-')
    """
    return _rewrite(word, PTB_ESCAPES, _INNER_ESCAPE)


def unescape_word(word: str) -> str:
    """The inverse of `escape_word`: the word a user typed.

    >>> unescape_word("-LRB-"), unescape_word("f-LRB-x-RRB-"), unescape_word("-RSB-")
    ('(', 'f(x)', ']')
    """
    return _rewrite(word, PTB_UNESCAPES, _INNER_UNESCAPE)


def escape_tree(tree: Tree) -> Tree:
    """The tree with every word escaped (`escape_word`); labels are left as they are."""
    return tree.map_words(escape_word)


def unescape_tree(tree: Tree) -> Tree:
    return tree.map_words(unescape_word)


# -- writing --------------------------------------------------------------------------------------------------------
def _check_writable(tree: Tree) -> None:
    for node in tree.subtrees():
        label = node.label
        if _UNREADABLE.search(label):
            raise InputError(f"label {label!r} contains whitespace or a parenthesis", hint="escape it (e.g. -LRB-) before writing")
        has_word = False
        for c in node.children:
            if isinstance(c, str):
                has_word = True
                if not c or _UNREADABLE.search(c):
                    raise InputError(f"word {c!r} is empty or contains whitespace or a parenthesis", hint="escape it (e.g. -LRB-) before writing")
        if not label and has_word:
            raise InputError("a node with an empty label has a word child; it could not be read back", hint="give the node a label")


def _is_flat(node: Tree) -> bool:
    return all(isinstance(c, str) or all(isinstance(g, str) for g in c.children) for c in node.children)


def format_tree(tree: Tree, *, pretty: bool = False) -> str:
    """The tree as brackets that `parse_brackets` reads back to an equal tree.

    `pretty=True` indents: one line per constituent whose children are not all words or preterminals.
    """
    _check_writable(tree)
    if not pretty:
        return tree.to_bracket()
    lines: list[str] = []
    stack: list[tuple[Child, int, int]] = [(tree, 0, 0)]  # (node, indent, closing brackets owed after it)
    while stack:
        node, indent, closers = stack.pop()
        pad = " " * indent
        if isinstance(node, str):
            lines.append(pad + node + ")" * closers)
        elif _is_flat(node):
            lines.append(pad + node.to_bracket() + ")" * closers)
        else:
            lines.append(pad + "(" + node.label)
            kids = node.children
            for i in range(len(kids) - 1, -1, -1):
                stack.append((kids[i], indent + 2, closers + 1 if i == len(kids) - 1 else 0))
    return "\n".join(lines)


def write_treebank(trees: Iterable[Tree], path: str | os.PathLike) -> None:
    """Write trees one per line, atomically (a crash never leaves a half-written treebank)."""
    atomic_write_text(path, "".join(format_tree(t) + "\n" for t in trees))
