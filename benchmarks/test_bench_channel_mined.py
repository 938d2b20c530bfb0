"""The mined-pair helpers of benchmarks/bench_channel.py (`--mined`): reading the miner's TSV, turning its rows into
deletion-aligned training pairs in either direction, and the equal-sized direction subsets."""


import numpy as np

import bench_channel as bc

HEAD = ["page_id", "page", "from_rev", "to_rev", "direction", "long_words", "short_words", "long", "short"]


def _rows():
    return [
        ["1", "PEP 8", "10", "11", "compression", "7", "5",
         "Similarly, the module must not import os.", "The module must not import os."],
        ["1", "PEP 8", "11", "12", "expansion", "6", "5",
         "Code should use four spaces per level.", "Code should use spaces per level."],
        ["2", "Anarchism", "3", "4", "expansion", "5", "5", "Not a deletion at all.", "Not an insertion at all."],
        ["3", "PEP 20", "5", "6", "expansion", "6", "4",
         "Simple is better than complex, usually.", "Simple is better than complex."],
    ]


def test_read_and_align_mined_pairs(tmp_path):
    tsv = tmp_path / "pairs.tsv"
    tsv.write_text("\n".join("\t".join(r) for r in [HEAD] + _rows()) + "\n", encoding="utf-8")
    rows = bc.read_mined(tsv)
    assert len(rows) == 4 and rows[0]["direction"] == "compression" and rows[3]["page"] == "PEP 20"
    pairs, kept, bad = bc.mined_token_pairs(rows)
    assert bad == 1 and len(pairs) == 3 and [r["page"] for r in kept] == ["PEP 8", "PEP 8", "PEP 20"]
    first = pairs[0]
    # "Similarly ," deleted; the short side's capital "The" matches the long side's "the", whose token is kept
    assert first.source[:3] == ["Similarly", ",", "the"]
    assert first.keep.tolist() == [False, False, True, True, True, True, True, True, True]
    assert first.target == ["the", "module", "must", "not", "import", "os", "."]
    for p in pairs:  # every pair is a pure deletion of its long side, whatever its direction
        assert p.pure_deletion and len(p.keep) == len(p.source) and not p.keep.all()
        assert p.target == [w for w, k in zip(p.source, p.keep) if k]
    assert pairs[1].source[np.flatnonzero(~pairs[1].keep)[0]] == "four"


def test_mined_subsets_are_seeded_and_direction_balanced():
    rows = [{"direction": "compression" if i % 3 == 0 else "expansion"} for i in range(30)]
    pairs = list(range(30))
    a, b = bc.mined_subsets(pairs, rows, 20), bc.mined_subsets(pairs, rows, 20)
    assert a == b  # same seed, same sets
    assert len(a["mined"]) == 20 and len(set(a["mined"])) == 20 and a["mined-all"] == list(range(30))
    assert len(a["compressions"]) == len(a["expansions"]) == 10
    assert all(rows[i]["direction"] == "compression" for i in a["compressions"])
    assert all(rows[i]["direction"] == "expansion" for i in a["expansions"])
    assert bc.mined_subsets(pairs, rows, 20, seed=1)["mined"] != a["mined"]


def test_oov_rate():
    assert bc.oov_rate([["a", "b"]], [["a", "c"], ["b", "b"]]) == 25.0
    assert bc.oov_rate([], [["x"]]) == 100.0
