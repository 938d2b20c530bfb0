"""Choosing the sentences a sheet shows for each practised word.

This is the one place that decides *which* sentences reach a teacher: the exercise builders (`exercises.py`, the
web page, `--from-corrections`) call `select_sentences` and only format what it returns.  Today it draws unique
sentences containing the word from the constrained generator; ranking, corpus items, near-duplicate removal and
safety filtering belong here too.
"""

from __future__ import annotations

from treegram.generation.constraints import NoSentenceError

from treegram.plugins.vocabgen.generator import ConstrainedGenerator, Sentence


def select_sentences(gen: ConstrainedGenerator, words: list[str], per_word: int, rng
                     ) -> tuple[dict[str, list[Sentence]], list[str]]:
    """Up to `per_word` different sentences for each word, and a note for each word that fell short.

    Returns ``(groups, problems)``: ``groups[word]`` lists the chosen sentences (words with none are left out),
    ``problems`` holds one human-readable line per word that got fewer than asked.
    """
    groups: dict[str, list[Sentence]] = {}
    problems: list[str] = []
    for w in words:
        try:
            sents, _ = gen.sample(per_word, rng, word=w, unique=True, max_attempts=50 * per_word + 200)
        except NoSentenceError as exc:
            problems.append(f"{w}: {exc}")
            continue
        if len(sents) < per_word:
            problems.append(f"{w}: only {len(sents)} different sentence(s) exist under this vocabulary")
        if sents:
            groups[w] = sents
    return groups, problems
