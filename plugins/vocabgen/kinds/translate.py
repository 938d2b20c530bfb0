"""translate: the sentence is shown; the key holds the corpus's reference translation, or says there is none."""

from __future__ import annotations

from treegram.exercises import ExerciseKind, Item, ItemRequest

NO_TRANSLATION = "no reference translation (free translation)"


class Translate(ExerciseKind):
    name = "translate"
    title = "Translation"
    instructions = "Translate each sentence into your language."
    help = "translate"
    order = 40
    targets_word = False

    def make(self, s, word: str, rng, request: ItemRequest) -> Item | None:
        return request.item(self.name, s, word, prompt=s.text, answer=s.translation or NO_TRANSLATION)

    def key(self, item: Item) -> str:
        return item.translation if item.translation else NO_TRANSLATION

    def key_line(self, item: Item) -> str:
        if item.translation:
            return f"{item.sentence} - reference translation: {item.translation}"
        return f"{item.sentence} - {NO_TRANSLATION}"

    def json_fields(self, item: Item) -> dict:
        return {"translation": item.translation}

    def gift(self, item: Item, escape) -> str:
        ref = item.translation or "no reference translation"
        return f"{escape(self.instructions)} {escape(item.sentence)} {{####{escape(ref)}}}"

    def moodle_xml(self, item: Item, quiz) -> None:
        import html
        from xml.etree import ElementTree as ET

        e = html.escape
        q = quiz.add("essay", item, f"<p>{e(self.instructions)}</p><p>{e(item.sentence)}</p>")
        ET.SubElement(q, "responseformat").text = "plain"
        ET.SubElement(q, "responsefieldlines").text = "3"
        gi = ET.SubElement(q, "graderinfo", format="html")
        ET.SubElement(gi, "text").text = e("Reference translation: " + item.translation) if item.translation \
            else "No reference translation."
