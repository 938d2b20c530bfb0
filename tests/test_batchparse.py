"""`treegram parse --workers/--scheduler` (treegram.batchparse on Dask): byte-identical to the one-process parse for
any number of workers, resumable from its batch checkpoints, clear errors for bad options."""

from __future__ import annotations

import json
import time

import pytest

from treegram.cli.app import main
from treegram.errors import InputError


@pytest.fixture(scope="module")
def sentences(tmp_path_factory):
    """Demo sentences with the cases a batch must keep in place: empty lines, an unparseable line, an over-long
    line, PTB characters that need escaping."""
    from treegram.corpora.demo import demo_trees

    words = [" ".join(t.leaves()) for t in demo_trees()]
    lines = []
    for i in range(46):
        lines.append("" if i % 9 == 4 else words[i % len(words)])
    lines[7] = "zzz ( qqq ) the"
    lines[12] = " ".join(["the"] * 25)
    path = tmp_path_factory.mktemp("batch") / "in.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _one_process(model, inp, out, *extra):
    assert main(["-q", "parse", "--model", str(model), "--input", str(inp), "--out", str(out),
                 "--max-length", "20", *extra]) == 0
    return out.read_bytes()


def _batches(model, inp, out, client, **kw):
    from treegram.batchparse import parse_batches

    return parse_batches(str(inp), out, model=model, max_length=20, client=client, **kw)


def _wait_workers(client, n):
    for _ in range(200):
        if len(client.scheduler_info(n_workers=-1)["workers"]) == n:
            return
        time.sleep(0.05)
    raise AssertionError(f"cluster did not reach {n} workers")


def test_one_and_two_workers_byte_identical_to_one_process(cluster, sentences, demo_model_files, tmp_path):
    c, client = cluster
    for k, (name, extra) in enumerate((("pcfg", {}), ("tsg", {}), ("pcfg", {"decoder": "mpp", "samples": 7}))):
        model = demo_model_files[name]
        name = f"{name}{k}"
        cli = ["--decoder", extra["decoder"], "--samples", str(extra["samples"])] if extra else []
        ref = _one_process(model, sentences, tmp_path / f"{name}.one", *cli)
        assert ref.count(b"\n") == 46
        s2 = _batches(model, sentences, tmp_path / f"{name}.two", client, batch_size=5, **extra)
        assert s2["workers"] == 2 and s2["batches"] == 10 and s2["lines"] == 46
        assert s2["counts"]["empty"] == 5 and s2["counts"]["too_long"] == 1
        assert (tmp_path / f"{name}.two").read_bytes() == ref, name
        assert not (tmp_path / f"{name}.two.batches").exists()
    # one worker, another batch size: the same bytes
    c.scale(1)
    _wait_workers(client, 1)
    try:
        s1 = _batches(demo_model_files["pcfg"], sentences, tmp_path / "pcfg.w1", client, batch_size=17)
        assert s1["workers"] == 1 and s1["batches"] == 3
        assert (tmp_path / "pcfg.w1").read_bytes() == (tmp_path / "pcfg0.one").read_bytes()
    finally:
        c.scale(2)
        _wait_workers(client, 2)


def test_resume_keeps_finished_batches_and_refuses_changed_runs(cluster, sentences, demo_model_files, tmp_path):
    _c, client = cluster
    model = demo_model_files["pcfg"]
    ref = _one_process(model, sentences, tmp_path / "ref.txt")
    out = tmp_path / "out.txt"
    full = _batches(model, sentences, out, client, batch_size=6, keep_batches=True)
    wdir = tmp_path / "out.txt.batches"
    files = sorted(wdir.glob("0*.json"))
    assert len(files) == full["batches"] == 8
    # the timeline of benchmarks/bench_scale.py: one row per batch parsed in this run, times and CPU in order
    rows = full["driver"]["timeline"]
    assert len(rows) == 8 and all(end >= start > 0 and cpu >= 0 and pcpu > 0 for _, start, end, cpu, pcpu in rows)
    assert full["driver"]["process_cpu_seconds"] >= full["driver"]["cpu_seconds"] > 0
    # simulate a kill after batches 0 and 3 finished; batch 0 edited since (valid JSON, changed content): its
    # checksum no longer matches, so it is parsed again rather than reused (issue 27)
    for f in files:
        if f.name not in ("000000.json", "000003.json"):
            f.unlink()
    kept = json.loads(files[3].read_text())["counts"]  # the batch the resumed run reuses
    res0 = json.loads((wdir / "000000.json").read_text())
    res0["trees"][0] = "(S (XX SENTINEL))"
    (wdir / "000000.json").write_text(json.dumps(res0))
    out.unlink()
    # a re-run without --resume does not throw finished work away
    with pytest.raises(InputError, match="finished batches of an interrupted run") as exc:
        _batches(model, sentences, out, client, batch_size=6)
    assert "add --resume" in exc.value.hint
    # other settings: refused, nothing lost
    with pytest.raises(InputError, match="another model, decoder or settings"):
        _batches(model, sentences, out, client, batch_size=7, resume=True)
    again = _batches(model, sentences, out, client, batch_size=6, resume=True)
    assert again["batches_resumed"] == 1 and again["batches"] == 8
    assert len(again["driver"]["timeline"]) == 7  # resumed batches were not parsed again, so not timed again
    # the rate is this run's work: the reused batch's sentences are not counted
    now = sum(again["counts"][k] - kept.get(k, 0) for k in ("ok", "failed"))
    assert again["sentences_per_second"] == pytest.approx(now / again["seconds"], rel=0.02)
    assert [r.split(" ")[0] for r in again["batches_redone"]] == ["000000.json"]
    assert out.read_bytes() == ref and b"SENTINEL" not in out.read_bytes()
    assert not wdir.exists()

    # a checkpoint whose input lines changed is refused
    _batches(model, sentences, out, client, batch_size=6, keep_batches=True)
    for f in sorted(wdir.glob("0*.json"))[2:]:
        f.unlink()
    out.unlink()
    changed = tmp_path / "changed.txt"
    changed.write_text(sentences.read_text().replace("the", "a", 1))
    with pytest.raises(InputError, match="differ from those of the interrupted run"):
        _batches(model, changed, out, client, batch_size=6, resume=True)

    # --resume after an interrupted one-process run: its complete lines are kept, the rest parsed in batches
    partial = tmp_path / "partial.txt"
    partial.write_bytes(b"".join(ref.split(b"\n")[i] + b"\n" for i in range(10)) + b"(S (DT hal")  # cut mid-line
    s = _batches(model, sentences, partial, client, batch_size=6, resume=True)
    assert s["kept_lines"] == 10 and s["new_lines"] == 36
    assert partial.read_bytes() == ref


def test_cli_scheduler_json_summary_and_progress(cluster, sentences, demo_model_files, tmp_path, capsys):
    c, _client = cluster
    out = tmp_path / "cli.txt"
    assert main(["parse", "--model", str(demo_model_files["pcfg"]), "--input", str(sentences), "--out", str(out),
                 "--max-length", "20", "--scheduler", c.scheduler_address, "--batch-size", "10", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["batches"] == 5 and summary["workers"] == 2 and summary["lines"] == 46
    assert sum(summary["counts"].values()) == 46
    assert out.read_bytes() == _one_process(demo_model_files["pcfg"], sentences, tmp_path / "ref.txt")


@pytest.mark.parametrize("extra, message", [
    (["--workers", "0"], "0 must be at least 1"),
    (["--workers", "2", "--out", "-"], "need --out FILE"),
    (["--resume"], "--resume needs --out FILE"),
    (["--resume", "--workers", "2"], "--resume needs --out FILE"),
    (["--batch-size", "5", "--out", "X"], "--batch-size is an option of batch parsing"),
    (["--workers", "1", "--scheduler", "tcp://127.0.0.1:1", "--out", "X"], "not allowed with argument"),
    (["--scheduler", "tcp://127.0.0.1:1", "--out", "X"], "cannot reach the Dask scheduler at tcp://127.0.0.1:1"),
])
def test_bad_batch_options_one_clear_error(extra, message, sentences, demo_model_files, tmp_path, capsys,
                                           monkeypatch):
    monkeypatch.setenv("TREEGRAM_SCHEDULER_TIMEOUT", "1")
    argv = ["parse", "--model", str(demo_model_files["pcfg"]), "--input", str(sentences)]
    argv += [str(tmp_path / "o.txt") if a == "X" else a for a in extra]
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's own errors
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2 and message in err, err
    assert "Traceback" not in err
    assert not (tmp_path / "o.txt").exists()


def test_compress_batches_are_the_one_process_output_and_resume(cluster, tmp_path):
    """`treegram compress --workers` runs on the same batch engine: input order, checkpoints, resume."""
    from conftest import write_demo_pairs

    from treegram.compression.batch import compress_batches
    from treegram.compression.run import CompressSettings

    _c, client = cluster
    write_demo_pairs(tmp_path)
    model = tmp_path / "ch.model"
    assert main(["-q", "train", "channel", "--pairs", str(tmp_path / "src.txt"), str(tmp_path / "tgt.txt"),
                 "--parser", str(tmp_path / "parser.model"), "--levels", "4", "--out", str(model)]) == 0
    lines = (tmp_path / "src.txt").read_text(encoding="utf-8").splitlines()[:16]
    lines[4] = ""
    lines[9] = "Two sentences here. And the second one!"
    inp = tmp_path / "in.txt"
    inp.write_text("\n".join(lines) + "\n", encoding="utf-8")
    ref = tmp_path / "ref.txt"
    assert main(["-q", "compress", "--model", str(model), "--input", str(inp), "--out", str(ref), "--rate", "0.6"]) == 0
    out = tmp_path / "out.txt"
    settings = CompressSettings(rate=0.6)
    summary, records = compress_batches(str(inp), out, model=model, settings=settings, batch_size=3, client=client,
                                        keep_batches=True)
    assert out.read_bytes() == ref.read_bytes() and summary["batches"] == 6 and summary["empty"] == 1
    assert [r["line"] for r in records] == sorted(r["line"] for r in records) and len(records) == 17
    wdir = tmp_path / "out.txt.batches"
    for f in sorted(wdir.glob("0*.json"))[2:]:  # as if killed after two batches
        f.unlink()
    out.unlink()
    again, _ = compress_batches(str(inp), out, model=model, settings=settings, batch_size=3, client=client,
                                resume=True)
    assert again["batches_resumed"] == 2 and out.read_bytes() == ref.read_bytes() and not wdir.exists()
    compress_batches(str(inp), out, model=model, settings=CompressSettings(rate=0.5), batch_size=3, client=client,
                     keep_batches=True)
    for f in sorted(wdir.glob("0*.json"))[1:]:
        f.unlink()
    with pytest.raises(InputError, match="another model, decoder or settings"):  # other settings: not reused
        compress_batches(str(inp), out, model=model, settings=CompressSettings(rate=0.7), batch_size=3,
                         client=client, resume=True)
