"""From a revision's text to its prose sentences (Yamangil & Nelken 2008, section 2: "split each revision into a
list of its sentences").

Two content models:

* ``wikitext`` (Wikipedia): parsed with `mwparserfromhell`; headings, templates, tables, references and other
  non-formatting tags, comments, file/category/interlanguage links are removed, ordinary links keep their text,
  external links keep their title, and list, indentation and table lines are dropped before parsing.
* anything else (``text``; the PEP history is reStructuredText or plain text): the RFC-822 header block, section
  titles and their underlines, directives, indented blocks (literal code, block quotes, field bodies), tables,
  list items, footnotes and comments are dropped; inline markup (``**strong**``, ``*emphasis*``, ````literal````,
  ``:role:`x```, ```link <url>`_``) keeps its text.

What remains is split into paragraphs (blank lines), and paragraphs into sentences with a rule-based splitter
(sentence-final punctuation followed by a capital, with common abbreviations protected): a statistical splitter
(spaCy, Punkt) would be more careful but is far too slow for hundreds of millions of characters.  Tokens (for the
deletion test) are words and punctuation marks, Penn-Treebank-like.
"""

from __future__ import annotations

import re

import mwparserfromhell
from mwparserfromhell import nodes as mwnodes

# -- wikitext --------------------------------------------------------------------------------------------------
_WIKI_LINE_DROP = re.compile(r"^\s*(?:[*#:;|!]|\{\||\|\}|=|----)")
_FORMAT_TAGS = {"b", "i", "u", "em", "strong", "small", "big", "sup", "sub", "span", "abbr", "s", "del", "ins"}
_NON_TEXT_LINK = re.compile(r"^\s*:?\s*(?:file|image|category|media|[a-z]{2,3}(?:-[a-z]+)?)\s*:", re.I)


def strip_wikitext(text: str) -> list[str]:
    """Paragraphs of prose of a wikitext revision (markup removed, one string per paragraph)."""
    lines = [ln for ln in text.split("\n") if not _WIKI_LINE_DROP.match(ln)]
    code = mwparserfromhell.parse("\n".join(lines))
    for node in list(code.nodes):
        if isinstance(node, (mwnodes.Heading, mwnodes.Template, mwnodes.Comment, mwnodes.Argument)):
            _remove(code, node)
        elif isinstance(node, mwnodes.Tag):
            if node.wiki_markup is None and str(node.tag).strip().lower() not in _FORMAT_TAGS:
                _remove(code, node)  # <ref>, <table>, <math>, <gallery>, <pre>, ...
        elif isinstance(node, mwnodes.Wikilink) and _NON_TEXT_LINK.match(str(node.title)):
            _remove(code, node)
        elif isinstance(node, mwnodes.ExternalLink):
            _replace(code, node, str(node.title) if node.title else "")
    plain = code.strip_code(normalize=True, collapse=True)
    return _paragraphs(plain.replace("\xa0", " "))


def _remove(code, node) -> None:
    try:
        code.remove(node)
    except ValueError:  # already gone with an enclosing node
        pass


def _replace(code, node, value: str) -> None:
    try:
        code.replace(node, value)
    except ValueError:
        pass


# -- reStructuredText / plain text -----------------------------------------------------------------------------
_HEADER_FIELD = re.compile(r"^[A-Za-z][A-Za-z-]*:\s")
_UNDERLINE = re.compile(r"^\s*([=\-~^\"'`#*+_.:<>])\1{2,}\s*$")
_LIST_ITEM = re.compile(r"^(?:[-*+\u2022]\s|\(?(?:\d+|[a-zA-Z]|[ivxIVX]+|#)[.)]\s)")
_TABLE = re.compile(r"^\s*(?:\+[-=+]+\+|[|+].*[|+]\s*$|=+(?:\s+=+)+\s*$)")
_EXPLICIT = re.compile(r"^\.\.(?:\s|$)")  # directives, comments, footnotes, link targets
_FIELD = re.compile(r"^:[^:`]+:(?:\s|$)")
_ROLE = re.compile(r":[A-Za-z0-9_.+-]+:`([^`]*)`")
_LINK = re.compile(r"`([^`<]*?)\s*<[^>`]*>`_{1,2}")
_REF = re.compile(r"`([^`]+)`_{1,2}")
_LITERAL = re.compile(r"``(.+?)``")
_INTERP = re.compile(r"`([^`]+)`")
_STRONG = re.compile(r"\*\*(\S(?:.*?\S)?)\*\*")
_EMPH = re.compile(r"(?<![\w*])\*(\S(?:.*?\S)?)\*(?![\w*])")
_FOOTREF = re.compile(r"\s*\[(?:\d+|#\w*|\*)\]_")
_NAMED_REF = re.compile(r"(\w)_(?=\W|$)")


def _rst_inline(s: str) -> str:
    s = _ROLE.sub(lambda m: _role_text(m.group(0), m.group(1)), s)
    s = _LINK.sub(r"\1", s)
    s = _FOOTREF.sub("", s)
    s = _REF.sub(r"\1", s)
    s = _LITERAL.sub(r"``\1``", s)  # literals keep their backquotes: the pair filter rejects code
    s = _STRONG.sub(r"\1", s)
    s = _EMPH.sub(r"\1", s)
    s = _NAMED_REF.sub(r"\1", s)
    return s


def _role_text(whole: str, inner: str) -> str:
    inner = re.sub(r"\s*<[^>]*>$", "", inner)
    if whole.startswith(":pep:"):
        return f"PEP {inner}"
    if whole.startswith(":rfc:"):
        return f"RFC {inner}"
    return f"``{inner}``" if whole.startswith((":func:", ":class:", ":meth:", ":mod:", ":data:", ":attr:",
                                               ":const:", ":exc:", ":c:", ":py:", ":envvar:", ":file:")) else inner


def strip_plain(text: str, cache: dict | None = None) -> list[str]:
    """Paragraphs of prose of a reStructuredText / plain-text revision.  `cache` (one dict per page) maps a raw
    block to its paragraph: consecutive revisions share almost all their blocks."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").replace("\f", "\n").split("\n")
    i = 0
    # the PEP preamble / RFC-822 header block at the top
    while i < len(lines) and not lines[i].strip():
        i += 1
    if i < len(lines) and _HEADER_FIELD.match(lines[i]):
        while i < len(lines) and lines[i].strip():
            i += 1
    blocks: list[list[str]] = []
    cur: list[str] = []
    for line in lines[i:]:
        if not line.strip():
            if cur:
                blocks.append(cur)
                cur = []
            continue
        cur.append(line.rstrip())
    if cur:
        blocks.append(cur)
    paras: list[str] = []
    for block in blocks:
        if cache is not None:
            key = "\n".join(block)
            para = cache.get(key, 0)
            if para == 0:
                para = cache[key] = _plain_block(block)
        else:
            para = _plain_block(block)
        if para is not None:
            paras.append(para)
    return paras


def _plain_block(block: list[str]) -> str | None:
    """The paragraph of one blank-line-separated block, or None for a block that is not prose."""
    first = block[0]
    if first[:1].isspace():
        return None  # literal blocks, block quotes, definition bodies, list continuations
    if any(_UNDERLINE.match(ln) for ln in block):
        # a section title (with its under/overline) may share a block with nothing else worth keeping
        block = [ln for k, ln in enumerate(block)
                 if not _UNDERLINE.match(ln) and not (k + 1 < len(block) and _UNDERLINE.match(block[k + 1]))]
        if not block:
            return None
        first = block[0]
    if (_LIST_ITEM.match(first) or _TABLE.match(first) or _EXPLICIT.match(first) or _FIELD.match(first)
            or _HEADER_FIELD.match(first) and len(block) == 1):
        return None
    # a paragraph ends where an indented part (definition body, nested list) begins
    body = []
    for ln in block:
        if ln[:1].isspace():
            break
        body.append(ln.strip())
    para = " ".join(body)
    if para.endswith("::"):
        para = para[:-1]  # "as follows::" introduces a literal block: the sentence ends with one colon
    return _rst_inline(para)


def _paragraphs(plain: str) -> list[str]:
    out = []
    for block in re.split(r"\n\s*\n", plain):
        para = " ".join(block.split())
        if para:
            out.append(para)
    return out


def prose_paragraphs(text: str, model: str | None) -> list[str]:
    return strip_wikitext(text) if model == "wikitext" else strip_plain(text)


# -- sentences and tokens --------------------------------------------------------------------------------------
_ABBREV = ("e.g", "i.e", "a.k.a", "etc", "vs", "cf", "Mr", "Mrs", "Ms", "Dr", "Prof", "St", "Jr", "Sr", "No", "Fig", "al",
           "approx", "ca", "c", "Inc", "Ltd", "Co", "Corp", "Jan", "Feb", "Mar", "Apr", "Jun", "Jul", "Aug", "Sep",
           "Sept", "Oct", "Nov", "Dec", "U.S", "U.K", "Gen", "Col", "Gov", "Sen", "Rep", "Rev", "Mt", "Ft")
_ABBREV_RE = re.compile(r"(?:\b(?:" + "|".join(re.escape(a) for a in _ABBREV) + r")|\b[A-Z])\.$")
_BOUNDARY = re.compile(r"(?<=[.!?])[\"')\]\u201d\u2019]*\s+(?=[\"'(\[\u201c\u2018]?[A-Z0-9])")


def split_sentences(paragraph: str) -> list[str]:
    """Sentences of one paragraph (whitespace-normalised)."""
    out: list[str] = []
    start = 0
    for m in _BOUNDARY.finditer(paragraph):
        head = paragraph[start:m.start()]
        if _ABBREV_RE.search(head):
            continue
        end = m.start() + len(m.group(0).rstrip())
        out.append(paragraph[start:end].strip())
        start = m.end()
    tail = paragraph[start:].strip()
    if tail:
        out.append(tail)
    return [s for s in out if s]


def revision_sentences(text: str, model: str | None, cache: dict | None = None) -> list[str]:
    """All sentences of a revision, in order.  `cache`: one dict per page, reused across its revisions."""
    if cache is None:
        return [s for para in prose_paragraphs(text or "", model) for s in split_sentences(para)]
    blocks = cache.setdefault("blocks", {})
    sents = cache.setdefault("sentences", {})
    paras = strip_wikitext(text or "") if model == "wikitext" else strip_plain(text or "", blocks)
    out: list[str] = []
    for para in paras:
        got = sents.get(para)
        if got is None:
            got = sents[para] = split_sentences(para)
        out.extend(got)
    return out


_TOKEN = re.compile(r"``.*?``|[A-Za-z0-9]+(?:[-'\u2019.][A-Za-z0-9]+)*|[^\sA-Za-z0-9]")


def tokenize(sentence: str) -> list[str]:
    """Words (with inner hyphens, apostrophes and dots: "don't", "e.g", "3.5") and single punctuation marks."""
    return _TOKEN.findall(sentence)


def is_word(token: str) -> bool:
    return any(ch.isalnum() for ch in token)
