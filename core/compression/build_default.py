"""Build the shipped default compression model (`treegram.compression.default`) from the data folder given by
`--data` (the one holding ``compression/wiki-edits`` and ``revisions/``), with the
public command line only (`treegram mine-revisions`, `treegram train channel`), so the recipe is the documented one:

    python -m treegram.compression.build_default --data DATA_DIR [--out core/compression/data/...]

Data (the decision and the attribution are in core/compression/data/NOTICE.md):

- training pairs: every deletion-only pair of ``compression/wiki-edits`` (Wikipedia revision history via WikiSplit,
  and English/Simple Wikipedia alignments via Wiki-Auto; CC BY-SA 4.0 / 3.0) and the pairs `treegram
  mine-revisions` finds in ``revisions/`` (the English Wikipedia sample, CC BY-SA; Python Enhancement Proposals,
  public domain / CC0).  Broadcast news (Clarke & Lapata) and the Google pairs carry no licence that allows
  redistributing a model derived from them, so they train nothing shipped.
- parser: the pinned spaCy pipeline (`--parser spacy`, MIT; installed with treegram, not part of the model file).
- valency counts: the parses of the long sides of those pairs and of GUM's CC BY / CC BY-SA genres (academic,
  bio, court, interview, news, voyage).
- default length: calibrated (one number, the per-word reward) on broadcast-news training sentences (lines 1-1000)
  so that the model keeps 72.3% of their words, the three annotators' mean rate on those lines; beyond that rate no
  compression of theirs is used.

Long sides are tokenized by `treegram.text` (the tokenizer `treegram compress` uses on typed text); short sides are
aligned to them by text (`read_pairs`' character-level alignment), so tokenization differences cost nothing.
"""

from __future__ import annotations

import argparse
import gzip
import sys
import tempfile
from pathlib import Path

__all__ = ["main", "TRAIN_OPTIONS"]

GUM_GENRES = ("academic", "bio", "court", "interview", "news", "voyage")
# the `treegram train channel` options of the shipped model (chosen on broadcast-news training sentences by blind
# judging and token F1: benchmarks/RESULTS.md `compression-default`)
TRAIN_OPTIONS = ["--levels", "4", "--constraints", "--tidy", "--significance", "5", "--content-floor", "2",
                 "--valency", "2", "--length-prior", "2", "--target-rate", "0.723"]


def _tokens(text: str) -> list[str]:
    from treegram.text import tokenize

    return tokenize(text)[0]


def write_pairs(data: Path, work: Path, mined_tsv: Path) -> tuple[Path, Path, dict]:
    """long.txt (tokenized) and short.txt (as written) from wiki-edits and the mined pairs."""
    longs, shorts = [], []
    counts = {"wiki-edits": 0, "mined": 0}
    with gzip.open(data / "compression" / "wiki-edits" / "pairs.tsv.gz", "rt", encoding="utf-8") as fh:
        next(fh)
        for line in fh:
            parts = line.rstrip("\n").split("\t")
            if len(parts) < 2:
                continue
            toks = _tokens(parts[0])
            if 3 <= len(toks) <= 80:
                longs.append(" ".join(toks))
                shorts.append(parts[1])
                counts["wiki-edits"] += 1
    rows = mined_tsv.read_text(encoding="utf-8").splitlines()
    head = rows[0].split("\t")
    for line in rows[1:]:
        r = dict(zip(head, line.split("\t")))
        toks = _tokens(r.get("long", ""))
        if 3 <= len(toks) <= 80 and r.get("short"):
            longs.append(" ".join(toks))
            shorts.append(r["short"])
            counts["mined"] += 1
    lp, sp = work / "long.txt", work / "short.txt"
    lp.write_text("\n".join(longs) + "\n", encoding="utf-8")
    sp.write_text("\n".join(shorts) + "\n", encoding="utf-8")
    return lp, sp, counts


def write_valency_text(data: Path, work: Path, long_path: Path) -> Path:
    """The long sides and GUM's permissively licensed genres, one tokenized sentence per line."""
    from treegram.trees import read_treebank

    files = sorted(f for f in (data / "gum-const" / "const").iterdir()
                   if f.name.startswith("GUM_") and f.name.split("_")[1] in GUM_GENRES)
    lines = long_path.read_text(encoding="utf-8").splitlines()
    lines += [" ".join(t.leaves()) for t in read_treebank(files, on_error="skip", on_problem=lambda p: None)]
    out = work / "valency.txt"
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


def main(argv: list[str] | None = None) -> int:
    from treegram.cli.app import main as treegram

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, required=True,
                    help="the data folder holding compression/wiki-edits, revisions/ and gum-const")
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "data" / "default-compressor.model")
    ap.add_argument("--work", type=Path, default=None, help="keep intermediate files (pairs, parses) here")
    ap.add_argument("--workers", type=int, default=1, help="processes mining the revision histories")
    args = ap.parse_args(argv)
    data = args.data
    if not (data / "compression" / "wiki-edits" / "pairs.tsv.gz").is_file():
        print(f"{data}: no compression/wiki-edits/pairs.tsv.gz (give --data the folder that holds it)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        work = args.work or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        mined = work / "mined.tsv"
        if not mined.is_file():
            rc = treegram(["-q", "mine-revisions", *[str(data / "revisions" / d) for d in
                                                    ("enwiki-20140102-sample.xml.gz", "python-peps-history.xml.bz2")],
                           "--out", str(mined), "--workers", str(args.workers)])
            if rc:
                return rc
        long_path, short_path, counts = write_pairs(data, work, mined)
        print(f"training pairs: {counts}", file=sys.stderr)
        valency = write_valency_text(data, work, long_path)
        calib = work / "calibrate.txt"
        bn = (data / "compression" / "broadcast-news" / "input.txt").read_text(encoding="utf-8").splitlines()[:1000]
        calib.write_text("\n".join(bn) + "\n", encoding="utf-8")
        args.out.parent.mkdir(parents=True, exist_ok=True)
        return treegram(["-q", "train", "channel", "--pairs", str(long_path), str(short_path), "--parser", "spacy",
                         *TRAIN_OPTIONS, "--valency-text", str(valency), "--calibrate-text", str(calib),
                         "--parse-cache", str(work / "parses"), "--out", str(args.out)])


if __name__ == "__main__":
    sys.exit(main())
