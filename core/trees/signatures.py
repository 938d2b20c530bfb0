"""Unknown-word signatures: rare and unseen words are replaced by a class of their shape.

A grammar cannot give a probability to a word it never saw; mapping every rare training word and every unknown
test word to a signature such as `UNK-INITC-KNOWNLC-ed` lets it learn how words *of that shape* behave (in the
style of the Berkeley parser's unknown-word classes; the feature set here is our own).

Signature = `UNK` followed by, in this order:

* capitalization (at most one): `-ALLC` (two or more letters, all upper case), `-INITC` (capitalized first word of
  the sentence; plus `-KNOWNLC` when its lower-cased form is a known word), `-CAP` (capitalized elsewhere),
  `-MIXC` (lower-case first letter with a capital later, e.g. iPhone);
* `-NUM` (only digits and number punctuation like `1,200.50`) or `-DIG` (contains a digit);
* `-DASH`, `-PERIOD`, `-COMMA`, `-SYM` (contains characters that are neither letters, digits nor - . ,);
* `-NOLET` when the word has no letters and is not a number;
* a suffix class for words of at least 4 characters: the longest matching entry of `SUFFIXES` (`-ing`, `-ed`,
  `-ion`, ..., `-s`), written without the dash separator doubling, e.g. `UNK-ed`.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

import attrs

from treegram.errors import InputError
from treegram.trees.tree import Tree, bottom_up

# Checked longest first; the order within equal lengths does not matter (they cannot both match).
SUFFIXES = (
    "ness", "ment", "less", "able", "ible", "ship", "ward",
    "ing", "ion", "ity", "est", "ous", "ive", "ful", "ism", "ist", "ize", "ise", "ant", "ent", "ary",
    "ed", "er", "ly", "al", "ic", "en",
    "y", "s",
)
_SUFFIXES_BY_LENGTH = sorted(SUFFIXES, key=len, reverse=True)
_NUMBER = re.compile(r"^[+-]?[\d,.:/]*\d[\d,.:/]*%?$")


def word_signature(word: str, *, sentence_initial: bool, known_lowercase: Callable[[str], bool] | None = None) -> str:
    """The unknown-word class of `word` (see the module docstring for the features)."""
    parts = ["UNK"]
    letters = [ch for ch in word if ch.isalpha()]
    uppers = sum(1 for ch in letters if ch.isupper())
    first_alpha = letters[0] if letters else ""
    if letters:
        if len(letters) >= 2 and uppers == len(letters):
            parts.append("-ALLC")
        elif first_alpha.isupper() and word[0].isalpha():
            if sentence_initial:
                parts.append("-INITC")
                if known_lowercase is not None and known_lowercase(word.lower()):
                    parts.append("-KNOWNLC")
            else:
                parts.append("-CAP")
        elif uppers:
            parts.append("-MIXC")
    is_number = bool(_NUMBER.match(word))
    if is_number:
        parts.append("-NUM")
    elif any(ch.isdigit() for ch in word):
        parts.append("-DIG")
    if "-" in word and not is_number:
        parts.append("-DASH")
    if "." in word and not is_number:
        parts.append("-PERIOD")
    if "," in word and not is_number:
        parts.append("-COMMA")
    if any(not (ch.isalnum() or ch in "-.,") for ch in word) and not is_number:
        parts.append("-SYM")
    if not letters and not is_number:
        parts.append("-NOLET")
    if letters and len(word) >= 4 and word[-1].isalpha():
        lower = word.lower()
        for suffix in _SUFFIXES_BY_LENGTH:
            if lower.endswith(suffix) and not (suffix == "s" and lower.endswith("ss")):
                parts.append("-" + suffix)
                break
    return "".join(parts)


@attrs.define
class RareWordMapper:
    """Maps words seen fewer than `min_count` times in training (and all unseen words) to signatures.

    Fit it on the training trees, map the training trees with `map_training_tree` and every sentence to parse
    with `map_sentence`: both sides then agree on which words are kept as themselves.
    """

    min_count: int = 2
    counts: dict[str, int] = attrs.field(factory=dict)
    known: frozenset[str] = attrs.field(factory=frozenset)

    def fit(self, trees: Iterable[Tree], min_count: int | None = None) -> RareWordMapper:
        if min_count is not None:
            self.min_count = min_count
        if self.min_count < 1:
            raise ValueError(f"min_count must be >= 1, not {self.min_count}")
        counter: Counter[str] = Counter()
        for t in trees:
            counter.update(t.leaves())
        self.counts = dict(counter)
        self.known = frozenset(w for w, c in counter.items() if c >= self.min_count)
        return self

    def is_known(self, word: str) -> bool:
        return word in self.known

    def signature(self, word: str, *, sentence_initial: bool) -> str:
        return word_signature(word, sentence_initial=sentence_initial, known_lowercase=self.known.__contains__)

    def map_word(self, word: str, *, sentence_initial: bool) -> str:
        return word if word in self.known else self.signature(word, sentence_initial=sentence_initial)

    def map_sentence(self, tokens: Iterable[str]) -> list[str]:
        """Unknown and rare tokens replaced by their signatures."""
        return [self.map_word(w, sentence_initial=(i == 0)) for i, w in enumerate(tokens)]

    def map_training_tree(self, tree: Tree) -> Tree:
        """A copy of `tree` whose rare words are replaced by their signatures (structure unchanged)."""
        mapped = self.map_sentence(tree.leaves())
        span = {id(t): (s, e) for t, s, e in tree.spans()}

        def build(node: Tree, kids: tuple) -> Tree:
            pos = span[id(node)][0]
            out = []
            for original, kid in zip(node.children, kids):
                if isinstance(original, str):
                    out.append(mapped[pos])
                    pos += 1
                else:
                    out.append(kid)
                    pos = span[id(original)][1]
            return Tree(node.label, out)

        return bottom_up(tree, build)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "RareWordMapper", "min_count": self.min_count, "counts": dict(sorted(self.counts.items()))}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RareWordMapper:
        if not isinstance(data, dict) or data.get("kind") != "RareWordMapper":
            raise InputError("not a saved RareWordMapper", hint="load the file written by RareWordMapper.to_dict()")
        try:
            min_count = int(data["min_count"])
            counts = {str(w): int(c) for w, c in data["counts"].items()}
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise InputError(f"corrupt RareWordMapper data ({exc})", hint="re-fit and save the mapper") from None
        return cls(min_count=min_count, counts=counts, known=frozenset(w for w, c in counts.items() if c >= min_count))
