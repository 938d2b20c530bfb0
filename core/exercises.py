"""Exercise sheets as data, and the registries of exercise kinds and export formats (hooks
``register_exercise_kinds`` / ``register_export_formats`` in `treegram.hookspecs`).

An `Item` is one exercise (what the sheet shows and its key); a `Sheet` is the numbered items with the sheet's
words, notes and names.  What an item of a kind looks like is decided by its `ExerciseKind`: how it is built from a
sentence (``make``), its one-line question and key, and its rendering in the formats that have a question type of
their own (HTML/Anki markup, Moodle GIFT, Moodle XML).  An `ExportFormat` turns a whole sheet into bytes; formats
render every item through its kind's methods, so a plugin's new kind appears in every format and a plugin's new
format shows every kind.

The built-in kinds (cloze, choice, reorder, translate) and formats (md, html, pdf, gift, moodle-xml, anki, json)
are contributed by the vocabgen plugin through the same hooks as a third party's.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from typing import Any

import attrs

from treegram.errors import InputError, TreegramError


@attrs.frozen
class Item:
    """One exercise: what the sheet shows (`prompt`, `choices`, `tiles`, `hint`) and the key (`answer`)."""

    kind: str
    word: str
    prompt: str
    answer: str
    sentence: str
    choices: tuple[str, ...] = ()
    tiles: tuple[str, ...] = ()
    end: str = ""
    hint: str | None = None
    source: str = "generated"
    provenance: str = ""
    translation: str | None = None
    focus: str = ""
    number: int = 0
    #: other word-box forms a cloze blank admits (accepted in the key and in GIFT / Moodle)
    alternatives: tuple[str, ...] = ()
    #: the sentence's tokens (cased as displayed), for checks on the finished sheet
    tokens: tuple[str, ...] = attrs.field(default=(), repr=False, eq=False)

    @property
    def uid(self) -> str:
        """Stable id (kind, word, sentence): Anki note GUIDs and Moodle question names use it."""
        return hashlib.sha1(f"{self.kind}\x1f{self.word}\x1f{self.sentence}".encode()).hexdigest()[:16]

    @property
    def spec(self) -> ExerciseKind:
        """The item's registered kind."""
        return get_kind(self.kind)

    def question(self) -> str:
        """The prompt as one line of plain text (its kind decides: reorder tiles joined by slashes, ...)."""
        return self.spec.question(self)

    def key(self) -> str:
        """The answer as one line (its kind decides: the masked word(s), the reference translation, ...)."""
        return self.spec.key(self)

    def key_line(self) -> str:
        """The answer key's line for this item (the key with the sentence where the key is not the sentence)."""
        return self.spec.key_line(self)

    def to_json(self) -> dict:
        out = {"number": self.number, "id": self.uid, "kind": self.kind, "word": self.word,
               "prompt": self.question(), "answer": self.key(), "sentence": self.sentence, "source": self.source}
        if self.choices:
            out["choices"] = list(self.choices)
        if self.tiles:
            out["tiles"] = list(self.tiles)
        if self.hint:
            out["hint"] = self.hint
        if self.provenance:
            out["provenance"] = self.provenance
        out.update(self.spec.json_fields(self))
        if self.focus:
            out["focus"] = self.focus
        if self.alternatives:
            out["accepted"] = [self.answer, *self.alternatives]
        return out


@attrs.frozen
class Sheet:
    title: str
    vocabulary: str
    words: tuple[str, ...]
    items: tuple[Item, ...]
    notes: tuple[str, ...] = ()
    hints: bool = False
    #: proper names the sentences use that are not in the word list (vocab.PROPER_NAMES: Tom, Japan, ...)
    names: tuple[str, ...] = ()

    def kinds(self) -> list[str]:
        """The kinds on the sheet, in registry order (a mixed sheet has one section per kind)."""
        present = {i.kind for i in self.items}
        return [k for k in kind_names() if k in present]

    def section(self, kind: str) -> list[Item]:
        return [i for i in self.items if i.kind == kind]

    def word_box(self) -> list[str]:
        """The forms a pupil chooses from for the whole sheet (cloze without hints: its masked forms), sorted
        (position never gives an answer away)."""
        box: set[str] = set()
        for k in self.kinds():
            box.update(get_kind(k).word_box(self.section(k)))
        return sorted(box, key=str.lower)

    def section_box(self, kind: str) -> list[str]:
        """The word box printed above the section of `kind` (empty: none)."""
        return sorted(set(get_kind(kind).word_box(self.section(kind))), key=str.lower)

    def to_json(self) -> dict:
        return {"format": "treegram-exercises", "version": 2, "title": self.title, "vocabulary": self.vocabulary,
                "words": list(self.words), "kinds": self.kinds(),
                "instructions": {k: get_kind(k).instructions for k in self.kinds()}, "word_box": self.word_box(),
                "notes": list(self.notes), "names": list(self.names), "items": [i.to_json() for i in self.items]}

    def replace(self, number: int, item: Item) -> Sheet:
        """The same sheet with item `number` replaced (the new item takes its number and place)."""
        items = tuple(attrs.evolve(item, number=number) if i.number == number else i for i in self.items)
        return attrs.evolve(self, items=items)


@attrs.frozen
class ItemRequest:
    """What `ExerciseKind.make` is asked for besides the sentence and the word.

    ``vocab`` is the sheet's vocabulary; ``hints`` asks for the lemma after a blank; ``focus`` labels the error
    type practised (``--from-corrections``); ``pos`` (a letter of a CLC code: V, N, T, ...) is the part of speech
    the word must have in the sentence; ``used`` collects distractors already on the sheet (no word twice)."""

    vocab: Any = None
    hints: bool = False
    focus: str = ""
    pos: str | None = None
    used: set[str] | None = None

    def item(self, kind: str, sentence, word: str, **fields) -> Item:
        """An `Item` of `kind` for `sentence` (any object with ``text``, ``source``, ``provenance`` and
        ``translation``: a vocabgen Sentence) practising `word`."""
        return Item(kind, word=word, sentence=sentence.text, source=sentence.source,
                    provenance=sentence.provenance, translation=sentence.translation, focus=self.focus, **fields)


class ExerciseKind:
    """The contract of an exercise kind (register instances with the ``register_exercise_kinds`` hook).

    Subclasses set ``name``, ``title`` (a sheet section's heading), ``instructions`` and implement ``make``.  The
    defaults of the rendering methods give a plain short-answer question (prompt -> answer); override them where
    the kind has its own shape.  Formats call: ``question``/``key_line`` (Markdown, PDF, the answer key),
    ``html`` (HTML page, Anki card front), ``gift`` and ``moodle_xml`` (Moodle), ``json_fields`` (JSON)."""

    #: the value of ``treegram exercises --kind`` (and the JSON item's ``kind``)
    name: str = ""
    #: other values accepted for --kind
    aliases: tuple[str, ...] = ()
    #: section heading on a sheet with several kinds, and the title of a sheet of one kind
    title: str = ""
    #: the line that tells the pupil what to do
    instructions: str = ""
    #: a few words for the --kind help ("cloze (fill in)")
    help: str = ""
    #: where the kind's section goes on a sheet with several kinds (lower first; ties by name)
    order: float = 100.0
    #: whether an item masks the practised word in its sentence (then a required part of speech is checked)
    targets_word: bool = True
    #: what ``treegram exercises --from-corrections`` may ask of it: practice need -> lemma hints wanted
    #: (needs: "closed-class", "word-choice", "form", "spelling", "word", "word-order"; see from_corrections)
    trains: dict[str, bool] = {}
    #: why a word may get fewer items than asked (appended to the sheet's note), or ""
    shortfall: str = ""

    def make(self, sentence, word: str, rng, request: ItemRequest) -> Item | None:
        """One item practising `word` built from `sentence` (a vocabgen Sentence), or None when the sentence
        makes no good item.  `rng` is the sheet's numpy Generator (use it for every random choice)."""
        raise NotImplementedError

    def spare_factor(self, hints: bool, focus: bool) -> int:
        """Sentences to draw per wanted item: more than 1 when `make` often returns None."""
        return 1

    def finish(self, items: list[Item], remake: Callable[[Item], Iterable[Item]]) -> list[Item]:
        """A pass over the whole sheet's items (all kinds) once they are built; `remake(item)` yields other
        candidate items for the same word from spare sentences.  The default keeps them."""
        return items

    def word_box(self, items: list[Item]) -> list[str]:
        """Forms this kind's section adds to the sheet's word box."""
        return []

    def question(self, item: Item) -> str:
        return item.prompt

    def key(self, item: Item) -> str:
        if item.alternatives:
            return f"{item.answer} (also accepted: {', '.join(item.alternatives)})"
        return item.answer

    def key_line(self, item: Item) -> str:
        return f"{self.key(item)}  ({item.sentence})"

    def json_fields(self, item: Item) -> dict:
        return {}

    def html(self, item: Item, escape: Callable[[str], str]) -> str:
        """The question as HTML markup (choices are added by the format)."""
        return escape(self.question(item))

    def anki(self, item: Item, escape: Callable[[str], str]) -> str:
        """The Anki card front's question markup (choices are added by the format)."""
        return self.html(item, escape)

    def gift(self, item: Item, escape) -> str:
        """The GIFT question text after the ``::name::``: `escape(text)` escapes text Moodle shows as HTML
        (question, options, feedback), `escape.answer(text)` a short answer (formats.GiftEscape)."""
        return f"{escape(self.instructions)} {escape(self.question(item))} {{={escape.answer(item.answer)}}}"

    def moodle_xml(self, item: Item, quiz) -> None:
        """Add the item to a Moodle XML quiz: ``quiz.add(qtype, item, html_text)`` makes the question element,
        ``quiz.answer(question, text, fraction)`` an answer (see formats.MoodleQuiz)."""
        import html

        from xml.etree import ElementTree as ET

        q = quiz.add("shortanswer", item, f"<p>{html.escape(self.instructions)}</p>"
                                          f"<p>{html.escape(self.question(item))}</p>")
        ET.SubElement(q, "usecase").text = "0"
        quiz.answer(q, item.answer, 100)


@attrs.frozen
class ExportFormat:
    """An export format (register instances with the ``register_export_formats`` hook): the value of
    ``treegram exercises --format``, the file extension, whether it is binary, the media type the web page
    serves it with, a few words for --help, and ``render(sheet) -> str | bytes`` (text is written as UTF-8)."""

    name: str
    extension: str
    render: Callable[[Sheet], str | bytes] = attrs.field(eq=False)
    binary: bool = False
    media_type: str = "text/plain; charset=utf-8"
    help: str = ""
    #: position in listings (--format choices, the web page's download links)
    order: float = 100.0

    def to_bytes(self, sheet: Sheet) -> bytes:
        out = self.render(sheet)
        return out.encode("utf-8") if isinstance(out, str) else out


# -- registries -----------------------------------------------------------------------------------------------
_cache: dict[str, tuple[tuple[int, int], dict, dict]] = {}


def _registry(hook: str, check, plugins: bool = False) -> dict:
    """The contributions to `hook`, sorted by (order, name) and checked, cached per plugin manager and its plugin
    count (a plugin registered at run time is seen); with `plugins`, name -> contributing plugin instead."""
    from treegram import plugin_manager

    pm = plugin_manager.get_plugin_manager()
    key = (id(pm), len(pm.get_plugins()))
    hit = _cache.get(hook)
    if hit is None or hit[0] != key:
        found = getattr(plugin_manager, hook[len("register_"):])()
        for c in found.values():
            check(c)
        ordered = sorted(found.items(), key=lambda kv: (kv[1].obj.order, kv[0]))
        hit = (key, {name: c.obj for name, c in ordered}, {name: c.plugin for name, c in ordered})
        _cache[hook] = hit
    return hit[2] if plugins else hit[1]


def _check_kind(c) -> None:
    k = c.obj
    if not isinstance(k, ExerciseKind) or not k.name or not k.title or not k.instructions:
        raise InputError(f"plugin {c.plugin!r} registers an exercise kind that is not an ExerciseKind with a name, "
                         "title and instructions", hint="see treegram.exercises.ExerciseKind")


def _check_format(c) -> None:
    if not isinstance(c.obj, ExportFormat) or not c.obj.name or not c.obj.extension.startswith("."):
        raise InputError(f"plugin {c.plugin!r} registers an export format that is not an ExportFormat with a name "
                         "and an extension starting with a dot", hint="see treegram.exercises.ExportFormat")


def exercise_kinds() -> dict[str, ExerciseKind]:
    """name -> kind, every registered exercise kind in section order."""
    return _registry("register_exercise_kinds", _check_kind)


def export_formats() -> dict[str, ExportFormat]:
    """name -> format, every registered export format in listing order."""
    return _registry("register_export_formats", _check_format)


def kind_names() -> list[str]:
    return list(exercise_kinds())


def kind_choices() -> list[str]:
    """Every value --kind accepts: the names and their aliases, in order."""
    return [n for k in exercise_kinds().values() for n in (k.name, *k.aliases)]


def get_kind(kind: str) -> ExerciseKind:
    """The kind registered as `kind` (or with `kind` as an alias); a clear error for an unknown one."""
    kinds = exercise_kinds()
    if kind in kinds:
        return kinds[kind]
    for k in kinds.values():
        if kind in k.aliases:
            return k
    known = ", ".join(k.name + (f" ({', '.join(k.aliases)})" if k.aliases else "") for k in kinds.values())
    raise InputError(f"unknown exercise kind {kind!r}", hint=f"use {known}")


def third_party(kinds: Iterable[str] = (), formats: Iterable[str] = ()) -> list[str]:
    """The plugins outside the treegram distribution that contributed these kinds / formats (for naming the
    plugin whose code failed, instead of a traceback)."""
    from treegram.plugin_manager import plugin_distribution

    who = [_registry("register_exercise_kinds", _check_kind, plugins=True).get(k) for k in kinds]
    who += [_registry("register_export_formats", _check_format, plugins=True).get(f) for f in formats]
    return sorted({p for p in who if p and not p.startswith("treegram")
                   and plugin_distribution(p).get("package") != "treegram"})


def plugin_failure(exc: BaseException, plugins: list[str], what: str) -> TreegramError:
    """One clear error for an exception raised inside a plugin's exercise kind or export format."""
    from treegram.plugin_manager import plugin_distribution

    names = ", ".join(repr(p) for p in plugins)
    dist = plugin_distribution(plugins[0])
    where = dist.get("url") or (f"the author of {dist['package']}" if dist.get("package") else "its author")
    return TreegramError(f"plugin {names} failed while {what}: {type(exc).__name__}: {exc}",
                         hint=f"this is a bug in the plugin, not in your input; report it to {where} "
                              "(`treegram plugins` lists where it comes from)")


def get_format(fmt: str) -> ExportFormat:
    formats = export_formats()
    if fmt not in formats:
        raise InputError(f"unknown format {fmt!r}", hint="use one of " + ", ".join(formats))
    return formats[fmt]
