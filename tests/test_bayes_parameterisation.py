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
    _family_spread,
    _information,
    _ordinal_offsets,
    _partially_centred,
    _ragged_contrasts,
    _ragged_zero_sum,
    _zero_sum_basis,
    _zero_sum_layout,
    shared_centring,
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


def _information_of(d):
    return _information(d, deviation_spread(d), deviation_spread(d, reach=True))


def _design(reps: int):
    """Two units sharing every effect (the units' own deviations are the subject of the tests that ask for them)."""
    sim = simulate_study(units=2, traits=2, items=3, templates=2, orders=2, reps=reps, seed=1)
    return index_design(sim["binary"], ordinal=sim["ordinal"], scores=sim["scores"], unit_effects=False)


def test_information_counts_answers_per_effect():
    d = _design(reps=5)
    info = _information_of(d)
    # a binary group: 3 items x 2 templates x 2 orders x 5 answers, 1/4 each
    assert info["gb"].tolist() == [15.0] * len(d.binary_groups)
    assert info["go"].tolist() == [15.0] * len(d.ordinal_groups)
    # a template of a binary method: 2 units x 2 traits x 3 items x 2 orders x 5 answers / 4
    binary_template = d.templates.index("implicit|T0")
    assert info["t"][binary_template] == 30.0
    # an item of the score method: one standardised score per unit x template x order, information 1 each
    assert info["item"][0, d.methods.index("logprob")] == 2 * 2 * 2


@pytest.mark.parametrize("units", [2, 6])
def test_a_shared_effect_is_informed_through_the_reach_of_the_units_deviations(units):
    """Units with their own deviations that answer alike (none drawn): each unit's 600 answers per wording (information
    150) inform the shared effect only through its deviation, whose SD the answers cannot rule out up to its reach;
    more units narrow the reach, and each adds its share."""
    sim = simulate_study(
        units=units, traits=2, items=6, templates=2, orders=2, reps=25, seed=1, ordinal_methods=(), score_methods=()
    )
    d = index_design(sim["binary"], unit_effects=True)
    assert d.unit_methods == ["ablated", "implicit"]
    reach = deviation_spread(d, reach=True)
    assert deviation_spread(d)["ut"] < 0.05 < reach["ut"] < (0.15 if units == 2 else 0.1)
    assert _information_of(d)["t"][0] == pytest.approx(units / (1 / 150 + reach["ut"] ** 2))


def test_family_spread_is_the_moment_estimate_within_the_priors_scale():
    # contrasts 0.3 and -0.1 with noise variances 1/100 and 1/25: mean(0.09 - 0.01, 0.01 - 0.04) = 0.025
    assert _family_spread(np.array([0.3, -0.1]), np.array([100.0, 25.0])) == pytest.approx(np.sqrt(0.025))
    assert _family_spread(np.array([0.1, 0.0]), np.array([25.0, 25.0])) == 0.0  # within the noise
    assert _family_spread(np.array([3.0, 9.0]), np.array([0.0, 100.0])) == 0.5  # uninformed left out; at most 0.5


@pytest.mark.parametrize(("reps", "units", "form"), [(1, 2, "non-centred"), (4, 4, "partial"), (200, 6, "centred")])
def test_shared_orders_are_centred_as_far_as_they_stand_clear_of_their_noise(reps, units, form):
    """Order effects of SD 0.3 (two orders per method): answered by six units with 200 answers per cell they stand
    clear of their noise (as on the paper-scale workload, centred without a divergence); by two units with one answer
    per cell they are lost in it; by four units with four answers per cell in between, though their information (57
    per contrast) would centre them at the prior's spread 0.5, as it centred the real-shaped studies of
    ``bench/fit.py --part real-coverage``, where 8 of 12 then diverged at small sigma_ord."""
    sim = simulate_study(units=units, traits=2, items=6, templates=3, orders=2, reps=reps, seed=4, score_methods=())
    d = index_design(sim["binary"], ordinal=sim["ordinal"], unit_effects=True)
    w = shared_centring(d)["ords"]
    assert len(w) == 3
    if form == "partial":  # the optimal partial centring at the spread the levels' logits show
        info = (_zero_sum_basis([o.split("|")[0] for o in d.orders]) ** 2).T @ _information_of(d)["o"]
        assert info == pytest.approx(57.2, abs=0.1)
        x = w / (1 - w) / info  # the spread^2 the weight was judged at: I s^2 = w / (1 - w)
        assert 0.1 < w.min() and w.max() < 0.9 and np.allclose(x, x[0])
    else:
        assert w.tolist() == [1.0 if form == "centred" else 0.0] * 3


def test_item_effects_are_centred_only_when_the_data_pin_them_down():
    for reps, centred in ((1, 0.0), (40, 1.0)):
        d = _design(reps)
        w = _contrast_weights(_zero_sum_basis(d.item_traits()), _information_of(d)["item"])
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
