"""treegram against disco-dop in one run (issue 26 item 3): the same-run speed / F1 / memory table.

    nice -n 10 python benchmarks/bench_discodop.py [--parts pcfg,tsg,dd-pcfg,dd-dop] [--reuse] [--repeats 3]
        [--discodop /work/venv-discodop/bin/python] [--no-write]

disco-dop (van Cranenburgh's Discontinuous Data-Oriented Parsing, PyPI disco-dop 0.5.2) is a comparator, not a
treegram dependency: it lives in a virtualenv of its own (benchmarks/README.md says how to build it) and runs only
as a child process through that venv's python, exactly as its users run it (`discodop runexp PRM`, then `discodop
parser --fmt bracket GRAMMARDIR SENTENCES`).  treegram runs the same way, through its command line.

Data, the same for every row:
  * training: ptb-sample/train (3,396 trees) as treegram reads it (traces and function tags removed); disco-dop gets
    those very trees as a bracket file (`train.mrg` in the work folder), treegram its usual `--treebank` folder;
  * test: the ptb-sample/dev sentences of at most `--max-length` words (default 40: 260 of the 273), gold trees as
    treegram reads them; every parser gets the gold tokens, one sentence per line (no gold tags);
  * score: `treegram evalb` (EVALB COLLINS.prm) of every system's output against the same gold file.

Rows (`--parts`):
  * dd-pcfg: disco-dop's PCFG (one `mode='pcfg'` stage, Viterbi), binarized right with h=2 v=2 like treegram's
    default, its English unknown-word model ('4', words seen once as signatures);
  * dd-dop: disco-dop Double-DOP h2v2: that PCFG as coarse stage, pruned to the items of its 50 best derivations
    (k=50, disco-dop's default and sample.prm's), then the Double-DOP grammar (maximal recurring fragments,
    relative-frequency estimate), most probable parse summed over the 1,000 best derivations (sample.prm's m=1000,
    rfe, mpp); `--dop-k`, `--dop-m`, `--dop-objective` change it.  (Posterior-threshold pruning, k=1e-5, was tried
    first: 7-17 CPU-s per sentence of 20-33 words against 1-2 with k=50, too slow to repeat three times here);
  * pcfg: `treegram train pcfg` (shipped defaults) and `treegram parse` (the model's own decoder);
  * tsg: `treegram train tsg --seed 1` (shipped defaults) parsed with its default decoder (maxrule) and again with
    `--decoder mpd`.

Speed: every parse is one child process over all test sentences, and again over the first sentence alone, both
repeated `--repeats` times, interleaved across rows so load on the shared machine hits every row alike.  Warm
throughput = (N - 1) / (median CPU of the N-sentence run - median CPU of the 1-sentence run): start-up (imports,
model / grammar load, the numba cache) is excluded; "start-up + 1 sentence" is the median CPU of the 1-sentence run.
CPU = user + sys of the child (wait4); peak memory = max RSS of the N-sentence run (GNU time).  The ratio column
divides a treegram row's sent/CPU-s by its disco-dop counterpart's (PCFG by disco-dop's PCFG, TSG by Double-DOP).

Trained models / grammars are cached in benchmarks/out/discodop (gitignored): `--reuse` keeps what is there.  Each
row's figures are saved in rows.json there, so `--parts pcfg,tsg --reuse` re-measures only the treegram rows and
takes the disco-dop rows recorded by an earlier run (marked "recorded" in the table: those ratios are across runs,
the same-run table is the one without that mark).  Section `discodop` of RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _results import ROOT, machine_line, markdown_table, require_shared, write_section  # noqa: E402
from bench_coldstart import timed  # noqa: E402
from bench_defaults import TREEGRAM, commit  # noqa: E402

WORK = ROOT / "benchmarks" / "out" / "discodop"
DISCODOP = Path("/work/venv-discodop/bin/python")
PARTS = ("pcfg", "tsg", "dd-pcfg", "dd-dop")  # the cheap rows first: a run cut short has them
# disco-dop's settings shared by both of its rows (runexp parameter-file syntax: Python literals)
DD_COMMON = """evalparam=None,
corpusfmt='bracket',
traincorpus=dict(path='train.mrg', encoding='utf8', maxwords=999, numsents={ntrain}),
testcorpus=dict(path='dev.gold', encoding='utf8', maxwords=999, numsents=1, skiptrain=False, skip=0),
ensureroot='ROOT',
punct=None, functions=None, morphology=None, transformations=None, relationalrealizational=None,
postagging=dict(method='unknownword', model='4', unknownthreshold=1, openclassthreshold=50, simplelexsmooth=True),
binarization=dict(method='default', factor='right', headrules=None, h=2, v=2),
verbosity=1, numproc=1,
"""
DD_PCFG_STAGE = "dict(name='pcfg', mode='pcfg')"
DD_DOP_STAGE = ("dict(name='dop', mode='pcfg', prune='pcfg', k={k}, dop='doubledop', m={m}, estimator='rfe', "
                "objective='{objective}')")


def prepare(shared: Path, max_length: int) -> tuple[int, int]:
    """The shared inputs in WORK: train.mrg, dev.gold, dev.txt (N sentences), one.txt (the first); (train, N)."""
    from treegram.trees import read_treebank

    WORK.mkdir(parents=True, exist_ok=True)
    train = list(read_treebank([shared / "ptb-sample" / "train"]))
    dev = [t for t in read_treebank([shared / "ptb-sample" / "dev"]) if len(t.leaves()) <= max_length]
    files = {"train.mrg": [t.to_bracket() for t in train], "dev.gold": [t.to_bracket() for t in dev],
             "dev.txt": [" ".join(t.leaves()) for t in dev], "one.txt": [" ".join(dev[0].leaves())]}
    for name, lines in files.items():
        text = "".join(line + "\n" for line in lines)
        path = WORK / name
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
    return len(train), len(dev)


def discodop_prm(name: str, opts, ntrain: int) -> str:
    stages = [DD_PCFG_STAGE]
    if name == "dd-dop":
        stages.append(DD_DOP_STAGE.format(k=opts.dop_k, m=opts.dop_m, objective=opts.dop_objective))
    return "stages=[\n  " + ",\n  ".join(stages) + ",\n],\n" + DD_COMMON.format(ntrain=ntrain)


def train_discodop(name: str, opts, ntrain: int) -> tuple[Path, float | None]:
    """`discodop runexp NAME.prm` in WORK (grammars into WORK/NAME/); (grammar folder, train CPU s or None when
    reused).  runexp also parses its test corpus: one sentence here, so the time is the grammar's."""
    prm = WORK / f"{name}.prm"
    folder = WORK / name
    text = discodop_prm(name, opts, ntrain)
    if opts.reuse and (folder / "params.prm").exists() and prm.exists() and prm.read_text() == text:
        return folder, train_record(name)
    if folder.exists():
        import shutil

        shutil.rmtree(folder)
    prm.write_text(text, encoding="utf-8")
    _, cpu, _, _ = timed([str(opts.discodop), "-m", "discodop.cli", "runexp", prm.name], WORK, None)
    return folder, train_record(name, cpu)


def train_treegram(name: str, args: list[str], opts, shared: Path) -> tuple[Path, float | None]:
    model = WORK / f"treegram-{name}.model"
    if opts.reuse and model.exists():
        return model, train_record(name)
    _, cpu, _, _ = timed([TREEGRAM, "-q", "train", name, "--treebank", str(shared / "ptb-sample" / "train"),
                          "--out", str(model), *args], WORK, None)
    return model, train_record(name, cpu)


def train_record(name: str, cpu: float | None = None) -> float | None:
    """Record the train CPU seconds of `name` in WORK/train.json (with `cpu`), or read the recorded ones (a reused
    model keeps the time it took when it was trained; None when unknown)."""
    path = WORK / "train.json"
    record = json.loads(path.read_text()) if path.exists() else {}
    if cpu is not None:
        record[name] = cpu
        path.write_text(json.dumps(record, indent=1), encoding="utf-8")
    return record.get(name)


def evalb(name: str) -> dict:
    """`treegram evalb` of one system's trees (WORK/NAME.parsed) against dev.gold."""
    parsed = WORK / f"{name}.parsed"
    res = subprocess.run([TREEGRAM, "evalb", str(WORK / "dev.gold"), str(parsed), "--json"], capture_output=True,
                         text=True, check=True)
    return json.loads(res.stdout)


def measure(rows: dict[str, list[str]], n: int, repeats: int, on_repeat) -> None:
    """Run every row's parse command on all N sentences and on the first one, `repeats` times, interleaved; after
    each repeat `on_repeat(figures so far, repeats done)` (a run cut short still leaves its table)."""
    runs = {name: {"cpu_n": [], "cpu_1": [], "rss": []} for name in rows}
    outputs = {}
    for r in range(repeats):
        for name, cmd in rows.items():
            _, cpu, rss, out = timed(cmd + [str(WORK / "dev.txt")], WORK, None)
            runs[name]["cpu_n"].append(cpu)
            runs[name]["rss"].append(rss)
            if name in outputs and outputs[name] != out:
                sys.exit(f"{name}: the output of repeat {r + 1} differs from the first")
            outputs[name] = out
            _, cpu1, _, _ = timed(cmd + [str(WORK / "one.txt")], WORK, None)
            runs[name]["cpu_1"].append(cpu1)
            print(f"  repeat {r + 1} {name}: {n} sentences {cpu:.2f} CPU-s, 1 sentence {cpu1:.2f} CPU-s, "
                  f"{rss:.0f} MB", flush=True)
        figures = {}
        for name, run in runs.items():
            cpu_n, cpu_1 = statistics.median(run["cpu_n"]), statistics.median(run["cpu_1"])
            (WORK / f"{name}.parsed").write_bytes(outputs[name])
            scores = evalb(name)
            rate = (n - 1) / (cpu_n - cpu_1) if cpu_n > cpu_1 else float("nan")  # nan: too few sentences to tell
            figures[name] = {"sent_per_cpu_s": rate, "startup_1": cpu_1, "cpu_n": cpu_n,
                             "rss_mb": max(run["rss"]), "f1": scores["f1"], "exact": scores["exact"],
                             "scored": scores["sentences"],
                             "no_parse": outputs[name].count(b"NOPARSE"),  # disco-dop's mark of a failed parse
                             "sentences": n, "repeats": r + 1, "runs": run}
        on_repeat(figures, r + 1)


METHOD = ("Train on ptb-sample/train ({ntrain} trees), parse the {n} ptb-sample/dev sentences of <= {max_length} "
          "words (gold tokens, no tags), score with `treegram evalb` (COLLINS.prm) for all.  sent/CPU-s: warm, "
          "(N - 1) / (median CPU of {repeats} N-sentence runs - median CPU of {repeats} 1-sentence runs), runs "
          "interleaved across rows; start-up + 1 sentence: median CPU of the 1-sentence run; memory: max RSS of the "
          "N-sentence runs; ratio: sent/CPU-s over the disco-dop counterpart's (PCFG / Double-DOP); train CPU-s: "
          "the training command's, recorded when this script made the cached model (benchmarks/out/discodop).  "
          "(Issue 26's figures were for 245 held-out sentences whose selection was not recorded; ptb-sample/dev "
          "has 273, 260 of them of <= 40 words.)")
SCORED = ("scored: the sentences EVALB scores; as EVALB does, it leaves out a sentence whose words differ in number "
          "from the gold's once COLLINS.prm has deleted punctuation, which happens when a parser tags a word as "
          "punctuation (disco-dop's unknown-word model tags a few unknown words `` or , e.g. Freeport-McMoRan, Krenz).")
COMMANDS_HEAD = ("Commands (in benchmarks/out/discodop; dev.txt one tokenized sentence per line, dev.gold the gold "
                 "trees):")
# row name -> (label in the table, disco-dop counterpart for the ratio)
ROWS = {
    "dd-pcfg": ("disco-dop PCFG (h2v2, Viterbi)", None),
    "dd-dop": ("disco-dop Double-DOP (h2v2, pruned by the PCFG's 50 best, mpp)", None),
    "pcfg": ("treegram PCFG (`train pcfg`, h2v2, mpd: its default)", "dd-pcfg"),
    "tsg-maxrule": ("treegram TSG (`train tsg --seed 1`, maxrule: the default)", "dd-dop"),
    "tsg-mpd": ("treegram TSG (same model, `--decoder mpd`)", "dd-dop"),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--parts", default=",".join(PARTS), help=f"comma-separated rows to measure ({', '.join(PARTS)})")
    ap.add_argument("--reuse", action="store_true",
                    help="keep trained models/grammars in benchmarks/out/discodop; rows not in --parts come from "
                         "the rows.json an earlier run left there")
    ap.add_argument("--repeats", type=int, default=3, help="parse runs per row (median)")
    ap.add_argument("--max-length", type=int, default=40, help="test sentences of at most this many words")
    ap.add_argument("--discodop", type=Path, default=DISCODOP, help="the python of the disco-dop venv")
    ap.add_argument("--dop-k", default="50", help="Double-DOP pruning: posterior threshold (< 1) or k-best")
    ap.add_argument("--dop-m", type=int, default=1000, help="Double-DOP derivations summed for the parse")
    ap.add_argument("--dop-objective", default="mpp", help="Double-DOP objective (mpp, mpd, ...)")
    ap.add_argument("--work", type=Path, default=WORK, help="folder of the cached models and figures")
    ap.add_argument("--report", action="store_true",
                    help="parse nothing: rewrite the section from the figures the last run left in rows.json")
    ap.add_argument("--section", default="discodop", help="the RESULTS.md section to write (default discodop)")
    ap.add_argument("--no-write", action="store_true", help="print only; leave RESULTS.md alone")
    opts = ap.parse_args()
    globals()["WORK"] = opts.work.resolve()
    if opts.report:
        return rewrite_report(opts)
    shared = require_shared()
    parts = [p.strip() for p in opts.parts.split(",") if p.strip()]
    if unknown := set(parts) - set(PARTS):
        sys.exit(f"unknown part(s) {', '.join(sorted(unknown))} (choose from {', '.join(PARTS)})")
    if any(p.startswith("dd-") for p in parts) and not opts.discodop.exists():
        sys.exit(f"disco-dop's python not found at {opts.discodop}: build its venv (benchmarks/README.md) or pass "
                 "--discodop")
    stamp = f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, commit {commit()}"  # what runs: at the start
    ntrain, n = prepare(shared, opts.max_length)
    print(f"{ntrain} training trees, {n} test sentences (<= {opts.max_length} words); work folder {WORK}",
          flush=True)

    commands, train_cpu, shown = {}, {}, {}
    for part in parts:
        print(f"training {part} ...", flush=True)
        if part.startswith("dd-"):
            folder, cpu = train_discodop(part, opts, ntrain)
            commands[part] = [str(opts.discodop), "-m", "discodop.cli", "parser", "--fmt", "bracket",
                              f"{folder}/"]
            train_cpu[part] = cpu
            shown[part] = (f"`discodop runexp {part}.prm` (the .prm below), "
                           f"`discodop parser --fmt bracket {part}/ dev.txt`")
        else:
            model, cpu = train_treegram(part, ["--seed", "1"] if part == "tsg" else [], opts, shared)
            base = [TREEGRAM, "-q", "parse", "--model", str(model), "--out", "-", "--input"]
            train_args = " --seed 1" if part == "tsg" else ""
            trained = f"`treegram train {part} --treebank ptb-sample/train{train_args} --out {part}.model`"
            if part == "pcfg":
                commands["pcfg"] = base
                shown["pcfg"] = f"{trained}, `treegram parse --model pcfg.model --input dev.txt`"
                train_cpu["pcfg"] = cpu
            else:
                commands["tsg-maxrule"] = base
                commands["tsg-mpd"] = [*base[:-1], "--decoder", "mpd", "--input"]
                shown["tsg-maxrule"] = f"{trained}, `treegram parse --model tsg.model --input dev.txt`"
                shown["tsg-mpd"] = "`treegram parse --model tsg.model --decoder mpd --input dev.txt`"
                train_cpu["tsg-maxrule"] = cpu
        print(f"  train CPU-s: {cpu}", flush=True)

    run_cmd = (f"nice -n 10 python benchmarks/bench_discodop.py --parts {','.join(parts)}"
               f"{' --reuse' if opts.reuse else ''} --repeats {opts.repeats}")

    def on_repeat(figures: dict[str, dict], done: int) -> None:
        for name, fig in figures.items():
            fig.update(train_cpu=train_cpu.get(name), command=shown[name], measured=stamp, run=run_cmd,
                       planned=opts.repeats, max_length=opts.max_length, train_trees=ntrain)
        store = WORK / "rows.json"
        saved = json.loads(store.read_text()) if store.exists() else {}
        saved.update(figures)
        store.write_text(json.dumps(saved, indent=1), encoding="utf-8")
        if opts.reuse:  # rows not measured now: the ones an earlier run recorded
            figures = {**{k: v for k, v in saved.items() if k in ROWS}, **figures}
        body = report(figures, stamp)
        print(body, flush=True)
        if not opts.no_write:
            write_section(opts.section, body)

    print(f"parsing ({opts.repeats} repeats, interleaved) ...", flush=True)
    measure(commands, n, opts.repeats, on_repeat)


def rewrite_report(opts) -> None:
    """--report: the section again from rows.json (the rows of its latest run; older rows marked as recorded)."""
    figures = {k: v for k, v in json.loads((WORK / "rows.json").read_text()).items() if k in ROWS}
    body = report(figures, max(fig["measured"] for fig in figures.values()))
    body += f"\n\n(Section rewritten from that run's rows.json by `--report` at commit {commit()}.)"
    print(body)
    if not opts.no_write:
        write_section(opts.section, body)


def report(figures: dict[str, dict], stamp: str) -> str:
    """The RESULTS.md section; rows measured by another run than `stamp` are marked, and so are their ratios."""
    table, goals = [], []
    for name, (label, counterpart) in ROWS.items():
        if name not in figures:
            continue
        fig = figures[name]
        ratio = "-"
        if counterpart and counterpart in figures:
            times = fig["sent_per_cpu_s"] / figures[counterpart]["sent_per_cpu_s"]
            ratio = f"{times:.1f}x"
            if fig["measured"] != figures[counterpart]["measured"]:
                ratio += " (across runs)"
            f1_diff = fig["f1"] - figures[counterpart]["f1"]
            met = "met" if times >= 10 and f1_diff >= 0 else "not met"
            goals.append(f"{name} {ratio}, F1 {f1_diff:+.2f} ({met})")
        train = fig.get("train_cpu")
        scored = fig.get("scored") or evalb(name)["sentences"]  # (rows.json of a run before this column)
        table.append([label + (f" (recorded {fig['measured']})" if fig["measured"] != stamp else ""),
                      f"{fig['sent_per_cpu_s']:.2f}", ratio, f"{fig['f1']:.2f}", f"{fig['exact']:.2f}",
                      f"{scored} / {fig['sentences']}", str(fig.get("no_parse", 0)), f"{fig['startup_1']:.2f}",
                      f"{fig['rss_mb']:.0f}",
                      f"{train:.0f}" if train is not None else "(the model above)"])
    run = next(fig for fig in figures.values() if fig["measured"] == stamp)
    done = min(fig["repeats"] for fig in figures.values() if fig["measured"] == stamp)
    cmd_lines = [f"- {ROWS[name][0]}: {figures[name]['command']}" for name in ROWS if name in figures]
    prms = [f"`{part}.prm`:\n\n```\n{(WORK / f'{part}.prm').read_text(encoding='utf-8')}```"
            for part in ("dd-pcfg", "dd-dop") if part in figures]
    head = (f"`{run['run']}` -- {stamp}, {machine_line()}; disco-dop 0.5.2 on Python 3.6 in its own venv "
            "(benchmarks/README.md)."
            + (f"  **{done} of {run['planned']} repeats done so far.**" if done < run["planned"] else ""))
    method = METHOD.format(ntrain=run["train_trees"], n=run["sentences"], max_length=run["max_length"],
                           repeats=done)
    columns = ["system", "sent/CPU-s", "ratio", "F1", "exact", "scored", "no parse", "start-up + 1 sent (CPU-s)",
               "peak MB", "train CPU-s"]
    goal = "Issue 26's goal (>= 10x the disco-dop counterpart's sent/CPU-s, no F1 lost): " + "; ".join(goals) + "."
    return "\n\n".join(["## treegram against disco-dop, same run (issue 26 item 3)", head, method,
                         markdown_table(columns, table), SCORED, goal, COMMANDS_HEAD, "\n".join(cmd_lines), *prms])


if __name__ == "__main__":
    main()
