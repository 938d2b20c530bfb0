"""`treegram evalb --per-sentence` (was an AttributeError) and the Google compression-pairs reader."""

from __future__ import annotations

import gzip
import json

import pytest

from treegram.cli.app import main
from treegram.errors import InputError

GOLD = "(S (NP (DT the) (NN dog)) (VP (VBZ barks)))\n(S (NP (NNP john)) (VP (VBZ runs)))\n"
TEST = "(S (NP (DT the) (NN dog)) (VP (VBZ barks)))\n(S (NP (NNP john) (VBZ runs)))\n"


def test_evalb_per_sentence_table_and_json(tmp_path, capsys):
    gold, test = tmp_path / "gold.mrg", tmp_path / "test.mrg"
    gold.write_text(GOLD)
    test.write_text(TEST)
    assert main(["evalb", str(gold), str(test), "--per-sentence"]) == 0
    out = capsys.readouterr().out
    assert "per sentence" in out and "100.00" in out and "40.00" in out  # sentence 2: P 1/2, R 1/3
    assert main(["evalb", str(gold), str(test), "--per-sentence", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    per = data["per_sentence"]
    assert [s["matched"] for s in per] == [3, 1] and [s["gold_brackets"] for s in per] == [3, 3]
    assert per[1]["f1"] == pytest.approx(40.0) and per[0]["exact"] and not per[1]["exact"]
    assert main(["evalb", str(gold), str(test), "--json"]) == 0
    assert "per_sentence" not in json.loads(capsys.readouterr().out)


def _write_pairs(path, rows, header="tokens\tkeep_labels\tpos\tdeprel"):
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        fh.write(header + "\n" + "".join("\t".join(r) + "\n" for r in rows))
    return path


ROWS = [("first warning weather , ##", "1 1 1 0 1", "RB VBG NN , CD", "advmod amod ROOT p dep"),
        ("seattle who loves lucy ?", "0 1 1 1 1", "NNP WP VBZ NNP .", "advmod nsubj ROOT dobj p"),
        ("it cost $ #,###.## in #### .", "1 1 1 1 0 0 1", "PRP VBD $ CD IN CD .", "nsubj ROOT dobj num prep pobj p")]


def test_google_pairs_reader_sides_digits_and_errors(tmp_path, capsys):
    from treegram.corpora.google import main as extract
    from treegram.corpora.google import read_google_pairs, restore_hashes, sentences, zero_digits
    from treegram.plugin_manager import corpus_readers

    path = _write_pairs(tmp_path / "train.tsv.gz", ROWS)
    pairs = list(read_google_pairs(path))
    assert [p.line for p in pairs] == [2, 3, 4]
    assert pairs[1].short == ["who", "loves", "lucy", "?"] and pairs[1].long[0] == "seattle"
    assert list(sentences(pairs, "short")) == ["first warning weather ##", "who loves lucy ?", "it cost $ #,###.## ."]
    assert list(sentences(pairs[:1], "both", "zero")) == ["first warning weather , 00", "first warning weather 00"]
    assert [p.line for p in read_google_pairs(path, every=2)] == [2, 4]
    assert zero_digits("#,###.##") == "0,000.00" and zero_digits("#-year-old") == "#-year-old"
    assert all(restore_hashes(zero_digits(w)) == w for w in "## #,###.## ##% , the # <unk>".split())
    # the registered reader
    assert corpus_readers()["google-pairs"].obj.read(path)[2].pos[3] == "CD"
    # the extraction command a user runs before `treegram parse`
    assert extract([str(path), "--side", "long", "--out", str(tmp_path / "long.txt")]) == 0
    assert (tmp_path / "long.txt").read_text().splitlines()[1] == "seattle who loves lucy ?"
    # bad files: one clear error with the line
    bad = _write_pairs(tmp_path / "bad.tsv.gz", [("a b", "1", "DT NN", "det ROOT")])
    with pytest.raises(InputError, match=r"bad.tsv.gz:2: columns of unequal length"):
        list(read_google_pairs(bad))
    with pytest.raises(InputError, match="not a Google pairs TSV"):
        list(read_google_pairs(_write_pairs(tmp_path / "h.tsv.gz", ROWS, header="words\tlabels")))
    assert extract([str(tmp_path / "missing.tsv.gz")]) == 2
    assert "file not found" in capsys.readouterr().err


def test_google_pairs_real_file(shared_data):
    from treegram.corpora.google import read_google_pairs

    path = shared_data / "compression" / "google" / "train-180k-lossy" / "val.tsv.gz"
    pairs = list(read_google_pairs(path, every=1000))
    assert len(pairs) == 20  # 20,000 validation pairs
    assert all(p.short and len(p.short) < len(p.long) for p in pairs)
    assert not any(ch.isdigit() for p in pairs for w in p.long for ch in w)  # digits are # in this copy
