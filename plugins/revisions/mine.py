"""Mining one chunk of a history dump: consecutive revisions of each page aligned sentence by sentence, and the
one-sentence replacements that are word-deletion compressions kept, both directions (section 2 of Yamangil &
Nelken 2008; `align` has the alignment and the deletion test).

A pair is (long, short, direction): ``compression`` when the newer revision has the shorter sentence (an editor
deleted words), ``expansion`` when it has the longer one.  Filters, each counted in the chunk's statistics:

* ``markup`` -- residue of wiki/reST markup (brackets, braces, pipes, ``=``, ``*``, ``#``, ``<``, ``>``, ``_``,
  ``&...;`` entities, ``::``) in either side;
* ``url`` -- a URL, a domain name or an e-mail address;
* ``code`` -- inline literals (````x````), calls ``f()``, dotted or underscored identifiers (PEP prose is full of them);
* ``fragment`` -- a side that does not start with a capital letter, digit or quote, or does not end in ``.``,
  ``!`` or ``?`` (list fragments and cut-off text);
* ``length`` -- a side outside [`min_words`, `max_words`] words;
* ``punctuation`` -- only punctuation deleted;
* ``near-identical`` -- a deleted duplicated word ("the the") or a single deleted word of at most two letters
  that leaves the rest identical (typo-level edits: "a"/"an" fixes, stray letters);
* ``duplicate`` -- the same (long, short) pair already mined from this page (edits undone and redone);
* ``parser`` -- with a parser model, a side whose negative log-likelihood under it exceeds `max_nll` or that
  does not parse (the paper kept pairs whose Collins-parser NLL is below 200).

Revisions with identical text (reverts, null edits) are not compared again: each text's sentences are computed
once per page (cache by content hash).
"""

from __future__ import annotations

import hashlib
import math
import re
import time
from collections import Counter
from typing import Any

import attrs

from treegram.options import SettingsRecord
from treegram.plugins.revisions.align import deletion_compression, sentence_replacements
from treegram.plugins.revisions.text import is_word, revision_sentences, tokenize

FILTERS = ("duplicate", "markup", "url", "code", "fragment", "length", "punctuation", "near-identical", "parser")


@attrs.frozen
class Settings(SettingsRecord):
    min_words: int = 5
    max_words: int = 60
    parser: str | None = None  # path of a treegram parsing model (ChartModel) for the NLL filter
    max_nll: float = 200.0
    max_cells: int = 4_000_000


_MARKUP = re.compile(r"[\[\]{}|<>=*#_\\~^]|&[a-z]+;|&#\d+;|::|''|\s:\s*$")
_URL = re.compile(r"https?:|ftp:|www\.|\w@\w|\b[\w-]+\.(?:com|org|net|edu|gov|io|html?|php)\b", re.I)
_CODE = re.compile(r"``|\w\(|\(\)|\b[A-Za-z_]\w*\.[A-Za-z_]\w*\(|\b[a-z]\w*\.[a-z]\w*\b(?<!e\.g)(?<!i\.e)")
_START = re.compile(r"^[\"'(\u201c\u2018]?[A-Z0-9]")
_END = re.compile(r"[.!?][\"')\u201d\u2019]?$")


def sentence_filter(sentence: str, tokens: list[str], settings: Settings) -> str | None:
    """The reason one side of a candidate pair is rejected, or None."""
    if _URL.search(sentence):
        return "url"
    if _CODE.search(sentence):
        return "code"
    if _MARKUP.search(sentence):
        return "markup"
    if not _START.match(sentence) or not _END.search(sentence):
        return "fragment"
    words = sum(1 for t in tokens if is_word(t))
    if words < settings.min_words or words > settings.max_words:
        return "length"
    return None


def deletion_filter(long: list[str], deleted: list[int]) -> str | None:
    gone = [long[i] for i in deleted]
    if not any(is_word(t) for t in gone):
        return "punctuation"
    if len(deleted) == 1:
        i = deleted[0]
        tok = long[i].lower()
        if (i > 0 and long[i - 1].lower() == tok) or (i + 1 < len(long) and long[i + 1].lower() == tok):
            return "near-identical"
        if len(tok) <= 2 and tok.isalpha():
            return "near-identical"
    return None


class NLLScorer:
    """Negative log-likelihood of a sentence under a treegram parsing model (the inside score over the core
    chart, log_z), cached per process: `treegram.formalism.load_model` then `chart_input` + `inside`."""

    _models: dict[str, Any] = {}

    def __init__(self, path: str):
        from treegram.formalism import load_model

        if path not in self._models:
            self._models[path] = load_model(path)
        self.model = self._models[path]

    def __call__(self, tokens: list[str]) -> float:
        from treegram.charts.chart import inside
        from treegram.trees.bracket import escape_word

        inp = self.model.chart_input([escape_word(t) for t in tokens])
        chart = inside(inp.cfg, inp.lex, prune=inp.prune)
        if chart.log_z == -math.inf and inp.prune is not None:
            chart = inside(inp.cfg, inp.lex)
        return -float(chart.log_z)


def mine_raw_chunk(chunk: dict[str, Any], settings: Settings) -> dict[str, Any]:
    """The Dask task: parse a raw XML chunk (`dumps.parse_chunk`) and mine it; parsing time counts as the task's."""
    from treegram.plugins.revisions.dumps import parse_chunk

    t0, c0 = time.perf_counter(), time.process_time()
    res = mine_chunk(parse_chunk(chunk), settings)
    res["stats"]["seconds"] = time.perf_counter() - t0
    res["stats"]["cpu_seconds"] = time.process_time() - c0
    return res


def mine_chunk(chunk: dict[str, Any], settings: Settings) -> dict[str, Any]:
    """Mine one chunk: ``{"index", "segments": [{"page_id", "title", "model", "context", "revisions":
    [(rev_id, text), ...]}]}`` where ``context`` says the first revision was already counted by the previous chunk
    (a long page split across chunks).  Returns ``{"index", "pairs": [row, ...], "stats": {...}}``."""
    t0, c0 = time.perf_counter(), time.process_time()
    stats: Counter = Counter()
    pairs: list[list] = []
    scorer = NLLScorer(settings.parser) if settings.parser else None
    for seg in chunk["segments"]:
        revs = seg["revisions"]
        stats["revisions"] += len(revs) - (1 if seg["context"] else 0)
        stats["pages"] += 0 if seg["context"] else 1
        cache: dict[bytes, list[str]] = {}
        para_cache: dict = {}
        seen: set[tuple[str, str]] = set()  # an edit undone and redone gives the same pair again
        prev_key, prev_sents = None, None
        for rev_id, text in revs:
            key = hashlib.sha1((text or "").encode("utf-8", "surrogatepass")).digest()
            sents = cache.get(key)
            if sents is None:
                sents = revision_sentences(text or "", seg["model"], para_cache)
                cache[key] = sents
                stats["sentences"] += len(sents)
            if prev_sents is not None and key != prev_key:
                stats["comparisons"] += 1
                subs, fallback = sentence_replacements(prev_sents, sents, max_cells=settings.max_cells)
                stats["alignment_fallbacks"] += fallback
                for i, j in subs:
                    stats["replacements"] += 1
                    _consider(prev_sents[i], sents[j], seg, prev_rev, rev_id, settings, scorer, stats, pairs, seen)
            prev_key, prev_sents, prev_rev = key, sents, rev_id
    stats["pairs"] = len(pairs)
    stats["seconds"] = time.perf_counter() - t0
    stats["cpu_seconds"] = time.process_time() - c0  # unaffected by other jobs on a shared machine
    return {"index": chunk["index"], "pairs": pairs, "stats": dict(stats)}


def _consider(old: str, new: str, seg, old_rev, new_rev, settings: Settings, scorer, stats: Counter,
              pairs: list, seen: set) -> None:
    ot, nt = tokenize(old), tokenize(new)
    if len(ot) > len(nt):
        long, short, lt, st, direction = old, new, ot, nt, "compression"
    elif len(nt) > len(ot):
        long, short, lt, st, direction = new, old, nt, ot, "expansion"
    else:
        return
    deleted = deletion_compression(lt, st)
    if deleted is None:
        return
    stats["candidates"] += 1
    if (long, short) in seen:
        stats["filtered:duplicate"] += 1
        return
    seen.add((long, short))
    reason = (sentence_filter(long, lt, settings) or sentence_filter(short, st, settings)
              or deletion_filter(lt, deleted))
    nll_long = nll_short = None
    if reason is None and scorer is not None:
        try:
            nll_long, nll_short = scorer(lt), scorer(st)
        except Exception:  # noqa: BLE001 - a sentence the model cannot take (empty chart, unknown input) fails
            nll_long = nll_short = math.inf
        if not (nll_long <= settings.max_nll and nll_short <= settings.max_nll):
            reason = "parser"
    if reason is not None:
        stats["filtered:" + reason] += 1
        return
    stats[direction] += 1
    stats["deleted_words"] += sum(1 for i in deleted if is_word(lt[i]))
    row = [seg["page_id"], seg["title"], old_rev, new_rev, direction,
           sum(1 for t in lt if is_word(t)), sum(1 for t in st if is_word(t)), long, short]
    if scorer is not None:
        row += [round(nll_long, 2), round(nll_short, 2)]
    pairs.append(row)
