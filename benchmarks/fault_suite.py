"""The fault suite's counts (issue 27 acceptance): run every ``tests/test_fault_*.py`` file with pytest, read the
tally line each file's ``test_summary`` prints, and write the per-file and total counts into RESULTS.md.

    python benchmarks/fault_suite.py            # print the table
    python benchmarks/fault_suite.py --write    # ... and rewrite the `fault-suite` section of RESULTS.md

A tally line is any line with "N cases" and "clean errors", e.g. ``fault suite (outputs): 1439 cases (...), 262 ok, 1177 clean errors, 0 tracebacks,
0 inputs destroyed, 0 silent wrong outputs``; a count a file does not report is shown as "-".  Pytest's own
outcome per file (passed / failed) is listed too: a failing file means its counts are not the whole story.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _results import ROOT, machine_line, markdown_table, write_section  # noqa: E402

FIELDS = [("cases", r"(\d+) (?:CLI )?cases"), ("of them option values", r"(\d+) option values"), ("ok", r"(\d+) ok"), ("clean errors", r"(\d+) clean errors"),
          ("tracebacks", r"(\d+) tracebacks"), ("inputs destroyed", r"(\d+) inputs destroyed"),
          ("silent wrong outputs", r"(\d+) silent wrong outputs?")]


def tallies(text: str) -> list[dict[str, int | None]]:
    """Every tally line in pytest's output, as {field: count or None}."""
    out = []
    for line in text.splitlines():
        if not (re.search(r"\d+ (?:CLI )?cases", line) and "clean errors" in line):
            continue
        row = {}
        for name, pattern in FIELDS:
            m = re.search(pattern, line)
            row[name] = int(m.group(1)) if m else None
        out.append(row)
    return out


def run_file(path: Path) -> tuple[list[dict], str, float]:
    t0 = time.perf_counter()
    res = subprocess.run([sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", str(path)],
                         cwd=ROOT, capture_output=True, text=True)
    tail = [ln for ln in res.stdout.strip().splitlines() if ln.strip()][-1:] or ["(no output)"]
    outcome = re.sub(r"=+", "", tail[0]).strip()
    return tallies(res.stdout), outcome, time.perf_counter() - t0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--write", action="store_true", help="rewrite the fault-suite section of RESULTS.md")
    ap.add_argument("files", nargs="*", help="default: tests/test_fault_*.py")
    args = ap.parse_args(argv)
    files = [Path(f) for f in args.files] or sorted((ROOT / "tests").glob("test_fault_*.py"))
    names = [n for n, _ in FIELDS]
    rows, total = [], dict.fromkeys(names, 0)
    for f in files:
        found, outcome, seconds = run_file(f)
        row = {n: (sum(r[n] for r in found if r[n] is not None) if any(r[n] is not None for r in found) else None)
               for n in names}
        for n in names:
            total[n] += row[n] or 0
        rows.append([f.name, *["-" if row[n] is None else row[n] for n in names], outcome, round(seconds, 1)])
        print(rows[-1], flush=True)
    rows.append(["**total**", *[total[n] for n in names], "", ""])
    table = markdown_table(["file", *names, "pytest", "seconds"], rows)
    print(table)
    if args.write:
        body = ("## Fault suite (issue 27 acceptance)\n\n"
                "Every `tests/test_fault_*.py` file run by `python benchmarks/fault_suite.py --write`; the counts "
                "are the tally lines each file's `test_summary` prints (cases include the option values that "
                "`test_fault_outputs.py` feeds every numeric option's type, counted apart too; the rest are CLI runs "
                "and loads; '-' = the file does not count that class). Goals: 0 "
                "tracebacks, 0 inputs destroyed, 0 silent wrong outputs.\n\n"
                f"{table}\n\n{machine_line()}\n")
        write_section("fault-suite", body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
