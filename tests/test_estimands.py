"""One definition per quantity: both paths compute the same estimand, agree on simulated studies and cover the truth.

Checked here: the Bayesian and the bootstrap path report the share *retained* under one name; the closed-set
``choice:`` log-odds never enter the fit as the ``logprob`` method; balanced explicit statements keep agreeing with
everything from scoring as bias; and SC intervals resample items rather than count every answer as independent.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit, logit

from bias_validity.analyses.config import AnalysisConfig
from bias_validity.analyses.fit import fit_study, responses_to_cells
from bias_validity.analyses.questions import convergent, framing, gap
from bias_validity.analyses.result import Verdict
from bias_validity.analyses.summary import NOT_BALANCED, acquiescence_table, sc_table
from bias_validity.probes.schema import CHOICE_PREFIX, EXPECTED_IMPLICIT
from bias_validity.psychometrics import IntervalKind
from bias_validity.psychometrics.bayes import FitConfig
from bias_validity.psychometrics.estimands import ESTIMANDS, Quantity, Thresholds
from bias_validity.simulate import simulate_responses

TRUE_SC = {"implicit": 0.85, "ablated": 0.62, "explicit": 0.35}
ITEM_SD = 0.6
DIMENSIONS = ("age", "race", "gender_career")
_NODES, _WEIGHTS = np.polynomial.hermite.hermgauss(40)


def _population_sc(sc: float) -> float:
    """E_u[logistic(logit(sc) + u)], u ~ N(0, ITEM_SD): the SC of a new item (what both paths estimate)."""
    return float((expit(logit(sc) + np.sqrt(2) * ITEM_SD * _NODES) * _WEIGHTS).sum() / np.sqrt(np.pi))


TRUTH = {m: _population_sc(p) for m, p in TRUE_SC.items()}
TRUE_GAP = TRUTH["explicit"] - TRUTH["implicit"]
TRUE_R = (TRUTH["ablated"] - 0.5) / (TRUTH["implicit"] - 0.5)


def test_every_quantity_is_declared_once_with_a_null_and_a_direction():
    assert set(ESTIMANDS) == set(Quantity)
    assert ESTIMANDS[Quantity.RETAINED_SHARE].formula == "R = (SC_ablated - 0.5) / (SC_implicit - 0.5)"
    assert ESTIMANDS[Quantity.SC].null == 0.5 and ESTIMANDS[Quantity.GAP].null == 0.0
    with pytest.raises(ValueError, match="gap_rope must be a number in"):
        Thresholds(gap_rope=2.0)


@pytest.fixture(scope="module")
def study():
    responses = simulate_responses(
        sc=TRUE_SC, dimensions=DIMENSIONS, n_items=10, n_templates=1, sessions=1, reps=3, item_sd=ITEM_SD, seed=11
    )
    fit = fit_study(responses, config=FitConfig(draws=500, tune=500, chains=4, seed=3, max_draws=None))
    return responses, fit


def _se(low: float, high: float, level: float) -> float:
    from scipy.stats import norm

    return (high - low) / (2 * norm.ppf(0.5 + level / 2))


def test_bootstrap_and_posterior_agree_and_cover_the_truth(study):
    """Per dimension, SC (new item) of each sampled method, gap and retained share from the item-cluster bootstrap
    and from the posterior: each pair agrees within 3 combined standard errors, and each path's intervals cover
    the known population value in at least 2/3 of the 15 quantity x dimension cells. (One study: the five
    quantities of a dimension share its ten items, so they miss together; coverage proper is measured over
    replications, for the bootstrap below and in test_psy_framing, for the posterior by simulation-based
    calibration.)"""
    responses, fit = study
    post = fit.quantities.set_index(["quantity", "model", "dimension", "method"])
    hdi = fit.quantities.attrs["hdi_prob"]
    table = sc_table(responses).set_index(["dimension", "method"])
    q3 = framing(responses).figures.set_index("dimension")
    q4 = gap(responses).figures
    q4 = q4[q4["interval"] == IntervalKind.ITEM_CLUSTER_T].set_index("dimension")
    pairs = []  # (classical estimate, low, high, posterior mean, low, high, truth)
    for dim in DIMENSIONS:
        for method in TRUE_SC:
            c = table.loc[(dim, method)]
            p = post.loc[("sc_new_item", "sim:model", dim, method)]
            pairs.append(
                (c["sc"], c["item_ci_low"], c["item_ci_high"], p["mean"], p["hdi_low"], p["hdi_high"], TRUTH[method])
            )
        c, p = q4.loc[dim], post.loc[("gap_explicit_implicit", "sim:model", dim, "")]
        pairs.append((c["estimate"], c["ci_low"], c["ci_high"], p["mean"], p["hdi_low"], p["hdi_high"], TRUE_GAP))
        c, p = q3.loc[dim], post.loc[("ablation_retained_share", "sim:model", dim, "")]
        assert p["estimable"], p["reason"]
        pairs.append((c["estimate"], c["ci_low"], c["ci_high"], p["mean"], p["hdi_low"], p["hdi_high"], TRUE_R))
    frame = pd.DataFrame(pairs, columns=["c", "c_low", "c_high", "p", "p_low", "p_high", "truth"])
    combined = np.hypot(_se(frame["c_low"], frame["c_high"], 0.95), _se(frame["p_low"], frame["p_high"], hdi))
    assert (np.abs(frame["c"] - frame["p"]) <= 3 * combined).all(), frame
    assert ((frame["c_low"] <= frame["truth"]) & (frame["truth"] <= frame["c_high"])).mean() >= 2 / 3, frame
    assert ((frame["p_low"] <= frame["truth"]) & (frame["truth"] <= frame["p_high"])).mean() >= 2 / 3, frame


def test_new_item_sc_is_wider_than_the_sc_of_these_items(study):
    """The SC for a new item adds the between-item spread that the SC of the items asked leaves out."""
    _, fit = study
    q = fit.quantities.assign(width=lambda f: f["hdi_high"] - f["hdi_low"])
    these = q[q["quantity"] == "sc"].set_index(["dimension", "method"])["width"]
    new = q[q["quantity"] == "sc_new_item"].set_index(["dimension", "method"])["width"]
    assert (new.loc[these.index] > these).all()


def test_retained_share_is_not_estimable_at_chance_in_both_paths():
    responses = simulate_responses(
        sc={"implicit": 0.5, "ablated": 0.5}, dimensions=["age"], n_items=10, item_sd=0.2, seed=5
    )
    row = framing(responses).figures.iloc[0]
    assert np.isnan(row["ci_low"]) and row["note"].startswith("not estimable")
    post = pd.DataFrame(
        [
            dict(
                quantity="ablation_retained_share",
                model="sim:model",
                dimension="age",
                method="",
                mean=3.0,
                hdi_low=-9.0,
                hdi_high=11.0,
                p_direction=0.6,
            ),
            dict(
                quantity="sc_new_item",
                model="sim:model",
                dimension="age",
                method="implicit",
                mean=0.51,
                hdi_low=0.46,
                hdi_high=0.57,
                p_direction=0.6,
            ),
        ]
    )
    res = framing(responses, posterior=post)
    hdi_row = res.figures[res.figures["interval"] == "HDI"].iloc[0]
    assert np.isnan(hdi_row["estimate"]) and "overlaps 0.5 +/- 0.05" in hdi_row["note"]
    assert res.verdict is Verdict.NOT_ESTIMABLE


def test_choice_log_odds_are_their_own_series_never_the_logprob_method():
    responses = simulate_responses(dimensions=["age"], n_items=6, seed=2)
    logprob = responses[responses["method"] == "logprob"]
    choice = logprob.assign(
        template_id=CHOICE_PREFIX + "implicit-1",
        score=logprob["score"] * 0 + 2.0,
        response_id=logprob["response_id"] + "c",
    )
    both = pd.concat([responses, choice], ignore_index=True)
    cells = responses_to_cells(both)
    assert not cells["scores"]["template_id"].str.startswith(CHOICE_PREFIX).any()
    table = sc_table(both).set_index("method")
    assert table.loc[EXPECTED_IMPLICIT, "sc"] == pytest.approx(expit(2.0))
    assert table.loc["logprob", "n_side"] == len(logprob)


def test_q2_verdict_rests_on_the_implicit_pairs_only():
    responses = simulate_responses(dimensions=["age"], n_items=6, seed=2)
    post = pd.DataFrame(
        [
            dict(
                quantity="latent_correlation",
                model="",
                dimension="",
                method=m,
                mean=mean,
                hdi_low=low,
                hdi_high=high,
                p_direction=0.9,
            )
            for m, mean, low, high in [("implicit~logprob", 0.05, -0.1, 0.2), ("ablated~explicit", 0.7, 0.5, 0.9)]
        ]
    )
    res = convergent(responses, posterior=post)
    assert res.verdict is Verdict.NOT_SUPPORTED  # ablated~explicit is shown, not counted
    notes = res.figures.set_index("measure")["note"]
    assert notes["latent ablated~explicit"] == "shown, not counted" and notes["latent implicit~logprob"] == "decides"
    assert "latent implicit~logprob" in res.summary


def test_acquiescence_is_measured_not_mistaken_for_bias():
    """A model without a stance that agrees with everything: balanced items give SC 0.5 and acquiescence near 1;
    the old unbalanced probe scored the same model as strongly biased."""
    kw = dict(sc={"explicit": 0.5}, dimensions=["age"], n_items=10, item_sd=0.3, acquiescence=3.0, reps=3, seed=4)
    balanced = simulate_responses(**kw)
    sc = sc_table(balanced).set_index("method").loc["explicit"]
    assert sc["ci_low"] < 0.5 < sc["ci_high"]
    index = acquiescence_table(balanced).iloc[0]
    assert index["balanced"] and index["ci_low"] > 0.85
    unbalanced = simulate_responses(**kw, balanced=False)
    assert sc_table(unbalanced).set_index("method").loc["explicit", "sc"] > 0.9
    assert acquiescence_table(unbalanced).iloc[0]["note"] == NOT_BALANCED


def test_item_cluster_interval_covers_the_dimension_where_wilson_does_not():
    """Item effects SD 1 and many answers per item: answers cluster by item, so Wilson's interval (answers
    independent) covers the population SC far less often than its 95%; the item-cluster interval keeps its level."""
    truth = float((expit(logit(0.7) + np.sqrt(2) * _NODES) * _WEIGHTS).sum() / np.sqrt(np.pi))
    wilson = cluster = 0
    runs = 40
    for seed in range(runs):
        t = simulate_responses(
            sc={"implicit": 0.7},
            dimensions=["age"],
            n_items=12,
            n_templates=1,
            sessions=2,
            reps=3,
            item_sd=1.0,
            seed=seed,
        )
        row = sc_table(t, AnalysisConfig(n_resamples=400)).set_index("method").loc["implicit"]
        wilson += row["ci_low"] <= truth <= row["ci_high"]
        cluster += row["item_ci_low"] <= truth <= row["item_ci_high"]
    assert cluster / runs >= 0.85
    assert wilson / runs <= 0.7
