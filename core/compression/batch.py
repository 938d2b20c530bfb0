"""`treegram compress --workers N | --scheduler ADDRESS`: compressing a big input on a Dask cluster, for any compressor.

The batch engine is `treegram.batchparse.run_batches` (the one `treegram parse --workers` runs): batches of input
lines as Dask tasks, each finished batch checkpointed atomically beside ``--out``, ``--resume`` after a kill re-runs
only the missing batches, and ``--out`` assembled in input order.  The task (`compress_batch`) loads the model once
per worker process and sends every line through `treegram.compression.run.compress_line` -- the one-process
command's own per-line step -- so the output is byte for byte the one-process output, for any number of workers.
"""

from __future__ import annotations

import os
import socket
import time
from collections import Counter
from pathlib import Path
from typing import Any, Callable

from treegram.compression.run import STATUSES, CompressSettings, compress_line

__all__ = ["compress_batch", "compress_batches"]

_MODELS: dict[tuple, Any] = {}  # per worker process: the model is loaded once, not once per batch


def _model(identity: dict[str, Any]):
    key = (identity["path"], identity["size"], identity["mtime_ns"])
    model = _MODELS.get(key)
    if model is None:
        from treegram.formalism import load_model

        _MODELS.clear()
        model = _MODELS[key] = load_model(identity["path"])
    return model


def compress_batch(job: dict[str, Any]) -> dict[str, Any]:
    """The Dask task: compress one batch of input lines (see `treegram.batchparse.run_batches` for the result)."""
    from treegram.batchparse import check_model_file

    t0, c0 = time.perf_counter(), time.process_time()
    bad = check_model_file(job["model"], job["index"])
    if bad is not None:
        return bad
    c_load = time.process_time()
    model = _model(job["model"])
    load_cpu = time.process_time() - c_load
    settings = CompressSettings(**job["settings"])
    outputs, records, counts = [], [], Counter()
    parse_s = decode_s = 0.0
    for i, line in enumerate(job["lines"]):
        res = compress_line(model, line, settings, job["first_line"] + i)
        outputs.append(res.output)
        records.extend(res.records)
        counts.update(res.counts)
        parse_s += res.parse_seconds
        decode_s += res.decode_seconds
    return {"index": job["index"], "digest": job["digest"], "first_line": job["first_line"], "lines": outputs,
            "records": records, "counts": {s: counts[s] for s in STATUSES}, "parse_seconds": round(parse_s, 6),
            "decode_seconds": round(decode_s, 6), "seconds": round(time.perf_counter() - t0, 6),
            "cpu_seconds": round(time.process_time() - c0, 6), "load_cpu_seconds": round(load_cpu, 6),
            "worker": f"{socket.gethostname()}:{os.getpid()}"}


def compress_batches(source: str, out: Path, *, model: Path, settings: CompressSettings, batch_size: int = 200,
                     workers: int | None = None, scheduler: str | None = None, client=None, resume: bool = False,
                     encoding: str | None = None, keep_batches: bool = False,
                     progress: Callable[[dict], None] | None = None) -> tuple[dict[str, Any], list[dict]]:
    """Compress the lines of `source` into `out` on a Dask cluster with the compressor at `model` (checked by the
    caller); returns (summary, the sentence records in input order)."""
    from treegram.batchparse import model_identity, run_batches

    identity = model_identity(model)
    run = run_batches(source, Path(out), task=compress_batch, job={"model": identity, "settings": settings.to_json()},
                      manifest={"task": "compress", "model": identity, "settings": settings.to_json()},
                      output_key="lines", batch_size=batch_size, workers=workers, scheduler=scheduler, client=client,
                      resume=resume, encoding=encoding, keep_batches=keep_batches, progress=progress)
    counts, seconds = run["counts"], run["seconds"]
    records = [r for res in run["results"] for r in res["records"]]
    done = sum(counts[s] for s in ("ok", "failed", "too_long"))
    decode_s = sum(res.get("decode_seconds", 0.0) for res in run["results"])
    summary = {"input": source, "out": str(out), "model": str(model), "lines": run["lines"],
               "kept_lines": run["kept_lines"], "new_lines": run["lines"] - run["kept_lines"],
               "sentences": len(records), **{s: int(counts[s]) for s in STATUSES},
               "unchanged": sum(1 for r in records if r.get("keep") and all(r["keep"])),
               "batches": run["batches"], "batches_resumed": run["batches_resumed"],
               "batches_redone": run["batches_redone"], "batch_size": batch_size,
               "workers": run["workers"], "worker_processes_used": run["worker_processes_used"],
               "parse_seconds": round(run["parse_seconds"], 3), "decode_seconds": round(decode_s, 3),
               "worker_cpu_seconds": round(run["worker_cpu_seconds"], 3),
               "model_load_cpu_seconds": round(run["model_load_cpu_seconds"], 3), "seconds": round(seconds, 3),
               # this invocation's rate: batches kept from an interrupted run were compressed before
               "sentences_per_second": round((done - sum(run["resumed_counts"][s] for s in ("ok", "failed",
                                                                                        "too_long"))) / seconds, 2)
               if seconds > 0 else 0.0}
    return summary, records
