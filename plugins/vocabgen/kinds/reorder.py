"""reorder: the sentence cut into constituent tiles from treegram's own parse (`exercises.tiles_for`: the Viterbi
tree under the embedded PCFG), shown shuffled (never in the right order) with the final punctuation apart; the key
is the sentence."""

from __future__ import annotations

import numpy as np

from treegram.exercises import ExerciseKind, Item, ItemRequest


class Reorder(ExerciseKind):
    name = "reorder"
    title = "Word order"
    instructions = "Put the parts in the right order to make a sentence."
    help = "reorder (tiles)"
    order = 30
    targets_word = False
    trains = {"word-order": False}

    def make(self, s, word: str, rng, request: ItemRequest) -> Item | None:
        from treegram.plugins.vocabgen.exercises import MAX_TILE, cased_tokens, tiles_for

        for max_tile in (MAX_TILE, 2, 1):  # short sentences are cut finer so that there is something to order
            tiles, end, _ = tiles_for(cased_tokens(s), max_tile)
            if len(tiles) >= 3:
                break
        if len(tiles) < 2:
            return None
        order = np.asarray(rng.permutation(len(tiles)))
        if np.all(order == np.arange(len(tiles))):
            order = np.roll(order, 1)
        shown = tuple(tiles[i] for i in order)
        return request.item(self.name, s, word, prompt=" / ".join(shown), answer=s.text, tiles=shown, end=end)

    def question(self, item: Item) -> str:
        return " / ".join(item.tiles) + (f"  ({item.end})" if item.end else "")

    def key_line(self, item: Item) -> str:
        return item.sentence

    def html(self, item: Item, escape) -> str:
        return "".join(f'<span class="tile">{escape(t)}</span>' for t in item.tiles) + (
            f" {escape(item.end)}" if item.end else "")

    def anki(self, item: Item, escape) -> str:
        return "".join(f"<span class=tile>{escape(t)}</span>" for t in item.tiles) + (
            f" {escape(item.end)}" if item.end else "")

    def gift(self, item: Item, escape) -> str:
        return f"{escape(self.instructions)} {escape(self.question(item))} {{={escape.answer(item.sentence)}}}"

    def moodle_xml(self, item: Item, quiz) -> None:
        import html
        from xml.etree import ElementTree as ET

        e = html.escape
        tiles = " / ".join(e(t) for t in item.tiles) + (f" ({e(item.end)})" if item.end else "")
        q = quiz.add("shortanswer", item, f"<p>{e(self.instructions)}</p><p>{tiles}</p>")
        ET.SubElement(q, "usecase").text = "0"
        quiz.answer(q, item.sentence, 100)
