"""An exercise kind and an export format contributed from outside treegram (hooks ``register_exercise_kinds`` and
``register_export_formats``), written only against `treegram.exercises`.

* ``unscramble``: the practised word is blanked in its sentence and its letters are shown shuffled after the
  blank, "The _____ (g-d-o) barked." -- a spelling exercise.  It appears in every format treegram has
  (Markdown, HTML, PDF, GIFT, Moodle XML, Anki, JSON): the base class's renderers give a short-answer question.
* ``csv``: the sheet as one CSV row per item (number, kind, word, question, options, answer, source), for a
  spreadsheet or a flashcard tool's import; it renders every kind, the plugin's own and treegram's.
"""

from __future__ import annotations

import csv
import io
import re

from treegram.exercises import ExerciseKind, ExportFormat, Item, ItemRequest, Sheet

BLANK = "_____"


class Unscramble(ExerciseKind):
    name = "unscramble"
    title = "Unscramble the word"
    instructions = "Put the letters in the right order and write the word in the blank."
    help = "unscramble (spelling, from treegram-example-plugin)"
    order = 35
    # `--from-corrections` may give it the spelling errors (S, SA, SX) -- but a built-in kind earlier in the
    # order (cloze) already trains spelling, so only a sheet without it would pick this one
    trains = {"spelling": False}

    def make(self, sentence, word: str, rng, request: ItemRequest) -> Item | None:
        # the first token that is the word (the plugin has no lemmatizer: inflected forms are not found)
        low = [t.lower() for t in sentence.tokens]
        if word.lower() not in low or len(word) < 3:
            return None
        form = word.lower()
        letters = list(form)
        for _ in range(10):  # never the word itself
            order = rng.permutation(len(letters))
            shuffled = "".join(letters[int(i)] for i in order)
            if shuffled != form:
                break
        else:
            return None
        # blank every occurrence of the word in the display text (whole words, any case)
        prompt, n = re.subn(rf"(?i)(?<![\w'])({re.escape(form)})(?![\w'])", BLANK, sentence.text)
        if not n:
            return None
        prompt = prompt.replace(BLANK, f"{BLANK} ({'-'.join(shuffled)})", 1)
        return request.item(self.name, sentence, word, prompt=prompt, answer=form, hint="-".join(shuffled))


def to_csv(sheet: Sheet) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["number", "kind", "word", "question", "options", "answer", "source"])
    for i in sorted(sheet.items, key=lambda x: x.number):
        w.writerow([i.number, i.kind, i.word, i.question(), " | ".join(i.choices), i.key(), i.source])
    return buf.getvalue()


CSV = ExportFormat("csv", ".csv", to_csv, media_type="text/csv; charset=utf-8",
                   help="csv (one row per item, from treegram-example-plugin)", order=80)
