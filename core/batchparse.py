"""`treegram parse --workers N | --scheduler ADDRESS`: parsing a big batch of sentences on a Dask cluster; the same
batch engine (`run_batches`) runs `treegram compress --workers/--scheduler` (`treegram.compression.batch`).

The sentences are cut into batches of ``batch_size`` input lines; each batch is one Dask task (`parse_batch`) on a
`treegram.distributed` cluster.  A worker process loads the model once (`_parser`, a per-process cache keyed by the
model file's identity and the decoder settings) and builds its parser with
`treegram.charts.decoders.parse_default` -- the same call the one-process `treegram parse` makes, so a worker decodes
exactly as it does (a model's saved default decoder included; the sampling decoders seed each sentence from its own
words, `sentence_seed`, so the order and the worker do not matter).  Each line goes through `parse_line`, shared
with the one-process path: same escaping, same length cut-off, same flat fallback, same empty lines.

Checkpoints (the resumable scheme): finished batches are written at once, atomically, as
``OUT.batches/NNNNNN.json`` (trees, status counts, the SHA-256 of the batch's input lines) beside ``--out``, with a
``manifest.json`` naming the model (path, size, mtime and the SHA-256 of its content), decoder, samples, max
length, batch size and the number of lines kept from an earlier ``--out``.  Each batch file carries the SHA-256
of its own content (`treegram.schema.seal`) and is checked against `batch_schema` before it is reused.  A run
killed with SIGKILL leaves only whole batch files; ``--resume`` re-runs only the missing batches (a finished batch
whose input lines changed is refused; one edited or damaged since it was written is parsed again; neither is
silently reused).  When every
batch is in, ``--out`` is assembled in input order (so the file is the same for any number of workers and any
completion order, byte for byte the one-process output) and written atomically, and ``OUT.batches`` is removed.

``--resume`` with an existing ``--out`` and no work folder keeps that file's complete lines (e.g. those of an
interrupted one-process run) and parses only the lines after them, as the one-process ``--resume`` does.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from treegram.errors import InputError, ModelFileError, ParseFailure

VERSION = 1
STATUSES = ("ok", "failed", "too_long", "empty")


# -- one line: shared by the one-process and the cluster path ---------------------------------------------------
def parse_line(parse: Callable, line: str, max_length: int, text: bool = False) -> tuple[str, str, float]:
    """``(status, bracketed tree or "", seconds spent parsing)`` for one input line, as `treegram parse` writes it.
    `text`: the line is a sentence as typed, tokenized the Penn Treebank way (`treegram.text.tokenize`), not
    space-separated tokens."""
    from treegram.formalism import flat_fallback
    from treegram.trees.bracket import escape_word

    if text:
        from treegram.text import tokenize

        tokens = tokenize(line)[0] if line.strip() else []  # already in the treebank's written forms
    else:
        tokens = [escape_word(w) for w in line.split()]  # Penn Treebank escapes: the tree reads back
    if not tokens:
        return "empty", "", 0.0
    if len(tokens) > max_length:
        return "too_long", flat_fallback(tokens).to_bracket(), 0.0
    t0 = time.perf_counter()
    try:
        tree, status = parse(tokens), "ok"
    except ParseFailure:
        tree, status = flat_fallback(tokens), "failed"
    return status, tree.to_bracket(), time.perf_counter() - t0


# -- worker side ---------------------------------------------------------------------------------------------------
_PARSERS: dict[tuple, Callable] = {}  # per worker process: the model is loaded once, not once per batch


def model_identity(path: Path) -> dict[str, Any]:
    p = Path(path).resolve()
    try:
        st = p.stat()
    except OSError as exc:
        raise ModelFileError(f"{path}: model file not readable ({exc.strerror})", hint="give a model file from "
                                                                                       "`treegram train`") from None
    from treegram.runstate import file_digest

    # the digest makes the manifest name the model by content: a finished batch is reused only for the same model
    return {"path": str(p), "size": st.st_size, "mtime_ns": st.st_mtime_ns, "sha256": file_digest(p)}


def _parser(model: dict[str, Any], decoder: str | None, samples: int | None, cell_beam: float | None = None
            ) -> Callable:
    key = (model["path"], model["size"], model["mtime_ns"], decoder, samples, cell_beam)
    parse = _PARSERS.get(key)
    if parse is None:
        from treegram.charts.decoders import parse_default
        from treegram.formalism import load_model

        _PARSERS.clear()  # one model per worker at a time (a new run with another model frees the old one)
        parse = parse_default(load_model(model["path"]), decoder, samples, cell_beam=cell_beam)
        _PARSERS[key] = parse
    return parse


def batch_digest(lines: list[str]) -> str:
    return hashlib.sha256("\n".join(lines).encode("utf-8")).hexdigest()


def parse_batch(job: dict[str, Any]) -> dict[str, Any]:
    """The Dask task: parse one batch of input lines.  Errors a user can fix come back as ``{"error": ...}`` (the
    driver raises them as one clear line) rather than as a worker traceback."""
    t0, c0, started = time.perf_counter(), time.process_time(), time.time()
    model = job["model"]
    bad = check_model_file(model, job["index"])
    if bad is not None:
        return bad
    c_load = time.process_time()
    # loads the model on this worker's first batch only
    parse = _parser(model, job["decoder"], job["samples"], job.get("cell_beam"))
    load_cpu = time.process_time() - c_load
    trees, counts, parse_seconds = [], Counter(), 0.0
    for line in job["lines"]:
        status, bracket, seconds = parse_line(parse, line, job["max_length"], job.get("text", False))
        trees.append(bracket)
        counts[status] += 1
        parse_seconds += seconds
    return {"index": job["index"], "digest": job["digest"], "first_line": job["first_line"], "trees": trees,
            "counts": {s: counts[s] for s in STATUSES}, "parse_seconds": round(parse_seconds, 6),
            "seconds": round(time.perf_counter() - t0, 6), "cpu_seconds": round(time.process_time() - c0, 6),
            "load_cpu_seconds": round(load_cpu, 6), "worker": f"{socket.gethostname()}:{os.getpid()}",
            # the timeline of the scaling benchmark: when the task ran (epoch seconds) and the worker process's
            # CPU before it (on a worker's first task: its start-up, imports and Dask included)
            "started": round(started, 6), "ended": round(time.time(), 6), "process_cpu": round(c0, 6)}


# -- driver side ---------------------------------------------------------------------------------------------------
def work_dir(out: Path) -> Path:
    """``OUT.batches/`` beside a regular output file (a stream or device has no place for one)."""
    from treegram.io import required_derived_path

    return required_derived_path(out, ".batches", f"--workers/--scheduler need --out FILE, a regular file (not {out})",
                                 hint="finished batches are kept beside the output file, so a killed run can resume")


def _complete_prefix(out: Path) -> bytes:
    """The complete lines of an existing --out (a half-written last line is dropped), as bytes."""
    data = out.read_bytes()
    end = data.rfind(b"\n") + 1
    return data[:end]


def batch_schema(output_key: str):
    """A finished batch file (``OUT.batches/NNNNNN.json``), checked with its checksum before it is reused."""
    from treegram.schema import Dict, Float, Int, List, Str

    return Dict({"index": Int(min=0), "digest": Str(nonempty=True), "first_line": Int(min=1),
                 output_key: List(Str()), "counts": Dict(values=Int(min=0)), "seconds": Float(min=0),
                 "cpu_seconds": Float(min=0), "worker": Str()},
                optional={"parse_seconds": Float(min=0), "load_cpu_seconds": Float(min=0),
                          "decode_seconds": Float(min=0), "records": List(Dict()), "started": Float(min=0),
                          "ended": Float(min=0), "process_cpu": Float(min=0)})


def _finished(wdir: Path, manifest: dict[str, Any], resume: bool, output_key: str = "trees",
              redone: list[str] | None = None) -> dict[int, dict]:
    """Finished batches of an interrupted run with the same manifest ({} for a fresh start).  A batch file that
    is not what the run wrote -- edited, damaged, not matching the batch schema -- is left out (and named in
    `redone`), so its lines are parsed again rather than reused."""
    from treegram.schema import sealed_parts

    finished = sorted(wdir.glob("[0-9]*.json"))
    if not finished:
        return {}
    if not resume:
        raise InputError(f"{wdir}: holds {len(finished)} finished batches of an interrupted run",
                         hint="add --resume to continue it, or remove the folder to start afresh")
    try:
        old = json.loads((wdir / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        old = None
    if old != manifest:
        raise InputError(f"{wdir}: holds batches of a run with another model, decoder or settings",
                         hint=f"resume with the same options (and the same --out: its complete lines are kept), or "
                              f"remove {wdir} to start afresh")
    return sealed_parts(finished, batch_schema(output_key), "batch", redone)


def _batches(lines: Iterator[str], size: int, first_line: int) -> Iterator[tuple[int, int, list[str]]]:
    """(index, number of its first input line, lines) for consecutive batches of `size` lines."""
    batch: list[str] = []
    index, start = 0, first_line
    for line in lines:
        batch.append(line)
        if len(batch) == size:
            yield index, start, batch
            index, start, batch = index + 1, start + size, []
    if batch:
        yield index, start, batch


def run_batches(source: str, out: Path, *, task: Callable[[dict], dict], job: dict[str, Any],
                manifest: dict[str, Any], output_key: str, batch_size: int = 200, workers: int | None = None,
                scheduler: str | None = None, client=None, resume: bool = False, encoding: str | None = None,
                keep_batches: bool = False, progress: Callable[[dict], None] | None = None) -> dict[str, Any]:
    """The batch engine under `parse_batches` and `treegram compress --workers` (module docstring: checkpoints,
    resume, input-order assembly).

    `task(job)` is the Dask task (a module-level function, so workers can import it): it gets `job` plus the batch's
    ``index``, ``first_line``, ``lines`` and ``digest`` and returns those ``index``/``digest``/``first_line``, its
    output lines under `output_key` (one per input line), status ``counts``, ``seconds``, ``cpu_seconds``,
    ``worker`` (and optionally ``parse_seconds``, ``load_cpu_seconds``), or ``{"error": ..., "hint": ...}`` for a
    problem the user can fix.  `manifest` names what makes a finished batch reusable (model identity, settings).
    Returns the run's statistics with ``results``: the batch results in input order."""
    from treegram.distributed import bounded_as_completed, cluster_client, worker_count
    from treegram.io import atomic_write_bytes, iter_lines, save_json
    from treegram.schema import seal

    t0, c0, started = time.perf_counter(), time.process_time(), time.time()
    out = Path(out)
    if out.is_dir():
        raise InputError(f"{out}: is a directory", hint="give a file name to write")
    if batch_size < 1:
        raise InputError(f"--batch-size must be at least 1, got {batch_size}", hint="e.g. --batch-size 200")
    wdir = work_dir(out)
    prefix = b""
    if resume and out.is_file():
        prefix = _complete_prefix(out)  # lines an earlier run already wrote to --out are kept
    skip = prefix.count(b"\n")
    manifest = {"version": VERSION, **manifest, "batch_size": batch_size, "kept_lines": skip}
    redone: list[str] = []
    done = _finished(wdir, manifest, resume, output_key, redone) if wdir.is_dir() else {}
    resumed = 0
    resumed_counts: Counter = Counter()  # of the batches kept from an interrupted run: not this run's work

    lines = iter_lines(source, encoding=encoding, what="input")
    first = next(lines, None)  # an empty input is an error before anything is written
    if first is None:
        raise InputError(f"{'stdin' if source == '-' else source}: no sentences (the input is empty)",
                         hint="give one sentence per line")

    def rest() -> Iterator[str]:
        yield first
        yield from lines

    body = rest()
    seen = 0
    for _ in range(skip):  # lines whose output is kept from --out
        if next(body, None) is None:
            break
        seen += 1

    total = 0
    nworkers = 0
    submit_seconds = handle_seconds = 0.0  # driver wall spent reading/submitting and writing batches
    with cluster_client(workers, scheduler, client) as client:  # an unreachable scheduler fails before any write
        cluster_ready = time.perf_counter()
        wdir.mkdir(parents=True, exist_ok=True)
        save_json(wdir / "manifest.json", manifest)
        nworkers = worker_count(client)
        limit = 2 * max(nworkers, 1) + 2  # bounded: a few batches queued per worker, the rest still unread

        def submissions():
            nonlocal total, seen, resumed, submit_seconds
            ts = time.perf_counter()
            for index, start, batch in _batches(body, batch_size, skip + 1):
                total += 1
                seen += len(batch)
                digest = batch_digest(batch)
                old = done.get(index)
                if old is not None and len(old[output_key]) != len(batch):
                    redone.append(f"{index:06d}.json ({len(old[output_key])} results for {len(batch)} lines)")
                    del done[index]
                    old = None
                if old is not None:
                    if old.get("digest") != digest:
                        raise InputError(f"input lines {start}-{start + len(batch) - 1} differ from those of the "
                                         f"interrupted run in {wdir}",
                                         hint=f"resume with the same input, or remove {wdir} to start afresh")
                    resumed += 1
                    resumed_counts.update(old["counts"])
                    if progress:
                        progress(old)
                    yield None
                    continue
                one = {**job, "index": index, "first_line": start, "lines": batch, "digest": digest}
                submit_seconds += time.perf_counter() - ts
                yield lambda one=one: client.submit(task, one, pure=False)
                ts = time.perf_counter()
            submit_seconds += time.perf_counter() - ts

        loop_start = time.perf_counter()
        timeline = []
        for fut in bounded_as_completed(client, submissions(), limit):
            th = time.perf_counter()
            res = fut.result()
            if "error" in res:
                raise InputError(res["error"], hint=res.get("hint"))
            save_json(wdir / f"{res['index']:06d}.json", seal(res))  # atomic: never half a batch; checksummed
            done[res["index"]] = res
            if "started" in res:
                timeline.append([res["worker"], res["started"], res["ended"], res["cpu_seconds"],
                                 res["process_cpu"]])
            if progress:
                progress(res)
            handle_seconds += time.perf_counter() - th
        loop_seconds = time.perf_counter() - loop_start

    # assemble in input order: the same bytes whatever the number of workers or the completion order
    counts: Counter = Counter()
    parts = [prefix]
    parse_seconds = worker_seconds = worker_cpu = load_cpu = 0.0
    hosts: set[str] = set()
    results = [{k: v for k, v in done[i].items() if k != "sha256"} for i in range(total)]
    for res in results:
        counts.update(res["counts"])
        parse_seconds += res.get("parse_seconds", 0.0)
        worker_seconds += res["seconds"]
        worker_cpu += res["cpu_seconds"]
        load_cpu += res.get("load_cpu_seconds", 0.0)
        hosts.add(res["worker"])
        parts.append("".join(t + "\n" for t in res[output_key]).encode("utf-8"))
    atomic_write_bytes(out, b"".join(parts))
    if not keep_batches:
        shutil.rmtree(wdir, ignore_errors=True)
    end = time.perf_counter()
    # where the driver's time went (benchmarks/bench_scale.py): its own CPU (Dask's client threads and, with a
    # local cluster, the scheduler's included), the wall to start the cluster, and the wall waiting for workers
    driver = {"started": round(started, 6), "cpu_seconds": round(time.process_time() - c0, 6),
              "process_cpu_seconds": round(time.process_time(), 6),  # since the process started: imports too
              "cluster_seconds": round(cluster_ready - t0, 6),
              "wait_seconds": round(max(0.0, loop_seconds - submit_seconds - handle_seconds), 6),
              "close_and_assemble_seconds": round(end - loop_start - loop_seconds, 6),
              "timeline": timeline}
    return {"driver": driver, "results": results, "counts": counts, "lines": seen, "kept_lines": skip,
            "batches": total,
            "batches_resumed": resumed, "resumed_counts": resumed_counts,
            "batches_redone": redone, "workers": nworkers, "worker_processes_used": len(hosts),
            "parse_seconds": parse_seconds, "worker_seconds": worker_seconds, "worker_cpu_seconds": worker_cpu,
            "model_load_cpu_seconds": load_cpu, "seconds": time.perf_counter() - t0}


def check_model_file(model: dict[str, Any], index: int) -> dict[str, Any] | None:
    """On a worker: the error result when the model file is missing or is not the one the run started with."""
    try:
        st = os.stat(model["path"])
    except OSError:
        return {"index": index, "error": f"{model['path']}: model file not found on worker {socket.gethostname()}",
                "hint": "the workers of a --scheduler cluster must see the model at the same path"}
    if (st.st_size, st.st_mtime_ns) != (model["size"], model["mtime_ns"]):
        return {"index": index, "error": f"{model['path']}: the model file on worker {socket.gethostname()} "
                                         "is not the one the run started with (size or mtime differ)",
                "hint": "do not replace the model during a run; on a cluster, give every worker the same file"}
    return None


def parse_batches(source: str, out: Path, *, model: Path, decoder: str | None = None, samples: int | None = None,
                  max_length: int = 100, batch_size: int = 200, workers: int | None = None,
                  scheduler: str | None = None, client=None, resume: bool = False, encoding: str | None = None,
                  keep_batches: bool = False, progress: Callable[[dict], None] | None = None,
                  text: bool = False, cell_beam: float | None = None) -> dict[str, Any]:
    """Parse the lines of `source` (a file, ``-`` = stdin) into `out` on a Dask cluster; returns the summary.
    `text`: each line is a sentence as typed (see `parse_line`).

    `client`: an existing `distributed.Client` (tests, benchmarks); else `workers` local processes or the cluster at
    `scheduler`.  `progress(result)` is called once per finished (or resumed) batch."""
    from treegram.charts.decoders import parse_default, resolve_decoder
    from treegram.formalism import load_model

    # load and check here, once: a bad model or decoder is one clear error now, not one per worker
    identity = model_identity(model)
    loaded = load_model(model)
    if not hasattr(loaded, "parse"):
        raise InputError(f"{model}: a {loaded.formalism} model cannot parse sentences",
                         hint="use a parsing model (pcfg, tsg, tig, ostag)")
    parse_default(loaded, decoder, samples, cell_beam=cell_beam)
    decoder_used = resolve_decoder(loaded, decoder, samples)[0] or "model default (parse)"
    del loaded
    settings = {"decoder": decoder, "samples": samples, "max_length": max_length}
    if text:  # only then, so the manifests of tokenized runs stay what they were (resumable across versions)
        settings["text"] = True
    if cell_beam is not None:  # likewise
        settings["cell_beam"] = cell_beam
    run = run_batches(source, out, task=parse_batch, job={"model": identity, **settings},
                      manifest={"model": identity, **settings}, output_key="trees", batch_size=batch_size,
                      workers=workers, scheduler=scheduler, client=client, resume=resume, encoding=encoding,
                      keep_batches=keep_batches, progress=progress)
    counts, seconds = run["counts"], run["seconds"]
    # the rate of this invocation's work: lines kept from an interrupted run were parsed before
    parsed = sum(counts[s] - run["resumed_counts"][s] for s in ("ok", "failed"))
    return {
        "input": source, "out": str(out), "model": str(model), "decoder": decoder_used,
        "lines": run["lines"], "kept_lines": run["kept_lines"], "new_lines": run["lines"] - run["kept_lines"],
        "counts": {s: int(counts[s]) for s in STATUSES},
        "batches": run["batches"], "batches_resumed": run["batches_resumed"],
        "batches_redone": run["batches_redone"], "batch_size": batch_size,
        "workers": run["workers"], "worker_processes_used": run["worker_processes_used"],
        "parse_seconds": round(run["parse_seconds"], 3), "worker_seconds": round(run["worker_seconds"], 3),
        "worker_cpu_seconds": round(run["worker_cpu_seconds"], 3),
        "model_load_cpu_seconds": round(run["model_load_cpu_seconds"], 3),
        "seconds": round(seconds, 3),
        "sentences_per_second": round(parsed / seconds, 2) if seconds > 0 else 0.0,
        "driver": run["driver"],
    }


__all__ = ["STATUSES", "batch_digest", "check_model_file", "model_identity", "parse_batch", "parse_batches", "parse_line",
           "run_batches", "work_dir"]
