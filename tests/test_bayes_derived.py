"""Derived SCs against their definition computed cell by cell from the posterior's arrays (no sampling: forward draws
of the prior stand in for a posterior, so every index of every cell is exercised with values far from zero)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import expit

from bias_validity.psychometrics.bayes import build_model, derived_draws, index_design, prior_draws, simulate_study
from bias_validity.psychometrics.bayes.derived import answer_weights


def _reversed(order: str) -> bool:
    return order == "o1"


@pytest.fixture(scope="module")
def fitted():
    sim = simulate_study(units=3, traits=2, items=4, templates=3, orders=2, reps=3, seed=4)
    sim = {k: v.rename(columns={"unit": "model", "trait": "dimension"}) for k, v in sim.items()}
    design = index_design(sim["binary"], ordinal=sim["ordinal"], scores=sim["scores"], unit_effects=True)
    draws = prior_draws(build_model(design), draws=40, seed=5)
    labels, values = derived_draws(draws, design, reversed_order=_reversed)
    return design, draws, labels, values


def _cell_shares(draws, design, kind: str) -> np.ndarray:
    """Each cell's SC draws from the model's linear predictor, written out term by term."""
    post = draws.posterior
    cells = design.binary if kind == "binary" else design.ordinal
    col = {c: cells[c].to_numpy(dtype=int) for c in ("g", "t", "o", "ut", "uo", "ui", "i", "k_m")}
    eta = (
        post["mu_b" if kind == "binary" else "mu_o"].values[..., col["g"]]
        + post["tmpl"].values[..., col["t"]]
        + post["ords"].values[..., col["o"]]
        + post["tmpl_unit"].values[..., col["ut"]]
        + post["ords_unit"].values[..., col["uo"]]
        + post["b_item"].values[..., col["i"], col["k_m"]]
        + post["item_unit"].values[..., col["ui"]]
    )
    if kind == "binary":
        return expit(eta)
    cut = post["cut_unit"].values[..., cells["c_um"].to_numpy(dtype=int), :]
    agree, disagree = expit(eta - cut[..., 2]), expit(cut[..., 1] - eta)
    return agree / (agree + disagree)


@pytest.mark.parametrize("kind", ["binary", "ordinal"])
def test_design_averaged_sc_is_the_answer_weighted_mean_of_each_cells_probability(fitted, kind):
    design, draws, labels, values = fitted
    cells = design.binary if kind == "binary" else design.ordinal
    groups = design.binary_groups if kind == "binary" else design.ordinal_groups
    share, weight, g = _cell_shares(draws, design, kind), answer_weights(design, kind, _reversed), cells["g"].to_numpy()
    assert len(design.unit_methods) == len(design.methods) - 1  # every binary and Likert method has unit deviations
    checked = 0
    for j, (unit, trait, method) in enumerate(groups.to_numpy()):
        row = (labels["quantity"] == "sc") & (labels["model"] == unit) & (labels["dimension"] == trait)
        (k,) = np.flatnonzero(row & (labels["method"] == method))
        expected = (share[..., g == j] * weight[g == j]).sum(axis=-1) / weight[g == j].sum()
        np.testing.assert_allclose(values[..., k], expected, rtol=1e-10, atol=1e-12)
        checked += 1
    assert checked == len(groups) == {"binary": 3 * 2 * 2, "ordinal": 3 * 2}[kind]  # units x traits x methods


def test_acquiescence_averages_agreement_over_statements_and_reversals_equally(fitted):
    design, draws, labels, values = fitted
    share, cells = _cell_shares(draws, design, "ordinal"), design.ordinal
    g, flipped = cells["g"].to_numpy(), cells["order"].map(_reversed).to_numpy(dtype=bool)
    for j, (unit, trait, method) in enumerate(design.ordinal_groups.to_numpy()):
        row = (labels["quantity"] == "acquiescence") & (labels["model"] == unit) & (labels["dimension"] == trait)
        (k,) = np.flatnonzero(row & (labels["method"] == method))
        plain, reversed_ = share[..., (g == j) & ~flipped], share[..., (g == j) & flipped]
        expected = 0.5 * (plain.mean(axis=-1) + (1.0 - reversed_).mean(axis=-1))
        np.testing.assert_allclose(values[..., k], expected, rtol=1e-10, atol=1e-12)
