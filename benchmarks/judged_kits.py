"""Blind-judged exercise kits (issue 25): keep their ratings in the repository and score them.

    python benchmarks/judged_kits.py record NAME [--from /work/judging]   # copy a rated kit into benchmarks/judged
    python benchmarks/judged_kits.py score NAME [NAME ...] [--no-write]   # RESULTS section `exercise-kits-judged`

A kit is what `bench_exercises.py --kit NAME` wrote (NAME-choice/blind.txt + NAME-choice.key.tsv, NAME-sentences/
blind.txt + NAME-sentences.key.tsv), or a sentences-only kit of `make_edit_kit.py` (NAME/blind.txt + NAME.key.tsv),
once judges outside the team have rated it (ratings-*.tsv in each folder).
`record` keeps it the way benchmarks/judged keeps judged sets: NAME-choice.{blind.txt,key.tsv,ratings-JUDGE.tsv},
NAME-sentences.tsv (ID, sentence as shown), NAME-sentences.key.json (text, source, level, word, provenance: Tatoeba
ids and contributors) and NAME-sentences.ratings-JUDGE.tsv — small TSVs, no data files.

`score` gives, per kit: choice items with exactly one fitting option (the key's answer and nothing else) per judge
and for items where every judge says so, items where a judge saw several options fit or none; sheet sentences
plausible and classroom-fit per judge and by majority (ties = no, so with two judges: both say yes), by source;
and the judges' reasons for "not classroom-fit" grouped by kind (a reason may name several kinds).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent
JUDGED = ROOT / "judged"
sys.path.insert(0, str(ROOT))

#: kinds of reasons judges gave for "not classroom-fit" (keywords, lowercase; a reason may match several)
REASONS = {
    "needs context": ("context", "incomplete", "vague", "without"),
    "idiom or proverb": ("idiom", "proverb", "slogan"),
    "awkward or unnatural": ("awkward", "unnatural", "odd", "unidiomatic", "stilted", "nonstandard", "missing",
                             "error", "illogical", "tense", "ungrammatical", "collocation", "unusual"),
    "formal or literary": ("formal", "literary", "poetic", "subjunctive", "inversion", "cleft", "passive",
                           "gerund", "news", "business", "jargon"),
    "dated": ("dated", "archaic"),
    "abstract or above the level": ("above", "level", "abstract", "advanced", "b1", "b2", "technical", "complex",
                                    "figurative", "concessive", "structure"),
    "unclear or ambiguous": ("unclear", "ambiguous", "confusing"),
    "topic (violence, death, smoking, alcohol, romance, crime, judging people)": (
        "violent", "smoking", "death", "alcohol", "romantic", "crime", "kiss", "body", "harsh", "judgement",
        "judgment", "gendered", "slang", "wine", "bar", "dramatic"),
}


#: how each judged kit was built (bench_exercises.py --kit; the `exercise-kits` section describes the latest)
KITS = {
    "mc25": "400 random A1/A2 headwords, seed 2511, sheets of 10 words x 1 item, built at main 660b3f4 (before the "
            "classroom-fitness model and the open-slot rules it led to): 196 choice items of 400 asked, 392 cloze "
            "sentences, all corpus; its labels trained the fitness model",
    "fit25": "400 random A1/A2 headwords none of which were in mc25 or a development kit, seed 2613, sheets of 10 "
             "words x 1 item, built at i-fit 53e3431 with the classroom-fitness model and the open-slot rules: 177 "
             "choice items of 400 asked, 376 cloze sentences, all corpus",
    "gen25": "the edit generator (issue 25 item 5; sentences only, `python benchmarks/make_edit_kit.py "
             "/work/judging/gen25 --exclude benchmarks/judged/gen25-devwords.txt`, seed 2525): 100 new sentences "
             "made by derivation edits of real ones (edits.py) for random A1/A2 headwords never used in development, "
             "each the first edit a sheet would show for its word (plausibility check, fitness floor and bands, "
             "quality checks), and for every other word the corpus sentence a sheet would show",
}


def _yes(x: str) -> bool:
    return x.strip().lower().startswith("y")


def _rows(path: Path) -> list[list[str]]:
    return [ln.split("\t") for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()]


def record(name: str, src: Path) -> None:
    from treegram.plugins.vocabgen.corpus import dedup_key
    from treegram.plugins.vocabgen.default import default_corpus

    JUDGED.mkdir(exist_ok=True)
    choice, sent = src / f"{name}-choice", src / f"{name}-sentences"
    skey = src / f"{name}-sentences.key.tsv"
    if not sent.is_dir():  # a sentences-only kit (make_edit_kit.py): NAME/blind.txt + NAME.key.tsv
        sent, skey = src / name, src / f"{name}.key.tsv"
    folders = [(sent, "sentences")]
    if choice.is_dir():
        shutil.copyfile(src / f"{name}-choice.key.tsv", JUDGED / f"{name}-choice.key.tsv")
        shutil.copyfile(choice / "blind.txt", JUDGED / f"{name}-choice.blind.txt")
        folders.insert(0, (choice, "choice"))
    shutil.copyfile(sent / "blind.txt", JUDGED / f"{name}-sentences.tsv")
    for folder, kind in folders:
        for f in sorted(folder.glob("ratings-*.tsv")):
            shutil.copyfile(f, JUDGED / f"{name}-{kind}.{f.name}")
    key_json = JUDGED / f"{name}-sentences.key.json"
    rows = _rows(skey)
    if key_json.exists() and {k["id"] for k in json.loads(key_json.read_text(encoding="utf-8"))} == {r[0] for r in rows}:
        key = json.loads(key_json.read_text(encoding="utf-8"))  # written by the kit's builder (hosts, scores)
    else:
        c = default_corpus()
        idx = {dedup_key(t): i for i, t in enumerate(c.texts)}
        key = []
        for r in rows:
            i = idx.get(dedup_key(r[4])) if r[1].startswith("corpus") else None
            key.append({"id": r[0], "text": r[4], "source": r[1], "level": r[2], "word": r[3],
                        "provenance": c.provenance(i) if i is not None else ""})
        key_json.write_text(json.dumps(key, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"recorded {name}: {len(key)} sentences{', choice key' if choice.is_dir() else ''}, ratings of "
          f"{len(list(JUDGED.glob(f'{name}-*.ratings-*.tsv')))} judge files in {JUDGED}")


def score(name: str) -> list[str]:
    out = [f"**Kit {name}**" + (f" ({KITS[name]})" if name in KITS else ""), ""]
    ckey = JUDGED / f"{name}-choice.key.tsv"
    key = {r[0]: r for r in _rows(ckey)} if ckey.exists() else {}
    judges = {f.name.split(".ratings-")[1][:-4]: {r[0]: r[1] if len(r) > 1 else "" for r in _rows(f)}
              for f in sorted(JUDGED.glob(f"{name}-choice.ratings-*.tsv"))}
    if key and judges:
        def fitting(rating: str) -> set[str]:
            return {x.strip() for x in rating.lower().replace(" ", "").split(",") if x.strip() not in ("", "none")}

        right = {i: "abcdefgh"[r[2].split("|").index(r[1])] for i, r in key.items()}
        rows = []
        single_all = set(key)
        for j, rt in judges.items():
            single = {i for i in key if fitting(rt.get(i, "")) == {right[i]}}
            single_all &= single
            several = sum(len(fitting(rt.get(i, ""))) > 1 for i in key)
            none = sum(not fitting(rt.get(i, "")) for i in key)
            rows.append(f"| {j} | {len(single)} / {len(key)} = {100 * len(single) / len(key):.1f}% | "
                        f"{several} | {none} |")
        rows.append(f"| every judge | {len(single_all)} / {len(key)} = {100 * len(single_all) / len(key):.1f}% |"
                    " | |")
        out += [f"Choice items ({len(key)}): exactly one fitting option, the key's (goal >= 98%)", "",
                "| judge | exactly one fitting option | several fit | none fit |", "|---|---|---|---|", *rows, ""]
        bad = [i for i in key if i not in single_all]
        if bad:
            out.append("Items some judge found with several (or no) fitting options: "
                       + "; ".join(f"\"{key[i][3]}\" ({key[i][1]}; "
                                   + ", ".join(f"{j}: {rt.get(i, '') or 'none'}" for j, rt in judges.items())
                                   + f" of {key[i][2].replace('|', '/')})" for i in bad) + ".")
            out.append("")
    skey = {k["id"]: k for k in json.loads((JUDGED / f"{name}-sentences.key.json").read_text(encoding="utf-8"))}
    sj = {f.name.split(".ratings-")[1][:-4]: {r[0]: r for r in _rows(f) if len(r) >= 3}
          for f in sorted(JUDGED.glob(f"{name}-sentences.ratings-*.tsv"))}
    if skey and sj:
        sources = sorted({k["source"] for k in skey.values()})
        table = ["| source | sentences | " + " | ".join(f"plausible ({j})" for j in sj) + " | plausible (majority) | "
                 + " | ".join(f"classroom-fit ({j})" for j in sj) + " | classroom-fit (majority) |",
                 "|---|---|" + "---|" * (2 * len(sj) + 2)]
        for src in sources + (["all"] if len(sources) > 1 else []):
            ids = [i for i, k in skey.items() if src in ("all", k["source"])]
            cells = []
            for col in (1, 2):
                per = [sum(_yes(r[i][col]) for i in ids) / len(ids) for r in sj.values()]
                maj = sum(2 * sum(_yes(r[i][col]) for r in sj.values()) > len(sj) for i in ids) / len(ids)
                cells.append(" | ".join(f"{100 * p:.1f}%" for p in per) + f" | **{100 * maj:.1f}%**")
            table.append(f"| {src} | {len(ids)} | {cells[0]} | {cells[1]} |")
        out += [f"Sheet sentences ({len(skey)}): plausible (goal >= 98%) and classroom-fit (goal >= 85%); majority "
                f"of {len(sj)} judges, ties = no", "", *table, ""]
        reasons: Counter = Counter()
        n_unfit = 0
        for r in sj.values():
            for i in skey:
                if i in r and not _yes(r[i][2]):
                    n_unfit += 1
                    text = (r[i][3] if len(r[i]) > 3 else "").lower()
                    hit = [k for k, words in REASONS.items() if any(re.search(r"\b" + w, text) for w in words)]
                    reasons.update(hit or ["(no reason or other)"])
        if n_unfit:
            out.append(f"Judges' reasons for \"not classroom-fit\" ({n_unfit} ratings): "
                       + "; ".join(f"{k} {v}" for k, v in reasons.most_common()) + ".")
            out.append("")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("record")
    r.add_argument("name")
    r.add_argument("--from", dest="src", default=str(ROOT.parent.parent / "judging"))
    s = sub.add_parser("score")
    s.add_argument("names", nargs="+")
    s.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    if args.cmd == "record":
        record(args.name, Path(args.src))
        return
    lines = ["Blind judging by judges outside the team (each kit built by `python benchmarks/bench_exercises.py --kit "
             "NAME ...`, RESULTS `exercise-kits`; ratings kept in benchmarks/judged/NAME-*.ratings-*.tsv); "
             "`python benchmarks/judged_kits.py score " + " ".join(args.names) + "`", ""]
    for n in args.names:
        lines += score(n)
    body = "\n".join(lines)
    print(body)
    if not args.no_write:
        from _results import write_section

        write_section("exercise-kits-judged", body)


if __name__ == "__main__":
    main()
