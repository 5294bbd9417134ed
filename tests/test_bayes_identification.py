"""What the data identify: prior draws against closed forms, contraction, item contrasts, and the gate that skips
quantities that are mostly prior (no sampling here: forward draws and synthetic chains only)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from bias_validity.psychometrics.bayes import (
    IDENTIFICATION,
    build_model,
    derived_draws,
    diagnostics_gate,
    identification,
    index_design,
    item_contrasts,
    prior_draws,
    simulate_study,
    summarise,
)


def _design(items: int, traits: int = 2):
    sim = simulate_study(units=1, traits=traits, items=items, templates=2, orders=1, reps=5, seed=0)
    ren = {"unit": "model", "trait": "dimension"}
    sim = {k: v.rename(columns=ren) for k, v in sim.items()}
    return index_design(sim["binary"], ordinal=sim["ordinal"], scores=sim["scores"])


def test_prior_draws_of_a_latent_correlation_have_the_lkj_marginal():
    # LKJ(eta) in d dimensions: each correlation is 2 Beta(eta - 1 + d/2, same) - 1, variance 1 / (2 eta + d - 1)
    design = _design(items=3)
    labels, draws = derived_draws(prior_draws(build_model(design, lkj_eta=2.0), draws=4000, seed=1), design)
    corr = draws[..., (labels["quantity"] == "latent_correlation").to_numpy()]
    d = len(design.methods)
    assert d == 4 and corr.shape[-1] == 6
    assert corr.var(axis=(0, 1)) == pytest.approx(np.full(6, 1 / (2 * 2.0 + d - 1)), rel=0.1)
    assert np.abs(corr.mean(axis=(0, 1))).max() < 0.03


def test_derived_draws_do_not_depend_on_how_the_draws_are_sliced(monkeypatch):
    # derived quantities are computed in slices of draws to bound memory (a large study's new-item SCs would need
    # 15 GB at once); slices of one draw must give every quantity as one slice of all draws does
    from bias_validity.psychometrics.bayes import derived

    sim = simulate_study(units=1, traits=2, items=3, templates=2, orders=2, reps=5, seed=0)
    sim = {k: v.rename(columns={"unit": "model", "trait": "dimension"}) for k, v in sim.items()}
    design = index_design(sim["binary"], ordinal=sim["ordinal"], scores=sim["scores"])
    prior = prior_draws(build_model(design), draws=30, seed=2)
    whole_labels, whole = derived_draws(prior, design, reversed_order=lambda order: order == "o1")
    monkeypatch.setattr(derived, "_CHUNK_VALUES", 1)
    assert len(derived._draw_slices(prior, len(design.ordinal), 20)) == 30
    labels, sliced = derived_draws(prior, design, reversed_order=lambda order: order == "o1")
    assert {"sc_new_item", "acquiescence"} <= set(labels["quantity"])
    pd.testing.assert_frame_equal(labels, whole_labels)
    np.testing.assert_allclose(sliced, whole, rtol=1e-12)  # the same numbers up to the matrix product's rounding


def test_new_item_draws_of_the_items_mean_follow_their_seed_and_nothing_else_does():
    # a new-item SC draws the asked items' mean d per posterior draw; SBC ranks a truth among draws that must be
    # independent of it and of other replications' (one shared stream made the paper-like gap's ranks non-uniform)
    design = _design(items=3)
    prior = prior_draws(build_model(design), draws=400, seed=2)
    labels, first = derived_draws(prior, design, seed=5)
    _, again = derived_draws(prior, design, seed=5)
    _, other = derived_draws(prior, design, seed=6)
    new_item = (labels["quantity"] == "sc_new_item").to_numpy()
    item_free = labels["quantity"].isin(["sc", "latent_correlation"]).to_numpy()
    assert new_item.sum() == 6 and item_free.sum() == 6 + 6  # 3 binary or Likert methods x 2 traits; 4 methods
    np.testing.assert_array_equal(first, again)
    np.testing.assert_array_equal(first[..., item_free], other[..., item_free])
    moved = np.abs(first[..., new_item] - other[..., new_item])
    assert np.median(moved) > 1e-3  # d's spread, sd / sqrt(3) on the logit scale, moves most draws


def test_item_contrasts_count_items_both_methods_see_less_one_per_trait():
    assert set(item_contrasts(_design(items=3)).values()) == {4}  # 2 traits x (3 - 1)
    assert set(item_contrasts(_design(items=6)).values()) == {10}


def _labels(n_corr: int = 1) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "quantity": ["sc"] + ["latent_correlation"] * n_corr,
            "model": "u0",
            "dimension": "t0",
            "method": ["implicit"] + ["ablated~implicit"] * n_corr,
        }
    )


@pytest.mark.parametrize(("posterior_sd", "expected"), [(0.3, 0.91), (0.9, 0.19)])
def test_contraction_is_one_minus_the_variance_ratio(posterior_sd, expected):
    rng = np.random.default_rng(0)
    prior = rng.normal(0, 1.0, (1, 20000, 2))
    post = rng.normal(0.2, posterior_sd, (4, 5000, 2))
    out = identification(_labels(), post, prior, _design(items=6))
    assert out["contraction"].to_numpy() == pytest.approx([expected, expected], abs=0.03)
    assert out["identified"].tolist() == [expected >= IDENTIFICATION["min_contraction"]] * 2
    assert np.isnan(out["item_contrasts"].iloc[0]) and out["item_contrasts"].iloc[1] == 10


def test_a_correlation_of_too_few_contrasts_is_not_identified_however_narrow():
    rng = np.random.default_rng(0)
    prior, post = rng.normal(0, 1.0, (1, 20000, 2)), rng.normal(0, 0.1, (4, 5000, 2))
    out = identification(_labels(), post, prior, _design(items=3))  # 4 contrasts < 10
    assert out["contraction"].min() > 0.95
    assert out["identified"].tolist() == [True, False]


def test_a_heavy_tailed_ratio_gets_a_finite_contraction():
    rng = np.random.default_rng(0)
    prior = rng.standard_cauchy((1, 20000, 2))  # no variance: a ratio with a denominator near zero
    post = 0.5 * rng.standard_cauchy((4, 5000, 2))
    out = identification(_labels(), post, prior, _design(items=6))
    assert out["contraction"].to_numpy() == pytest.approx([0.75, 0.75], abs=0.03)


def _table(identified: list[bool]) -> pd.DataFrame:
    rng = np.random.default_rng(3)
    draws = rng.normal(0.7, 0.05, (4, 1000, 2))
    draws[0, :, 1] += 0.5  # the second quantity's first chain is stuck elsewhere: R-hat far above 1.01
    return summarise(_labels(), draws).assign(identified=identified)


def test_gate_leaves_out_quantities_that_are_not_identified():
    assert not diagnostics_gate(_table([True, True]), divergences=0)["passed"]
    gate = diagnostics_gate(_table([True, False]), divergences=0)
    assert gate["passed"] and gate["not_identified"] == 1 and gate["max_rhat"] < 1.01


def test_gate_fails_on_low_energy_or_trajectories_cut_at_maximum_depth():
    table = _table([True, False])
    assert diagnostics_gate(table, divergences=0, ebfmi=[0.9, 0.8, 0.35, 0.7], max_depth_share=0.01)["passed"]
    low = diagnostics_gate(table, divergences=0, ebfmi=[0.9, 0.8, 0.25, 0.7])
    assert not low["passed"] and low["min_ebfmi"] == 0.25
    assert not diagnostics_gate(table, divergences=0, max_depth_share=0.05)["passed"]


def test_a_latent_correlation_that_is_not_identified_is_shown_but_never_decides():
    from bias_validity.analyses.questions.convergent import convergent
    from bias_validity.analyses.result import Verdict
    from bias_validity.simulate import simulate_responses

    responses = simulate_responses(n_items=20, item_sd=2.0, seed=7)  # shared item effects: Spearman r clearly > 0
    row = dict(
        quantity="latent_correlation",
        model="sim:model",
        dimension=None,
        method="implicit~logprob",
        mean=0.05,
        hdi_low=-0.2,
        hdi_high=0.25,
        p_direction=0.6,
        contraction=0.1,
    )
    decided = convergent(responses, posterior=pd.DataFrame([{**row, "identified": True}]))
    assert decided.verdict is Verdict.NOT_SUPPORTED  # the interval lies wholly below 0.3
    shown = convergent(responses, posterior=pd.DataFrame([{**row, "identified": False}]))
    assert shown.verdict is Verdict.SUPPORTED  # the classical item correlations decide instead
    latent = shown.figures[shown.figures["measure"] == "latent implicit~logprob"]
    assert latent["note"].tolist() == ["not identified (contraction 0.10)"]
