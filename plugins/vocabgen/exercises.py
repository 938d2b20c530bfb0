"""Printable exercise sheets (cloze, translate, reorder) with an answer key, as Markdown, HTML or JSON."""

from __future__ import annotations

import html
import json

import numpy as np

from treegram.errors import InputError

from treegram.plugins.vocabgen.generator import Sentence

KINDS = ("cloze", "translate", "reorder")
FORMATS = ("md", "html", "json")
BLANK = "_____"


def _blank(sentence: Sentence, word: str) -> str:
    """The sentence with every occurrence of `word` blanked (case-insensitive, whole tokens)."""
    from treegram.plugins.vocabgen.spinedep import surface

    toks = [BLANK if t.lower() == word.lower() else t for t in sentence.tokens]
    text = surface(toks)
    return text.replace(BLANK.capitalize(), BLANK)


def make_items(groups: dict[str, list[Sentence]], kind: str, rng) -> list[dict]:
    """One item per sentence: prompt + answer, grouped by word, numbered in order."""
    if kind not in KINDS:
        raise InputError(f"unknown exercise kind {kind!r}", hint="use cloze, translate or reorder")
    items = []
    n = 0
    for word, sentences in groups.items():
        for s in sentences:
            n += 1
            if kind == "cloze":
                prompt, answer = _blank(s, word), word
            elif kind == "reorder":
                words = [t for t in s.tokens]
                body = [t for t in words if t not in ".!?"]
                end = "".join(t for t in words[len(body):]) if len(body) < len(words) else ""
                order = np.asarray(rng.permutation(len(body)))
                if len(body) > 1 and np.all(order == np.arange(len(body))):
                    order = np.roll(order, 1)
                shuffled = " / ".join(body[i].lower() if body[i] != "i" else "I" for i in order)
                prompt, answer = shuffled + (f"  ({end})" if end else ""), s.text
            else:
                prompt, answer = s.text, f"(free translation; key word: {word})"
            items.append({"number": n, "word": word, "prompt": prompt, "answer": answer, "sentence": s.text})
    return items


_TITLES = {"cloze": "Fill in the blank with the missing word.",
           "translate": "Translate each sentence into your language.",
           "reorder": "Put the words in the right order."}


def render(items: list[dict], *, kind: str, fmt: str, vocab_name: str, words: list[str]) -> str:
    if fmt not in FORMATS:
        raise InputError(f"unknown format {fmt!r}", hint="use md, html or json")
    title = f"Exercises ({kind}) - vocabulary {vocab_name}"
    if fmt == "json":
        return json.dumps({"title": title, "kind": kind, "vocabulary": vocab_name, "words": words,
                           "instructions": _TITLES[kind], "items": items}, ensure_ascii=False, indent=2) + "\n"
    if fmt == "md":
        lines = [f"# {title}", "", f"Words: {', '.join(words)}", "", _TITLES[kind], ""]
        if kind == "cloze":
            lines += [f"Word box: {', '.join(sorted(set(i['word'] for i in items)))}", ""]
        lines += [f"{i['number']}. {i['prompt']}" for i in items]
        lines += ["", "## Answer key", ""]
        lines += [f"{i['number']}. {i['answer']}" for i in items]
        return "\n".join(lines) + "\n"
    e = html.escape
    body = [f"<h1>{e(title)}</h1>", f"<p>Words: {e(', '.join(words))}</p>", f"<p>{e(_TITLES[kind])}</p>"]
    if kind == "cloze":
        body.append(f"<p><b>Word box:</b> {e(', '.join(sorted(set(i['word'] for i in items))))}</p>")
    body.append("<ol>" + "".join(f"<li>{e(i['prompt'])}</li>" for i in items) + "</ol>")
    body.append('<h2 style="page-break-before: always">Answer key</h2>')
    body.append("<ol>" + "".join(f"<li>{e(i['answer'])}</li>" for i in items) + "</ol>")
    return ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>" + e(title) + "</title>"
            "<style>body{font-family:sans-serif;max-width:40em;margin:2em auto;line-height:1.8}</style></head>"
            "<body>\n" + "\n".join(body) + "\n</body></html>\n")
