"""One input line through a compressor: what `treegram compress` does per line, in one process and on the Dask
workers of ``--workers`` / ``--scheduler`` alike (so both write the same bytes).

A line is raw text by default: `treegram.text` splits it into sentences and tokenizes each the Penn Treebank way;
each sentence is parsed (`Compressor.source_tree`) and compressed (`treegram.compression.compressor.compress_tree`:
reward or rate control), and the line's output is the compressed sentences as text (`Sentence.render`), joined as
they were.  With ``tokenized`` the line is one sentence of space-separated tokens and the output is the kept tokens,
as before raw text existed.

Every sentence the model returns unchanged, and every rate it could not meet, gets a `note` saying why (too short,
only punctuation, too long to parse, no parse, the rate out of reach, or no deletion worth its cost at the reward);
the command prints them on stderr and puts them in ``--json``.
"""

from __future__ import annotations

import time
from collections import Counter
from typing import Any

import attrs

from treegram.compression.compressor import RATE_TOLERANCE, MAX_PARSE_LENGTH, compress_tree

__all__ = ["CompressSettings", "LineResult", "STATUSES", "compress_line"]

#: per-sentence statuses: parsed (ok), flat fallback tree (failed: no parse; too_long: not parsed), an empty line,
#: a sentence of punctuation only (passed through)
STATUSES = ("ok", "failed", "too_long", "empty", "punctuation")


@attrs.frozen
class CompressSettings:
    """How each sentence is compressed (the `treegram compress` options that change the output)."""

    rate: float | None = None
    reward: float = 0.0
    tolerance: float = RATE_TOLERANCE
    tokenized: bool = False

    def to_json(self) -> dict[str, Any]:
        return attrs.asdict(self)


@attrs.frozen
class LineResult:
    output: str  # the line written to --out
    records: list[dict[str, Any]]  # one per sentence (--json)
    counts: dict[str, int]
    parse_seconds: float = 0.0
    decode_seconds: float = 0.0


def _unchanged_reason(status: str, n: int, words: int, settings: CompressSettings, note: str | None) -> str:
    if status == "too_long":
        return f"longer than {MAX_PARSE_LENGTH} tokens, so not parsed (flat tree), and nothing was deleted"
    if words <= 1:
        return f"too short to compress ({n} token{'s' if n != 1 else ''})"
    if note:
        return note
    if settings.rate is not None and settings.rate >= 1.0:
        return "--rate 1 keeps every word"
    if status == "failed":
        return ("the parser found no parse (flat fallback tree) and the model deletes nothing from the flat tree "
                f"at --reward {settings.reward:g}")
    if settings.rate is not None:
        return f"the model's best compression near rate {settings.rate:g} keeps every word"
    at = "the model's default length" if settings.reward == 0 else f"--reward {settings.reward:g}"
    return (f"no deletion is worth its cost at {at} (the model prefers every word); ask for a rate (--rate 0.7) or "
            "a lower --reward")


def _sentence(model, tokens: list[str], settings: CompressSettings) -> tuple[dict[str, Any], float, float]:
    """The record of one tokenized sentence (keys shared by both modes) and the parse / decode seconds."""
    from treegram.text import is_punctuation

    words = sum(not is_punctuation(t) for t in tokens)
    if words == 0:
        return ({"status": "punctuation", "keep": [True] * len(tokens), "rate": 1.0, "score": None, "tree": "",
                 "note": "only punctuation: nothing to compress"}, 0.0, 0.0)
    t0 = time.perf_counter()
    tree, status = model.source_tree(tokens)
    t1 = time.perf_counter()
    comp = compress_tree(model, tree, tokens, rate=settings.rate, reward=settings.reward,
                         tolerance=settings.tolerance)
    t2 = time.perf_counter()
    keep = [bool(k) for k in comp.keep]
    rec: dict[str, Any] = {"status": status, "keep": keep, "rate": round(comp.rate, 4),
                           "score": round(comp.model_score, 4) if comp.score is not None else None,
                           "tree": comp.tree.to_bracket() if comp.tree is not None else ""}
    note = getattr(comp, "note", None)
    if all(keep):
        note = _unchanged_reason(status, len(tokens), words, settings, note)
    if note:
        rec["note"] = note
    if settings.rate is not None:
        rec["rate_met"] = abs(comp.rate - settings.rate) <= settings.tolerance + 1e-9
    return rec, t1 - t0, t2 - t1


def compress_line(model, line: str, settings: CompressSettings, lineno: int = 0) -> LineResult:
    """Compress one input line (see the module docstring)."""
    from treegram.text import Sentence, detokenize, split_sentences

    counts: Counter = Counter()
    records: list[dict[str, Any]] = []
    parse_s = decode_s = 0.0
    if settings.tokenized:
        units = [(0, 0, Sentence.from_tokens(line.split()))] if line.split() else []
    else:
        units = [(a, b, Sentence.from_text(line[a:b])) for a, b in split_sentences(line)]
    if not units:
        counts["empty"] += 1
        rec = {"line": lineno, "sentence": 0, "status": "empty", "input": "", "tokens": [], "keep": [],
               "compression": "", "source_text": "", "text": "", "rate": None, "score": None, "tree": ""}
        return LineResult("", [rec], dict(counts))
    pieces: list[str] = []
    for k, (_a, _b, sent) in enumerate(units, 1):
        tokens = list(sent.tokens)
        rec, ps, ds = _sentence(model, tokens, settings)
        parse_s += ps
        decode_s += ds
        counts[rec["status"]] += 1
        kept = [w for w, keep in zip(tokens, rec["keep"]) if keep]
        text = detokenize(kept) if settings.tokenized else sent.render(rec["keep"])
        records.append({"line": lineno, "sentence": k, "status": rec.pop("status"), "input": " ".join(tokens),
                        "tokens": tokens, **{"keep": rec.pop("keep")}, "compression": " ".join(kept),
                        "source_text": sent.text if not settings.tokenized else detokenize(tokens), "text": text,
                        **rec})
        pieces.append(" ".join(kept) if settings.tokenized else text)
    # sentences of one line are separated by whitespace only (the splitter's spans cover every other character)
    return LineResult(" ".join(p for p in pieces if p), records, dict(counts), parse_s, decode_s)
