"""Convergent validity: Fisher z against scipy, bootstrap coverage, disattenuation closed form, rank agreement."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from bias_validity.psychometrics.interval_kind import IntervalKind
from bias_validity.psychometrics.reference import compare_to_human
from bias_validity.psychometrics.validity import (
    INTERVAL_KINDS,
    convergent_validity,
    correlation_ci,
    disattenuate,
    rank_agreement,
)


def _bivariate(rng: np.random.Generator, rho: float, n: int) -> pd.DataFrame:
    z = rng.multivariate_normal([0, 0], [[1, rho], [rho, 1]], size=n)
    return pd.DataFrame({"a": z[:, 0], "b": z[:, 1]})


def test_pearson_fisher_interval_matches_scipy():
    """scipy.stats.pearsonr(...).confidence_interval() is the Fisher z interval."""
    data = _bivariate(np.random.default_rng(0), 0.5, 25)
    out = correlation_ci(data, x="a", y="b", ci=0.9, n_resamples=200, seed=0).set_index("interval")
    ref = stats.pearsonr(data["a"], data["b"]).confidence_interval(confidence_level=0.9)
    assert out.loc["fisher_z", ["ci_low", "ci_high"]].tolist() == pytest.approx([ref.low, ref.high])
    assert out.loc["fisher_z", "p_value"] == pytest.approx(stats.pearsonr(data["a"], data["b"]).pvalue)


def test_spearman_and_kendall_fisher_variances():
    """Fieller, Hartley & Pearson (1957): var(atanh rho_s) = 1.06/(n-3), var(atanh tau) = 0.437/(n-4)."""
    data = _bivariate(np.random.default_rng(1), 0.4, 30)
    z = stats.norm.ppf(0.975)
    for method, c, m in (("spearman", 1.06, 3), ("kendall", 0.437, 4)):
        row = correlation_ci(data, x="a", y="b", method=method, n_resamples=200, seed=0).iloc[0]
        expected = np.tanh(np.arctanh(row["r"]) + np.array([-1, 1]) * z * np.sqrt(c / (30 - m)))
        assert [row["ci_low"], row["ci_high"]] == pytest.approx(expected)


def test_correlation_intervals_cover_known_rho():
    """rho = 0.5, n = 40, 120 replications: Fisher z covers in 90-99%, BCa bootstrap in >= 85%."""
    rng = np.random.default_rng(2)
    hits = {"fisher_z": 0, "bootstrap_bca": 0}
    for _ in range(120):
        out = correlation_ci(_bivariate(rng, 0.5, 40), x="a", y="b", n_resamples=400, seed=1)
        for _, row in out.iterrows():
            hits[row["interval"]] += row["ci_low"] <= 0.5 <= row["ci_high"]
    assert 0.90 <= hits["fisher_z"] / 120 <= 0.99
    assert hits["bootstrap_bca"] / 120 >= 0.85


def test_correlation_drops_missing_pairs_and_reports_them():
    data = pd.DataFrame({"a": [1.0, 2.0, np.nan, 4.0, 5.0, 6.0], "b": [1.0, 3.0, 2.0, np.nan, 4.0, 7.0]})
    out = correlation_ci(data, x="a", y="b", n_resamples=200, seed=0)
    assert out["n"].iloc[0] == 4 and out.attrs["n_dropped"] == 2


def test_constant_measure_gives_nan_with_reason():
    data = pd.DataFrame({"a": [1.0, 1.0, 1.0, 1.0, 1.0], "b": [1.0, 2.0, 3.0, 4.0, 5.0]})
    out = correlation_ci(data, x="a", y="b", n_resamples=200)
    assert out["r"].isna().all() and "'a' is constant" in out.attrs["nan_reason"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"method": "pearsons"}, "valid methods are pearson, spearman, kendall"), ({"x": "c"}, r"columns \['c'\]")],
)
def test_correlation_bad_arguments(kwargs, message):
    data = pd.DataFrame({"a": [1.0, 2.0, 3.0, 4.0], "b": [2.0, 1.0, 4.0, 3.0]})
    with pytest.raises(ValueError, match=message):
        correlation_ci(data, **{"x": "a", "y": "b", **kwargs})


def test_disattenuate_closed_form_and_flags():
    """Spearman (1904): r / sqrt(rxx * ryy); bounds scale by the same factor."""
    out = disattenuate([0.3, 0.3, 0.6, 0.2], [0.81, 0.3, 0.5, 0.0], [0.64, 0.9, 0.4, 0.9], ci_low=0.1, ci_high=0.5)
    np.testing.assert_allclose(out["r_disattenuated"].iloc[:3], [0.3 / 0.72, 0.3 / np.sqrt(0.27), 0.6 / np.sqrt(0.2)])
    assert out["ci_high"].iloc[0] == pytest.approx(0.5 / 0.72)
    assert out["flagged"].tolist() == [False, True, True, True]
    assert "below 0.5" in out["reason"].iloc[1]
    assert "exceeds 1" in out["reason"].iloc[2]
    assert np.isnan(out["r_disattenuated"].iloc[3]) and "not positive" in out["reason"].iloc[3]


def test_disattenuate_recovers_true_score_correlation():
    """True scores correlate 0.6; each measure has reliability 0.5 (error variance = true variance), so the
    observed r is about 0.3 and the corrected value about 0.6 (n = 20,000)."""
    rng = np.random.default_rng(3)
    t = rng.multivariate_normal([0, 0], [[1, 0.6], [0.6, 1]], size=20000)
    x, y = t[:, 0] + rng.normal(size=20000), t[:, 1] + rng.normal(size=20000)
    observed = np.corrcoef(x, y)[0, 1]
    corrected = disattenuate(observed, 0.5, 0.5, min_reliability=0.4)["r_disattenuated"].iloc[0]
    assert corrected == pytest.approx(0.6, abs=0.03)


def test_disattenuate_rejects_impossible_values():
    with pytest.raises(ValueError, match="correlations must lie in"):
        disattenuate(1.2, 0.8, 0.8)
    with pytest.raises(ValueError, match="must not be NaN"):
        disattenuate(np.nan, 0.8, 0.8)


def test_convergent_validity_pairs_and_corrects():
    rng = np.random.default_rng(4)
    true = rng.normal(size=50)
    rows = [(i, m, true[i] + rng.normal(0, 0.5)) for m in ("implicit", "logprob", "embedding") for i in range(50)]
    data = pd.DataFrame(rows, columns=["item", "method", "score"])
    rel = {"implicit": 0.8, "logprob": 0.8, "embedding": 0.4}
    out = convergent_validity(data, units="item", methods="method", scores="score", reliabilities=rel, seed=0)
    assert len(out) == 6
    assert set(zip(out["x"], out["y"], strict=True)) == {
        ("embedding", "implicit"),
        ("embedding", "logprob"),
        ("implicit", "logprob"),
    }
    row = out[(out["x"] == "implicit") & (out["y"] == "logprob")].iloc[0]
    assert row["r_disattenuated"] == pytest.approx(row["r"] / 0.8)
    assert out.loc[out["x"] == "embedding", "flagged"].all()
    with pytest.raises(ValueError, match=r"reliabilities lack methods \['logprob'\]"):
        convergent_validity(
            data, units="item", methods="method", scores="score", reliabilities={"implicit": 1, "embedding": 1}
        )


def test_rank_agreement_exact_values_and_small_n():
    """Perfectly reversed ranks: rho = tau = -1; n = 3 gives a NaN Fisher interval with the reason."""
    data = pd.DataFrame({"llm": [1.0, 2.0, 3.0, 4.0, 5.0], "human": [5.0, 4.0, 3.0, 2.0, 1.0]})
    out = rank_agreement(data, estimate="llm", reference="human", n_resamples=200, seed=0)
    assert out["r"].tolist() == pytest.approx([-1, -1, -1, -1])
    assert out.loc[(out["method"] == "kendall"), "p_value"].iloc[0] == pytest.approx(2 / 120)
    small = rank_agreement(data.iloc[:3], estimate="llm", reference="human", n_resamples=200, seed=0)
    assert small.loc[small["interval"] == "fisher_z", "ci_low"].isna().all()
    assert "Fisher z needs" in small.attrs["nan_reason"]


def test_correlation_rows_carry_their_interval_kind_beside_the_old_label():
    data = _bivariate(np.random.default_rng(0), 0.5, 40)
    out = correlation_ci(data, x="a", y="b", n_resamples=200, seed=0)
    assert out["interval"].tolist() == ["fisher_z", "bootstrap_bca"]  # the labels other code reads stay
    assert out["kind"].tolist() == [IntervalKind.FISHER_Z, IntervalKind.BCA]
    assert all(INTERVAL_KINDS[label] is kind for label, kind in zip(out["interval"], out["kind"], strict=True))
    assert list(out.columns).index("kind") == list(out.columns).index("interval") + 1
    long = pd.DataFrame(
        {"item": list(range(40)) * 2, "method": ["x"] * 40 + ["y"] * 40, "score": [*data["a"], *data["b"]]}
    )
    pairs = convergent_validity(long, units="item", methods="method", scores="score", n_resamples=200, seed=0)
    assert pairs["kind"].tolist() == [IntervalKind.FISHER_Z, IntervalKind.BCA]
    ranks = rank_agreement(data, estimate="a", reference="b", n_resamples=200, seed=0)
    assert ranks["kind"].tolist() == [IntervalKind.FISHER_Z, IntervalKind.BCA] * 2
    llm = pd.DataFrame({"dimension": ["age", "disability", "race"], "d": [0.9, 1.3, 0.4]})
    human = compare_to_human(llm, dimension="dimension", effect="d", n_resamples=200, seed=0)
    assert set(human["kind"]) == {IntervalKind.FISHER_Z, IntervalKind.BCA}
