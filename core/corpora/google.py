"""The Google sentence-compression pairs as recovered in ``compression/google/train-180k-lossy`` (180k train + 20k
validation pairs of Filippova & Altun 2013): one gzipped TSV per split with the columns
``tokens, keep_labels, pos, deprel`` (space-separated, one value per token; ``keep_labels`` 1 = kept in the
compression, 0 = deleted).  The long sentence is ``tokens``; the short one is the kept tokens, in order.

The copy is lossy: everything is lowercased, every digit is ``#`` (``2013`` -> ``####``, ``3.5`` -> ``#.#``) and 1.5%
of the tokens are ``<unk>`` (out of its 50k vocabulary).  What that means for a parser trained on the Penn Treebank
(`treegram.trees.signatures` gives unknown words their shape class):

* lowercase: the common words are known in their lowercase form, but a proper noun like ``seattle`` no longer gets
  the ``-CAP`` / ``-INITC`` signature that points to NNP, so names are parsed as common nouns more often;
* ``##``: a token without letters or digits is ``UNK-SYM-NOLET`` (a symbol), not ``UNK-NUM`` (a number, CD).
  ``digits="zero"`` writes every ``#`` of a number-shaped token (``##``, ``#,###.#``, ``##%``) as ``0`` so that it
  gets the number signature; the data has no real digits, so the trees' leaves map back exactly
  (`restore_hashes`).  The default, ``digits="keep"``, keeps the tokens as they are in the file.  Measured with a
  PCFG trained on ptb-sample (`benchmarks/bench_parse_scale.py`, RESULTS.md section parse-scale): with ``##`` kept
  the parser tags none of the number-shaped tokens CD (it picks IN); with ``digits="zero"`` it tags them all CD,
  and the agreement with the file's POS column rises by a few points overall -- use ``--digits zero`` for parsing;
* ``<unk>`` is an unknown word with a symbol signature (``UNK-SYM``), i.e. no word identity at all.

The reader is registered as the corpus reader ``google-pairs`` (yields pairs).  To get the sentences to parse::

    python -m treegram.corpora.google train.tsv.gz --side long --out long.txt [--every K] [--limit N] [--digits zero]

(one sentence per line, ready for ``treegram parse --input long.txt``).  The files are sorted by length, so a
subset for timing should take every K-th pair (``--every``), not the first N.
"""

from __future__ import annotations

import argparse
import gzip
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import attrs

from treegram.errors import InputError

COLUMNS = ("tokens", "keep_labels", "pos", "deprel")
SIDES = ("long", "short", "both")
_NUMBERISH = re.compile(r"^[+-]?[#,.:/]*#[#,.:/]*%?$")


@attrs.frozen
class GooglePair:
    line: int  # line in the file (the header is line 1)
    tokens: tuple[str, ...]
    keep: tuple[bool, ...]
    pos: tuple[str, ...]
    deprel: tuple[str, ...]

    @property
    def long(self) -> list[str]:
        return list(self.tokens)

    @property
    def short(self) -> list[str]:
        return [w for w, k in zip(self.tokens, self.keep) if k]


def zero_digits(token: str) -> str:
    """``#`` -> ``0`` in a number-shaped token (``##``, ``#,###.##``, ``##%``); other tokens unchanged."""
    return token.replace("#", "0") if _NUMBERISH.match(token) else token


def restore_hashes(token: str) -> str:
    """The inverse of `zero_digits` on this data (which has no real digits)."""
    return token.replace("0", "#") if _NUMBERISH.match(token.replace("0", "#")) else token


def _open(path: Path):
    if not path.exists():
        raise InputError(f"{path}: file not found",
                         hint="give train.tsv.gz or val.tsv.gz of compression/google/train-180k-lossy")
    if path.is_dir():
        raise InputError(f"{path}: is a directory", hint="give train.tsv.gz or val.tsv.gz inside it")
    if path.name.endswith(".gz"):
        return gzip.open(path, "rt", encoding="utf-8", newline="")
    return path.open(encoding="utf-8", newline="")


def read_google_pairs(path: str | Path, *, limit: int | None = None, every: int = 1) -> Iterator[GooglePair]:
    """Stream the pairs of one split (``.tsv.gz`` or ``.tsv``): every `every`-th pair, at most `limit` of them."""
    path = Path(path)
    if every < 1:
        raise InputError(f"every must be at least 1, got {every}")
    taken = 0
    with _open(path) as fh:
        try:
            header = fh.readline().rstrip("\r\n").split("\t")
            if tuple(header) != COLUMNS:
                raise InputError(f"{path}:1: not a Google pairs TSV (header {header[:4]!r})",
                                 hint="expected the columns " + ", ".join(COLUMNS))
            for lineno, raw in enumerate(fh, 2):
                if (lineno - 2) % every:
                    continue
                if limit is not None and taken >= limit:
                    return
                cols = raw.rstrip("\r\n").split("\t")
                if len(cols) != 4:
                    raise InputError(f"{path}:{lineno}: {len(cols)} columns, expected 4", hint=", ".join(COLUMNS))
                toks, keep, pos, dep = (c.split(" ") for c in cols)
                if not (len(toks) == len(keep) == len(pos) == len(dep)) or set(keep) - {"0", "1"}:
                    raise InputError(f"{path}:{lineno}: columns of unequal length or keep labels other than 0/1",
                                     hint="one value per token in every column")
                taken += 1
                yield GooglePair(lineno, tuple(toks), tuple(k == "1" for k in keep), tuple(pos), tuple(dep))
        except (OSError, EOFError, UnicodeDecodeError) as exc:
            raise InputError(f"{path}: cannot read ({type(exc).__name__}: {exc})",
                             hint="the file is truncated or not gzip/UTF-8") from None


def sentences(pairs, side: str = "long", digits: str = "keep") -> Iterator[str]:
    """One space-joined sentence per pair (``both``: the long one, then the short one)."""
    if side not in SIDES:
        raise InputError(f"unknown side {side!r}", hint="long, short or both")
    if digits not in ("keep", "zero"):
        raise InputError(f"unknown digits mode {digits!r}", hint="keep or zero")
    fix = zero_digits if digits == "zero" else (lambda w: w)
    for p in pairs:
        for words in ((p.long,) if side == "long" else (p.short,) if side == "short" else (p.long, p.short)):
            yield " ".join(fix(w) for w in words)


def read_google_pairs_file(path: Path) -> list[GooglePair]:
    """The registered reader: all pairs of a split."""
    return list(read_google_pairs(path))


def main(argv: list[str] | None = None) -> int:
    from treegram.io import atomic_write_text

    ap = argparse.ArgumentParser(prog="python -m treegram.corpora.google",
                                 description="sentences of the Google compression pairs, one per line")
    ap.add_argument("pairs", type=Path, help="train.tsv.gz or val.tsv.gz (compression/google/train-180k-lossy)")
    ap.add_argument("--side", choices=SIDES, default="long", help="long (default), short, or both (long, then short)")
    ap.add_argument("--out", default="-", help="output file (- = stdout)")
    ap.add_argument("--every", type=int, default=1, help="every K-th pair (the files are sorted by length)")
    ap.add_argument("--limit", type=int, default=None, help="at most N pairs")
    ap.add_argument("--digits", choices=("keep", "zero"), default="keep",
                    help="zero: write the # of number-shaped tokens as 0 (a PTB parser's number signature)")
    args = ap.parse_args(argv)
    try:
        text = "".join(s + "\n" for s in sentences(read_google_pairs(args.pairs, limit=args.limit,
                                                                       every=args.every), args.side, args.digits))
    except InputError as exc:
        print(f"error: {exc}" + (f" ({exc.hint})" if exc.hint else ""), file=sys.stderr)
        return 2
    if args.out == "-":
        sys.stdout.write(text)
    else:
        atomic_write_text(args.out, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
