"""Dependency corpora: CoNLL-U (Universal Dependencies) and NLTK's tab-separated `.dp` files.

Both readers return `DepSentence`s with 1-based heads (0 = the root).  Heads are validated when read: a head
outside 0..n or a cycle is an `InputError` naming the file and the sentence, or, with `on_error="skip"`, a
`ReadProblem` in the result's `.problems` while the rest of the file is kept.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import attrs

from treegram.errors import InputError
from treegram.trees.bracket import OnError, ReadProblem, ReadResult

DEPENDENCY_SUFFIXES = (".conllu", ".conll", ".dp")


def _as_tuple(x: Iterable) -> tuple:
    return tuple(x)


def _optional_tuple(x: Iterable | None) -> tuple | None:
    return None if x is None else tuple(x)


@attrs.frozen(slots=True)
class DepSentence:
    """One dependency-analysed sentence.  `heads[i]` is the 1-based head of word i+1, 0 for the root."""

    words: tuple[str, ...] = attrs.field(converter=_as_tuple)
    tags: tuple[str, ...] = attrs.field(converter=_as_tuple)
    heads: tuple[int, ...] = attrs.field(converter=_as_tuple)
    relations: tuple[str, ...] | None = attrs.field(default=None, converter=_optional_tuple)

    def __len__(self) -> int:
        return len(self.words)

    def problem(self) -> str | None:
        """What is wrong with this sentence's structure, or None if it is a well-formed dependency tree."""
        n = len(self.words)
        if len(self.tags) != n or len(self.heads) != n or (self.relations is not None and len(self.relations) != n):
            return "words, tags, heads and relations differ in length"
        return head_problem(self.heads)

    def children(self, head: int) -> list[int]:
        """1-based positions of the dependents of `head` (0 for the root's dependents)."""
        return [i + 1 for i, h in enumerate(self.heads) if h == head]


def head_problem(heads: tuple[int, ...] | list[int]) -> str | None:
    """None if every word reaches the root 0 through in-range heads; otherwise a description of the fault."""
    n = len(heads)
    for i, h in enumerate(heads):
        if not 0 <= h <= n:
            return f"word {i + 1} has head {h}, outside 0..{n}"
        if h == i + 1:
            return f"word {i + 1} is its own head"
    state = [0] * (n + 1)  # 0 unknown, 1 on the current path, 2 reaches the root
    state[0] = 2
    for start in range(1, n + 1):
        path = []
        k = start
        while state[k] == 0:
            state[k] = 1
            path.append(k)
            k = heads[k - 1]
        if state[k] == 1:
            return f"cycle through word {k}"
        for j in path:
            state[j] = 2
    return None


def _finish(
    sentences: list[DepSentence], problems: list[ReadProblem], on_problem: Callable[[ReadProblem], None] | None
) -> ReadResult:
    if on_problem is not None:
        for p in problems:
            on_problem(p)
    return ReadResult(sentences, problems)


def _blocks(text: str) -> Iterator[tuple[int, list[tuple[int, str]]]]:
    """Blank-line separated blocks: (line number of the block's first line, [(line number, line), ...])."""
    block: list[tuple[int, str]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            block.append((number, line))
        elif block:
            yield block[0][0], block
            block = []
    if block:
        yield block[0][0], block


class _BadLine(Exception):
    def __init__(self, line: int, message: str):
        super().__init__(message)
        self.line = line
        self.message = message


def _read_text(path: Path) -> str:
    if not path.is_file():
        raise InputError(f"{path}: no such file", hint="check the path to the dependency file")
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})", hint="convert the file to UTF-8") from None


def _read_blocks(
    path: str | os.PathLike,
    parse_block: Callable[[list[tuple[int, str]]], DepSentence],
    on_error: OnError,
    on_problem: Callable[[ReadProblem], None] | None,
) -> ReadResult:
    if on_error not in ("raise", "skip"):
        raise ValueError(f"on_error must be 'raise' or 'skip', not {on_error!r}")
    path = Path(path)
    text = _read_text(path)
    sentences: list[DepSentence] = []
    problems: list[ReadProblem] = []
    for index, (first_line, block) in enumerate(_blocks(text), start=1):
        try:
            sentence = parse_block(block)
            fault = sentence.problem()
            if fault is not None:
                raise _BadLine(first_line, f"sentence {index}: {fault}")
        except _BadLine as bad:
            if on_error == "raise":
                raise InputError(
                    f"{path}:{bad.line}: {bad.message}", hint="fix the line, or read with on_error='skip'"
                ) from None
            problems.append(ReadProblem(str(path), bad.line, 0, bad.message))
            continue
        sentences.append(sentence)
    return _finish(sentences, problems, on_problem)


def _int(field: str, what: str, line: int) -> int:
    try:
        return int(field)
    except ValueError:
        raise _BadLine(line, f"{what} {field!r} is not an integer") from None


def _parse_conllu_block(block: list[tuple[int, str]]) -> DepSentence:
    words, tags, heads, rels = [], [], [], []
    for number, line in block:
        if line.startswith("#"):
            continue
        fields = line.rstrip("\r\n").split("\t")
        if len(fields) != 10:
            raise _BadLine(number, f"expected 10 tab-separated fields, found {len(fields)}")
        token_id = fields[0]
        if "-" in token_id or "." in token_id:
            continue  # multiword token range or empty node: not part of the basic tree
        if _int(token_id, "token id", number) != len(words) + 1:
            raise _BadLine(number, f"token id {token_id} out of sequence (expected {len(words) + 1})")
        words.append(fields[1])
        xpos, upos = fields[4], fields[3]
        tags.append(xpos if xpos not in ("_", "") else upos)
        heads.append(_int(fields[6], "head", number))
        rels.append(fields[7])
    if not words:
        raise _BadLine(block[0][0], "sentence without tokens")
    return DepSentence(words, tags, heads, rels)


def _parse_dp_block(block: list[tuple[int, str]]) -> DepSentence:
    words, tags, heads, rels = [], [], [], []
    for number, line in block:
        fields = line.rstrip("\r\n").split("\t")
        if len(fields) not in (3, 4):
            raise _BadLine(number, f"expected 3 or 4 tab-separated fields (word, tag, head[, relation]), found {len(fields)}")
        words.append(fields[0])
        tags.append(fields[1])
        heads.append(_int(fields[2], "head", number))
        rels.append(fields[3] if len(fields) == 4 else None)
    with_rel = sum(r is not None for r in rels)
    if with_rel not in (0, len(rels)):
        raise _BadLine(block[0][0], "some lines have a relation column and some do not")
    return DepSentence(words, tags, heads, rels if with_rel else None)


def read_conllu(
    path: str | os.PathLike, *, on_error: OnError = "raise", on_problem: Callable[[ReadProblem], None] | None = None
) -> ReadResult:
    """Sentences of a CoNLL-U file (comments, multiword ranges `1-2` and empty nodes `1.1` skipped; XPOS as the
    tag when present, else UPOS; DEPREL as the relation)."""
    return _read_blocks(path, _parse_conllu_block, on_error, on_problem)


def read_dp(
    path: str | os.PathLike, *, on_error: OnError = "raise", on_problem: Callable[[ReadProblem], None] | None = None
) -> ReadResult:
    """Sentences of an NLTK `.dp` file: `word<TAB>tag<TAB>head[<TAB>relation]` per line, blank line between
    sentences."""
    return _read_blocks(path, _parse_dp_block, on_error, on_problem)


def read_dependency_file(
    path: str | os.PathLike, *, on_error: OnError = "raise", on_problem: Callable[[ReadProblem], None] | None = None
) -> ReadResult:
    """Dispatch on the suffix: `.dp` -> read_dp, `.conllu`/`.conll` -> read_conllu."""
    suffix = Path(path).suffix
    if suffix == ".dp":
        return read_dp(path, on_error=on_error, on_problem=on_problem)
    if suffix in (".conllu", ".conll"):
        return read_conllu(path, on_error=on_error, on_problem=on_problem)
    raise InputError(f"{path}: unknown dependency format {suffix!r}", hint="use a .conllu or .dp file")


def read_dependency_dir(
    directory: str | os.PathLike,
    *,
    on_error: OnError = "raise",
    on_problem: Callable[[ReadProblem], None] | None = None,
) -> ReadResult:
    """All sentences of the *.conllu, *.conll and *.dp files directly in `directory`, files in name order."""
    directory = Path(directory)
    if not directory.is_dir():
        raise InputError(f"{directory}: no such directory", hint="give a directory of .conllu or .dp files")
    files = sorted(p for p in directory.iterdir() if p.is_file() and p.suffix in DEPENDENCY_SUFFIXES)
    if not files:
        raise InputError(f"{directory}: no dependency files", hint=f"expected files ending in {', '.join(DEPENDENCY_SUFFIXES)}")
    result = ReadResult()
    for f in files:
        part = read_dependency_file(f, on_error=on_error, on_problem=on_problem)
        result.extend(part)
        result.problems.extend(part.problems)
    if result.problems and on_problem is None:
        warnings.warn(f"skipped {len(result.problems)} malformed sentence(s); first: {result.problems[0]}", stacklevel=2)
    return result
