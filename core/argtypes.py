"""argparse types shared by every command, so the same option means the same range everywhere.

Each returns the converted value or raises ``argparse.ArgumentTypeError`` with a message that names the
accepted range; argparse turns that into ``treegram CMD: error: argument --x: ...`` (exit 2), never a traceback.

>>> positive_int("3")
3
>>> seed("-1")
-1
"""

from __future__ import annotations

import argparse

#: numpy's SeedSequence takes any non-negative integer; negative seeds are folded in so any integer works.
_SEED_LIMIT = 2**128
#: the largest count any option takes (iterations, limits, sizes): beyond it numpy and C loops overflow, and no
#: run could finish anyway.
MAX_COUNT = 2**31 - 1


def _int(text: str, *, limit: int | None = MAX_COUNT) -> int:
    try:
        value = int(str(text).strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if limit is not None and abs(value) > limit:
        raise argparse.ArgumentTypeError(f"{text[:40]}{'...' if len(text) > 40 else ''} is too large "
                                         f"(at most {limit:,})")
    return value


def integer(text: str) -> int:
    """Any whole number up to MAX_COUNT in absolute value (the default for an int option without a range)."""
    return _int(text)


def _float(text: str) -> float:
    try:
        value = float(str(text).strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
    return value


def _checked(value, ok: bool, must: str):
    """`value` when it is in range (`ok`), else the argparse error "VALUE must ..." that names the range."""
    if not ok:
        raise argparse.ArgumentTypeError(f"{value} {must}")
    return value


def positive_int(text: str) -> int:
    """A count that must be at least 1 (iterations, -n, --top, --per-word, ...)."""
    value = _int(text)
    return _checked(value, value >= 1, "must be at least 1")


def nonnegative_int(text: str) -> int:
    """A count that may be 0 (burn-in, checkpoint interval 0 = off, ...)."""
    value = _int(text)
    return _checked(value, value >= 0, "must be 0 or more")


def finite_float(text: str) -> float:
    """Any finite number (rewards, log-scale offsets)."""
    return _float(text)


def positive_float(text: str) -> float:
    value = _float(text)
    return _checked(value, value > 0, "must be greater than 0")


def nonnegative_float(text: str) -> float:
    value = _float(text)
    return _checked(value, value >= 0, "must be 0 or more")


def probability(text: str) -> float:
    """A number in [0, 1]."""
    value = _float(text)
    return _checked(value, 0.0 <= value <= 1.0, "must be between 0 and 1")


def open_probability(text: str) -> float:
    """A number in (0, 1) (rates, thresholds that cannot be 0 or 1)."""
    value = _float(text)
    return _checked(value, 0.0 < value < 1.0, "must be strictly between 0 and 1")


def seed(text: str) -> int:
    """Any integer; `seed_sequence` maps negatives to distinct non-negative seeds numpy accepts."""
    value = _int(text, limit=None)
    if abs(value) >= _SEED_LIMIT:
        raise argparse.ArgumentTypeError(f"seed must be smaller than 2**128 in absolute value")
    return value


def horizontal(text: str) -> int:
    """Horizontal markovization: 0 or more, or -1 for infinite."""
    value = _int(text)
    return _checked(value, value >= -1, "must be -1 (infinite) or 0 or more")


def encoding(text: str) -> str:
    """A text encoding Python knows (utf-8, latin-1, cp1252, utf-16, ...); codecs that are not text encodings
    (rot13, base64, zlib, hex: str->str or bytes->bytes transforms) are refused."""
    from treegram.errors import InputError
    from treegram.io import check_encoding

    try:
        return check_encoding(str(text).strip())
    except InputError as exc:
        raise argparse.ArgumentTypeError(f"{exc} ({exc.hint})") from None


def line_range(text: str) -> tuple[int, int]:
    """A 1-based inclusive line range `A-B` (or a single line `A`) with 1 <= A <= B."""
    parts = str(text).strip().split("-")
    if len(parts) == 1:
        parts = parts * 2
    if len(parts) != 2:
        raise argparse.ArgumentTypeError(f"{text!r} is not a line range like 1-100")
    a, b = (_int(p) for p in parts)
    if a < 1 or b < a:
        raise argparse.ArgumentTypeError(f"line range {text!r} is empty (need 1 <= A <= B)")
    return a, b


def seed_entropy(value: int) -> int:
    """The non-negative integer handed to ``numpy.random.default_rng`` for a user seed (negatives folded in).

    >>> seed_entropy(5), seed_entropy(-1) != seed_entropy(1)
    (5, True)
    """
    return value if value >= 0 else _SEED_LIMIT + (-value)


__all__ = ["MAX_COUNT", "encoding", "finite_float", "integer", "horizontal", "line_range", "nonnegative_float", "nonnegative_int", "open_probability", "positive_float", "positive_int",
           "probability", "seed", "seed_entropy"]
