"""Score a blind-judged compression kit kept in benchmarks/judged (ratings and key only: no source text) and
compare two of its systems with a paired permutation test over the sources.

    python benchmarks/score_judged_compressions.py KIT --compare A,B [--section NAME] [--no-write]

KIT is benchmarks/judged/KIT/ (ratings-JUDGE.tsv: ID, grammaticality, importance) with benchmarks/judged/KIT.key.tsv
(ID, system, source number; one ID may stand for several systems whose outputs were identical).  The per-system
table is `bench_default_compressor.judged_table`'s; the test: per source, the judges' mean rating of system A minus
that of B (0 where both made the same compression), sign-flipped 20,000 times, two-sided.
"""

from __future__ import annotations

import argparse
import random
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _results import publish  # noqa: E402
from bench_default_compressor import judged_table  # noqa: E402

JUDGED = Path(__file__).resolve().parent / "judged"


def paired(kit: Path, a: str, b: str, trials: int = 20000) -> list[str]:
    systems = defaultdict(list)
    for line in Path(str(kit) + ".key.tsv").read_text().splitlines():
        if line.strip():
            cid, label, source = line.split("\t")
            systems[cid].append((label, source))
    ratings = defaultdict(list)
    for f in sorted(kit.glob("ratings-*.tsv")):
        for line in f.read_text().splitlines():
            p = line.split("\t")
            if len(p) >= 3:
                ratings[p[0]].append((int(p[1]), int(p[2])))
    per = defaultdict(dict)  # source -> system -> (mean G, mean I)
    for cid, labels in systems.items():
        g = sum(r[0] for r in ratings[cid]) / len(ratings[cid])
        i = sum(r[1] for r in ratings[cid]) / len(ratings[cid])
        for label, source in labels:
            per[source][label] = (g, i)
    both = [s for s in per if a in per[s] and b in per[s]]
    out = []
    for k, what in ((0, "grammaticality"), (1, "importance")):
        diffs = [per[s][a][k] - per[s][b][k] for s in both]
        observed = sum(diffs) / len(diffs)
        rng = random.Random(0)
        hits = sum(abs(sum(d if rng.random() < 0.5 else -d for d in diffs) / len(diffs)) >= abs(observed) - 1e-12
                   for _ in range(trials))
        out.append(f"{what} {a} - {b}: {observed:+.2f} (p = {(hits + 1) / (trials + 1):.3f}; "
                   f"{sum(d != 0 for d in diffs)} of {len(diffs)} sources differ)")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("kit")
    ap.add_argument("--compare", required=True, metavar="A,B")
    ap.add_argument("--section", default=None, help="RESULTS.md section (default: judged-KIT)")
    ap.add_argument("--title", default=None)
    ap.add_argument("--no-write", action="store_true")
    opts = ap.parse_args()
    kit = JUDGED / opts.kit
    a, b = opts.compare.split(",")
    lines = [f"## {opts.title or 'Blind-judged compressions: ' + opts.kit}", "",
             f"`python benchmarks/score_judged_compressions.py {opts.kit} --compare {a},{b}`", ""]
    lines += judged_table(kit)
    lines += ["Paired permutation test over the sources (judges' mean per compression): "
              + "; ".join(paired(kit, a, b)) + "."]
    body = "\n".join(lines)
    publish(opts.section or f"judged-{opts.kit}", body, not opts.no_write)


if __name__ == "__main__":
    main()
