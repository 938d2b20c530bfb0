"""PARSEVAL bracket scoring with EVALB (COLLINS.prm) semantics, written for treegram's `Tree`.

Why our own scorer: the usual Python scorers treat brackets as a *set*, so a repeated unary such as
`(NP (NP the man))` counts once; EVALB (and every published WSJ number) counts it twice.  Here brackets are a
multiset of (label, start, end) and matching is multiset intersection, exactly as EVALB's greedy loop behaves.

What is scored, per sentence (following evalb.c, Sekine & Collins 1997):

* Preterminals `(TAG word)` are words, never brackets.  A preterminal whose tag is in `delete_labels` (traces
  `-NONE-`, punctuation `, : `` '' .`) is removed together with its word *before* word positions are assigned, so
  punctuation attached at different heights cannot change any span.
* Every other node is a bracket spanning the remaining words below it, the root included.  A bracket is not counted
  when it spans no remaining word (e.g. an NP over a trace only), when its label (after function-tag stripping) is in
  `delete_labels` (`TOP`, `ROOT`), or when its label is empty.
* Function tags and indices are stripped from bracket labels (`NP-SBJ-1` -> `NP`, `NP=2` -> `NP`); labels that
  start with a dash (`-NONE-`, `-LRB-`) keep their dashed core.  Equivalent labels (`ADVP` = `PRT`) compare equal.
* Words must agree between gold and test after deletions; otherwise the sentence is an *error* sentence: reported,
  excluded from all totals (EVALB's "Length unmatch" / "Words unmatch").
* Sentence length (for the `max_length` cut-off) counts the gold words whose tag is not in
  `delete_labels_for_length` (only `-NONE-`), so punctuation counts, as in EVALB's `<= 40` section.
* Tagging accuracy compares the tags of the remaining (non-deleted) words.

Deliberate differences from evalb.c, all documented in the report:

* An empty-labelled root `( (S ...) )` is never a bracket.  evalb.c would count it as a bracket labelled "" (matched
  whenever both files wrap their trees), which inflates scores slightly; dropping it matches TOP/ROOT handling.
* `ROOT` is deleted by default (COLLINS.prm lists only `TOP`).
* Label equivalence is closed transitively (evalb.c compares pairs only); identical for COLLINS.prm.
* A failed parse (`test is None`) is scored as zero test brackets with the gold brackets still counted (evalb.c
  "skips" an empty test line instead).  Failures are counted separately in `ParsevalResult.failed`.
* Function tags are cut at the first `-`/`=` after the first character (evalb.c also cuts at position 0).
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

import attrs

from treegram.errors import InputError, TreeSyntaxError
from treegram.trees.bracket import parse_brackets
from treegram.trees.tree import Tree

COLLINS_DELETE_LABELS = frozenset({"TOP", "ROOT", "-NONE-", ",", ":", "``", "''", "."})
COLLINS_DELETE_LABELS_FOR_LENGTH = frozenset({"-NONE-"})
COLLINS_EQUIVALENT_LABELS = (("ADVP", "PRT"),)

STATUS_OK = "ok"
STATUS_FAILED = "failed"  # no test tree: zero matched, gold brackets counted
STATUS_ERROR = "error"  # words/length differ or malformed tree: excluded from totals
STATUS_SKIPPED = "skipped"  # longer than max_length: excluded from totals


def _pairs(value: Iterable[Sequence[str]]) -> tuple[tuple[str, str], ...]:
    out = []
    for pair in value:
        pair = tuple(pair)
        if len(pair) != 2 or not all(isinstance(x, str) for x in pair):
            raise InputError(f"equivalence entry {pair!r} is not a pair of strings", hint="write e.g. ('ADVP', 'PRT')")
        out.append(pair)
    return tuple(out)


def _positive_or_none(_inst, attribute, value) -> None:
    if value is not None and (not isinstance(value, int) or value < 1):
        raise InputError(f"{attribute.name} must be a positive integer or None, got {value!r}")


@attrs.frozen(slots=True)
class ParsevalParams:
    """Scoring options; the defaults reproduce COLLINS.prm (plus ROOT deletion), without a length cut-off."""

    delete_labels: frozenset[str] = attrs.field(default=COLLINS_DELETE_LABELS, converter=frozenset)
    delete_labels_for_length: frozenset[str] = attrs.field(
        default=COLLINS_DELETE_LABELS_FOR_LENGTH, converter=frozenset
    )
    equivalent_labels: tuple[tuple[str, str], ...] = attrs.field(default=COLLINS_EQUIVALENT_LABELS, converter=_pairs)
    equivalent_words: tuple[tuple[str, str], ...] = attrs.field(default=(), converter=_pairs)
    max_length: int | None = attrs.field(default=None, validator=_positive_or_none)
    labeled: bool = True
    strip_function_tags: bool = True

    @classmethod
    def from_prm(cls, path: str | Path, **overrides) -> ParsevalParams:
        """Read an EVALB .prm file (DELETE_LABEL, DELETE_LABEL_FOR_LENGTH, EQ_LABEL, EQ_WORD, LABELED).

        CUTOFF_LEN is ignored: EVALB reports both the full and the cut-off totals, so pass `max_length=40` in
        `overrides` for the second run.  DEBUG, MAX_ERROR and QUOTE_LABEL have no meaning here.
        """
        path = Path(path)
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            raise InputError(f"cannot read EVALB parameter file {path}: {exc.strerror}") from exc
        delete: set[str] = set()
        delete_len: set[str] = set()
        eq_labels: list[tuple[str, str]] = []
        eq_words: list[tuple[str, str]] = []
        labeled = True
        for lineno, raw in enumerate(lines, 1):
            line = raw.strip()
            if len(line) < 3 or line.startswith("#"):
                continue
            key, *args = line.split()
            value = " ".join(args)
            if key == "DELETE_LABEL" and args:
                delete.add(args[0])
            elif key == "DELETE_LABEL_FOR_LENGTH" and args:
                delete_len.add(args[0])
            elif key in ("EQ_LABEL", "EQ_WORD"):
                if len(args) != 2:
                    raise InputError(f"{path}:{lineno}: {key} needs two values, got {value!r}")
                (eq_labels if key == "EQ_LABEL" else eq_words).append((args[0], args[1]))
            elif key == "LABELED" and args:
                labeled = args[0] != "0"
            elif key in ("DEBUG", "MAX_ERROR", "CUTOFF_LEN", "QUOTE_LABEL"):
                continue
            else:
                raise InputError(f"{path}:{lineno}: unknown EVALB parameter {key!r}")
        kwargs = dict(
            delete_labels=delete,
            delete_labels_for_length=delete_len,
            equivalent_labels=eq_labels,
            equivalent_words=eq_words,
            labeled=labeled,
        )
        kwargs.update(overrides)
        return cls(**kwargs)


# -- label / word normalisation ------------------------------------------------------------------------------------

_DASHED_CORE = re.compile(r"^-[^-=]+-")


def strip_function_tags(label: str) -> str:
    """`NP-SBJ-1` -> `NP`, `NP=2` -> `NP`, `-NONE-` -> `-NONE-`, `-LRB-` -> `-LRB-`."""
    m = _DASHED_CORE.match(label)
    if m:
        return m.group(0)
    for i, ch in enumerate(label):
        if i > 0 and ch in "-=":
            return label[:i]
    return label


def _classes(pairs: tuple[tuple[str, str], ...]) -> dict[str, str]:
    """Union-find over equivalence pairs: every member maps to its class's smallest name."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in pairs:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    return {x: find(x) for x in list(parent)}


@attrs.frozen(slots=True)
class _Normalizer:
    params: ParsevalParams
    label_class: dict[str, str]
    word_class: dict[str, str]

    def bracket_label(self, label: str) -> str | None:
        """The label a bracket is compared under, or None when the bracket is not counted."""
        if not label or label in self.params.delete_labels:
            return None
        base = strip_function_tags(label) if self.params.strip_function_tags else label
        if not base or base in self.params.delete_labels:
            return None
        if not self.params.labeled:
            return "*"
        return self.label_class.get(base, base)

    def tag(self, tag: str) -> str:
        return self.label_class.get(tag, tag)

    def word(self, word: str) -> str:
        return self.word_class.get(word, word)


@functools.lru_cache(maxsize=32)
def _normalizer(params: ParsevalParams) -> _Normalizer:
    return _Normalizer(params, _classes(params.equivalent_labels), _classes(params.equivalent_words))


@attrs.frozen(slots=True)
class _Scorable:
    """A tree reduced to what PARSEVAL compares."""

    words: tuple[str, ...]  # remaining words (normalised for comparison)
    tags: tuple[str, ...]
    brackets: Counter  # (label, start, end) -> multiplicity
    length: int  # words not deleted for length (EVALB's r_wn1)


class _Malformed(Exception):
    pass


def _reduce(tree: Tree, norm: _Normalizer) -> _Scorable:
    """Walk the tree once (iteratively): drop deleted preterminals, assign positions, collect brackets."""
    params = norm.params
    words: list[str] = []
    tags: list[str] = []
    brackets: Counter = Counter()
    length = 0
    stack: list[tuple[Tree, int]] = [(tree, -1)]  # start >= 0 marks the closing visit of a bracket
    while stack:
        node, start = stack.pop()
        if start >= 0:
            if len(words) > start:
                label = norm.bracket_label(node.label)
                if label is not None:
                    brackets[(label, start, len(words))] += 1
            continue
        if not isinstance(node, Tree):
            raise _Malformed(f"word {node!r} has no preterminal above it")
        if node.is_preterminal:
            tag, word = node.label, node.children[0]
            if tag not in params.delete_labels_for_length:
                length += 1
            if tag not in params.delete_labels:
                words.append(norm.word(word))  # type: ignore[arg-type]
                tags.append(norm.tag(tag))
            continue
        for child in node.children:
            if isinstance(child, str):
                raise _Malformed(f"word {child!r} under {node.label!r} is not inside a preterminal (TAG word)")
        stack.append((node, len(words)))
        stack.extend((child, -1) for child in reversed(node.children))
    return _Scorable(tuple(words), tuple(tags), brackets, length)


# -- results ------------------------------------------------------------------------------------------------------


def _pct(num: int, den: int) -> float:
    return 100.0 * num / den if den else 0.0


def _f1(p: float, r: float) -> float:
    return 2.0 * p * r / (p + r) if p + r > 0 else 0.0


class _BracketRates:
    """Labeled precision, recall and F1 from `matched`, `test_brackets` and `gold_brackets`: one definition for a
    sentence's counts and the corpus totals."""

    __slots__ = ()

    @property
    def precision(self) -> float:
        return _pct(self.matched, self.test_brackets)

    @property
    def recall(self) -> float:
        return _pct(self.matched, self.gold_brackets)

    @property
    def f1(self) -> float:
        return _f1(self.precision, self.recall)


@attrs.frozen(slots=True)
class SentenceScore(_BracketRates):
    """One sentence's counts.  Percentages are 0..100; a zero denominator gives 0.0 (as evalb prints)."""

    matched: int
    gold_brackets: int
    test_brackets: int
    correct_tags: int
    words: int  # scored words (after deletions), the tag-accuracy denominator
    length: int  # gold length for the cut-off (only DELETE_LABEL_FOR_LENGTH removed)
    crossing: int  # test brackets crossing at least one gold bracket
    status: str = STATUS_OK
    error: str | None = None
    index: int = 0

    @property
    def exact(self) -> bool:
        return self.status == STATUS_OK and self.matched == self.gold_brackets == self.test_brackets

    @property
    def tag_accuracy(self) -> float:
        return _pct(self.correct_tags, self.words)

    @property
    def counted(self) -> bool:
        """Whether this sentence enters the corpus totals."""
        return self.status in (STATUS_OK, STATUS_FAILED)

    def to_dict(self) -> dict:
        return {
            "index": self.index,
            "status": self.status,
            "error": self.error,
            "length": self.length,
            "matched": self.matched,
            "gold_brackets": self.gold_brackets,
            "test_brackets": self.test_brackets,
            "precision": self.precision,
            "recall": self.recall,
            "f1": self.f1,
            "exact": self.exact,
            "tag_accuracy": self.tag_accuracy,
            "crossing": self.crossing,
        }


def _error_score(message: str, length: int = 0, index: int = 0) -> SentenceScore:
    return SentenceScore(0, 0, 0, 0, 0, length, 0, STATUS_ERROR, message, index)


def _crossing(gold: Counter, test: Counter) -> int:
    gold_spans = {(s, e) for _, s, e in gold}
    crossing = 0
    for (_, ts, te), count in test.items():
        if any((gs < ts < ge < te) or (ts < gs < te < ge) for gs, ge in gold_spans):
            crossing += count
    return crossing


def _score(gold: _Scorable, test: Tree | None, norm: _Normalizer, index: int) -> SentenceScore:
    n_gold = sum(gold.brackets.values())
    if test is None:
        return SentenceScore(0, n_gold, 0, 0, len(gold.words), gold.length, 0, STATUS_FAILED, None, index)
    try:
        t = _reduce(test, norm)
    except _Malformed as exc:
        return _error_score(f"test tree: {exc}", gold.length, index)
    if len(t.words) != len(gold.words):
        return _error_score(f"length mismatch: gold has {len(gold.words)} words, test {len(t.words)} "
                            "(after deleting punctuation and traces)", gold.length, index)
    for i, (gw, tw) in enumerate(zip(gold.words, t.words)):
        if gw != tw:
            return _error_score(f"word mismatch at position {i}: gold {gw!r}, test {tw!r}", gold.length, index)
    matched = sum((gold.brackets & t.brackets).values())
    correct = sum(1 for a, b in zip(gold.tags, t.tags) if a == b)
    return SentenceScore(
        matched, n_gold, sum(t.brackets.values()), correct, len(gold.words), gold.length,
        _crossing(gold.brackets, t.brackets), STATUS_OK, None, index,
    )


def score_sentence(gold: Tree, test: Tree | None, params: ParsevalParams | None = None) -> SentenceScore:
    """Score one test tree (None = the parser failed) against its gold tree.  Ignores `max_length`."""
    norm = _normalizer(params or ParsevalParams())
    try:
        g = _reduce(gold, norm)
    except _Malformed as exc:
        return _error_score(f"gold tree: {exc}")
    return _score(g, test, norm, 0)


@attrs.frozen(slots=True)
class ParsevalResult(_BracketRates):
    """Corpus totals (micro-averaged: summed counts, then ratios) plus every sentence's score."""

    sentences: tuple[SentenceScore, ...]
    params: ParsevalParams

    def _counted(self) -> list[SentenceScore]:
        return [s for s in self.sentences if s.counted]

    def _sum(self, field: str) -> int:
        return sum(getattr(s, field) for s in self.sentences if s.counted)

    @property
    def matched(self) -> int:
        return self._sum("matched")

    @property
    def gold_brackets(self) -> int:
        return self._sum("gold_brackets")

    @property
    def test_brackets(self) -> int:
        return self._sum("test_brackets")

    @property
    def scored(self) -> int:
        """Sentences in the totals (parsed or failed; not error, not over the length cut-off)."""
        return len(self._counted())

    @property
    def exact(self) -> float:
        counted = self._counted()
        return _pct(sum(1 for s in counted if s.exact), len(counted))

    @property
    def tag_accuracy(self) -> float:
        return _pct(self._sum("correct_tags"), self._sum("words"))

    def _status_count(self, status: str) -> int:
        return sum(1 for s in self.sentences if s.status == status)

    @property
    def errors(self) -> int:
        return self._status_count(STATUS_ERROR)

    @property
    def skipped(self) -> int:
        return self._status_count(STATUS_SKIPPED)

    @property
    def failed(self) -> int:
        return self._status_count(STATUS_FAILED)

    @property
    def average_crossing(self) -> float:
        counted = self._counted()
        return sum(s.crossing for s in counted) / len(counted) if counted else 0.0

    def to_dict(self, *, per_sentence: bool = False) -> dict:
        out = {
            "precision": self.precision,
            "recall": self.recall,
            "f1": self.f1,
            "exact": self.exact,
            "sentences": self.scored,
            "tag_accuracy": self.tag_accuracy,
            "matched": self.matched,
            "gold_brackets": self.gold_brackets,
            "test_brackets": self.test_brackets,
            "average_crossing": self.average_crossing,
            "total_sentences": len(self.sentences),
            "error_sentences": self.errors,
            "skipped_sentences": self.skipped,
            "failed_sentences": self.failed,
            "max_length": self.params.max_length,
        }
        if per_sentence:
            out["per_sentence"] = [s.to_dict() for s in self.sentences]
        return out

    def summary(self) -> str:
        cut = f" (len <= {self.params.max_length})" if self.params.max_length else ""
        return (
            f"PARSEVAL{cut}: P {self.precision:.2f}  R {self.recall:.2f}  F1 {self.f1:.2f}  "
            f"exact {self.exact:.2f}  tags {self.tag_accuracy:.2f}  "
            f"[{self.scored} scored, {self.failed} failed, {self.errors} errors, {self.skipped} skipped]"
        )


def score_corpus(
    golds: Iterable[Tree | None], tests: Iterable[Tree | None], params: ParsevalParams | None = None
) -> ParsevalResult:
    """Score paired gold/test trees.  A None test is a failed parse; a None gold is an error sentence."""
    params = params or ParsevalParams()
    norm = _normalizer(params)
    golds, tests = list(golds), list(tests)
    if len(golds) != len(tests):
        raise InputError(
            f"{len(golds)} gold trees but {len(tests)} test trees",
            hint="pass one test tree (or None for a failed parse) per gold tree",
        )
    scores = []
    for i, (gold, test) in enumerate(zip(golds, tests)):
        if gold is None:
            scores.append(_error_score("gold tree missing", 0, i))
            continue
        try:
            g = _reduce(gold, norm)
        except _Malformed as exc:
            scores.append(_error_score(f"gold tree: {exc}", 0, i))
            continue
        if params.max_length is not None and g.length > params.max_length:
            scores.append(SentenceScore(0, 0, 0, 0, 0, g.length, 0, STATUS_SKIPPED, None, i))
            continue
        scores.append(_score(g, test, norm, i))
    return ParsevalResult(tuple(scores), params)


# -- files --------------------------------------------------------------------------------------------------------


def _read_bracket_file(path: Path, encoding: str | None = None) -> list[str]:
    from treegram.io import read_lines

    try:
        lines = read_lines(path, encoding=encoding, what="tree")  # split on \n only: lines stay aligned
    except OSError as exc:
        raise InputError(f"cannot read tree file {path}: {exc.strerror}") from exc
    while lines and not lines[-1].strip():
        lines.pop()
    return lines


def _parse_line(line: str, where: str) -> Tree:
    """Exactly one bracketed tree (raw: labels, traces and an empty top bracket kept)."""
    trees = parse_brackets(line, source=where)
    if len(trees) != 1:
        raise TreeSyntaxError(f"{where}: expected one tree on the line, found {len(trees)}",
                              hint="write one bracketed tree per line")
    return trees[0]


def read_evalb_trees(gold_path: str | Path, test_path: str | Path, *, encoding: str | None = None
                     ) -> tuple[list[Tree], list[Tree | None], dict[int, str]]:
    """(gold trees, test trees, unreadable test lines by index) of two aligned files of one bracketed tree per line
    (see `evalb_files`): a failed or unreadable parse is None among the test trees."""
    gold_path, test_path = Path(gold_path), Path(test_path)
    gold_lines, test_lines = _read_bracket_file(gold_path, encoding), _read_bracket_file(test_path, encoding)
    if not gold_lines:
        raise InputError(f"{gold_path}: no gold trees (the file is empty)", hint="give a file with one tree per line")
    if len(gold_lines) != len(test_lines):
        raise InputError(
            f"{gold_path} has {len(gold_lines)} lines but {test_path} has {len(test_lines)}",
            hint="write one tree per line in both files (a blank test line marks a failed parse)",
        )
    golds: list[Tree] = []
    tests: list[Tree | None] = []
    test_errors: dict[int, str] = {}
    for n, (gl, tl) in enumerate(zip(gold_lines, test_lines)):
        if not gl.strip():
            raise InputError(f"{gold_path}:{n + 1}: empty gold line", hint="every gold line must hold one tree")
        golds.append(_parse_line(gl, f"{gold_path} line {n + 1}"))
        if not tl.strip() or tl.strip() in ("(())", "()"):
            tests.append(None)
            continue
        try:
            tests.append(_parse_line(tl, f"{test_path} line {n + 1}"))
        except TreeSyntaxError as exc:
            tests.append(None)
            test_errors[n] = str(exc)
    return golds, tests, test_errors


def evalb_files(
    gold_path: str | Path, test_path: str | Path, params: ParsevalParams | None = None, *,
    encoding: str | None = None,
) -> ParsevalResult:
    """Score two files of one bracketed tree per line (EVALB's input format).

    A blank test line (or `(())`) is a failed parse; an unreadable test line is an error sentence (reported, not
    counted); a blank or unreadable gold line is an input error.
    Trees may be wrapped in an empty top bracket `( (S ...) )` or in (TOP ...)/(ROOT ...).
    """
    golds, tests, test_errors = read_evalb_trees(gold_path, test_path, encoding=encoding)
    result = score_corpus(golds, tests, params)
    if not test_errors:
        return result
    # An unreadable test line is an error sentence (reported, not counted), not a failed parse.
    fixed = tuple(
        _error_score(f"unreadable test tree: {test_errors[s.index]}", s.length, s.index)
        if s.index in test_errors and s.status == STATUS_FAILED else s
        for s in result.sentences
    )
    return ParsevalResult(fixed, result.params)


__all__ = [
    "ParsevalParams",
    "ParsevalResult",
    "SentenceScore",
    "evalb_files",
    "score_corpus",
    "score_sentence",
    "strip_function_tags",
]
