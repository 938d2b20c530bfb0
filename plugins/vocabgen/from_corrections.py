"""`treegram exercises --from-corrections REPORT.json`: a class's most frequent error types become the next sheet.

The report is the JSON written by `treegram corrections --json` (format ``treegram-corrections-report``,
version 1); only its ``class_summary`` is read: ``code`` (a CLC error code), ``description``, ``count`` and
``examples`` (``wrong`` / ``right`` words).  Nothing of the corrections plugin is imported (a plugin never imports
another plugin): the file is the interface.

CLC codes are read by their letters: the first letter(s) name the operation (R replace, M missing,
U unnecessary, F wrong form, D derivation, I inflection, C countability, AG agreement), the last letter the part
of speech (T preposition, V verb, N noun, D determiner, J adjective, Y adverb, A pronoun, C conjunction,
Q quantifier); W is word order, S spelling, TV verb tense.  Each type needs a kind of practice, and the first
registered exercise kind (in section order) whose ``trains`` lists that need practises it (with the built-in
kinds, the exercise shown):

=====================================  ==============  ====================================================
error type                             need            exercise (built-in kinds)
=====================================  ==============  ====================================================
prepositions (RT, MT, UT)              closed-class    multiple choice among prepositions
determiners (RD, MD, UD, FD, AGD, CD)  closed-class    multiple choice among determiners
verb forms (TV, FV, IV, AGV, DV)       form            cloze with the lemma as hint ("_____ (go)")
noun forms (CN, FN, IN, AGN, DN)       form            cloze with the lemma as hint
adjective/adverb forms (FJ, DJ, ...)   form            cloze with the lemma as hint
word choice (RV, RN, RJ, RY)           word-choice     multiple choice among words of the same part of speech
missing/unnecessary content words      word            cloze
pronouns, conjunctions, quantifiers    word            cloze
word order (W, WO)                     word-order      reorder
spelling (S, SA, SX)                   spelling        cloze without hint (word box)
=====================================  ==============  ====================================================

Target words are the corrections' ``right`` words (all of a type's corrections in ``corrections`` when the report
lists them, else its summary ``examples``) (the ``wrong`` word for U* codes, where nothing is right),
most frequent first, kept only when they are single words in the sheet's vocabulary; sentences come from
`selection.select_sentences`.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import attrs

from treegram.errors import InputError
from treegram.exercises import exercise_kinds, get_kind

REPORT_FORMAT = "treegram-corrections-report"
REPORT_VERSIONS = (1,)
POS_NAMES = {"T": "preposition", "V": "verb", "N": "noun", "D": "determiner", "J": "adjective", "Y": "adverb",
             "A": "pronoun", "C": "conjunction", "Q": "quantifier"}
_OPS = ("AG", "R", "M", "U", "F", "D", "I", "C")
_WORD = re.compile(r"^[A-Za-z][A-Za-z'’-]*$")


@attrs.frozen
class Practice:
    """How one error type is practised: item kind, lemma hints, and a label for the sheet."""

    code: str
    kind: str | None          # None: no exercise kind trains it (punctuation, register, ...)
    hints: bool
    label: str
    count: int
    words: tuple[str, ...]

    @property
    def pos(self) -> str | None:
        """The part of speech the target words must have in a sentence (last letter of the code), or None."""
        c = self.code
        if c == "TV":
            return "V"
        if c[-1:] in POS_NAMES and len(c) >= 2 and self.kind is not None and get_kind(self.kind).targets_word:
            return c[-1]
        return None


def need_for(code: str) -> str | None:
    """The kind of practice a CLC code needs, read by its letters (see the module table); None: no single-word
    exercise trains it."""
    c = code.strip().upper()
    if c in ("W", "WO"):
        return "word-order"
    if c in ("S", "SA", "SX"):
        return "spelling"
    if c == "TV":
        return "form"
    if c in ("ID", "CE", "CL", "AS"):  # idiom, compound, collocation, argument structure: no single-word item
        return None
    op = next((o for o in _OPS if c.startswith(o) and len(c) == len(o) + 1), None)
    pos = c[-1] if op else None
    if op is None or pos not in POS_NAMES:
        return None
    if pos in ("T", "D"):
        return "closed-class"
    if pos == "Q" and op in ("R", "F", "C", "AG"):
        return "closed-class"
    if op in ("F", "I", "D", "AG", "C"):
        return "form"
    if op == "R" and pos in ("V", "N", "J", "Y"):
        return "word-choice"
    return "word"


def plan_for(code: str) -> tuple[str | None, bool]:
    """(kind, hints) for a CLC code: the first registered exercise kind that trains the code's need."""
    need = need_for(code)
    if need is not None:
        for kind in exercise_kinds().values():
            if need in kind.trains:
                return kind.name, kind.trains[need]
    return None, False


def read_report(path: str | Path) -> dict:
    """The report, validated enough to use (clear errors for anything else)."""
    p = Path(path)
    if not p.is_file():
        raise InputError(f"{p}: no such corrections report",
                         hint="write one with `treegram corrections ORIGINAL CORRECTED --json > report.json`")
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"{p}: not a JSON corrections report ({exc})",
                         hint="give the file written by `treegram corrections --json`") from None
    if not isinstance(data, dict) or data.get("format") != REPORT_FORMAT:
        raise InputError(f"{p}: not a treegram corrections report (format is not {REPORT_FORMAT!r})",
                         hint="give the file written by `treegram corrections --json`")
    if data.get("version") not in REPORT_VERSIONS:
        raise InputError(f"{p}: corrections report version {data.get('version')!r} is not supported",
                         hint=f"this treegram reads version {', '.join(map(str, REPORT_VERSIONS))}")
    summary = data.get("class_summary")
    if not isinstance(summary, list) or not all(isinstance(r, dict) and isinstance(r.get("code"), str)
                                                for r in summary):
        raise InputError(f"{p}: class_summary must be a list of {{code, count, examples}} entries",
                         hint="give the file written by `treegram corrections --json`")
    return data


def plan(report: dict, vocab, *, top: int = 3, words_per_type: int = 4) -> tuple[list[Practice], list[str]]:
    """The `top` most frequent error types that an exercise can train, each with its target words."""
    notes: list[str] = []
    rows = sorted(report["class_summary"], key=lambda r: (-_count(r), r["code"]))
    # every correction of a type (the summary keeps only a few examples per type)
    by_code: dict[str, list[dict]] = {}
    for c in report.get("corrections") or []:
        if isinstance(c, dict) and isinstance(c.get("code"), str):
            by_code.setdefault(c["code"].strip().upper(), []).append(c)
    out: list[Practice] = []
    for r in rows:
        if len(out) >= top:
            break
        code = r["code"].strip().upper()
        kind, hints = plan_for(code)
        label = f"{r.get('description') or code} ({code})"
        if kind is None:
            notes.append(f"{label}: no exercise kind practises this error type; skipped")
            continue
        counts: Counter[str] = Counter()
        for ex in by_code.get(code) or r.get("examples") or []:
            if not isinstance(ex, dict):
                continue
            text = ex.get("right") or ""
            if code.startswith("U") or not str(text).strip():
                text = ex.get("wrong") or text
            for w in str(text).split():
                w = w.strip(".,;:!?\"()").lower()
                if _WORD.match(w) and w in vocab:
                    counts[w] += 1
        words = tuple(w for w, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:words_per_type])
        if not words:
            notes.append(f"{label}: none of its corrected words is in the vocabulary {vocab.name}; skipped")
            continue
        out.append(Practice(code, kind, hints, label, _count(r), words))
    return out, notes


def _count(row: dict) -> int:
    try:
        return int(row.get("count") or len(row.get("examples") or []))
    except (TypeError, ValueError):
        return 0
