"""The CLC error codes (Nicholls 2003) and the collapsed 15-class set of Swanson & Yamangil (2012), Figure 1.

A CLC code is an error *type* (R replace, M missing, U unnecessary, F wrong form, D wrong derivation, I wrong
inflection, AG agreement, C countability, S spelling, ...) plus, for most types, a *part-of-speech* letter
(T preposition, V verb, N noun, D determiner, J adjective, Y adverb, A pronoun, C conjunction, Q quantifier,
P punctuation).  The 15-class set of Figure 1 removes the part-of-speech component: RT, RV, RN, ... -> R;
AGN, AGV -> AG; SA, SX -> S; CN, CQ, CE, CL -> C; the type-only codes TV, W, X, L, ID, AS stay as they are.
"""

from __future__ import annotations

#: Figure 1: the 15 collapsed classes and their descriptions (order as in the paper).
LABELS15: dict[str, str] = {
    "U": "Unnecessary", "TV": "Incorrect verb tense", "C": "Countability error", "W": "Incorrect word order",
    "X": "Incorrect negative", "S": "Spelling error", "F": "Wrong form used", "AG": "Agreement error",
    "R": "Replace", "M": "Missing", "AS": "Incorrect argument structure", "D": "Wrong derivation",
    "I": "Wrong inflection", "L": "Inappropriate register", "ID": "Idiomatic error",
}

POS_LETTERS: dict[str, str] = {
    "T": "preposition", "V": "verb", "N": "noun", "D": "determiner", "J": "adjective", "Y": "adverb",
    "A": "pronoun", "C": "conjunction", "Q": "quantifier", "P": "punctuation",
}

_TYPE_ONLY = {"TV": "Incorrect verb tense", "W": "Incorrect word order", "X": "Incorrect negative",
              "L": "Inappropriate register", "ID": "Idiomatic error", "AS": "Incorrect argument structure",
              "S": "Spelling error", "SA": "American spelling", "SX": "Spelling confusion",
              "CE": "Compound error", "CL": "Collocation error", "AG": "Agreement error",
              "R": "Replace", "M": "Missing", "U": "Unnecessary", "F": "Wrong form used",
              "D": "Wrong derivation", "I": "Wrong inflection", "C": "Countability error"}
_TYPE_VERB = {"R": "Replace", "M": "Missing", "U": "Unnecessary", "F": "Wrong form of", "D": "Wrong derivation of",
              "I": "Wrong inflection of", "AG": "Agreement of", "C": "Countability of"}


def collapse(code: str) -> str:
    """75-code -> 15-class label (Figure 1).  Unknown codes collapse by their leading type letter."""
    code = code.strip().upper()
    if code in LABELS15:
        return code
    for prefix in ("AG", "AS", "ID", "TV"):
        if code.startswith(prefix):
            return prefix
    if code.startswith("T"):
        return "TV"
    head = code[:1]
    return head if head in LABELS15 else "R"


def describe(code: str) -> str:
    """A teacher-readable description: 'Replace preposition', 'Missing determiner', 'Spelling error', ..."""
    code = code.strip().upper()
    if code in _TYPE_ONLY:
        return _TYPE_ONLY[code]
    for t in ("AG", "R", "M", "U", "F", "D", "I", "C"):
        if code.startswith(t) and code[len(t):] in POS_LETTERS:
            return f"{_TYPE_VERB[t]} {POS_LETTERS[code[len(t):]]}"
    return LABELS15.get(collapse(code), code)
