"""Fault suite for what treegram loads and resumes (issue 27, "Validation of what is loaded and resumed").

* Every formalism's model file (pcfg, tsg, tig, ostag and Bayesian ostag, the four stsg variants, both channel
  models, corrections, vocabgen) is fuzzed with hypothesis: metadata values replaced by wrong types and ranges
  (NaN, inf, negative, huge, strings for numbers...), arrays changed (NaN/inf/negative entries, other dtypes,
  truncated, reshaped), zip members corrupted or cut, array headers claiming huge shapes.  Each mutated file is
  loaded and used (`parse`, `compress`, `generate`, `corrections`, `grammar`) in-process: it must end in a clean
  error or in correct behaviour -- never a traceback, never a silently degenerate output (all flat trees, empty
  compressions, no sentences where the intact model gives them).
* The audit's cases, one test per class: an OSTAG start label no tree has, NaN coefficients and a string
  `lexical` in a corrections model, negative / NaN / inf channel counts, `train tsg --prune-threshold 2` and the
  writers' own schema check, an NPY header claiming terabytes, resuming with another model or seed, edited batch
  and chunk files, Dask workers outliving a killed command.

`test_summary` prints the tally (cases, clean errors, tracebacks, inputs destroyed, silent wrong outputs), like
`tests/test_fault_suite.py`.  TREEGRAM_FUZZ_MODELS=N runs N hypothesis examples per kind and strategy (default 6; 40 found nothing more).
"""

from __future__ import annotations

import copy
import io
import json
import os
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from model_zoo import build_zoo
from toy_data import PARK_VOCAB

from faults import digest as _digest
from faults import meta_paths, new_tally, set_path, summary

from treegram.cli.app import main
from treegram.errors import TreegramError
from treegram.formalism import flat_fallback, load_model
from treegram.io import load_bundle, save_bundle

TALLY = new_tally("silent_wrong")
EXAMPLES = int(os.environ.get("TREEGRAM_FUZZ_MODELS", "6"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True,
                database=None)
PARSERS = ("pcfg", "tsg", "tig", "ostag", "ostag-bayes")
COMPRESSORS = ("stsg-gibbs", "stsg-em", "stsg-mcdonald", "stsg-svm", "channel", "channel4")
KINDS = PARSERS + COMPRESSORS + ("corrections", "vocabgen")
SENTENCES = "The cat sat on the mat .\nA dog saw the cat .\n"
VOCAB = PARK_VOCAB
ORIGINAL = "I goed to the park yesterday. It were very nice.\n"
CORRECTED = "I went to the park yesterday. It was very nice.\n"


# -- the world: one model of each kind, its inputs, and what the intact model does --------------------------------
@pytest.fixture(scope="module")
def zoo(tmp_path_factory):
    d = tmp_path_factory.mktemp("zoo")
    models = build_zoo(d, 12)
    (d / "s.txt").write_text(SENTENCES, encoding="utf-8")
    (d / "orig.txt").write_text(ORIGINAL, encoding="utf-8")
    (d / "corr.txt").write_text(CORRECTED, encoding="utf-8")
    world = {"d": d, "models": models}
    world["baseline"] = {kind: use(world, kind, models[kind], d / f"base-{kind}.out")[1] for kind in KINDS}
    return world


def _run(argv):
    """main() in-process: (exit code, traceback or None)."""
    import contextlib

    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            code = main(["-q", *map(str, argv)])
    except SystemExit as exc:
        code = exc.code
    except BaseException as exc:  # noqa: BLE001 - escaping main() is a traceback for the user
        return None, f"{type(exc).__name__}: {exc}"
    return code, None


def use(world, kind, model, out):
    """Run the command a user runs with a model of `kind`: (exit code, output text or None)."""
    d = world["d"]
    if kind in PARSERS:
        argv = ["parse", "--model", model, "--input", d / "s.txt", "--out", out]
    elif kind in COMPRESSORS:
        argv = ["compress", "--model", model, "--input", d / "s.txt", "--out", out]
    elif kind == "vocabgen":
        argv = ["generate", "--model", model, "--vocab", VOCAB, "-n", "3", "--seed", "1", "--out", out]
    else:
        argv = ["corrections", d / "orig.txt", d / "corr.txt", "--model", model, "--out", out]
    if Path(out).exists():
        Path(out).unlink()
    code, tb = _run(argv)
    if tb is not None:
        raise AssertionError(f"traceback for {kind} {argv}: {tb}")
    return code, Path(out).read_text(encoding="utf-8") if code == 0 and Path(out).exists() else None


def degenerate(kind: str, text: str | None, baseline: str | None) -> bool:
    """A silently wrong output: exit 0 but nothing a user could use, where the intact model gives something."""
    if text is None or baseline is None:
        return False
    if kind in PARSERS:
        flat = {flat_fallback(line.split()).to_bracket() for line in SENTENCES.splitlines()}
        lines = text.splitlines()
        all_flat = bool(lines) and all(line in flat for line in lines)
        return all_flat and not all(line in flat for line in baseline.splitlines())
    if kind in COMPRESSORS:
        return not any(line.strip() for line in text.splitlines()) and any(l.strip() for l in baseline.splitlines())
    if kind == "vocabgen":
        return not text.strip() and bool(baseline.strip())
    try:
        return not isinstance(json.loads(text), dict)
    except ValueError:
        return True


def check_case(world, kind, path):
    """Load + grammar + use one (mutated) model file; tally the outcome."""
    before = _digest([path])
    TALLY["cases"] += 1
    try:
        load_model(path)
        loaded = True
    except TreegramError:
        loaded = False
    except BaseException as exc:  # noqa: BLE001
        TALLY["tracebacks"] += 1
        raise AssertionError(f"{kind}: load_model raised {type(exc).__name__}: {exc}") from exc
    code, tb = _run(["grammar", path, "--json"])
    if tb is not None:
        TALLY["tracebacks"] += 1
        raise AssertionError(f"{kind}: grammar gave a traceback: {tb}")
    try:
        ucode, text = use(world, kind, path, world["d"] / f"fuzz-{kind}.out")
    except AssertionError:
        TALLY["tracebacks"] += 1
        raise
    if _digest([path]) != before:
        TALLY["inputs_destroyed"] += 1
        raise AssertionError(f"{kind}: the model file changed")
    if not loaded:
        assert code == 2 and ucode == 2, (kind, code, ucode)
        TALLY["clean_errors"] += 1
        return "error"
    if ucode == 0 and degenerate(kind, text, world["baseline"][kind]):
        TALLY["silent_wrong"] += 1
        raise AssertionError(f"{kind}: loaded a damaged model and gave a degenerate output:\n{text}")
    TALLY["ok" if ucode == 0 else "clean_errors"] += 1
    return "ok"


# -- mutations ------------------------------------------------------------------------------------------------------
_BAD = [None, True, False, -1, 0, 2**70, -2.5, 0.5, float("nan"), float("inf"), float("-inf"), "x", "", "<script>",
        [], [1, "a"], {}, {"a": None}]


def _mutate_array(a: np.ndarray, op: str, rng) -> np.ndarray:
    a = np.array(a)
    if op == "astype-str":
        return a.astype("U3")
    if op == "astype-bool":
        return a.astype(bool)
    if op == "astype-float":
        return a.astype(np.float32)
    if op == "truncate":
        return a[: len(a) // 2]
    if op == "reshape":
        return a.reshape(1, -1) if a.ndim == 1 else a.reshape(-1)
    if op == "empty":
        return a[:0]
    if a.size == 0:
        return a
    flat = a.reshape(-1)
    i = int(rng.integers(flat.size))
    value = {"nan": np.nan, "inf": np.inf, "neg": -1, "huge": 2**31 - 1}[op]
    if op == "huge" and a.dtype.kind in "iu":
        value = np.iinfo(a.dtype).max
    if a.dtype.kind in "iub" and op in ("nan", "inf"):
        flat = flat.astype(np.float64)
    elif a.dtype.kind == "u" and op == "neg":
        flat = flat.astype(np.int64)
    flat = flat.copy()
    flat[i] = value
    return flat.reshape(a.shape)


_ARRAY_OPS = ["nan", "inf", "neg", "huge", "astype-str", "astype-bool", "astype-float", "truncate", "reshape", "empty"]


def _huge_header(npy: bytes, shape=(10**12,)) -> bytes:
    """The same NPY member with a header claiming `shape` (the data stay as they are)."""
    buf = io.BytesIO(npy)
    version = np.lib.format.read_magic(buf)
    read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
    _shape, fortran, dtype = read(buf)
    data = npy[buf.tell():]
    out = io.BytesIO()
    np.lib.format.write_array_header_1_0(out, {"descr": np.lib.format.dtype_to_descr(dtype),
                                               "fortran_order": fortran, "shape": shape})
    return out.getvalue() + data


def _rewrite_member(path: Path, dst: Path, name: str, change) -> None:
    with zipfile.ZipFile(path) as zf:
        members = [(i.filename, zf.read(i)) for i in zf.infolist()]
    with zipfile.ZipFile(dst, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for fname, data in members:
            zf.writestr(fname, change(data) if fname == name else data)


# -- hypothesis-driven fuzzing of every formalism --------------------------------------------------------------------
@pytest.mark.parametrize("kind", KINDS)
def test_fuzz_model_metadata(zoo, kind):
    """Metadata values anywhere in the file replaced by wrong types and ranges."""
    meta, arrays = load_bundle(zoo["models"][kind])
    paths = [p for p in meta_paths(meta, 8, list_items=3)
             if p[0] not in ("format", "version", "formalism", "written_by")]
    out = zoo["d"] / f"m-{kind}.model"

    @FUZZ
    @given(st.sampled_from(paths), st.sampled_from(_BAD))
    def case(path, value):
        m = copy.deepcopy(meta)
        set_path(m, path, value)
        save_bundle(out, m, arrays)
        check_case(zoo, kind, out)

    case()


@pytest.mark.parametrize("kind", KINDS)
def test_fuzz_model_arrays(zoo, kind):
    """Arrays with NaN / inf / negative / huge entries, other dtypes, cut, reshaped or emptied."""
    meta, arrays = load_bundle(zoo["models"][kind])
    if not arrays:
        pytest.skip(f"{kind} models hold no arrays")
    out = zoo["d"] / f"a-{kind}.model"

    @FUZZ
    @given(st.sampled_from(sorted(arrays)), st.sampled_from(_ARRAY_OPS), st.integers(0, 2**32 - 1))
    def case(name, op, seed):
        a = dict(arrays)
        a[name] = _mutate_array(arrays[name], op, np.random.default_rng(seed))
        save_bundle(out, meta, a)
        check_case(zoo, kind, out)

    case()


@pytest.mark.parametrize("kind", KINDS)
def test_fuzz_model_bytes(zoo, kind):
    """Zip members corrupted, the file cut, array headers claiming huge shapes."""
    src = zoo["models"][kind]
    raw = src.read_bytes()
    with zipfile.ZipFile(src) as zf:
        names = [i.filename for i in zf.infolist()]
    out = zoo["d"] / f"b-{kind}.model"

    @FUZZ
    @given(st.sampled_from(["cut", "flip", "member", "huge"]), st.sampled_from(names), st.integers(0, 2**31))
    def case(how, name, k):
        if how == "cut":
            out.write_bytes(raw[: k % len(raw)])
        elif how == "flip":
            b = bytearray(raw)
            b[k % len(b)] ^= 0xFF
            out.write_bytes(bytes(b))
        elif how == "member":
            _rewrite_member(src, out, name, lambda data: data[: k % max(len(data), 1)] + b"\x93garbage")
        else:
            if not name.endswith(".npy"):
                name = next((n for n in names if n.endswith(".npy")), name)
            _rewrite_member(src, out, name, lambda data: _huge_header(data) if name.endswith(".npy") else data)
        check_case(zoo, kind, out)

    case()


# -- the audit's classes, one test each ----------------------------------------------------------------------------
def _mutated(zoo, kind, change, name):
    meta, arrays = load_bundle(zoo["models"][kind])
    change(meta["plugin_meta"], arrays)
    out = zoo["d"] / name
    save_bundle(out, meta, arrays)
    return out


def _refused(path, capsys, *words):
    TALLY["cases"] += 1
    code = main(["grammar", str(path)])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err, err
    for w in words:
        assert w in err, (w, err)
    TALLY["clean_errors"] += 1
    return err


def test_ostag_unknown_start_label_refused(zoo, capsys):
    """An OSTAG start label that no initial tree has gave 20/20 flat trees; now the file is refused."""
    path = _mutated(zoo, "ostag", lambda m, a: m.__setitem__("start", "NOSUCHLABEL"), "start.model")
    _refused(path, capsys, "start label 'NOSUCHLABEL'")
    TALLY["cases"] += 1
    code, _ = use(zoo, "ostag", path, zoo["d"] / "start.out")
    assert code == 2
    TALLY["clean_errors"] += 1


def test_corrections_nan_coefficients_and_string_lexical_refused(zoo, capsys):
    path = _mutated(zoo, "corrections", lambda m, a: a.__setitem__("coef75", a["coef75"] * np.nan), "nan.model")
    _refused(path, capsys, "coef75", "NaN")
    path = _mutated(zoo, "corrections", lambda m, a: m.__setitem__("lexical", "x"), "lex.model")
    _refused(path, capsys, "lexical", "true/false")


@pytest.mark.parametrize("count", [-3.0, float("nan"), float("inf")])
def test_channel_bad_counts_refused(zoo, capsys, count):
    def change(m, a):
        m["grammar"]["channel"]["tables"]["4"][0][1][0][1] = count

    _refused(_mutated(zoo, "channel", change, "count.model"), capsys, "tables.4")


def test_prune_threshold_beyond_one_is_refused_and_writers_check_their_schema(zoo, capsys, tmp_path):
    """`train tsg --prune-threshold 2` wrote a model every later command refused: the option now takes a
    probability, and every writer checks what it writes against the loader's schema before the rename."""
    tb = zoo["d"] / "demo.mrg"
    TALLY["cases"] += 1
    code = main(["-q", "train", "tsg", "--treebank", str(tb), "--out", str(tmp_path / "p.model"), "--iterations",
                 "1", "--prune-threshold", "2"])
    assert code == 2 and "between 0 and 1" in capsys.readouterr().err and not (tmp_path / "p.model").exists()
    TALLY["clean_errors"] += 1
    model = load_model(zoo["models"]["tsg"])
    model.prune_threshold = 2.0
    with pytest.raises(TreegramError, match="refusing to write .*prune_threshold"):
        model.save(tmp_path / "w.model")
    assert not list(tmp_path.glob("*w.model*"))
    corr = load_model(zoo["models"]["corrections"])
    corr.head75.coef[0, 0] = np.nan
    with pytest.raises(TreegramError, match="refusing to write"):
        corr.save(tmp_path / "c.model")
    assert not list(tmp_path.glob("*c.model*"))


def test_npy_header_with_a_huge_shape_is_refused_before_allocating(zoo, capsys):
    path = zoo["d"] / "huge.model"
    _rewrite_member(zoo["models"]["pcfg"], path, "cfg.bin_logp.npy", _huge_header)
    t0 = time.perf_counter()
    err = _refused(path, capsys, "refused before allocating", "cfg.bin_logp.npy")
    assert time.perf_counter() - t0 < 10 and "8,000,000,000,000 bytes" in err


def test_corrupt_svm_checkpoint_refused_on_resume(zoo, capsys, tmp_path):
    """A checkpoint is what `--resume` loads: NaN duals or a string `converged` are refused by its schema."""
    d = zoo["d"]
    meta, arrays = load_bundle(d / "stsg-svm.ckpt")
    argv = ["-q", "train", "stsg", "--method", "svm", "--C", "1", "--pairs", str(d / "src.txt"),
            str(d / "tgt.txt"), "--parser", str(zoo["models"]["pcfg"]), "--seed", "3", "--resume"]
    for name, change in (("alpha", lambda m, a: a.__setitem__("alpha", np.full_like(a["alpha"], np.nan))),
                         ("converged", lambda m, a: m.__setitem__("converged", "x"))):
        m, a = copy.deepcopy(meta), dict(arrays)
        change(m, a)
        ck = tmp_path / f"{name}.ckpt"
        save_bundle(ck, m, a)
        TALLY["cases"] += 1
        code = main([*argv, "--checkpoint", str(ck), "--out", str(tmp_path / f"{name}.model")])
        err = capsys.readouterr().err
        assert code == 2 and "corrupt checkpoint" in err and name in err and "Traceback" not in err, err
        assert not (tmp_path / f"{name}.model").exists()
        TALLY["clean_errors"] += 1


# -- resume identity ------------------------------------------------------------------------------------------------
def _interrupted(monkeypatch, target: str, after: int):
    """Make `target` (module.function) raise KeyboardInterrupt on its call number `after` + 1, like a kill."""
    import importlib

    mod_name, fn_name = target.rsplit(".", 1)
    mod = importlib.import_module(mod_name)
    real = getattr(mod, fn_name)
    calls = {"n": 0}

    def wrapped(*a, **k):
        calls["n"] += 1
        if calls["n"] > after:
            raise KeyboardInterrupt
        return real(*a, **k)

    monkeypatch.setattr(mod, fn_name, wrapped)


def test_parse_resume_with_another_model_is_refused(zoo, capsys, monkeypatch, tmp_path):
    src = tmp_path / "in.txt"
    src.write_text(SENTENCES * 3, encoding="utf-8")
    out = tmp_path / "trees.mrg"
    models = zoo["models"]
    with monkeypatch.context() as mp:
        _interrupted(mp, "treegram.batchparse.parse_line", 2)
        assert main(["-q", "parse", "--model", str(models["pcfg"]), "--input", str(src), "--out", str(out)]) != 0
    assert len(out.read_text().splitlines()) == 2 and (tmp_path / "trees.mrg.run.json").is_file()
    capsys.readouterr()
    for argv, what in ((["--model", str(models["tsg"])], "--model"), (["--max-length", "3"], "--max-length")):
        TALLY["cases"] += 1
        base = ["--model", str(models["pcfg"])] if argv[0] != "--model" else []
        code = main(["-q", "parse", *base, *argv, "--input", str(src), "--out", str(out), "--resume"])
        err = capsys.readouterr().err
        assert code == 2 and what in err and "another" in err, err
        assert len(out.read_text().splitlines()) == 2  # nothing mixed in
        TALLY["clean_errors"] += 1
    # the same run continues, and the result is the one-go output
    assert main(["-q", "parse", "--model", str(models["pcfg"]), "--input", str(src), "--out", str(out),
                 "--resume"]) == 0
    ref = tmp_path / "ref.mrg"
    assert main(["-q", "parse", "--model", str(models["pcfg"]), "--input", str(src), "--out", str(ref)]) == 0
    assert out.read_text() == ref.read_text() and not (tmp_path / "trees.mrg.run.json").exists()
    # the cluster path keeps the same record: a killed one-process run is not continued on Dask with another model
    with monkeypatch.context() as mp:
        _interrupted(mp, "treegram.batchparse.parse_line", 2)
        main(["-q", "parse", "--model", str(models["pcfg"]), "--input", str(src), "--out", str(out)])
    capsys.readouterr()
    TALLY["cases"] += 1
    assert main(["-q", "parse", "--model", str(models["tsg"]), "--input", str(src), "--out", str(out), "--resume",
                 "--workers", "1"]) == 2
    assert "--model" in capsys.readouterr().err and len(out.read_text().splitlines()) == 2
    TALLY["clean_errors"] += 1
    # a damaged record is refused, not trusted
    with monkeypatch.context() as mp:
        _interrupted(mp, "treegram.batchparse.parse_line", 1)
        main(["-q", "parse", "--model", str(models["pcfg"]), "--input", str(src), "--out", str(out)])
    rec = tmp_path / "trees.mrg.run.json"
    rec.write_text(rec.read_text().replace('"decoder"', '"decoder2"'))
    capsys.readouterr()
    assert main(["-q", "parse", "--model", str(models["pcfg"]), "--input", str(src), "--out", str(out),
                 "--resume"]) == 2
    assert "damaged" in capsys.readouterr().err


def test_generate_resume_with_another_seed_is_refused(zoo, capsys, monkeypatch, tmp_path):
    out = tmp_path / "g.txt"
    model = zoo["models"]["vocabgen"]
    base = ["-q", "generate", "--model", str(model), "--vocab", VOCAB, "-n", "6", "--out", str(out)]
    from treegram.plugins.vocabgen import cli as vcli

    real = vcli.stream_sentences

    def killed(*a, **k):
        for i, s in enumerate(real(*a, **k)):
            if i == 2:
                raise KeyboardInterrupt
            yield s

    with monkeypatch.context() as mp:
        mp.setattr(vcli, "stream_sentences", killed)
        assert main([*base, "--seed", "1"]) != 0
    assert len(out.read_text().splitlines()) == 2
    capsys.readouterr()
    TALLY["cases"] += 1
    assert main([*base, "--seed", "2", "--resume"]) == 2
    err = capsys.readouterr().err
    assert "--seed" in err and "another" in err
    TALLY["clean_errors"] += 1
    assert main([*base, "--seed", "1", "--resume"]) == 0
    ref = tmp_path / "ref.txt"
    assert main(["-q", "generate", "--model", str(model), "--vocab", VOCAB, "-n", "6", "--out", str(ref),
                 "--seed", "1"]) == 0
    assert out.read_text() == ref.read_text()


# -- batch and chunk files -----------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def client():
    from distributed import Client, LocalCluster

    c = LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=":0", silence_logs=40)
    cl = Client(c)
    yield cl
    cl.close()
    c.close()


def test_edited_batch_files_are_parsed_again_not_reused(zoo, client, tmp_path):
    from treegram.batchparse import parse_batches

    src = tmp_path / "in.txt"
    src.write_text(SENTENCES * 4, encoding="utf-8")
    model = zoo["models"]["pcfg"]
    ref = tmp_path / "ref.mrg"
    parse_batches(str(src), ref, model=model, batch_size=2, client=client)
    out = tmp_path / "out.mrg"
    parse_batches(str(src), out, model=model, batch_size=2, client=client, keep_batches=True)
    wdir = tmp_path / "out.mrg.batches"
    files = sorted(wdir.glob("0*.json"))
    assert len(files) == 4 and all("sha256" in json.loads(f.read_text()) for f in files)
    out.unlink()
    files[0].write_text("{}")  # emptied: was a KeyError
    b1 = json.loads(files[1].read_text())
    b1["trees"][0] = "(S (XX wrong))"  # valid JSON, changed content: was reused in the final output
    files[1].write_text(json.dumps(b1))
    b2 = json.loads(files[2].read_text())
    b2["trees"] = b2["trees"][:1]  # one tree short, checksum recomputed: caught by the line count
    from treegram.schema import seal

    files[2].write_text(json.dumps(seal({k: v for k, v in b2.items() if k != "sha256"})))
    for _ in range(3):
        TALLY["cases"] += 1
    summary = parse_batches(str(src), out, model=model, batch_size=2, client=client, resume=True)
    assert out.read_text() == ref.read_text()
    assert summary["batches_resumed"] == 1 and len(summary["batches_redone"]) == 3
    assert "(S (XX wrong))" not in out.read_text()
    TALLY["ok"] += 3


# -- Dask workers die with the command -------------------------------------------------------------------------------
def _descendants(pid: int) -> list[int]:
    kids = []
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                kids.append(int(p))
    return kids + [g for k in kids for g in _descendants(k)]


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc to list processes")
def test_mine_revisions_workers_die_with_a_killed_command(tmp_path):
    """kill -9 of `mine-revisions --workers 2` while its workers mine: no worker process is left running."""
    from test_revisions import write_dump

    dump = write_dump(tmp_path / "big.xml", copies=300)
    out = tmp_path / "pairs.tsv"
    proc = subprocess.Popen([sys.executable, "-m", "treegram.cli.app", "-q", "mine-revisions", str(dump), "--out",
                             str(out), "--workers", "2", "--chunk-revisions", "40"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:  # wait until the workers have finished a chunk: they are running
            if list((tmp_path / "pairs.tsv.chunks").glob("0*.json")) or proc.poll() is not None:
                break
            time.sleep(0.1)
        kids = _descendants(proc.pid)
        assert proc.poll() is None, "the run finished before it could be killed"
        workers = [k for k in kids if "spawn_main" in Path(f"/proc/{k}/cmdline").read_text(errors="replace")]
        assert len(workers) >= 2, kids
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    TALLY["cases"] += 1
    t0 = time.monotonic()
    while any(_alive(k) for k in kids) and time.monotonic() - t0 < 5:
        time.sleep(0.05)
    left = [k for k in kids if _alive(k)]
    for k in left:
        os.kill(k, signal.SIGKILL)
    assert not left, f"processes left running after kill -9: {left}"
    TALLY["ok"] += 1


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_a_worker_stuck_in_a_long_c_call_dies_with_its_parent():
    """What `dask_setup` gives every worker: a process inside a call that holds the interpreter lock (a
    backtracking regular expression here) still dies at once when its parent is killed -- Dask's own parent-pipe
    thread would wait for the lock."""
    grandchild = ("from treegram.distributed import die_with_parent; die_with_parent(); import re; "
                  "print('ready', flush=True); re.match(r'(a+)+$', 'a' * 64 + 'b')")
    child = ("import subprocess, sys, time\n"
             f"p = subprocess.Popen([sys.executable, '-c', {grandchild!r}], stdout=subprocess.PIPE, text=True)\n"
             "assert p.stdout.readline().strip() == 'ready'\n"
             "print(p.pid, flush=True)\n"
             "time.sleep(120)\n")
    proc = subprocess.Popen([sys.executable, "-c", child], stdout=subprocess.PIPE, text=True)
    try:
        pid = int(proc.stdout.readline())
        time.sleep(0.3)  # inside the regular expression now
        assert _alive(pid)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    TALLY["cases"] += 1
    t0 = time.monotonic()
    while _alive(pid) and time.monotonic() - t0 < 3:
        time.sleep(0.02)
    alive = _alive(pid)
    if alive:
        os.kill(pid, signal.SIGKILL)
    assert not alive, "the worker outlived its killed parent"
    TALLY["ok"] += 1


def test_summary(capsys):
    """The counts for the closing note (run last in this file)."""
    summary(TALLY, "fault suite (models and resume)", capsys)
