"""What a printed or imported sheet looks like (issue 25 item 6): items kept on one PDF page, keys never justified,
the names and Name/Date lines, GIFT punctuation, hyphenated words, and the CLI's word checks and --json."""

from __future__ import annotations

import json
import re
import zlib

import numpy as np
import pytest

from treegram.cli.app import main
from treegram.plugins.vocabgen import exercises as ex
from treegram.plugins.vocabgen import formats as fm
from treegram.plugins.vocabgen.generator import Sentence
from treegram.plugins.vocabgen.spinedep import surface
from treegram.plugins.vocabgen.vocab import cefr_vocabulary


def _item(n: int, kind: str = "choice", text: str = "The dog sat above the water.", **kw) -> ex.Item:
    base = dict(word="water", prompt=text.replace("water", ex.BLANK), answer="water", sentence=text,
                choices=("water", "music", "idea", "money") if kind == "choice" else (), number=n,
                source="corpus", provenance="graded-enja easy/1.tsv:1")
    base.update(kw)
    return ex.Item(kind, **base)


def _pdf_pages(data: bytes) -> list[str]:
    """The text drawn on each page of an fpdf2 PDF (page content streams, decompressed), in page order."""
    streams = [zlib.decompress(m.group(1)) if b"FlateDecode" in data[max(0, m.start() - 200):m.start()]
               else m.group(1) for m in re.finditer(rb"stream\r?\n(.*?)\r?\nendstream", data, re.S)]
    pages = []
    for st in streams:
        text = st.decode("latin-1")
        if " Tj" in text or "TJ" in text:
            pages.append("".join(re.findall(r"\(((?:\\.|[^\\)])*)\)\s*Tj", text)).replace("\\(", "(")
                         .replace("\\)", ")"))
    return pages


def test_pdf_keeps_each_choice_item_on_one_page_and_prints_names_and_date():
    items = tuple(_item(n) for n in range(1, 41))
    sheet = ex.Sheet("Multiple choice", "cefr:A1", ("water",), items, names=("Tom", "Japan"))
    pages = _pdf_pages(fm.render(sheet, "pdf"))
    assert len(pages) >= 3
    assert "Name:" in pages[0] and "Date:" in pages[0] and "Names on this sheet: Tom, Japan" in pages[0]
    for n in range(1, 41):
        where = [k for k, p in enumerate(pages) if re.search(rf"(?<!\d){n}\.  The dog", p)]
        assert len(where) == 1
        k = where[0]
        after = pages[k].split(f"{n}.  The dog", 1)[1]
        assert after.startswith(" sat above the _____.") or "(a) water" in after.split("The dog")[0], n
        assert "(a)" in after  # the options follow the stem on the same page


def test_keys_are_left_aligned_and_every_printed_format_has_the_name_lines():
    long = "Because the train did not wait for me, I had to walk all the way to the station in the rain."
    items = (_item(1, "translate", text=long, choices=()),)
    sheet = ex.Sheet("Translation", "cefr:A1", ("train",), items, names=("Tom",))
    pdf = fm.render(sheet, "pdf")
    assert b" Tw" not in pdf  # fpdf2 justifies by word spacing (Tw); a left-aligned key never sets it
    for fmt in ("md", "html"):
        text = fm.render(sheet, fmt).decode()
        assert "Name:" in text and "Date:" in text and "Names on this sheet: Tom" in text


def test_gift_puts_punctuation_right_after_the_answer():
    sheet = ex.Sheet("t", "v", ("water",), (_item(1), _item(2, "cloze", choices=())))
    gift = fm.render(sheet, "gift").decode()
    assert "above the {=water ~music ~idea ~money}." in gift and "above the {=water}." in gift
    assert " ." not in gift
    assert fm._gift_join("I like", "{=tea}", ", thanks.") == "I like {=tea}, thanks."
    assert fm._gift_join("(", "{=a}", ")") == "({=a})"


def test_hyphenated_words_stay_whole_in_prompts():
    toks = tuple("we get up at six - thirty .".split())
    assert surface(list(toks)) == "We get up at six-thirty."
    s = Sentence(toks, "We get up at six-thirty.", "six")
    item = ex.make_item(s, "get", "cloze", np.random.default_rng(0))
    assert item.prompt == "We _____ up at six-thirty."
    generated = Sentence(toks, surface(list(toks)), "get")
    assert ex.make_item(generated, "get", "cloze", np.random.default_rng(0)).prompt == "We _____ up at six-thirty."


def test_proper_noun_tags_do_not_capitalize_common_words():
    assert surface([("PRP", "he"), ("VBD", "looked"), ("IN", "in"), ("PRP$", "your"), ("NNP", "dictionary"),
                    (".", ".")]) == "He looked in your dictionary."
    assert surface([("PRP", "i"), ("VBP", "love"), ("NNP", "tokyo"), ("IN", "in"), ("NNP", "may"), (".", ".")]) \
        == "I love Tokyo in May."


def test_words_above_the_level_fail_before_any_work(capsys, monkeypatch):
    from treegram.plugins.vocabgen import default as vdefault

    def no_model(*a, **k):  # the check must come before the model loads
        raise AssertionError("the model was loaded")

    monkeypatch.setattr(vdefault, "load_vocabgen", no_model)
    assert main(["exercises", "--vocab", "cefr:A1", "--words", "school,government,goverment"]) == 2
    err = capsys.readouterr().err
    assert "government: CEFR-J says A2, above cefr:A1" in err
    assert "goverment: not in CEFR-J" in err and "did you mean government" in err and "--allow-above" in err
    assert err.count("\n") == 1  # one line


def test_exercises_json_and_allow_above(capsys):
    assert main(["exercises", "--vocab", "cefr:A1", "--words", "water,government", "--per-word", "2",
                 "--allow-above", "--json", "--seed", "1"]) == 0
    out, err = capsys.readouterr()
    sheet = json.loads(out)
    assert sheet["format"] == "treegram-exercises" and sheet["items"]
    assert "water" in {i["word"] for i in sheet["items"]} and "government: CEFR-J says A2" in err
    assert "kept (--allow-above)" in err
    assert main(["exercises", "--vocab", "cefr:A1", "--words", "water", "--format", "pdf", "--json"]) == 2
    assert "--json prints the sheet" in capsys.readouterr().err


@pytest.mark.parametrize("word, lv", [("government", "A2"), ("governments", "A2"), ("school", None)])
def test_practice_word_levels(word, lv):
    from treegram.plugins.vocabgen.vocab import practice_word_problems

    got = practice_word_problems([word], cefr_vocabulary("A1"))
    assert (got == []) if lv is None else (f"CEFR-J says {lv}" in got[0])


def test_cloze_alternatives_are_accepted_in_the_key_and_moodle():
    item = ex.Item("cloze", word="family", prompt="How about your _____?", answer="family",
                   sentence="How about your family?", number=1, alternatives=("friend",))
    sheet = ex.Sheet("t", "cefr:A1", ("family",), (item,))
    assert "{=family =friend}?" in fm.render(sheet, "gift").decode()
    assert "{1:SHORTANSWER:=family~=friend}" in fm.render(sheet, "moodle-xml").decode()
    assert "family (also accepted: friend)" in fm.render(sheet, "md").decode()
    assert json.loads(fm.render(sheet, "json"))["items"][0]["accepted"] == ["family", "friend"]


def test_cloze_blank_that_admits_another_box_word_is_swapped_for_a_spare():
    from treegram.plugins.vocabgen.spinedep import surface as surf

    def S(text, word):
        return Sentence(tuple(text.split()), surf(text.split()), word)

    groups = {"water": [S("this water is hers .", "water"), S("he drinks a glass of water every morning .", "water")],
              "book": [S("she wrote a book about animals .", "book")]}
    if ex.analyse(("a", "b")) is None:
        pytest.skip("needs the spaCy tagger")
    sheet = ex.make_sheet(groups, "cloze", np.random.default_rng(0), cefr_vocabulary("A1"), per_word=1)
    texts = {i.sentence for i in sheet.items}
    assert "He drinks a glass of water every morning." in texts and "This water is hers." not in texts
    assert all(not i.alternatives for i in sheet.items)


def test_serve_page_reports_words_above_the_level():
    from treegram.errors import InputError
    from treegram.plugins.vocabgen.serve import Workbench, vocab_choices

    class NoModel:  # the check comes before any generation
        generation = system = None

    bench = Workbench(NoModel(), vocab_choices(None))
    bench._gens["cefr:A1"] = (None, cefr_vocabulary("A1"))
    with pytest.raises(InputError, match="government: CEFR-J says A2, above cefr:A1"):
        bench.build({"vocab": "cefr:A1", "words": "school, government", "kind": "cloze", "count": "1"})
