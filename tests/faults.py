"""What the fault-suite files (tests/test_fault_*.py) share: the small treebank and the PCFG model most cases run
on, digests of the inputs a case must leave alone, one command-line case run in-process with its tally (cases, ok,
clean errors, tracebacks, inputs destroyed), the tally line each file's `test_summary` prints (read by
benchmarks/fault_suite.py), and the walk over a model's metadata the fuzzers mutate.  Each file keeps its own tally
dict and its own extra checks (silent wrong outputs) on top of `run_cli`."""

from __future__ import annotations

import hashlib
from pathlib import Path

from treegram.cli.app import main

SMALL_TREEBANK = """(S (NP (DT the) (NN cat)) (VP (VBD sat) (PP (IN on) (NP (DT the) (NN mat)))) (. .))
(S (NP (DT a) (NN dog)) (VP (VBD chased) (NP (DT the) (NN cat))) (. .))
(S (NP (PRP she)) (VP (VBD saw) (NP (DT a) (NN dog))) (. .))
"""
SENTENCES = "the cat sat on the mat .\na dog saw the cat .\n"


def new_tally(*extra: str) -> dict[str, int]:
    """A file's tally: the counts `run_cli` keeps, plus the file's own (`silent_wrong`, `option_values`)."""
    return dict.fromkeys(("cases", "ok", "clean_errors", "tracebacks", "inputs_destroyed", *extra), 0)


def small_world(d: Path) -> dict[str, Path]:
    """In folder `d`: the small treebank (`tb`), a PCFG trained on it (`model`) and two sentences of its words
    (`sents`)."""
    tb = d / "tb.mrg"
    tb.write_text(SMALL_TREEBANK)
    model = d / "pcfg.model"
    assert main(["-q", "train", "pcfg", "--treebank", str(tb), "--out", str(model), "--rare-threshold", "1"]) == 0
    sents = d / "s.txt"
    sents.write_text(SENTENCES)
    return {"d": d, "tb": tb, "model": model, "sents": sents}


def summary(tally: dict, title: str, capsys) -> None:
    """Print the file's tally line (benchmarks/fault_suite.py reads it) and fail on any traceback, destroyed input
    or silent wrong output.  Run as each file's last test."""
    cases = f"{tally['cases']} cases"
    if "option_values" in tally:
        cases += f" ({tally['cases'] - tally['option_values']} CLI runs, {tally['option_values']} option values)"
    line = (f"{title}: {cases}, {tally['ok']} ok, {tally['clean_errors']} clean errors, {tally['tracebacks']} "
            f"tracebacks, {tally['inputs_destroyed']} inputs destroyed")
    if "silent_wrong" in tally:
        line += f", {tally['silent_wrong']} silent wrong outputs"
    with capsys.disabled():
        print("\n" + line)
    assert tally["tracebacks"] == 0 and tally["inputs_destroyed"] == 0 and tally.get("silent_wrong", 0) == 0


def meta_paths(obj, levels: int, list_items: int = 0, prefix: tuple = ()):
    """Every place in model metadata down to `levels` keys deep: dict keys, and the first `list_items` positions
    of each list."""
    if levels <= 0:
        return
    if isinstance(obj, dict):
        items = list(obj.items())
    elif isinstance(obj, list):
        items = list(enumerate(obj[:list_items]))
    else:
        return
    for k, v in items:
        yield prefix + (k,)
        yield from meta_paths(v, levels - 1, list_items, prefix + (k,))


def set_path(obj, path, value) -> None:
    """obj[path[0]][path[1]]... = value."""
    for k in path[:-1]:
        obj = obj[k]
    obj[path[-1]] = value


def digest(paths) -> dict[str, object]:
    """sha256 of every file in `paths` and the listing of every folder (a case must change neither)."""
    out: dict[str, object] = {}
    for p in map(Path, paths):
        if p.is_file():
            out[str(p)] = hashlib.sha256(p.read_bytes()).hexdigest()
        elif p.is_dir():
            out[str(p)] = sorted(str(q) for q in p.rglob("*"))
    return out


def run_cli(tally: dict, argv, inputs=(), capsys=None) -> tuple[int, str, str]:
    """Run `treegram ARGV` in-process: (exit code, stdout, stderr).  A traceback or a changed input is tallied and
    fails the case; otherwise the exit code counts as ok (0) or a clean error."""
    before = digest(inputs)
    tally["cases"] += 1
    try:
        code = main([str(a) for a in argv])
    except SystemExit as exc:  # argparse usage errors: one red line (treegram.cli.app._Parser), exit 2
        code = exc.code
    except BaseException as exc:  # anything escaping main() would be a traceback for the user
        tally["tracebacks"] += 1
        raise AssertionError(f"traceback for {argv}: {type(exc).__name__}: {exc}") from exc
    out, err = capsys.readouterr() if capsys is not None else ("", "")
    if digest(inputs) != before:
        tally["inputs_destroyed"] += 1
        raise AssertionError(f"{argv} changed an input file")
    tally["ok" if code == 0 else "clean_errors"] += 1
    return code, out, err
