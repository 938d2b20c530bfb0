from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """../shared/data beside the project; tests that need it skip with a clear reason when it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"needs the shared corpora at {SHARED_DATA} (absent on this machine)")
    return SHARED_DATA


@pytest.fixture(scope="session")
def demo_file(tmp_path_factory) -> Path:
    """The built-in demo treebank as a file (a bracketed tree a line), written once per session: tests read it
    (`--treebank`), never change it."""
    from treegram.corpora.demo import demo_trees

    path = tmp_path_factory.mktemp("demo") / "demo.mrg"
    path.write_text("".join(t.to_bracket() + "\n" for t in demo_trees()), encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def demo_model_files(tmp_path_factory, demo_file) -> dict[str, Path]:
    """Small PCFG, TSG and TIG models of the built-in demo treebank, trained once per session (decoders, views)."""
    from treegram.cli.app import main

    d = tmp_path_factory.mktemp("demo_models")
    tb = demo_file
    out = {}
    for name, extra in (("pcfg", []), ("tsg", ["--iterations", "3"]),
                        ("tig", ["--iterations", "1", "--tsg-init", "2", "--phi", "0.3"])):
        path = d / f"demo.{name}"
        assert main(["-q", "train", name, "--treebank", str(tb), "--seed", "3", "--out", str(path), *extra]) == 0
        out[name] = path
    return out


@pytest.fixture(scope="module")
def cluster():
    """(LocalCluster, Client): two worker processes of one thread each, one per test module."""
    from distributed import Client, LocalCluster

    c = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0", silence_logs=40)
    client = Client(c)
    yield c, client
    client.close()
    try:
        c.close()
    except KeyError:  # distributed's close can race a worker's removal report (teardown only)
        pass


def parse_demo_sentences(model: Path, d: Path):
    """`treegram parse --model MODEL` on a sentence of the demo treebank's words, one of unknown words and an empty
    line (`d/in.txt` -> `d/out.mrg`): each tree spans its words with none of the grammar's internal labels (`@`
    binarization, `^` annotation) and the empty line stays empty.  Returns the first tree."""
    from treegram.cli.app import main
    from treegram.trees import parse_brackets

    sentences = d / "in.txt"
    sentences.write_text("The hungry dog slept in the garden .\nZorblax quibbled .\n\n", encoding="utf-8")
    parsed = d / "out.mrg"
    assert main(["-q", "parse", "--model", str(model), "--input", str(sentences), "--out", str(parsed)]) == 0
    lines = parsed.read_text(encoding="utf-8").split("\n")
    first = parse_brackets(lines[0])[0]
    assert first.leaves() == "The hungry dog slept in the garden .".split()
    assert not any(n.label.startswith("@") or "^" in n.label for n in first.subtrees())
    assert parse_brackets(lines[1])[0].leaves() == ["Zorblax", "quibbled", "."]  # unknown words parse
    assert lines[2] == ""
    return first


def substitution_vectors(lo: int, hi: int, sites):
    """Every substitution vector of the tree in rows lo..hi-1 (brute-force enumeration of elementary-tree
    segmentations): int8 over the rows, the root row always 1, each row in `sites` 0 or 1, the others 0."""
    import itertools

    import numpy as np

    for flags in itertools.product((0, 1), repeat=len(sites)):
        sub = np.zeros(hi - lo, np.int8)
        sub[0] = 1
        for r, f in zip(sites, flags):
            sub[r - lo] = f
        yield sub


def write_demo_pairs(d: Path, n: int | None = None) -> Path:
    """A PCFG parser trained on the demo treebank (`d/parser.model`) and (long, short) compression pairs from its
    sentences, each word kept with probability 0.7 (`d/src.txt`, `d/tgt.txt`): the training data of the
    compressors' command-line tests."""
    import numpy as np

    from treegram.corpora.demo import demo_trees
    from treegram.grammar.pcfg import PCFGModel

    trees = demo_trees()
    PCFGModel.train(trees).save(d / "parser.model")
    rng = np.random.default_rng(0)
    src, tgt = [], []
    for t in trees[:n]:
        words = t.leaves()
        keep = rng.random(len(words)) < 0.7
        src.append(" ".join(words))
        tgt.append(" ".join(w for w, k in zip(words, keep) if k))
    (d / "src.txt").write_text("\n".join(src) + "\n", encoding="utf-8")
    (d / "tgt.txt").write_text("\n".join(tgt) + "\n", encoding="utf-8")
    return d


class _DrainedFifo:
    """A named pipe with a thread reading it to the end (a writer that opens it does not block)."""

    def __init__(self, path: Path):
        os.mkfifo(path)
        self.path = path
        self._got: dict[str, bytes] = {}
        self._thread = threading.Thread(target=self._drain, daemon=True)
        self._thread.start()

    def _drain(self) -> None:
        with open(self.path, "rb") as fh:
            self._got["data"] = fh.read()

    def read(self, timeout: float = 10) -> bytes | None:
        """Everything written to the pipe, once the writer has closed it (None if it never did)."""
        self._thread.join(timeout)
        return self._got.get("data")


@pytest.fixture
def fifo(tmp_path) -> _DrainedFifo:
    """`tmp_path/fifo`, a named pipe drained by a reader thread: write to `fifo.path`, then `fifo.read()`."""
    return _DrainedFifo(tmp_path / "fifo")


def write_demo_channels(d: Path, *levels: int) -> Path:
    """`write_demo_pairs(d)`, then a noisy-channel compressor trained on those pairs for each of `levels`
    (`d/ch{levels}.model`, parses cached in `d/cache`)."""
    from treegram.cli.app import main

    write_demo_pairs(d)
    for n in levels:
        assert main(["-q", "train", "channel", "--pairs", str(d / "src.txt"), str(d / "tgt.txt"), "--parser",
                     str(d / "parser.model"), "--levels", str(n), "--out", str(d / f"ch{n}.model"),
                     "--parse-cache", str(d / "cache")]) == 0
    return d
