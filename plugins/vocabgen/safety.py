"""A safety filter for classroom sheets: no sexual, violent, drug-related or offensive words or senses.

The lists are the project's own (written for this module, not taken from any published list) and deliberately
short and strict: a sheet loses nothing by skipping a sentence, while one unsafe item spoils it.  Two kinds of rule:

* **words** (`UNSAFE_WORDS`): lemmas that are never fit for a beginners' worksheet, matched in every inflection
  (lemminflect, any part of speech) and case-insensitively;
* **senses** (`UNSAFE_PHRASES`): harmless words that form an unsafe sense together ("make water", "give head",
  "sleep with her"), matched as lemma sequences that may have up to `GAP` other tokens between their parts.

`unsafe_reason(tokens)` returns why a sentence is rejected (None = safe); `is_safe(tokens)` is its boolean form.
"""

from __future__ import annotations

from functools import lru_cache

# Sexual words and body parts; violence and weapons; drugs and drunkenness; insults, slurs and swearing.
# Everyday words with an everyday sense (knife, blood, die, war, fight, beer, hate) are *not* listed: graded
# sentences use them harmlessly ("a knife and fork", "my blood type"), and a sheet would lose too much.
UNSAFE_WORDS = frozenset("""
sex sexy sexual sexually naked nude nudity porn pornography erotic orgasm intercourse seduce seduction
prostitute prostitution whore slut brothel rape rapist molest virgin condom contraceptive breast bosom nipple
penis vagina genitals groin buttock butt ass arse bra panties lingerie masturbate mistress erection horny kinky
fetish abortion
kill killer murder murderer slaughter massacre assassinate strangle stab shoot gunshot gun pistol rifle bullet
bomb explosive grenade weapon sword torture corpse bloody gore behead hanged suicide terrorist terrorism kidnap
hostage choke poison drown violence violent cruelty abuse
drug drugs cocaine heroin marijuana cannabis overdose drunk drunken alcoholic booze
damn damned hell shit fuck fucking bitch bastard crap piss pissed dick cock pussy idiot stupid moron retard
retarded nigger negro jap chink fag faggot dyke racist
""".split())

#: multiword senses (lemmas); a phrase matches when its lemmas occur in order with at most GAP tokens between parts
UNSAFE_PHRASES = (
    ("make", "water"), ("pass", "water"), ("water", "break"), ("give", "head"),
    *((v, "with", who) for v in ("bed", "sleep", "slept") for who in ("him", "her", "me", "you", "them")),
    ("get", "laid"), ("make", "love"), ("blow", "job"), ("go", "down", "on"), ("make", "out", "with"),
    ("beat", "up"), ("shut", "up"), ("take", "a", "leak"), ("one", "night", "stand"), ("hard", "on"),
    ("take", "his", "own", "life"), ("take", "her", "own", "life"), ("pull", "the", "trigger"),
    ("screw", "you"), ("go", "to", "hell"),
)
GAP = 1


@lru_cache(maxsize=1)
def _unsafe_forms() -> dict[str, str]:
    """Every inflected form of every unsafe lemma -> the lemma."""
    from treegram.plugins.vocabgen.vocab import inflections

    out: dict[str, str] = {}
    for lemma in UNSAFE_WORDS:
        for pos in ("noun", "verb", "adjective"):
            for form in inflections(lemma, pos):
                out.setdefault(form, lemma)
        out[lemma] = lemma
    return out


@lru_cache(maxsize=1)
def _phrase_forms() -> tuple[tuple[frozenset[str], ...], ...]:
    from treegram.plugins.vocabgen.vocab import inflections

    return tuple(tuple(frozenset(inflections(w, "verb") | inflections(w, "noun")) for w in ph)
                 for ph in UNSAFE_PHRASES)


def _matches(toks: list[str], parts: tuple[frozenset[str], ...]) -> bool:
    n = len(toks)
    for start in range(n):
        if toks[start] not in parts[0]:
            continue
        pos, ok = start, True
        for part in parts[1:]:
            nxt = next((j for j in range(pos + 1, min(n, pos + 2 + GAP)) if toks[j] in part), None)
            if nxt is None:
                ok = False
                break
            pos = nxt
        if ok:
            return True
    return False


def unsafe_reason(tokens) -> str | None:
    """Why a sentence (its tokens) must stay off a sheet, or None if it is safe."""
    toks = [t.lower() for t in tokens]
    forms = _unsafe_forms()
    for t in toks:
        if t in forms:
            return f"unsafe word {t!r} ({forms[t]})"
    present = set(toks)
    for ph, parts in zip(UNSAFE_PHRASES, _phrase_forms()):
        if all(p & present for p in parts) and _matches(toks, parts):
            return f"unsafe sense {' '.join(ph)!r}"
    return None


def is_safe(tokens) -> bool:
    return unsafe_reason(tokens) is None
