"""Q2 reads its threshold and compares like with like, on simulated tables with known truth.

- The floor is checked before zero: an interval above 0 but wholly below ``convergent_r`` (0.3), e.g.
  [0.05, 0.20], is "not convergent", whether it comes from the latent posterior or from the item correlations.
- The classical correlations are within dimension, as the latent one is: dimension means that differ on both
  methods, with items uncorrelated within each dimension, do not make the measures "convergent"; items that
  correlate within dimension still do.
- Q2 reads only Fisher-z intervals and runs no bootstrap.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from scipy.special import expit

from bias_validity.analyses.config import AnalysisConfig
from bias_validity.analyses.questions.convergent import convergent, item_scores
from bias_validity.analyses.result import Verdict
from bias_validity.psychometrics import validity
from bias_validity.psychometrics.validity import convergent_validity, correlation_ci
from bias_validity.simulate import answer_row, rows_to_table, simulate_responses, valid_orders

SEEDS = range(5)
#: Dimension means far apart on both methods (logit of the implicit SC, and the logprob score).
_MEANS = {"age": -2.0, "race": 0.0, "gender_career": 2.0}


def _study(*, within_r: float, n_items: int, seed: int, means=_MEANS, reps: int = 5, item_sd: float = 1.0):
    """Implicit and logprob rows of one model: per dimension d and item i, an effect u_i ~ N(0, item_sd) moves the
    implicit answers (P(consistent) = expit(mean_d + u_i)); the logprob score is mean_d + within_r * u_i +
    sqrt(1 - within_r^2) * v_i with v_i ~ N(0, item_sd) independent. ``within_r`` = 0: items uncorrelated within
    every dimension, however far apart the dimension means."""
    rng = np.random.default_rng(seed)
    rows = []
    for dim, mean in means.items():
        u = rng.normal(0.0, item_sd, n_items)
        v = rng.normal(0.0, item_sd, n_items)
        logprob = mean + within_r * u + np.sqrt(1 - within_r**2) * v
        for i in range(n_items):
            item = f"{dim}-{i + 1:03d}"
            p = expit(mean + u[i])
            key = dict(model="sim:m", dimension=dim, item_id=item, session=1)
            for order in valid_orders("implicit"):
                for rep in range(reps):
                    c = int(rng.random() < p)
                    rows.append(
                        answer_row(
                            **key, method="implicit", template_id="implicit-1", order=order, rep=rep, consistent=c
                        )
                    )
            for order in valid_orders("logprob"):
                score = float(logprob[i] + rng.normal(0.0, 0.05))
                rows.append(
                    answer_row(
                        **key,
                        method="logprob",
                        template_id="sentence-1",
                        order=order,
                        rep=0,
                        consistent=int(score > 0),
                        score=score,
                    )
                )
    return rows_to_table(rows, source="test_q2")


def _deciding(result):
    figures = result.figures
    return figures[(figures["measure"] == "implicit~logprob") & (figures["note"] == "decides")].iloc[0]


# (a) the floor before zero


@pytest.mark.parametrize("low, high", [(0.05, 0.20), (0.01, 0.29)])
def test_a_latent_interval_above_zero_but_below_the_floor_is_not_convergent(low, high):
    """An interval above 0 but wholly below the floor of 0.3 is 'not convergent': the floor is checked first."""
    t = simulate_responses(dimensions=["age"], n_items=6, seed=2)
    post = pd.DataFrame(
        [
            dict(
                quantity="latent_correlation",
                model="",
                dimension="",
                method="implicit~logprob",
                mean=(low + high) / 2,
                hdi_low=low,
                hdi_high=high,
                p_direction=0.99,
            )
        ]
    )
    res = convergent(t, posterior=post)
    assert res.verdict is Verdict.NOT_SUPPORTED
    assert res.verdicts["finding"].tolist() == ["not convergent"]
    assert "wholly below 0.3 = not convergent" in res.verdicts["reason"].iloc[0]


def test_the_floor_is_read_from_the_config():
    """The same interval [0.05, 0.20] against a floor of 0.1: not wholly below it, above 0 -> convergent."""
    from bias_validity.psychometrics.estimands import Thresholds

    t = simulate_responses(dimensions=["age"], n_items=6, seed=2)
    row = dict(quantity="latent_correlation", model="", dimension="", method="implicit~logprob", mean=0.12)
    post = pd.DataFrame([{**row, "hdi_low": 0.05, "hdi_high": 0.20, "p_direction": 0.99}])
    low_floor = AnalysisConfig(thresholds=Thresholds(convergent_r=0.1))
    assert convergent(t, posterior=post, config=low_floor).verdict is Verdict.SUPPORTED
    assert convergent(t, posterior=post).verdict is Verdict.NOT_SUPPORTED


def test_a_small_true_item_correlation_whose_interval_is_above_zero_is_not_convergent():
    """One dimension, 400 items, true logprob~item-effect correlation 0.2 (observed Spearman lower: the implicit SC
    is noisy): the Fisher-z interval lies above 0 and below 0.3, so the verdict is 'not supported'."""
    res = convergent(_study(within_r=0.2, n_items=400, seed=3, means={"age": 0.0}, reps=3))
    r = _deciding(res)
    assert 0 < r["ci_low"] and r["ci_high"] < 0.3  # the case the rule order decides
    assert res.verdict is Verdict.NOT_SUPPORTED and res.verdicts["finding"].tolist() == ["not convergent"]


# (b) within dimension, as the latent correlation is


def test_dimension_means_alone_do_not_make_a_measure_convergent():
    """Items uncorrelated within each dimension, dimension means far apart on both methods: the pooled Spearman r
    is high, the within-dimension r is ~0, never convergent, and 'not convergent' (interval wholly below 0.3) in
    most seeds."""
    findings = []
    for seed in SEEDS:
        t = _study(within_r=0.0, n_items=50, seed=seed)
        wide = item_scores(t).pivot_table(index="item_id", columns="method", values="score")
        assert stats.spearmanr(wide["implicit"], wide["logprob"]).statistic > 0.6, seed  # pooled: the means alone
        res = convergent(t)
        r = _deciding(res)
        assert abs(r["estimate"]) < 0.25 and r["ci_low"] < 0 < r["ci_high"], seed
        assert r["n"] == 150
        assert "within 3 dimensions" in res.verdicts["reason"].iloc[0]
        findings.append(res.verdicts["finding"].iloc[0])
    assert "convergent" not in findings
    assert findings.count("not convergent") >= 4, findings


def test_items_that_correlate_within_dimension_are_convergent():
    """The same design with a within-dimension correlation of 0.8: convergent in most seeds."""
    findings = [convergent(_study(within_r=0.8, n_items=20, seed=seed)).verdicts["finding"].iloc[0] for seed in SEEDS]
    assert findings.count("convergent") >= 4, findings


def test_the_within_group_correlation_is_the_ancova_partial_correlation():
    """Pearson with groups = the correlation of the residuals on group dummies, its p the ANCOVA slope's t test on
    n - g - 1 df (Bland & Altman 1995); one group gives the ordinary correlation; Spearman ranks within group."""
    rng = np.random.default_rng(1)
    g = np.repeat(np.arange(4), 10)
    a = rng.normal(size=40) + 3 * g
    b = 0.5 * a + rng.normal(size=40) - 2 * g
    data = pd.DataFrame({"a": a, "b": b, "g": g, "one": 0})
    dummies = np.column_stack([np.ones(40)] + [(g == k).astype(float) for k in range(1, 4)])
    resid = [v - dummies @ np.linalg.lstsq(dummies, v, rcond=None)[0] for v in (a, b)]
    within = correlation_ci(data, x="a", y="b", groups="g", bootstrap=False)
    assert within["r"].iloc[0] == pytest.approx(np.corrcoef(*resid)[0, 1])
    assert within.attrs["df"] == 35 and within.attrs["n_groups"] == 4
    r = within["r"].iloc[0]
    half = stats.norm.ppf(0.975) * np.sqrt(1 / (40 - 4 + 1 - 3))
    assert within["ci_low"].iloc[0] == pytest.approx(np.tanh(np.arctanh(r) - half))
    for method in ("pearson", "spearman"):
        plain = correlation_ci(data, x="a", y="b", method=method, bootstrap=False)
        one = correlation_ci(data, x="a", y="b", method=method, groups="one", bootstrap=False)
        cols = ["r", "p_value", "ci_low", "ci_high"]
        np.testing.assert_allclose(one[cols].to_numpy(float), plain[cols].to_numpy(float))
    ranked = data.assign(a=data.groupby("g")["a"].rank(), b=data.groupby("g")["b"].rank())
    spearman = correlation_ci(data, x="a", y="b", method="spearman", groups="g", bootstrap=False)
    assert spearman["r"].iloc[0] == pytest.approx(
        correlation_ci(ranked, x="a", y="b", groups="g", bootstrap=False)["r"].iloc[0]
    )
    with pytest.raises(ValueError, match="bootstrap=False"):
        correlation_ci(data, x="a", y="b", groups="g")
    with pytest.raises(ValueError, match="kendall"):
        correlation_ci(data, x="a", y="b", method="kendall", groups="g", bootstrap=False)


# speed: no bootstrap


def test_q2_runs_no_bootstrap_and_shows_only_fisher_z_intervals(monkeypatch):
    """Q2 reads only the Fisher-z rows; before, every method pair also ran a 2000-resample BCa bootstrap."""

    def refuse(*args, **kwargs):
        raise AssertionError("Q2 ran a bootstrap")

    monkeypatch.setattr(validity, "_bootstrap_interval", refuse)
    res = convergent(simulate_responses(dimensions=["age", "disability", "race"], seed=0))
    figures = res.figures
    classical = figures[~figures["measure"].str.startswith("latent")]
    assert len(classical) and (classical["interval"] == "Fisher z").all()
    assert figures.attrs["bootstrap"] is False and figures.attrs["within"] == "dimension"
    assert res.verdict is Verdict.SUPPORTED


def test_bootstrap_false_gives_the_fisher_z_rows_alone():
    data = pd.DataFrame({"item": list(range(6)) * 2, "method": ["implicit"] * 6 + ["logprob"] * 6})
    data["score"] = [0.9, 0.7, 0.8, 0.4, 0.6, 0.3, 1.1, 0.8, 0.9, 0.1, 0.5, 0.0]
    both = convergent_validity(data, units="item", methods="method", scores="score", n_resamples=200, seed=0)
    fisher = convergent_validity(data, units="item", methods="method", scores="score", bootstrap=False)
    assert fisher["interval"].tolist() == ["fisher_z"] and fisher.attrs["n_resamples"] is None
    cols = ["r", "ci_low", "ci_high"]
    pd.testing.assert_frame_equal(fisher[cols], both[both["interval"] == "fisher_z"][cols].reset_index(drop=True))
