"""Noisy-channel compression (issue 14 item 3): the lexicalized model of Yamangil & Nelken (2008, six Witten-Bell
back-off levels) against Knight & Marcu's unlexicalized model (level 4 down), both trained on the same pairs -- the
comparison the paper left as future work.

Broadcast news (Clarke & Lapata): train lines 1-1000 (annotator 1) -> dev 1001-1170 against all three annotators,
the same PCFG parses as the `compression` section (`benchmarks/_stsg_experiment.py`); CompR, token F1, RelP/R/F1
at each model's own rate, at matched rates (one global per-word reward per system found by bisection on dev CompR:
the gold rate, and each channel model at the other's own rate) and with per-sentence rate control (`--rate`, the
gold rate); paired approximate randomization.  The STSG rows (EM, McDonald, GS seed 0) come from
benchmarks/out/compression (bench_compression.py's cache), trained there by the same code when missing.

Google (Filippova & Altun 2013): `--google-train` pairs sampled (seed 0) from train-180k-lossy, which is
lowercased with every number token replaced by `##`; the eval pairs (the first `--google-eval` of eval-10k,
re-aligned from text) are normalized the same way before parsing and decoding (scored on their original tokens).
Both sides are parsed by a PCFG (h=2 v=2) trained on ptb-sample train with the same normalization.

    nice -n 10 python benchmarks/bench_channel.py [--google-train 1000] [--google-eval 200] [--workers 1]
        [--skip-google] [--gs] [--no-write]

Rewrites the `channel` section of benchmarks/RESULTS.md.

Learning curve (issue 14 item 4): `--google-curve 1000,3000,10000 [--workers 2]` runs only that: nested samples
(seed 0, the first n pairs of one permutation, so each size contains the smaller ones and the comparison across
sizes is paired); the sample's long sides are parsed in slices (the sizes and every 1000th pair are slice ends) that
are cached one by one, so a bigger size parses only what the smaller ones did not, and an interrupted run keeps its
finished slices; at each size both models are trained on the same pairs and scored on the same eval pairs at own
rate and matched gold rate, with lexicalized vs KM approximate randomization.  Rewrites only the `channel-curve`
section.  It also reports back-off diagnostics per size (channel and source contexts seen, their Witten-Bell
weights, eval OOV, and which half of the model, log p(s) or log p(l|s), prefers the output to the gold compression).

Mined pairs (issue 14 item 4): `--mined [--workers 2]` runs only that: `treegram mine-revisions` over both dumps of
../shared/data/revisions, the mined long sides parsed by each eval set's parser (cased broadcast-news PCFG;
lowercase Google PCFG on normalized tokens), both models trained on 1000 mined pairs (both directions), on all of
them and on equal-sized compression-only / expansion-only sets, scored on broadcast-news dev and the Google eval pairs
next to the same models trained on 1000 in-domain pairs.  Rewrites only the `channel-mined` section.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import sys
import time
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
from _results import ROOT, machine_line, markdown_table, publish, require_shared  # noqa: E402

from treegram.compression.align import Pair, load_google_eval  # noqa: E402
from treegram.compression.evaluate import DependencyScorer, compare_systems, score_system  # noqa: E402
from treegram.compression.treeprep import model_fingerprint, parse_sentences, wrap_root  # noqa: E402
from treegram.formalism import load_model  # noqa: E402

from treegram.plugins.channel.compressor import train_channel  # noqa: E402

LEX, KM = "channel-6", "channel-4"
ABL = {"channel-6-pcfgsrc": (6, False), "channel-4-lexsrc": (4, True)}  # ablations: which half is lexicalized
LABEL = {LEX: "lexicalized channel (6 levels)", KM: "Knight & Marcu (level 4)", "keep-all": "keep-all",
         "channel-6-pcfgsrc": "ablation: 6-level channel, PCFG source", "channel-4-lexsrc":
         "ablation: level-4 channel, lexicalized source",
         "em": "STSG EM", "mcdonald": "McDonald", "gs": "STSG GS (seed 0)"}


def rate_of(keeps, tokens) -> float:
    return 100.0 * sum(int(np.sum(k)) for k in keeps) / sum(len(t) for t in tokens)


def decode_all(model, trees, tokens, **kw):
    c0 = time.process_time()
    keeps = [np.asarray(model.compress_tree(t, toks, **kw).keep, bool) for t, toks in zip(trees, tokens)]
    return keeps, time.process_time() - c0


def channel_outputs(tag: str, levels: int, pairs, trees, parser, dev_trees, dev_tokens, targets: dict, work: Path,
                    per_sentence_rate: float | None, refresh: bool, source_lexicalized=None) -> dict:
    """Train (or load) one channel model and decode the dev set: own rate, matched global rewards, per-sentence
    rate control.  Cached as JSON in `work`."""
    from bench_compression import matched_outputs

    cache = work / f"{tag}.json"
    res = json.loads(cache.read_text()) if cache.exists() and not refresh else None
    path = work / f"{tag}.model"
    model = None
    if res is None:
        if path.exists() and not refresh:
            model = load_model(path)
            train_cpu = model.info.get("training_cpu_seconds")
        else:
            c0 = time.process_time()
            model = train_channel(pairs, parser, levels=levels, trees=trees, source_lexicalized=source_lexicalized)
            train_cpu = time.process_time() - c0
            model.info["training_cpu_seconds"] = round(train_cpu, 2)
            model.save(path)
        keeps, dec = decode_all(model, dev_trees, dev_tokens)
        print(f"  {tag}: trained {train_cpu:.1f} CPU s, decoded {len(dev_tokens)} in {dec:.1f} CPU s, own CompR "
              f"{rate_of(keeps, dev_tokens):.2f}", file=sys.stderr)
        res = {"keeps": [k.astype(int).tolist() for k in keeps], "train_cpu_s": train_cpu, "decode_s": dec,
               "info": {k: v for k, v in model.info.items() if not isinstance(v, (list, dict))},
               "contexts": model.info.get("channel_contexts"), "matched": {}}
    missing = [k for k in targets if k not in res["matched"]]
    if missing or (per_sentence_rate is not None and "per_sentence" not in res):
        model = model or load_model(path)
        ex = SimpleNamespace(dev_src=dev_trees, dev_tokens=dev_tokens)
        for k in missing:
            res["matched"][k] = matched_outputs(model, ex, targets[k])
            print(f"  {tag} matched {k}: reward {res['matched'][k]['reward']:.3g} -> {res['matched'][k]['rate']}",
                  file=sys.stderr)
        if per_sentence_rate is not None and "per_sentence" not in res:
            keeps, dec = decode_all(model, dev_trees, dev_tokens, rate=per_sentence_rate)
            res["per_sentence"] = {"rate": per_sentence_rate, "keeps": [k.astype(int).tolist() for k in keeps],
                                   "decode_s": dec}
    from treegram.io import atomic_write_text

    atomic_write_text(cache, json.dumps(res))
    return res


def sig_table(items: dict, pairs, trials: int) -> list[list]:
    rows = []
    for a, b in pairs:
        if a not in items or b not in items:
            continue
        r = compare_systems(items[a], items[b], trials=trials, seed=0)
        rows.append([f"{LABEL.get(a, a)} vs {LABEL.get(b, b)}", r["token"]["difference"],
                     f"{r['token']['p_value']:.4f}", r["rel"]["difference"], f"{r['rel']['p_value']:.4f}"])
    return rows


def score_rows(systems: dict, tokens, gold, scorer):
    rows, items = {}, {}
    for name, keeps in systems.items():
        s, it = score_system(tokens, [np.asarray(k, bool) for k in keeps], gold, scorer)
        rows[name] = s
        items[name] = it
    return rows, items


def row(label, s, *extra):
    return [label, s["compression_rate"], s["token_f1"], s["rel_precision"], s["rel_recall"], s["rel_f1"], *extra]


def head_drop_rate(trees, keeps) -> float:
    """% of surviving constituents whose (long-tree, Collins) head word is dropped: how often a compression keeps a
    phrase but deletes its head."""
    from treegram.plugins.channel.model import analyse

    n = d = 0
    for tree, k in zip(trees, keeps):
        t = analyse(wrap_root(tree))
        k = np.asarray(k, bool)
        alive, _, _ = t.short_heads(k)
        for u in range(len(t)):
            if t.word_pos[u] < 0 and alive[u]:
                n += 1
                d += not k[t.head[u]]
    return 100.0 * d / max(n, 1)


COLS = ["system", "CompR %", "token F1", "RelP", "RelR", "RelF1"]
SIGCOLS = ["comparison", "token F1 diff", "p", "RelF1 diff", "p"]


# ---------------------------------------------------------------------------------------------------------------
def broadcast_news(args, shared: Path, scorer) -> list[str]:
    import bench_compression as bc
    from _stsg_experiment import load_experiment

    ex = load_experiment(shared, args.compression_work, train_annotators="1")
    work = args.work / "bn"
    work.mkdir(parents=True, exist_ok=True)
    gold_rate = round(ex.gold_rate(), 2)
    outs = {}
    for tag, levels in ((LEX, 6), (KM, 4)):
        outs[tag] = channel_outputs(f"{tag}-bn", levels, ex.train_pairs, ex.train_src, ex.parser, ex.dev_src,
                                    ex.dev_tokens, {"gold": gold_rate}, work, gold_rate / 100, args.refresh)
    for tag, (levels, lex) in ABL.items():
        outs[tag] = channel_outputs(f"{tag}-bn", levels, ex.train_pairs, ex.train_src, ex.parser, ex.dev_src,
                                    ex.dev_tokens, {"gold": gold_rate}, work, None, args.refresh, lex)
    own_rate = {t: rate_of(outs[t]["keeps"], ex.dev_tokens) for t in (LEX, KM)}
    # each channel model at the other's own rate
    for tag, other in ((LEX, KM), (KM, LEX)):
        outs[tag] = channel_outputs(f"{tag}-bn", 6 if tag == LEX else 4, ex.train_pairs, ex.train_src, ex.parser,
                                    ex.dev_src, ex.dev_tokens, {"gold": gold_rate, "other": round(own_rate[other], 2)},
                                    work, gold_rate / 100, False)
    # STSG rows from bench_compression's cache (same parses, pairs and scorer); trained there when missing
    bargs = SimpleNamespace(work=args.compression_work, refresh=False, gs_sweeps=500, alpha=100.0, beta=0.1,
                            em_iterations=30, mcdonald_epochs=10, mcdonald_update="mira", svm_c=0.01)
    targets = {"gold": gold_rate, "paper-gs": 65.52, "60": 60.0, "80": 80.0}
    stsg = {}
    for name in ["keep-all", "em", "mcdonald"] + (["gs"] if args.gs else []):
        tag = bc.settings_tag(name, 0, bargs)
        cached = (args.compression_work / f"{tag}-a1.json").exists()
        stsg[name] = bc.run_system(name, 0, ex, bargs, targets)
        stsg[name]["from_cache"] = cached

    own_sys = {LEX: outs[LEX]["keeps"], KM: outs[KM]["keeps"], **{n: outs[n]["keeps"] for n in ABL},
               **{n: r["keeps"] for n, r in stsg.items()}}
    own_scores, own_items = score_rows(own_sys, ex.dev_tokens, ex.gold, scorer)
    gold_sys = {LEX: outs[LEX]["matched"]["gold"]["keeps"], KM: outs[KM]["matched"]["gold"]["keeps"],
                **{n: outs[n]["matched"]["gold"]["keeps"] for n in ABL},
                **{n: r["matched"]["gold"]["keeps"] for n, r in stsg.items() if n != "keep-all"}}
    gold_scores, gold_items = score_rows(gold_sys, ex.dev_tokens, ex.gold, scorer)
    cross_sys = {f"{LEX}@KM": outs[LEX]["matched"]["other"]["keeps"], KM: outs[KM]["keeps"],
                 LEX: outs[LEX]["keeps"], f"{KM}@LEX": outs[KM]["matched"]["other"]["keeps"]}
    cross_scores, cross_items = score_rows(cross_sys, ex.dev_tokens, ex.gold, scorer)
    ps_sys = {LEX: outs[LEX]["per_sentence"]["keeps"], KM: outs[KM]["per_sentence"]["keeps"]}
    ps_scores, ps_items = score_rows(ps_sys, ex.dev_tokens, ex.gold, scorer)

    n_dev = len(ex.dev_tokens)
    own_rows = []
    for name in (LEX, KM, *ABL):
        r = outs[name]
        own_rows.append(row(LABEL[name], own_scores[name], f"{r['train_cpu_s']:.0f}", f"{n_dev / r['decode_s']:.1f}"))
    for name, r in stsg.items():
        dec = r.get("decode_s") or 0.0
        tr = r.get("train_cpu_s")
        own_rows.append(row(LABEL[name] + (" [cached]" if r["from_cache"] else ""), own_scores[name],
                            "-" if name == "keep-all" else (f"{tr:.0f}" if tr else "?"),
                            f"{n_dev / dec:.0f}" if dec else "-"))
    pairs_own = [(LEX, KM), (LEX, "em"), (LEX, "mcdonald"), (LEX, "gs"), (KM, "em"), (KM, "gs"),
                 ("channel-6-pcfgsrc", KM), ("channel-4-lexsrc", KM), ("channel-6-pcfgsrc", LEX),
                 ("channel-4-lexsrc", LEX)]
    gold_rows = [row(LABEL[n], gold_scores[n], f"{(outs[n] if n in outs else stsg[n])['matched']['gold']['reward']:.3g}")
                 for n in gold_sys]
    cross_rows = [row(f"{LABEL[LEX]} at KM's rate", cross_scores[f"{LEX}@KM"],
                      f"{outs[LEX]['matched']['other']['reward']:.3g}"),
                  row(f"{LABEL[KM]} (own rate)", cross_scores[KM], "0"),
                  row(f"{LABEL[LEX]} (own rate)", cross_scores[LEX], "0"),
                  row(f"{LABEL[KM]} at the lexicalized rate", cross_scores[f"{KM}@LEX"],
                      f"{outs[KM]['matched']['other']['reward']:.3g}")]
    cross_sig = sig_table({"a": cross_items[f"{LEX}@KM"], "b": cross_items[KM]}, [("a", "b")], args.trials) + \
        sig_table({"c": cross_items[LEX], "d": cross_items[f"{KM}@LEX"]}, [("c", "d")], args.trials)
    cross_sig[0][0] = f"lexicalized vs KM at KM's own rate ({own_rate[KM]:.2f}%)"
    if len(cross_sig) > 1:
        cross_sig[1][0] = f"lexicalized vs KM at the lexicalized own rate ({own_rate[LEX]:.2f}%)"
    ps_rows = [row(LABEL[n], ps_scores[n], f"{n_dev / outs[n]['per_sentence']['decode_s']:.1f}") for n in ps_sys]
    hd = {f"gold (annotator {a})": head_drop_rate(ex.dev_src, g) for a, g in enumerate(ex.gold, 1)}
    hd.update({LABEL[n]: head_drop_rate(ex.dev_src, k) for n, k in own_sys.items() if n != "keep-all"})

    def d(a, b, table, items):  # RelF1 difference and p
        r = compare_systems(items[a], items[b], trials=args.trials, seed=0)["rel"]
        return f"{table[a]['rel_f1'] - table[b]['rel_f1']:+.2f} (p = {r['p_value']:.4f})"

    abl6, abl4 = "channel-6-pcfgsrc", "channel-4-lexsrc"
    findings = [
        f"- Lexicalized vs KM, same pairs: RelF1 {d(LEX, KM, own_scores, own_items)} at their own rates "
        f"(CompR {own_scores[LEX]['compression_rate']:.2f} vs {own_scores[KM]['compression_rate']:.2f}), "
        f"{d(LEX, KM, gold_scores, gold_items)} at the matched gold rate; token F1 differences are small and not "
        f"significant at either.",
        f"- The ablations put the loss on the lexicalized *source model*: lexicalizing only the channel (6 levels, "
        f"PCFG source) against KM: RelF1 {d(abl6, KM, own_scores, own_items)} own rate, "
        f"{d(abl6, KM, gold_scores, gold_items)} matched; lexicalizing only the source (level-4 channel) against "
        f"KM: {d(abl4, KM, own_scores, own_items)} own, {d(abl4, KM, gold_scores, gold_items)} matched.",
        "- A likely mechanism (seen in examples, not measured over the corpus): the lexicalized source model scores "
        "the short tree with the short tree's heads, so deleting a phrase's head makes another word its head, and "
        "with 1,000 training pairs a reduced rule can be likely under the new head (NP -> DT given head `some`: "
        "'The guy has some [ideas] .', where KM keeps 'ideas'). Share of surviving constituents whose head word is "
        "deleted (own rates): " + ", ".join(f"{k} {v:.1f}%" for k, v in hd.items()) + "; the models with the "
        "lexicalized source delete heads about as often as the annotators, KM far less, so the head-deletion "
        "rate alone does not separate good from bad compressions here.",
        f"- Next to the STSG rows: at the matched gold rate KM's RelF1 ({gold_scores[KM]['rel_f1']:.2f}) is above "
        f"EM's ({gold_scores['em']['rel_f1']:.2f}, {d(KM, 'em', gold_scores, gold_items)})"
        + (f" and GS seed 0's ({gold_scores['gs']['rel_f1']:.2f}, {d(KM, 'gs', gold_scores, gold_items)})"
           if "gs" in gold_scores else "")
        + f", close to McDonald's ({gold_scores['mcdonald']['rel_f1']:.2f}); the lexicalized model is below all "
          f"of them ({gold_scores[LEX]['rel_f1']:.2f}).",
    ]
    ctx = outs[LEX]["contexts"] or {}
    body = [
        "### Broadcast news",
        "",
        f"Train lines 1-1000 (annotator 1; {len(ex.train_pairs)} pairs), dev 1001-1170 against the three annotators "
        f"(mean of per-annotator scores), the same PCFG parses as the `compression` section ({ex.parse_counts['ok']} "
        f"parsed, {ex.parse_counts['failed'] + ex.parse_counts['too_long']} flat fallback). Gold rate "
        f"{gold_rate:.2f}%. Channel contexts seen per level (lexicalized model): "
        + ", ".join(f"{k} {v}" for k, v in ctx.items()) + ".",
        "",
        "At each system's own rate (no length control; train CPU s; dev sentences/s given the parse):",
        "",
        markdown_table(COLS + ["train CPU s", "sent/s"], own_rows),
        "",
        markdown_table(SIGCOLS, sig_table(own_items, pairs_own, args.trials)),
        "",
        f"Matched at the gold rate ({gold_rate:.2f}%): one global per-word reward per system (bisection on dev CompR):",
        "",
        markdown_table(COLS + ["reward"], gold_rows),
        "",
        markdown_table(SIGCOLS, sig_table(gold_items, pairs_own, args.trials)),
        "",
        "Each channel model at the other's own rate (global reward):",
        "",
        markdown_table(COLS + ["reward"], cross_rows),
        "",
        markdown_table(SIGCOLS, cross_sig),
        "",
        f"Per-sentence rate control (`treegram compress --rate {gold_rate / 100:.4f}`: per sentence the best "
        f"compression within 0.05 of the gold share of its words, else the nearest; `benchmarks/bench_rate.py`):",
        "",
        markdown_table(COLS + ["sent/s"], ps_rows),
        "",
        markdown_table(SIGCOLS, sig_table(ps_items, [(LEX, KM)], args.trials)),
        "",
*scaling_rows(args, shared, ex, scorer, gold_rate, work),
        "",
        "Computed observations:",
        "",
        *findings,
    ]
    return body


def scaling_rows(args, shared: Path, ex, scorer, gold_rate: float, work: Path) -> list[str]:
    """Three times the training pairs: lines 1-1000 with each of the three annotators' compressions."""
    from _stsg_experiment import load_experiment

    ex3 = load_experiment(shared, args.compression_work, train_annotators="123")
    outs = {tag: channel_outputs(f"{tag}-bn-a123", levels, ex3.train_pairs, ex3.train_src, ex3.parser, ex.dev_src,
                                 ex.dev_tokens, {"gold": gold_rate}, work, None, args.refresh)
            for tag, levels in ((LEX, 6), (KM, 4))}
    own, own_items = score_rows({k: v["keeps"] for k, v in outs.items()}, ex.dev_tokens, ex.gold, scorer)
    mat, mat_items = score_rows({k: v["matched"]["gold"]["keeps"] for k, v in outs.items()}, ex.dev_tokens, ex.gold,
                                scorer)
    rows = [row(LABEL[k] + ", own rate", own[k]) for k in (LEX, KM)] + \
        [row(LABEL[k] + ", gold rate", mat[k]) for k in (LEX, KM)]
    sig = sig_table(own_items, [(LEX, KM)], args.trials) + sig_table(mat_items, [(LEX, KM)], args.trials)
    sig[0][0] += " (own rates)"
    sig[1][0] += " (gold rate)"
    return ["", f"More data: the same 1000 training sentences with all three annotators' compressions "
                f"({len(ex3.train_pairs)} pairs), same dev:", "", markdown_table(COLS, rows), "",
            markdown_table(SIGCOLS, sig)]


# ---------------------------------------------------------------------------------------------------------------
BRACKETS = {"(": "-lrb-", ")": "-rrb-", "{": "-lcb-", "}": "-rcb-", "[": "-lsb-", "]": "-rsb-"}


def normalize(tok: str) -> str:
    """The lossy Google training data's form: lowercased, every token with a digit -> ##; brackets as the
    (lowercased) PTB escapes, the words the normalized PTB trees have for them."""
    if re.search(r"\d", tok):
        return "##"
    return BRACKETS.get(tok, tok.lower())


def google_parser(shared: Path, work: Path):
    path = work / "pcfg-lower.model"
    if not path.exists():
        from treegram.grammar.pcfg import PCFGModel, PCFGSettings
        from treegram.trees import read_treebank

        trees = [t.map_words(normalize) for t in read_treebank([shared / "ptb-sample" / "train"], on_error="skip",
                                                                on_problem=lambda p: None)]
        PCFGModel.train(trees, PCFGSettings(horizontal=2, vertical=2)).save(path)
    return load_model(path), path


def google_train_pairs(shared: Path, n: int, max_len: int, seed: int = 0) -> list[Pair]:
    with gzip.open(shared / "compression" / "google" / "train-180k-lossy" / "train.tsv.gz", "rt",
                   encoding="utf-8") as fh:
        next(fh)
        rows = [line.rstrip("\n").split("\t") for line in fh]
    rng = np.random.default_rng(seed)
    out = []
    for i in rng.permutation(len(rows)):
        toks, labels = [normalize(w) for w in rows[i][0].split()], rows[i][1].split()
        if not toks or len(toks) != len(labels) or len(toks) > max_len:
            continue
        keep = np.array([lab == "1" for lab in labels])
        out.append(Pair(toks, [w for w, k in zip(toks, keep) if k], keep, True, int(i) + 2))
        if len(out) == n:
            break
    return out



def google_eval_set(args, shared: Path, parser, ppath, pid, work: Path):
    """The Google eval pairs the Google rows score on (the first --google-eval of eval-10k), normalized and parsed
    with the Google parser (cached): (pairs, normalized tokens, parse trees, gold keeps, gold rate %, parse counts)."""
    evalp = load_google_eval(shared / "compression" / "google" / "eval-10k", limit=args.google_eval)
    eval_norm = [[normalize(w) for w in p.source] for p in evalp]
    eval_trees, counts = parse_sentences(eval_norm, parser, workers=args.workers, parser_path=ppath, parser_id=pid,
                                         cache_dir=work / "cache")
    gold = [[p.keep for p in evalp]]
    return evalp, eval_norm, [wrap_root(t) for t in eval_trees], gold, round(rate_of(gold[0], eval_norm), 2), counts


def google(args, shared: Path, scorer) -> list[str]:
    work = args.work / "google"
    work.mkdir(parents=True, exist_ok=True)
    parser, ppath = google_parser(shared, work)
    pid = model_fingerprint(ppath)
    train = google_train_pairs(shared, args.google_train, args.google_max_len)
    t0 = time.time()
    c0 = time.process_time()
    train_trees, tc = parse_sentences([p.source for p in train], parser, workers=args.workers, parser_path=ppath,
                                      parser_id=pid, cache_dir=work / "cache")
    evalp, eval_norm, eval_trees, gold, gold_rate, ec = google_eval_set(args, shared, parser, ppath, pid, work)
    parse_wall, parse_cpu = time.time() - t0, time.process_time() - c0
    timing = work / "parse-time.json"  # the time of the run that parsed (later runs read the cached trees)
    if parse_wall > 5.0 or not timing.exists():
        timing.write_text(json.dumps({"wall": parse_wall, "cpu": parse_cpu, "workers": args.workers}))
    parse_time = json.loads(timing.read_text())
    outs = {}
    for tag, levels in ((LEX, 6), (KM, 4)):
        outs[tag] = channel_outputs(f"{tag}-google{args.google_train}", levels, train, train_trees, parser, eval_trees,
                                    eval_norm, {"gold": gold_rate}, work, None, args.refresh)
    srcs = [p.source for p in evalp]
    own_sys = {LEX: outs[LEX]["keeps"], KM: outs[KM]["keeps"], "keep-all": [[1] * len(s) for s in srcs]}
    own_scores, own_items = score_rows(own_sys, srcs, gold, scorer)
    m_sys = {LEX: outs[LEX]["matched"]["gold"]["keeps"], KM: outs[KM]["matched"]["gold"]["keeps"]}
    m_scores, m_items = score_rows(m_sys, srcs, gold, scorer)
    n = len(srcs)
    own_rows = [row(LABEL[k], own_scores[k], f"{outs[k]['train_cpu_s']:.0f}", f"{n / outs[k]['decode_s']:.1f}")
                for k in (LEX, KM)] + [row("keep-all", own_scores["keep-all"], "-", "-")]
    m_rows = [row(LABEL[k], m_scores[k], f"{outs[k]['matched']['gold']['reward']:.3g}") for k in (LEX, KM)]
    train_rate = rate_of([p.keep for p in train], [p.source for p in train])
    return [
        "### Google",
        "",
        f"Train: {len(train)} pairs sampled (seed 0) from train-180k-lossy (at most {args.google_max_len} tokens; gold "
        f"rate {train_rate:.2f}%); these are lowercased with every number token as `##` (and 1.5% `<unk>`, kept as "
        f"a word). Eval: the first {n} pairs of eval-10k ({sum(not p.pure_deletion for p in evalp)} not pure "
        f"deletions, projected on their LCS), lowercased and digit tokens mapped to `##` the same way for parsing "
        f"and decoding, scored on their original tokens against the one gold compression (gold rate {gold_rate:.2f}%). "
        f"Parser: PCFG h=2 v=2 on ptb-sample train with the same normalization; parsing the {len(train) + n} "
        f"sentences took {parse_time['wall']:.0f} s wall / {parse_time['cpu']:.0f} s CPU with "
        f"{parse_time['workers']} worker(s) on the shared machine, in the run that parsed them (later runs read the "
        f"cached trees); flat fallback: train {tc.get('failed', 0) + tc.get('too_long', 0)}, eval "
        f"{ec.get('failed', 0) + ec.get('too_long', 0)}.",
        "",
        markdown_table(COLS + ["train CPU s", "sent/s"], own_rows),
        "",
        markdown_table(SIGCOLS, sig_table(own_items, [(LEX, KM), (LEX, "keep-all")], args.trials)),
        "",
        f"Matched at the gold rate ({gold_rate:.2f}%, global reward):",
        "",
        markdown_table(COLS + ["reward"], m_rows),
        "",
        markdown_table(SIGCOLS, sig_table(m_items, [(LEX, KM)], args.trials)),
    ]


# ---------------------------------------------------------------------------------------------------------------
def curve_chunks(sizes: list[int], step: int = 1000) -> list[tuple[int, int]]:
    """Consecutive slices of the nested sample whose ends include every curve size: each slice is parsed and
    cached on its own, so a bigger size re-uses the smaller sizes' parses (and an interrupted run keeps its
    finished slices)."""
    top = max(sizes)
    bounds = sorted(set(sizes) | set(range(step, top, step)))
    return list(zip([0] + bounds[:-1], bounds))


def _cpu_with_children() -> float:
    """CPU of this process plus its finished children (the Dask worker processes of a closed LocalCluster)."""
    import resource

    s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime


def parse_curve(train: list[Pair], parser, ppath: Path, pid: str, work: Path, workers: int, sizes: list[int]):
    """Parse the long sides of `train` slice by slice (see curve_chunks); returns (trees, counts, timings) where
    timings maps "a-b" to the wall/CPU seconds of the run that parsed that slice."""
    timing_path = work / "parse-time.json"
    timings = json.loads(timing_path.read_text()) if timing_path.exists() else {}
    trees, counts = [], {"ok": 0, "failed": 0, "too_long": 0}
    for a, b in curve_chunks(sizes):
        t0, c0 = time.time(), _cpu_with_children()
        tr, tc = parse_sentences([p.source for p in train[a:b]], parser, workers=workers, parser_path=ppath,
                                 parser_id=pid, cache_dir=work / "cache")
        wall, cpu = time.time() - t0, _cpu_with_children() - c0
        if wall > 5.0 or f"{a}-{b}" not in timings:  # cached slices load in well under a second
            timings[f"{a}-{b}"] = {"wall": round(wall, 1), "cpu": round(cpu, 1), "workers": workers,
                                   "cached": wall <= 5.0}
            from treegram.io import atomic_write_text

            atomic_write_text(timing_path, json.dumps(timings, indent=1))
        print(f"  parsed {a}-{b}: {wall:.0f} s wall, {cpu:.0f} s CPU", file=sys.stderr)
        trees += tr
        for k in counts:
            counts[k] += int(tc.get(k, 0))
    return trees, counts, timings


def score_parts(g, t, keep) -> tuple[float, float]:
    """(log p(s), log p(l | s)) of one compression: the source-model and the channel halves (expansions plus added
    subtrees) of `ChannelGrammar.score`, whose sum they are."""
    from treegram.plugins.channel.model import Channel

    keep = np.asarray(keep, dtype=bool)
    alive, head, kept_kids = t.short_heads(keep)
    src = g.source.logp(g.source.events(t, alive, head, kept_kids))
    ch = 0.0
    for u in range(len(t)):
        if not alive[u] or t.word_pos[u] >= 0:
            continue
        kids = t.children[u]
        ch += g.channel.logp(Channel.describe_event(t, u, tuple(i for i, c in enumerate(kids) if alive[c])))
        ch += sum(g.added.logp(g._drop_events(t, c, u)) for c in kids if not alive[c])
    return src, ch


def backoff_diagnostics(g, trees, gold_keeps, out_keeps) -> dict:
    """Why a model does (not) gain from data, on the eval sentences: how often the gold compressions' contexts
    were seen in training and the Witten-Bell weight C/(C+T) they get at each back-off level (0 when unseen),
    for the channel (levels 1-4) and the lexicalized source model (rule given (category, head word); word given
    (tag, category, parent category, parent head word)); the share of eval words outside the vocabulary; and the
    mean score difference (model output at the gold rate - gold compression) split into source and channel."""
    from treegram.plugins.channel.model import Channel, _key, analyse

    acc: dict = {}

    def note(name, table, ctx):
        c, ty = table.stats(ctx)
        a = acc.setdefault(name, [0, 0, 0.0])
        a[0] += 1
        a[1] += c > 0
        a[2] += c / (c + ty) if c > 0 else 0.0

    oov = n_words = 0
    d_src, d_ch, d_rules = [], [], []
    first = 1 if g.levels == 6 else 4
    for tree, gk, ok in zip(trees, gold_keeps, out_keeps):
        t = analyse(wrap_root(tree))
        gk, ok = np.asarray(gk, bool), np.asarray(ok, bool)
        oov += sum(w not in g.source.vocab for w in t.words)
        n_words += len(t.words)
        if not gk.any():
            continue
        alive, head, kept_kids = t.short_heads(gk)
        for u in range(len(t)):
            if not alive[u] or t.word_pos[u] >= 0:
                continue
            kids = t.children[u]
            ev = Channel.describe_event(t, u, tuple(i for i, c in enumerate(kids) if alive[c]))
            for k in range(first, 5):
                note(f"channel level {k}", g.channel.tables[k], ev["ctx"][k])
        if g.source.lexicalized:
            for kind, a in g.source.events(t, alive, head, kept_kids):
                if kind == "r":
                    note("source rule | (cat, head word)", g.source.rule_lex, _key(a[0], a[1]))
                elif a[3] != "<TOP>":
                    note("source word | (tag, cat, parent cat, parent head word)", g.source.word_lex,
                         _key(a[1], a[2], a[3], a[4]))
        if ok.any():
            so, co = score_parts(g, t, ok)
            sg, cg = score_parts(g, t, gk)
            d_src.append(so - sg)
            d_ch.append(co - cg)
            rw = []
            for k in (ok, gk):
                al, hd, kk = t.short_heads(k)
                evs = g.source.events(t, al, hd, kk)
                rw.append(sum(g.source.rule_logp(*a) for kind, a in evs if kind == "r"))
            d_rules.append(rw[0] - rw[1])
    return {"oov": 100.0 * oov / max(n_words, 1),
            "levels": {k: (100.0 * v[1] / max(v[0], 1), v[2] / max(v[0], 1)) for k, v in acc.items()},
            "d_source": float(np.mean(d_src)) if d_src else 0.0, "d_channel": float(np.mean(d_ch)) if d_ch else 0.0,
            "d_source_rules": float(np.mean(d_rules)) if d_rules else 0.0}


def google_curve(args, shared: Path, scorer) -> list[str]:
    """Learning curve on Google pairs: nested samples (seed 0; the first n pairs of one permutation, so each size
    contains the smaller ones and the curve is paired), lexicalized vs KM trained on the same pairs at each size,
    scored on the same eval pairs at their own rates and at the matched gold rate."""
    sizes = sorted(set(args.google_curve))
    work = args.work / "curve"
    work.mkdir(parents=True, exist_ok=True)
    parser, ppath = google_parser(shared, work)
    pid = model_fingerprint(ppath)
    train = google_train_pairs(shared, max(sizes), args.google_max_len)
    if len(train) < max(sizes):
        raise SystemExit(f"only {len(train)} training pairs of at most {args.google_max_len} tokens")
    train_trees, tc, timings = parse_curve(train, parser, ppath, pid, work, args.workers, sizes)
    evalp, eval_norm, eval_trees, gold, gold_rate, ec = google_eval_set(args, shared, parser, ppath, pid, work)
    srcs = [p.source for p in evalp]
    n_eval = len(srcs)
    rows, sig_rows, size_rows, gold_items_at, diag_rows = [], [], [], {}, []
    for n in sizes:
        outs = {}
        for tag, levels in ((LEX, 6), (KM, 4)):
            outs[tag] = channel_outputs(f"{tag}-curve{n}", levels, train[:n], train_trees[:n], parser, eval_trees,
                                        eval_norm, {"gold": gold_rate}, work, None, args.refresh)
        own, own_items = score_rows({k: outs[k]["keeps"] for k in outs}, srcs, gold, scorer)
        mat, mat_items = score_rows({k: outs[k]["matched"]["gold"]["keeps"] for k in outs}, srcs, gold, scorer)
        for k in (LEX, KM):
            rows.append([n, LABEL[k], own[k]["compression_rate"], own[k]["token_f1"], own[k]["rel_f1"],
                         mat[k]["compression_rate"], mat[k]["token_f1"], mat[k]["rel_f1"]])
            info = outs[k]["info"]
            ctx = outs[k]["contexts"] or {}
            size_rows.append([n, LABEL[k], f"{outs[k]['train_cpu_s']:.1f}", info.get("training_seconds", "?"),
                              f"{(work / f'{k}-curve{n}.model').stat().st_size / 1024:.0f}", sum(ctx.values()),
                              info.get("source_vocab", "-"), f"{n_eval / outs[k]['decode_s']:.1f}"])
        gold_items_at[n] = (mat, mat_items)
        for k in (LEX, KM):
            dg = backoff_diagnostics(load_model(work / f"{k}-curve{n}.model").grammar, eval_trees, gold[0],
                                     outs[k]["matched"]["gold"]["keeps"])
            lv = dg["levels"]
            cell = lambda name: (f"{lv[name][0]:.1f} / {lv[name][1]:.2f}" if name in lv else "-")  # noqa: E731
            diag_rows.append([n, LABEL[k], f"{dg['oov']:.1f}", *(cell(f"channel level {j}") for j in (1, 2, 3, 4)),
                              cell("source rule | (cat, head word)"),
                              cell("source word | (tag, cat, parent cat, parent head word)"),
                              f"{dg['d_source']:+.2f}", f"{dg['d_source_rules']:+.2f}",
                              f"{dg['d_source'] - dg['d_source_rules']:+.2f}", f"{dg['d_channel']:+.2f}"])
        for what, table, items in (("own rates", own, own_items), ("gold rate", mat, mat_items)):
            r = compare_systems(items[LEX], items[KM], trials=args.trials, seed=0)
            sig_rows.append([n, what, r["token"]["difference"], f"{r['token']['p_value']:.4f}",
                             r["rel"]["difference"], f"{r['rel']['p_value']:.4f}"])
    # which half of the lexicalized model holds it back at the largest size: the two ablations of the `channel`
    # section (lexicalized channel with a PCFG source; KM's channel with the lexicalized source), gold rate
    top = sizes[-1]
    abl_outs = {tag: channel_outputs(f"{tag}-curve{top}", levels, train[:top], train_trees[:top], parser, eval_trees,
                                     eval_norm, {"gold": gold_rate}, work, None, args.refresh, lex)
                for tag, (levels, lex) in ABL.items()}
    top_mat, top_items = gold_items_at[top]
    a_sc, a_items = score_rows({k: v["matched"]["gold"]["keeps"] for k, v in abl_outs.items()}, srcs, gold, scorer)
    a_items.update({k: top_items[k] for k in (LEX, KM)})
    abl_rows = [row(LABEL[k], a_sc[k]) for k in ABL] + [row(LABEL[k], top_mat[k]) for k in (LEX, KM)]
    abl_sig = []
    for a_, b_ in (("channel-6-pcfgsrc", KM), ("channel-4-lexsrc", KM), ("channel-6-pcfgsrc", LEX)):
        r = compare_systems(a_items[a_], a_items[b_], trials=args.trials, seed=0)
        abl_sig.append([f"{LABEL[a_]} vs {LABEL[b_]}", r["token"]["difference"], f"{r['token']['p_value']:.4f}",
                        r["rel"]["difference"], f"{r['rel']['p_value']:.4f}"])
    used = {f"{a}-{b}": b - a for a, b in curve_chunks(sizes)}
    timings = {k: v for k, v in timings.items() if k in used}
    parse_rows = [[k, f"{v['wall']:.0f}", f"{v['cpu']:.0f}", v["workers"], "yes" if v.get("cached") else "no"]
                  for k, v in timings.items()]
    parsed = {k: v for k, v in timings.items() if not v.get("cached") and v["cpu"] > 0}
    spc = sum(used[k] for k in parsed) / sum(v["cpu"] for v in parsed.values()) if parsed else None
    # does each model itself gain from more data? the smallest vs the largest size, same eval sentences
    growth, trend = [], []
    if len(sizes) > 1:
        lo, hi = sizes[0], sizes[-1]
        for k in (LEX, KM):
            r = compare_systems(gold_items_at[hi][1][k], gold_items_at[lo][1][k], trials=args.trials, seed=0)
            growth.append([f"{LABEL[k]}: {hi} vs {lo} pairs (gold rate)", r["token"]["difference"],
                           f"{r['token']['p_value']:.4f}", r["rel"]["difference"], f"{r['rel']['p_value']:.4f}"])
            trend.append(f"{LABEL[k]} " + " -> ".join(f"{gold_items_at[n][0][k]['rel_f1']:.2f}" for n in sizes))
    train_rate = rate_of([p.keep for p in train], [p.source for p in train])
    lines = [
        "## channel-curve", "",
        "Learning curve of the noisy-channel compressors on Google pairs (issue 14 item 4): the lexicalized model "
        "(6 back-off levels, lexicalized source) against Knight & Marcu (level 4, PCFG source), trained on the same "
        f"pairs at each size. Training pairs: nested samples (seed 0; the first n of one permutation of "
        f"train-180k-lossy, at most {args.google_max_len} tokens, so every size contains the smaller ones; gold "
        f"rate of the {max(sizes)}: {train_rate:.2f}%), normalized as in the `channel` section's Google part. Eval: "
        f"the first {n_eval} pairs of eval-10k (gold rate {gold_rate:.2f}%), the same parses at every size. Only "
        "the long side is parsed (the short tree is projected from it). RelF1: spaCy "
        f"{scorer.versions['spacy']} {scorer.versions['pipeline']} dependency triples without punctuation; "
        f"approximate randomization {args.trials} trials, difference = lexicalized - KM. {machine_line()}.",
        "",
        "CompR / token F1 / RelF1 at each model's own rate and at the matched gold rate (one global per-word reward, "
        "bisection on eval CompR):",
        "",
        markdown_table(["pairs", "system", "own CompR", "own token F1", "own RelF1", "gold-rate CompR",
                        "gold-rate token F1", "gold-rate RelF1"], rows),
        "",
        markdown_table(["pairs", "rate", "token F1 diff", "p", "RelF1 diff", "p"], sig_rows),
        "",
        *([f"Gold-rate RelF1 by size ({', '.join(map(str, sizes))} pairs): " + "; ".join(trend) + ". Each model "
           "at the largest size against itself at the smallest (paired AR on the same eval sentences):", "",
           markdown_table(SIGCOLS, growth), ""] if growth else []),
        "Back-off diagnostics on the eval sentences (why a model does or does not gain from data): eval tokens "
        "outside the training vocabulary; for the gold compressions' events, the share whose context was seen in "
        "training / the mean Witten-Bell weight C/(C+T) of the context's own estimate (0 when unseen) at channel "
        "levels 1-4 and for the lexicalized source model's rule and dependent-word contexts; and the mean score "
        "difference, output at the gold rate minus gold compression, of log p(s) (split into its rule and word "
        "events) and of log p(l|s) (the reward "
        "term excluded; the decoder maximises their sum plus the reward, so a positive part is the half that prefers "
        "the model's output to the gold one):",
        "",
        markdown_table(["pairs", "system", "eval OOV %", "ch. L1 seen % / weight", "ch. L2", "ch. L3", "ch. L4",
                        "src rule, ctx (cat, hw)", "src word, ctx (.., parent hw)", "d log p(s)",
                        "of it rules", "of it words", "d log p(l given s)"], diag_rows),
        "",
        f"Ablations at {top} pairs, matched gold rate (which half of the lexicalized model holds it back: the "
        "6-level channel with KM's PCFG source model, and KM's level-4 channel with the lexicalized source model):",
        "",
        markdown_table(COLS, abl_rows),
        "",
        markdown_table(SIGCOLS, abl_sig),
        "",
        "Training time and model size (model file includes the embedded parser, ~150 KB; contexts: channel "
        "contexts over all levels; eval sentences/s given the parse):",
        "",
        markdown_table(["pairs", "system", "train CPU s", "train wall s", "model KB", "channel contexts",
                        "vocabulary", "sent/s"], size_rows),
        "",
        f"Parsing (PCFG h=2 v=2, `--workers {args.workers}` through core batchparse; slices cached separately; "
        f"CPU = driver + finished worker processes from rusage; the machine is shared; a slice marked as read from "
        f"the cache was parsed by an earlier run and not timed here; the times of a slice parsed earlier are those "
        f"of the run that parsed it, as recorded in the work folder's parse-time.json): flat fallback train "
        f"{tc['failed'] + tc['too_long']}, eval {ec.get('failed', 0) + ec.get('too_long', 0)}.",
        "",
        markdown_table(["slice", "wall s", "CPU s", "workers", "read from cache"], parse_rows),
        "",
        (f"Measured parse rate on the slices parsed by this script: {spc:.1f} long sentences per CPU-second; at that "
         f"rate 100k "
         f"pairs (long sides only) would take ~{100000 / spc:,.0f} CPU-s (estimate, not run)." if spc else
         "All slices were read from the cache in this run."),
        "",
        "Command: `nice -n 10 python benchmarks/bench_channel.py --google-curve "
        + ",".join(map(str, sizes)) + f" --workers {args.workers}`",
    ]
    return lines


# ---------------------------------------------------------------------------------------------------------------
MINED_DUMPS = ("enwiki-20140102-sample.xml.gz", "python-peps-history.xml.bz2")
PTB_BRACKETS = {"(": "-LRB-", ")": "-RRB-", "[": "-LSB-", "]": "-RSB-", "{": "-LCB-", "}": "-RCB-"}


def mine_pairs(shared: Path, work: Path, workers: int) -> tuple[list[dict], dict]:
    """`treegram mine-revisions` over both dumps in ../shared/data/revisions (run once; the TSV and the command's
    JSON summary are cached in `work`).  Returns the TSV rows as dicts and the summary."""
    import subprocess

    out, summary = work / "pairs.tsv", work / "mining.json"
    if not out.exists() or not summary.exists():
        cmd = [str(Path(sys.executable).parent / "treegram"), "-q", "mine-revisions",
               *[str(shared / "revisions" / d) for d in MINED_DUMPS], "--out", str(out), "--workers", str(workers),
               "--json"]
        summary.write_text(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)
    return read_mined(out), json.loads(summary.read_text())


def read_mined(path: Path) -> list[dict]:
    lines = path.read_text(encoding="utf-8").splitlines()
    head = lines[0].split("\t")
    return [dict(zip(head, line.split("\t"))) for line in lines[1:] if line.strip()]


def mined_token_pairs(rows: list[dict]) -> tuple[list[Pair], list[dict], int]:
    """Tokenize the mined sentences with the miner's own tokenizer and deletion test (`deletion_compression`: the
    short side's first token may differ in case, as when a sentence-initial phrase is deleted; the long side's
    token is kept).  Both directions give a (long, short) pair whose short side is a word deletion of the long one:
    `compression` means the later revision is the short side, `expansion` the earlier one; the TSV's long/short
    columns are already oriented, so the direction only matters for the subsets.  Returns (pairs, their rows,
    number of rows that are not a deletion under that test, which are dropped; 0 for the miner's own output)."""
    from treegram.plugins.revisions.align import deletion_compression
    from treegram.plugins.revisions.text import tokenize

    pairs, kept, bad = [], [], 0
    for i, r in enumerate(rows):
        lt, st = tokenize(r["long"]), tokenize(r["short"])
        deleted = deletion_compression(lt, st)
        if deleted is None:
            bad += 1
            continue
        keep = np.ones(len(lt), bool)
        keep[deleted] = False
        pairs.append(Pair(lt, [w for w, k in zip(lt, keep) if k], keep, True, i + 2))
        kept.append(r)
    return pairs, kept, bad


def mined_subsets(pairs: list[Pair], rows: list[dict], n: int, seed: int = 0) -> dict[str, list[int]]:
    """Indices of the training sets: `mined` n pairs of a seeded permutation (both directions, as the paper used
    them), `mined-all`, and equal-sized compression-only / expansion-only sets (the first k of each direction in
    the same permutation, k = the smaller direction's count) so direction is compared at the same size."""
    order = [int(i) for i in np.random.default_rng(seed).permutation(len(pairs))]
    comp = [i for i in order if rows[i]["direction"] == "compression"]
    expa = [i for i in order if rows[i]["direction"] == "expansion"]
    k = min(len(comp), len(expa))
    return {"mined": order[:n], "mined-all": list(range(len(pairs))), "compressions": comp[:k],
            "expansions": expa[:k]}


def oov_rate(train_sents, eval_sents) -> float:
    """% of eval tokens never seen in the training long sides (a simple measure of domain distance)."""
    vocab = {w for s in train_sents for w in s}
    n = sum(len(s) for s in eval_sents)
    return 100.0 * sum(w not in vocab for s in eval_sents for w in s) / max(n, 1)


def mined(args, shared: Path, scorer) -> list[str]:
    """The channel models trained on pairs mined from the revision dumps (issue 14 item 4), scored on broadcast-news
    dev and the Google eval pairs next to the same models trained on as many in-domain pairs."""
    from _stsg_experiment import load_experiment

    work = args.work / "mined"
    work.mkdir(parents=True, exist_ok=True)
    rows, summary = mine_pairs(shared, work, args.workers)
    pairs, rows, bad = mined_token_pairs(rows)
    n_ref = min(1000, len(pairs))
    subsets = mined_subsets(pairs, rows, n_ref)
    SET_LABEL = {"mined": f"mined, {len(subsets['mined'])} (both directions)",
                 "mined-all": f"mined, all {len(pairs)}", "compressions": f"mined compressions only, "
                 f"{len(subsets['compressions'])}", "expansions": f"mined expansions only, {len(subsets['expansions'])}"}

    # --- the two parses of the mined long sides: cased for broadcast news, normalized for Google
    ex = load_experiment(shared, args.compression_work, train_annotators="1")
    c0, t0 = _cpu_with_children(), time.time()
    bn_trees, bn_counts = parse_sentences([[PTB_BRACKETS.get(w, w) for w in p.source] for p in pairs], ex.parser,
                                          workers=args.workers, parser_path=ex.parser_path,
                                          parser_id=model_fingerprint(ex.parser_path), cache_dir=work / "cache")
    gwork = args.work / "curve"  # the curve's lowercase parser and parse cache (eval pairs, first 1000 train pairs)
    gwork.mkdir(parents=True, exist_ok=True)
    gparser, gpath = google_parser(shared, gwork)
    gpid = model_fingerprint(gpath)
    norm = [Pair([normalize(w) for w in p.source], [normalize(w) for w in p.target], p.keep, True, p.line)
            for p in pairs]
    g_trees, g_counts = parse_sentences([p.source for p in norm], gparser, workers=args.workers, parser_path=gpath,
                                        parser_id=gpid, cache_dir=work / "cache")
    wall, cpu = time.time() - t0, _cpu_with_children() - c0
    timing = work / "parse-time.json"
    if wall > 5.0 or not timing.exists():
        timing.write_text(json.dumps({"wall": round(wall, 1), "cpu": round(cpu, 1), "workers": args.workers,
                                      "sentences": 2 * len(pairs)}))
    ptime = json.loads(timing.read_text())

    keep_all: dict = {}

    def run(evalname, train_sets, parser, dev_trees, dev_tokens, score_tokens, gold, gold_rate):
        outs = {}
        for name, (tp, tt) in train_sets.items():
            for tag, levels in ((LEX, 6), (KM, 4)):
                outs[name, tag] = channel_outputs(f"{tag}-{evalname}-{name}", levels, tp, tt, parser, dev_trees,
                                                  dev_tokens, {"gold": gold_rate}, work, None, args.refresh)
        own, own_items = score_rows({f"{a}|{b}": o["keeps"] for (a, b), o in outs.items()}, score_tokens, gold,
                                    scorer)
        mat, mat_items = score_rows({f"{a}|{b}": o["matched"]["gold"]["keeps"] for (a, b), o in outs.items()},
                                    score_tokens, gold, scorer)
        ka, _ = score_rows({"keep-all": [[1] * len(x) for x in score_tokens]}, score_tokens, gold, scorer)
        table = [["-", "keep-all", ka["keep-all"]["compression_rate"], ka["keep-all"]["token_f1"],
                  ka["keep-all"]["rel_f1"], "-", "-", "-"]]
        keep_all[evalname] = ka["keep-all"]
        for name, (tp, _) in train_sets.items():
            for tag in (LEX, KM):
                k = f"{name}|{tag}"
                table.append([SET_LABEL.get(name, name), LABEL[tag], own[k]["compression_rate"], own[k]["token_f1"],
                              own[k]["rel_f1"], mat[k]["compression_rate"], mat[k]["token_f1"], mat[k]["rel_f1"]])
        sig = []

        def add(a, b, what, label):
            items = own_items if what == "own rates" else mat_items
            r = compare_systems(items[a], items[b], trials=args.trials, seed=0)
            sig.append([label, what, r["token"]["difference"], f"{r['token']['p_value']:.4f}",
                        r["rel"]["difference"], f"{r['rel']['p_value']:.4f}"])

        for name in train_sets:
            for what in ("own rates", "gold rate"):
                add(f"{name}|{LEX}", f"{name}|{KM}", what, f"{SET_LABEL.get(name, name)}: lexicalized - KM")
        for tag in (LEX, KM):
            for what in ("own rates", "gold rate"):
                add(f"mined|{tag}", f"in-domain|{tag}", what, f"{LABEL[tag]}: mined {n_ref} - in-domain {n_ref}")
            add(f"compressions|{tag}", f"expansions|{tag}", "gold rate",
                f"{LABEL[tag]}: compressions only - expansions only")
        return table, sig, mat, {k: v["compression_rate"] for k, v in own.items()}

    SET_LABEL["in-domain"] = f"broadcast news train, {len(ex.train_pairs)} (annotator 1)"
    bn_sets = {name: ([pairs[i] for i in idx], [bn_trees[i] for i in idx]) for name, idx in subsets.items()}
    bn_sets["in-domain"] = (ex.train_pairs, ex.train_src)
    bn_gold = round(ex.gold_rate(), 2)
    bn_table, bn_sig, bn_mat, bn_own = run("bn", bn_sets, ex.parser, ex.dev_src, ex.dev_tokens, ex.dev_tokens, ex.gold,
                                   bn_gold)
    bn_label = SET_LABEL.pop("in-domain")

    gtrain = google_train_pairs(shared, n_ref, args.google_max_len)
    gtrain_trees, _, _ = parse_curve(gtrain, gparser, gpath, gpid, gwork, args.workers, [n_ref])
    evalp, eval_norm, eval_trees, ggold, g_gold, _ = google_eval_set(args, shared, gparser, gpath, gpid, gwork)
    SET_LABEL["in-domain"] = f"Google train-180k-lossy, {len(gtrain)} (the curve's first {len(gtrain)})"
    g_sets = {name: ([norm[i] for i in idx], [g_trees[i] for i in idx]) for name, idx in subsets.items()}
    g_sets["in-domain"] = (gtrain, gtrain_trees)
    g_table, g_sig, g_mat, g_own = run("google", g_sets, gparser, eval_trees, eval_norm, [p.source for p in evalp], ggold,
                                g_gold)
    g_label = SET_LABEL["in-domain"]

    # --- what the mined pairs are like
    n = len(pairs)
    pep = sum(r["page"].startswith("PEP ") for r in rows)
    comp = sum(r["direction"] == "compression" for r in rows)
    mean = lambda xs: float(np.mean(xs)) if len(xs) else 0.0  # noqa: E731
    keep_rate = rate_of([p.keep for p in pairs], [p.source for p in pairs])
    from collections import Counter

    deleted = Counter(w.lower() for p in pairs for w, k in zip(p.source, p.keep) if not k)
    bn_del = Counter(w.lower() for p in ex.train_pairs for w, k in zip(p.source, p.keep) if not k)
    g_del = Counter(w for p in gtrain for w, k in zip(p.source, p.keep) if not k)
    span_runs = mean([int(np.sum(np.diff(np.concatenate([[1], p.keep.astype(int)])) == -1)) for p in pairs])
    oov = [["broadcast-news dev", f"{oov_rate([p.source for p in pairs], ex.dev_tokens):.1f}",
            f"{oov_rate([p.source for p in ex.train_pairs], ex.dev_tokens):.1f}"],
           ["Google eval (normalized)", f"{oov_rate([p.source for p in norm], eval_norm):.1f}",
            f"{oov_rate([p.source for p in gtrain], eval_norm):.1f}"]]
    hdr = ["training set", "system", "own CompR", "own token F1", "own RelF1", "gold-rate CompR",
           "gold-rate token F1", "gold-rate RelF1"]
    sighdr = ["comparison", "rate", "token F1 diff", "p", "RelF1 diff", "p"]

    def gap(mat_, a, b):
        return mat_[a]["rel_f1"] - mat_[b]["rel_f1"]

    findings = [
        f"- Broadcast news dev, gold rate: KM trained on the mined pairs reaches RelF1 {bn_mat[f'mined|{KM}']['rel_f1']:.2f} "
        f"against {bn_mat[f'in-domain|{KM}']['rel_f1']:.2f} from as many broadcast-news pairs "
        f"({gap(bn_mat, f'mined|{KM}', f'in-domain|{KM}'):+.2f}); the lexicalized model "
        f"{bn_mat[f'mined|{LEX}']['rel_f1']:.2f} against {bn_mat[f'in-domain|{LEX}']['rel_f1']:.2f} "
        f"({gap(bn_mat, f'mined|{LEX}', f'in-domain|{LEX}'):+.2f}).",
        f"- Google eval, gold rate: KM mined {g_mat[f'mined|{KM}']['rel_f1']:.2f} vs in-domain "
        f"{g_mat[f'in-domain|{KM}']['rel_f1']:.2f} ({gap(g_mat, f'mined|{KM}', f'in-domain|{KM}'):+.2f}); "
        f"lexicalized mined {g_mat[f'mined|{LEX}']['rel_f1']:.2f} vs in-domain "
        f"{g_mat[f'in-domain|{LEX}']['rel_f1']:.2f} ({gap(g_mat, f'mined|{LEX}', f'in-domain|{LEX}'):+.2f}).",
        f"- At their own rates the mined models keep far more words than the in-domain ones (CompR on broadcast "
        f"news {bn_own[f'mined|{LEX}']:.1f} / {bn_own[f'mined|{KM}']:.1f} vs {bn_own[f'in-domain|{LEX}']:.1f} / "
        f"{bn_own[f'in-domain|{KM}']:.1f}, on Google {g_own[f'mined|{LEX}']:.1f} / {g_own[f'mined|{KM}']:.1f} vs "
        f"{g_own[f'in-domain|{LEX}']:.1f} / {g_own[f'in-domain|{KM}']:.1f}; lexicalized / KM), as their training "
        f"pairs do ({keep_rate:.1f}% kept): their own-rate gains are those of keeping more (keep-all RelF1 "
        f"{keep_all['bn']['rel_f1']:.2f} on broadcast news, {keep_all['google']['rel_f1']:.2f} on Google); the "
        f"gold-rate rows compare at the same length.",
        "- Direction, compressions only vs as many expansions only (gold rate, RelF1 difference and p): "
        + "; ".join(f"{ev} {r[0].split(':')[0]} {r[4]:+.2f} (p = {r[5]})" for ev, sig_ in (("broadcast news", bn_sig),
                    ("Google", g_sig)) for r in sig_ if "compressions only - expansions only" in r[0]) + ".",
        f"- Lexicalized - KM on the mined pairs (gold rate): broadcast news "
        f"{gap(bn_mat, f'mined|{LEX}', f'mined|{KM}'):+.2f}, Google {gap(g_mat, f'mined|{LEX}', f'mined|{KM}'):+.2f} "
        f"RelF1 (p values in the tables).",
    ]
    lines = [
        "## channel-mined", "",
        "The noisy-channel compressors trained on pairs mined from revision histories (issue 14 item 4): "
        f"`treegram mine-revisions` over both dumps of ../shared/data/revisions (the enwiki sample and the PEP "
        f"history; {summary.get('revisions', '?')} revisions, {summary.get('pairs', '?')} pairs, no parser filter; "
        f"the `mining` section has the filters and a hand-judged precision of 0.88 on 100 of these pairs), "
        "lexicalized (6 levels) vs Knight & Marcu (level 4) trained on the same pairs, scored on broadcast-news dev "
        f"and on the first {len(evalp)} Google eval-10k pairs exactly as in the `channel` and `channel-curve` "
        f"sections, next to the same models trained on {n_ref} in-domain pairs. RelF1: spaCy "
        f"{scorer.versions['spacy']} {scorer.versions['pipeline']} dependency triples without punctuation; "
        f"approximate randomization {args.trials} trials. {machine_line()}.",
        "",
        "**What the mined pairs are.** "
        f"{n} pairs after tokenizing with the miner's tokenizer ({bad} dropped whose short side was not a token "
        f"subsequence of the long one): {pep} from Python Enhancement Proposals, {n - pep} from the Wikipedia "
        f"sample, so this is technical prose about Python (specifications, APIs, process) rather than news. "
        f"Directions: {comp} compressions (the later revision is the short side) and {n - comp} expansions (the "
        f"later revision added words). Long side {mean([len(p.source) for p in pairs]):.1f} tokens on average, "
        f"short side {mean([len(p.target) for p in pairs]):.1f}: the short side keeps {keep_rate:.2f}% of the tokens "
        f"(broadcast news train {rate_of([p.keep for p in ex.train_pairs], [p.source for p in ex.train_pairs]):.2f}%, "
        f"Google {rate_of([p.keep for p in gtrain], [p.source for p in gtrain]):.2f}%), in "
        f"{span_runs:.2f} deleted spans per pair: an edit deletes one short phrase, where the gold compressions of "
        f"both eval sets drop much more. Most deleted tokens (lowercased): mined "
        + ", ".join(f"`{w}` {c}" for w, c in deleted.most_common(12))
        + "; broadcast news " + ", ".join(f"`{w}` {c}" for w, c in bn_del.most_common(8))
        + "; Google " + ", ".join(f"`{w}` {c}" for w, c in g_del.most_common(8)) + ".",
        "",
        "**Direction.** A compression and an expansion are the same kind of training pair here: the TSV gives the "
        "long and short side of either, and the short side is a word deletion of the long side in both, so both "
        "train p(long | short) and the short-side model the same way; the main rows use both directions without "
        "distinction, as the paper did (Yamangil & Nelken 2008, section 4: they suspect this lowered importance, "
        "since expansions may add useful information). The last rows train on compressions only and on as many "
        "expansions only (same permutation, same size) to see whether direction matters.",
        "",
        "Tokens: the miner's tokenizer, brackets as PTB escapes; for broadcast news the long sides are parsed cased "
        "by the `compression` section's PCFG (the one that parsed the broadcast-news sentences), for Google "
        "normalized (lowercase, digit tokens `##`) by the curve's lowercase PCFG, so each model sees the same "
        f"normalization and parser as its eval trees. Parsing the {ptime.get('sentences', 2 * n)} long sides "
        f"(both parses) took {ptime['wall']:.0f} s wall / {ptime['cpu']:.0f} s CPU with {ptime['workers']} "
        f"worker(s) on the shared machine in the run that parsed them "
        f"({ptime.get('sentences', 2 * n) / max(ptime['cpu'], 1e-9):.1f} sentences per CPU-second; the mined long "
        f"sides run to {max(len(p.source) for p in pairs)} tokens, the Google ones to {args.google_max_len}); flat "
        f"fallback: broadcast-news parser "
        f"{bn_counts.get('failed', 0) + bn_counts.get('too_long', 0)}, lowercase parser "
        f"{g_counts.get('failed', 0) + g_counts.get('too_long', 0)}.",
        "",
        "Eval tokens never seen in the training long sides (%):",
        "",
        markdown_table(["eval set", f"mined ({n})", f"in-domain ({n_ref})"], oov),
        "",
        f"### Broadcast news dev (170 sentences, 3 annotators, gold rate {bn_gold:.2f}%)",
        "",
        f"In-domain reference: {bn_label}, the `channel` section's training set.",
        "",
        markdown_table(hdr, bn_table),
        "",
        markdown_table(sighdr, bn_sig),
        "",
        f"### Google eval (first {len(evalp)} pairs of eval-10k, gold rate {g_gold:.2f}%)",
        "",
        f"In-domain reference: {g_label}.",
        "",
        markdown_table(hdr, g_table),
        "",
        markdown_table(sighdr, g_sig),
        "",
        "Computed observations:",
        "",
        *findings,
        "",
        f"Command: `nice -n 10 python benchmarks/bench_channel.py --mined --workers {args.workers}`",
    ]
    return lines


def _sizes(text: str) -> list[int]:
    try:
        sizes = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated pair counts, e.g. 1000,3000,10000; got {text!r}")
    if not sizes or min(sizes) < 1:
        raise argparse.ArgumentTypeError(f"pair counts must be positive; got {text!r}")
    return sizes


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", type=Path, default=ROOT / "benchmarks" / "out" / "channel")
    ap.add_argument("--compression-work", type=Path, default=ROOT / "benchmarks" / "out" / "compression",
                    help="bench_compression.py's cache (PCFG, BN parses, STSG outputs)")
    ap.add_argument("--google-train", type=int, default=1000)
    ap.add_argument("--google-eval", type=int, default=200)
    ap.add_argument("--google-max-len", type=int, default=50)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--trials", type=int, default=10000)
    ap.add_argument("--gs", action="store_true", help="also the GS row (500 sweeps, seed 0; ~1-2 CPU min)")
    ap.add_argument("--skip-google", action="store_true")
    ap.add_argument("--skip-bn", action="store_true")
    ap.add_argument("--refresh", action="store_true")
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--google-curve", type=_sizes, metavar="N,N,...",
                    help="run only the Google learning curve at these training sizes (nested samples) and rewrite "
                         "only the `channel-curve` section")
    ap.add_argument("--mined", action="store_true",
                    help="run only the models trained on pairs mined from ../shared/data/revisions (mined with "
                         "`treegram mine-revisions`) and rewrite only the `channel-mined` section")
    args = ap.parse_args()
    shared = require_shared()
    args.work.mkdir(parents=True, exist_ok=True)
    scorer = DependencyScorer()
    # --mined and --google-curve each run alone and rewrite only their own section
    for on, run, section in ((args.mined, mined, "channel-mined"), (args.google_curve, google_curve, "channel-curve")):
        if on:
            text = "\n".join(run(args, shared, scorer))
            publish(section, text, not args.no_write)
            return
    body = ["## channel", "",
            "Noisy-channel compression (issue 14 item 3): Yamangil & Nelken's (2008) lexicalized model (source model "
            "p(s): head-lexicalized PCFG on the short trees; channel p(l|s): short -> long rule expansion with "
            "Witten-Bell over the six back-off levels of Table 1; exact Viterbi over all compressions of the long "
            "parse on the core tree chart) against Knight & Marcu's unlexicalized model (the chain from level 4, "
            "PCFG source model), trained on the same pairs. RelF1: spaCy "
            f"{scorer.versions['spacy']} {scorer.versions['pipeline']} dependency triples without punctuation. "
            f"Approximate randomization: {args.trials} trials (counts pooled over annotators; difference = first - "
            f"second). {machine_line()}.", ""]
    if not args.skip_bn:
        body += broadcast_news(args, shared, scorer) + [""]
    if not args.skip_google:
        body += google(args, shared, scorer) + [""]
    body += ["Paper (Yamangil & Nelken 2008, Table 2; 32 Ziff-Davis sentences, human judges, trained on 380k "
             "Wikipedia revision pairs): compression 67.38% (lexicalized) vs 72.91% (KM); grammaticality 4.31 vs "
             "4.02; importance 3.65 vs 3.86. Human grammaticality/importance judgments are not measured here.", "",
             "Command: `nice -n 10 python benchmarks/bench_channel.py" + (" --gs" if args.gs else "")
             + (f" --google-train {args.google_train} --google-eval {args.google_eval}" if not args.skip_google
                else " --skip-google") + "`"]
    text = "\n".join(body)
    publish("channel", text, not args.no_write)


if __name__ == "__main__":
    main()
