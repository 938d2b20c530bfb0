"""Reading the CLC FCE corpus (BEA-2019 JSON release) into sentence pairs, gold corrections and the
classification instances of section 2.

Each JSON line is an essay: ``text`` plus ``edits = [[annotator, [[start, end, correction, code], ...]]]`` at
character offsets.  Edits whose correction is ``null`` (the examiner marked an error without correcting it) are
dropped -- there is no corrected sentence for them; of nested edits the outer one is kept.  Sentences are split
on the original text (text.split_sentences); an edit that crosses a sentence boundary joins those sentences.

For a sentence with corrections e_1..e_k, the corrected sentence y applies all of them, and the instance for e_i
is (x_i, y, code_i) where x_i applies every correction except e_i (section 2) -- so the edit path x_i -> y holds
exactly the operations of e_i.  Gold corrections for the isolation experiments (section 4) are the token spans
of each edit in the original and the corrected sentence, trimmed of tokens the two sides share at either end.
"""

from __future__ import annotations

import json
from pathlib import Path

import attrs

from treegram.errors import InputError
from treegram.plugins.corrections.editpath import Span, trim
from treegram.plugins.corrections.text import split_sentences, tokenize_spans


@attrs.frozen
class GoldCorrection:
    code: str
    span: Span          # token span in (original, corrected)


@attrs.frozen
class SentencePair:
    essay: str
    index: int
    original: str
    corrected: str
    x: tuple[str, ...]
    y: tuple[str, ...]
    gold: tuple[GoldCorrection, ...]


@attrs.frozen
class Instance:
    x: tuple[str, ...]
    y: tuple[str, ...]
    code: str
    essay: str
    sentence: int       # index of the SentencePair in its essay


def read_fce_lines(path: str | Path) -> list[dict]:
    """The essays of one FCE JSON-lines file, validated (one clear InputError for a bad file)."""
    from treegram.io import read_text

    raw = read_text(path, what="FCE", hint="FCE JSON files are UTF-8")
    essays = []
    for lineno, line in enumerate(raw.splitlines(), 1):
        if not line.strip():
            continue
        try:
            e = json.loads(line)
            text = e["text"]
            edits = e["edits"]
            if not isinstance(text, str) or not isinstance(edits, list):
                raise TypeError("text must be a string and edits a list")
            for ann in edits:
                for ed in ann[1]:
                    s, t, c, code = ed[0], ed[1], ed[2], ed[3]
                    if not (isinstance(s, int) and isinstance(t, int) and 0 <= s <= t <= len(text)):
                        raise ValueError(f"edit offsets {s}..{t} outside the text")
                    if c is not None and not isinstance(c, str) or not isinstance(code, str):
                        raise TypeError("an edit is [start, end, correction, code]")
        except (json.JSONDecodeError, KeyError, TypeError, ValueError, IndexError) as exc:
            raise InputError(f"{path}:{lineno}: not an FCE essay ({type(exc).__name__}: {exc})",
                             hint="one JSON object per line with 'text' and 'edits' (BEA-2019 FCE release)") from None
        essays.append(e)
    if not essays:
        raise InputError(f"{path}: no essays in the file", hint="pass a non-empty FCE JSON-lines file")
    return essays


def _usable_edits(edits: list) -> list[tuple[int, int, str, str]]:
    out: list[tuple[int, int, str, str]] = []
    flat = [(int(s), int(t), c, str(code)) for ann in edits[:1] for s, t, c, code in ann[1] if c is not None]
    flat.sort(key=lambda e: (e[0], -e[1]))
    for e in flat:
        if out and e[0] < out[-1][1]:
            continue  # nested inside (or overlapping) the previous kept edit
        out.append(e)
    out.sort(key=lambda e: (e[0], e[1]))
    return out


def _apply(text: str, edits: list[tuple[int, int, str, str]], offset: int, skip: int | None = None):
    """Apply edits (relative to `offset`) to text; returns the new text and each applied edit's new span."""
    pieces, spans, pos = [], {}, 0
    length = 0
    for k, (s, t, c, _) in enumerate(edits):
        s, t = s - offset, t - offset
        if s < pos:
            continue
        pieces.append(text[pos:s]); length += s - pos
        if k == skip:
            pieces.append(text[s:t]); length += t - s
        else:
            spans[k] = (length, length + len(c))
            pieces.append(c); length += len(c)
        pos = t
    pieces.append(text[pos:])
    return "".join(pieces), spans


def _token_span(toks: list[tuple[str, int, int]], s: int, e: int) -> tuple[int, int]:
    if s == e:
        k = sum(1 for _, _, te in toks if te <= s)
        return k, k
    idx = [k for k, (_, ts, te) in enumerate(toks) if ts < e and te > s]
    if not idx:
        k = sum(1 for _, _, te in toks if te <= s)
        return k, k
    return idx[0], idx[-1] + 1


def essay_pairs(essay: dict) -> tuple[list[SentencePair], list[Instance]]:
    """Sentence pairs with gold corrections, and the section-2 instances, of one FCE essay."""
    text = essay["text"]
    eid = str(essay.get("id", ""))
    edits = _usable_edits(essay["edits"])
    sents = split_sentences(text)
    if not sents:
        return [], []
    # blocks: sentence ranges joined so that no edit crosses a boundary
    starts = [a for a, _ in sents]
    block_of = list(range(len(sents)))
    assigned: dict[int, list[int]] = {}
    for k, (s, t, _, _) in enumerate(edits):
        first = max(0, sum(1 for a in starts if a <= s) - 1)
        last = first
        while last + 1 < len(sents) and sents[last + 1][0] < t:
            last += 1
        for q in range(first, last + 1):
            block_of[q] = block_of[first]
        assigned.setdefault(first, []).append(k)
    blocks: dict[int, list[int]] = {}
    for q, b in enumerate(block_of):
        blocks.setdefault(b, []).append(q)
    pairs: list[SentencePair] = []
    instances: list[Instance] = []
    for b, members in sorted(blocks.items()):
        ks = sorted(k for q in members for k in assigned.get(q, []))
        if not ks:
            continue
        block_edits = [edits[k] for k in ks]
        a = min(sents[members[0]][0], min(e[0] for e in block_edits))
        z = max(sents[members[-1]][1], max(e[1] for e in block_edits))
        original = text[a:z]
        corrected, new_spans = _apply(original, block_edits, a)
        xt, yt = tokenize_spans(original), tokenize_spans(corrected)
        x = tuple(w for w, _, _ in xt)
        y = tuple(w for w, _, _ in yt)
        gold = []
        for k, (s, t, _, code) in enumerate(block_edits):
            if k not in new_spans:
                continue
            x0, x1 = _token_span(xt, s - a, t - a)
            y0, y1 = _token_span(yt, *new_spans[k])
            sp = trim(list(x), list(y), Span(x0, x1, y0, y1))
            if sp.x0 == sp.x1 and sp.y0 == sp.y1:
                continue
            gold.append(GoldCorrection(code, sp))
        if x == y:
            continue
        index = len(pairs)
        pairs.append(SentencePair(eid, index, original, corrected, x, y, tuple(gold)))
        for k, (_, _, _, code) in enumerate(block_edits):
            if k not in new_spans:
                continue
            partial, _ = _apply(original, block_edits, a, skip=k)
            xi = tuple(w for w, _, _ in tokenize_spans(partial))
            if xi != y:
                instances.append(Instance(xi, y, code, eid, index))
    return pairs, instances


def read_fce(paths) -> tuple[list[SentencePair], list[Instance]]:
    """All sentence pairs and instances of one or more FCE JSON-lines files."""
    if isinstance(paths, (str, Path)):
        paths = [paths]
    pairs: list[SentencePair] = []
    instances: list[Instance] = []
    for path in paths:
        for essay in read_fce_lines(path):
            p, i = essay_pairs(essay)
            pairs += p
            instances += i
    return pairs, instances
