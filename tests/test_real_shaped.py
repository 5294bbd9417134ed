"""The hierarchical model on a study shaped like published multi-model ones, which it did not generate: four base and
tuned models that react to the same wordings and items in their own ways (model x wording SD 1.5, model x item SD 1
on the logit scale), unbalanced wordings, two models never asked some of them, Likert statements with their
reversals and per-model acquiescence (:func:`bias_validity.simulate.real_shaped.simulate_real_shaped`).

Fitted with each model's own deviations (``FitConfig.unit_effects``, the default), its predictive check fits every
method, its new-item gaps cover the truth, and its SCs and gaps agree with the classical ones, which weigh answers
the same way (``ESTIMANDS``: by answer).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import spearmanr

from bias_validity.analyses.config import AnalysisConfig
from bias_validity.analyses.fit import fit_study
from bias_validity.analyses.questions.gap import gap
from bias_validity.analyses.study import sc_counts
from bias_validity.psychometrics.bayes import FitConfig
from bias_validity.psychometrics.bayes.ppc import share_outside
from bias_validity.simulate.real_shaped import simulate_real_shaped

Z = 1.959964  # a 95% interval's half-width in standard errors


@pytest.fixture(scope="module")
def study():
    return simulate_real_shaped(n_items=12, n_templates=6, unseen_templates=2, n_answers=6000, seed=1)


@pytest.fixture(scope="module")
def fit(study):
    return fit_study(study.responses, config=FitConfig(seed=0))


def _agree(a: pd.DataFrame, est_a: str, lo_a: str, hi_a: str, est_b: str, lo_b: str, hi_b: str) -> pd.Series:
    """Whether two estimates lie within 2 combined standard errors (each from its 95% interval's half-width)."""
    se = np.hypot((a[hi_a] - a[lo_a]) / (2 * Z), (a[hi_b] - a[lo_b]) / (2 * Z))
    return (a[est_a] - a[est_b]).abs() <= 2 * se


def test_the_truth_is_the_classical_sc_of_many_items():
    """The simulator's truth is weighted as the classical SC is: with many items and answers they coincide."""
    big = simulate_real_shaped(n_items=400, n_templates=4, unseen_templates=1, n_answers=60_000, seed=3)
    ok = big.responses[big.responses["status"] == "ok"]
    key = ["model", "dimension", "method"]
    got = sc_counts(ok, key, config=AnalysisConfig(n_resamples=500)).merge(big.truth, on=key)
    assert len(got) == 24
    # the item-cluster interval generalises to new items of the dimension, as the truth does
    covered = (got["item_ci_low"] <= got["sc_new_item"]) & (got["sc_new_item"] <= got["item_ci_high"])
    assert covered.mean() >= 0.9
    assert (got["sc"] - got["sc_new_item"]).abs().max() < 0.06


def test_a_likert_rating_is_stronger_the_more_its_group_takes_that_side(study):
    """Strength is graded by the evidence: groups that agree more often agree more strongly and disagree more
    weakly (with 4 or 5 at even odds both rank correlations would be 0, SE about 0.07 over the groups that take
    the side; measured 0.09)."""
    r = study.responses
    likert = r[(r["status"] == "ok") & (r["method"] == "explicit")].groupby(
        ["model", "dimension", "template_id", "order"]
    )["likert"]
    agree, disagree = likert.apply(lambda x: (x >= 4).sum()), likert.apply(lambda x: (x <= 2).sum())
    assert len(agree) == 240 and set(r["likert"].dropna()) == {1, 2, 4, 5}
    share = agree / (agree + disagree)
    strong_agree = likert.apply(lambda x: (x == 5).sum()) / agree.where(agree > 0)
    strong_disagree = likert.apply(lambda x: (x == 1).sum()) / disagree.where(disagree > 0)
    assert spearmanr(share, strong_agree, nan_policy="omit").statistic > 0.3
    assert spearmanr(share, strong_disagree, nan_policy="omit").statistic < -0.3


def test_the_fit_passes_its_gate(fit):
    assert fit.diagnostics["passed"], fit.diagnostics


def test_the_predictive_check_fits_each_method(fit):
    shares = share_outside(fit.ppc)
    assert set(shares.index) == {"explicit", "implicit"}
    assert (shares <= 0.15).all(), shares.to_dict()


def test_the_new_item_gaps_cover_the_truth(study, fit):
    q = fit.quantities
    gaps = q[q["quantity"] == "gap_explicit_implicit"].merge(study.gaps, on=["model", "dimension"])
    assert len(gaps) == 12
    covered = (gaps["hdi_low"] <= gaps["gap"]) & (gaps["gap"] <= gaps["hdi_high"])
    assert covered.sum() >= 10  # 95% HDIs: P(at most 9 of 12 | calibrated) = 0.02


def test_posterior_and_classical_gaps_and_scs_agree(study, fit):
    q = fit.quantities
    classical = gap(study.responses).figures
    classical = classical[classical["interval"].str.startswith("item-cluster")]
    gaps = q[q["quantity"] == "gap_explicit_implicit"].merge(classical, on=["model", "dimension"])
    assert _agree(gaps, "mean", "hdi_low", "hdi_high", "estimate", "ci_low", "ci_high").mean() >= 0.9
    ok = study.responses[study.responses["status"] == "ok"]
    key = ["model", "dimension", "method"]
    scs = q[q["quantity"] == "sc"].merge(sc_counts(ok, key, ci=0.95), on=key)
    assert len(scs) == 24
    assert _agree(scs, "mean", "hdi_low", "hdi_high", "sc", "ci_low", "ci_high").mean() >= 0.9
    assert (scs["mean"] - scs["sc"]).abs().median() < 0.03
