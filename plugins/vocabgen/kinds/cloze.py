"""cloze: the practised word's form in the sentence ("went" for *go*) is blanked (every occurrence of that form);
with hints the blank carries the lemma, "_____ (go)", otherwise the sheet has a word box of the masked forms.  A
blank that admits another word of the box is swapped for a spare sentence whose blank does not; what is left is
accepted in the key and in the Moodle formats (`exercises.box_alternatives`)."""

from __future__ import annotations


from treegram.exercises import ExerciseKind, Item, ItemRequest


class Cloze(ExerciseKind):
    name = "cloze"
    title = "Fill in the blanks"
    instructions = "Fill in each blank with the missing word."
    help = "cloze (fill in)"
    order = 10
    trains = {"spelling": False, "form": True, "word": False}

    def make(self, s, word: str, rng, request: ItemRequest) -> Item | None:
        from treegram.plugins.vocabgen import exercises as ex

        b = ex.blank(s, word, request)
        if b is None:
            return None
        answer = b.answer
        if answer[:1].isupper() and answer != "I" and b.index == 0:
            from treegram.plugins.vocabgen.vocab import common_words

            if b.form.lower() in common_words():
                answer = b.form.lower()  # the word box lists "happy", not "Happy"
        return request.item(self.name, s, word, prompt=b.prompt, answer=answer, hint=b.hint, tokens=b.tokens)

    def spare_factor(self, hints: bool, focus: bool) -> int:
        # spares replace a blank that admits another word of the word box
        return 3 if not hints and not focus else 1

    def word_box(self, items: list[Item]) -> list[str]:
        return sorted({i.answer for i in items if i.kind == self.name and not i.hint}, key=str.lower)

    def finish(self, items, remake):
        """Swap items whose blank admits another word-box form for spares that do not; mark what is left."""
        from treegram.plugins.vocabgen.exercises import box_alternatives

        def boxed(i: Item) -> bool:
            return i.kind == self.name and not i.hint

        if not any(boxed(i) for i in items):
            return items
        items = list(items)
        for n, it in enumerate(items):
            if not boxed(it):
                continue
            alts = box_alternatives(it, self.word_box(items))
            if not alts:
                continue
            for cand in remake(it):
                trial = items[:n] + [cand] + items[n + 1:]
                if not box_alternatives(cand, self.word_box(trial)):
                    items[n] = cand
                    break
        box = self.word_box(items)
        import attrs

        return [attrs.evolve(i, alternatives=tuple(box_alternatives(i, box))) if boxed(i) else i for i in items]

    def gift(self, item: Item, escape) -> str:
        from treegram.plugins.vocabgen.formats import gift_blank

        # the word-box forms the blank also admits are right answers too
        answers = " ".join("=" + escape.answer(a) for a in (item.answer, *item.alternatives))
        return gift_blank(item, "{" + answers + "}", escape)

    def moodle_xml(self, item: Item, quiz) -> None:
        import html

        from treegram.plugins.vocabgen.exercises import BLANK
        from treegram.plugins.vocabgen.formats import cloze_escape

        # one embedded answer per blank (a form that occurs twice is blanked twice)
        slot = "{1:SHORTANSWER:" + "~".join(f"={cloze_escape(a)}" for a in (item.answer, *item.alternatives)) + "}"
        quiz.add("cloze", item, "<p>" + slot.join(html.escape(part) for part in item.prompt.split(BLANK)) + "</p>")
