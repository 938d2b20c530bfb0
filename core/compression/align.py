"""Compression pairs: reading them, and the deletion alignment of a compression to its source sentence.

Extractive compression keeps an order-preserving subset of the source words, so the word alignment is the longest
common subsequence (LCS) of the two token sequences.  A pair is a *pure deletion* when every target token is matched.
Corpora whose compressions are tokenized differently from their sources (Google eval-10k) are re-aligned at the
character level: a source token is kept when most of its characters are matched by the LCS of the two space-free
character strings.  Pairs that are not pure deletions are reported (counted, flagged) and projected onto the
closest deletion-only compression, never dropped silently and never a crash.
"""

from __future__ import annotations

from pathlib import Path

import attrs
import numba
import numpy as np

from treegram.errors import InputError

__all__ = ["Alignment", "Pair", "lcs_keep", "align_tokens", "align_text", "read_pairs", "load_broadcast_news",
           "load_google_slahan", "load_google_eval", "alignment_report", "load_training_data"]


@attrs.frozen
class Alignment:
    """keep[k] is True when source token k survives in the compression."""

    keep: np.ndarray  # bool [len(source)]
    pure_deletion: bool  # the compression is exactly the kept source tokens
    unmatched: int  # target tokens (or characters, for text alignment) the LCS could not match

    @property
    def rate(self) -> float:
        return float(self.keep.mean()) if len(self.keep) else 1.0


@attrs.frozen
class Pair:
    source: list[str]
    target: list[str]  # the compression as deletion of the source: [source[k] for k kept]
    keep: np.ndarray
    pure_deletion: bool
    line: int = 0  # 1-based line in the corpus files
    original_target: list[str] | None = None  # the compression as written, when it differs from `target`


@numba.njit(cache=True)
def _lcs_table(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    n, m = len(a), len(b)
    t = np.zeros((n + 1, m + 1), dtype=np.int32)
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            if a[i] == b[j]:
                t[i, j] = t[i + 1, j + 1] + 1
            else:
                t[i, j] = max(t[i + 1, j], t[i, j + 1])
    return t


@numba.njit(cache=True)
def _lcs_keep(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Matched positions of a, preferring the leftmost-in-b / earliest-in-a match (deterministic)."""
    t = _lcs_table(a, b)
    keep = np.zeros(len(a), dtype=np.bool_)
    i = j = 0
    while i < len(a) and j < len(b):
        if a[i] == b[j] and t[i, j] == t[i + 1, j + 1] + 1:
            keep[i] = True
            i += 1
            j += 1
        elif t[i + 1, j] >= t[i, j + 1]:
            i += 1
        else:
            j += 1
    return keep


def lcs_keep(source: list[str], target: list[str]) -> np.ndarray:
    """Boolean mask over `source`: the tokens of one longest common subsequence with `target`."""
    vocab: dict[str, int] = {}
    a = np.array([vocab.setdefault(w, len(vocab)) for w in source], dtype=np.int64)
    b = np.array([vocab.setdefault(w, len(vocab)) for w in target], dtype=np.int64)
    if len(a) == 0:
        return np.zeros(0, dtype=bool)
    return _lcs_keep(a, b)


def align_tokens(source: list[str], target: list[str]) -> Alignment:
    """Deletion alignment of a compression tokenized like its source."""
    keep = lcs_keep(source, target)
    matched = int(keep.sum())
    return Alignment(keep, matched == len(target), len(target) - matched)


def _char_keep(source: list[str], target: list[str]) -> tuple[np.ndarray, int]:
    """Keep mask of `source` tokens whose characters mostly match the LCS of the space-free, lowercased strings."""
    src_chars = "".join(source).lower()
    tgt_chars = "".join(target).lower()
    if not src_chars or not tgt_chars:
        return np.zeros(len(source), dtype=bool), len(tgt_chars)
    owner = np.repeat(np.arange(len(source)), [len(w) for w in source])
    vocab: dict[str, int] = {}
    a = np.array([vocab.setdefault(c, len(vocab)) for c in src_chars], dtype=np.int64)
    b = np.array([vocab.setdefault(c, len(vocab)) for c in tgt_chars], dtype=np.int64)
    char_keep = _lcs_keep(a, b)
    matched = np.bincount(owner[char_keep], minlength=len(source))
    lengths = np.array([len(w) for w in source])
    keep = (matched * 2 >= np.maximum(lengths, 1)) & (matched > 0)
    return keep, int(len(b) - char_keep.sum())


def align_text(source: list[str], compression: str) -> Alignment:
    """Deletion alignment of a compression given as text tokenized differently (spaces are ignored).

    Tokens matched by a case-insensitive token LCS are anchors; the source and target stretches between consecutive
    anchors are aligned at the character level (`_char_keep`), so "Riordan's" keeps "Riordan 's" and "out." keeps
    "out .".  `pure_deletion` means the kept source tokens spell exactly the compression (ignoring spaces and case).
    """
    target = compression.split()
    tok = align_tokens(source, target)
    if tok.pure_deletion:
        return tok
    low_s = [w.lower() for w in source]
    low_t = [w.lower() for w in target]
    keep_s = lcs_keep(low_s, low_t)
    keep_t = lcs_keep(low_t, low_s)  # the same LCS length; anchors are paired in order
    si = np.flatnonzero(keep_s)
    ti = np.flatnonzero(keep_t)
    n = min(len(si), len(ti))
    keep = np.zeros(len(source), dtype=bool)
    keep[si[:n]] = True
    unmatched = 0
    bounds = [(-1, -1)] + list(zip(si[:n].tolist(), ti[:n].tolist())) + [(len(source), len(target))]
    for (s0, t0), (s1, t1) in zip(bounds[:-1], bounds[1:]):
        gs, gt = source[s0 + 1:s1], target[t0 + 1:t1]
        if gt:
            k, u = _char_keep(gs, gt)
            keep[s0 + 1:s1] = k
            unmatched += u
    spelled = "".join(w for w, k in zip(source, keep) if k).lower()
    return Alignment(keep, spelled == "".join(target).lower(), unmatched)


def _read_lines(path: Path) -> list[str]:
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: file not found", hint="give a file with one tokenized sentence per line")
    try:
        return path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text ({exc})", hint="convert the file to UTF-8") from None


def read_pairs(source_path, target_path, *, text_alignment: bool = False, lines: slice | None = None,
               max_length: int | None = None, skipped: list | None = None) -> list[Pair]:
    """Aligned pairs from two line-parallel files (one tokenized sentence per line).

    Empty source lines are skipped (reported through `alignment_report` via their absence: the Pair keeps its line).
    With `max_length`, a pair whose source has more tokens is skipped before it is aligned (aligning costs
    source x target time and memory); the 1-based line numbers of skipped pairs are appended to `skipped`.
    """
    src_lines = _read_lines(source_path)
    tgt_lines = _read_lines(target_path)
    if len(src_lines) != len(tgt_lines):
        raise InputError(f"{source_path} has {len(src_lines)} lines but {target_path} has {len(tgt_lines)}",
                         hint="source and compression files must be line-parallel")
    idx = range(len(src_lines))[lines] if lines is not None else range(len(src_lines))
    out = []
    for k in idx:
        source = src_lines[k].split()
        if not source:
            continue
        if max_length is not None and len(source) > max_length:
            if skipped is not None:
                skipped.append(k + 1)
            continue
        al = align_text(source, tgt_lines[k]) if text_alignment else align_tokens(source, tgt_lines[k].split())
        target = [w for w, kept in zip(source, al.keep) if kept]
        orig = tgt_lines[k].split()
        out.append(Pair(source, target, al.keep, al.pure_deletion, k + 1, None if orig == target else orig))
    return out


def load_broadcast_news(root, annotator: int = 1, split: str = "train") -> list[Pair]:
    """Clarke & Lapata broadcast news: lines 1-1000 = train, 1001-1170 = dev; annotators 1, 2, 3."""
    root = Path(root)
    sl = {"train": slice(0, 1000), "dev": slice(1000, 1170), "all": slice(None)}[split]
    return read_pairs(root / "input.txt", root / f"gold.{annotator}.comp", lines=sl)


def load_google_slahan(root) -> list[Pair]:
    root = Path(root)
    return read_pairs(root / "input.txt", root / "gold.txt", text_alignment=True)


def load_google_eval(root, limit: int | None = None) -> list[Pair]:
    root = Path(root)
    return read_pairs(root / "test_words.txt", root / "test_labels.txt", text_alignment=True,
                      lines=slice(0, limit) if limit else None)


def alignment_report(pairs: list[Pair]) -> dict:
    n = len(pairs)
    pure = sum(p.pure_deletion for p in pairs)
    src = sum(len(p.source) for p in pairs)
    kept = sum(len(p.target) for p in pairs)
    return {"pairs": n, "pure_deletion": pure, "non_deletion": n - pure,
            "compression_rate": round(100.0 * kept / src, 2) if src else 0.0}


def load_training_data(pairs_paths, parser_path, *, limit: int | None = None, note=None):
    """What every compressor's ``treegram train`` reads: the parser (`load_parser`: ``spacy`` or a model file,
    checked: it exists and can parse) and
    the (long, short) pairs, aligned (``read_pairs`` with text alignment), with a one-line alignment report sent to
    ``note``.  Returns (parser, pairs)."""
    from treegram.compression.compressor import MAX_PARSE_LENGTH, load_parser
    from treegram.errors import InputError

    parser = load_parser(parser_path)
    too_long: list[int] = []
    pairs = read_pairs(pairs_paths[0], pairs_paths[1], text_alignment=True,
                       lines=slice(0, limit) if limit else None, max_length=MAX_PARSE_LENGTH, skipped=too_long)
    if too_long and note is not None:
        note(f"skipped {len(too_long)} pair(s) longer than {MAX_PARSE_LENGTH} tokens (the parse length limit; first: "
             f"line {too_long[0]})")
    if not pairs:
        raise InputError(f"{pairs_paths[0]}: no sentence pairs" + (
            f" of at most {MAX_PARSE_LENGTH} tokens" if too_long else ""), hint="give one tokenized sentence per line")
    if note is not None:
        rep = alignment_report(pairs)
        note(f"read {rep['pairs']} pairs ({rep['pure_deletion']} pure deletions, {rep['non_deletion']} projected "
             f"onto their longest common subsequence); gold compression rate {rep['compression_rate']}%")
    return parser, pairs
