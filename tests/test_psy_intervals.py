"""Interval functions against published worked examples, closed forms and simulated coverage."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from bias_validity import psychometrics
from bias_validity.psychometrics.bootstrap import BOOTSTRAP_KINDS, bootstrap_ci
from bias_validity.psychometrics.clustered import ClusterInterval, cluster_counts, cluster_interval
from bias_validity.psychometrics.forms import form_agreement, form_shifts
from bias_validity.psychometrics.interval_kind import IntervalKind
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


@pytest.mark.parametrize(
    ("out", "kind", "method"),
    [
        (wilson_interval([3, 0], [5, 3]), IntervalKind.WILSON, "wilson"),
        (clopper_pearson_interval(81, 263), IntervalKind.CLOPPER_PEARSON, "clopper-pearson"),
        (newcombe_diff_interval(56, 70, 48, 80), IntervalKind.NEWCOMBE, "newcombe"),
        (agresti_caffo_diff_interval(56, 70, 48, 80), IntervalKind.AGRESTI_CAFFO, "agresti-caffo"),
        (failure_rate(pd.DataFrame({"status": ["ok", "error", "ok"]}), status="status"), IntervalKind.WILSON, "wilson"),
    ],
    ids=["wilson", "clopper-pearson", "newcombe", "agresti-caffo", "failure_rate"],
)
def test_interval_functions_stamp_their_kind_beside_the_old_method_label(out, kind, method):
    assert out.attrs["interval"] is kind
    assert out.attrs["method"] == method  # the label other code reads stays as it was


@pytest.mark.parametrize("method", ["BCa", "percentile", "basic"])
def test_bootstrap_ci_stamps_the_kind_of_its_method(method):
    out = bootstrap_ci([np.arange(20.0)], np.mean, method=method, n_resamples=200, seed=1)
    expected = {"BCa": IntervalKind.BCA, "percentile": IntervalKind.PERCENTILE, "basic": IntervalKind.BASIC}[method]
    assert out.attrs["interval"] is expected is BOOTSTRAP_KINDS[method]
    assert out.attrs["method"] == method


def test_forms_stamp_design_effect_wilson_and_cluster_wald():
    cells = pd.DataFrame(
        {"form": ["A"] * 4 + ["B"] * 4, "item": ["1", "2", "3", "4"] * 2, "k": [10, 9, 2, 1, 8, 7, 0, 0], "n": [10] * 8}
    )
    kw = dict(forms="form", clusters="item", successes="k", trials="n")
    assert form_agreement(cells, **kw).attrs["interval"] is IntervalKind.WILSON_DESIGN_EFFECT
    assert form_agreement(cells[cells["form"] == "A"], **kw).attrs["interval"] is IntervalKind.WILSON_DESIGN_EFFECT
    assert form_shifts(cells, **kw).attrs["interval"] is IntervalKind.WALD_CLUSTER


def _item_counts(n_items: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    return {"k": rng.binomial(20, rng.uniform(0.5, 0.9, n_items)).astype(float), "n": np.full(n_items, 20.0)}


def test_cluster_interval_kind_follows_its_unit_and_it_still_unpacks_as_four():
    counts = _item_counts(30)
    share = lambda t: t["k"] / t["n"]  # noqa: E731
    items = cluster_interval(counts, share, seed=0)
    answers = cluster_interval(counts, share, seed=0, unit="answers")
    assert isinstance(items, ClusterInterval)
    assert items.kind is IntervalKind.ITEM_CLUSTER_T and items.unit == "items"
    assert answers.kind is IntervalKind.ANSWER_BOOTSTRAP_T and answers.unit == "answers"
    est, low, high, why = items
    assert (est, low, high, why) == (items.estimate, items.low, items.high, items.reason) == tuple(items)
    assert len(items) == 4 and items[0] == est and items[1:3] == (low, high) and items[-1] == why == ""
    assert est == pytest.approx(counts["k"].sum() / counts["n"].sum())
    assert low < est < high
    # the unit names the kind and the reason only: the interval is the same numbers
    assert tuple(answers) == tuple(items)


def test_cluster_interval_too_few_clusters_keeps_its_kind_and_reason():
    counts = _item_counts(3)
    share = lambda t: t["k"] / t["n"]  # noqa: E731
    est, low, high, why = few = cluster_interval(counts, share, unit="answers")
    assert np.isnan(low) and np.isnan(high) and why == "3 answers; a bootstrap interval needs >= 5"
    assert few.kind is IntervalKind.ANSWER_BOOTSTRAP_T
    assert cluster_interval(counts, share).kind is IntervalKind.ITEM_CLUSTER_T


def test_cluster_interval_known_answer_unchanged():
    """estimate +/- t_{G-1} * bootstrap SE * sqrt(G / (G - 1)), the bootstrap SE being scipy's (same seed)."""
    counts = _item_counts(12)
    res = stats.bootstrap(
        (counts["k"], counts["n"]),
        lambda k, n, axis=-1: k.sum(axis=axis) / n.sum(axis=axis),
        paired=True,
        vectorized=True,
        method="percentile",
        n_resamples=2000,
        rng=np.random.default_rng(0),
    )
    est = counts["k"].sum() / counts["n"].sum()
    half = stats.t.ppf(0.975, 11) * res.standard_error * np.sqrt(12 / 11)
    out = cluster_interval(counts, lambda t: t["k"] / t["n"], seed=0)
    assert tuple(out)[:3] == pytest.approx((est, est - half, est + half))


def test_cluster_names_are_exported_lazily():
    assert psychometrics.ClusterInterval is ClusterInterval
    assert psychometrics.IntervalKind is IntervalKind
    frame = pd.DataFrame({"item": list("aabbccddee"), "m": ["x"] * 10, "y": [1, 0] * 5})
    counts = cluster_counts(frame, cluster="item", condition="m", outcome="y")
    assert psychometrics.cluster_interval(counts, lambda t: t["k:x"] / t["n:x"], n_resamples=200).kind == (
        "item-cluster bootstrap, t-corrected"
    )
