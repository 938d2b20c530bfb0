"""The Dask driver of `treegram mine-revisions`.

The driver streams the dumps (`dumps.iter_chunks`: decompression and cutting at <page> elements, no XML parsing)
and submits one `mine.mine_raw_chunk` task (mwxml parsing + mining) per chunk to a `distributed` cluster
(`treegram.distributed`): a `LocalCluster` of `workers` processes with one thread each, or a running cluster at
`scheduler`.  At most ``2 * workers + 2`` chunks are in flight (bounded memory,
`treegram.distributed.bounded_as_completed`); results arrive as they finish, which also feeds the progress bar.
Each finished chunk is written at once, atomically, to ``OUT.chunks/NNNNNN.json`` beside the output (its checkpoint
directory, with a ``manifest.json`` naming the dumps and settings); a re-run with the same dumps and settings skips
those chunks, so a run killed with SIGKILL loses no finished chunk.  The final TSV is assembled in chunk order
(deterministic for any number of workers) and written atomically; then the checkpoint directory is removed
(``keep_chunks`` keeps it).
"""

from __future__ import annotations

import json
import shutil
import time
from collections import Counter
from pathlib import Path
from typing import Any

from treegram.distributed import bounded_as_completed, cluster_client, worker_count
from treegram.errors import InputError
from treegram.io import atomic_write_text, save_json
from treegram.schema import seal
from treegram.plugins.revisions.dumps import iter_chunks
from treegram.plugins.revisions.mine import Settings, mine_raw_chunk

COLUMNS = ["page_id", "page", "from_rev", "to_rev", "direction", "long_words", "short_words", "long", "short"]
VERSION = 2


def checkpoint_dir(out: Path) -> Path:
    """``OUT.chunks/`` beside a regular output file (a stream or device has no place for one)."""
    from treegram.io import required_derived_path

    return required_derived_path(out, ".chunks", f"--out must be a regular file (not {out}): finished chunks are "
                                                 "kept beside it", hint="write the pairs to a file")


def _manifest(dumps: list[Path], settings: Settings, chunk_revisions: int) -> dict[str, Any]:
    files = []
    for p in dumps:
        st = p.stat()
        files.append({"path": str(p.resolve()), "size": st.st_size, "mtime": int(st.st_mtime)})
    return {"version": VERSION, "dumps": files, "settings": settings.to_dict(), "chunk_revisions": chunk_revisions}


def _row_problem(row: list) -> str | None:
    ok = (isinstance(row[4], str) and row[4] in ("compression", "expansion")
          and all(isinstance(row[k], int) and not isinstance(row[k], bool) and row[k] >= 0 for k in (5, 6))
          and all(isinstance(row[k], str) for k in (1, 7, 8)))
    return None if ok else "a mined pair's fields have the wrong types"


def chunk_schema():
    """A finished chunk file (``OUT.chunks/NNNNNN.json``), checked with its checksum before it is reused."""
    from treegram.schema import AllOf, Dict, Float, Int, List, Where

    row = AllOf((List(min_len=9, max_len=11), Where(_row_problem)))
    return Dict({"index": Int(min=0), "pairs": List(row), "stats": Dict(values=Float())})


def _finished(cdir: Path, manifest: dict[str, Any], redone: list[str] | None = None) -> dict[int, dict]:
    """Finished chunk results of an earlier run with the same manifest ({} for a fresh start).  A chunk file that
    is not what the run wrote (edited, damaged, not matching the chunk schema) is left out and mined again."""
    from treegram.schema import sealed_parts

    mpath = cdir / "manifest.json"
    if not mpath.exists():
        return {}
    try:
        old = json.loads(mpath.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        old = None
    finished = sorted(cdir.glob("[0-9]*.json"))
    if old != manifest and finished:
        raise InputError(f"{cdir}: holds chunks of a run with other dumps or settings",
                         hint=f"remove {cdir} to start afresh, or use another --out")
    if old != manifest:
        return {}  # nothing finished under other settings: start afresh
    return sealed_parts(finished, chunk_schema(), "chunk", redone)


def mine(dumps: list[Path], out: Path, *, settings: Settings, workers: int | None = None,
         scheduler: str | None = None, client=None, chunk_revisions: int = 500, keep_chunks: bool = False,
         progress=None) -> dict[str, Any]:
    """Mine `dumps` into `out`; returns the summary.  `client`: an existing `distributed.Client` (tests)."""
    t0, c0 = time.perf_counter(), time.process_time()
    cdir = checkpoint_dir(out)
    manifest = _manifest(dumps, settings, chunk_revisions)
    redone: list[str] = []
    done = _finished(cdir, manifest, redone) if cdir.is_dir() else {}
    resumed = len(done)
    cdir.mkdir(exist_ok=True)
    save_json(cdir / "manifest.json", manifest)

    with cluster_client(workers, scheduler, client) as client:
        nworkers = worker_count(client)
        limit = 2 * max(nworkers, 1) + 2
        total = 0

        def submissions():
            nonlocal total
            for chunk in iter_chunks(dumps, chunk_revisions):
                total += 1
                if chunk["index"] in done:
                    if progress:
                        progress(done[chunk["index"]])
                    yield None
                    continue
                # the chunk's text goes straight to a worker (scatter), not through the scheduler's task graph
                [data] = client.scatter([chunk], hash=False)  # (a dict would be scattered value by value)
                yield lambda data=data: client.submit(mine_raw_chunk, data, settings, pure=False)

        for fut in bounded_as_completed(client, submissions(), limit):
            res = fut.result()
            save_json(cdir / f"{res['index']:06d}.json", seal(res))  # atomic: never half a chunk; checksummed
            done[res["index"]] = res
            if progress:
                progress(res)

    driver_cpu = time.process_time() - c0  # streaming and decompressing the dumps, shipping chunks
    # assemble in chunk order
    stats: Counter = Counter()
    lines = ["\t".join(COLUMNS + (["long_nll", "short_nll"] if settings.parser else []))]
    deleted = 0
    seen: set[tuple] = set()  # a page split over chunks: the same pair mined again in a later chunk
    for i in range(total):
        res = done[i]
        stats.update(res["stats"])
        for row in res["pairs"]:
            key = (row[0], row[7], row[8])
            if key in seen:
                stats["pairs"] -= 1
                stats[row[4]] -= 1
                stats["filtered:duplicate"] += 1
                continue
            seen.add(key)
            deleted += row[5] - row[6]
            lines.append("\t".join(str(v) for v in row))
    atomic_write_text(out, "\n".join(lines) + "\n")
    if not keep_chunks:
        shutil.rmtree(cdir, ignore_errors=True)
    seconds = time.perf_counter() - t0
    filtered = {k.split(":", 1)[1]: int(v) for k, v in sorted(stats.items()) if k.startswith("filtered:")}
    revisions = int(stats["revisions"])
    return {
        "dumps": [str(p) for p in dumps], "out": str(out),
        "revisions": revisions, "pages": int(stats["pages"]), "sentences": int(stats["sentences"]),
        "comparisons": int(stats["comparisons"]), "replacements": int(stats["replacements"]),
        "candidates": int(stats["candidates"]), "filtered": filtered,
        "pairs": int(stats["pairs"]), "compressions": int(stats["compression"]),
        "expansions": int(stats["expansion"]),
        "pairs_per_1000_revisions": round(1000 * stats["pairs"] / revisions, 2) if revisions else 0.0,
        "mean_deleted_words": round(deleted / stats["pairs"], 2) if stats["pairs"] else 0.0,
        "alignment_fallbacks": int(stats["alignment_fallbacks"]),
        "chunks": total, "chunks_resumed": resumed, "chunks_redone": redone, "workers": nworkers,
        "worker_seconds": round(float(stats["seconds"]), 3),
        "worker_cpu_seconds": round(float(stats["cpu_seconds"]), 3),
        "driver_cpu_seconds": round(driver_cpu, 3),
        "seconds": round(seconds, 3),
        "revisions_per_second": round(revisions / seconds, 1) if seconds > 0 else 0.0,
        "parser_filter": settings.parser is not None,
    }
