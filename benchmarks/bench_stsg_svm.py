"""Large-margin STSG (Cohn & Lapata 2007) on broadcast news, before and after issue 24: train lines 1-1000 (annotator
1), dev 1001-1170 scored against all three annotators.  Each run is VERSION:LOSS:C[:cal] -- grammar version 1 (the
issue-13 features) or 2, the loss, C, and whether the per-kept-word length bias is calibrated on held-out training
pairs (`treegram train stsg --method svm` does so by default).  Per run: CompR, token F1, RelP/RelR/RelF1 at its
own rate and at the matched gold rate (one global per-word reward), its rate on its own training sources, how often
the gold derivation is its best on training pairs and the mean loss of its best there, the share of copy/delete
rules of unseen productions in its dev derivations, head-word deletion (surviving constituents whose Collins head
word is deleted, over all constituents / sentences with one / NPs), the weights of the dense features, training
time, decoding speed; grammar-level: how many dev gold compressions the grammar can derive; approximate
randomization of every run against the first.

    nice -n 10 python benchmarks/bench_stsg_svm.py --runs 1:bp2:0.01,2:hamming:0.1:cal [--iterations 30]
        [--work benchmarks/out/compression] [--no-write]

Models and outputs are cached in --work (keyed by the run) so the section can be rebuilt without retraining.
Writes the `stsg-svm` section of benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
from _results import ROOT, machine_line, markdown_table, publish, require_shared  # noqa: E402

import bench_compression as bc  # noqa: E402
from treegram.compression.evaluate import DependencyScorer, compare_systems  # noqa: E402
from treegram.compression.treeprep import wrap_root  # noqa: E402
from treegram.formalism import load_model  # noqa: E402
from treegram.plugins.stsg.train import train_stsg  # noqa: E402
from _stsg_experiment import load_experiment  # noqa: E402
from treegram.plugins.stsg.largemargin import gold_derivation, loss_table, prepare_training  # noqa: E402

DENSE = ["n_words", "n_rules", "deletion", "n_dropped", "unseen", "lp(t|s)", "lp(s|t)", "lp(s,t)", "lp(e|c)"]


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def unseen_rules(grammar, tree, reward: float = 0.0) -> tuple[int, int]:
    """(rules of the best derivation that are copy/delete rules outside the induced grammar, all its rules)."""
    sc = grammar.chart(tree)
    vit = sc.chart.viterbi(reward * sc.n_target_words)
    root = grammar._cat_ids[tree.label]
    der = vit.derivation(0, root if vit.has(0, root) else vit.cats(0)[0])
    return sum(1 for e in der if sc.apps[e][0].count == 0), len(der)


def head_drops(trees, keeps) -> dict:
    """Surviving constituents whose (long-tree, Collins) head word is deleted: % of constituents, % of sentences
    with at least one, and NPs (deleted-head NPs / surviving NPs)."""
    from treegram.plugins.channel.model import analyse  # the channel's head-annotated trees (benchmark only)

    n = d = sent = np_n = np_d = 0
    for tree, k in zip(trees, keeps):
        t = analyse(wrap_root(tree))
        k = np.asarray(k, bool)
        alive, _, _ = t.short_heads(k)
        hit = False
        for u in range(len(t)):
            if t.word_pos[u] < 0 and alive[u]:
                lost = not k[t.head[u]]
                n += 1
                d += lost
                hit |= lost
                if t.labels[u] == "NP":
                    np_n += 1
                    np_d += lost
        sent += hit
    return {"constituents": 100.0 * d / max(n, 1), "sentences": 100.0 * sent / max(len(keeps), 1),
            "np": f"{np_d}/{np_n}"}


def train_diagnostics(model, prepared, loss: str) -> dict:
    """On the training pairs: how often the gold derivation scores at least as high as every other derivation, the
    mean loss of the model's best derivation, and the model's compression rate."""
    from treegram.plugins.stsg.largemargin import rule_scores_of

    w = model.grammar.weights
    rs = rule_scores_of(prepared.R, w)
    best = losses = kept = words = 0
    for ex in prepared.examples:
        extra = rs[ex.app_row]
        sv = ex.chart.stratified_viterbi(ex.inc, (ex.r, ex.n - ex.r), extra)
        F = sv.root_scores(0, ex.root)
        p = np.unravel_index(int(np.argmax(np.where(np.isfinite(F), F, -np.inf))), F.shape)
        losses += loss_table(loss, ex.r, ex.n)[p]
        best += float(extra[ex.gold_apps].sum()) >= float(np.max(F)) - 1e-9
        kept += p[0] + p[1]
        words += ex.n
    m = len(prepared.examples)
    return {"gold_best": f"{best}/{m}", "own_loss": losses / m, "train_rate": 100.0 * kept / words}


def reachability(grammar, ex) -> list[str]:
    """Per annotator: dev sentences whose gold compression the grammar can derive."""
    out = []
    for gold in ex.gold:
        ok = 0
        for t, keep in zip(ex.dev_src, gold):
            sc = grammar.chart(t)
            keep = np.asarray(keep, bool)
            root = grammar._cat_ids.get(t.label)
            ok += root is not None and gold_derivation(sc, sc.word_increments(keep), int(keep.sum()), root) is not None
        out.append(f"{ok}/{len(gold)}")
    return out


def parse_run(spec: str) -> tuple[int, str, float, bool]:
    parts = spec.split(":")
    return int(parts[0]), parts[1], float(parts[2]), len(parts) > 3 and parts[3] == "cal"


def run_name(version: int, loss: str, C: float, cal: bool) -> str:
    return f"v{version} {loss} C={C:g}" + (" calibrated" if cal else "")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", default="1:bp2:0.01,2:hamming:0.1:cal")
    ap.add_argument("--iterations", type=int, default=30, help="at most this many cutting-plane passes per run")
    ap.add_argument("--trials", type=int, default=10000)
    ap.add_argument("--work", type=Path, default=ROOT / "benchmarks" / "out" / "compression")
    ap.add_argument("--refresh", action="store_true")
    ap.add_argument("--no-write", action="store_true", help="print only; do not update RESULTS.md")
    args = ap.parse_args()
    ex = load_experiment(require_shared(), args.work)
    corpus = ex.corpus()
    gold_rate = round(ex.gold_rate(), 2)
    rss0 = rss_mb()
    prepared: dict[int, object] = {}

    def prep(version):
        if version not in prepared:
            t0 = time.perf_counter()
            prepared[version] = prepare_training(corpus, version=version)
            prepared[version].seconds = time.perf_counter() - t0
        return prepared[version]

    runs = [parse_run(s) for s in args.runs.split(",") if s]
    results = []
    trained_here = False
    for version, loss, C, cal in runs:
        tag = f"svm-v{version}-{loss}-C{C:g}{'-cal' if cal else ''}-i{args.iterations}"
        model_path, cache = args.work / f"{tag}.model", args.work / f"{tag}.json"
        if cache.exists() and model_path.exists() and not args.refresh:
            res = json.loads(cache.read_text(encoding="utf-8"))
            model = load_model(model_path)
        else:
            print(f"== {tag}", file=sys.stderr)
            trained_here = True
            p = prep(version)
            t0 = time.perf_counter()
            c0 = time.process_time()
            model = train_stsg(ex.train_pairs, ex.parser, method="svm", loss=loss, C=C, iterations=args.iterations,
                               corpus=corpus, prepared=p, calibrate=cal,
                               callback=lambda r: print(f"  it {r['iteration']}: ws={r['working_set']} "
                                                        f"loss={r['train_loss']:.4f} {r['seconds']:.1f}s",
                                                        file=sys.stderr))
            train_s, train_cpu = time.perf_counter() - t0, time.process_time() - c0
            model.save(model_path)
            c0 = time.process_time()
            keeps = [np.asarray(model.compress_tree(t, toks).keep, bool) for t, toks in zip(ex.dev_src, ex.dev_tokens)]
            decode_s = time.process_time() - c0
            matched = bc.matched_outputs(model, ex, gold_rate)
            unseen = np.sum([unseen_rules(model.grammar, t) for t in ex.dev_src], axis=0).tolist()
            res = {"keeps": [k.astype(int).tolist() for k in keeps], "matched": matched, "unseen": unseen,
                   "train_s": train_s, "train_cpu_s": train_cpu, "prep_s": p.seconds, "decode_s": decode_s,
                   "train": train_diagnostics(model, p, loss), "rss_mb": rss_mb(),
                   "info": {k: v for k, v in model.info.items() if k != "trace"}}
            from treegram.io import atomic_write_text

            atomic_write_text(cache, json.dumps(res))
        w = model.grammar.weights
        res["weights"] = {d: float(w[model.grammar.index.ids[d]]) for d in DENSE if d in model.grammar.index.ids}
        res["run"] = (version, loss, C, cal)
        res["model"] = model
        results.append(res)
    rss_train = rss_mb()
    reach = reachability(results[0]["model"].grammar, ex)

    scorer = DependencyScorer()
    rows, mrows, diag, items = [], [], [], []
    for res in results:
        name = run_name(*res["run"])
        own, oi = ex.score(res["keeps"], scorer)
        mk = res["matched"]["keeps"]
        mat, mi = ex.score(mk, scorer)
        items.append((name, oi, mi))
        hd, hdm = head_drops(ex.dev_src, res["keeps"]), head_drops(ex.dev_src, mk)
        info = res["info"]
        cal = info.get("calibration") or {}
        rows.append([name, own["compression_rate"], own["token_f1"], own["rel_precision"], own["rel_recall"],
                     own["rel_f1"], f"{hd['constituents']:.1f}", f"{hd['sentences']:.1f}", hd["np"],
                     f"{cal['bias']:+.3f}" if cal else "-", f"{res['train_s']:.0f}",
                     f"{len(ex.dev_tokens) / res['decode_s']:.0f}"])
        mrows.append([name, f"{res['matched']['reward']:.3g}", mat["compression_rate"], mat["token_f1"],
                      mat["rel_precision"], mat["rel_recall"], mat["rel_f1"], f"{hdm['constituents']:.1f}",
                      f"{hdm['sentences']:.1f}", hdm["np"]])
        tr = res["train"]
        diag.append([name, f"{tr['train_rate']:.2f}", tr["gold_best"], f"{tr['own_loss']:.4f}",
                     f"{res['unseen'][0] / res['unseen'][1]:.1%}", info["iterations_run"],
                     "yes" if info["converged"] else "no", info["working_set"], info["features"]]
                    + [f"{res['weights'][d]:+.3f}" if d in res["weights"] else "-" for d in DENSE])
    gold_hd = [head_drops(ex.dev_src, g) for g in ex.gold]
    sig = []
    for name, oi, mi in items[1:]:
        for what, a, b in (("own rate", oi, items[0][1]), ("gold rate", mi, items[0][2])):
            r = compare_systems(a, b, trials=args.trials, seed=0)
            sig.append([f"{name} vs {items[0][0]} ({what})", r["token"]["difference"],
                        f"{r['token']['p_value']:.4f}", r["rel"]["difference"], f"{r['rel']['p_value']:.4f}"])
    others = []
    for sysname in ("em", "gs", "mcdonald"):  # bench_compression's cached rows at the gold rate, when present
        hits = sorted(args.work.glob(f"{sysname}-*-a1.json"))
        if sysname == "gs":
            hits = [h for h in hits if h.name.startswith("gs-n500-a100-b0.1-s0")]
        if not hits:
            continue
        cached = json.loads(hits[0].read_text(encoding="utf-8"))
        if "gold" not in cached.get("matched", {}):
            continue
        _s, oth = ex.score(cached["matched"]["gold"]["keeps"], scorer)
        r = compare_systems(items[-1][2], oth, trials=args.trials, seed=0)
        others.append([f"{items[-1][0]} vs {hits[0].stem} (gold rate)", r["token"]["difference"],
                       f"{r['token']['p_value']:.4f}", r["rel"]["difference"], f"{r['rel']['p_value']:.4f}"])

    info = results[-1]["info"]
    body = [
        "## stsg-svm", "",
        f"Broadcast news (Clarke & Lapata), train lines 1-1000 (annotator 1), dev lines 1001-1170 scored against all "
        f"three annotators (mean of per-annotator scores; gold rate {gold_rate}%). Sources parsed by the foundation "
        f"PCFG of `compression` ({ex.parse_counts['ok']} parsed, "
        f"{ex.parse_counts['failed'] + ex.parse_counts['too_long']} flat fallback); target trees derived from the "
        f"source parse. Grammar (section 3.2): {info['induced_rules']} induced rules ({info['minimal_rules']} minimal "
        f"+ composed pairs seen >= 2 times with <= 3 variables) plus copy/delete rules of unseen productions. "
        f"Structured SVM, slack rescaling, epsilon 0.01, at most {args.iterations} cutting-plane passes. Version 1: the "
        f"issue-13 features; version 2: unseen rules' relative frequencies at half an occurrence instead of missing, "
        f"and lp(e|c), the rule's Laplace-smoothed log probability given its root pair. calibrated: the per-kept-word "
        f"bias set on every 5th training pair by a model trained on the others (the CLI default). "
        f"{machine_line()}.", "",
        "At each model's own rate (head drops: surviving constituents whose head word is deleted, % of constituents "
        "/ % of sentences with one / NPs; bias: the calibrated per-kept-word bias):", "",
        markdown_table(["run", "CompR %", "token F1", "RelP", "RelR", "RelF1", "head drops %", "sentences %",
                        "NP", "bias", "train s", "sent/s"], rows), "",
        f"At the matched gold rate ({gold_rate}%; one global per-word reward on dev):", "",
        markdown_table(["run", "reward", "CompR %", "token F1", "RelP", "RelR", "RelF1", "head drops %",
                        "sentences %", "NP"], mrows), "",
        "Gold compressions (annotators 1, 2, 3): head drops % " + ", ".join(f"{h['constituents']:.1f}" for h in gold_hd)
        + "; sentences % " + ", ".join(f"{h['sentences']:.1f}" for h in gold_hd) + "; NP "
        + ", ".join(h["np"] for h in gold_hd) + f". Dev gold compressions the induced grammar can derive "
        f"(annotators 1, 2, 3): {', '.join(reach)}.", "",
        "Training pairs and weights (train CompR: the model's rate on its training sources, gold "
        f"{100.0 * sum(int(p.keep.sum()) for p in ex.train_pairs) / sum(len(p.keep) for p in ex.train_pairs):.2f}%; "
        "gold best: pairs whose gold derivation scores at least as high as every derivation; own loss: mean loss of "
        "the model's best derivation; unseen: copy/delete rules of unseen productions among the rules of the dev "
        "derivations; weights scaled to unit spread of the rule scores, n_words including the bias):", "",
        markdown_table(["run", "train CompR %", "gold best", "own loss", "unseen", "passes", "converged",
                        "working set", "features"] + DENSE, diag), "",
        f"Approximate randomization ({args.trials} trials, counts pooled over the annotators; difference = first - "
        f"second):", "",
        markdown_table(["comparison", "token F1 diff", "p", "RelF1 diff", "p"], sig + others), "",
        (f"Memory: peak RSS {rss0:.0f} MB before, {rss_train:.0f} MB after preparing and training every run (whole "
         f"process with the parser; spaCy is loaded afterwards, for scoring)." if trained_here else
         "Memory: every run came from the cache of an earlier call (train s as measured there); peak RSS of the "
         "process that trained them: " + ", ".join(f"{run_name(*r['run'])} {r['rss_mb']:.0f} MB" if "rss_mb" in r
                                                    else f"{run_name(*r['run'])} not recorded" for r in results)
         + "."), "",
        f"Command: `nice -n 10 python benchmarks/bench_stsg_svm.py --runs {args.runs} --iterations {args.iterations}`",
    ]
    text = "\n".join(body)
    publish("stsg-svm", text, not args.no_write)


if __name__ == "__main__":
    main()
