"""choice (multiple choice): the practised word is blanked as for cloze and offered with up to three distractors of
the same part of speech, inflected like the answer (lemminflect), all in the sheet's vocabulary; prepositions and
determiners draw from their closed classes (`exercises.distractors`, fit checks in vocabgen's choice.py)."""

from __future__ import annotations

from treegram.errors import InputError
from treegram.exercises import ExerciseKind, Item, ItemRequest


class Choice(ExerciseKind):
    name = "choice"
    aliases = ("mc", "multiple-choice")
    title = "Multiple choice"
    instructions = "Choose the word that fits the blank."
    help = "choice/mc (multiple choice)"
    order = 20
    trains = {"closed-class": False, "word-choice": False}
    shortfall = "the others admit more than one answer among the options the vocabulary gives"

    def make(self, s, word: str, rng, request: ItemRequest) -> Item | None:
        from treegram.plugins.vocabgen import exercises as ex
        from treegram.plugins.vocabgen.vocab import common_words

        b = ex.blank(s, word, request, parse=True)
        if b is None:
            return None
        vocab = request.vocab
        if vocab is None:
            raise InputError("multiple choice needs the vocabulary", hint="pass vocab= to make_item")
        tokens, idx, form, answer, parsed, tag = b.tokens, b.index, b.form, b.answer, b.parsed, b.tag
        if sum(t.lower() == form.lower() for t in tokens) > 1 or tag in ("JJR", "JJS", "RBR", "RBS", "RB", "WRB"):
            return None  # "darker and darker", "bigger than", "too dark to play outside / tonight": any word fits
        if tag in ("NNP", "NNPS") and form.lower() in common_words():  # a capital at the start is no name
            tag = "NNS" if tag == "NNPS" or (form.lower() != ex.lemma_of(form.lower())
                                             and form.lower().endswith("s")) else "NN"
        if answer[:1].isupper() and answer != "I" and form.lower() in common_words():
            answer = form.lower()  # options in lower case: a capital would give the first word away
        if tag == "MD":
            return None  # "Would / could / will you ...": modals admit each other
        from treegram.plugins.vocabgen.quality import profile_classes, tag_class

        listed = profile_classes(word)
        if listed and tag_class(tag, idx, parsed) not in listed:
            return None  # "a red rose" tagged as the verb rise: options of the wrong part of speech
        if tag and tag.startswith("JJ"):
            # "The weather will be _____ (fair / interesting)", "a _____ sailor (poor / dear)": most adjectives
            # fit most slots, and what an adjective describes is too sparse in the corpus to tell them apart
            return None
        wrong = ex.distractors(form, tag, vocab, rng, exclude=s.tokens, tokens=tokens, index=idx, parsed=parsed,
                               used=request.used, closed=bool(request.focus))
        if len(wrong) < 2:
            return None
        if request.used is not None:
            request.used.update(w.lower() for w in wrong)  # no word twice as a distractor on one sheet
        options = [answer] + wrong
        order = rng.permutation(len(options))
        return request.item(self.name, s, word, prompt=b.prompt, answer=answer,
                            choices=tuple(options[int(i)] for i in order), hint=b.hint)

    def spare_factor(self, hints: bool, focus: bool) -> int:
        # spares replace a blank that admits more than one option or is open ("This _____ will be hers.")
        return 8

    def gift(self, item: Item, escape) -> str:
        from treegram.plugins.vocabgen.formats import gift_blank

        return gift_blank(item, "{" + " ".join(("=" if c == item.answer else "~") + escape(c)
                                               for c in item.choices) + "}", escape)

    def moodle_xml(self, item: Item, quiz) -> None:
        import html
        from xml.etree import ElementTree as ET

        q = quiz.add("multichoice", item, f"<p>{html.escape(self.instructions)}</p><p>{html.escape(item.prompt)}</p>")
        ET.SubElement(q, "single").text = "true"
        ET.SubElement(q, "shuffleanswers").text = "1"
        ET.SubElement(q, "answernumbering").text = "abc"
        for c in item.choices:
            quiz.answer(q, c, 100 if c == item.answer else 0)
