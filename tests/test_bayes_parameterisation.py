"""The data-dependent parameterisation of the hierarchical model leaves the model itself unchanged."""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytensor.tensor as pt
import pytest
from scipy import stats

from bias_validity.psychometrics.bayes import index_design, simulate_study
from bias_validity.psychometrics.bayes.deviation_spread import deviation_spread
from bias_validity.psychometrics.bayes.model import (
    _contrast_weights,
    _correlated_effects,
    _information,
    _ordinal_offsets,
    _partially_centred,
    _ragged_contrasts,
    _ragged_zero_sum,
    _weights,
    _zero_sum_basis,
    _zero_sum_layout,
)


@pytest.mark.parametrize("w", [0.0, 0.3, 0.8, 1.0])
def test_partially_centred_effects_keep_their_normal_prior(w):
    # theta = mu + sigma^(1-w) (tilde - w mu), tilde ~ N(w mu, sigma^w) must be N(mu, sigma) for every w
    with pm.Model():
        mu, sigma = pm.Normal("mu", 1.0, 0.1), pm.HalfNormal("sigma", 1.0)
        offset = pm.Deterministic("offset", _partially_centred("tilde", mu, sigma, np.array([w])))
    got = pm.draw([offset, mu, sigma], draws=4000, random_seed=7)
    standardised = got[0][:, 0] / got[2]  # (theta - mu) / sigma ~ N(0, 1) whatever mu and sigma are
    assert stats.kstest(standardised, "norm").pvalue > 0.001


def _design(reps: int):
    """Two units sharing every effect (the units' own deviations are the subject of the tests that ask for them)."""
    sim = simulate_study(units=2, traits=2, items=3, templates=2, orders=2, reps=reps, seed=1)
    return index_design(sim["binary"], ordinal=sim["ordinal"], scores=sim["scores"], unit_effects=False)


def test_information_counts_answers_per_effect():
    d = _design(reps=5)
    info = _information(d, deviation_spread(d))
    # a binary group: 3 items x 2 templates x 2 orders x 5 answers, 1/4 each
    assert info["gb"].tolist() == [15.0] * len(d.binary_groups)
    assert info["go"].tolist() == [15.0] * len(d.ordinal_groups)
    # a template of a binary method: 2 units x 2 traits x 3 items x 2 orders x 5 answers / 4
    binary_template = d.templates.index("implicit|T0")
    assert info["t"][binary_template] == 30.0
    # an item of the score method: one standardised score per unit x template x order, information 1 each
    assert info["item"][0, d.methods.index("logprob")] == 2 * 2 * 2


@pytest.mark.parametrize(("units", "centred"), [(2, 0.0), (6, 1.0)])
def test_shared_wording_effects_of_units_that_answer_alike_are_centred_by_the_number_of_units(units, centred):
    """Units with their own deviations that answer alike (none drawn): each unit's 600 answers per wording (information
    150) inform the shared effect through its deviation, whose SD the model takes to be 0.266 or more, so about 13
    each; two units' 26 fall short of the 36 that centring asks at the prior's spread 0.5, six units' 77 do not."""
    sim = simulate_study(
        units=units, traits=2, items=6, templates=2, orders=2, reps=25, seed=1, ordinal_methods=(), score_methods=()
    )
    d = index_design(sim["binary"], unit_effects=True)
    assert d.unit_methods == ["ablated", "implicit"]
    info = _information(d, deviation_spread(d))
    for key, labels in (("t", d.templates), ("o", d.orders)):
        h = _zero_sum_basis([label.split("|")[0] for label in labels])
        assert _weights((h**2).T @ info[key], 0.5).tolist() == [centred] * h.shape[1]
    assert info["t"][0] == pytest.approx(units / (1 / 150 + 0.266**2))


def test_item_effects_are_centred_only_when_the_data_pin_them_down():
    for reps, centred in ((1, 0.0), (40, 1.0)):
        d = _design(reps)
        w = _contrast_weights(_zero_sum_basis(d.item_traits()), _information(d, deviation_spread(d))["item"])
        binary = [d.methods.index(m) for m in ("implicit", "ablated")]
        assert (w[:, binary] == centred).all()


def test_correlated_effects_have_the_cholesky_covariance_whatever_the_centring():
    cov = np.array([[1.0, 0.6, 0.3], [0.6, 1.0, -0.2], [0.3, -0.2, 0.5]])
    weights = np.array([[1.0, 0.0, 1.0], [0.0, 1.0, 0.0]])  # mixed centring within the matrix
    with pm.Model(coords={"item_contrast": [0, 1]}):
        y = pm.Deterministic("y", _correlated_effects(np.linalg.cholesky(cov), weights, ["a", "b", "c"]))
    draws = pm.draw(y, draws=20000, random_seed=3)  # (draws, contrasts, methods)
    for row in range(2):
        np.testing.assert_allclose(np.cov(draws[:, row, :].T), cov, atol=0.05)


def test_likert_offsets_are_iid_normal_whether_drawn_group_by_group_or_as_mean_and_deviations():
    """Method 0's groups are all non-centred (drawn as mean + zero-sum deviations), method 1's mixed (group by
    group): every offset must be Normal(0, tau) of its method, independent of the others."""
    method = np.array([0, 0, 0, 1, 1, 0])
    weights = np.array([0.0, 0.0, 0.0, 1.0, 0.0, 0.0])
    tau = np.array([0.7, 1.3])
    with pm.Model() as model:
        offset = pm.Deterministic("offset", _ordinal_offsets(pt.as_tensor(tau), method, weights, np.ones(6), 2))
    assert {v.name for v in model.free_RVs} == {"z_o", "z_o_mean", "z_o_deviation"}
    draws = pm.draw(offset, draws=40000, random_seed=5)
    np.testing.assert_allclose(np.cov(draws.T), np.diag(tau[method] ** 2), atol=0.04)


def test_zero_sum_basis_is_orthonormal_and_spans_the_within_group_contrasts():
    groups = ["a", "b", "a", "a", "c", "b"]  # unequal groups, one of a single member
    h = _zero_sum_basis(groups)
    assert h.shape == (6, 6 - 3)
    np.testing.assert_allclose(h.T @ h, np.eye(3), atol=1e-12)
    g = np.array(groups)
    centring = np.eye(6) - (g[:, None] == g[None, :]) / (g[:, None] == g[None, :]).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(h @ h.T, centring, atol=1e-12)


def test_ragged_contrasts_invert_the_ragged_zero_sum_map_up_to_centring():
    """The contrasts of any values map back through the zero-sum transform to those values centred within their
    group (what a unit's centred deviations are drawn around: its shared effects)."""
    codes = np.array([0, 0, 0, 1, 1, 2, 2, 2, 2, 3])  # unequal groups, one of a single member
    free, last = _zero_sum_layout(codes)
    x = np.random.default_rng(0).normal(size=len(codes))
    centred = x - (np.bincount(codes, weights=x) / np.bincount(codes))[codes]
    y = _ragged_contrasts(pt.as_tensor(x), codes, free)
    np.testing.assert_allclose(_ragged_zero_sum(y, codes, free, last).eval(), centred, atol=1e-12)


def test_units_asked_one_wording_and_order_get_no_empty_deviation_variables():
    """Two units, one wording and one order per method: the units' template and order deviations have no free
    contrast, so they are zeros, not variables of size 0 (which ArviZ cannot stack for the predictive check); the
    item deviations still are drawn."""
    from bias_validity.psychometrics.bayes import build_model

    sim = simulate_study(units=2, traits=1, items=3, templates=1, orders=1, reps=4, seed=2, ordinal_methods=())
    model = build_model(index_design(sim["binary"], unit_effects=True))
    sizes = {v.name: int(np.prod(model.initial_point()[f"{v.name}"].shape)) for v in model.value_vars}
    assert all(size > 0 for size in sizes.values()), sizes
    assert "z_item_unit" in sizes and "z_tmpl_unit" not in sizes and "z_ords_unit" not in sizes
    point = pm.draw([model["tmpl_unit"], model["ords_unit"]], random_seed=1)
    assert all(np.all(effect == 0.0) for effect in point)
