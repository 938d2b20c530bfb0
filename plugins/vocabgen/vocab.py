"""Vocabularies: CEFR levels (the embedded CEFR-J 1.5 + Octanove C1/C2 profiles), word lists, and inflections.

A vocabulary is a set of lowercase word forms plus multiword phrases and the proper names it allows; punctuation,
English clitics ("n't", "'s", ...) and numerals written in digits are always allowed.  `Vocabulary.missing(tokens)`
is the one sentence-level check (a word of a multiword headword such as "ice cream" is accepted only inside that
phrase); `word in vocab` answers "may this token occur at all" (used to prune the generation model).

Specs (`parse_vocab_spec`):

    cefr:A1 .. cefr:C2       the CEFR-J Vocabulary Profile 1.5 (A1-B2) and the Octanove Vocabulary Profile C1/C2,
                             embedded as package data (see data/NOTICE.md for the citation); cumulative (A2 includes
                             A1).  A headword brings only the inflections of its listed part of speech
                             (lemminflect): "bus" (noun) gives "buses", never "bussed".
    cefrpy:A1 .. cefrpy:C2   opt-in: PyPI `cefrpy` levels (a much larger list, each word at its easiest part of
                             speech) with the inflections of every part of speech
    words:the,dog,bit        an inline list (used as given)
    PATH.csv                 a CEFR-J style profile csv (headword,pos,CEFR,...): give the level with
                             `level=` (CLI: --level A1) or as PATH.csv@A1
    DIR                      every file in the directory is a word list (e.g. the Dolch lists), used as given
    PATH                     a word list, one word per line ('#' comments), used as given (e.g. Ogden's 850)

Proper names.  CEFR-J lists no names, but a learner's sentences need a few ("Tom is my brother.").  Every CEFR
vocabulary allows the short fixed list `PROPER_NAMES` (common given names and the most common country, city and
language names of an English-Japanese classroom); `Vocabulary.names_in(tokens)` tells a sheet which ones it used so
it can list them ("Names on this sheet: Tom, Japan").  Other vocabularies allow no names unless they list them.
"""

from __future__ import annotations

import csv
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
_NUMERAL = re.compile(r"^\d+(?:[.,:]\d+)*(?:st|nd|rd|th|s)?$")

#: Proper names every CEFR vocabulary allows (lowercase).  Chosen by hand: short, common given names and the
#: country / city / language names of the graded English-Japanese corpus that a beginner meets first.
PROPER_NAMES = frozenset("""
tom mary john jane ken bob jim mike tony bill lucy emi yumi taro kate nancy betty jack lisa paul
japan japanese english america american americans england london tokyo kyoto osaka paris france french
china chinese canada australia mr. mrs. ms. mr mrs ms
""".split())


def is_numeral(token: str) -> bool:
    return bool(_NUMERAL.match(token))


@attrs.frozen
class Vocabulary:
    """Allowed word forms (lowercase), multiword phrases (token tuples) and proper names."""

    name: str
    words: frozenset[str] = attrs.field(converter=frozenset)
    phrases: frozenset[tuple[str, ...]] = attrs.field(converter=frozenset, factory=frozenset)
    names: frozenset[str] = attrs.field(converter=frozenset, factory=frozenset)
    #: the CEFR level (A1..C2) when this is the embedded profile's vocabulary up to that level (`cefr:LEVEL`):
    #: what distractors, the practised-word check and the editor compare against; None for any other list
    level: str | None = None
    #: tokens allowed only inside one of the phrases (e.g. "cream" of "ice cream" at A1)
    phrase_only: frozenset[str] = attrs.field(init=False)

    @phrase_only.default
    def _phrase_only(self) -> frozenset[str]:
        inside = {t for ph in self.phrases for t in ph}
        return frozenset(t for t in inside if t not in self.words and t not in ALWAYS_ALLOWED
                         and t not in self.names)

    def __contains__(self, word: str) -> bool:
        """May this token occur in a sentence at all (alone, as a name, or inside one of the phrases)?"""
        w = word.lower()
        return (w in self.words or w in ALWAYS_ALLOWED or w in self.names or w in self.phrase_only
                or is_numeral(w))

    def __call__(self, word: str) -> bool:
        return word in self

    def __len__(self) -> int:
        return len(self.words)

    def missing(self, tokens: Iterable[str]) -> list[str]:
        """The tokens of a sentence the vocabulary does not allow there (empty = the sentence is in the level)."""
        toks = [t.lower() for t in tokens]
        covered = [False] * len(toks)
        if self.phrase_only:
            for i, t in enumerate(toks):
                if t in self.phrase_only:
                    for ph in self.phrases:
                        n = len(ph)
                        for s in range(max(0, i - n + 1), i + 1):
                            if tuple(toks[s:s + n]) == ph:
                                covered[i] = True
                                break
                        if covered[i]:
                            break
        return [tok for tok, t, ok in zip(tokens, toks, covered)
                if not ok and not (t in self.words or t in ALWAYS_ALLOWED or t in self.names or is_numeral(t))]

    def names_in(self, tokens: Iterable[str]) -> list[str]:
        """Proper names (allowed only as names) a sentence uses, as written."""
        return [t for t in tokens if t.lower() in self.names and t.lower() not in self.words]

    def with_words(self, extra: Iterable[str]) -> Vocabulary:
        return attrs.evolve(self, words=self.words | {w.lower() for w in extra})


def user_cache_dir() -> Path:
    """$TREEGRAM_CACHE, else $XDG_CACHE_HOME/treegram, else ~/.cache/treegram."""
    env = os.environ.get("TREEGRAM_CACHE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME")
    return (Path(base) if base else Path.home() / ".cache") / "treegram"


# -- inflections -----------------------------------------------------------------------------------------
#: CEFR-J / Octanove part of speech -> lemminflect's universal POS (None: the headword is used as written)
_UPOS = {"noun": "NOUN", "verb": "VERB", "vern": "VERB", "adjective": "ADJ", "adverb": "ADV",
         "be-verb": "AUX", "do-verb": "AUX", "have-verb": "AUX", "modal auxiliary": "AUX"}


def _lemminflect():
    try:
        import lemminflect
    except ImportError:
        raise InputError("CEFR vocabularies need the `lemminflect` package for inflections",
                         hint="pip install lemminflect==0.2.3") from None
    return lemminflect


INFLECTION_TABLE = "inflections-lemminflect-0.2.3.tsv.gz"


@lru_cache(maxsize=1)
def _table_rows() -> tuple[list[str], ...]:
    """The precomputed inflection table's rows (package data written by `write_inflection_table`), read once."""
    import gzip
    from importlib.resources import files

    try:
        raw = (files("treegram.plugins.vocabgen") / "data" / INFLECTION_TABLE).read_bytes()
    except (FileNotFoundError, OSError):
        return ()
    return tuple(line.split("\t") for line in gzip.decompress(raw).decode("utf-8").splitlines())


@lru_cache(maxsize=1)
def _table() -> dict[tuple[str, str], frozenset[str]]:
    """lemminflect's forms precomputed for every profile headword and safety-list lemma, so a CEFR vocabulary loads
    without lemminflect's 3-second start-up."""
    return {(p[0], p[1]): frozenset(p[2].split()) for p in _table_rows()}


@lru_cache(maxsize=1)
def _tag_table() -> dict[tuple[str, str], dict[str, str]]:
    """(lemma, UPOS) -> {Penn tag: form} from the precomputed table's fourth column (lemminflect's first spelling
    per tag): what derivation edits (edits.py) inflect a swapped-in word with."""
    return {(p[0], p[1]): dict(x.split("=", 1) for x in p[3].split()) for p in _table_rows() if len(p) > 3 and p[3]}


def inflect(lemma: str, tag: str) -> str | None:
    """The form of `lemma` for Penn `tag` (NNS, VBD, JJR, ...), lemminflect's first spelling, from the precomputed
    table (None when the table lacks the lemma or the tag: a word outside the profiles, an adjective without a
    synthetic comparative)."""
    upos = {"N": "NOUN", "V": "VERB", "J": "ADJ", "R": "ADV"}.get(tag[:1])
    if upos is None:
        return None
    return _tag_table().get((lemma.lower(), upos), {}).get(tag)


def write_inflection_table(path: str | Path, extra_words: Iterable[str] = ()) -> int:
    """Write the precomputed table for every (headword word, POS) of the embedded profiles and for `extra_words`
    (build_default passes the safety list's words, so its filter finds their forms)."""
    import gzip

    from treegram.io import atomic_write_bytes

    keys = set()
    for hw, pos, _lv in cefrj_entries():
        u = _UPOS.get(pos)
        for alt in hw.replace("’", "'").split("/"):
            for tok in alt.strip().lower().split():
                if u and tok.replace("'", "").isalpha():
                    keys.add((tok, u))
                if tok.isalpha():
                    keys.update({(tok, "NOUN"), (tok, "VERB")})  # word_forms of words outside their POS
    for w in set(extra_words):
        keys.update({(w, "NOUN"), (w, "VERB"), (w, "ADJ")})
    lines = [f"{lemma}\t{upos}\t{' '.join(sorted(_lemminflect_forms(lemma, upos)))}\t{_tag_column(lemma, upos)}\n"
             for lemma, upos in sorted(keys)]
    atomic_write_bytes(path, gzip.compress("".join(lines).encode("utf-8"), mtime=0))
    return len(lines)


@lru_cache(maxsize=None)
def _forms(lemma: str, upos: str) -> frozenset[str]:
    """The lemma and its inflections for one part of speech: lemminflect's first (most common) spelling of each
    inflected tag, so variant spellings ("busses") and other parts of speech ("bussed") stay out (auxiliaries keep
    every form: was/were).  Read from the precomputed table when it has the pair."""
    got = _table().get((lemma, upos))
    return got if got is not None else _lemminflect_forms(lemma, upos)


def _tag_column(lemma: str, upos: str) -> str:
    """The table's fourth column: TAG=form for every tag lemminflect inflects (first spelling; nouns, verbs and
    adjectives only: the tags derivation edits need)."""
    if upos not in ("NOUN", "VERB", "ADJ"):
        return ""
    table = _lemminflect().getAllInflections(lemma, upos=upos)
    if not table:
        table = _lemminflect().getAllInflectionsOOV(lemma, upos=upos)
    return " ".join(f"{tag}={forms[0].lower()}" for tag, forms in sorted(table.items()) if forms)


def _lemminflect_forms(lemma: str, upos: str) -> frozenset[str]:
    out = {lemma}
    table = _lemminflect().getAllInflections(lemma, upos=upos)
    if not table and upos in ("NOUN", "VERB", "ADJ", "ADV"):
        table = _lemminflect().getAllInflectionsOOV(lemma, upos=upos)
    for forms in table.values():
        if forms:  # auxiliaries have truly different forms in one slot (was/were, am/are); others only variants
            out.update(f.lower() for f in (forms if upos == "AUX" else forms[:1]))
    return frozenset(out)


def inflections(lemma: str, pos: str | None = None) -> set[str]:
    """The lemma and its inflections (lemminflect) for a part of speech: noun/verb/adjective/adverb, a CEFR-J tag
    such as "be-verb", None (= noun + verb), or anything else (= no inflection)."""
    w = lemma.lower()
    if pos is None:
        kinds = ["NOUN", "VERB"]
    else:
        u = _UPOS.get(pos.strip().lower())
        kinds = [u] if u else []
    out = {w}
    if not w.replace("'", "").isalpha():
        return out
    for upos in kinds:
        out |= _forms(w, upos)
    return out


# -- CEFR-J / Octanove profiles ------------------------------------------------------------------------------
def _level(level: str) -> int:
    lv = level.strip().upper()
    if lv not in LEVELS:
        raise InputError(f"unknown CEFR level {level!r}", hint="use one of A1, A2, B1, B2, C1, C2")
    return LEVELS.index(lv) + 1


_HYPHEN = re.compile(r"(-)")


def headword_forms(headword: str, pos: str) -> tuple[set[str], set[tuple[str, ...]]]:
    """(single-token forms, multi-token phrases) of one profile entry.

    Slash alternatives ("colour/color", "check-in counter/check-in") are separate headwords; words are tokenized as
    the parser does (hyphens are tokens: "T-shirt" -> t - shirt); a multiword headword inflects its head (the last
    word of a noun, the first of a verb: "bus stops", "looked for") and becomes a phrase."""
    words: set[str] = set()
    phrases: set[tuple[str, ...]] = set()
    for alt in headword.replace("’", "'").split("/"):
        toks = [t for part in alt.strip().lower().split() for t in _HYPHEN.split(part) if t]
        if not toks:
            continue
        if len(toks) == 1:
            words |= inflections(toks[0], pos)
            continue
        u = _UPOS.get(pos.strip().lower())
        head = 0 if u in ("VERB", "AUX") else len(toks) - 1
        for form in inflections(toks[head], pos) if toks[head].isalpha() else {toks[head]}:
            phrases.add(tuple(toks[:head]) + (form,) + tuple(toks[head + 1:]))
    return words, phrases


def _read_profile_rows(lines: Iterable[str], delimiter: str, source: str) -> list[tuple[str, str, int]]:
    reader = csv.DictReader(lines, delimiter=delimiter)
    if not reader.fieldnames or "headword" not in reader.fieldnames or "CEFR" not in reader.fieldnames:
        raise InputError(f"{source}: not a CEFR-J style profile (needs headword and CEFR columns)",
                         hint="use cefrj-vocabulary-profile-1.5.csv, or a plain word list")
    rows = []
    for row in reader:
        lv = (row.get("CEFR") or "").strip().upper()
        hw = (row.get("headword") or "").strip()
        if lv in LEVELS and hw:
            rows.append((hw, (row.get("pos") or "").strip().lower(), LEVELS.index(lv) + 1))
    return rows


@lru_cache(maxsize=1)
def cefrj_entries() -> tuple[tuple[str, str, int], ...]:
    """(headword, pos, level 1..6) of the embedded CEFR-J 1.5 (A1-B2) and Octanove C1/C2 profiles."""
    from importlib.resources import files

    out: list[tuple[str, str, int]] = []
    for name in ("cefrj-vocabulary-profile-1.5.tsv", "octanove-vocabulary-profile-c1c2-1.0.tsv"):
        text = (files("treegram.plugins.vocabgen") / "data" / name).read_text(encoding="utf-8")
        out += _read_profile_rows(text.splitlines(), "\t", name)
    return tuple(out)


def profile_vocabulary(rows: Iterable[tuple[str, str, int]], limit: int, name: str,
                       names: Iterable[str] = (), level: str | None = None) -> Vocabulary:
    words: set[str] = set()
    phrases: set[tuple[str, ...]] = set()
    for hw, pos, lv in rows:
        if lv <= limit:
            w, p = headword_forms(hw, pos)
            words |= w
            phrases |= p
    return Vocabulary(name, words, phrases, names, level=level)


def headwords(level: str, *, cumulative: bool = True) -> list[str]:
    """The embedded profile's single-word headwords at (or up to) a level, sorted (for benchmarks and hints)."""
    lim = _level(level)
    out = set()
    for hw, _pos, lv in cefrj_entries():
        if lv == lim or (cumulative and lv < lim):
            for alt in hw.split("/"):
                alt = alt.strip().lower()
                if alt.isalpha():
                    out.add(alt)
    return sorted(out)


@lru_cache(maxsize=1)
def common_words() -> frozenset[str]:
    """Lowercase forms of the profile's lowercase headwords that are never names (not in PROPER_NAMES, not also
    a capitalized headword such as May or March): a parser's NNP tag on one of them ("your Dictionary") is a
    tagging error, not a name to capitalize."""
    capital = {t.lower() for hw, _p, _l in cefrj_entries() for alt in hw.split("/") for t in alt.split()
               if t[:1].isupper()}
    out: set[str] = set()
    for hw, pos, _lv in cefrj_entries():
        for alt in hw.split("/"):
            alt = alt.strip()
            if alt.isalpha() and alt.islower():
                out |= inflections(alt, pos)
    return frozenset(out - capital - PROPER_NAMES)


def level_of(word: str) -> str | None:
    """The lowest CEFR level at which the embedded profile allows this word form (None: none)."""
    w = word.lower()
    for lim in range(1, 7):
        if w in cefr_vocabulary(LEVELS[lim - 1]).words:
            return LEVELS[lim - 1]
    return None


@lru_cache(maxsize=4096)
def word_forms(word: str, level: str | None = None) -> frozenset[str]:
    """The forms a practised word may take on a sheet: the inflections of the parts of speech the profile lists it
    under at or below `level` (all of them when none is that easy, or level is None): "book" at A1 gives book,
    books (noun, A1), at A2 also booked, booking (verb, A2); a word outside the profile: noun and verb forms."""
    w = word.strip().lower()
    out = {w}
    entries = [(pos, lv) for hw, pos, lv in cefrj_entries() if w in (a.strip().lower() for a in hw.split("/"))]
    if level is not None and level.strip().upper() in LEVELS:
        easy = [(pos, lv) for pos, lv in entries if lv <= _level(level)]
        entries = easy or entries
    found = bool(entries)
    for pos, _lv in entries:
        if w.isalpha():
            out |= inflections(w, pos)
    if not found and w.isalpha():
        out |= inflections(w, None)
    return frozenset(out)


@lru_cache(maxsize=8)
def cefr_vocabulary(level: str) -> Vocabulary:
    """`cefr:LEVEL`: the embedded CEFR-J + Octanove profile up to LEVEL (cumulative), POS-aware inflections, the
    multiword phrases, and PROPER_NAMES."""
    lv = level.strip().upper()
    return profile_vocabulary(cefrj_entries(), _level(level), f"cefr:{lv}", PROPER_NAMES, level=lv)


def read_cefrj(path: str | Path, level: str) -> Vocabulary:
    """Headwords of a CEFR-J style profile csv at or below `level`, with their part of speech's inflections."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: no such CEFR-J vocabulary file", hint="give the path to the profile csv")
    limit = _level(level)
    text = _read_text(path)
    rows = _read_profile_rows(text.splitlines(), "\t" if path.suffix.lower() == ".tsv" else ",", str(path))
    return profile_vocabulary(rows, limit, f"{path.name}@{level.strip().upper()}")


def _read_text(path: Path) -> str:
    """A vocabulary file's text: UTF-8 (BOM stripped), no NUL or other binary control bytes."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror})", hint="check the path and its permissions") from None
    if b"\x00" in data:
        raise InputError(f"{path}: contains NUL bytes (a binary file, or UTF-16 text?)",
                         hint="give a plain UTF-8 text file with one word per line")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InputError(f"{path}: not UTF-8 text", hint="save the word list as UTF-8") from None
    bad = next((ch for ch in text if ord(ch) < 32 and ch not in "\t\n\r\f\v"), None)
    if bad is not None:
        raise InputError(f"{path}: contains control character U+{ord(bad):04X}",
                         hint="give a plain UTF-8 text file with one word per line")
    return text


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
        for line in _read_text(p).splitlines():
            line = line.split("#", 1)[0]
            words.update(t.lower() for t in line.split())
    return Vocabulary(path.name, words)


def cefrpy_levels() -> dict[str, int]:
    """word -> CEFR level 1..6 from PyPI `cefrpy` (its easiest part of speech), cached on disk."""
    try:
        import cefrpy
        from cefrpy import CEFRAnalyzer
    except ImportError:
        raise InputError("the cefrpy:LEVEL vocabularies need the `cefrpy` package",
                         hint="pip install cefrpy==1.0.3, or give a word-list file") from None
    version = getattr(cefrpy, "__version__", "") or _dist_version("cefrpy")
    cache = user_cache_dir() / f"cefrpy-{version}-minpos-levels.tsv"
    if cache.is_file():
        out = {}
        try:
            text = cache.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):  # a damaged cache is rebuilt, never a traceback
            text = ""
        for line in text.split("\n"):
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
def cefrpy_vocabulary(level: str) -> Vocabulary:
    """`cefrpy:LEVEL` (opt-in only): cefrpy words at their easiest part of speech, inflected as noun and verb."""
    limit = _level(level)
    words: set[str] = set()
    for w, lv in cefrpy_levels().items():
        if lv <= limit:
            words |= inflections(w)
    return Vocabulary(f"cefrpy:{level.strip().upper()}", words)


_SPEC_LEVEL = re.compile(r"^(?P<path>.+\.csv)@(?P<level>[A-Ca-c][12])$")


def parse_vocab_spec(spec: str, level: str | None = None) -> Vocabulary:
    """A Vocabulary from a spec string (see the module doc); errors name the spec and the fix."""
    if not isinstance(spec, str) or not spec.strip():
        raise InputError("empty vocabulary spec", hint="use cefr:A1, cefrpy:A1, words:a,b,c, or a word-list file")
    spec = spec.strip()
    if "\x00" in spec:
        raise InputError("the vocabulary spec contains a NUL byte", hint="use cefr:A1, words:a,b,c, or a file path")
    if level is not None and not (spec.lower().endswith(".csv") and not _SPEC_LEVEL.match(spec)):
        raise InputError(f"--level {level} applies to a CEFR-J csv vocabulary (FILE.csv) only, not to {spec!r}",
                         hint="write the level in the spec (e.g. --vocab cefr:A2, FILE.csv@A2) and drop --level")
    if spec.lower().startswith("cefr:"):
        vocab = cefr_vocabulary(spec[5:])
    elif spec.lower().startswith("cefrpy:"):
        vocab = cefrpy_vocabulary(spec[7:])
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


# -- the words a sheet practises ----------------------------------------------------------------------------------
@lru_cache(maxsize=1)
def _form_levels() -> dict[str, int]:
    """word form or headword (lowercase) -> the lowest level (1..6) a profile entry brings it at: headwords
    directly, inflected forms through the precomputed inflection table (no lemminflect start-up)."""
    head: dict[tuple[str, str | None], int] = {}
    out: dict[str, int] = {}
    for hw, pos, lv in cefrj_entries():
        for alt in hw.split("/"):
            a = alt.strip().lower()
            out[a] = min(out.get(a, 9), lv)
            u = _UPOS.get(pos)
            if u:
                head[(a, u)] = min(head.get((a, u), 9), lv)
    for (lemma, upos), forms in _table().items():
        lv = head.get((lemma, upos))
        if lv is not None:
            for f in forms:
                out[f] = min(out.get(f, 9), lv)
    return out


def _profile_level_of(word: str) -> str | None:
    """The lowest level any profile entry lists this word at, as a headword or one of its forms."""
    lv = _form_levels().get(word.lower())
    return LEVELS[lv - 1] if lv else None


def practice_word_problems(words: Iterable[str], vocab: Vocabulary) -> list[str]:
    """One line per practised word the vocabulary does not have: above its level (with the CEFR-J level it
    belongs to) or unknown (with "did you mean" for a likely misspelling).  Empty = every word is in."""
    import difflib

    out = []
    pool = None
    for w in words:
        if w.lower() in vocab.words or (" " in w and tuple(w.lower().split()) in vocab.phrases):
            continue
        lv = _profile_level_of(w)
        if lv is not None:
            where = f"above {vocab.name}" if vocab.level else f"not in the vocabulary {vocab.name}"
            out.append(f"{w}: CEFR-J says {lv}, {where}")
            continue
        if pool is None:
            pool = sorted({x for x in vocab.words if x.isalpha()} | set(headwords("C2")))
        close = difflib.get_close_matches(w.lower(), pool, n=3, cutoff=0.75)
        hint = ""
        if close:
            hint = " (did you mean " + " or ".join(
                c + (f", {_profile_level_of(c)}" if c not in vocab.words and _profile_level_of(c) else "")
                for c in close) + "?)"
        out.append(f"{w}: not in CEFR-J nor in {vocab.name}{hint}")
    return out
