"""Revision mining (issue 14 items 1-2): markup stripping, sentence alignment, deletion-compression detection in
both directions, and `treegram mine-revisions` on Dask (one LocalCluster for the whole module) over synthetic
MediaWiki XML dumps written here (.xml, .gz, .bz2): resume, determinism for 1 and 2 workers, bad input."""

from __future__ import annotations

import bz2
import gzip
import json
from pathlib import Path
from xml.sax.saxutils import escape

import pytest

from treegram.cli.app import main
from treegram.errors import InputError
from treegram.plugins.revisions.align import deletion_compression, sentence_replacements
from treegram.plugins.revisions.mine import Settings, mine_chunk
from treegram.plugins.revisions.text import split_sentences, strip_plain, strip_wikitext, tokenize


# -- pure functions ------------------------------------------------------------------------------------------------
def test_strip_wikitext_keeps_prose_only():
    text = ("{{Infobox person|name=X}}\n'''Ada Lovelace''' was an English [[mathematician|mathematician]] and "
            "writer.<ref>{{cite web|url=http://x.org}}</ref> She worked on the [[Analytical Engine]].\n\n"
            "== Early life ==\n* a list item here\n[[File:Ada.jpg|thumb|A portrait]]\n"
            "Her father was [http://example.org Lord Byron].<!-- hidden -->\n[[Category:Mathematicians]]")
    paras = strip_wikitext(text)
    joined = " ".join(paras)
    assert "Ada Lovelace was an English mathematician and writer." in joined
    assert "She worked on the Analytical Engine." in joined
    assert "Her father was Lord Byron." in joined
    for junk in ("Infobox", "cite", "Early life", "list item", "portrait", "hidden", "Category", "http", "[[", "'''"):
        assert junk not in joined, junk


def test_strip_plain_rest_drops_headers_titles_code_lists():
    text = ("PEP: 9999\nTitle: A test\nAuthor: Someone\n\n\nAbstract\n========\n\nThis PEP proposes a **new** "
            "feature, see :pep:`8` and `the docs <https://docs.python.org>`_.\nIt is simple::\n\n    x = f(1)\n\n"
            "* a bullet item\n* another one\n\n.. note:: a directive\n\nThe end.\n")
    paras = strip_plain(text)
    assert paras[0] == "This PEP proposes a new feature, see PEP 8 and the docs. It is simple:"
    assert paras[1:] == ["The end."]


def test_split_sentences_protects_abbreviations():
    s = split_sentences("Dr. Smith met Mr. Jones, e.g. at noon. They talked. Then J. Doe left! Done?")
    assert s == ["Dr. Smith met Mr. Jones, e.g. at noon.", "They talked.", "Then J. Doe left!", "Done?"]


def test_sentence_alignment_finds_replacements_only():
    old = ["A one.", "B two.", "C three.", "D four.", "E five."]
    new = ["A one.", "B 2.", "C three.", "X inserted.", "D four.", "E 5."]
    subs, fallback = sentence_replacements(old, new)
    assert not fallback
    assert subs == [(1, 1), (4, 5)]
    # deletions and insertions alone are no replacements
    assert sentence_replacements(old, old[:2] + old[3:])[0] == []
    # a huge middle falls back to difflib and still pairs equal-length replace blocks
    subs, fallback = sentence_replacements(old, ["A one.", "B 2.", "C three.", "D 4.", "E five."], max_cells=1)
    assert fallback and subs == [(1, 1), (3, 3)]


def test_deletion_compression_both_ways():
    long = tokenize("However, the committee approved the new budget last week.")
    short = tokenize("The committee approved the budget.")
    assert deletion_compression(long, short) == [0, 1, 6, 8, 9]
    assert deletion_compression(short, long) is None  # longer "short" side
    assert deletion_compression(long, tokenize("The committee rejected the budget.")) is None  # a word changed
    assert deletion_compression(long, long) is None


def _chunk(texts, model="wikitext"):
    return {"index": 0, "segments": [{"page_id": 7, "title": "T", "model": model, "context": False,
                                      "revisions": [(100 + i, t) for i, t in enumerate(texts)]}]}


def test_mine_chunk_records_direction_and_filters():
    base = "Intro sentence stays the same here. {} Final sentence also stays the same."
    long_s = "The committee approved the new budget after a long debate last week."
    short_s = "The committee approved the budget last week."
    mid_s = "The committee approved the budget after a debate last week."
    texts = [base.format(long_s), base.format(short_s), base.format(mid_s), base.format(long_s),
             base.format(short_s),  # the first edit again: a duplicate pair
             base.format("The committee approved the the budget last week."),  # typo-level, both ways
             base.format(short_s),
             base.format("The committee approved the budget at www.example.org last week.")]
    res = mine_chunk(_chunk(texts), Settings())
    rows = res["pairs"]
    assert [(r[2], r[3], r[4]) for r in rows] == [(100, 101, "compression"), (101, 102, "expansion"),
                                                   (102, 103, "expansion")]
    assert rows[0][7] == long_s and rows[0][8] == short_s and rows[1][7] == mid_s
    assert rows[0][5:7] == [12, 7]
    st = res["stats"]
    assert st["revisions"] == 8 and st["comparisons"] == 7
    # the second "the the" edit is the same pair again: counted once as near-identical, then as a duplicate
    assert st["filtered:duplicate"] == 2 and st["filtered:near-identical"] == 1 and st["filtered:url"] == 1


def test_parser_filter_scores_both_sides(demo_model_files):
    """The paper's filter: both sides' negative log-likelihood under a parsing model below a threshold."""
    texts = ["Intro stays. The old man saw the big dog in the park today. End stays.",
             "Intro stays. The man saw the dog in the park today. End stays."]
    model = str(demo_model_files["pcfg"])
    kept = mine_chunk(_chunk(texts), Settings(parser=model, max_nll=1e9))
    assert len(kept["pairs"]) == 1
    nll_long, nll_short = kept["pairs"][0][9:]
    assert 0 < nll_short < nll_long < 1e9  # two more words cost probability
    cut = mine_chunk(_chunk(texts), Settings(parser=model, max_nll=nll_long - 0.01))
    assert cut["pairs"] == [] and cut["stats"]["filtered:parser"] == 1


# -- synthetic dumps -----------------------------------------------------------------------------------------------
PAGE_TEXTS = [
    # page 1: wikitext, an adjective dropped, then a clause added back
    ["'''Foo''' is a town in [[Bar]]. The old market square of the town is very famous for its fountain.",
     "'''Foo''' is a town in [[Bar]]. The market square of the town is very famous for its fountain.",
     "'''Foo''' is a town in [[Bar]]. The market square of the town is very famous for its fountain and its "
     "clock tower.", "{{stub}}\n'''Foo''' is a town in [[Bar]]. The market square of the town is famous for its "
     "fountain and its clock tower."],
    # page 2
    ["The river flows slowly through the green valley towards the sea. It is long.",
     "The river flows through the valley towards the sea. It is long.",
     "The river flows through the valley towards the sea. It is very long indeed."],
]


def write_dump(path: Path, pages=PAGE_TEXTS, copies: int = 3, first_id: int = 0) -> Path:
    out = ['<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" version="0.10" xml:lang="en">',
           "<siteinfo><sitename>Test</sitename><dbname>test</dbname><base>http://x/</base>"
           "<generator>MediaWiki</generator><case>first-letter</case><namespaces>"
           '<namespace key="0" case="first-letter" /></namespaces></siteinfo>']
    rid = first_id + 1
    for k in range(copies):
        for p, texts in enumerate(pages):
            pid = first_id + k * 10 + p + 1
            out.append(f"<page><title>Page {pid}</title><ns>0</ns><id>{pid}</id>")
            for t in texts:
                out.append(f"<revision><id>{rid}</id><timestamp>2020-01-01T00:00:00Z</timestamp>"
                           f"<contributor><username>u</username><id>1</id></contributor>"
                           f"<model>wikitext</model><format>text/x-wiki</format>"
                           f'<text xml:space="preserve">{escape(t.replace("town", f"town{first_id + k}"))}</text>'
                           f"<sha1>x</sha1></revision>")
                rid += 1
            out.append("</page>")
    out.append("</mediawiki>\n")
    data = "\n".join(out).encode()
    if path.suffix == ".gz":
        path.write_bytes(gzip.compress(data))
    elif path.suffix == ".bz2":
        path.write_bytes(bz2.compress(data))
    else:
        path.write_bytes(data)
    return path


def _mine(dumps, out, client, **kw):
    from treegram.plugins.revisions.run import mine

    return mine(dumps, out, settings=Settings(), client=client, chunk_revisions=kw.pop("chunk_revisions", 4), **kw)


def test_mine_gz_bz2_resume_and_worker_count(cluster, tmp_path):
    c, client = cluster
    gz = write_dump(tmp_path / "d.xml.gz")
    bzp = write_dump(tmp_path / "d.xml.bz2", first_id=100)
    out2 = tmp_path / "two.tsv"
    s2 = _mine([gz, bzp], out2, client, keep_chunks=True)
    assert s2["workers"] == 2 and s2["revisions"] == 2 * 3 * 7 and s2["pages"] == 12
    rows = [ln.split("\t") for ln in out2.read_text().splitlines()]
    assert rows[0][:5] == ["page_id", "page", "from_rev", "to_rev", "direction"]
    body = rows[1:]
    # per page copy: 3 pairs on page 1, 1 on page 2 (its "It is long." edit is below --min-words)
    assert s2["pairs"] == len(body) == 2 * 3 * 4 and s2["compressions"] == 18 and s2["expansions"] == 6
    assert s2["filtered"] == {"length": 6}
    assert {r[4] for r in body} == {"compression", "expansion"}
    assert ["1", "Page 1", "1", "2", "compression", "13", "12",
            "The old market square of the town0 is very famous for its fountain.",
            "The market square of the town0 is very famous for its fountain."] == body[0]

    # resume: chunks 0 and 2 "finished" before a kill; chunk 0 edited since (valid JSON, wrong content): its
    # checksum no longer matches, so it is mined again, never reused (issue 27)
    cdir = tmp_path / "two.tsv.chunks"
    chunk_files = sorted(cdir.glob("0*.json"))
    assert len(chunk_files) == s2["chunks"] > 3
    for f in chunk_files:
        if f.name not in ("000000.json", "000002.json"):
            f.unlink()
    res0 = json.loads((cdir / "000000.json").read_text())
    res0["pairs"][0][8] = "SENTINEL short side."
    (cdir / "000000.json").write_text(json.dumps(res0))
    out2.unlink()
    again = _mine([gz, bzp], out2, client)
    assert again["chunks_resumed"] == 1 and again["pairs"] == s2["pairs"]
    assert len(again["chunks_redone"]) == 1 and again["chunks_redone"][0].startswith("000000.json (its content")
    text = out2.read_text()
    assert "SENTINEL short side." not in text and text == "\n".join("\t".join(r) for r in rows) + "\n"
    assert not cdir.exists()
    # settings changed while finished chunks exist: refused, nothing lost
    (tmp_path / "x.tsv.chunks").mkdir()
    _mine([gz], tmp_path / "x.tsv", client, keep_chunks=True, chunk_revisions=5)
    with pytest.raises(InputError, match="other dumps or settings"):
        _mine([gz], tmp_path / "x.tsv", client, chunk_revisions=6)

    # one worker: the same file, byte for byte
    c.scale(1)
    client.wait_for_workers(1)
    import time

    for _ in range(100):
        if len(client.scheduler_info(n_workers=-1)["workers"]) == 1:
            break
        time.sleep(0.1)
    out1 = tmp_path / "one.tsv"
    s1 = _mine([gz, bzp], out1, client)
    assert s1["workers"] == 1
    ref = out2.read_text().replace("SENTINEL short side.", "The market square of the town0 is very famous for "
                                                           "its fountain.")
    assert out1.read_text() == ref
    c.scale(2)


def test_bad_dumps_one_clear_error(cluster, tmp_path, capsys):
    c, client = cluster
    good = write_dump(tmp_path / "g.xml")
    (tmp_path / "n.xml").write_text("just some words\n")
    cases = [(tmp_path / "missing.xml.bz2", "dump file not found"), (tmp_path / "n.xml", "not a MediaWiki XML dump")]
    for path, msg in cases:
        assert main(["-q", "mine-revisions", str(path), "--out", str(tmp_path / "o.tsv"), "--workers", "1"]) == 2
        err = capsys.readouterr().err
        assert msg in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    # a truncated bz2 dump (smaller than one bz2 block): refused before any work
    data = bz2.compress(good.read_bytes())
    (tmp_path / "t.xml.bz2").write_bytes(data[: len(data) * 2 // 3])
    assert main(["-q", "mine-revisions", str(tmp_path / "t.xml.bz2"), "--out", str(tmp_path / "t.tsv")]) == 2
    err = capsys.readouterr().err
    assert "cannot decompress" in err and len(err.strip().splitlines()) == 1
    # truncated in the middle of the stream (gzip decompresses as it goes): one clear error, no output file
    big = write_dump(tmp_path / "big.xml", copies=40)
    data = gzip.compress(big.read_bytes())
    (tmp_path / "t.xml.gz").write_bytes(data[: len(data) // 2])
    from treegram.plugins.revisions.dumps import check_dump

    with pytest.raises(InputError, match="truncated or corrupt"):
        _mine([check_dump(tmp_path / "t.xml.gz")], tmp_path / "t.tsv", client)
    assert not (tmp_path / "t.tsv").exists()
    # the CLI on a running cluster (--scheduler), JSON summary
    addr = c.scheduler_address
    assert main(["-q", "mine-revisions", str(good), "--out", str(tmp_path / "g.tsv"), "--scheduler", addr,
                 "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["revisions"] == 21 and summary["pairs"] == 12 and summary["seconds"] > 0


@pytest.mark.shared
def test_real_pep_history_few_pages(shared_data):
    import io
    import itertools

    import mwxml

    path = shared_data / "revisions" / "python-peps-history.xml.bz2"
    with bz2.open(path, "rb") as raw:
        dump = mwxml.Dump.from_file(io.TextIOWrapper(raw, encoding="utf-8"))
        segs = [{"page_id": p.id, "title": p.title, "model": None, "context": False,
                 "revisions": [(r.id, r.text or "") for r in p]} for p in itertools.islice(dump, 3)]
    res = mine_chunk({"index": 0, "segments": segs}, Settings())
    assert res["stats"]["revisions"] > 500 and len(res["pairs"]) >= 10
    for row in res["pairs"]:
        long, short = row[7], row[8]
        assert deletion_compression(tokenize(long), tokenize(short)) is not None
        assert row[4] in ("compression", "expansion") and "http" not in long and "``" not in long
