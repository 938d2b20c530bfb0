"""Small hand-written corpora that several test files train on: dependency-analysed sentences for vocabgen (a
"pets" corpus and a "park" corpus in tests/fixtures/, with the vocabulary that covers the park one) and the OSTAG
toy treebank (quotes and a PP inside an NP, so auxiliary trees have somewhere to adjoin)."""

from __future__ import annotations

from pathlib import Path

from treegram.corpora import DepSentence, read_dp
from treegram.trees import Tree, parse_brackets

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def dep(text: str, tags: str, heads: str) -> DepSentence:
    """A sentence from space-separated words, tags and 1-based heads (0 for the root)."""
    return DepSentence(text.split(), tags.split(), [int(h) for h in heads.split()])


# word, tag, head per line (NLTK's .dp format), read with the project's own reader
PETS = list(read_dp(FIXTURES / "pets.dp"))  # "She likes big dogs .", "The dog bit me ." ...
PARK = list(read_dp(FIXTURES / "park.dp"))  # "She saw a cat in the park .", "The cat sat on the mat ." ...
PARK_VOCAB = "words:the,a,dog,cat,she,me,saw,sat,likes,in,on,at,park,mat,to"


def T(label: str, *kids) -> Tree:
    """A tree from its label and children (a word is a plain string)."""
    return Tree(label, kids)


def P(s: str) -> Tree:
    """The one tree in bracketed string `s`."""
    return parse_brackets(s, source="test")[0]


OSTAG_TREEBANK = [
    "(S (NP (DT the) (NN dog)) (VP (VBD saw) (NP (DT a) (NN cat))))",
    "(S (NP (DT a) (NN cat)) (VP (VBD saw) (NP (DT the) (NN dog))))",
    "(S (NP (DT the) (JJ big) (NN dog)) (VP (VBD ran)))",
    "(S (NP (DT the) (NN cat)) (VP (VBD ran) (PP (IN to) (NP (DT the) (NN dog)))))",
    "(S (NP (NP (DT the) (NN dog)) (PP (IN of) (NP (DT a) (NN cat)))) (VP (VBD ran)))",
    "(S (NP (`` ``) (NP (DT the) (NN cat)) ('' '')) (VP (VBD saw) (NP (DT a) (NN dog))))",
    "(S (NP (DT a) (JJ big) (JJ old) (NN cat)) (VP (VBD saw) (NP (`` ``) (NP (DT the) (NN dog)) ('' ''))))",
]
