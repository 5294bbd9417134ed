"""Framing (ablation retained share) and position-bias tests on simulated answers with known effects."""

import numpy as np
import pandas as pd
import pytest

from bias_validity.psychometrics.framing import FramingVerdict, ablation_retained_share, position_bias
from bias_validity.psychometrics.interval_kind import IntervalKind
from bias_validity.psychometrics.intervals import newcombe_diff_interval


def _answers(rng, p_implicit, p_ablated, n):
    return pd.DataFrame(
        {
            "method": ["implicit"] * n + ["ablated"] * n,
            "consistent": np.concatenate([rng.random(n) < p_implicit, rng.random(n) < p_ablated]).astype(int),
        }
    )


def test_ratio_interval_covers_known_ratio():
    """SC 0.85 -> 0.64: R (0.14 / 0.35) = 0.4; 300 answers per condition; the answer-bootstrap, t-corrected
    interval covers it in 88-99% of 150."""
    rng = np.random.default_rng(0)
    hits = 0
    for _ in range(150):
        out = ablation_retained_share(
            _answers(rng, 0.85, 0.64, 300), condition="method", outcome="consistent", n_resamples=500, seed=1
        )
        hits += out["ci_low"].iloc[0] <= 0.4 <= out["ci_high"].iloc[0]
    assert 0.88 <= hits / 150 <= 0.99


@pytest.mark.parametrize(
    ("p_implicit", "p_ablated", "verdict"),
    [
        (0.9, 0.55, FramingVerdict.CONTROLLABLE),
        (0.9, 0.88, FramingVerdict.ROBUST),
        (0.9, 0.70, FramingVerdict.INCONCLUSIVE),
        (0.52, 0.50, FramingVerdict.NOT_ESTIMABLE),
    ],
)
def test_verdicts(p_implicit, p_ablated, verdict):
    n = 1000
    k1, k2 = round(p_implicit * n), round(p_ablated * n)
    df = pd.DataFrame(
        {
            "method": ["implicit"] * n + ["ablated"] * n,
            "consistent": [1] * k1 + [0] * (n - k1) + [1] * k2 + [0] * (n - k2),
        }
    )
    out = ablation_retained_share(df, condition="method", outcome="consistent", n_resamples=500, seed=0)
    assert out["ratio"].iloc[0] == pytest.approx((p_ablated - 0.5) / (p_implicit - 0.5))
    assert out["verdict"].iloc[0] == verdict


def test_cluster_bootstrap_widens_interval_under_item_heterogeneity():
    """Implicit SC 0.8 for every item, ablated SC 0.2 or 0.9 by item (overdispersed across items): resampling
    items sees the between-item variance that resampling answers as if independent misses, so its interval is
    wider (the naive one understates the uncertainty)."""
    rng = np.random.default_rng(2)
    rows = []
    for i in range(30):
        p_ablated = 0.2 if i % 2 else 0.9
        rows += [(i, "implicit", int(rng.random() < 0.8)) for _ in range(20)]
        rows += [(i, "ablated", int(rng.random() < p_ablated)) for _ in range(20)]
    df = pd.DataFrame(rows, columns=["item", "method", "consistent"])
    plain = ablation_retained_share(df, condition="method", outcome="consistent", n_resamples=500, seed=0)
    clustered = ablation_retained_share(
        df, condition="method", outcome="consistent", cluster="item", n_resamples=500, seed=0
    )
    assert plain["ratio"].iloc[0] == clustered["ratio"].iloc[0]
    width = lambda o: o["ci_high"].iloc[0] - o["ci_low"].iloc[0]  # noqa: E731
    assert width(clustered) > width(plain)
    assert clustered.attrs["cluster"] == "item"


def test_ablation_bad_input():
    df = pd.DataFrame({"method": ["implicit", "implicit", "explicit"], "consistent": [1, 0, 1]})
    with pytest.raises(ValueError, match=r"lacks \['ablated'\]"):
        ablation_retained_share(df, condition="method", outcome="consistent")
    bad = pd.DataFrame({"method": ["implicit", "ablated"] * 2, "consistent": [1, 0, 3, 1]})
    with pytest.raises(ValueError, match="only 0 and 1"):
        ablation_retained_share(bad, condition="method", outcome="consistent")
    nan = pd.DataFrame({"method": ["implicit", "ablated"] * 2, "consistent": [1, 0, np.nan, 1]})
    with pytest.raises(ValueError, match="1 missing values"):
        ablation_retained_share(nan, condition="method", outcome="consistent")


def test_position_bias_recovers_first_position_preference():
    """A preference for the first-listed candidate raises the SC when the consistent candidate comes first (AB,
    SC 0.75) and lowers it otherwise (BA, SC 0.45): the difference BA - AB = -0.30 is covered by the Newcombe
    interval in 90-99% of 200 replications of 300 answers per order."""
    rng = np.random.default_rng(3)
    hits = 0
    for _ in range(200):
        df = pd.DataFrame(
            {
                "order": ["AB"] * 300 + ["BA"] * 300,
                "consistent": np.concatenate([rng.random(300) < 0.75, rng.random(300) < 0.45]).astype(int),
            }
        )
        out = position_bias(df, order="order", outcome="consistent")
        hits += out["ci_low"].iloc[0] <= -0.30 <= out["ci_high"].iloc[0]
    assert out["level"].iloc[0] == "BA" and out["reference"].iloc[0] == "AB"
    assert out.attrs["homogeneity_test"]["p_value"] < 0.01
    assert 0.90 <= hits / 200 <= 0.99


def test_position_bias_matches_newcombe_for_each_level():
    df = pd.DataFrame(
        {
            "order": ["a"] * 10 + ["b"] * 10 + ["c"] * 10,
            "consistent": [1] * 9 + [0] + [1] * 3 + [0] * 7 + [1] * 6 + [0] * 4,
        }
    )
    out = position_bias(df, order="order", outcome="consistent", reference="b")
    expected = newcombe_diff_interval([9, 6], [10, 10], [3, 3], [10, 10])
    np.testing.assert_allclose(out[["ci_low", "ci_high"]], expected[["ci_low", "ci_high"]])
    assert out["level"].tolist() == ["a", "c"]
    with pytest.raises(ValueError, match="reference 'z' not among"):
        position_bias(df, order="order", outcome="consistent", reference="z")
    with pytest.raises(ValueError, match="at least 2 levels"):
        position_bias(df[df["order"] == "a"], order="order", outcome="consistent")


def test_ablation_stamps_fieller_over_item_cluster_or_answer_bootstrap_kind():
    rng = np.random.default_rng(4)
    df = _answers(rng, 0.85, 0.64, 100).assign(item=lambda d: (np.arange(len(d)) % 10).astype(str))
    kw = dict(condition="method", outcome="consistent", n_resamples=200, seed=0)
    by_item = ablation_retained_share(df, cluster="item", **kw)
    by_answer = ablation_retained_share(df, **kw)
    assert by_item.attrs["interval"] is IntervalKind.FIELLER_ITEM_CLUSTER
    assert by_answer.attrs["interval"] is IntervalKind.FIELLER_ANSWER
    few = ablation_retained_share(df.iloc[[0, 1, 100, 101]], **kw)  # 4 answers: no interval, the kind still given
    assert few.attrs["interval"] is IntervalKind.FIELLER_ANSWER
    assert few["verdict"].iloc[0] == FramingVerdict.NOT_ESTIMABLE


def test_ablation_known_answer_and_its_doctest_verdict_unchanged():
    df = pd.DataFrame(
        {"method": ["implicit"] * 100 + ["ablated"] * 100, "consistent": [1] * 90 + [0] * 10 + [1] * 55 + [0] * 45}
    )
    out = ablation_retained_share(df, condition="method", outcome="consistent", seed=0)
    assert out["ratio"].iloc[0] == pytest.approx(0.125)
    assert out["verdict"].iloc[0] == FramingVerdict.CONTROLLABLE


def test_position_bias_stamps_newcombe():
    df = pd.DataFrame({"order": ["AB"] * 70 + ["BA"] * 80, "consistent": [1] * 56 + [0] * 14 + [1] * 48 + [0] * 32})
    out = position_bias(df, order="order", outcome="consistent", reference="BA")
    assert out.attrs["interval"] is IntervalKind.NEWCOMBE
    assert out.attrs["method"] == "newcombe"
    assert out[["ci_low", "ci_high"]].iloc[0].round(4).tolist() == [0.0524, 0.3339]
