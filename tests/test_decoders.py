"""The decoder hooks (treegram.charts.decoders) against exhaustive enumeration on small grammars whose symbols
are split into categories (as a TSG's Goodman transform splits labels): MPD = the best derivation, sampled MPP
converges to the exact most probable parse, max-rule posteriors and trees equal brute force; plus the CLI."""

from __future__ import annotations

import itertools
import json
import math
from collections import defaultdict

import numpy as np
import pytest

from treegram.charts import inside, outside
from treegram.charts.decoders import (
    ChartInput,
    ChartModel,
    decode,
    max_rule_tree,
    mpp_votes,
    rule_posteriors,
    resolve_decoder,
    splice,
)
from treegram.cli.app import main
from treegram.errors import InputError
from treegram.grammar import WeightedCFG
from treegram.plugin_manager import decoders
from treegram.trees.tree import Tree

CATS = ["TOP", "A", "B", "C"]
WORDS = ["x", "y"]


def random_grammar(seed: int) -> WeightedCFG:
    """Symbols A_0, A_1, B_0, ... (category = the part before '_'); every symbol derives both words; unary rules
    only from the `_1` symbols to `_0` symbols of other categories (no chains of two rules)."""
    rng = np.random.default_rng(seed)
    syms = [f"{c}_{k}" for c in CATS[1:] for k in range(2)]
    binary, unary, lexical = [], [], []
    for p in syms + ["TOP_0"]:
        for left, right in itertools.product(syms, syms):
            if rng.random() < 0.25:
                binary.append((p, left, right, math.log(rng.uniform(0.05, 1))))
    for p in syms:
        if p.endswith("_1"):
            for c in syms:
                if c.endswith("_0") and c[0] != p[0] and rng.random() < 0.5:
                    unary.append((p, c, math.log(rng.uniform(0.05, 1))))
        for w in WORDS:
            if rng.random() < 0.7:
                lexical.append((p, w, math.log(rng.uniform(0.05, 1))))
    return WeightedCFG.from_rules("TOP_0", binary=binary, unary=unary, lexical=lexical,
                                  category=lambda s: s.split("_")[0])


class ToyModel:
    """A ChartModel over a raw CFG: the output tree is the derivation's category tree with unary nodes over a
    node of the same category merged (what the decoders' category trees look like)."""

    formalism = "toy"

    def __init__(self, cfg):
        self.cfg = cfg

    def chart_input(self, tokens):
        return ChartInput(self.cfg, self.cfg.lexical_input(tokens), list(tokens))

    def derivation_tree(self, derivation, inp):
        cat = self.cfg.category
        names = self.cfg.categories.symbol

        view = type("V", (), {})()
        view.nonterminals = type("N", (), {"symbol": staticmethod(lambda i: names(int(cat[i])))})()
        return merge_same(derivation.to_tree(view, inp.words))

    def category_tree(self, tree, inp):
        return tree


def merge_same(t):
    if not isinstance(t, Tree):
        return t
    kids = tuple(merge_same(c) for c in t.children)
    if len(kids) == 1 and isinstance(kids[0], Tree) and kids[0].label == t.label:
        return kids[0]
    return Tree(t.label, kids)


# -- brute force -----------------------------------------------------------------------------------------------

def derivations(cfg: WeightedCFG, words):
    """Every derivation of the start symbol: (log P, tree over *symbols*, with unary nodes)."""
    nts, voc = cfg.nonterminals, cfg.words
    memo = {}

    def go(x, i, j):
        key = (x, i, j)
        if key in memo:
            return memo[key]
        out = []
        if j == i + 1:
            for r in range(cfg.num_lexical):
                if cfg.lex_parent[r] == x and voc.symbol(int(cfg.lex_word[r])) == words[i]:
                    out.append((cfg.lex_logp[r], Tree(nts.symbol(x), (words[i],))))
        for r in range(len(cfg.un_logp)):
            if cfg.un_parent[r] == x:
                for lp, t in go(int(cfg.un_child[r]), i, j):
                    out.append((lp + cfg.un_logp[r], Tree(nts.symbol(x), (t,))))
        for r in range(len(cfg.bin_logp)):
            if cfg.bin_parent[r] == x:
                for k in range(i + 1, j):
                    for (l1, t1), (l2, t2) in itertools.product(go(int(cfg.bin_left[r]), i, k),
                                                                go(int(cfg.bin_right[r]), k, j)):
                        out.append((l1 + l2 + cfg.bin_logp[r], Tree(nts.symbol(x), (t1, t2))))
        memo[key] = out
        return out

    return go(cfg.start, 0, len(words))


def cat_tree(t):
    return merge_same(_relabel(t))


def _relabel(t):
    if not isinstance(t, Tree):
        return t
    return Tree(t.label.split("_")[0], tuple(_relabel(c) for c in t.children))


def items(t, i=0):
    """Anchored items of a category tree (unary nodes over a same-category node already merged):
    ('u', i, j, top, bottom), ('b', i, k, j, A, B, C), ('l', i, A); returns (items, end)."""
    top = t.label
    node = t
    while len(node.children) == 1 and isinstance(node.children[0], Tree):
        node = node.children[0]
    out = []
    if isinstance(node.children[0], str):
        out.append(("l", i, node.label))
        j = i + 1
    else:
        left, right = node.children
        li, k = items(left, i)
        ri, j = items(right, k)
        out += li + ri
        out.append(("b", i, k, j, node.label, left.label, right.label))
    out.append(("u", i, j, top, node.label))
    return out, j


def brute_posteriors(cfg, words):
    ds = derivations(cfg, words)
    logz = np.logaddexp.reduce([lp for lp, _ in ds])
    post = defaultdict(float)
    trees = defaultdict(float)
    for lp, t in ds:
        p = math.exp(lp - logz)
        ct = cat_tree(t)
        trees[ct.to_bracket()] += p
        for it in items(ct)[0]:
            post[it] += p
    return ds, logz, post, trees


def decoder_items(cfg, words):
    chart = inside(cfg, cfg.lexical_input(words))
    rp = rule_posteriors(chart, outside(chart, counts=False))
    name = cfg.categories.symbol
    n = len(words)
    got = {}
    B, U, L = rp.binary, rp.unary, rp.lexical
    for c, k, a, b, cc, p in zip(B["cell"], B["split"], B["a"], B["b"], B["c"], B["p"]):
        got[("b", int(c) // (n + 1), int(k), int(c) % (n + 1), name(int(a)), name(int(b)), name(int(cc)))] = p
    for c, t, b, p in zip(U["cell"], U["t"], U["b"], U["p"]):
        got[("u", int(c) // (n + 1), int(c) % (n + 1), name(int(t)), name(int(b)))] = p
    for c, a, p in zip(L["cell"], L["a"], L["p"]):
        got[("l", int(c) // (n + 1), name(int(a)))] = p
    return chart, got


@pytest.mark.parametrize("seed,sentence", [(1, "x y x"), (2, "y x x y"), (3, "x y x"), (7, "y x x y"),
                                           (12, "x y x")])
def test_rule_posteriors_and_maxrule_equal_brute_force(seed, sentence):
    cfg = random_grammar(seed)
    for words in [sentence.split()]:
        ds, logz, post, trees = brute_posteriors(cfg, words)
        assert ds
        chart, got = decoder_items(cfg, words)
        assert chart.log_z == pytest.approx(logz)
        assert set(got) == {k for k, v in post.items() if v > 1e-12}
        for k, v in post.items():
            assert got[k] == pytest.approx(v, rel=1e-9, abs=1e-12)
        # every tree built from items with positive posterior (exhaustive, not a DP), scored both ways
        best = {"prod": (-math.inf, None), "sum": (-math.inf, None)}
        for cand in all_trees(post, len(words)):
            its = items(cand)[0]
            s_prod = sum(math.log(post[i]) for i in its)
            s_sum = sum(post[i] for i in its)
            if s_prod > best["prod"][0]:
                best["prod"] = (s_prod, cand)
            if s_sum > best["sum"][0]:
                best["sum"] = (s_sum, cand)
        for key, use_sum in (("prod", False), ("sum", True)):
            tree, score = max_rule_tree(chart, use_sum=use_sum, words=words)
            assert score == pytest.approx(best[key][0])
            its = items(tree)[0]
            mine = sum(post[i] for i in its) if use_sum else sum(math.log(post[i]) for i in its)
            assert mine == pytest.approx(best[key][0])


def all_trees(post, n):
    """Every category tree whose items all have positive posterior (exhaustive enumeration)."""
    memo = {}

    def tops(i, j, t):
        key = ("t", i, j, t)
        if key not in memo:
            out = []
            for it in post:
                if it[0] == "u" and it[1:4] == (i, j, t):
                    for bt in bottoms(i, j, it[4]):
                        out.append(bt if it[4] == t else Tree(t, (bt,)))
            memo[key] = out
        return memo[key]

    def bottoms(i, j, a):
        key = ("b", i, j, a)
        if key not in memo:
            out = []
            if j == i + 1 and ("l", i, a) in post:
                out.append(Tree(a, (f"w{i}",)))
            for it in post:
                if it[0] == "b" and it[1] == i and it[3] == j and it[4] == a:
                    k = it[2]
                    for lt, rt in itertools.product(tops(i, k, it[5]), tops(k, j, it[6])):
                        out.append(Tree(a, (lt, rt)))
            memo[key] = out
        return memo[key]

    return tops(0, n, "TOP")


# (seed, sentence) with a clear most probable parse; in (12, x y x) it is not the tree of the best derivation
MPP_CASES = [(7, "y x x y"), (7, "x y x"), (12, "x y x"), (17, "x y x")]


@pytest.mark.parametrize("seed,sentence", MPP_CASES)
def test_mpd_and_sampled_mpp_match_enumeration(seed, sentence):
    cfg = random_grammar(seed)
    model = ToyModel(cfg)
    assert isinstance(model, ChartModel)
    words = sentence.split()
    ds, logz, _post, trees = brute_posteriors(cfg, words)
    best_lp, best_d = max(ds, key=lambda d: d[0])
    mpd = decode(model, words, "mpd")
    assert mpd.to_bracket() == cat_tree(best_d).to_bracket()
    exact = sorted(trees.items(), key=lambda kv: -kv[1])
    votes, _ = mpp_votes(model, words, 3000, seed=seed)
    total = sum(votes.values())
    assert set(votes) <= set(trees)
    for br, p in exact:  # sampled frequencies within 5 standard errors of the exact tree probabilities
        assert abs(votes.get(br, 0) / total - p) <= 5 * math.sqrt((p + 1 / total) / total)
    assert exact[0][1] - exact[1][1] > 0.02
    assert votes.most_common(1)[0][0] == exact[0][0]
    assert decode(model, words, "mpp", samples=3000).to_bracket() == exact[0][0]
    if (seed, sentence) == (12, "x y x"):
        assert exact[0][0] != mpd.to_bracket()


def test_splice():
    t = Tree("S", (Tree("~flat", (Tree("A", ("a",)), Tree("B", ("b",)))), Tree("C", ("c",))))
    assert splice(t, {"~flat"}).to_bracket() == "(S (A a) (B b) (C c))"


# -- the CLI ---------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def pcfg_model(demo_model_files):
    return demo_model_files["pcfg"]


def test_cli_parse_decoders(pcfg_model, tmp_path, capsys):
    sentences = tmp_path / "in.txt"
    sentences.write_text("The dog slept in the garden .\n", encoding="utf-8")
    outs = {}
    for dec in ("mpd", "mpp", "maxrule", "maxrule-sum"):
        extra = ["--samples", "20"] if dec == "mpp" else []
        capsys.readouterr()
        assert main(["-q", "parse", "--model", str(pcfg_model), "--input", str(sentences), "--decoder", dec,
                     "--json", *extra]) == 0
        res = json.loads(capsys.readouterr().out)
        outs[dec] = res["sentences"][0]["tree"]
        assert res["counts"]["ok"] == 1
    assert main(["-q", "parse", "--model", str(pcfg_model), "--input", str(sentences), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["sentences"][0]["tree"] == outs["mpd"]  # default unchanged
    assert main(["-q", "parse", "--model", str(pcfg_model), "--input", str(sentences), "--decoder", "nope"]) != 0
    assert "unknown decoder" in capsys.readouterr().err
    assert main(["-q", "parse", "--model", str(pcfg_model), "--input", str(sentences), "--samples", "5"]) != 0
    assert "--samples" in capsys.readouterr().err


def test_decoders_registered_and_listed(capsys):
    assert {"mpd", "mpp", "maxrule", "maxrule-sum"} <= set(decoders())
    assert main(["plugins", "--json"]) == 0
    text = capsys.readouterr().out
    assert "decoder:maxrule" in text and "decoder:mpp" in text


def test_decoder_errors():
    cfg = random_grammar(1)
    with pytest.raises(InputError):
        decode(ToyModel(cfg), [], "mpd")
    with pytest.raises(InputError):
        decode(object(), ["x"], "mpd")


@pytest.mark.parametrize("formalism", ["tsg", "tig"])
def test_every_decoder_on_tree_grammars(formalism, demo_model_files):
    """TSG and TIG models get every core decoder; `model.parse` is the model's default decoder through the hook."""
    from treegram.formalism import load_model

    model = load_model(demo_model_files[formalism])
    assert isinstance(model, ChartModel)
    for sentence in ("The hungry dog slept in the garden .", "Zorblax quibbled ."):
        words = sentence.split()
        assert decode(model, words, resolve_decoder(model)[0]).to_bracket() == model.parse(words).to_bracket()
        for name in ("mpp", "maxrule", "maxrule-sum"):
            tree = decode(model, words, name, samples=30)
            assert tree.leaves() == words
            assert not any(n.label.startswith("@") or "^" in n.label or n.label.startswith("~")
                           for n in tree.subtrees())


def test_every_decoder_on_ostag(demo_file, tmp_path):
    """OSTAG parses through a per-sentence reduction (ChartInput.context); the decoders work on it too."""
    from treegram.formalism import load_model

    tb = demo_file
    out = tmp_path / "demo.ostag"
    assert main(["-q", "train", "ostag", "--treebank", str(tb), "--em-iterations", "1", "--out", str(out)]) == 0
    model = load_model(out)
    assert isinstance(model, ChartModel)
    words = "The hungry dog slept in the garden .".split()
    assert decode(model, words, resolve_decoder(model)[0]).to_bracket() == model.parse(words).to_bracket()
    for name in ("mpp", "maxrule", "maxrule-sum"):
        tree = decode(model, words, name, samples=20)
        assert tree.leaves() == words and not any(n.label.startswith("<") for n in tree.subtrees())


def test_parse_uses_the_models_default_decoder(demo_model_files):
    """`treegram parse` without --decoder decodes with the decoder saved in the model; --decoder overrides it."""
    from treegram.charts.decoders import model_decoder, parse_default
    from treegram.formalism import load_model

    model = load_model(demo_model_files["tsg"])
    words = "The hungry dog slept in the garden .".split()
    model.default_decoder = None
    own = model.parse(words).to_bracket()
    assert model_decoder(model) is None and parse_default(model)(words).to_bracket() == own
    model.default_decoder = "maxrule"
    assert model_decoder(model) == "maxrule"
    assert parse_default(model)(words).to_bracket() == decode(model, words, "maxrule").to_bracket()
    assert parse_default(model, "mpd")(words).to_bracket() == own
    with pytest.raises(InputError):
        parse_default(model, None, 5)  # --samples with a default decoder that draws none
    assert model_decoder(object()) is None


def test_outside_pass_on_a_tig_chart_equals_the_closure_sums(demo_model_files):
    """On a TIG transform (large unary reach sets, a chart with dead entries) the outside pass, which sums
    outside_mid only for the symbols anything reads it for, still gives every pre entry
    out_pre(B) = logsumexp over the cell's post entries A of out_post(A) + closure(A, B), and lists every symbol
    with an inside and an outside through the cell's closure, at that posterior, as a mid row."""
    from treegram.formalism import load_model

    model = load_model(demo_model_files["tig"])
    cfg = model.cfg
    cl = cfg.index.closure
    logw = {(int(a), int(b)): float(w) for a, b, w in zip(cl.parent, cl.child, cl.inside_logw)}
    parents_of = defaultdict(list)
    for a, b in logw:
        parents_of[b].append(a)
    dead = 0
    for sentence in ("The hungry dog slept in the garden .", "the dog saw a cat with the telescope ."):
        inp = model.chart_input(sentence.split())
        chart = inside(cfg, inp.lex, prune=inp.prune)
        out = outside(chart, counts=False)
        n = chart.n
        mids = {(int(c), int(s)): float(v) for c, s, v in zip(out.mid_cell, out.mid_sym, out.mid_logpost)}
        expected_mids = {}
        for cell in range((n + 1) * (n + 1)):
            q0, q1 = int(chart.post_start[cell]), int(chart.post_start[cell] + chart.post_len[cell])
            if q1 == q0:
                continue
            o_post = {int(chart.post_sym[q]): float(out.out_post[q]) for q in range(q0, q1)}
            if all(v == -np.inf for v in o_post.values()):
                continue
            p0, p1 = int(chart.pre_start[cell]), int(chart.pre_start[cell] + chart.pre_len[cell])
            pre = {int(chart.pre_sym[p]): float(chart.pre_score[p]) for p in range(p0, p1)}

            def om(x):
                return np.logaddexp.reduce([o_post[a] + logw[(a, x)] for a in parents_of[x] if a in o_post]
                                           + [-np.inf])

            for p in range(p0, p1):
                want = om(int(chart.pre_sym[p]))
                assert out.out_pre[p] == pytest.approx(want, rel=1e-9, abs=1e-9) or out.out_pre[p] == want == -np.inf
                dead += out.out_pre[p] == -np.inf
            im = defaultdict(list)
            for b, s in pre.items():
                for a in parents_of[b]:
                    im[a].append(s + logw[(a, b)])
            for x, terms in im.items():
                lp = om(x) + np.logaddexp.reduce(terms) - chart.log_z
                if lp > -np.inf:
                    expected_mids[(cell, x)] = lp
        assert set(mids) == set(expected_mids)
        for k, v in expected_mids.items():
            assert mids[k] == pytest.approx(v, rel=1e-9, abs=1e-9)
    assert dead > 0  # the chart has entries no complete parse uses (what the pass skips work for)
