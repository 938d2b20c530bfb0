"""One compression table for every system (issue 13 item 5): keep-all, McDonald (2006), the large-margin STSG
(Cohn & Lapata 2007: `svm` = `treegram train stsg --method svm` with its defaults, the length-calibrated version-2
model of issue 24; `svm-v1` = the issue-13 model, version-1 features, Prec x BP2, C 0.01; `svm-LOSS` = version 2 with
that loss at --svm-c), EM, VB and the Gibbs-sampled Bayesian STSG (GS, mean of several seeds as Yamangil & Shieber
2010 average) on broadcast news, train lines 1-1000 -> dev 1001-1170, scored
against all three annotators: CompR, token F1, RelP/RelR/RelF1, rules, training seconds, compression speed; the same
systems at matched compression rates (one global per-word reward per system, found by bisection so that its dev
CompR hits the target rate); approximate-randomization tests (GS vs SVM vs EM, ...) at the systems' own rates and
at the matched rates.

    python benchmarks/bench_compression.py [--systems keep-all,mcdonald,svm,svm-v1,em,vb,gs]
        [--gs-seeds 0,1,2,3,4] [--gs-sweeps 500] [--work benchmarks/out/compression] [--refresh] [--no-write]

Every system's dev outputs (own rate and matched rates), training and decoding seconds are cached as JSON in
--work (models too), keyed by the system's settings, so the table can be (re)built piecewise: a second call only
trains what is missing.  Writes the `compression` section of benchmarks/RESULTS.md (unless --no-write).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
from _results import ROOT, RESULTS, machine_line, markdown_table, require_shared, write_section  # noqa: E402

from treegram.formalism import load_model  # noqa: E402
from treegram.compression.evaluate import DependencyScorer, compare_systems  # noqa: E402
from _stsg_experiment import load_experiment  # noqa: E402

ALL = ["keep-all", "mcdonald", "svm", "svm-v1", "svm-prec", "svm-bp1", "svm-bp2", "svm-hamming", "em", "vb", "gs"]
DEFAULT = ["keep-all", "mcdonald", "svm", "svm-v1", "em", "vb", "gs"]
LABEL = {"keep-all": "keep-all", "mcdonald": "McDonald", "svm": "SVM (default)", "svm-v1": "SVM v1 (issue 13)",
         "svm-prec": "SVM Prec", "svm-bp1": "SVM Prec x BP1", "svm-bp2": "SVM Prec x BP2", "svm-hamming": "SVM Hamming",
         "em": "EM", "vb": "VB", "gs": "GS"}
SVMS = ("svm", "svm-v1", "svm-bp2", "svm-bp1", "svm-prec", "svm-hamming")


def svm_available() -> bool:
    """Whether the large-margin STSG (`--method svm`, branch i13a) is in this checkout."""
    import attrs

    from treegram.formalism import OPTION_KEY
    from treegram.plugins.stsg.formalism import STSGOptions

    return "svm" in attrs.fields_dict(STSGOptions)["method"].metadata[OPTION_KEY].choices


def svm_defaults() -> str:
    from treegram.plugins.stsg import SVM_C, SVM_LOSS

    return f"loss {SVM_LOSS}, C {SVM_C:g}"


def rate_of(keeps, dev_tokens) -> float:
    return 100.0 * sum(int(np.sum(k)) for k in keeps) / sum(len(t) for t in dev_tokens)


def matched_outputs(model, ex, target: float, steps: int = 14) -> dict:
    """The global per-word reward whose dev CompR is closest to `target` (bisection; the rate is monotone in the
    reward up to ties) and the outputs at that reward."""
    def run(reward):
        keeps = [np.asarray(model.compress_tree(t, toks, reward=reward).keep, bool)
                 for t, toks in zip(ex.dev_src, ex.dev_tokens)]
        return rate_of(keeps, ex.dev_tokens), keeps

    tried = {}
    lo, hi = -1.0, 1.0
    tried[lo], tried[hi] = run(lo), run(hi)
    while tried[lo][0] > target and lo > -1e4:
        lo *= 4
        tried[lo] = run(lo)
    while tried[hi][0] < target and hi < 1e4:
        hi *= 4
        tried[hi] = run(hi)
    for _ in range(steps):
        mid = (lo + hi) / 2
        tried[mid] = run(mid)
        if abs(tried[mid][0] - target) < 0.25:
            break
        if tried[mid][0] < target:
            lo = mid
        else:
            hi = mid
    best = min(tried, key=lambda r: (abs(tried[r][0] - target), abs(r)))
    return {"reward": best, "rate": round(tried[best][0], 2), "keeps": [k.astype(int).tolist() for k in tried[best][1]]}


def train_system(name: str, seed: int, ex, corpus, args):
    """Train one system; returns (model, rules, train seconds)."""
    from treegram.plugins.stsg.train import train_stsg
    from treegram.plugins.stsg.mcdonald import train_mcdonald

    t0 = time.perf_counter()
    if name == "mcdonald":
        model = train_mcdonald(ex.train_pairs, ex.parser, trees=ex.train_src, epochs=args.mcdonald_epochs,
                               update=args.mcdonald_update, seed=seed,
                               callback=lambda r: print(f"  epoch {r['epoch']}: {r['mistakes']} mistakes, hamming "
                                                        f"{r['hamming']}", file=sys.stderr))
        rules = None
    elif name in SVMS:
        opts = ({} if name == "svm" else {"loss": "bp2", "C": 0.01, "version": 1, "calibrate": False}
                if name == "svm-v1" else {"loss": name[4:], "C": args.svm_c})
        model = train_stsg(ex.train_pairs, ex.parser, method="svm", seed=seed, corpus=corpus, **opts)
        rules = model.grammar.num_rules() if hasattr(getattr(model, "grammar", None), "num_rules") \
            else model.info.get("rules")
    else:
        method = {"gs": "gibbs", "em": "em", "vb": "vb"}[name]
        model = train_stsg(ex.train_pairs, ex.parser, method=method,
                           iterations=args.gs_sweeps if method == "gibbs" else args.em_iterations,
                           alpha=args.alpha, beta=args.beta, seed=seed, corpus=corpus,
                           callback=(lambda r: print(f"  sweep {r['sweep']} T={r['temperature']:.2f} "
                                                     f"logp={r['log_likelihood']:.0f} rules={r['rules']}",
                                                     file=sys.stderr) if r["sweep"] % 100 == 0 else None))
        rules = model.grammar.num_rules()
    train_s = model.info.get("training_seconds", time.perf_counter() - t0)
    return model, rules, train_s


def settings_tag(name: str, seed: int, args) -> str:
    if name == "gs":
        return f"gs-n{args.gs_sweeps}-a{args.alpha:g}-b{args.beta:g}-s{seed}"
    if name in ("em", "vb"):
        return f"{name}-i{args.em_iterations}-a{args.alpha:g}-b{args.beta:g}"
    if name == "mcdonald":
        return f"mcdonald-e{args.mcdonald_epochs}-{args.mcdonald_update}-s{seed}"
    if name == "svm":
        from treegram.plugins.stsg import SVM_C, SVM_LOSS

        return f"svm-default-{SVM_LOSS}-C{SVM_C:g}-v2cal-s{seed}"
    if name == "svm-v1":
        return f"svm-v1-bp2-C0.01-s{seed}"
    if name in SVMS:
        return f"{name}-C{args.svm_c:g}-v2cal-s{seed}"
    return name


def run_system(name: str, seed: int, ex, args, targets: dict[str, float]) -> dict:
    """Outputs of one system (cached in --work as JSON)."""
    tag = settings_tag(name, seed, args)
    cache = args.work / f"{tag}-a{ex.train_annotators}.json"
    model_path = args.work / f"{tag}-a{ex.train_annotators}.model"
    if cache.exists() and not args.refresh:
        res = json.loads(cache.read_text(encoding="utf-8"))
        missing = {k: r for k, r in targets.items() if k not in res["matched"]}
        if missing and name == "keep-all":
            res["matched"].update({k: {"reward": 0.0, "rate": 100.0, "keeps": res["keeps"]} for k in missing})
        elif missing and model_path.exists():  # only the new matched rates
            model = load_model(model_path)
            res["matched"].update({k: matched_outputs(model, ex, r) for k, r in missing.items()})
        if not missing or name == "keep-all" or model_path.exists():
            from treegram.io import atomic_write_text

            atomic_write_text(cache, json.dumps(res))
            return res
    print(f"== {tag}", file=sys.stderr)
    if name == "keep-all":
        keeps = [[1] * len(t) for t in ex.dev_tokens]
        res = {"keeps": keeps, "train_s": 0.0, "train_cpu_s": 0.0, "decode_s": 0.0, "rules": None,
               "matched": {k: {"reward": 0.0, "rate": 100.0, "keeps": keeps} for k in targets}}
    else:
        if model_path.exists() and not args.refresh:
            model = load_model(model_path)
            rules = model.grammar.num_rules() if hasattr(getattr(model, "grammar", None), "num_rules") \
                else model.info.get("rules")
            train_s = model.info.get("training_seconds")
            train_cpu = None
        else:
            c0 = time.process_time()
            model, rules, train_s = train_system(name, seed, ex, ex.corpus(beta=args.beta), args)
            train_cpu = time.process_time() - c0
            model.save(model_path)
        c0 = time.process_time()
        keeps = [np.asarray(model.compress_tree(t, toks).keep, bool).astype(int).tolist()
                 for t, toks in zip(ex.dev_src, ex.dev_tokens)]
        decode_s = time.process_time() - c0
        matched = {k: matched_outputs(model, ex, r) for k, r in targets.items()}
        res = {"keeps": keeps, "train_s": train_s, "train_cpu_s": train_cpu, "decode_s": decode_s, "rules": rules,
               "matched": matched}
        if name == "mcdonald":
            res["features"] = int(np.count_nonzero(model.weights))
        print(f"   trained {train_s:.1f}s, decoded dev {decode_s:.2f}s, own CompR {rate_of(keeps, ex.dev_tokens):.2f}; "
              + ", ".join(f"{k}: reward {v['reward']:.3g} -> {v['rate']}" for k, v in matched.items()),
              file=sys.stderr)
    res["tag"] = tag
    from treegram.io import atomic_write_text

    atomic_write_text(cache, json.dumps(res))
    return res


def parse_speed(ex, work: Path) -> float:
    """CPU seconds to parse the dev sentences with the foundation PCFG (cached)."""
    path = work / "parse-speed.json"
    if path.exists():
        return json.loads(path.read_text())["cpu_seconds"]
    t0 = time.process_time()
    from treegram.errors import ParseFailure

    for toks in ex.dev_tokens:
        try:
            ex.parser.parse(list(toks))
        except ParseFailure:
            pass
    s = time.process_time() - t0
    path.write_text(json.dumps({"cpu_seconds": s}))
    return s


def tradeoff_svg(curves: dict[str, list[tuple[float, float, bool]]], path: Path) -> None:
    """CompR (x) against RelF1 (y) per system (cf. Cohn & Lapata 2007, Figure 4): a line through the matched-rate
    points, a filled dot at the system's own rate."""
    w, h, pad = 680, 420, 55
    pts = [p for c in curves.values() for p in c]
    x0, x1 = min(p[0] for p in pts) - 2, max(p[0] for p in pts) + 2
    y0, y1 = min(p[1] for p in pts) - 2, max(p[1] for p in pts) + 2

    def sx(x):
        return pad + (x - x0) / (x1 - x0) * (w - 2 * pad - 110)

    def sy(y):
        return h - pad - (y - y0) / (y1 - y0) * (h - 2 * pad)

    colours = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"]
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" '
           f'font-size="11">', f'<rect width="{w}" height="{h}" fill="white"/>',
           f'<line x1="{pad}" y1="{h - pad}" x2="{w - pad - 110}" y2="{h - pad}" stroke="black"/>',
           f'<line x1="{pad}" y1="{pad}" x2="{pad}" y2="{h - pad}" stroke="black"/>',
           f'<text x="{pad}" y="{pad - 20}">Broadcast news dev: compression rate vs relational F1 (filled: own rate; '
           f'line: matched rates)</text>',
           f'<text x="{(w - 110) / 2}" y="{h - 15}" text-anchor="middle">CompR %</text>',
           f'<text x="15" y="{h / 2}" transform="rotate(-90 15 {h / 2})" text-anchor="middle">RelF1</text>']
    for v in range(int(x0) + 1, int(x1) + 1):
        if v % 5 == 0:
            out.append(f'<text x="{sx(v):.1f}" y="{h - pad + 14}" text-anchor="middle">{v}</text>')
    for v in range(int(y0) + 1, int(y1) + 1):
        if v % 5 == 0:
            out.append(f'<text x="{pad - 5}" y="{sy(v) + 4:.1f}" text-anchor="end">{v}</text>')
    for k, (name, c) in enumerate(curves.items()):
        col = colours[k % len(colours)]
        line = sorted(c)
        out.append('<polyline points="' + " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y, _ in line)
                   + f'" fill="none" stroke="{col}" stroke-width="1.5"/>')
        for x, y, own in line:
            out.append(f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="{4 if own else 2.5}" '
                       f'fill="{col if own else "white"}" stroke="{col}"/>')
        out.append(f'<text x="{w - pad - 100}" y="{pad + 15 * k}" fill="{col}">{name}</text>')
    out.append("</svg>")
    path.write_text("\n".join(out) + "\n", encoding="utf-8")


def reference_gs(results_md: Path) -> str | None:
    """The GS row of the 5000-sweep `stsg` section of RESULTS.md (for the fewer-sweep check)."""
    if not results_md.exists():
        return None
    m = re.search(r"<!-- stsg:begin -->(.*?)<!-- stsg:end -->", results_md.read_text(encoding="utf-8"), re.S)
    if not m:
        return None
    row = re.search(r"^\| GS \| ([^\n]*)$", m.group(1), re.M)
    return row.group(1) if row else None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--systems", default=",".join(DEFAULT), help="comma-separated, from " + ",".join(ALL))
    ap.add_argument("--gs-seeds", default="0,1,2,3,4")
    ap.add_argument("--gs-sweeps", type=int, default=500, help="annealed sweeps per GS seed (paper: 5000)")
    ap.add_argument("--em-iterations", type=int, default=30)
    ap.add_argument("--mcdonald-epochs", type=int, default=10)
    ap.add_argument("--mcdonald-update", default="mira", choices=("mira", "perceptron"))
    ap.add_argument("--svm-c", type=float, default=0.01)
    ap.add_argument("--alpha", type=float, default=100.0)
    ap.add_argument("--beta", type=float, default=0.1)
    ap.add_argument("--train-annotators", default="1")
    ap.add_argument("--trials", type=int, default=10000)
    ap.add_argument("--work", type=Path, default=ROOT / "benchmarks" / "out" / "compression")
    ap.add_argument("--refresh", action="store_true", help="retrain even when cached results exist")
    ap.add_argument("--no-write", action="store_true", help="print the section, leave RESULTS.md alone")
    args = ap.parse_args()
    systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    bad = [s for s in systems if s not in ALL]
    if bad:
        sys.exit(f"unknown systems {bad}; choose from {ALL}")
    seeds = [int(s) for s in args.gs_seeds.split(",")]
    shared = require_shared()
    ex = load_experiment(shared, args.work, train_annotators=args.train_annotators)
    gold_rate = ex.gold_rate()
    # matched rates: the gold rate of the dev annotators, the paper's GS rate (Yamangil & Shieber 2010 Table 1,
    # 65.52%), and two points either side of the systems' own rates
    targets = {"gold": round(gold_rate, 2), "paper-gs": 65.52, "60": 60.0, "80": 80.0}
    have_svm = svm_available()
    not_run: dict[str, str] = {}
    outputs: dict[str, list[dict]] = {}
    for name in systems:
        if name in SVMS and not have_svm:
            not_run[name] = ("the large-margin STSG (`--method svm`, branch i13a) is not merged into this "
                             "checkout yet")
            continue
        for seed in (seeds if name == "gs" else [0]):
            outputs.setdefault(name, []).append(run_system(name, seed, ex, args, targets))
    parse_s = parse_speed(ex, args.work)

    scorer = DependencyScorer()
    n_dev = len(ex.dev_tokens)

    def score(keeps_list):
        """Mean summary over runs (seeds) and the per-item counts averaged over runs (for the AR tests)."""
        sums, avg_items = ex.score_runs(keeps_list, scorer)
        keys = ("compression_rate", "token_f1", "rel_precision", "rel_recall", "rel_f1")
        mean = {k: float(np.mean([s[k] for s in sums])) for k in keys}
        sd = {k: float(np.std([s[k] for s in sums], ddof=1)) if len(sums) > 1 else 0.0 for k in keys}
        return mean, sd, avg_items, sums

    own, own_items, per_seed = {}, {}, {}
    for name, runs in outputs.items():
        mean, sd, its, sums = score([r["keeps"] for r in runs])
        own[name] = (mean, sd)
        own_items[name] = its
        per_seed[name] = sums
    matched, matched_items = {}, {}
    for key in targets:
        for name, runs in outputs.items():
            mean, sd, its, _ = score([r["matched"][key]["keeps"] for r in runs])
            matched[(key, name)] = (mean, sd, [r["matched"][key]["reward"] for r in runs])
            matched_items[(key, name)] = its

    rows = []
    for name in ALL:
        if name in not_run and name in systems:
            rows.append([LABEL[name], "not run", "", "", "", "", "", "", "", ""])
            continue
        if name not in outputs:
            continue
        runs = outputs[name]
        mean, sd = own[name]
        label = LABEL[name] + (f" (mean of {len(runs)} seeds)" if len(runs) > 1 else "")

        def fmt(k):
            return f"{mean[k]:.2f}" + (f" ± {sd[k]:.2f}" if len(runs) > 1 else "")

        rules = runs[0]["rules"]
        if name == "mcdonald":
            rules = f"- ({runs[0].get('features', 0)} weights)"
        cpu = [r.get("train_cpu_s") for r in runs]
        train_s = np.mean(cpu) if all(c is not None for c in cpu) else None
        dec = np.mean([r["decode_s"] for r in runs])
        rows.append([label, fmt("compression_rate"), fmt("token_f1"), fmt("rel_precision"), fmt("rel_recall"),
                     fmt("rel_f1"), rules if rules is not None else "-",
                     f"{train_s:.0f}" if train_s else ("-" if train_s == 0 else "?"),
                     f"{n_dev / dec:.0f}" if dec else "-", f"{n_dev / (dec + parse_s):.1f}" if dec else "-"])

    def sig_rows(items: dict, prefix=lambda n: n):
        svms = [s for s in SVMS if prefix(s) in items]
        pairs = [("gs", "em")] + [(a, s) for s in svms for a in ("gs", "em")] + [("gs", "vb"), ("gs", "mcdonald")] \
            + [(s, "mcdonald") for s in svms] + [("em", "mcdonald")] + ([("svm", "svm-v1")] if {"svm", "svm-v1"} <=
                                                                     set(svms) else [])
        out = []
        for a, b in pairs:
            if a is None or b is None or prefix(a) not in items or prefix(b) not in items:
                continue
            r = compare_systems(items[prefix(a)], items[prefix(b)], trials=args.trials, seed=0)
            out.append([f"{LABEL[a]} vs {LABEL[b]}", r["token"]["difference"], f"{r['token']['p_value']:.4f}",
                        r["rel"]["difference"], f"{r['rel']['p_value']:.4f}"])
        return out

    sig_own = sig_rows(own_items)
    matched_tables = []
    for key, rate in targets.items():
        mrows = []
        for name in ALL:
            if (key, name) not in matched or name == "keep-all":
                continue
            mean, sd, rewards = matched[(key, name)]
            mrows.append([LABEL[name], ", ".join(f"{r:.3g}" for r in rewards), mean["compression_rate"],
                          mean["token_f1"], mean["rel_precision"], mean["rel_recall"], mean["rel_f1"]])
        its = {name: matched_items[(key, name)] for name in outputs if (key, name) in matched_items}
        matched_tables.append((key, rate, mrows, sig_rows(its)))

    # the paper's orderings (Yamangil & Shieber 2010 Table 1: SVM 54.46 < EM 57.67 < GS 61.64 RelF1)
    def order_line(values: dict, what: str) -> str:
        have = [n for n in ("svm", "em", "gs") if n in values]
        if len(have) < 2:
            return f"{what}: not enough systems run to compare."
        parts = []
        for a, b in [("svm", "em"), ("em", "gs"), ("svm", "gs")]:
            if a in values and b in values:
                holds = values[a] < values[b]
                parts.append(f"{LABEL[a]} < {LABEL[b]}: {'holds' if holds else 'does not hold'} "
                             f"({values[a]:.2f} vs {values[b]:.2f})")
        return f"{what}: " + "; ".join(parts) + "."

    order_own = order_line({n: own[n][0]["rel_f1"] for n in own}, "At each system's own rate")
    order_matched = "\n- ".join(
        order_line({n: matched[(key, n)][0]["rel_f1"] for (k, n) in matched if k == key},
                   f"At the matched {'gold' if key == 'gold' else 'paper GS'} rate ({targets[key]:.2f}%)")
        for key in ("gold", "paper-gs"))

    def observations() -> list[str]:
        """Computed remarks: McDonald against the tree-based systems, and the SVMs' relation precision."""
        out = []
        trees = [n for n in (*SVMS, "em", "vb", "gs") if n in outputs]
        if "mcdonald" in outputs and trees:
            gaps = [matched[(k, "mcdonald")][0]["rel_f1"] - matched[(k, n)][0]["rel_f1"] for k in targets
                    for n in trees]
            out.append(f"- McDonald vs every tree-based system at every matched rate: RelF1 difference "
                       f"{min(gaps):+.2f} to {max(gaps):+.2f} (McDonald minus the other), i.e. the paper's McDonald < "
                       f"STSG ordering {'does not hold' if min(gaps) > 0 else 'holds only in part'} here.")
        svms = [n for n in SVMS if n in outputs]
        if svms and "keep-all" in outputs:
            keep_p = own["keep-all"][0]["rel_precision"]
            worst = max([own[n][0]["rel_precision"] for n in svms]
                        + [matched[(k, n)][0]["rel_precision"] for k in targets for n in svms])
            others = [own[n][0]["rel_precision"] for n in outputs if n not in svms]
            out.append(f"- The SVMs' relation precision is at most {worst:.2f} at their own and every matched rate, "
                       f"against {min(others):.2f}-{max(others):.2f} for every other system at its own rate "
                       f"(keep-all {keep_p:.2f}), and it falls as a per-word penalty shortens their output.")
        return out

    ref = reference_gs(RESULTS)
    gs_check = ""
    if "gs" in per_seed:
        s0 = per_seed["gs"][0]
        gs_cpu = np.mean([r.get("train_cpu_s") or 0.0 for r in outputs["gs"]])
        gs_check = (f"GS budget: {args.gs_sweeps} annealed sweeps per seed (T 5 -> 0 linearly) instead of the "
                    f"paper's 5000 ({gs_cpu:.0f} CPU s per seed here; the 5000-sweep run of the `stsg` section took "
                    f"1425 s, ~24 min, per seed, too much for five seeds in this benchmark's budget). Check on seed "
                    f"{seeds[0]}: {args.gs_sweeps} sweeps give CompR {s0['compression_rate']:.2f}, token F1 "
                    f"{s0['token_f1']:.2f}, RelF1 {s0['rel_f1']:.2f}; the 5000-sweep seed-0 run of the `stsg` section "
                    f"(same data, parser and scorer) has " + (f"`| GS | {ref}` (CompR, token F1, RelP, RelR, RelF1, "
                                                             f"rules, train s)." if ref else "no GS row recorded.")
                    + " Per seed (CompR / token F1 / RelF1): " + "; ".join(
                        f"seed {sd}: {r['compression_rate']:.2f} / {r['token_f1']:.2f} / {r['rel_f1']:.2f}"
                        for sd, r in zip(seeds, per_seed["gs"])) + ".")
    body = [
        "## compression",
        "",
        f"Broadcast news (Clarke & Lapata), train lines 1-1000 (annotator {args.train_annotators}), dev lines "
        f"1001-1170 scored against all three annotators (mean of per-annotator scores). Sources parsed by the "
        f"foundation PCFG (h=2 v=2, ptb-sample train + gum-const; {ex.parse_counts['ok']} parsed, "
        f"{ex.parse_counts['failed'] + ex.parse_counts['too_long']} flat fallback); every system decodes the same "
        f"trees. GS: alpha={args.alpha:g}, beta={args.beta:g}, {args.gs_sweeps} sweeps annealed, seeds "
        f"{args.gs_seeds} (mean ± sd over seeds). EM/VB: {args.em_iterations} iterations (as in `stsg`). McDonald: "
        f"kept-bigram features over treegram's parse (POS = parse preterminals, head-rule dependencies, "
        f"constituents), {args.mcdonald_epochs} epochs of 1-best {args.mcdonald_update}, averaged weights, seed 0. "
        f"SVM (default): `treegram train stsg --method svm` ({svm_defaults()}, length calibrated on held-out training "
        f"pairs); SVM v1: the issue-13 model (version-1 features, Prec x BP2, C 0.01, not calibrated); other SVM "
        f"rows: version 2 at C={args.svm_c:g}, calibrated. RelF1: spaCy {scorer.versions['spacy']} {scorer.versions['pipeline']} dependency "
        f"triples without punctuation (a proxy for the paper's Stanford GRs, so absolute figures differ from the "
        f"paper's). {machine_line()}.",
        "",
        markdown_table(["system", "CompR %", "token F1", "RelP", "RelR", "RelF1", "rules", "train CPU s",
                        "sent/s (parse excl.)", "sent/s (parse incl.)"], rows),
        "",
    ]
    for name, why in not_run.items():
        body.append(f"- {LABEL[name]}: not run — {why}.")
    if not_run:
        body.append("")
    body += [f"Gold compression rate {gold_rate:.2f}%. Times are CPU seconds of the single benchmark process "
             f"(the machine was shared with other jobs, so wall-clock times were up to ~4x longer): training (GS: "
             f"mean per seed; EM/VB/SVM include building their grammar; the shared source parses are cached and not "
             f"counted) and compression of the {n_dev} dev sentences given their parse trees; parsing them with "
             f"the PCFG takes {parse_s:.1f} CPU s ({n_dev / parse_s:.1f} sentences/s), included in the last "
             f"column. rules = rules with a nonzero count (GS: seed {seeds[0]}); McDonald has no rules, its "
             f"size is the number of nonzero hashed feature weights.", ""]
    if gs_check:
        body += [gs_check, ""]
    body += ["Approximate randomization at each system's own rate (10,000 trials; counts pooled over the three "
             "annotators; GS = per-sentence counts averaged over its seeds; difference = first - second):", "",
             markdown_table(["comparison", "token F1 diff", "p", "RelF1 diff", "p"], sig_own), ""]
    for key, rate, mrows, srows in matched_tables:
        title = {"gold": "the gold rate", "paper-gs": "the paper's GS rate"}.get(key, f"{rate:g}%")
        body += [f"Matched compression rate: {title} ({rate:.2f}%), one global per-word reward per system "
                 f"(bisection on dev CompR; GS: per seed):", "",
                 markdown_table(["system", "reward", "CompR %", "token F1", "RelP", "RelR", "RelF1"], mrows), ""]
        if srows:
            body += [markdown_table(["comparison", "token F1 diff", "p", "RelF1 diff", "p"], srows), ""]
    body += ["Paper (Yamangil & Shieber 2010, Table 1): SVM 54.46 < EM 57.67 < GS 61.64 RelF1; Cohn & Lapata "
             "(2007, Table 2, broadcast news): McDonald 47.6 < STSG 53.4 RelF1.", "",
             f"- {order_own}", f"- {order_matched}", "",
             *observations(), "",
             "Caveats: the spaCy-triple RelF1 rewards length on this corpus (keep-all scores highest), which is why "
             "the matched-rate tables matter more than the own-rate one; all systems decode the same PCFG parses "
             "(1-best, h=2 v=2 on 4k trees), which the tree-based systems depend on far more than McDonald's "
             "bigram model with its soft syntactic features.", "",
             "CompR against RelF1 for every system (own rate and the matched rates; for the three SVM losses this "
             "is Cohn & Lapata's Figure 4 on broadcast news): benchmarks/compression_tradeoff.svg.", "",
             "Command: `python benchmarks/bench_compression.py --systems " + ",".join(systems)
             + f" --gs-seeds {args.gs_seeds} --gs-sweeps {args.gs_sweeps}`"]
    text = "\n".join(body)
    print(text)
    if not args.no_write:
        curves = {}
        for name in outputs:
            if name == "keep-all":
                continue
            c = [(own[name][0]["compression_rate"], own[name][0]["rel_f1"], True)]
            c += [(matched[(k, name)][0]["compression_rate"], matched[(k, name)][0]["rel_f1"], False) for k in targets]
            curves[LABEL[name]] = c
        tradeoff_svg(curves, ROOT / "benchmarks" / "compression_tradeoff.svg")
        write_section("compression", text)


if __name__ == "__main__":
    main()
