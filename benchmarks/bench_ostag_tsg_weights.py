"""OSTAG3 by EM from a TSG: the TSG's fragment counts vs its posterior weights (issue 16, `--tsg-weights`).

`treegram train ostag --from-tsg TSG.model` weighs the TSG's fragments either by the sample's counts (depth-1
treebank rules at their treebank counts) or by the TSG model's posterior pseudo-counts n_e + alpha_c P0(e)
(depth-1 rules at alpha_c P0; `plugins/ostag/extract.TSGPosterior`), then runs EM iterations from there.  Each
row is the model file the CLI writes (`treegram train ostag --from-tsg TSG --tsg-weights W --em-iterations E
--seed S`), parsed as `treegram parse` parses it (its saved default decoder, maxrule), against the source TSG
model on the same decoder, with paired approximate randomization (10,000 trials).

It reuses the TSG models and the rows (source TSG; the counts default) that `bench_parsing_defaults_tag.py
--part ostag` cached in benchmarks/out/parsing-defaults-tag/ (same TSG files, same dev sentences), training and
measuring whatever is missing itself:

    nice -n 10 python benchmarks/bench_ostag_tsg_weights.py --seeds 1,2 --dev-limit 60
    nice -n 10 python benchmarks/bench_ostag_tsg_weights.py --seeds 1,2 --dev-limit 60 --controls  # no aux trees
    python benchmarks/bench_ostag_tsg_weights.py --write      # the `parsing-defaults-ostag-weights` section
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _results import machine_line, markdown_table, ptb_sample, require_shared, write_section  # noqa: E402

import bench_parsing_defaults_tag as tag  # noqa: E402

from treegram.formalism import load_model  # noqa: E402

SECTION = "parsing-defaults-ostag-weights"
SOURCE = "source TSG model (`treegram train tsg` defaults), same decoder"
COUNTS = "OSTAG3 shipped defaults (1 EM iteration(s), counts start)"
CONFIGS = [("posterior", 0), ("posterior", 1), ("counts", 0)]
#: --control: the same fragments with no auxiliary trees (`--model tsg --no-expand`): is the loss adjunction's?
CONTROLS = [("posterior", 0), ("posterior", 1)]


def row_name(weights: str, em: int, control: bool = False, options: str = "") -> str:
    extra = f", {options}" if options else ""
    if control:
        return f"TSG control (no auxiliary trees) --tsg-weights {weights}, {em} EM iteration(s){extra}"
    return f"OSTAG3 --tsg-weights {weights}, {em} EM iteration(s){extra}"


def cache(seed: int, controls: bool = False, options: str = "") -> Path:
    tag_ = "-controls" if controls else "-opts-" + re.sub(r"[^a-z0-9]+", "_", options) if options else ""
    return tag.CACHE / f"ostag-weights{tag_}-seed{seed}.json"


def reference_rows(seed: int) -> dict:
    """The rows `bench_parsing_defaults_tag.py --part ostag` measured on the same TSG (by name)."""
    out = {}
    for f in (tag.CACHE / f"ostag-seed{seed}.json", tag.CACHE / f"ostag-grid-seed{seed}.json"):
        if f.exists():
            for r in json.loads(f.read_text(encoding="utf-8"))["rows"]:
                out.setdefault(r["name"], r)
    return out


def run(seed: int, train_path: Path, dev, cmd: str, controls: bool = False, options: str = "") -> None:
    work = tag.CACHE / "models"
    work.mkdir(parents=True, exist_ok=True)
    path = cache(seed, controls, options)  # (named by the options as given)
    done = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {"meta": {}, "rows": []}
    names = {r["name"] for r in done["rows"]}
    ref = reference_rows(seed)
    tsg_path = work / f"tsg-{seed}.model"
    tsg_s = tag.cli(["train", "tsg", "--treebank", str(train_path), "--seed", str(seed), "--out", str(tsg_path)])

    def save(row):
        done["rows"].append(row)
        done["meta"] = {"command": cmd, "machine": machine_line()}
        path.write_text(json.dumps(done), encoding="utf-8")

    def size(m):
        return f"{len(m.grammar.initial):,} initial / {len(m.grammar.auxiliary):,} auxiliary"

    if SOURCE not in names:
        if SOURCE in ref and ref[SOURCE]["sentences"] == len(dev):
            save({**ref[SOURCE], "role": "source"})
        else:
            tsg = load_model(tsg_path)
            save(tag.evaluate(SOURCE, tsg, dev, "maxrule", size=f"{tsg.info['elementary_trees']:,} elementary trees",
                              train_s=tsg_s, seed=seed, group="ostag", role="source"))
    given = re.search(r"--tsg-weights (\S+)", options)
    if given:  # --options '--tsg-weights W ...': that weighting's row
        options = (options[:given.start()] + options[given.end():]).strip()
    em_given = re.search(r"--em-iterations (\d+)", options)
    if em_given:
        options = (options[:em_given.start()] + options[em_given.end():]).strip()
    todo = ([(w, e, True) for w, e in CONTROLS] if controls else
            [(given.group(1) if given else "posterior", int(em_given.group(1)) if em_given else 0, False)]
            if options or given or em_given else
            [(w, e, False) for w, e in [("counts", 1), *CONFIGS]])
    for weights, em, control in todo:
        name = row_name(weights, em, control, options)
        if name in names:
            continue
        if (weights, em, control) == ("counts", 1, False) and COUNTS in ref and ref[COUNTS]["sentences"] == len(dev):
            save({**ref[COUNTS], "name": name, "role": "counts"})  # the same CLI command, measured there
            continue
        opt_tag = re.sub(r"[^a-z0-9]+", "_", options)
        out = work / f"ostag-{seed}-{weights}-em{em}{'-ctrl' if control else ''}{opt_tag}.model"
        secs = tag.cli(["train", "ostag", "--from-tsg", str(tsg_path), "--treebank", str(train_path), "--seed",
                        str(seed), "--tsg-weights", weights, "--em-iterations", str(em), "--out", str(out),
                        *(["--model", "tsg", "--no-expand"] if control else []), *options.split()])
        m = load_model(out)
        save(tag.evaluate(name, m, dev, None, size=size(m), train_s=secs, seed=seed, group="ostag",
                          role="control" if control else "counts" if (weights, em) == ("counts", 1) else "weights"))
        del m


def write() -> None:
    parts = sorted(tag.CACHE.glob("ostag-weights*-seed*.json"))
    if not parts:
        raise SystemExit("nothing cached: run with --seeds first")
    loaded = [json.loads(p.read_text(encoding="utf-8")) for p in parts]
    body = ["## OSTAG3 by EM from a TSG: fragment counts vs the TSG's posterior weights (issue 16)\n",
            "Commands: " + "; ".join(sorted({f"`{d['meta']['command']}`" for d in loaded})) + f" — "
            f"{loaded[0]['meta']['machine']}.\n",
            "Train ptb-sample/train (3,396 trees) -> the first N ptb-sample/dev sentences. Source TSG: the "
            "`treegram train tsg --seed S` model cached by `bench_parsing_defaults_tag.py --part ostag` (trained "
            "before the TSG's posterior averaging was shipped: the final sample's grammar), parsed with maxrule; "
            "its row and the counts/1-EM row are that script's measurements (same files, same sentences). Each "
            "OSTAG row is `treegram train ostag --from-tsg TSG --tsg-weights W --em-iterations E --seed S`, parsed "
            "with its saved default decoder (maxrule), pruning 1e-4 (the TSG's own: 1e-5). Weightings: counts = the "
            "sample's fragment counts, depth-1 treebank rules at their treebank counts; posterior = the TSG's "
            "pseudo-counts n_e + alpha_c P0(e), depth-1 rules at alpha_c P0 (all children stopped); "
            "posterior-rules = the same, depth-1 rules at alpha_c P_pcfg(rule) (the base's whole mass for that "
            "root rule). TSG control = the same weights with no auxiliary trees (`--model tsg --no-expand`).\n"]
    unique = {(r["seed"], r["name"]): r for d in loaded for r in d["rows"]}  # the source row is in every file
    rows = sorted(unique.values(), key=lambda r: (r["seed"], r["role"] != "source", r["name"]))
    body.append(markdown_table(["seed", "model", "decoder", "dev sent.", "F1 all", "F1 <=40", "exact", "failed",
                                "grammar size", "train s", "sent/s"],
                               [[r["seed"], r["name"], r["decoder"], r["sentences"], r["f1"], r["f1_40"], r["exact"],
                                 r["failed"], r["size"], "-" if r["train_s"] is None else r["train_s"], r["sent_s"]]
                                for r in rows]))
    sig = []
    for seed in sorted({r["seed"] for r in rows}):
        by = {r["name"]: r for r in rows if r["seed"] == seed}
        counts = by.get(row_name("counts", 1))
        for name, r in by.items():
            if r["role"] == "source":
                continue
            if SOURCE in by:
                sig.append([seed, f"{name} - source TSG", *tag.ar(r, by[SOURCE], seed)])
            if counts is not None and r is not counts and r["role"] != "control":
                sig.append([seed, f"{name} - counts, 1 EM iteration (previous default)", *tag.ar(r, counts, seed)])
            if r["role"] == "control":
                w, em = r["name"].split("--tsg-weights ")[1].split(", ")[:2]
                system = by.get(row_name(w, int(em.split()[0])))
                if system is not None:
                    sig.append([seed, f"{system['name']} - its no-auxiliary-tree control", *tag.ar(system, r, seed)])
    body.append("\nPaired approximate randomization (10,000 trials, two-sided, per-sentence bracket counts):\n")
    body.append(markdown_table(["seed", "comparison", "F1 difference", "p"], sig))
    body.append("\nCaveats: 60 dev sentences (a difference of about 2 F1 is needed for p < 0.1); the source TSG is "
                "the final-sample grammar, not the averaged one `treegram train tsg` now ships; rows absent for a "
                "seed were not run.\n")
    write_section(SECTION, "\n".join(body))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", default=None, help="comma-separated seeds to measure (e.g. 1,2)")
    ap.add_argument("--dev-limit", type=int, default=None, help="parse only the first N dev sentences")
    ap.add_argument("--controls", action="store_true",
                    help="only the no-auxiliary-tree controls of the posterior rows (`--model tsg --no-expand`)")
    ap.add_argument("--options", default="", metavar="OPTS",
                    help="only OSTAG3 --tsg-weights posterior, 0 EM iterations, with these extra `train ostag` "
                         "options (e.g. '--prune-threshold 1e-05'; '--tsg-weights W' / '--em-iterations E' "
                         "replace the weighting / EM iterations)")
    ap.add_argument("--write", action="store_true", help="rewrite the RESULTS.md section from the cache")
    args = ap.parse_args()
    if args.seeds:
        train_path = require_shared() / "ptb-sample" / "train"
        dev = ptb_sample("dev", args.dev_limit)
        cmd = (f"nice -n 10 python benchmarks/bench_ostag_tsg_weights.py --seeds {args.seeds}"
               + (f" --dev-limit {args.dev_limit}" if args.dev_limit else "") + (" --controls" if args.controls else "") + (f" --options '{args.options}'" if args.options else ""))
        for seed in (int(s) for s in args.seeds.split(",")):
            print(f"== seed {seed}: dev {len(dev)} sentences", flush=True)
            run(seed, train_path, dev, cmd, args.controls, args.options)
    if args.write:
        write()


if __name__ == "__main__":
    main()
