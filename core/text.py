"""Raw text <-> the Penn Treebank tokens treegram's parsers and compressors read, and back to text.

Every command that reads sentences as typed (`treegram compress "..."`, `treegram parse --text`) goes through this
module, so there is one tokenization convention in the project: the Penn Treebank's, which the treebank parsers
were trained on (benchmarks/RESULTS.md `text` measures it against PTB, GUM and broadcast-news tokens).

- `split_sentences(text)`: sentence spans, by pysbd's rule-based segmenter (no data files, nothing downloaded at run
  time; its golden rules cover abbreviations such as "U.S." and "Mr.", quotes after the full stop, ellipses).
- `tokenize(sentence)`: nltk's `NLTKWordTokenizer` (the improved Treebank tokenizer: "isn't" -> is n't, "Smith's"
  -> Smith 's, "$5" -> $ 5, "10%" -> 10 %, '"' -> `` or '') with the character span of every token, then the
  treebank's written forms: brackets as -LRB-/-RRB- (-LSB-, -LCB-, ...), curly quotes as `` '' ` ', dashes as --,
  "..." for the ellipsis character, a sentence-final abbreviation written as "U.S." followed by ".", and URLs and
  e-mail addresses kept whole.
- `Sentence.render(keep)`: the kept words as text: each kept word as it was typed (its span), the original spacing
  between words that stay neighbours, the detokenizer's spacing (nltk's `TreebankWordDetokenizer`) where words
  between them were deleted, and a capital letter at the start when the sentence's first word was dropped.
- `detokenize(tokens)`: tokens without their original text (``--tokenized`` input) as text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from functools import lru_cache

import attrs

__all__ = ["Sentence", "detokenize", "is_punctuation", "sentences", "split_sentences", "tokenize"]

# same-length replacements (so spans stay valid) that let the tokenizer treat typographic characters as ASCII ones
_TYPOGRAPHIC = str.maketrans({"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"', "\u00a0": " ",
                              "\u2032": "'", "\u201e": '"'})
# tokens written differently in the treebank (the typed characters stay in the span)
_PTB_FORMS = {"(": "-LRB-", ")": "-RRB-", "[": "-LSB-", "]": "-RSB-", "{": "-LCB-", "}": "-RCB-",
              "\u2014": "--", "\u2013": "--", "\u2015": "--", "\u2026": "...", "\u201c": "``", "\u201d": "''",
              "\u2018": "`", "\u2019": "'"}
_QUOTES = {"``": '"', "''": '"'}
# a sentence-final abbreviation the treebank writes with its full stop and then the sentence's ("U.S. ."); word
# abbreviations lose theirs ("Inc ."), as nltk already writes them (ptb-sample: U.S. . 14 times, Inc . 17, Corp . 10)
_ABBREV = re.compile(r"^(?:[A-Za-z]\.)+[A-Za-z]$")
_URL = re.compile(r"(?:https?://|www\.)\S+?(?=[.,;:!?)\]'\"]*(?:\s|$))|[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_PUNCT = re.compile(r"^(?:[^\w]+|-[LR][RSC]B-)$", re.UNICODE)


@lru_cache(maxsize=1)
def _word_tokenizer():
    from nltk.tokenize import NLTKWordTokenizer

    return NLTKWordTokenizer()


@lru_cache(maxsize=1)
def _detokenizer():
    from nltk.tokenize.treebank import TreebankWordDetokenizer

    return TreebankWordDetokenizer()


@lru_cache(maxsize=1)
def _segmenter():
    import pysbd

    return pysbd.Segmenter(language="en", clean=False, char_span=True)


def is_punctuation(token: str) -> bool:
    """A token with no letter or digit (-LRB- and friends included)."""
    return bool(_PUNCT.match(token))


def split_sentences(text: str) -> list[tuple[int, int]]:
    """Character spans (start, end) of the sentences of `text`, whitespace around them excluded; none for blank
    text."""
    if not text.strip():
        return []
    spans = []
    for seg in _segmenter().segment(text):
        start, end = seg.start, seg.end
        while start < end and text[start].isspace():
            start += 1
        while end > start and text[end - 1].isspace():
            end -= 1
        if start < end:
            spans.append((start, end))
    return spans


def tokenize(text: str) -> tuple[list[str], list[tuple[int, int]]]:
    """Penn Treebank tokens of one sentence and each token's character span in `text`.

    A span is empty ``(k, k)`` for the full stop the treebank adds after a sentence-final abbreviation (the typed
    "U.S." holds both)."""
    plain = text.translate(_TYPOGRAPHIC)  # same length: spans into `plain` are spans into `text`
    tok = _word_tokenizer()
    tokens = tok.tokenize(plain)
    spans = list(tok.span_tokenize(plain))
    if len(tokens) != len(spans):  # cannot happen with nltk's own alignment; never silently misalign
        raise RuntimeError(f"tokenizer returned {len(tokens)} tokens but {len(spans)} spans")
    tokens, spans = _split_ellipses(*_keep_whole(text, tokens, spans))
    out = []
    for t, (s, e) in zip(tokens, spans):
        typed = text[s:e]
        if t in ("``", "''", "'", "`") or typed in _PTB_FORMS:
            t = _quote_form(typed, t)
        out.append(t)
    tokens = out
    # "... in the U.S." -> U.S. + . (the treebank keeps the abbreviation's full stop and adds the sentence's)
    if len(tokens) >= 2 and tokens[-1] == "." and _ABBREV.match(tokens[-2]) and spans[-2][1] == spans[-1][0]:
        end = spans[-1][1]
        tokens[-2] += "."
        spans[-2] = (spans[-2][0], end)
        spans[-1] = (end, end)
    return [_escape(t) for t in tokens], spans


def _quote_form(typed: str, token: str) -> str:
    """The treebank's form of a quote or bracket token, from what was typed (curly quotes say which side they
    are; a straight double quote keeps the side nltk chose)."""
    return _PTB_FORMS.get(typed, token)


def _escape(token: str) -> str:
    from treegram.trees.bracket import escape_word

    return escape_word(_PTB_FORMS.get(token, token))


def _keep_whole(text: str, tokens: list[str], spans: list[tuple[int, int]]):
    """Tokens inside a URL or e-mail address merged back into one token."""
    whole = [m.span() for m in _URL.finditer(text)]
    if not whole:
        return tokens, spans
    out_t, out_s = [], []
    i = 0
    while i < len(tokens):
        s, e = spans[i]
        hit = next(((a, b) for a, b in whole if a <= s < b), None)
        if hit is None:
            out_t.append(tokens[i])
            out_s.append((s, e))
            i += 1
            continue
        j = i
        while j + 1 < len(tokens) and spans[j + 1][0] < hit[1]:
            j += 1
        end = max(spans[j][1], hit[1])
        out_t.append(text[s:end])
        out_s.append((s, end))
        i = j + 1
    return out_t, out_s


def _split_ellipses(tokens: list[str], spans: list[tuple[int, int]]):
    """The ellipsis character as a token of its own (the tokenizer's rules know only "...")."""
    if not any("\u2026" in t and t != "\u2026" for t in tokens):
        return tokens, spans
    out_t, out_s = [], []
    for t, (s, _e) in zip(tokens, spans):
        for piece in re.split("(\u2026)", t) if t != "\u2026" else [t]:
            if piece:
                out_t.append(piece)
                out_s.append((s, s + len(piece)))
                s += len(piece)
    return out_t, out_s


def _unescape(token: str) -> str:
    """A treebank token as text: brackets unescaped, `` and '' as a straight double quote."""
    from treegram.trees.bracket import unescape_word

    return _QUOTES.get(token, unescape_word(token))


def detokenize(tokens: Sequence[str]) -> str:
    """Treebank tokens (no original text) as text: nltk's `TreebankWordDetokenizer` after undoing the treebank's
    bracket escapes ("-LRB-" -> "("; the detokenizer itself turns `` and '' into straight double quotes)."""
    from treegram.trees.bracket import unescape_word

    if not tokens:
        return ""
    return _detokenizer().detokenize([unescape_word(t) for t in tokens])


def _space_between(left: str, right: str) -> str:
    """The detokenizer's spacing between two treebank tokens that were not neighbours in the typed text."""
    return " " if " " in detokenize([left, right]) else ""


@attrs.frozen
class Sentence:
    """One sentence as typed (`text`) and its treebank tokens with their character spans in `text`."""

    text: str
    tokens: tuple[str, ...]
    spans: tuple[tuple[int, int], ...]

    @classmethod
    def from_text(cls, text: str) -> "Sentence":
        tokens, spans = tokenize(text)
        return cls(text, tuple(tokens), tuple(spans))

    @classmethod
    def from_tokens(cls, tokens: Sequence[str]) -> "Sentence":
        """A pre-tokenized sentence: its text is the tokens joined by single spaces."""
        spans, k = [], 0
        for t in tokens:
            spans.append((k, k + len(t)))
            k += len(t) + 1
        return cls(" ".join(tokens), tuple(tokens), tuple(spans))

    def surface(self, i: int, after: int | None = None) -> str:
        """Token `i` as typed; the full stop after a sentence-final abbreviation is typed only once, so it is ""
        right after that abbreviation (`after` = the index of the kept token before it) and "." elsewhere."""
        s, e = self.spans[i]
        if e > s:
            return self.text[s:e]
        return "" if after == i - 1 else _unescape(self.tokens[i])

    def render(self, keep: Sequence[bool]) -> str:
        """The kept tokens as text (see the module docstring): the full text when everything is kept."""
        kept = [i for i, k in enumerate(keep) if k]
        if len(keep) != len(self.tokens):
            raise ValueError(f"keep mask has {len(keep)} entries for {len(self.tokens)} tokens")
        parts: list[str] = []
        prev = None
        for i in kept:
            word = self.surface(i, prev)
            if prev is not None:
                if i == prev + 1:
                    gap = self.text[self.spans[prev][1]:self.spans[i][0]]
                    parts.append(" " if gap.isspace() else gap)  # "" between touching tokens; spaces as one
                else:
                    parts.append(_space_between(self.tokens[prev], self.tokens[i]))
            elif i > 0 and self.surface(0)[:1].isupper() and word[:1].islower():
                word = word[0].upper() + word[1:]  # the new first word starts the sentence
            parts.append(word)
            prev = i
        return "".join(parts)


def sentences(text: str) -> Iterator[tuple[int, int, Sentence]]:
    """(start, end, Sentence) for each sentence of `text` (a line or a paragraph)."""
    for start, end in split_sentences(text):
        yield start, end, Sentence.from_text(text[start:end])
