"""TIG plugin: the collapsed joint against the chain rule of sequential predictives, determinism, hyperparameter
resampling keeps a valid state."""

from __future__ import annotations

import numpy as np
import pytest

from treegram.bayes import BlockedMH

from test_tig_transform import make_state


@pytest.mark.parametrize("variant", ["tig", "tig0"])
def test_joint_is_chain_rule_of_predictives(variant):
    state = make_state(variant, seed=3, sweeps=3)
    joint = state.log_likelihood()
    encs = [state.current(t) for t in range(state.num_items())]
    for t in range(state.num_items()):
        state.remove(t)
    assert not state.counts.count and state.counts.total.sum() == 0
    total = 0.0
    for t, enc in enumerate(encs):
        total += state.log_p(t, enc)
        state.add(t, enc)
    assert total == pytest.approx(joint, abs=1e-8)


def test_same_seed_same_run_and_hyper_resampling():
    a = make_state("tig", seed=5, sweeps=0)
    b = make_state("tig", seed=5, sweeps=0)
    a.settings = b.settings = type(a.settings)(**{**a.settings.to_dict(), "resample": True})
    ra = BlockedMH(a, seed=9).run(3)
    rb = BlockedMH(b, seed=9).run(3)
    assert [r["log_likelihood"] for r in ra] == [r["log_likelihood"] for r in rb]
    for k in ("sub", "adir", "afoot"):
        assert np.array_equal(getattr(a, k), getattr(b, k))
    assert np.array_equal(a.hyper.alpha, b.hyper.alpha) and np.array_equal(a.hyper.phi, b.hyper.phi)
    # resampled values moved and stay in range; every derivation still decodes
    assert np.all((a.hyper.phi[1:] > 0) & (a.hyper.phi[1:] < 1)) and np.all(a.hyper.alpha > 0)
    for t in range(a.num_items()):
        a.decode(t, a.current(t))


def test_decode_memo_changes_no_sample(monkeypatch):
    """`TypeTableState._decoded` (one MH step decodes each derivation three times) gives the run without it."""
    from treegram.elementary.types import TypeTableState

    a = make_state("tig0", seed=4, sweeps=0)
    ra = BlockedMH(a, seed=11).run(3)
    monkeypatch.setattr(TypeTableState, "_decoded", lambda self, item, enc: self.decode(item, enc))
    b = make_state("tig0", seed=4, sweeps=0)
    rb = BlockedMH(b, seed=11).run(3)
    assert [r["log_likelihood"] for r in ra] == [r["log_likelihood"] for r in rb]
    assert [r["accepted"] for r in ra] == [r["accepted"] for r in rb]
    for k in ("sub", "adir", "afoot"):
        assert np.array_equal(getattr(a, k), getattr(b, k))
    assert a.counts.count == b.counts.count
