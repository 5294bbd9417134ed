"""The retained share's interval: Fieller's, from the item-cluster bootstrap covariance of the two SCs.

Simulated dimensions with a known population R = (E p_ablated - 0.5) / (E p_implicit - 0.5): item probabilities are
drawn from Beta distributions with known means, so the truth is exact, and each item is asked a few times under
both prompts.
"""

import numpy as np
import pandas as pd
import pytest

from bias_validity.psychometrics.clustered import cluster_counts, cluster_ratio_interval
from bias_validity.psychometrics.estimands import chance_overlap
from bias_validity.psychometrics.framing import FramingVerdict, ablation_retained_share


def _dimension(rng, n_items, answers, mean_implicit, mean_ablated, concentration=8.0):
    """Per item: ``answers`` implicit and ``answers`` ablated 0/1 answers from Beta-distributed item SCs."""
    p_imp = rng.beta(mean_implicit * concentration, (1 - mean_implicit) * concentration, n_items)
    p_abl = rng.beta(mean_ablated * concentration, (1 - mean_ablated) * concentration, n_items)
    rows = []
    for i in range(n_items):
        rows += [(f"i{i}", "implicit", int(rng.random() < p_imp[i])) for _ in range(answers)]
        rows += [(f"i{i}", "ablated", int(rng.random() < p_abl[i])) for _ in range(answers)]
    return pd.DataFrame(rows, columns=["item_id", "method", "consistent"])


def _share(data, **kw):
    return ablation_retained_share(data, condition="method", outcome="consistent", cluster="item_id", **kw)


def test_no_cell_clear_of_chance_is_left_without_an_interval():
    """10 items x 4 answers: resamples whose implicit SC is exactly 0.5 are common. Every cell whose implicit SC's
    interval clears the chance band gets a finite interval of R; only the guard makes a cell not estimable."""
    rng = np.random.default_rng(21)
    cleared = not_estimable = 0
    for _ in range(120):
        out = _share(_dimension(rng, 10, 4, 0.78, 0.62), n_resamples=1000, seed=0)
        row = out.iloc[0]
        if chance_overlap(row["sc_implicit_low"], row["sc_implicit_high"], 0.05):
            assert row["verdict"] == FramingVerdict.NOT_ESTIMABLE
            continue
        cleared += 1
        not_estimable += row["verdict"] == FramingVerdict.NOT_ESTIMABLE
        assert np.isfinite(row["ci_low"]) and np.isfinite(row["ci_high"]) and row["ci_low"] < row["ci_high"]
    assert cleared >= 60, cleared
    assert not_estimable == 0


@pytest.mark.parametrize(("n_items", "answers"), [(12, 6), (30, 4)])
def test_fieller_interval_covers_the_population_ratio(n_items, answers):
    """Population R = (0.62 - 0.5) / (0.8 - 0.5) = 0.4; 200 dimensions, 95% intervals where estimable: coverage
    0.90-0.99 (a binomial 95% band around 0.95 for 200 draws is 0.92-0.98)."""
    rng = np.random.default_rng(n_items)
    hits = total = 0
    for _ in range(200):
        row = _share(_dimension(rng, n_items, answers, 0.8, 0.62), n_resamples=500, seed=1).iloc[0]
        if row["verdict"] == FramingVerdict.NOT_ESTIMABLE:
            continue
        total += 1
        hits += row["ci_low"] <= 0.4 <= row["ci_high"]
    assert total >= 170
    assert 0.90 <= hits / total <= 0.99, (hits, total)


def test_fieller_roots_solve_the_quadratic_and_the_denominator_interval_decides_boundedness():
    """At each bound theta, (a - theta b)^2 = q^2 (Vaa - 2 theta Vab + theta^2 Vbb): checked by rebuilding the
    covariance from the same resamples; a denominator at chance gives an unbounded set (NaN, with the reason)."""
    rng = np.random.default_rng(3)
    data = _dimension(rng, 15, 6, 0.8, 0.6)
    counts = cluster_counts(data, cluster="item_id", condition="method", outcome="consistent")

    def num(t):
        return t["k:ablated"] / t["n:ablated"] - 0.5

    def den(t):
        return t["k:implicit"] / t["n:implicit"] - 0.5

    res = cluster_ratio_interval(counts, num, den, n_resamples=800, seed=5)
    assert res.low < res.estimate < res.high
    # the implicit SC's interval is the denominator's, shifted by 0.5, and the same as ablation_retained_share's
    out = _share(data, n_resamples=800, seed=5).iloc[0]
    assert out["sc_implicit_low"] == pytest.approx(res.denominator_low + 0.5)
    assert (out["ci_low"], out["ci_high"]) == pytest.approx((res.low, res.high))
    flat = {k: v.copy() for k, v in counts.items()}
    flat["k:implicit"] = flat["n:implicit"] / 2  # implicit SC exactly 0.5 in every item
    unbounded = cluster_ratio_interval(flat, num, den, n_resamples=800, seed=5)
    assert np.isnan(unbounded.low) and "contains 0" in unbounded.reason
