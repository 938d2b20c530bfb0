"""Issue 16: `treegram train ostag --from-tsg M --tsg-weights base` puts the TSG's own base route (`c -> c~base` and
the base PCFG rules, read by `treegram.elementary.base_route.read_base_route` from the TSG model's public `cfg`)
into OSTAG's parsing CFG.  Without auxiliary trees that grammar *is* the TSG's: same inside score, same parse."""

from __future__ import annotations

import numpy as np
import pytest

from treegram.charts import inside
from treegram.charts.decoders import parse_default
from treegram.cli.app import main
from treegram.formalism import load_model


@pytest.fixture(scope="module")
def files(demo_file, tmp_path_factory):
    d = tmp_path_factory.mktemp("ostag_base_route")
    tb = demo_file
    tsg = d / "demo.tsg"
    assert main(["-q", "train", "tsg", "--treebank", str(tb), "--seed", "4", "--iterations", "5", "--out",
                 str(tsg)]) == 0
    out = {"tb": tb, "tsg": tsg}
    for name, extra in (("control", ["--model", "tsg", "--no-expand"]), ("ostag", []),
                        ("tiny", ["--no-expand", "--adj-init", "1e-12"])):
        out[name] = d / f"{name}.ostag"
        assert main(["-q", "train", "ostag", "--from-tsg", str(tsg), "--treebank", str(tb), "--seed", "4",
                     "--tsg-weights", "base", "--out", str(out[name]), *extra]) == 0
    return out


def _log_z(model, words):
    inp = model.chart_input(words)
    return inside(inp.cfg, inp.lex, prune=inp.prune).log_z


def _sentences():
    from treegram.corpora.demo import demo_trees

    out = [t.leaves() for t in demo_trees()]
    return out + [w[:1] + ["zorblax"] + w[2:] for w in out[:6]]  # a word no grammar has seen, for the noun


def test_base_route_is_read_off_the_tsg_grammar(files):
    from treegram.elementary.base_route import CHILD_BASE, read_base_route

    tsg = load_model(files["tsg"])
    b = read_base_route(tsg.cfg)
    nts = tsg.cfg.nonterminals
    # every hop is the TSG's `c -> c~base` rule, with its weight
    hops = {(int(p), int(c)): w for p, c, w in zip(tsg.cfg.un_parent, tsg.cfg.un_child, tsg.cfg.un_logp)}
    assert b.hop_label.size == len(b.labels)
    for i, lp in zip(b.hop_label.tolist(), b.hop_logp.tolist()):
        c = b.labels[i]
        assert hops[(nts.get(c), nts.get(c + "~base"))] == lp
    # binary base rules: both stop/expand variants of a child occur, and the four variants of one PCFG rule sum
    # to its PCFG probability (beta + (1 - beta) at each child)
    assert np.any(b.bin_lkind == CHILD_BASE) and np.any(b.bin_lkind != CHILD_BASE)
    sums: dict = {}
    for p, l, r, w in zip(b.bin_parent.tolist(), b.bin_left.tolist(), b.bin_right.tolist(), b.bin_logp.tolist()):
        sums[(p, l, r)] = sums.get((p, l, r), 0.0) + np.exp(w)
    per_parent: dict = {}
    for (p, _l, _r), s in sums.items():
        per_parent[p] = per_parent.get(p, 0.0) + s
    for p, lx, w in zip(b.lex_parent.tolist(), b.lex_word.tolist(), b.lex_logp.tolist()):
        per_parent[p] = per_parent.get(p, 0.0) + np.exp(w)
    for p, c, w in zip(b.un_parent.tolist(), b.un_child.tolist(), b.un_logp.tolist()):
        per_parent[p] = per_parent.get(p, 0.0) + np.exp(w)
    assert all(s == pytest.approx(1.0, abs=1e-6) for s in per_parent.values())  # a proper PCFG base per label
    from treegram.errors import InputError

    with pytest.raises(InputError, match="no base symbols"):
        read_base_route(load_model(files["control"]).pcfg.cfg)


def test_no_auxiliary_tree_control_is_the_tsg(files):
    tsg, ctrl = load_model(files["tsg"]), load_model(files["control"])
    assert ctrl.grammar.auxiliary == [] and ctrl.grammar.base is not None
    assert ctrl.settings.prune_threshold == tsg.prune_threshold  # the TSG's own pruning by default
    pt, pc = parse_default(tsg), parse_default(ctrl)
    parsed = 0
    for words in _sentences():
        z = _log_z(tsg, words)
        assert _log_z(ctrl, words) == pytest.approx(z, abs=1e-9)
        if z > -np.inf:
            parsed += 1
            assert pc(words) == pt(words)
    assert parsed >= len(_sentences()) - 3  # the unknown-word sentences mostly parse too


def test_adjunction_weight_to_zero_reduces_to_the_tsg(files):
    tsg, tiny, ostag = load_model(files["tsg"]), load_model(files["tiny"]), load_model(files["ostag"])
    assert tiny.grammar.auxiliary and ostag.grammar.auxiliary
    moved = 0
    for words in _sentences():
        z = _log_z(tsg, words)
        assert _log_z(tiny, words) == pytest.approx(z, abs=1e-8)
        moved += z > -np.inf and abs(_log_z(ostag, words) - z) > 1e-6
    assert moved  # with the default adjunction weight the auxiliary trees do change the grammar


def test_ostag_with_base_route_parses_and_keeps_the_base_share(files):
    from treegram.elementary.base_route import read_base_route

    m = load_model(files["ostag"])
    g = m.grammar
    b = read_base_route(load_model(files["tsg"]).cfg)
    # per root label: the initial trees share 1 - P(c -> c~base)
    share = np.zeros(len(g.labels))
    np.add.at(share, g.initial_label, np.exp(g.sub_logp))
    hop = np.zeros(len(g.labels))
    hop[g.base_label[b.hop_label]] = np.exp(b.hop_logp)
    roots = np.unique(g.initial_label)
    assert share[roots] + hop[roots] == pytest.approx(np.ones(roots.size))
    parse = parse_default(m)
    for words in _sentences()[:5]:
        assert parse(words).leaves() == words
    # the base route cannot be written as an OSTAG derivation of elementary trees: a clear error
    from treegram.plugins.ostag.derivation import ostag_derivation

    used_base = 0
    for words in _sentences()[-6:]:  # an unknown word enters at base[tag]: its MPD goes through the base route
        if _log_z(m, words) == -np.inf:
            continue
        _tree, red, res = m.parse_derivation(words)
        steps = res.derivation.steps
        un = steps[(steps[:, 0] == 1) & (steps[:, 1] >= 0), 1]
        if np.any(red.rtype["unary"][un] == 7):
            used_base += 1
            with pytest.raises(ValueError, match="base route"):
                ostag_derivation(red, steps)
    assert used_base


def test_em_with_base_route_keeps_the_hop(files, tmp_path):
    out = tmp_path / "em.ostag"
    assert main(["-q", "train", "ostag", "--from-tsg", str(files["tsg"]), "--treebank", str(files["tb"]),
                 "--seed", "4", "--tsg-weights", "base", "--em-iterations", "1", "--out", str(out)]) == 0
    m = load_model(out)
    g = m.grammar
    assert len(m.trace) == 1 and m.trace[0]["log_likelihood"] < 0
    share = np.zeros(len(g.labels))
    np.add.at(share, g.initial_label, np.exp(g.sub_logp))
    rest = np.exp(g.log_rest)
    roots = np.unique(g.initial_label)
    assert share[roots] == pytest.approx(rest[roots])
    assert parse_default(m)(_sentences()[0]).leaves() == _sentences()[0]
