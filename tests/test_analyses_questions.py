"""The six reviewer questions on simulated responses tables with known truth (bias_validity.analyses.questions)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit, logit

from bias_validity.analyses.config import AnalysisConfig
from bias_validity.analyses.questions import convergent, framing, gap, reflection, reliability, scaling
from bias_validity.analyses.result import Verdict
from bias_validity.analyses.study import as_study
from bias_validity.psychometrics import IntervalKind
from bias_validity.simulate import simulate_responses

SEEDS = range(4)


@pytest.mark.parametrize("seed", SEEDS)
def test_repeatable_answers_are_reliable_and_coin_flips_are_not_shown_reliable(seed):
    reliable = reliability(simulate_responses(dimensions=["age", "race"], item_sd=6.0, reps=10, seed=seed))
    flips = reliability(simulate_responses(dimensions=["age", "race"], sc={"implicit": 0.5}, item_sd=0.0, seed=seed))
    pooled = reliable.figures.query("dimension == 'all' and measure == 'test_retest'").iloc[0]
    assert reliable.verdict is Verdict.SUPPORTED and pooled["ci_low"] > 0.5
    # the SC of coin flips does not move, so the item ICC (about 0) does not fail it; with 64 answers a form
    # cannot show its shifts within +/-0.10 either
    assert flips.verdict is Verdict.INCONCLUSIVE
    coin = flips.figures.query("dimension == 'all' and measure == 'test_retest'").iloc[0]
    assert coin["ci_low"] < 0 < coin["ci_high"]  # true ICC of independent coin flips is 0


def test_position_bias_recovers_the_closed_form_shift():
    # all items alike (item_sd 0): SC is expit(logit(0.7) + 2) = 0.945 for ab-* orders and 0.7 for ba-* orders
    t = simulate_responses(dimensions=["age"], item_sd=0.0, position_bias=2.0, reps=20, sc={"implicit": 0.7}, seed=3)
    res = reliability(t)
    row = res.figures.query("dimension == 'all' and measure == 'position_bias'").iloc[0]
    truth = expit(logit(0.7) + 2.0) - 0.7
    assert row["ci_low"] < truth < row["ci_high"] and row["ci_low"] > 0.1
    assert res.verdict is Verdict.NOT_SUPPORTED and "position bias" in res.summary


def test_gap_newcombe_interval_covers_the_true_gap_in_most_replications():
    truth = 0.2 - 0.8
    hits = 0
    for seed in range(60):
        t = simulate_responses(
            dimensions=["age"], n_items=6, sc={"implicit": 0.8, "explicit": 0.2}, item_sd=0.0, seed=seed
        )
        figures = gap(t).figures
        row = figures[figures["interval"] == IntervalKind.NEWCOMBE].iloc[0]
        hits += row["ci_low"] <= truth <= row["ci_high"]
    assert 0.88 <= hits / 60 <= 1.0  # nominal 95%; Newcombe's hybrid score interval is slightly conservative


def test_gap_verdict_follows_the_posterior_hdi_and_rope():
    t = simulate_responses(dimensions=["age"], sc={"implicit": 0.8, "explicit": 0.2}, item_sd=0.0, seed=0)
    assert gap(t).verdict is Verdict.SUPPORTED
    post = pd.DataFrame(
        [
            dict(
                quantity="gap_explicit_implicit",
                model="sim:model",
                dimension="age",
                method=None,
                mean=0.0,
                hdi_low=-0.03,
                hdi_high=0.04,
                p_direction=0.55,
            )
        ]
    )
    res = gap(t, posterior=post)
    assert res.verdict is Verdict.NOT_SUPPORTED  # the HDI lies inside the ROPE of +/-0.05
    assert set(res.figures["interval"]) == {IntervalKind.ITEM_CLUSTER_T, IntervalKind.NEWCOMBE, IntervalKind.HDI}
    same = simulate_responses(dimensions=["age"], sc={"implicit": 0.5, "explicit": 0.5}, item_sd=0.0, reps=40, seed=1)
    assert gap(same).verdict in (Verdict.NOT_SUPPORTED, Verdict.INCONCLUSIVE)


@pytest.mark.parametrize("p_agree, expected", [(0.15, Verdict.SUPPORTED), (0.85, Verdict.NOT_SUPPORTED)])
def test_reflection_detects_disowning_and_endorsing(p_agree, expected):
    t = simulate_responses(sc={"implicit": 0.7, "explicit": 0.5, "reflection": p_agree}, item_sd=0.0, seed=2)
    res = reflection(t)
    pooled = res.figures.query("dimension == 'all' and measure == 'sc_reflection'").iloc[0]
    assert res.verdict is expected
    assert pooled["ci_low"] < p_agree < pooled["ci_high"]
    diff = res.figures.query("dimension == 'all' and measure == 'reflection_minus_explicit'").iloc[0]
    assert diff["ci_low"] < p_agree - 0.5 < diff["ci_high"]


def test_framing_separates_a_collapsing_score_from_a_robust_one():
    kw = dict(dimensions=["age"], n_items=16, item_sd=0.0, seed=4)
    config = AnalysisConfig(n_resamples=500)
    collapsing = framing(simulate_responses(sc={"implicit": 0.9, "ablated": 0.52}, **kw), config=config)
    robust = framing(simulate_responses(sc={"implicit": 0.9, "ablated": 0.9}, **kw), config=config)
    assert collapsing.verdict is Verdict.NOT_SUPPORTED and robust.verdict is Verdict.SUPPORTED
    row = robust.figures.iloc[0]
    assert row["ci_low"] < 1.0 < row["ci_high"]  # true ratio (0.9 - 0.5) / (0.9 - 0.5) = 1


def test_convergent_validity_recovers_shared_and_independent_item_effects():
    shared = convergent(simulate_responses(n_items=20, item_sd=2.0, reps=2, seed=5))
    independent = convergent(simulate_responses(n_items=40, item_sd=2.0, shared_item_effects=False, seed=5))
    assert shared.verdict is Verdict.SUPPORTED and independent.verdict is Verdict.NOT_SUPPORTED
    r = shared.figures.query("measure == 'implicit~logprob'").iloc[0]
    assert r["estimate"] > 0.7 and r["n"] == 60


def test_human_comparison_is_reported_with_its_n_of_three_caveat():
    t = simulate_responses(dimensions=["age", "disability", "race", "science"], seed=6)
    rows = convergent(t).figures.query("measure.str.startswith('human')")
    assert len(rows) == 2 and (rows["n"] == 3).all()
    assert rows["ci_low"].isna().all() and rows["note"].str.contains("too few").all()


def test_latent_correlation_decides_convergence_when_given():
    t = simulate_responses(n_items=20, item_sd=2.0, seed=7)
    row = dict(quantity="latent_correlation", model="sim:model", dimension=None, method="implicit~logprob", mean=0.05)
    post = pd.DataFrame([{**row, "hdi_low": -0.2, "hdi_high": 0.25, "p_direction": 0.6}])
    res = convergent(t, posterior=post)
    assert res.verdict is Verdict.NOT_SUPPORTED
    assert "latent implicit~logprob" in set(res.figures["measure"])


def test_scaling_needs_metadata_and_flags_a_collinear_design():
    t = simulate_responses(models=["a", "b", "c", "d"], dimensions=["age"], n_items=4, seed=8)
    res = scaling(t)
    assert res.verdict is Verdict.NOT_ESTIMABLE and "models file" in res.evidence
    # size and tokens move together: 1B/1T, 2B/2T, 4B/4T, 8B/8.5T
    meta = pd.DataFrame(
        {
            "model": ["a", "b", "c", "d"],
            "family": ["f"] * 4,
            "parameters": [1e9, 2e9, 4e9, 8e9],
            "training_tokens": [1e12, 2e12, 4e12, 8.5e12],
            "aligned": [False] * 4,
        }
    )
    collinear = scaling(as_study(t, models_meta=meta))
    assert collinear.verdict is Verdict.NOT_SUPPORTED and collinear.figures.attrs["collinear"]
    r = collinear.figures.query("measure == 'predictor_correlation'")["estimate"].iloc[0]
    assert r > 0.99
    with pytest.raises(ValueError, match="lacks column"):
        scaling(as_study(t, models_meta=meta.drop(columns="aligned")))


def test_messy_data_one_session_constant_cells_and_missing_stances_do_not_crash():
    t = simulate_responses(dimensions=["age"], sessions=1, item_sd=0.0, sc={"implicit": 1.0}, refusal_rate=0.2, seed=9)
    res = reliability(t)
    tr = res.figures.query("measure == 'test_retest'")
    assert tr["estimate"].isna().all() and tr["note"].str.contains("session").all()
    af = res.figures.query("measure == 'alternate_forms'")
    assert af["estimate"].isna().all()  # every answer consistent: the ICC is 0/0
    # only implicit answers, all consistent: nothing to compare with, and a constant score correlates with nothing
    for question in (gap, reflection, framing, convergent):
        assert question(t).verdict is Verdict.NOT_ESTIMABLE, question.__name__


@pytest.mark.parametrize("question", [reliability, convergent, framing, gap, reflection, scaling])
def test_bad_input_gives_one_line_errors(question):
    with pytest.raises(ValueError, match=r"^expected a Study or a responses table") as err:
        question([1, 2, 3])
    assert "\n" not in str(err.value)
    with pytest.raises(ValueError, match="lacks column"):
        question(pd.DataFrame({"model": ["m"]}))


def test_an_absent_method_is_not_estimable_with_the_reason():
    t = simulate_responses(dimensions=["age"], sc={"implicit": 0.7}, seed=10)
    t = t[~t["method"].isin(["logprob", "embedding"])]
    assert framing(t).verdict is Verdict.NOT_ESTIMABLE
    assert gap(t).verdict is Verdict.NOT_ESTIMABLE
    assert reflection(t).verdict is Verdict.NOT_ESTIMABLE
    assert convergent(t).verdict is Verdict.NOT_ESTIMABLE
    assert np.isfinite(reliability(t).figures["estimate"]).any()
