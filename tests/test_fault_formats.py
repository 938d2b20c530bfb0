"""Markup injection into exercise sheets (issue 27): sentence text is data in every export format.

A model whose words include ``<script>``, HTML tags, Markdown markup and GIFT's special characters (``~ = # { }
:``) makes sheets through the CLI (`treegram exercises`), and a hand-made sheet with every built-in kind carries
the same text in its prompts, options, tiles, translation and provenance.  Markdown must show the text as written
(rendered by CommonMark: no tag, no emphasis, no link), GIFT must keep one answer set per question and give Moodle
no HTML in what it renders as HTML (question text, options, feedback).  Tally as in test_fault_suite: cases, clean
errors, tracebacks, inputs destroyed, silent wrong outputs; `test_summary` prints the counts.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest

from faults import new_tally, run_cli, summary
from toy_data import dep

from treegram.plugins.vocabgen.exercises import BLANK, Item, Sheet
from treegram.plugins.vocabgen.formats import render
from treegram.plugins.vocabgen.model import VocabgenModel

markdown_it = pytest.importorskip("markdown_it")  # a dependency of rich

TALLY = new_tally("silent_wrong")
NASTY = ["<script>alert(1)</script>", "{=x~y#z:}", "*loud*", "<b>x</b>", "[a](http://e.x)"]


CORPUS = [dep(f"The {a} {v} {w} .", "DT NN VBD NN .", "2 3 0 3 3")
          for a, v, w in [("dog", "ate", NASTY[0]), ("dog", "saw", NASTY[1]), ("cat", "ate", NASTY[2]),
                          ("cat", "saw", NASTY[3]), ("dog", "liked", NASTY[4])]]
VOCAB = "words:the,dog,cat,ate,saw,liked," + ",".join(NASTY)


def run_case(argv, inputs=(), capsys=None):
    code, _out, run_case.err = run_cli(TALLY, argv, inputs, capsys)
    return code


def wrong(problems: list[str], what: str) -> None:
    """Count a silent wrong output (the sheet was written, but shows or runs markup) and fail with the reasons."""
    if problems:
        TALLY["silent_wrong"] += 1
        raise AssertionError(f"{what}: " + "; ".join(problems[:5]))


# -- what a correct sheet looks like ----------------------------------------------------------------------------
_TAG = re.compile(r"<(?!/?(?:h1|h2|p|ol|ul|li|hr|br|code)\b)[a-z/]", re.I)


def markdown_problems(md: str, texts: list[str]) -> list[str]:
    """CommonMark renders no tag, emphasis or link from the text, and each text shows as written."""
    rendered = markdown_it.MarkdownIt("commonmark").render(md)
    out = [f"markup in the rendered Markdown: {m.group(0)!r}" for m in _TAG.finditer(rendered)]
    plain = html.unescape(re.sub(r"<[^>]+>", "", rendered))
    out += [f"{t!r} does not show as written" for t in texts if t not in plain]
    return out


def _split_gift(body: str) -> tuple[list[str], list[str]]:
    """(text segments, answer sets) of a GIFT question body, honouring backslash escapes."""
    texts, answers, cur, depth, i = [""], [], "", 0, 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            cur += body[i:i + 2]
            i += 2
            continue
        if ch == "{" and depth == 0:
            texts[-1] += cur
            cur, depth = "", 1
        elif ch == "}" and depth == 1:
            answers.append(cur)
            texts.append("")
            cur, depth = "", 0
        else:
            cur += ch
        i += 1
    texts[-1] += cur
    return texts, answers


def _gift_unescape(s: str) -> str:
    return re.sub(r"\\(.)", r"\1", s)


def gift_problems(gift: str, texts: list[str]) -> list[str]:
    """Each question has one answer set; no raw HTML where Moodle renders HTML (question text, multiple-choice
    options, essay feedback); each text is there once its escapes are undone."""
    out, seen = [], []
    for line in gift.splitlines():
        if not line.startswith("::"):
            continue
        m = re.match(r"::((?:\\.|[^:\\])*)::(.*)$", line)
        if not m:
            out.append(f"no question name in {line[:60]!r}")
            continue
        parts, answers = _split_gift(m.group(2))
        if len(answers) != 1:
            out.append(f"{len(answers)} answer sets in {line[:80]!r}")
            continue
        rendered = [p for p in parts]
        ans = answers[0]
        if ans.startswith("####"):
            rendered.append(ans[4:])
        elif "~" in re.sub(r"\\.", "", ans):  # multiple choice: the options are HTML in Moodle
            rendered += re.split(r"(?<!\\)[=~]", ans)
        for r in rendered:
            if "<" in _gift_unescape(r):
                out.append(f"raw HTML in {r[:60]!r}")
        seen.append(html.unescape(_gift_unescape("".join(parts) + " " + ans)))
    joined = "\n".join(seen)
    out += [f"{t!r} missing" for t in texts if t not in joined]
    return out


# -- through the CLI ----------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def model(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("nasty") / "nasty.model"
    VocabgenModel.train(CORPUS * 2).save(path)
    return path


@pytest.mark.parametrize("kind", ["cloze", "reorder", "translate"])
def test_cli_sheets_of_a_model_with_markup(model, tmp_path, capsys, kind):
    base = ["-q", "exercises", "--allow-unchecked", "--model", model, "--vocab", VOCAB, "--words", "dog,cat",
            "--per-word", "2", "--kind", kind, "--seed", "1"]
    assert run_case(base + ["--format", "json", "--out", tmp_path / "s.json"], [model], capsys) == 0
    sentences = [i["sentence"] for i in json.loads((tmp_path / "s.json").read_text(encoding="utf-8"))["items"]]
    used = [t for t in NASTY if any(t in s for s in sentences)]
    assert used, f"the sheet should use sentences with markup: {sentences}"
    for fmt, check in (("md", markdown_problems), ("gift", gift_problems)):
        out = tmp_path / f"s.{fmt}"
        assert run_case(base + ["--format", fmt, "--out", out], [model], capsys) == 0
        wrong(check(out.read_text(encoding="utf-8"), used), f"{kind} {fmt}")


# -- a sheet with every built-in kind -------------------------------------------------------------------------------
S = "Tom said " + " ".join(NASTY) + " to his dog."


def crafted() -> Sheet:
    items = (
        Item("cloze", word="dog", prompt=S.replace("dog", BLANK), answer="dog", sentence=S, number=1,
             source="corpus", provenance="t<b>x</b>.tsv:1"),
        Item("choice", word="dog", prompt=S.replace("dog", BLANK), answer="dog", sentence=S, number=2,
             choices=("dog", "<i>cat</i>", "b{=}ird", "fish")),
        Item("reorder", word="dog", prompt="x", answer=S, sentence=S, number=3,
             tiles=("Tom said <script>", "*loud* {=x}"), end="."),
        Item("translate", word="dog", prompt=S, answer=S, sentence=S, number=4, translation="<script>x</script> {~}"),
    )
    return Sheet("Test <sheet> *x*", "words:a", ("dog", "<b>"), items, names=("<Tom>",))


def _render_case(fmt: str) -> str:
    TALLY["cases"] += 1
    try:
        data = render(crafted(), fmt)
    except BaseException as exc:
        TALLY["tracebacks"] += 1
        raise AssertionError(f"render {fmt}: {type(exc).__name__}: {exc}") from exc
    TALLY["ok"] += 1
    return data.decode("utf-8")


def test_markdown_shows_markup_as_text():
    md = _render_case("md")
    wrong(markdown_problems(md, [S, "Test <sheet> *x*", "<i>cat</i>", "b{=}ird", "<script>x</script> {~}",
                                 "Tom said <script> / *loud* {=x}", "t<b>x</b>.tsv:1", "<Tom>"]), "md")
    assert f"to his {BLANK}." in md  # the blank itself is not escaped


def test_gift_escapes_html_and_its_specials():
    gift = _render_case("gift")
    wrong(gift_problems(gift, ["<i>cat</i>", "b{=}ird", "<script>x</script> {~}", "Tom said <script> / *loud* {=x}",
                               S.replace("dog.", "")]), "gift")
    # a short answer is what the pupil types: plain text (Moodle escapes it when it shows it), GIFT-escaped only
    assert "{=Tom said <script>alert(1)</script>" in gift


@pytest.mark.parametrize("fmt", ["html", "moodle-xml"])
def test_html_formats_already_escape(fmt):
    out = _render_case(fmt)
    problems = ["raw <script>"] if "<script" in out else []
    wrong(problems, fmt)


def test_a_plugin_kind_or_format_that_raises_is_one_clear_error(model, tmp_path, capsys):
    """A third party's kind or format that raises gives one line naming the plugin, not a traceback."""
    from treegram.exercises import ExerciseKind, ExportFormat
    from treegram.plugin_manager import get_plugin_manager, hookimpl

    class Boom(ExerciseKind):
        name, title, instructions = "boom", "Boom", "Boom."

        def make(self, sentence, word, rng, request):
            raise ZeroDivisionError("boom")

    class BrokenPlugin:
        @hookimpl
        def register_exercise_kinds(self, register):
            register(Boom())

        @hookimpl
        def register_export_formats(self, register):
            register(ExportFormat("boomfmt", ".boom", lambda sheet: 1 / 0))

    pm = get_plugin_manager()
    pm.register(BrokenPlugin(), name="boom-plugin")
    try:
        base = ["-q", "exercises", "--allow-unchecked", "--model", model, "--vocab", VOCAB, "--words", "dog,cat",
                "--per-word", "1", "--seed", "1"]
        for extra in (["--kind", "boom", "--format", "md"], ["--kind", "translate", "--format", "boomfmt"]):
            out = tmp_path / "s.out"
            assert run_case(base + extra + ["--out", out], [model], capsys) == 2
            assert "boom-plugin" in run_case.err and "bug in the plugin" in run_case.err
            assert not out.exists()
    finally:
        pm.unregister(name="boom-plugin")


def test_summary(capsys):
    """The counts for the closing note (run last in this file)."""
    summary(TALLY, "format-injection faults", capsys)
