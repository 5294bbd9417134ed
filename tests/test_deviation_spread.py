"""The classical spread of the units' own deviations, which chooses how the model draws them: recovered from
simulated studies with a known SD, at its floor when the units share every effect, at its top when too few answers
tell."""

from __future__ import annotations

import numpy as np
import pytest

from bias_validity.psychometrics.bayes import index_design, simulate_study
from bias_validity.psychometrics.bayes.deviation_spread import SPREAD_RANGE, deviation_spread


def _spread(unit_sd: float, seed: int, *, reps: int = 300, templates: int = 6, reach: bool = False) -> dict[str, float]:
    sim = simulate_study(
        units=6,
        traits=2,
        items=8,
        templates=templates,
        orders=2,
        reps=reps,
        unit_sd=unit_sd,
        seed=seed,
        binary_methods=("implicit",),
        ordinal_methods=("explicit",),
        score_methods=(),
    )
    return deviation_spread(index_design(sim["binary"], ordinal=sim["ordinal"], unit_effects=True), reach=reach)


@pytest.mark.parametrize("unit_sd", [0.2, 0.5, 0.8])
def test_the_spread_recovers_the_units_deviation_sd(unit_sd):
    # 20 studies of 6 models x 8 items per dimension x 6 wordings x 2 orders, 300 answers per cell. Measured mean
    # (SD over studies) at 0.2 / 0.5 / 0.8: items 0.22 / 0.53 / 0.79 (0.02-0.06), wordings 0.20 / 0.47 / 0.70
    # (0.02-0.07): a wording's answers pooled over items with their own effects have a logit shrunk towards zero
    # (Zeger, Liang & Albert 1988), so the wordings' estimate reads low as the spread grows; a choice of centring,
    # which needs the order of magnitude, bears that
    estimates = [_spread(unit_sd, seed) for seed in range(20)]
    for column in ("ui", "ut"):
        mean = np.mean([e[column] for e in estimates])
        assert mean == pytest.approx(unit_sd, rel=0.2), (column, mean)


@pytest.mark.parametrize("unit_sd", [0.2, 0.5])
def test_the_reach_lies_above_the_estimate_and_mostly_above_the_true_sd(unit_sd):
    # the same 20 studies: the one-sided 90% bound of a normal-theory standard error covered the true SD in 80-100%
    # of them per facet (the wordings' and orders' estimates read low, test above), and nowhere sits below the estimate
    for column in ("ui", "ut", "uo"):
        pairs = [(_spread(unit_sd, seed)[column], _spread(unit_sd, seed, reach=True)[column]) for seed in range(20)]
        assert all(reach >= estimate for estimate, reach in pairs)
        assert np.mean([reach >= unit_sd for _, reach in pairs]) >= 0.8, column


def test_the_spread_sits_at_its_floor_when_the_units_share_every_effect():
    estimates = [_spread(0.0, seed) for seed in range(5)]
    assert max(e[column] for e in estimates for column in ("ui", "ut", "uo")) < 0.05, estimates
    # 300 answers per cell leave the shared effects little room to hide in the units' deviations
    reaches = [_spread(0.0, seed, reach=True) for seed in range(5)]
    assert max(r[column] for r in reaches for column in ("ui", "ut", "uo")) < 0.05, reaches


def test_too_few_answers_keep_the_priors_spread():
    # one answer per cell: a unit's item holds 4 answers, below the estimate's minimum, so nothing is estimated
    sparse = _spread(0.0, 0, reps=1, templates=2)
    assert sparse["ui"] == SPREAD_RANGE[1]
    assert sparse["ut"] < SPREAD_RANGE[1]  # a wording holds 8 items x 2 orders x 2 dimensions: enough


def test_a_study_of_one_model_has_no_spread():
    sim = simulate_study(
        units=1, traits=1, items=4, templates=2, orders=1, reps=5, ordinal_methods=(), score_methods=()
    )
    assert deviation_spread(index_design(sim["binary"], unit_effects=True)) == {}
