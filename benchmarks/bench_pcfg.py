"""PCFG baseline: accuracy on ptb-sample dev for several markovization settings, parse speed, and the speed ratio
against nltk's ViterbiParser on the same grammar (20 shortest dev sentences), measured in one run.

    python benchmarks/bench_pcfg.py [--quick] [--skip-nltk]

Writes the `pcfg` section of benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _results import machine_line, markdown_table, parse_timed, parseval, ptb_sample, write_section  # noqa: E402

from treegram.grammar.pcfg import PCFGModel, PCFGSettings  # noqa: E402

SETTINGS = [
    ("h=inf v=1 (plain treebank PCFG)", PCFGSettings(horizontal=None, vertical=1)),
    ("h=1 v=1", PCFGSettings(horizontal=1, vertical=1)),
    ("h=2 v=1", PCFGSettings(horizontal=2, vertical=1)),
    ("h=1 v=2", PCFGSettings(horizontal=1, vertical=2)),
    ("h=2 v=2", PCFGSettings(horizontal=2, vertical=2)),
    ("h=2 v=2, rare words kept (no signatures)", PCFGSettings(horizontal=2, vertical=2, rare_threshold=1)),
]


def nltk_comparison(model, dev, n=20):
    """Parse the n shortest dev sentences with our Viterbi and with nltk.ViterbiParser on the same grammar."""
    import nltk

    cfg = model.cfg
    nt = cfg.nonterminals.symbol
    word = cfg.words.symbol
    prods = []
    for a, b, c, lp in zip(cfg.bin_parent, cfg.bin_left, cfg.bin_right, cfg.bin_logp):
        prods.append(nltk.ProbabilisticProduction(nltk.Nonterminal(nt(a)), [nltk.Nonterminal(nt(b)), nltk.Nonterminal(nt(c))], prob=math.exp(lp)))
    for a, b, lp in zip(cfg.un_parent, cfg.un_child, cfg.un_logp):
        prods.append(nltk.ProbabilisticProduction(nltk.Nonterminal(nt(a)), [nltk.Nonterminal(nt(b))], prob=math.exp(lp)))
    for a, w, lp in zip(cfg.lex_parent, cfg.lex_word, cfg.lex_logp):
        prods.append(nltk.ProbabilisticProduction(nltk.Nonterminal(nt(a)), [word(w)], prob=math.exp(lp)))
    grammar = nltk.PCFG(nltk.Nonterminal(nt(cfg.start)), prods, calculate_leftcorners=False)
    parser = nltk.ViterbiParser(grammar, max_time=None)
    # sentences whose (signature-mapped) tokens are all in the grammar's lexicon, so both parsers see the same input
    candidates = []
    for t in dev:
        mapped = model.mapper.map_sentence(t.leaves())
        if all(w in cfg.words for w in mapped):
            candidates.append(mapped)
    candidates.sort(key=len)
    chosen = candidates[:n]
    from treegram.charts import viterbi

    t0 = time.perf_counter()
    ours = [viterbi(cfg, cfg.lexical_input(s), s) for s in chosen]
    ours_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    theirs = [next(iter(parser.parse(s)), None) for s in chosen]
    theirs_s = time.perf_counter() - t0
    agree = sum(1 for a, b in zip(ours, theirs)
                if a is not None and b is not None and abs(a.logp - math.log(b.prob())) < 1e-6)
    return {"sentences": len(chosen), "lengths": f"{len(chosen[0])}-{len(chosen[-1])}", "ours_s": ours_s,
            "nltk_s": theirs_s, "ratio": theirs_s / ours_s, "same_logp": agree, "rules": len(prods)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="only the default setting")
    ap.add_argument("--skip-nltk", action="store_true")
    args = ap.parse_args()
    train = ptb_sample("train")
    dev = ptb_sample("dev")
    sentences = [t.leaves() for t in dev]
    words = sum(map(len, sentences))
    print(f"train {len(train)} trees, dev {len(dev)} trees ({words} words)", flush=True)
    rows = []
    settings = [s for s in SETTINGS if s[0] == "h=2 v=2"] if args.quick else SETTINGS
    best = None
    for name, settings_obj in settings:
        t0 = time.perf_counter()
        model = PCFGModel.train(train, settings_obj)
        train_s = time.perf_counter() - t0
        trees, failed, parse_s = parse_timed(model.parse, sentences)
        all_len, le40 = parseval(dev, trees)
        info = model.describe(top=0)
        rules = info["binary_rules"] + info["unary_rules"] + info["lexical_rules"]
        row = [name, round(all_len.f1, 2), round(le40.f1, 2), round(all_len.exact, 2), failed, rules,
               info["nonterminals"], round(train_s, 1), round(len(sentences) / parse_s, 2), round(words / parse_s, 1)]
        print(row, flush=True)
        rows.append(row)
        if name == "h=2 v=2":
            best = model
    body = [f"## PCFG baseline (issue 2)\n\n`python benchmarks/bench_pcfg.py` — {machine_line()}.\n",
            "Train: ptb-sample/train (3,396 trees); test: ptb-sample/dev (273 sentences, all lengths). F1 from "
            "treegram's EVALB-compatible scorer (COLLINS.prm). Unknown words: Berkeley-style signature classes for "
            "words seen once in training. Parse speed includes lexical lookup, Viterbi and un-binarization, one core.\n",
            markdown_table(["setting", "F1 all", "F1 <=40", "exact %", "failed", "rules", "symbols", "train s",
                            "sent/s", "words/s"], rows)]
    if best is not None and not args.skip_nltk:
        cmp = nltk_comparison(best, dev)
        print(cmp, flush=True)
        body.append(f"\n**Against nltk.ViterbiParser** (same h=2 v=2 grammar, {cmp['rules']} rules, converted to an "
                    f"nltk PCFG; the {cmp['sentences']} shortest dev sentences whose words are in the lexicon, "
                    f"lengths {cmp['lengths']}): treegram {cmp['ours_s']:.3f} s, nltk {cmp['nltk_s']:.1f} s — "
                    f"**{cmp['ratio']:.0f}x** faster; both found the same best log-probability on "
                    f"{cmp['same_logp']}/{cmp['sentences']} sentences.\n")
    write_section("pcfg", "\n".join(body))


if __name__ == "__main__":
    main()
