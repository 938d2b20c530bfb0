"""Parse-time pruning (issue 26 item 3): the cell beam of every exhaustive chart pass and the coarse-to-fine stage,
built once in `treegram.charts.pruning` (default `treegram.option_groups.CELL_BEAM`), set by `parse --cell-beam`
and reported by describe()."""

from __future__ import annotations

import math

import numpy as np
import pytest

from treegram.charts import Pruning, coarse_to_fine_mask, inside, viterbi
from treegram.charts.decoders import decode, parse_default
from treegram.charts.pruning import beam_label, cell_beam, coarse_stage
from treegram.cli.app import main
from treegram.corpora.demo import demo_trees
from treegram.errors import InputError
from treegram.grammar import WeightedCFG
from treegram.grammar.pcfg import PCFGModel, PCFGSettings
from treegram.option_groups import CELL_BEAM

from test_charts_decoders import pp_grammar

WORDS = "fish saw I with fish with fish".split()


def test_cell_beam_is_a_threshold_prune_and_zero_or_inf_turns_it_off():
    assert cell_beam().threshold == CELL_BEAM and cell_beam().mask is None
    assert cell_beam(3).threshold == 3
    assert cell_beam(0) is None and cell_beam(math.inf) is None
    assert beam_label() == f"cell beam {CELL_BEAM:g} nats" and beam_label(0) == "exhaustive"


def test_coarse_stage_masks_from_the_beamed_coarse_chart():
    g = pp_grammar()
    lex = g.lexical_input(WORDS)
    got = coarse_stage(g, lex, g, threshold=1e-4, beam=2.0)
    want = coarse_to_fine_mask(g, lex, threshold=1e-4, projection=g, prune=Pruning(threshold=2.0))
    np.testing.assert_array_equal(got.mask, want)
    wide = coarse_stage(g, lex, g, threshold=1e-4, beam=0)  # exhaustive coarse chart
    np.testing.assert_array_equal(wide.mask, coarse_to_fine_mask(g, lex, threshold=1e-4, projection=g))
    assert coarse_stage(g, lex, g, threshold=0) is None  # pruning off
    assert coarse_stage(g, g.lexical_input(["with", "with"]), g, threshold=1e-4) is None  # no coarse parse


def garden_path() -> WeightedCFG:
    """'x y': the likelier tag of x (C) has no parse, so a narrow cell beam loses the sentence."""
    return WeightedCFG.from_rules("S", binary=[("S", "A", "B", math.log(1.0))], unary=[],
                                  lexical=[("A", "x", math.log(0.01)), ("C", "x", math.log(1.0)),
                                           ("B", "y", math.log(1.0))])


def test_coarse_stage_falls_back_to_the_exhaustive_chart_when_the_beam_loses_the_parse():
    g = garden_path()
    lex = g.lexical_input(["x", "y"])
    assert inside(g, lex, prune=Pruning(threshold=1.0)).log_z == -np.inf  # the premise: this beam loses it
    got = coarse_stage(g, lex, g, threshold=1e-4, beam=1.0)
    np.testing.assert_array_equal(got.mask, coarse_to_fine_mask(g, lex, threshold=1e-4, projection=g))


@pytest.fixture(scope="module")
def demo_pcfg():
    return PCFGModel.train(demo_trees(), PCFGSettings(horizontal=1, vertical=1, rare_threshold=1))


def test_pcfg_chart_uses_the_cell_beam_and_describe_says_so(demo_pcfg):
    tokens = demo_trees()[0].leaves()
    assert demo_pcfg.chart_input(tokens).prune.threshold == CELL_BEAM
    assert demo_pcfg.describe(top=0)["pruning"] == beam_label()
    model = PCFGModel.train(demo_trees(), PCFGSettings(horizontal=1, vertical=1, rare_threshold=1))
    parse = parse_default(model, cell_beam=0)
    assert model.chart_input(tokens).prune is None and model.describe(top=0)["pruning"] == "exhaustive"
    exhaustive = viterbi(model.cfg, model.lexical_input(tokens), tokens)
    assert parse(tokens) == model.category_tree(exhaustive.tree)


def test_a_beam_that_loses_the_parse_is_retried_without_it(demo_pcfg):
    model = PCFGModel.train(demo_trees(), PCFGSettings(horizontal=1, vertical=1, rare_threshold=1))
    model.cell_beam = 1e-9
    for t in demo_trees()[:5]:
        tokens = t.leaves()
        assert decode(model, tokens, "mpd").leaves() == tokens
        assert decode(model, tokens, "maxrule").leaves() == tokens


def test_cell_beam_option_on_the_command_line(demo_model_files, tmp_path):
    src = tmp_path / "in.txt"
    src.write_text("The hungry dog slept in the garden .\nA cat saw the dog .\n", encoding="utf-8")
    outs = []
    for extra in ([], ["--cell-beam", "0"], ["--cell-beam", "40"]):
        out = tmp_path / f"out{len(outs)}.txt"
        assert main(["-q", "parse", "--model", str(demo_model_files["pcfg"]), "--input", str(src), "--out", str(out),
                     *extra]) == 0
        outs.append(out.read_text(encoding="utf-8"))
    assert outs[0] == outs[1] == outs[2]  # the demo sentences are far inside any of these beams
    bad = ["-q", "parse", "--model", str(demo_model_files["pcfg"]), "--input", str(src), "--cell-beam", "-1"]
    assert main(bad) != 0


def test_cell_beam_on_a_model_without_a_chart_is_a_clear_error():
    class NoChart:
        formalism = "other"

        def parse(self, tokens):
            return None

    with pytest.raises(InputError, match="--cell-beam"):
        parse_default(NoChart(), cell_beam=10)


def chain_grammar() -> WeightedCFG:
    """E occurs only as the left child of S (like a TSG fragment's internal node); B under two parents."""
    return WeightedCFG.from_rules("S", binary=[("S", "E", "B", 0.0), ("E", "A", "B", 0.0)], unary=[],
                                  lexical=[("A", "a", 0.0), ("B", "b", 0.0)])


def test_parent_lookahead_finds_single_parent_symbols():
    from treegram.charts.chart import parent_lookahead

    g = chain_grammar()
    side, pcat = parent_lookahead(g)
    sym = g.nonterminals
    assert side[sym["E"]] == 1 and pcat[sym["E"]] == g.categories["S"]
    assert side[sym["A"]] == 1 and pcat[sym["A"]] == g.categories["E"]
    assert side[sym["B"]] == 0 and side[sym["S"]] == 0  # two parent categories; the start symbol


def test_masked_chart_drops_post_entries_whose_only_parent_is_masked_everywhere():
    g = chain_grammar()
    words = ["a", "b", "b"]
    lex = g.lexical_input(words)
    S, E = g.categories["S"], g.categories["E"]
    mask = np.ones((4, 4, len(g.categories)), bool)
    kept = inside(g, lex, prune=Pruning(mask=mask))
    assert "E" in kept.cell(0, 2) and kept.log_z == pytest.approx(0.0)
    mask[:, :, S] = False
    mask[0, 2, S] = True  # S may cover (0, 2) only: no span an E over (0, 2) could be the left part of
    assert mask[0, 2, E]
    dropped = inside(g, lex, prune=Pruning(mask=mask))
    assert "E" not in dropped.cell(0, 2) and dropped.log_z == -np.inf


def test_tsg_and_tig_describe_their_coarse_stage(demo_model_files):
    from treegram.charts.pruning import stage_label
    from treegram.formalism import load_model

    for name in ("tsg", "tig"):
        model = load_model(demo_model_files[name])
        assert model.describe(top=0)["pruning"] == stage_label(model.prune_threshold) == (
            f"coarse PCFG posterior >= {model.prune_threshold:g} (coarse chart: {beam_label()})")
        parse_default(model, cell_beam=0)
        assert model.describe(top=0)["pruning"].endswith("(coarse chart: exhaustive)")
    assert stage_label(0) == "none"
