"""examples/treegram-example-plugin, installed as a package: its entry point registers the `lapcfg` formalism,
which trains on the demo treebank through the core loop, parses (default decoder and the core's max-rule
decoder), resumes exactly, and is listed by `treegram plugins`; the `keepodds` compressor; and the exercise kind
`unscramble` and the export format `csv`, which `treegram exercises` offers beside its own.

CI installs the example into its environment (.ci/run) before the README's test command; elsewhere the test
installs it into a temporary target with pip (build isolation fetches setuptools from the package index) and
runs the CLI with that target on PYTHONPATH.  Either way the CLI runs in a subprocess that finds the plugin only
through its installed entry point."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

from treegram.evaluation.parseval import ParsevalParams, score_corpus
from treegram.corpora.demo import demo_trees
from treegram.trees import parse_brackets

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "treegram-example-plugin"


@pytest.fixture(scope="module")
def env(tmp_path_factory) -> dict[str, str]:
    environment = {k: v for k, v in os.environ.items() if k != "TREEGRAM_LOAD_PLUGINS"}
    try:
        dist = metadata.distribution("treegram-example-plugin")
        if any(ep.group == "treegram" and ep.name == "lapcfg" for ep in dist.entry_points):
            return environment  # installed (CI: .ci/run)
    except metadata.PackageNotFoundError:
        pass
    target = tmp_path_factory.mktemp("example-site")
    r = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(target),
                        str(EXAMPLE)], capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        pytest.skip(f"could not install examples/treegram-example-plugin (.ci/run installs it): {r.stderr[-300:]}")
    environment["PYTHONPATH"] = os.pathsep.join([str(target), environment.get("PYTHONPATH", "")])
    return environment


def treegram(env, *argv) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "treegram.cli.app", *argv], capture_output=True, text=True,
                          env=env, timeout=300)


def test_example_plugin_trains_parses_resumes_and_is_listed(env, demo_file, tmp_path):
    demo = demo_file
    trees = demo_trees()

    r = treegram(env, "plugins", "--json")
    assert r.returncode == 0, r.stderr
    listing = json.loads(r.stdout)
    row = next(p for p in listing["plugins"] if p["name"] == "lapcfg")
    assert row["source"].startswith("treegram-example-plugin ")
    assert sorted(row["provides"]) == ["exercise_kind:unscramble", "export_format:csv", "formalism:keepodds",
                                       "formalism:lapcfg"]
    assert "error" not in row

    # --splits/--alpha come from the plugin's settings class, --iterations/--anneal-*/--resume from the core
    model = tmp_path / "la.model"
    r = treegram(env, "-q", "train", "lapcfg", "--treebank", str(demo), "--iterations", "4", "--seed", "3",
                 "--splits", "2", "--alpha", "1", "--anneal-start", "1", "--out", str(model), "--json")
    assert r.returncode == 0, r.stderr
    full = json.loads(r.stdout)
    assert full["formalism"] == "lapcfg" and full["iterations"] == 4 and full["subcategories"] > 20

    # the core's checkpoint/resume works for it: 2 + 2 sweeps == 4 sweeps
    part = tmp_path / "part.model"
    assert treegram(env, "-q", "train", "lapcfg", "--treebank", str(demo), "--iterations", "2", "--seed", "3",
                    "--out", str(part), "--json").returncode == 0
    r = treegram(env, "-q", "train", "lapcfg", "--treebank", str(demo), "--iterations", "4", "--seed", "3",
                 "--out", str(part), "--resume", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["log_likelihood"] == full["log_likelihood"]

    sentences = tmp_path / "in.txt"
    gold = trees[:12]
    sentences.write_text("".join(" ".join(t.leaves()) + "\n" for t in gold) + "Zorblax quibbled .\n",
                         encoding="utf-8")
    r = treegram(env, "-q", "parse", "--model", str(model), "--input", str(sentences))
    assert r.returncode == 0, r.stderr
    parsed = [parse_brackets(line)[0] for line in r.stdout.splitlines()]
    assert [t.leaves() for t in parsed[:-1]] == [t.leaves() for t in gold]
    assert parsed[-1].leaves() == ["Zorblax", "quibbled", "."]  # unknown words through signatures
    assert not any("|" in n.label or n.label.startswith("@") for t in parsed for n in t.subtrees())
    assert score_corpus(gold, parsed[:-1], ParsevalParams()).f1 > 80  # training sentences: a real grammar

    # the core decoders work on it too (it implements treegram.charts.decoders.ChartModel)
    r = treegram(env, "-q", "parse", "--model", str(model), "--input", str(sentences), "--decoder", "maxrule")
    assert r.returncode == 0, r.stderr
    summed = [parse_brackets(line)[0] for line in r.stdout.splitlines()]
    assert [t.leaves() for t in summed] == [t.leaves() for t in parsed]
    assert score_corpus(gold, summed[:-1], ParsevalParams()).f1 > 80


def test_example_compressor_gets_compress_rate_eval_and_batches_for_free(env, tmp_path):
    """`keepodds` implements only the compressor contract (source_tree + decoder): compression of typed text,
    --rate, eval-compression --model and Dask batches come from treegram."""
    from conftest import write_demo_pairs

    write_demo_pairs(tmp_path)
    src, tgt, model = tmp_path / "src.txt", tmp_path / "tgt.txt", tmp_path / "ko.model"
    (tmp_path / "in.txt").write_text(src.read_text(encoding="utf-8").replace(" .\n", ". Yes, it did.\n", 3),
                                     encoding="utf-8")  # three lines of two sentences, as typed
    r = treegram(env, "-q", "train", "keepodds", "--pairs", str(src), str(tgt), "--out", str(model))
    assert r.returncode == 0, r.stderr
    one, two = tmp_path / "one.txt", tmp_path / "two.txt"
    base = ["-q", "compress", "--model", str(model), "--input", str(tmp_path / "in.txt"), "--rate", "0.6"]
    r = treegram(env, *base, "--out", str(one), "--json")
    assert r.returncode == 0, r.stderr
    recs = json.loads(r.stdout)["sentences"]
    assert len(recs) == 48 + 3 and [x["sentence"] for x in recs[:2]] == [1, 2] and all(x["text"] for x in recs)
    assert all(x["rate_met"] or x["note"] for x in recs)  # the core's rate search, or the reason it missed
    assert sum(x["rate_met"] for x in recs) > len(recs) // 2  # most lengths allow 0.6 +- 0.05
    assert one.read_text(encoding="utf-8").splitlines()[0] == " ".join(x["text"] for x in recs[:2])
    r = treegram(env, *base, "--out", str(two), "--workers", "2", "--batch-size", "7")
    assert r.returncode == 0, r.stderr
    assert two.read_bytes() == one.read_bytes() and one.read_bytes().count(b"\n") == 48
    r = treegram(env, "-q", "eval-compression", "--source", str(src), "--gold", str(tgt), "--model", str(model),
                 "--rate", "0.6", "--no-rel", "--trials", "50", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["systems"]["ko"]["token_f1"] > 50


def test_example_exercise_kind_and_export_format(env, tmp_path):
    """The plugin's kind renders in treegram's formats, and its format renders treegram's kinds: both come in
    through the hooks (`--kind` / `--format` choices from the registries)."""
    import csv
    import io

    from toy_data import dep

    from treegram.plugins.vocabgen.model import VocabgenModel

    corpus = [dep("The dog saw a cat in the park .", "DT NN VBD DT NN IN DT NN .", "2 3 0 5 3 3 8 6 3"),
              dep("The cat sat on the dog .", "DT NN VBD IN DT NN .", "2 3 0 3 6 4 3"),
              dep("She likes the dog .", "PRP VBZ DT NN .", "2 0 4 2 2"),
              dep("The cat likes the park .", "DT NN VBZ DT NN .", "2 3 0 5 3 3")]
    model = tmp_path / "v.model"
    VocabgenModel.train(corpus * 2).save(model)
    base = ["-q", "exercises", "--allow-unchecked", "--model", str(model), "--vocab",
            "words:the,a,dog,cat,she,saw,sat,likes,in,on,park", "--words", "dog,cat", "--per-word", "2",
            "--seed", "1"]

    # --kind and --format take the plugin's names (argparse choices come from the registries)
    r = treegram(env, *base, "--kind", "unscramble", "--format", "json", "--out", str(tmp_path / "u.json"))
    assert r.returncode == 0, r.stderr
    sheet = json.loads((tmp_path / "u.json").read_text(encoding="utf-8"))
    assert sheet["kinds"] == ["unscramble"] and sheet["title"].startswith("Unscramble the word")
    assert len(sheet["items"]) >= 3  # a sentence may make no item (the word inflected: no lemmatizer here)
    for item in sheet["items"]:
        letters = item["hint"].split("-")
        assert item["answer"] in ("dog", "cat") and sorted(letters) == sorted(item["answer"])
        assert "".join(letters) != item["answer"] and f"_____ ({item['hint']})" in item["prompt"]
        assert item["answer"] not in item["prompt"].lower().split()
    for fmt, ext in (("md", ".md"), ("gift", ".gift.txt")):
        r = treegram(env, *base, "--kind", "unscramble", "--format", fmt, "--out", str(tmp_path / f"u{ext}"))
        assert r.returncode == 0, r.stderr
    md = (tmp_path / "u.md").read_text(encoding="utf-8")
    assert "Put the letters in the right order and write the word in the blank." in md
    assert all(f"{i['number']}. {i['prompt']}" in md for i in sheet["items"])
    gift = (tmp_path / "u.gift.txt").read_text(encoding="utf-8")
    assert sum(("{=" + i["answer"] + "}") in gift for i in sheet["items"]) == len(sheet["items"])

    r = treegram(env, *base, "--kind", "cloze", "--hints", "--format", "csv", "--out", str(tmp_path / "c.csv"))
    assert r.returncode == 0, r.stderr
    rows = list(csv.DictReader(io.StringIO((tmp_path / "c.csv").read_text(encoding="utf-8"))))
    assert rows and [int(x["number"]) for x in rows] == list(range(1, len(rows) + 1))
    assert all(x["kind"] == "cloze" and "_____ (" in x["question"] and x["word"] in ("dog", "cat")
               and x["answer"].lower().startswith(x["word"]) for x in rows)
