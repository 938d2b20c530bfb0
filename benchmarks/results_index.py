"""RESULTS.md for a reader: an index of its sections and the superseded ones moved to RESULTS-archive.md.

    python benchmarks/results_index.py [--archive NAME,NAME,...]

Every section of RESULTS.md sits between ``<!-- NAME:begin -->`` and ``<!-- NAME:end -->`` (benchmarks/_results.py
writes them).  This script
- moves the named sections (``--archive``) to RESULTS-archive.md, where `write_section` keeps updating them;
- rewrites the index at the top of RESULTS.md (between ``<!-- index:begin -->`` and ``<!-- index:end -->``): first
  the `defaults` section's place (the shipped defaults and their current figures, benchmarks/bench_defaults.py),
  then one line per section -- its name, title and the script that writes it -- and the archived ones.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _results import ARCHIVE, RESULTS  # noqa: E402

SECTION = re.compile(r"<!-- (?P<name>[\w.-]+):begin -->\n(?P<body>.*?)<!-- (?P=name):end -->\n?", re.S)
INDEX_BEGIN, INDEX_END = "<!-- index:begin -->", "<!-- index:end -->"


def sections(text: str) -> list[tuple[str, str, str]]:
    """(name, title, script) of every marked section, in file order."""
    out = []
    for m in SECTION.finditer(text):
        if m.group("name") == "index":
            continue
        body = m.group("body")
        title = next((line[3:].strip() for line in body.splitlines() if line.startswith("## ")), m.group("name"))
        # the title may stand just above the marker (older sections)
        if title == m.group("name"):
            before = text[: m.start()].rstrip().splitlines()
            if before and before[-1].startswith("## "):
                title = before[-1][3:].strip()
        script = re.search(r"benchmarks/(\w+\.py)", body)
        out.append((m.group("name"), title, script.group(1) if script else ""))
    return out


def move_sections(text: str, archive: str, names: set[str]) -> tuple[str, str]:
    for m in list(SECTION.finditer(text)):
        if m.group("name") in names:
            block = m.group(0)
            text = text.replace(block, "", 1)
            archive = archive.rstrip() + "\n\n" + block.rstrip() + "\n"
    text = re.sub(r"\n{3,}", "\n\n", text)
    return text, archive


def index_block(current: list[tuple[str, str, str]], archived: list[tuple[str, str, str]]) -> str:
    lines = [INDEX_BEGIN, "## Index", "",
             "**The shipped defaults and their current figures**: section `defaults` "
             "(`python benchmarks/bench_defaults.py`, re-run through the command line with the commit it measured).",
             "", "| section | what | written by |", "|---|---|---|"]
    lines += [f"| `{n}` | {t} | {s and f'`{s}`'} |" for n, t, s in current]
    if archived:
        lines += ["", f"Superseded sections, kept for the record in `RESULTS-archive.md`: "
                      + ", ".join(f"`{n}`" for n, _, _ in archived) + "."]
    lines.append(INDEX_END)
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--archive", default="", help="comma-separated section names to move to RESULTS-archive.md")
    opts = ap.parse_args()
    from treegram.io import atomic_write_text

    text = RESULTS.read_text(encoding="utf-8")
    archive = ARCHIVE.read_text(encoding="utf-8") if ARCHIVE.exists() else (
        "# Benchmark results: superseded sections\n\nSections of RESULTS.md that later runs replaced, kept as they "
        "were written (the index of RESULTS.md lists them).\n")
    names = {n.strip() for n in opts.archive.split(",") if n.strip()}
    unknown = names - {n for n, _, _ in sections(text)} - {n for n, _, _ in sections(archive)}
    if unknown:
        sys.exit(f"no such section: {', '.join(sorted(unknown))}")
    text, archive = move_sections(text, archive, names)
    text = re.sub(re.escape(INDEX_BEGIN) + ".*?" + re.escape(INDEX_END) + "\n*", "", text, flags=re.S)
    head, _, rest = text.partition("\n")
    text = f"{head}\n\n{index_block(sections(text), sections(archive))}\n\n{rest.lstrip()}"
    atomic_write_text(RESULTS, text)
    atomic_write_text(ARCHIVE, archive)
    print(f"RESULTS.md: {len(sections(text))} sections indexed; RESULTS-archive.md: {len(sections(archive))}")


if __name__ == "__main__":
    main()
