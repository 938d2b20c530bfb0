"""Every format a teacher imports: a `Sheet` (treegram.exercises) as Markdown, printable HTML, PDF, Moodle GIFT,
Moodle XML, an Anki deck (.apkg) or JSON -- the export formats the vocabgen plugin registers
(``register_export_formats``; `builtin_formats`).  Each item is rendered through its exercise kind
(`treegram.exercises.ExerciseKind`: ``question``, ``key_line``, ``html``, ``anki``, ``gift``, ``moodle_xml``), so
a plugin's kind appears in every format here.

* ``html``: one self-contained page with print CSS (A4 margins; the answer key starts on a new printed page).
* ``pdf``: PyPI `fpdf2`.  Latin text uses the PDF core font Helvetica (no font file needed); characters outside
  its Latin-1 set are transliterated (accents dropped, curly quotes straightened).  Text in another script (the
  graded corpus's Japanese reference translations) needs a font with those glyphs: when the optional package
  `noto-cjk-sans-jp-regular` (extra ``treegram[pdf-cjk]``, Noto Sans CJK JP, SIL OFL) is installed, a sheet
  with such text embeds a subset of it for all its text; otherwise such a translation is replaced by a note pointing to the HTML
  or Markdown sheet, never by question marks.
* ``gift``: Moodle GIFT: cloze = missing word short answer, choice = missing word multiple choice, reorder =
  short answer (the whole sentence), translate = essay with the reference translation as feedback.  GIFT's
  special characters ``~ = # { } :`` and backslash are escaped, and text Moodle renders as HTML (question text,
  options, feedback) has ``& < >`` as entities (`GiftEscape`).
* ``moodle-xml``: the same questions as Moodle XML (cloze items use the embedded-answers "cloze" type).
* ``anki``: PyPI `genanki`; one note per item, the note GUID derived from the item (kind, word, sentence), so
  re-importing an updated deck updates its notes instead of duplicating them; fixed deck and model ids.
* ``json``: `Sheet.to_json()`.
"""

from __future__ import annotations

import html
import json
import os
import re
import tempfile
import unicodedata
import zlib
from pathlib import Path
from xml.etree import ElementTree as ET

from treegram.errors import InputError, TreegramError
from treegram.exercises import ExportFormat, Item, Sheet, get_format, get_kind, plugin_failure, third_party

from treegram.plugins.vocabgen.exercises import BLANK

LETTERS = "abcdefgh"


def render(sheet: Sheet, fmt: str) -> bytes:
    """The sheet in the registered export format `fmt`, as bytes (text formats are UTF-8)."""
    spec = get_format(fmt)
    try:
        return spec.to_bytes(sheet)
    except TreegramError:
        raise
    except Exception as exc:  # a plugin's format or kind failing is its bug: name it, no traceback
        plugins = third_party(sheet.kinds(), [spec.name])
        if not plugins:
            raise
        raise plugin_failure(exc, plugins, f"writing the {spec.name} sheet") from exc


#: the line a pupil writes on (every format that prints: md, html, pdf)
NAME_DATE = "Name: ______________________________   Date: ______________"


def names_line(sheet: Sheet) -> str:
    """The proper names the sentences use (vocab.PROPER_NAMES), so a teacher can introduce them."""
    return f"Names on this sheet: {', '.join(sheet.names)}"


def _source(i: Item) -> str:
    if i.source == "corpus":
        return "corpus sentence" + (f" ({i.provenance})" if i.provenance else "")
    return "generated sentence" + (f" ({i.provenance})" if i.provenance else "")


# -- text formats -------------------------------------------------------------------------------------------------
def to_json(sheet: Sheet) -> str:
    return json.dumps(sheet.to_json(), ensure_ascii=False, indent=2) + "\n"


_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>&~])")
_LINE_BREAKS = re.compile(r"[\r\n\v\f\x1c-\x1e\x85\u2028\u2029]+")


def md_escape(text: str) -> str:
    """Text for a Markdown sheet: the characters that start Markdown markup or raw HTML (backslash, backquote,
    ``* _ [ ] < > & ~``) backslash-escaped (CommonMark renders an escaped ASCII punctuation character as itself),
    so ``<script>`` or ``*word*`` in a sentence prints as written and runs nothing; a line break becomes a space
    (it could start a block); the blank "_____" stays as it is."""
    text = _LINE_BREAKS.sub(" ", str(text))
    return BLANK.join(_MD_SPECIAL.sub(r"\\\1", part) for part in text.split(BLANK))


def to_markdown(sheet: Sheet) -> str:
    m = md_escape
    lines = [f"# {m(sheet.title)}", "", NAME_DATE, "", f"Words: {m(', '.join(sheet.words))}", ""]
    if sheet.names:
        lines += [m(names_line(sheet)), ""]
    for kind in sheet.kinds():
        spec = get_kind(kind)
        if len(sheet.kinds()) > 1:
            lines += [f"## {m(spec.title)}", ""]
        lines += [m(spec.instructions), ""]
        if sheet.section_box(kind):
            lines += [f"Word box: {m(' · '.join(sheet.section_box(kind)))}", ""]
        for i in sheet.section(kind):
            lines.append(f"{i.number}. {m(i.question())}")
            if i.choices:
                lines.append("   " + "   ".join(f"({LETTERS[k]}) {m(c)}" for k, c in enumerate(i.choices)))
        lines.append("")
    lines += ["## Answer key", ""]
    for i in sorted(sheet.items, key=lambda x: x.number):
        lines.append(f"{i.number}. {m(i.key_line())} [{m(_source(i))}]")
    return "\n".join(lines) + "\n"


_CSS = """
body{font-family:"Helvetica Neue",Arial,"Noto Sans","Noto Sans CJK JP",sans-serif;max-width:44em;margin:2em auto;
line-height:1.7;color:#111;padding:0 1em}
h1{font-size:1.5em;margin-bottom:.2em} h2{font-size:1.2em;margin-top:1.4em}
.meta{color:#555;font-size:.9em} .instructions{font-weight:bold}
ol.items li{margin:.55em 0;break-inside:avoid;page-break-inside:avoid} .choices{display:block;margin-left:1em} .choices span{margin-right:1.6em}
.tile{display:inline-block;border:1px solid #444;border-radius:4px;padding:0 .45em;margin:.1em .25em .1em 0}
.wordbox{border:1px solid #444;padding:.4em .8em;display:inline-block}
.source{color:#666;font-size:.85em}
.namedate{margin:.6em 0 1em} .namedate .line{display:inline-block;width:16em;border-bottom:1px solid #444;margin-right:2em}
.namedate .line.short{width:8em}
ol.answers li{text-align:left}
.key{break-before:page;page-break-before:always}
@page{size:A4;margin:18mm}
@media print{body{margin:0;max-width:none} .noprint{display:none}}
"""


def html_body(sheet: Sheet, *, key: bool = True) -> str:
    """The sheet (and its key) as HTML body markup: `to_html` wraps it in a page, the web page embeds it."""
    e = html.escape
    out = [f"<h1>{e(sheet.title)}</h1>",
           '<p class="namedate">Name: <span class="line"></span> Date: <span class="line short"></span></p>',
           f'<p class="meta">Words: {e(", ".join(sheet.words))}</p>']
    if sheet.names:
        out.append(f'<p class="meta">{e(names_line(sheet))}</p>')
    for kind in sheet.kinds():
        spec = get_kind(kind)
        if len(sheet.kinds()) > 1:
            out.append(f"<h2>{e(spec.title)}</h2>")
        out.append(f'<p class="instructions">{e(spec.instructions)}</p>')
        if sheet.section_box(kind):
            out.append(f'<p class="wordbox"><b>Word box:</b> {e(" · ".join(sheet.section_box(kind)))}</p>')
        out.append('<ol class="items">')
        for i in sheet.section(kind):
            body = spec.html(i, e)
            if i.choices:
                body += '<span class="choices">' + "".join(
                    f"<span>({LETTERS[k]}) {e(c)}</span>" for k, c in enumerate(i.choices)) + "</span>"
            out.append(f'<li value="{i.number}" data-item="{i.number}">{body}</li>')
        out.append("</ol>")
    if key:
        out.append('<section class="key"><h2>Answer key</h2><ol class="answers">')
        for i in sorted(sheet.items, key=lambda x: x.number):
            out.append(f'<li value="{i.number}">{e(i.key_line())} <span class="source">[{e(_source(i))}]</span></li>')
        out.append("</ol></section>")
    return "\n".join(out)


def to_html(sheet: Sheet) -> str:
    return ('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>' + html.escape(sheet.title)
            + f"</title><style>{_CSS}</style></head><body>\n" + html_body(sheet) + "\n</body></html>\n")


# -- GIFT -----------------------------------------------------------------------------------------------------------
def gift_escape(text: str) -> str:
    """Escape GIFT's special characters (~ = # { } : and backslash); newlines become spaces.  For plain text:
    question names and short-answer answers (Moodle compares those with what the pupil types)."""
    out = []
    for ch in " ".join(str(text).split()):
        out.append("\\" + ch if ch in "~=#{}:\\" else ch)
    return "".join(out)


class GiftEscape:
    """GIFT escaping for a kind's `gift` method.  Called on text Moodle renders as HTML -- question text,
    multiple-choice options, feedback (GIFT's default text format is Moodle's auto-format, which passes HTML
    through) -- it writes ``& < >`` as HTML entities and then escapes GIFT's specials, so ``<script>`` in a
    sentence shows as text; ``answer(text)`` escapes only GIFT's specials, for short-answer answers."""

    def __call__(self, text: str) -> str:
        return gift_escape(html.escape(str(text), quote=False))

    @staticmethod
    def answer(text: str) -> str:
        return gift_escape(text)


def _split_blank(prompt: str) -> tuple[str, str]:
    before, _, after = prompt.partition(BLANK)
    return before, after


def _gift_join(before: str, ans: str, after: str) -> str:
    """Text, answer set and text joined as the sentence reads: no space before punctuation that follows the blank
    ("above {=water}." not "above {=water} ."), none after an opening bracket or quote."""
    left = "" if not before else before + ("" if before[-1] in "(\"'" else " ")
    right = "" if not after else ("" if after[0] in ".,!?;:)'\"" or after.startswith(("n't", "'s")) else " ") + after
    return (left + ans + right).rstrip()


def gift_blank(item: Item, answers: str, escape) -> str:
    """A missing-word question: the item's prompt with its first blank replaced by the GIFT answer set `answers`
    (GIFT has one answer slot: a repeated blank stays "_____")."""
    before, after = _split_blank(item.prompt)
    return _gift_join(escape(before.rstrip()), answers, escape(after.lstrip()))


def to_gift(sheet: Sheet) -> str:
    g, text = gift_escape, GiftEscape()
    category = "".join(ch if ch.isalnum() or ch in " ()-_," else " " for ch in sheet.title).strip()
    out = [f"// {' '.join(sheet.title.split())} (treegram)", f"$CATEGORY: $course$/treegram/{' '.join(category.split())}",
           ""]
    for i in sorted(sheet.items, key=lambda x: x.number):
        name = f"::{g(f'{i.number:02d} {i.kind} {i.word} {i.uid}')}::"
        out.append(name + i.spec.gift(i, text))
        out.append("")
    return "\n".join(out)


# -- Moodle XML -------------------------------------------------------------------------------------------------
def cloze_escape(text: str) -> str:
    """Escape characters that end or split an embedded answer in Moodle's cloze syntax."""
    return "".join("\\" + ch if ch in "}#~/\"\\" else ch for ch in text)


class MoodleQuiz:
    """A Moodle XML quiz being built: a kind's ``moodle_xml(item, quiz)`` calls ``add`` and ``answer``."""

    def __init__(self, title: str):
        self.root = ET.Element("quiz")
        cat = ET.SubElement(self.root, "question", type="category")
        ET.SubElement(ET.SubElement(cat, "category"), "text").text = f"$course$/treegram/{title}"

    def add(self, qtype: str, item: Item, text: str) -> ET.Element:
        """A question of Moodle type `qtype` with the HTML question `text`, named after the item, with its key
        line as general feedback."""
        q = ET.SubElement(self.root, "question", type=qtype)
        ET.SubElement(ET.SubElement(q, "name"), "text").text = f"{item.number:02d} {item.kind} {item.word} {item.uid}"
        qt = ET.SubElement(q, "questiontext", format="html")
        ET.SubElement(qt, "text").text = text
        ET.SubElement(q, "defaultgrade").text = "1"
        ET.SubElement(q, "penalty").text = "0.3333333"
        ET.SubElement(q, "hidden").text = "0"
        fb = ET.SubElement(q, "generalfeedback", format="html")
        ET.SubElement(fb, "text").text = html.escape(item.key_line())
        return q

    def answer(self, q: ET.Element, text: str, fraction: int) -> None:
        a = ET.SubElement(q, "answer", fraction=str(fraction), format="plain_text")
        ET.SubElement(a, "text").text = text
        ET.SubElement(ET.SubElement(a, "feedback", format="html"), "text").text = ""


def to_moodle_xml(sheet: Sheet) -> str:
    quiz = MoodleQuiz(sheet.title)
    for i in sorted(sheet.items, key=lambda x: x.number):
        i.spec.moodle_xml(i, quiz)
    ET.indent(quiz.root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(quiz.root, encoding="unicode") + "\n"


# -- Anki ---------------------------------------------------------------------------------------------------------
ANKI_MODEL_ID = 1_607_392_319  # fixed: re-imports map onto the same note type
_ANKI_CSS = ".card{font-family:arial;font-size:22px;text-align:center;color:black;background:white}" \
            ".src{font-size:14px;color:#666}.tile{border:1px solid #444;border-radius:4px;padding:0 .3em;margin:0 .2em}"


def _anki_front(i: Item) -> str:
    e = html.escape
    head = f"<div class=kind>{e(i.spec.instructions)}</div><br>"
    body = i.spec.anki(i, e)
    if i.choices:
        body += "<br><br>" + "<br>".join(f"({LETTERS[k]}) {e(c)}" for k, c in enumerate(i.choices))
    return head + body


def to_anki(sheet: Sheet) -> bytes:
    try:
        import genanki
    except ImportError:
        raise InputError("the anki format needs the `genanki` package", hint="pip install genanki==0.13.1") from None
    model = genanki.Model(
        ANKI_MODEL_ID, "treegram exercise",
        fields=[{"name": "Front"}, {"name": "Back"}, {"name": "Source"}, {"name": "ItemId"}],
        templates=[{"name": "Card 1", "qfmt": "{{Front}}",
                    "afmt": "{{FrontSide}}<hr id=answer>{{Back}}<br><div class=src>{{Source}}</div>"}],
        css=_ANKI_CSS, sort_field_index=3)
    deck = genanki.Deck(zlib.crc32(("treegram:" + sheet.title).encode()) & 0x7FFFFFFF, sheet.title)
    for i in sorted(sheet.items, key=lambda x: x.number):
        deck.add_note(genanki.Note(model=model, fields=[_anki_front(i), html.escape(i.key_line()),
                                                        html.escape(_source(i)), i.uid],
                                   guid=genanki.guid_for("treegram", i.uid), tags=["treegram", i.kind]))
    with tempfile.TemporaryDirectory(prefix="treegram-anki-") as tmp:
        path = Path(tmp) / "deck.apkg"
        genanki.Package(deck).write_to_file(str(path))
        return path.read_bytes()


# -- PDF ----------------------------------------------------------------------------------------------------------
def cjk_font_path() -> Path | None:
    """Noto Sans CJK JP from the optional package `noto-cjk-sans-jp-regular` (None when not installed)."""
    try:
        import noto_cjk_sans_jp_regular as pkg
    except ImportError:
        return None
    p = Path(str(pkg.FONT_PATH))
    return p if p.is_file() else None


_STRAIGHT = {"‘": "'", "’": "'", "“": '"', "”": '"', "–": "-", "—": "-", "…": "...", "·": "-", "\u00a0": " ",
             "Ł": "L", "ł": "l", "Đ": "D", "đ": "d", "Œ": "OE", "œ": "oe", "ı": "i", "Ħ": "H", "ħ": "h"}


def latin1(text: str) -> str | None:
    """`text` in Latin-1 for the core fonts (quotes straightened, accents outside Latin-1 dropped); None when it
    has letters of another script (it cannot be written without a font that has them)."""
    text = "".join(_STRAIGHT.get(ch, ch) for ch in text)
    try:
        text.encode("latin-1")
        return text
    except UnicodeEncodeError:
        pass
    out = []
    for ch in text:
        try:
            ch.encode("latin-1")
            out.append(ch)
            continue
        except UnicodeEncodeError:
            pass
        base = "".join(c for c in unicodedata.normalize("NFKD", ch) if not unicodedata.combining(c))
        try:
            base.encode("latin-1")
        except UnicodeEncodeError:
            return None
        out.append(base)
    return "".join(out)


def to_pdf(sheet: Sheet) -> bytes:
    try:
        from fpdf import FPDF
    except ImportError:
        raise InputError("the pdf format needs the `fpdf2` package", hint="pip install fpdf2==2.8.9") from None
    pdf = FPDF(format="A4")
    pdf.set_margins(18, 18, 18)
    pdf.set_auto_page_break(True, margin=18)
    pdf.set_title(latin1(sheet.title) or "treegram exercises")
    pdf.set_creator("treegram")
    texts = [sheet.title, *sheet.words] + [t for i in sheet.items for t in (i.question(), i.key_line(), *i.choices)]
    # the CJK font only when some text needs it (loading and subsetting it takes seconds)
    font = cjk_font_path() if any(latin1(t) is None for t in texts) else None
    if font is not None:
        pdf.add_font("body", "", str(font))
        family, bold = "body", ""
    else:
        family, bold = "helvetica", "B"

    def text(s: str, fallback: str = "[text in another script: see the HTML or Markdown sheet, or install "
                                     "treegram[pdf-cjk]]") -> str:
        if font is not None:
            return s
        t = latin1(s)
        return t if t is not None else fallback

    def para(s: str, size: float = 11, style: str = "", gap: float = 1.5, indent: float = 0,
             dry: bool = False) -> float:
        """Write a left-aligned paragraph (never justified: a justified key line stretches "1. Because      the");
        with `dry` only measure its height (mm, gap included)."""
        pdf.set_font(family, style if font is None else "", size)
        if dry:
            h = pdf.multi_cell(pdf.epw - indent, size * 0.55, text(s), align="L", dry_run=True, output="HEIGHT")
            return float(h) + gap
        pdf.set_x(pdf.l_margin + indent)
        pdf.multi_cell(pdf.epw - indent, size * 0.55, text(s), align="L", new_x="LMARGIN", new_y="NEXT")
        pdf.ln(gap)
        return 0.0

    def block(parts: list[tuple]) -> None:
        """Paragraphs that stay on one page (an item's stem and its options): a new page first when they do not
        fit on what is left of this one."""
        need = sum(para(*p[:-1], **p[-1], dry=True) for p in parts)
        if pdf.get_y() + need > pdf.page_break_trigger and need < pdf.eph:
            pdf.add_page()
        for p in parts:
            para(*p[:-1], **p[-1])

    pdf.add_page()
    para(sheet.title, 16, bold, 2)
    para(NAME_DATE, 11, "", 3)
    para(f"Words: {', '.join(sheet.words)}", 10, "", 1.5 if sheet.names else 3)
    if sheet.names:
        para(names_line(sheet), 10, "", 3)
    for kind in sheet.kinds():
        spec = get_kind(kind)
        head = []
        if len(sheet.kinds()) > 1:
            head.append((spec.title, 13, bold, 1, {}))
        head.append((spec.instructions, 11, bold, 2, {}))
        if sheet.section_box(kind):
            head.append(("Word box: " + "  -  ".join(sheet.section_box(kind)), 11, "", 3, {}))
        for n, i in enumerate(sheet.section(kind)):
            parts = [(f"{i.number}.  {i.question()}", 12, "", 0.5 if i.choices else 3, {})]
            if i.choices:
                parts.append(("      ".join(f"({LETTERS[k]}) {c}" for k, c in enumerate(i.choices)), 11, "", 3,
                              {"indent": 6}))
            block(head + parts if n == 0 else parts)  # a section title never ends a page alone
    pdf.add_page()
    para("Answer key", 15, bold, 3)
    for i in sorted(sheet.items, key=lambda x: x.number):
        block([(f"{i.number}.  {i.key_line()}", 11, "", 0.2, {}), (_source(i), 8, "", 2, {"indent": 6})])
    return bytes(pdf.output())


# -- writing ------------------------------------------------------------------------------------------------------
def write_output(data: bytes, out: str, fmt: str, stdout=None) -> str | None:
    """Write rendered `data` to the file `out` (atomically) or to stdout ("-"); returns the path written or None.

    A missing folder is an error (nothing is created outside what the user named); binary formats refuse a
    terminal.
    """
    import sys

    spec = get_format(fmt)
    binary, ext = spec.binary, spec.extension
    if out == "-":
        stream = stdout or sys.stdout
        if binary and hasattr(stream, "isatty") and stream.isatty():
            raise InputError(f"--format {fmt} is a binary file and stdout is a terminal",
                             hint=f"give --out FILE{ext}, or redirect: > sheet{ext}")
        stream.flush()
        buf = getattr(stream, "buffer", None)
        if buf is not None:
            buf.write(data)
            buf.flush()
        else:
            stream.write(data.decode("utf-8") if not binary else data.decode("latin-1"))
        return None
    path = Path(out)
    if path.is_dir():
        raise InputError(f"--out {out} is a folder", hint=f"name a file, e.g. {path / ('sheet' + ext)}")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise InputError(f"--out {out}: the folder {parent} does not exist",
                         hint=f"create it first (mkdir -p {parent}) or write somewhere else")
    if not os.access(parent, os.W_OK):
        raise InputError(f"--out {out}: the folder {parent} is not writable", hint="choose another folder")
    from treegram.io import atomic_write_bytes

    atomic_write_bytes(path, data)
    return str(path)


def builtin_formats() -> list[ExportFormat]:
    """The formats the vocabgen plugin registers (``register_export_formats``)."""
    return [
        ExportFormat("md", ".md", to_markdown, media_type="text/markdown; charset=utf-8", help="md", order=10),
        ExportFormat("html", ".html", to_html, media_type="text/html; charset=utf-8", help="html (printable)",
                     order=20),
        ExportFormat("pdf", ".pdf", to_pdf, binary=True, media_type="application/pdf", help="pdf", order=30),
        ExportFormat("gift", ".gift.txt", to_gift, help="gift (Moodle)", order=40),
        ExportFormat("moodle-xml", ".xml", to_moodle_xml, media_type="application/xml; charset=utf-8",
                     help="moodle-xml (Moodle)", order=50),
        ExportFormat("anki", ".apkg", to_anki, binary=True, media_type="application/octet-stream",
                     help="anki (.apkg)", order=60),
        ExportFormat("json", ".json", to_json, media_type="application/json; charset=utf-8", help="json", order=70),
    ]
