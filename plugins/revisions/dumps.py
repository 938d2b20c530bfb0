"""Streaming MediaWiki XML history dumps (``.xml``, ``.xml.gz``, ``.xml.bz2``), never loaded whole: the driver only
decompresses and cuts the byte stream at ``<page>`` elements (`iter_chunks`); each worker parses its chunk's XML with
`mwxml` (`parse_chunk`).  Chunks are whole pages (about `chunk_revisions` revisions each; a page longer than that is split, the next
chunk repeating its last revision as context so no consecutive pair is lost).  Chunk boundaries depend only on the
dump and `chunk_revisions`, never on the number of workers."""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import re
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


_REVISION = re.compile(rb"<revision>.*?</revision>", re.S)


def _raw_pages(fh, path: Path) -> Iterator[tuple[bytes, bytes]]:
    """(header, page) byte strings of a MediaWiki export: the document up to the first ``<page>`` (the
    ``<mediawiki>`` tag and ``<siteinfo>``) and each ``<page>...</page>`` element.  No XML parsing: inside an
    XML document the text ``<page>`` can only be that element (text content escapes ``<``)."""
    buf = bytearray()
    header = None
    scan = 0
    while True:
        block = fh.read(1 << 22)
        buf += block
        while True:
            if header is None:
                i = buf.find(b"<page>")
                if i < 0:
                    break
                header = bytes(buf[:i])
                del buf[:i]
            start = buf.find(b"<page>")
            if start < 0:
                break
            end = buf.find(b"</page>", max(start, scan))
            if end < 0:
                scan = max(0, len(buf) - 8)
                break
            end += len(b"</page>")
            yield header, bytes(buf[start:end])
            del buf[:end]
            scan = 0
        if not block:
            break
    if header is None and b"<mediawiki" in buf and b"</mediawiki>" in buf:
        return  # a dump without pages
    if header is None or b"<page>" in buf or b"</mediawiki>" not in buf:
        raise InputError(f"{path}: the XML ends inside a page or before </mediawiki> (truncated?); chunks before "
                         "this point are kept", hint="re-download the dump; a re-run resumes after the finished "
                                                     "chunks")


def iter_chunks(paths: list[Path], chunk_revisions: int) -> Iterator[dict[str, Any]]:
    """Chunks ``{"index", "dump", "header", "pieces": [(page_head, [revision, ...], context), ...]}`` of raw XML
    bytes in dump order (`parse_chunk` turns one into segments on a worker).  The driver only decompresses and
    cuts the byte stream; the XML is parsed by the workers."""
    index = 0
    for path in paths:
        pieces: list = []
        size = 0
        header = b""
        try:
            with _open(path) as raw:
                for header, page in _raw_pages(raw, path):
                    revs = [m.group(0) for m in _REVISION.finditer(page)]
                    first = page.find(b"<revision>")
                    head = page[:first] if first >= 0 else page[:-len(b"</page>")]
                    piece = (head, [], False)
                    for rev in revs:
                        piece[1].append(rev)
                        size += 1
                        if size >= chunk_revisions:
                            pieces.append(piece)
                            yield {"index": index, "dump": str(path), "header": header, "pieces": pieces}
                            index += 1
                            piece = (head, [rev], True)
                            pieces, size = [], 0
                    if len(piece[1]) > (1 if piece[2] else 0):
                        pieces.append(piece)
        except (EOFError, OSError, zlib.error, lzma.LZMAError) as exc:
            raise InputError(f"{path}: the dump is truncated or corrupt ({exc}); chunks before this point are "
                             "kept", hint="re-download the dump; a re-run resumes after the finished chunks") from None
        if pieces:
            yield {"index": index, "dump": str(path), "header": header, "pieces": pieces}
            index += 1


def parse_chunk(chunk: dict[str, Any]) -> dict[str, Any]:
    """A raw chunk parsed with `mwxml` into ``{"index", "segments"}`` (see `mine.mine_chunk`); malformed XML is
    an InputError naming the dump."""
    import mwxml

    body = b"".join(head + b"".join(revs) + b"</page>\n" for head, revs, _ in chunk["pieces"])
    doc = chunk["header"] + body + b"</mediawiki>\n"
    segments = []
    try:
        dump = mwxml.Dump.from_file(io.BytesIO(doc))
        for (_, _, context), page in zip(chunk["pieces"], dump):
            seg = _segment(page, context=context)
            for rev in page:
                seg["revisions"].append((rev.id, rev.text or ""))
                if rev.model and seg["model"] is None:
                    seg["model"] = rev.model
            segments.append(seg)
    except Exception as exc:  # mwxml / expat: malformed XML
        if type(exc).__name__ in ("ParseError", "ExpatError", "MalformedXML") or "xml" in type(exc).__module__:
            raise InputError(f"{chunk['dump']}: malformed XML in chunk {chunk['index']} ({exc})", hint=_HINT) from None
        raise
    return {"index": chunk["index"], "segments": segments}


def _segment(page, *, context: bool, model: str | None = None) -> dict[str, Any]:
    return {"page_id": page.id, "title": (page.title or "").replace("\t", " "), "model": model,
            "context": context, "revisions": []}
