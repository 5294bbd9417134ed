"""Interval functions against published worked examples, closed forms and simulated coverage."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from bias_validity.psychometrics.bootstrap import bootstrap_ci
from bias_validity.psychometrics.intervals import (
    agresti_caffo_diff_interval,
    clopper_pearson_interval,
    failure_rate,
    newcombe_diff_interval,
    wilson_interval,
)


def test_wilson_matches_newcombe_1998_single_proportion_table():
    """Newcombe (1998a) Stat Med 17:857, Table I, method 3 (score interval without continuity correction)."""
    out = wilson_interval([81, 15, 0, 1], [263, 148, 20, 29])
    expected = [(0.2553, 0.3662), (0.0624, 0.1605), (0.0, 0.1611), (0.0061, 0.1718)]
    np.testing.assert_allclose(out[["ci_low", "ci_high"]].to_numpy(), expected, atol=6e-5)


def test_clopper_pearson_matches_newcombe_1998_method_5():
    """Newcombe (1998a) Table I, method 5 (exact Clopper-Pearson)."""
    out = clopper_pearson_interval([81, 15, 0, 1], [263, 148, 20, 29])
    expected = [(0.2527, 0.3676), (0.0578, 0.1617), (0.0, 0.1684), (0.0009, 0.1776)]
    np.testing.assert_allclose(out[["ci_low", "ci_high"]].to_numpy(), expected, atol=6e-5)


def test_newcombe_difference_matches_newcombe_1998_method_10():
    """Newcombe (1998b) Stat Med 17:873, Table II, method 10 (hybrid score), examples (a)-(h).

    Example (a) is 56/70 - 48/80 = 0.8 - 0.6 = 0.2000 (not 0.1000), interval 0.0524 to 0.3339.
    """
    k1 = [56, 9, 6, 5, 0, 0, 10, 10]
    n1 = [70, 10, 7, 56, 10, 10, 10, 10]
    k2 = [48, 3, 2, 0, 0, 0, 0, 0]
    n2 = [80, 10, 7, 29, 20, 10, 20, 10]
    expected = [
        (0.0524, 0.3339),
        (0.1705, 0.8090),
        (0.0582, 0.8062),
        (-0.0381, 0.1926),
        (-0.1611, 0.2775),
        (-0.2775, 0.2775),
        (0.6791, 1.0),
        (0.6075, 1.0),
    ]
    out = newcombe_diff_interval(k1, n1, k2, n2)
    np.testing.assert_allclose(out["difference"].iloc[0], 0.2)
    np.testing.assert_allclose(out[["ci_low", "ci_high"]].to_numpy(), expected, atol=6e-5)


def test_agresti_caffo_matches_closed_form():
    """Agresti & Caffo (2000): add one success and one failure per group, then Wald."""
    k1, n1, k2, n2 = 56, 70, 48, 80
    p1, p2 = (k1 + 1) / (n1 + 2), (k2 + 1) / (n2 + 2)
    se = np.sqrt(p1 * (1 - p1) / (n1 + 2) + p2 * (1 - p2) / (n2 + 2))
    z = stats.norm.ppf(0.95)
    out = agresti_caffo_diff_interval(k1, n1, k2, n2, ci=0.90)
    np.testing.assert_allclose(out[["ci_low", "ci_high"]].to_numpy()[0], [p1 - p2 - z * se, p1 - p2 + z * se])
    assert out.attrs["ci"] == 0.90


def test_wilson_coverage_on_simulated_binomials():
    """Coverage of the nominal 95% Wilson interval at p = 0.3, n = 60 over 2000 draws stays within 92-98%."""
    rng = np.random.default_rng(7)
    k = rng.binomial(60, 0.3, size=2000)
    out = wilson_interval(k, np.full(k.size, 60))
    coverage = ((out["ci_low"] <= 0.3) & (0.3 <= out["ci_high"])).mean()
    assert 0.92 <= coverage <= 0.98


def test_zero_trials_give_documented_nan():
    out = wilson_interval([3, 0], [10, 0])
    assert out["ci_low"].isna().tolist() == [False, True]
    assert "no trials" in out.attrs["nan_reason"]


@pytest.mark.parametrize(
    ("successes", "n", "message"),
    [(5, 3, "exceed"), (-1, 3, "non-negative"), (1.5, 3, "integers"), (np.nan, 3, "NaN"), ([1, 2], [3], "shape")],
)
def test_bad_counts_raise_one_line(successes, n, message):
    with pytest.raises(ValueError, match=message):
        wilson_interval(successes, n)


def test_bad_ci_raises():
    with pytest.raises(ValueError, match="strictly between 0 and 1"):
        clopper_pearson_interval(1, 2, ci=95)


def test_failure_rate_counts_every_non_ok_status():
    df = pd.DataFrame(
        {
            "model": ["a"] * 5 + ["b"] * 3,
            "status": ["ok", "refusal", "unparseable", "ok", "error", "ok", "ok", "ok"],
        }
    )
    out = failure_rate(df, status="status", by=["model"])
    assert out["n_failed"].tolist() == [3, 0]
    np.testing.assert_allclose(out["failure_rate"], [0.6, 0.0])
    expected = wilson_interval([3, 0], [5, 3])
    np.testing.assert_allclose(out[["ci_low", "ci_high"]], expected[["ci_low", "ci_high"]])
    overall = failure_rate(df, status="status")
    assert overall["n"].iloc[0] == 8 and overall["n_failed"].iloc[0] == 3


def test_failure_rate_refuses_missing_column():
    with pytest.raises(ValueError, match=r"columns \['state'\] not in data"):
        failure_rate(pd.DataFrame({"status": ["ok"]}), status="state")


def test_bootstrap_percentile_covers_known_mean_in_most_replications():
    """Percentile bootstrap of a normal mean (n = 40): 95% nominal coverage over 120 replications >= 88%."""
    rng = np.random.default_rng(3)
    hits = 0
    for _ in range(120):
        x = rng.normal(1.0, 2.0, size=40)
        out = bootstrap_ci([x], np.mean, method="percentile", n_resamples=500, seed=1, vectorized=True)
        hits += out["ci_low"].iloc[0] <= 1.0 <= out["ci_high"].iloc[0]
    assert hits / 120 >= 0.88


def test_bootstrap_constant_data_gives_nan_with_reason():
    out = bootstrap_ci([np.ones(10)], np.mean, seed=0)
    assert np.isnan(out["ci_low"].iloc[0])
    assert "degenerate" in out.attrs["nan_reason"]


def test_bootstrap_paired_difference_is_reproducible():
    x = np.arange(30.0)
    y = x + np.sin(x)
    a = bootstrap_ci([x, y], lambda u, v: np.mean(v - u), paired=True, seed=5, n_resamples=300)
    b = bootstrap_ci([x, y], lambda u, v: np.mean(v - u), paired=True, seed=5, n_resamples=300)
    pd.testing.assert_frame_equal(a, b)
    assert a["ci_low"].iloc[0] < np.mean(np.sin(x)) < a["ci_high"].iloc[0]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"method": "bca"}, "valid methods are BCa"), ({"n_resamples": 10}, ">= 100"), ({"paired": True}, "same length")],
)
def test_bootstrap_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        bootstrap_ci([np.arange(5.0), np.arange(6.0)], lambda a, b: a.mean() - b.mean(), **kwargs)
