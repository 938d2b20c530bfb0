"""Streaming MediaWiki XML history dumps (``.xml``, ``.xml.gz``, ``.xml.bz2``) with `mwxml`, never loaded whole,
cut into chunks of whole pages (about `chunk_revisions` revisions each; a page longer than that is split, the next
chunk repeating its last revision as context so no consecutive pair is lost).  Chunk boundaries depend only on the
dump and `chunk_revisions`, never on the number of workers."""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from treegram.errors import InputError

_HINT = "give a MediaWiki XML export (pages-meta-history .xml, .xml.gz or .xml.bz2)"


def _open(path: Path):
    name = path.name.lower()
    if name.endswith(".bz2"):
        return bz2.open(path, "rb")
    if name.endswith(".gz"):
        return gzip.open(path, "rb")
    if name.endswith(".xz"):
        return lzma.open(path, "rb")
    return open(path, "rb")


def check_dump(path: str | os.PathLike) -> Path:
    """Fail early (before a cluster starts) on a missing, unreadable or non-XML dump."""
    p = Path(path)
    if p.is_dir():
        raise InputError(f"{p}: is a directory, not a dump file", hint=_HINT)
    if not p.exists():
        raise InputError(f"{p}: dump file not found", hint="check the path")
    try:
        with _open(p) as fh:
            head = fh.read(4096)
    except PermissionError:
        raise InputError(f"{p}: permission denied", hint="check the file's permissions") from None
    except (OSError, EOFError, lzma.LZMAError, zlib.error) as exc:
        raise InputError(f"{p}: cannot decompress ({exc})", hint=_HINT) from None
    if b"<mediawiki" not in head:
        raise InputError(f"{p}: not a MediaWiki XML dump (no <mediawiki> element at the start)", hint=_HINT)
    return p


def iter_chunks(paths: list[Path], chunk_revisions: int) -> Iterator[dict[str, Any]]:
    """Chunks ``{"index", "dump", "segments": [...]}`` in dump order (see `mine.mine_chunk` for a segment)."""
    import mwxml

    index = 0
    for path in paths:
        segments: list[dict] = []
        size = 0
        try:
            with _open(path) as raw:
                dump = mwxml.Dump.from_file(io.TextIOWrapper(raw, encoding="utf-8", errors="replace"))
                for page in dump:
                    seg = _segment(page, context=False)
                    for rev in page:
                        seg["revisions"].append((rev.id, rev.text or ""))
                        if rev.model and seg["model"] is None:
                            seg["model"] = rev.model
                        size += 1
                        if size >= chunk_revisions:
                            segments.append(seg)
                            yield {"index": index, "dump": str(path), "segments": segments}
                            index += 1
                            last = seg["revisions"][-1]
                            seg = _segment(page, context=True, model=seg["model"])
                            seg["revisions"].append(last)
                            segments, size = [], 0
                    if len(seg["revisions"]) > (1 if seg["context"] else 0):
                        segments.append(seg)
        except (EOFError, OSError, zlib.error, lzma.LZMAError) as exc:
            raise InputError(f"{path}: the dump is truncated or corrupt ({exc}); chunks before this point are "
                             "kept", hint="re-download the dump; a re-run resumes after the finished chunks") from None
        except Exception as exc:  # mwxml / expat: malformed XML
            if type(exc).__name__ in ("ParseError", "ExpatError", "MalformedXML") or "xml" in type(exc).__module__:
                raise InputError(f"{path}: malformed XML ({exc}); chunks before this point are kept",
                                 hint=_HINT) from None
            raise
        if segments:
            yield {"index": index, "dump": str(path), "segments": segments}
            index += 1


def _segment(page, *, context: bool, model: str | None = None) -> dict[str, Any]:
    return {"page_id": page.id, "title": (page.title or "").replace("\t", " "), "model": model,
            "context": context, "revisions": []}
