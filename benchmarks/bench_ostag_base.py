"""OSTAG3 from a TSG with the TSG's own base route (issue 16, `treegram train ostag --from-tsg M --tsg-weights base`).

The TSG's parsing grammar smooths its fragments with the base PCFG (`c -> c~base`, then base rules that stop or
expand at every child).  With `--tsg-weights base` the OSTAG's parsing CFG holds that route itself, with the TSG's
weights (`treegram.elementary.base_route`), and the TSG's fragments at their counts share the rest of each label's
mass; auxiliary trees extracted from the fragments add adjunction on top.  So the no-auxiliary-tree control
(`--model tsg --no-expand`) is the TSG's grammar exactly (its row must equal the source TSG's), and every OSTAG row
is measured against that control and against the source TSG, with paired approximate randomization (10,000
trials).

Every row is the model file the CLI writes, parsed as `treegram parse` parses it (its saved default decoder).  The
source TSG models are the shipped-default ones (`treegram train tsg --treebank ptb-sample/train --seed S`, average
of 5 samples, max-rule), copied into benchmarks/out/ostag-base/ (from --tsg-dir, else trained here):

    nice -n 10 python benchmarks/bench_ostag_base.py --seeds 1,2 --dev-limit 60 --variants ';--adj-init 0.01'
    nice -n 10 python benchmarks/bench_ostag_base.py --seeds 1,2                 # full dev, the shipped default
    python benchmarks/bench_ostag_base.py --write          # the `parsing-defaults-ostag-full` RESULTS section

`--variants` is a ';'-separated list of extra `train ostag` option strings ('' = the shipped defaults); the
control and the source TSG are measured for every seed and dev size.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _results import ROOT, machine_line, markdown_table, ptb_sample, require_shared, write_section  # noqa: E402

import bench_parsing_defaults_tag as tag  # noqa: E402

from treegram.formalism import load_model  # noqa: E402

SECTION = "parsing-defaults-ostag-full"
CACHE = ROOT / "benchmarks" / "out" / "ostag-base"
SOURCE = "source TSG (`treegram train tsg` defaults: 5-sample average, maxrule)"
CONTROL = "no-auxiliary-tree control (`--model tsg --no-expand`)"


def row_name(options: str) -> str:
    return "OSTAG3 `train ostag --from-tsg` shipped defaults" + (f" + `{options}`" if options else "")


def tsg_model(seed: int, train_path: Path, tsg_dir: Path | None) -> tuple[Path, float | None]:
    """The source TSG model file in the cache (copied from tsg_dir, else trained) and its training seconds."""
    work = CACHE / "models"
    work.mkdir(parents=True, exist_ok=True)
    out = work / f"tsg-{seed}.model"
    info = work / f"tsg-{seed}.json"
    if not out.exists() and tsg_dir is not None and (tsg_dir / f"tsg-{seed}.model").exists():
        shutil.copy(tsg_dir / f"tsg-{seed}.model", out)
        if (tsg_dir / f"tsg-{seed}.json").exists():
            shutil.copy(tsg_dir / f"tsg-{seed}.json", info)
    if not out.exists():
        secs = tag.cli(["train", "tsg", "--treebank", str(train_path), "--seed", str(seed), "--out", str(out)])
        info.write_text(json.dumps({"seconds": secs}), encoding="utf-8")
    return out, json.loads(info.read_text(encoding="utf-8")).get("seconds") if info.exists() else None


def run(seed: int, train_path: Path, dev, cmd: str, variants: list[str], tsg_dir: Path | None,
        reference: bool = True) -> None:
    path = CACHE / f"seed{seed}-n{len(dev)}.json"
    done = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {"commands": [], "rows": []}
    names = {r["name"] for r in done["rows"]}

    def save(row):
        if path.exists():  # another process (another variant) may have added rows meanwhile: merge by name
            now = json.loads(path.read_text(encoding="utf-8"))
            have = {r["name"] for r in done["rows"]}
            done["rows"] += [r for r in now["rows"] if r["name"] not in have]
            done["commands"] += [c for c in now["commands"] if c not in done["commands"]]
        done["rows"].append(row)
        if cmd not in done["commands"]:
            done["commands"].append(cmd)
        done["machine"] = machine_line()
        path.write_text(json.dumps(done), encoding="utf-8")

    def size(m):
        return f"{len(m.grammar.initial):,} initial / {len(m.grammar.auxiliary):,} auxiliary + base route"

    tsg_path, tsg_s = tsg_model(seed, train_path, tsg_dir)
    if SOURCE not in names and reference:
        tsg = load_model(tsg_path)
        save(tag.evaluate(SOURCE, tsg, dev, None, size=f"{tsg.info['elementary_trees']:,} elementary trees + base",
                          train_s=tsg_s, seed=seed, group="ostag-base", role="source"))
        del tsg
    todo = [(CONTROL, ["--tsg-weights", "base", "--model", "tsg", "--no-expand"], "control")] if reference else []
    todo += [(row_name(v), v.split(), "system" if not v else "variant") for v in variants]
    for name, opts, role in todo:
        if name in names:
            continue
        tag_ = re.sub(r"[^a-z0-9]+", "_", " ".join(opts)).strip("_")
        out = CACHE / "models" / f"ostag-{seed}-{tag_ or 'default'}.model"
        secs = tag.cli(["train", "ostag", "--from-tsg", str(tsg_path), "--treebank", str(train_path), "--seed",
                        str(seed), "--out", str(out), *opts])
        m = load_model(out)
        save(tag.evaluate(name, m, dev, None, size=size(m), train_s=secs, seed=seed, group="ostag-base", role=role,
                          extra={"settings": {k: m.settings.to_dict()[k] for k in
                                              ("kind", "expand", "tsg_weights", "em_iterations", "adj_init",
                                               "prune_threshold")}}))
        del m


#: the shipped `train ostag --from-tsg` settings (plugins/ostag/plugin.py) a row is marked with
SHIPPED = {"kind": "ostag3", "expand": True, "tsg_weights": "base", "em_iterations": 0, "adj_init": 0.01}


def display(r: dict) -> str:
    """A row's name in the table, from the settings its model file recorded (the option strings it was trained
    with meant other things before the defaults changed)."""
    s = r.get("settings")
    if r["role"] == "source" or s is None:
        return r["name"]
    if s["kind"] == "tsg":
        return "no-auxiliary-tree control (`--tsg-weights base --model tsg --no-expand`: the TSG's grammar)"
    shipped = all(s.get(k) == v for k, v in SHIPPED.items())
    return (f"OSTAG3, base route, P_adj = {s['adj_init']:g}, {'with' if s['expand'] else 'without'} the rules left "
            f"behind, {s['em_iterations']} EM" + (" (shipped defaults)" if shipped else ""))


def bayes_rows() -> list[dict]:
    """Bayesian OSTAG (shipped defaults) and its no-adjunction control on full dev, measured by
    `bench_parsing_defaults_tag.py --part bayes --seeds 1` (its cache)."""
    out = []
    for f in sorted(tag.CACHE.glob("bayes-seed*.json")):
        d = json.loads(f.read_text(encoding="utf-8"))
        if "--dev-limit" in d["meta"]["command"]:
            continue
        out += [{**r, "command": d["meta"]["command"]} for r in d["rows"]]
    return out


def write() -> None:
    parts = sorted(CACHE.glob("seed*-n*.json"))
    if not parts:
        raise SystemExit("nothing cached: run with --seeds first")
    loaded = [json.loads(p.read_text(encoding="utf-8")) for p in parts]
    body = ["## OSTAG3 from the TSG with the TSG's own base route, full dev (issue 16)\n",
            "Commands: " + "; ".join(sorted({f"`{c}`" for d in loaded for c in d["commands"]})) + f" — "
            f"{loaded[0]['machine']}.\n",
            "Train ptb-sample/train (3,396 trees) -> ptb-sample/dev (the first N sentences; 273 = all). Source TSG: "
            "`treegram train tsg --seed S` with the shipped defaults (average of 5 samples, max-rule). OSTAG rows: "
            "`treegram train ostag --from-tsg TSG --seed S [options]` (`--tsg-weights base`: the TSG's fragments at "
            "their counts plus the TSG's own base route in the parsing CFG; auxiliary trees extracted from the "
            "fragments), parsed with the saved default decoder (maxrule). Control: the same with no auxiliary "
            "trees, which is the TSG's grammar (its F1 must equal the source TSG's). Timings are rough: 2 cores "
            "shared with other jobs. The commands of this session's runs were recorded without their "
            "`--tsg-dir /work/notes/models` (the TSGs `treegram train tsg --treebank ptb-sample/train --seed S` had "
            "written there) and, for the runs that measured only an OSTAG row beside another process, "
            "`--no-reference`.\n"]
    rows = [r for d in loaded for r in d["rows"]]
    rows.sort(key=lambda r: (-r["sentences"], r["seed"], {"source": 0, "control": 1, "system": 2}.get(r["role"], 3),
                             r["name"]))
    body.append(markdown_table(["dev sent.", "seed", "model", "F1 all", "F1 <=40", "exact", "failed",
                                "grammar size", "train s", "sent/s"],
                               [[r["sentences"], r["seed"], display(r), r["f1"], r["f1_40"], r["exact"], r["failed"],
                                 r["size"], "-" if r["train_s"] is None else r["train_s"], r["sent_s"]]
                                for r in rows]))
    sig = []
    for n, seed in sorted({(r["sentences"], r["seed"]) for r in rows}, key=lambda x: (-x[0], x[1])):
        by = {r["name"]: r for r in rows if r["seed"] == seed and r["sentences"] == n}
        src, ctrl = by.get(SOURCE), by.get(CONTROL)
        for name, r in by.items():
            if r["role"] == "source":
                continue
            if src is not None:
                sig.append([n, seed, f"{display(r)} - source TSG", *tag.ar(r, src, seed)])
            if ctrl is not None and r is not ctrl:
                sig.append([n, seed, f"{display(r)} - no-auxiliary-tree control", *tag.ar(r, ctrl, seed)])
    body.append("\nPaired approximate randomization (10,000 trials, two-sided, per-sentence bracket counts):\n")
    body.append(markdown_table(["dev sent.", "seed", "comparison", "F1 difference", "p"], sig))
    same = []
    for n, seed in sorted({(r["sentences"], r["seed"]) for r in rows}, key=lambda x: (-x[0], x[1])):
        by = {r["role"]: r for r in rows if r["seed"] == seed and r["sentences"] == n}
        if "source" in by and "control" in by:
            same.append(f"{n} sentences, seed {seed}: "
                        + ("identical" if by["source"]["counts"] == by["control"]["counts"] else "NOT identical"))
    if same:
        body.append("\nControl vs source TSG, per-sentence (matched, gold, test) bracket counts: " + "; ".join(same)
                    + ".\n")
    body.append("\nHow the shipped setting was chosen (a small grid on dev, so the 60-sentence rows are not held-out "
                "figures): on the first 60 dev sentences, seed 1, P_adj = 0.1 (the EM route's old initial value) fell "
                "below the TSG (-0.82) and P_adj = 0.01 did not (+0.16); P_adj -> 0 is the TSG itself. P_adj = 0.01 "
                "was shipped on that and its full-dev rows run. The seed-2 60-sentence rows came in afterwards: there "
                "P_adj = 0.1 is the best row (+1.27 over the TSG, 0.01: +0.24), so over the two seeds the two weights "
                "are level on 60 sentences (mean +0.22 vs +0.20). P_adj = 0.1 was then run on full dev too: -0.36 / "
                "+0.49 against the TSG (mean +0.07) vs 0.01's -0.15 / +0.23 (mean +0.04), level again; 0.01 stays the "
                "default as the one with the smaller loss on its worse seed. The grid's `--no-expand` rows (no "
                "rules left behind) were started and stopped unfinished for CPU, so they are not in the table. "
                "Pruning: every row uses the TSG's own threshold (1e-5). Timings are rough: the 2 cores were shared "
                "with 10-15 other processes, so train s and sent/s compare only rows measured at the same time.\n")
    bayes = bayes_rows()
    if bayes:
        body.append("\n### Bayesian OSTAG (`treegram train ostag --bayesian`, shipped defaults), full dev\n")
        body.append("Command: " + "; ".join(sorted({f"`{r['command']}`" for r in bayes})) + " (rows cached by that "
                    "script, tabled here). Control: the same blocked sampler and sweeps with adjunction switched off "
                    "(mu fixed at 1e-12).\n")
        body.append(markdown_table(["dev sent.", "seed", "model", "decoder", "F1 all", "F1 <=40", "exact", "failed",
                                    "grammar size", "train s", "sent/s"],
                                   [[r["sentences"], r["seed"], r["name"], r["decoder"], r["f1"], r["f1_40"],
                                     r["exact"], r["failed"], r["size"], r["train_s"], r["sent_s"]] for r in bayes]))
        bsig = []
        for seed in sorted({r["seed"] for r in bayes}):
            by = {r["role"]: r for r in bayes if r["seed"] == seed}
            if "system" in by and "control" in by:
                bsig.append([seed, "Bayesian OSTAG defaults - no-adjunction control",
                             *tag.ar(by["system"], by["control"], seed)])
        if bsig:
            body.append("\nPaired approximate randomization (10,000 trials):\n")
            body.append(markdown_table(["seed", "comparison", "F1 difference", "p"], bsig))
    write_section(SECTION, "\n".join(body))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", default=None, help="comma-separated seeds to measure (e.g. 1,2)")
    ap.add_argument("--dev-limit", type=int, default=None, help="parse only the first N dev sentences")
    ap.add_argument("--variants", default="", metavar="OPTS;OPTS",
                    help="';'-separated extra `train ostag` option strings, '' = the shipped defaults (default: ''); "
                         "'-' = none (only the source TSG and the control)")
    ap.add_argument("--tsg-dir", type=Path, default=None,
                    help="a directory holding tsg-S.model (and tsg-S.json) to copy instead of training")
    ap.add_argument("--no-reference", action="store_true",
                    help="only the variants, not the source TSG and control rows (another process measures those)")
    ap.add_argument("--write", action="store_true", help="rewrite the RESULTS.md section from the cache")
    args = ap.parse_args()
    if args.seeds:
        train_path = require_shared() / "ptb-sample" / "train"
        dev = ptb_sample("dev", args.dev_limit)
        variants = [] if args.variants == "-" else [v.strip() for v in args.variants.split(";")]
        cmd = (f"nice -n 10 python benchmarks/bench_ostag_base.py --seeds {args.seeds}"
               + (f" --dev-limit {args.dev_limit}" if args.dev_limit else "")
               + (f" --variants '{args.variants}'" if args.variants else "")
               + (f" --tsg-dir {args.tsg_dir}" if args.tsg_dir else "") + (" --no-reference" if args.no_reference else ""))
        for seed in (int(s) for s in args.seeds.split(",")):
            print(f"== seed {seed}: dev {len(dev)} sentences", flush=True)
            run(seed, train_path, dev, cmd, variants, args.tsg_dir, not args.no_reference)
    if args.write:
        write()


if __name__ == "__main__":
    main()
