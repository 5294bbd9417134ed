"""The planning closed forms against published worked examples, the libraries that compute the same figure, and
simulation where neither exists (:mod:`bias_validity.psychometrics.planning`)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from bias_validity.psychometrics.planning import (
    Assumptions,
    PlanTargets,
    c4,
    cluster_mean_variance,
    design_effect,
    fieller_interval,
    fisher_z_half_width,
    fisher_z_interval,
    fisher_z_power,
    fisher_z_sample_size,
    icc_interval_width,
    icc_sample_size,
    power_to_clear,
    ratio_variance,
    t_half_width,
    tost_power,
)
from bias_validity.psychometrics.validity import correlation_ci

# --- Bonett (2002): targets for an ICC interval of a given width -------------------------------------------------


def test_bonett_worked_example_four_raters():
    """Bonett (2002, Statistics in Medicine 21:1331) plans k = 4 raters, ICC 0.85, a 95% interval 0.2 wide and gets
    n = 19.2 (quoted in R presize's ``prec_icc`` documentation): 8 x 1.96^2 x 0.15^2 x 3.55^2 / (4 x 3 x 0.04) + 1."""
    assert icc_sample_size(0.85, 4, 0.2) == pytest.approx(19.2, abs=0.05)
    assert math.ceil(icc_sample_size(0.85, 4, 0.2)) == 20


def test_statpsych_documented_example():
    """statpsych's ``size.ci.icc(.05, .70, 3, .2)`` is documented to return a sample size of 68
    (8 x 1.96^2 x 0.3^2 x 2.4^2 / (3 x 2 x 0.04) + 1 = 67.4, rounded up)."""
    assert math.ceil(icc_sample_size(0.70, 3, 0.2)) == 68


def test_bonett_two_raters_high_icc_adds_five_rho():
    """Bonett's note for k = 2 and rho >= .7: add 5 rho to n (presize applies it the same way)."""
    base = 8 * stats.norm.ppf(0.975) ** 2 * 0.2**2 * 1.8**2 / (2 * 0.2**2) + 1
    assert icc_sample_size(0.8, 2, 0.2) == pytest.approx(base + 4.0)
    assert icc_sample_size(0.6, 2, 0.2) == pytest.approx(8 * stats.norm.ppf(0.975) ** 2 * 0.4**2 * 1.6**2 / 0.08 + 1)


def test_icc_width_inverts_the_sample_size():
    n = icc_sample_size(0.5, 3, 0.25)
    assert icc_interval_width(0.5, 3, n) == pytest.approx(0.25)
    with pytest.raises(ValueError, match="raters >= 2"):
        icc_sample_size(0.5, 1, 0.2)


# --- the cluster design effect (Kish 1965) ---------------------------------------------------------------------------


def test_design_effect_worked_by_hand():
    # 20 answers per item, ICC 0.05: 1 + 19 x 0.05 = 1.95; ICC 0: answers independent; ICC 1: one answer per item
    assert design_effect(20, 0.05) == pytest.approx(1.95)
    assert design_effect(20, 0.0) == 1.0 and design_effect(20, 1.0) == 20.0
    with pytest.raises(ValueError, match="icc"):
        design_effect(20, 1.5)


@pytest.mark.parametrize("m, a, b", [(12, 2.0, 1.0), (4, 0.5, 0.5), (40, 9.0, 3.0)])
def test_design_effect_is_exact_for_the_beta_binomial(m, a, b):
    """A share of m answers whose item probability is Beta(a, b): scipy's beta-binomial variance over m^2 equals
    p (1 - p) / m times Kish's design effect at rho = 1 / (a + b + 1), the beta-binomial's intraclass correlation."""
    p, rho = a / (a + b), 1 / (a + b + 1)
    exact = stats.betabinom(m, a, b).var() / m**2
    assert p * (1 - p) / m * design_effect(m, rho) == pytest.approx(exact, rel=1e-12)
    # the same as between-item plus within-item variance over m, for one cluster
    between = p * (1 - p) * rho
    assert cluster_mean_variance(between, p * (1 - p) - between, clusters=1, cluster_size=m) == pytest.approx(exact)


# --- Fisher z (Lachin 1981; Fieller, Hartley & Pearson 1957) --------------------------------------------------------


def test_fisher_z_sample_size_worked_examples():
    """Lachin (1981, Controlled Clinical Trials 2:93): r = 0.4, two-sided 5%, 80% power: 46.7, i.e. 47 pairs; the
    table value for r = 0.3 is 85 (Cohen 1988)."""
    assert fisher_z_sample_size(0.4) == pytest.approx(46.7, abs=0.05)
    assert math.ceil(fisher_z_sample_size(0.4)) == 47
    assert math.ceil(fisher_z_sample_size(0.3)) == 85
    assert fisher_z_sample_size(0.3, 0.3) == float("inf")


def test_fisher_z_power_inverts_the_sample_size_with_groups_and_spearman():
    n = fisher_z_sample_size(0.2, 0.5, variance_factor=1.06, groups=3, power=0.9)
    assert fisher_z_power(0.2, 0.5, n, variance_factor=1.06, groups=3) == pytest.approx(0.9)


def test_fisher_z_interval_matches_the_correlation_interval_the_questions_use():
    """``correlation_ci`` (Q2's interval: Fisher z, Spearman variance 1.06/(n - 3)) on drawn data gives the same
    bounds as the closed form at the observed r."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal(30)
    data = pd.DataFrame({"x": x, "y": 0.5 * x + rng.standard_normal(30)})
    for method, factor in (("pearson", 1.0), ("spearman", 1.06)):
        out = correlation_ci(data, x="x", y="y", method=method, bootstrap=False)
        row = out[out["interval"] == "fisher_z"].iloc[0]
        low, high = fisher_z_interval(row["r"], 30, variance_factor=factor)
        assert (low, high) == pytest.approx((row["ci_low"], row["ci_high"]), abs=1e-9)


def test_fisher_z_half_width_is_the_mean_over_estimates():
    rng = np.random.default_rng(0)
    n, r = 20, 0.6
    z = np.arctanh(r) + rng.standard_normal(200_000) / np.sqrt(n - 3)
    half = 1.959964 / np.sqrt(n - 3)
    simulated = np.mean((np.tanh(z + half) - np.tanh(z - half)) / 2)
    assert fisher_z_half_width(r, n) == pytest.approx(simulated, rel=2e-3)


# --- t intervals, one-sided power and two one-sided tests ------------------------------------------------------------


@pytest.mark.parametrize("distance, sd, n", [(0.1, 0.2, 34), (0.02, 0.3, 7), (0.3, 0.2, 5), (-0.05, 0.2, 30)])
def test_power_to_clear_is_statsmodels_one_sided_t_power(distance, sd, n):
    from statsmodels.stats.power import TTestPower

    expected = TTestPower().power(effect_size=distance / sd, nobs=n, alpha=0.025, alternative="larger")
    assert power_to_clear(distance, sd, n) == pytest.approx(expected, abs=1e-10)


def test_expected_t_half_width_matches_simulated_intervals():
    """E[t s / sqrt(n)] = t c4(n) sigma / sqrt(n) for normal units (c4(5) = 0.9400, ASTM E2587)."""
    assert c4(5) == pytest.approx(0.9400, abs=1e-4)
    rng = np.random.default_rng(1)
    for n in (5, 12):
        s = rng.normal(0, 0.3, (100_000, n)).std(axis=1, ddof=1)
        simulated = (stats.t.ppf(0.975, n - 1) * s / np.sqrt(n)).mean()
        assert t_half_width(0.3, n) == pytest.approx(simulated, rel=5e-3)
    assert t_half_width(0.2, 16, expected=False) == pytest.approx(2.13145 * 0.2 / 4, rel=1e-4)


def _simulated_tost(shift: float, sd: float, n: int) -> float:
    """Share of 20,000 simulated paired samples judged equivalent as Q1 judges them: the 95% t interval wholly
    inside +/-0.1."""
    d = np.random.default_rng(7).normal(shift, sd, (20_000, n))
    half = stats.t.ppf(0.975, n - 1) * d.std(axis=1, ddof=1) / np.sqrt(n)
    return float(((d.mean(axis=1) - half > -0.1) & (d.mean(axis=1) + half < 0.1)).mean())


@pytest.mark.parametrize("shift, sd, n", [(0.0, 0.2, 44), (0.04, 0.15, 50), (0.0, 0.1, 12)])
def test_tost_power_against_simulated_two_one_sided_tests(shift, sd, n):
    """Where plans land (power near 0.8), Phillips' approximation P+ + P- - 1 is within 0.02 of the simulated power."""
    assert 0.7 < tost_power(shift, sd, n, limit=0.1) == pytest.approx(_simulated_tost(shift, sd, n), abs=0.02)


def test_tost_power_is_a_lower_bound_at_low_power():
    """With few items and low power the two tests fail together more often than independently: the approximation
    errs low (0.36 against about 0.41 simulated), so a plan errs towards more items."""
    assert tost_power(0.0, 0.1, 8, limit=0.1) < _simulated_tost(0.0, 0.1, 8)


# --- ratios: Fieller (1954) and the delta method ----------------------------------------------------------------------


def test_fieller_bounds_solve_fiellers_quadratic():
    a, b, vaa, vbb, vab, q = 0.12, 0.25, 0.002, 0.0015, 0.0008, 2.1
    low, high = fieller_interval(a, b, vaa, vbb, vab, quantile=q)
    for theta in (low, high):
        assert (a - theta * b) ** 2 == pytest.approx(q**2 * (vaa - 2 * theta * vab + theta**2 * vbb))
    assert low < a / b < high
    assert fieller_interval(0.1, 0.05, 0.001, 0.001, 0.0, quantile=2.0) == pytest.approx((np.nan, np.nan), nan_ok=True)


def test_delta_method_ratio_variance_against_simulation():
    rng = np.random.default_rng(2)
    cov = np.array([[0.0004, 0.0001], [0.0001, 0.0003]])
    draws = rng.multivariate_normal([0.15, 0.3], cov, 200_000)
    ratio = draws[:, 0] / draws[:, 1]
    assert ratio_variance(0.15, 0.3, 0.0004, 0.0003, 0.0001) == pytest.approx(ratio.var(), rel=0.05)


# --- settings --------------------------------------------------------------------------------------------------------


def test_targets_and_assumptions_name_the_bad_field():
    with pytest.raises(ValueError, match="half_width"):
        PlanTargets(half_width=0)
    with pytest.raises(ValueError, match="max_items"):
        PlanTargets(max_items=2)
    with pytest.raises(ValueError, match="item_sd"):
        Assumptions(sc={"implicit": 0.7}, item_sd=-1)
    with pytest.raises(ValueError, match="wordings"):
        Assumptions(sc={"implicit": 0.7}, wordings=0)


def test_spearman_of_a_bivariate_normal():
    """Kruskal (1958): rho_S = 6/pi asin(r/2), against scipy's Spearman correlation of 200,000 normal pairs."""
    from bias_validity.psychometrics.planning import spearman_from_pearson

    rng = np.random.default_rng(5)
    x = rng.standard_normal(200_000)
    y = 0.45 * x + np.sqrt(1 - 0.45**2) * rng.standard_normal(200_000)
    assert spearman_from_pearson(0.45) == pytest.approx(stats.spearmanr(x, y).statistic, abs=0.005)
    assert spearman_from_pearson(1.0) == pytest.approx(1.0) and spearman_from_pearson(0.0) == 0.0
