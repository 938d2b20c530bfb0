"""Reading a teacher's original and corrected essays and pairing their sentences.

ORIGINAL and CORRECTED are either two files or two directories.  Directories pair files by name (the student is
the file name without extension).  A file holds one essay, or several, each starting with a header line
``## NAME`` (the student); without headers the student is the original's file name.  Both sides must name the same students.

Alignment (``align``):
* ``lines`` -- sentence-aligned input: the i-th non-blank line of the original goes with the i-th of the
  corrected essay (the counts must agree);
* ``text`` -- whole texts: both sides are split into sentences and aligned by dynamic programming (text.py), so a
  teacher may split, join, add or delete sentences;
* ``auto`` (default) -- ``lines`` when both sides have the same number of lines, each pair sharing words,
  otherwise ``text``; inside an aligned pair of lines the sentences are aligned again, so paragraphs work too.
"""

from __future__ import annotations

import re
from pathlib import Path

import attrs

from treegram.errors import InputError
from treegram.plugins.corrections.text import _overlap_cost, align_sentences, sentences, tokenize

_HEADER = re.compile(r"^##\s+(.+?)\s*$")


@attrs.frozen
class AlignedPair:
    student: str
    index: int
    original: str
    corrected: str


def _read(path: Path) -> str:
    if not path.exists():
        raise InputError(f"{path}: file not found", hint="check the path")
    if path.is_dir():
        raise InputError(f"{path}: a directory, but the other side is a file", hint="pass two files or two directories")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text (invalid byte at offset {exc.start})",
                         hint="save the essay as UTF-8 (e.g. `iconv -f latin1 -t utf-8`)") from None
    text = text.lstrip("\ufeff")
    if not text.strip():
        raise InputError(f"{path}: the file is empty", hint="pass the essay text")
    return text


def _essays(path: Path, default: str) -> dict[str, str]:
    text = _read(path)
    out: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        m = _HEADER.match(line)
        if m:
            current = m.group(1)
            if current in out:
                raise InputError(f"{path}: student {current!r} appears twice", hint="one '## NAME' block each")
            out[current] = []
        else:
            if current is None:
                if not line.strip():
                    continue
                current = default
                out[current] = []
            out[current].append(line)
    return {k: "\n".join(v) for k, v in out.items()}


def read_essays(original: Path, corrected: Path) -> list[tuple[str, str, str]]:
    """[(student, original text, corrected text)] in the original's order."""
    original, corrected = Path(original), Path(corrected)
    for p in (original, corrected):
        if not p.exists():
            raise InputError(f"{p}: file not found", hint="check the path")
    if original.is_dir() != corrected.is_dir():
        raise InputError(f"{original} and {corrected}: one is a directory, the other a file",
                         hint="pass two files or two directories")
    if original.is_dir():
        fa = {p.name: p for p in sorted(original.iterdir()) if p.is_file() and not p.name.startswith(".")}
        fb = {p.name: p for p in sorted(corrected.iterdir()) if p.is_file() and not p.name.startswith(".")}
        if not fa:
            raise InputError(f"{original}: no essay files in the directory", hint="one text file per student")
        missing = sorted(set(fa) ^ set(fb))
        if missing:
            raise InputError(f"essays without a counterpart: {', '.join(missing[:5])}",
                             hint=f"{original} and {corrected} must hold files of the same names")
        out = []
        for name in fa:
            a, b = _read(fa[name]), _read(fb[name])
            out.append((Path(name).stem, a, b))
        return out
    ea, eb = _essays(original, original.stem), _essays(corrected, original.stem)
    if list(ea) != list(eb):
        only_a = [s for s in ea if s not in eb]
        only_b = [s for s in eb if s not in ea]
        if only_a or only_b:
            raise InputError(f"the files name different students (only in {original.name}: {only_a[:3]}, "
                             f"only in {corrected.name}: {only_b[:3]})", hint="use the same '## NAME' headers")
    return [(s, ea[s], eb[s]) for s in ea]


def _lines(text: str) -> list[str]:
    return [ln.strip() for ln in text.splitlines() if ln.strip()]


def _align_text(a: str, b: str) -> list[tuple[str, str]]:
    sa, sb = sentences(a), sentences(b)
    out = []
    for ia, ib in align_sentences(sa, sb):
        out.append((" ".join(sa[i] for i in ia), " ".join(sb[j] for j in ib)))
    return out


def align_essay(student: str, original: str, corrected: str, align: str = "auto") -> list[AlignedPair]:
    la, lb = _lines(original), _lines(corrected)
    if not la:
        raise InputError(f"student {student}: the original essay is empty", hint="pass the essay text")
    if not lb:
        raise InputError(f"student {student}: the corrected essay is empty", hint="pass the corrected text")
    if align == "lines":
        if len(la) != len(lb):
            raise InputError(f"student {student}: the original has {len(la)} sentences (lines) and the corrected "
                             f"version {len(lb)}", hint="sentence-aligned input needs one sentence per line on "
                                                        "both sides; or use --align text to let treegram align them")
        raw = list(zip(la, lb))
    elif align == "text":
        raw = _align_text(original, corrected)
    else:
        if len(la) == len(lb) and all(_overlap_cost(tokenize(a), tokenize(b)) < 0.75 for a, b in zip(la, lb)):
            raw = [p for a, b in zip(la, lb) for p in _align_text(a, b)]
        else:
            raw = _align_text(original, corrected)
    words_a = [w for a, _ in raw for w in tokenize(a)]
    words_b = [w for _, b in raw for w in tokenize(b)]
    if _overlap_cost(words_a, words_b) > 0.7:
        raise InputError(f"student {student}: the corrected text shares few words with the original",
                         hint="check that ORIGINAL and CORRECTED are the same essay (and the same student)")
    return [AlignedPair(student, k, a, b) for k, (a, b) in enumerate(raw)]
