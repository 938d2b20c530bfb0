"""The teacher's report: every correction of every student with its type, a summary per student and for the
class, as a dict (the JSON schema in README.md, read by `treegram exercises --from-corrections`), rich terminal
output (deletions struck through in red, insertions in green) and a self-contained HTML page."""

from __future__ import annotations

import html
import re
from collections import Counter

from treegram.plugins.corrections.labels import collapse, describe

REPORT_FORMAT = "treegram-corrections-report"
REPORT_VERSION = 1
_NO_SPACE_BEFORE = re.compile(r"^[.,;:!?%)\]}'’”]|^n't$|^'(s|re|ve|ll|d|m)$", re.I)


def detok(tokens) -> str:
    out = ""
    for k, t in enumerate(tokens):
        if k and not _NO_SPACE_BEFORE.match(t) and not out.endswith(("(", "[", "{", "“")):
            out += " "
        out += t
    return out


def segments(x, y, found) -> list[tuple[str, str, str, str]]:
    """The corrected sentence as segments: ("same", text, "", "") or ("edit", wrong, right, code)."""
    segs = []
    pos = 0
    for f in found:
        if f.span.y0 > pos:
            segs.append(("same", detok(y[pos:f.span.y0]), "", ""))
        segs.append(("edit", detok(x[f.span.x0:f.span.x1]), detok(y[f.span.y0:f.span.y1]), f.code))
        pos = f.span.y1
    if pos < len(y):
        segs.append(("same", detok(y[pos:]), "", ""))
    return segs


def build_report(aligned, found, *, typer: str, heuristic: str, examples: int = 3) -> dict:
    """aligned: [AlignedPair]; found: [[Found]] for each pair (same order)."""
    from treegram.plugins.corrections.text import tokenize

    corrections, sentences = [], []
    for pair, fs in zip(aligned, found):
        x, y = tokenize(pair.original), tokenize(pair.corrected)
        sentences.append({"student": pair.student, "sentence": pair.index, "original": pair.original,
                          "corrected": pair.corrected,
                          "segments": [list(s) for s in segments(x, y, fs)]})
        for f in fs:
            corrections.append({"student": pair.student, "sentence": pair.index, "code": f.code,
                                "label15": f.label15, "description": describe(f.code), "wrong": f.wrong,
                                "right": f.right, "original": pair.original, "corrected": pair.corrected})
    by_code = Counter(c["code"] for c in corrections)
    class_summary = []
    for code, n in sorted(by_code.items(), key=lambda kv: (-kv[1], kv[0])):
        ex = [c for c in corrections if c["code"] == code][:examples]
        class_summary.append({"code": code, "label15": collapse(code), "description": describe(code), "count": n,
                              "students": len({c["student"] for c in corrections if c["code"] == code}),
                              "examples": [{k: c[k] for k in ("wrong", "right", "original", "corrected", "student")}
                                           for c in ex]})
    students = []
    for s in dict.fromkeys(p.student for p in aligned):
        mine = [c for c in corrections if c["student"] == s]
        counts = Counter(c["code"] for c in mine)
        students.append({"student": s, "sentences": sum(1 for p in aligned if p.student == s),
                         "corrections": len(mine),
                         "by_code": dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))})
    return {"format": REPORT_FORMAT, "version": REPORT_VERSION, "typer": typer, "heuristic": heuristic,
            "class_summary": class_summary, "students": students, "corrections": corrections,
            "sentences": sentences}


# -- terminal ------------------------------------------------------------------------------------------
def render_terminal(report: dict, ui, *, by_student: bool, show_all: bool = False) -> None:
    from rich.text import Text

    from treegram.plugins.corrections.labels import LABELS15

    if by_student:
        for st in report["students"]:
            ui.print(Text(f"\n{st['student']}: {st['corrections']} corrections in {st['sentences']} sentences",
                          style="bold"))
            for s in report["sentences"]:
                if s["student"] != st["student"] or not (show_all or any(g[0] == "edit" for g in s["segments"])):
                    continue
                ui.print(_rich_sentence(s))
    else:
        shown = [s for s in report["sentences"] if any(g[0] == "edit" for g in s["segments"])]
        for s in shown:
            line = Text(f"{s['student']} #{s['sentence'] + 1}: ", style="dim")
            line.append_text(_rich_sentence(s))
            ui.print(line)
    ui.table("corrections in the class (most frequent first)", ["code", "type", "class", "count", "students",
                                                                "example"],
             [(c["code"], c["description"], f"{c['label15']} ({LABELS15.get(c['label15'], '')})", c["count"],
               c["students"], _example(c)) for c in report["class_summary"]])
    if by_student or len(report["students"]) > 1:
        ui.table("per student", ["student", "sentences", "corrections", "most frequent"],
                 [(s["student"], s["sentences"], s["corrections"],
                   ", ".join(f"{k} {v}" for k, v in list(s["by_code"].items())[:4])) for s in report["students"]])


def _example(c: dict) -> str:
    if not c["examples"]:
        return ""
    e = c["examples"][0]
    return f"{e['wrong'] or '∅'} → {e['right'] or '∅'}"


def _rich_sentence(s: dict):
    from rich.text import Text

    t = Text()
    for kind, a, b, code in s["segments"]:
        if t.plain and not t.plain.endswith(" ") and not (kind == "same" and _NO_SPACE_BEFORE.match(a)):
            t.append(" ")
        if kind == "same":
            t.append(a)
            continue
        if a:
            t.append(a, style="strike red")
        if a and b:
            t.append(" ")
        if b:
            t.append(b, style="bold green")
        t.append(f" [{code}]", style="cyan")
    return t


# -- HTML ----------------------------------------------------------------------------------------------
_CSS = """body{font-family:system-ui,sans-serif;max-width:60em;margin:2em auto;line-height:1.5;color:#222}
del{color:#b00020;text-decoration:line-through}ins{color:#006b2c;text-decoration:none;font-weight:600}
.code{font-size:.75em;background:#e8eefc;color:#1a3d8f;border-radius:3px;padding:0 .3em;margin-left:.2em}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:.2em .6em;text-align:left}
th{background:#f3f3f3}.num{text-align:right}li{margin:.3em 0}h2{margin-top:1.5em}"""


def render_html(report: dict, *, title: str = "Corrections report") -> str:
    e = html.escape
    out = [f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{e(title)}</title>"
           f"<style>{_CSS}</style></head><body><h1>{e(title)}</h1>",
           f"<p>{sum(s['corrections'] for s in report['students'])} corrections, "
           f"{len(report['students'])} student(s); types by {e(report['typer'])}, isolation {e(report['heuristic'])}.</p>",
           "<h2>The class</h2><table><tr><th>code</th><th>type</th><th>count</th><th>students</th><th>example</th></tr>"]
    for c in report["class_summary"]:
        ex = c["examples"][0] if c["examples"] else None
        exs = f"<del>{e(ex['wrong']) or '∅'}</del> <ins>{e(ex['right']) or '∅'}</ins>" if ex else ""
        out.append(f"<tr><td>{e(c['code'])}</td><td>{e(c['description'])}</td><td class='num'>{c['count']}</td>"
                   f"<td class='num'>{c['students']}</td><td>{exs}</td></tr>")
    out.append("</table><h2>Students</h2><table><tr><th>student</th><th>sentences</th><th>corrections</th>"
               "<th>most frequent</th></tr>")
    for s in report["students"]:
        top = ", ".join(f"{e(k)} {v}" for k, v in list(s["by_code"].items())[:5])
        out.append(f"<tr><td><a href='#s-{e(s['student'])}'>{e(s['student'])}</a></td>"
                   f"<td class='num'>{s['sentences']}</td><td class='num'>{s['corrections']}</td><td>{top}</td></tr>")
    out.append("</table>")
    for s in report["students"]:
        out.append(f"<h2 id='s-{e(s['student'])}'>{e(s['student'])}</h2><ol>")
        for sent in report["sentences"]:
            if sent["student"] != s["student"]:
                continue
            parts = []
            for kind, a, b, code in sent["segments"]:
                if kind == "same" and parts and _NO_SPACE_BEFORE.match(a):
                    parts[-1] += e(a)
                elif kind == "same":
                    parts.append(e(a))
                else:
                    parts.append((f"<del>{e(a)}</del>" if a else "") + (" " if a and b else "")
                                 + (f"<ins>{e(b)}</ins>" if b else "")
                                 + f"<span class='code' title='{e(describe(code))}'>{e(code)}</span>")
            out.append(f"<li value='{sent['sentence'] + 1}'>{' '.join(parts)}</li>")
        out.append("</ol>")
    out.append("</body></html>\n")
    return "\n".join(out)
