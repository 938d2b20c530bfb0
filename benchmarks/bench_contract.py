"""The formalism contract (issue 11 items 1, 2, 7): does the core training loop reproduce the plugins' own library
runs bit for bit, at the same speed?  And what does the third-party example formalism achieve?

For TSG (Gibbs and blocked MH) and TIG (blocked MH) on the first N ptb-sample training trees, the same seeded run
goes once through the plugin's library function (`train_tsg` / `train_tig`) and once through the core loop that
`treegram train NAME` uses (`treegram.training.sample` over the formalism's prepare / make_state /
extract_model); the log-likelihood traces and the parsing grammars' arrays must be identical, and the sweep times
are compared (ratio core / library, same process, after a warm-up run that compiles the numba kernels; the
machine is shared, so ratios within +-20% are noise).  Since stop 32 (one `RunOptions`) the library functions are
the core loop with the formalism's options (`train_tsg(trees, TSGOptions(...), RunOptions(...))`), so the rows
check that the entry points stay one.  Then the example plugin's latent-annotation PCFG (if
installed: `pip install ./examples/treegram-example-plugin`) is trained through the core loop and parses dev,
next to the plain PCFG with the same binarization.

    python benchmarks/bench_contract.py --trees 400 --iterations 3 --dev 100
"""

from __future__ import annotations

import argparse
import hashlib
import time

import numpy as np

from _results import machine_line, markdown_table, require_shared, write_section


def grammar_hash(model) -> str:
    cfg = model.cfg
    h = hashlib.sha256()
    for a in (cfg.bin_parent, cfg.bin_left, cfg.bin_right, cfg.bin_logp, cfg.un_parent, cfg.un_child, cfg.un_logp,
              cfg.lex_parent, cfg.lex_word, cfg.lex_logp):
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()[:12]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trees", type=int, default=400)
    ap.add_argument("--iterations", type=int, default=3)
    ap.add_argument("--dev", type=int, default=100, help="dev sentences parsed by the example formalism")
    ap.add_argument("--example-iterations", type=int, default=10)
    args = ap.parse_args()

    from treegram.evaluation.parseval import ParsevalParams, score_corpus
    from treegram.formalism import RunOptions
    from treegram.plugin_manager import formalisms
    from treegram.trees import read_treebank
    from treegram.training import sample

    shared = require_shared()
    train = list(read_treebank([shared / "ptb-sample" / "train"]))[: args.trees]
    dev = [t for t in read_treebank([shared / "ptb-sample" / "dev"]) if len(t.leaves()) <= 40][: args.dev]
    found = formalisms()
    rows = []

    from treegram.plugins.tsg.formalism import TSGOptions
    from treegram.plugins.tsg.formalism import train_tsg

    # warm-up: compile (or load) every numba kernel once, so neither timed run pays for it
    train_tsg(train[:30], TSGOptions(), RunOptions(move="gibbs", iterations=1, seed=1))
    train_tsg(train[:30], TSGOptions(), RunOptions(move="blocked", iterations=1, seed=1))
    for move in ("gibbs", "blocked"):
        t0 = time.perf_counter()
        lib = train_tsg(train, TSGOptions(), RunOptions(move=move, iterations=args.iterations, seed=1))
        t_lib = time.perf_counter() - t0
        t0 = time.perf_counter()
        core, _ = sample(found["tsg"].obj, train, TSGOptions(), RunOptions(move=move, iterations=args.iterations,
                                                                          seed=1))
        t_core = time.perf_counter() - t0
        same = ([r["log_likelihood"] for r in lib.trace] == [r["log_likelihood"] for r in core.trace]
                and grammar_hash(lib) == grammar_hash(core))
        rows.append([f"tsg --sampler {move}", round(lib.trace[-1]["log_likelihood"], 2), grammar_hash(core),
                     "yes" if same else "NO", round(t_lib, 2), round(t_core, 2), round(t_core / t_lib, 3)])
        print(rows[-1], flush=True)

    from treegram.plugins.tig.formalism import TIGOptions
    from treegram.plugins.tig.formalism import train_tig

    train_tig(train[:30], TIGOptions(tsg_init=1), RunOptions(iterations=1, seed=1))  # warm-up
    t0 = time.perf_counter()
    lib = train_tig(train, TIGOptions(tsg_init=2), RunOptions(iterations=args.iterations, seed=1))
    t_lib = time.perf_counter() - t0
    t0 = time.perf_counter()
    core, _ = sample(found["tig"].obj, train, TIGOptions(tsg_init=2),
                     RunOptions(move="blocked", iterations=args.iterations, seed=1))
    t_core = time.perf_counter() - t0
    same = ([r["log_likelihood"] for r in lib.trace] == [r["log_likelihood"] for r in core.trace]
            and grammar_hash(lib) == grammar_hash(core))
    rows.append(["tig (blocked MH, --tsg-init 2)", round(lib.trace[-1]["log_likelihood"], 2), grammar_hash(core),
                 "yes" if same else "NO", round(t_lib, 2), round(t_core, 2), round(t_core / t_lib, 3)])
    print(rows[-1], flush=True)

    body = [f"{machine_line()}; first {args.trees} ptb-sample training trees, {args.iterations} sweeps, seed 1.",
            "",
            "The same seeded run through the plugin's library function and through the core loop of the formalism "
            "contract (`treegram.training.sample`, what `treegram train` runs):",
            "",
            markdown_table(["run", "final LL", "grammar hash", "identical trace + grammar", "library s", "core s",
                            "core / library"], rows)]

    if "lapcfg" in found:
        from treegram.grammar.pcfg import PCFGModel, PCFGSettings

        ex = found["lapcfg"].obj
        settings = ex.Settings()
        t0 = time.perf_counter()
        model, trace = sample(ex, train, settings, RunOptions(move="gibbs", iterations=args.example_iterations,
                                                              seed=1))
        t_train = time.perf_counter() - t0
        pcfg = PCFGModel.train(train, PCFGSettings(horizontal=settings.horizontal, vertical=settings.vertical,
                                                   rare_threshold=settings.rare_threshold))
        from treegram.formalism import flat_fallback
        from treegram.plugin_manager import decoders

        found_decoders = decoders()
        ex_rows = []
        runs = [("PCFG (h1 v1)", "mpd", pcfg)] + [(f"lapcfg K={settings.splits} (example plugin)", d, model)
                                                  for d in ("mpd", "maxrule")]
        for name, decoder, m in runs:
            decode = found_decoders[decoder].obj.decode
            t0 = time.perf_counter()
            parsed = []
            for t in dev:
                try:
                    parsed.append(decode(m, t.leaves()))
                except Exception:  # noqa: BLE001 - unparsed sentences get the flat fallback
                    parsed.append(flat_fallback(t.leaves()))
            secs = time.perf_counter() - t0
            f1 = score_corpus(dev, parsed, ParsevalParams()).f1
            ex_rows.append([name, decoder, round(f1, 2), round(len(dev) / secs, 1)])
            print(ex_rows[-1], flush=True)
        body += ["", f"Example plugin (`examples/treegram-example-plugin`, Bayesian latent-annotation PCFG) trained "
                     f"through the core loop: {args.example_iterations} Gibbs sweeps over {args.trees} trees in "
                     f"{t_train:.1f} s (pure-Python site move: {trace[-1]['sites'] / trace[-1]['seconds']:.0f} "
                     f"sites/s), LL {trace[0]['log_likelihood']:.1f} -> {trace[-1]['log_likelihood']:.1f}; "
                     f"dev sentences <= 40 words, first {len(dev)}:", "",
                 markdown_table(["grammar", "decoder (`treegram parse --decoder`)", "F1", "sentences/s"], ex_rows),
                 "", "`mpd` decodes the single best *annotated* derivation; `maxrule` (a core decoder the example gets "
                     "by implementing `ChartModel`) sums the latent annotations into the rule posteriors, which is "
                     "what latent-annotation grammars need (Petrov & Klein 2007)."]
    else:
        body += ["", "(example plugin not installed: `pip install ./examples/treegram-example-plugin`)"]
    write_section("contract", "\n".join(body))


if __name__ == "__main__":
    main()
