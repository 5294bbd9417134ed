"""Q4's direction is part of its verdict: the study-level verdict decides the seed's one-sided claim (explicit
milder than implicit), and a mix of credible gaps of both signs is never "supported" without naming who goes
which way. Simulated models with known true SCs."""

from __future__ import annotations

import pandas as pd
import pytest

from bias_validity.analyses.config import AnalysisConfig
from bias_validity.analyses.questions import gap
from bias_validity.analyses.questions.gap import MILDER_CLAIM
from bias_validity.analyses.result import Verdict
from bias_validity.simulate import simulate_responses

DIMS = ["age", "race"]
CONFIG = AnalysisConfig(n_resamples=500)


def _study(truth: dict[str, tuple[float, float]]) -> pd.DataFrame:
    """Per model (implicit SC, explicit SC); items alike, many answers, so every cell's gap is clear."""
    return pd.concat(
        [
            simulate_responses(
                models=[m], dimensions=DIMS, sc={"implicit": i, "explicit": e}, item_sd=0.0, n_items=10, reps=40, seed=k
            )
            for k, (m, (i, e)) in enumerate(truth.items())
        ],
        ignore_index=True,
    )


def test_credible_gaps_of_both_signs_are_not_supported_and_the_summary_names_each_direction():
    res = gap(_study({"sim:milder": (0.8, 0.2), "sim:harsher": (0.5, 0.85)}), config=CONFIG)
    table = res.verdicts.set_index("model")
    assert (table.loc["sim:milder", "finding"] == "credible negative gap").all()
    assert (table.loc["sim:harsher", "finding"] == "credible positive gap").all()
    assert res.verdict is Verdict.INCONCLUSIVE
    assert "Directions differ: explicit below implicit for sim:milder (age, race); above it for sim:harsher" in (
        res.summary
    )
    assert "holds in 2 of 4 estimable cells: inconclusive at the study level" in res.summary


def test_credible_positive_gaps_everywhere_do_not_support_the_seeds_claim():
    """Explicit SC above implicit in every cell: a credible gap, but the seed's claim is the opposite one."""
    res = gap(_study({"sim:harsher": (0.5, 0.85)}), config=CONFIG)
    assert (res.verdicts["finding"] == "credible positive gap").all()
    assert res.verdict is Verdict.NOT_SUPPORTED
    assert MILDER_CLAIM in res.summary and "one-sided" in res.summary


def test_explicit_milder_everywhere_supports_the_claim():
    res = gap(_study({"sim:milder": (0.8, 0.2), "sim:milder-too": (0.75, 0.3)}), config=CONFIG)
    assert res.verdict is Verdict.SUPPORTED
    assert "holds in 4 of 4 estimable cells: supported at the study level" in res.summary


@pytest.mark.parametrize(
    ("low", "high", "expected"),
    [
        (-0.30, -0.10, Verdict.SUPPORTED),  # wholly below -ROPE
        (-0.30, -0.04, Verdict.INCONCLUSIVE),  # reaches above -ROPE
        (-0.04, 0.02, Verdict.NOT_SUPPORTED),  # no gap: wholly above -ROPE
        (0.10, 0.30, Verdict.NOT_SUPPORTED),  # explicit the stronger
    ],
)
def test_the_claim_is_decided_one_sided_against_minus_the_rope(low, high, expected):
    """A posterior gap row decides each cell: the one-sided rule reads the interval against -0.05 only."""
    t = simulate_responses(dimensions=["age"], sc={"implicit": 0.8, "explicit": 0.2}, item_sd=0.0, seed=0)
    post = pd.DataFrame(
        [
            dict(
                quantity="gap_explicit_implicit",
                model="sim:model",
                dimension="age",
                method=None,
                mean=(low + high) / 2,
                hdi_low=low,
                hdi_high=high,
                p_direction=0.9,
            )
        ]
    )
    assert gap(t, posterior=post, config=CONFIG).verdict is expected
