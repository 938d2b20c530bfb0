"""STSG Gibbs log-likelihood trace of a small seeded run, for checking refactorings of the STSG sampler (as
`check_sampler_equality.py` does for TSG/TIG/OSTAG).

    python benchmarks/stsg_trace.py [REPEATS] [SWEEPS]

First 300 Broadcast News pairs (annotator 1), sources parsed by the bench_stsg PCFG (cached under
/tmp/stsg_trace), `STSGSampler(alpha=100, seed=0)` under `GibbsSampler(seed=0)` with linear annealing 5 -> 0 over
SWEEPS (default 12) sweeps.  Prints the trace (repr), a hash of the final alignment, the number of rules and
seconds per sweep of each of REPEATS runs (the first one includes numba compilation / cache loading).
"""

import hashlib
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _results import require_shared  # noqa: E402
from _stsg_experiment import foundation_parser as get_parser  # noqa: E402

from treegram.bayes import AnnealingSchedule, GibbsSampler  # noqa: E402
from treegram.compression.align import load_broadcast_news  # noqa: E402
from treegram.plugins.stsg.model import PairCorpus, STSGSampler  # noqa: E402
from treegram.compression.treeprep import derive_target, model_fingerprint, parse_sentences, wrap_root  # noqa: E402


def main() -> None:
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    sweeps = int(sys.argv[2]) if len(sys.argv) > 2 else 12
    shared = require_shared()
    work = Path("/tmp/stsg_trace")
    work.mkdir(parents=True, exist_ok=True)
    parser, parser_path = get_parser(shared, work)
    pairs = load_broadcast_news(shared / "compression" / "broadcast-news", 1, "all")[:300]
    trees, _ = parse_sentences([p.source for p in pairs], parser, parser_id=model_fingerprint(parser_path),
                               cache_dir=work / "cache")
    sources = [wrap_root(t) for t in trees]
    corpus = PairCorpus(sources, [derive_target(s, p.keep) for s, p in zip(sources, pairs)], [p.keep for p in pairs])
    for _ in range(repeats):
        model = STSGSampler(corpus, alpha=100.0, seed=0)
        sampler = GibbsSampler(model, seed=0, schedule=AnnealingSchedule(5.0, 0.0, sweeps, "linear"))
        t0 = time.perf_counter()
        trace = sampler.run(sweeps)
        seconds = time.perf_counter() - t0
        print("LL", [repr(r["log_likelihood"]) for r in trace])
        print("alignment", hashlib.sha256(model.a.tobytes()).hexdigest()[:16], "rules", model.num_rules,
              f"s/sweep {seconds / sweeps:.4f}")


if __name__ == "__main__":
    main()
