"""Verdicts at the level the question is asked, for Q2-Q5: a study whose models find opposite things gets one
verdict row per model (x dimension) and a summary that names each model's finding, not one study-level label
("inconclusive") counted over the cells."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from bias_validity.analyses.config import AnalysisConfig
from bias_validity.analyses.questions import convergent, framing, gap, reflection
from bias_validity.analyses.result import VERDICT_COLUMNS, Verdict
from bias_validity.psychometrics import IntervalKind
from bias_validity.simulate import simulate_responses

DIMS = ["age", "race", "gender_career"]
#: The issue's study: Llama-3-like base and instruct models at two sizes. True SCs (implicit, explicit): the small
#: instruct model's explicit SC lies far below its implicit one, the base models' far above, the large instruct
#: model's equals it.
GAP_TRUTH = {
    "hf:llama-3-8b": (0.50, 0.85),
    "hf:llama-3-8b-instruct": (0.75, 0.20),
    "hf:llama-3-70b": (0.50, 0.85),
    "hf:llama-3-70b-instruct": (0.60, 0.60),
}


def _study(truth: dict[str, dict[str, float]], **kw) -> pd.DataFrame:
    return pd.concat(
        [
            simulate_responses(models=[m], dimensions=DIMS, sc=sc, seed=i, **kw)
            for i, (m, sc) in enumerate(truth.items())
        ],
        ignore_index=True,
    )


@pytest.fixture(scope="module")
def gap_result():
    truth = {m: {"implicit": i, "explicit": e} for m, (i, e) in GAP_TRUTH.items()}
    return gap(_study(truth, item_sd=0.0, n_items=10, sessions=1, reps=80))


def test_q4_names_each_models_gap_and_its_direction(gap_result):
    summary = gap_result.summary
    assert "credible negative gap in 3/3 dimensions for hf:llama-3-8b-instruct" in summary
    assert "credible positive gap in 3/3 dimensions for hf:llama-3-8b;" in summary
    assert "credible positive gap in 3/3 dimensions for hf:llama-3-70b;" in summary
    assert "no gap in 3/3 dimensions for hf:llama-3-70b-instruct" in summary
    assert gap_result.verdict is Verdict.INCONCLUSIVE  # the cells disagree: the study-level label alone hid this


def test_q4_verdict_table_has_a_row_per_model_and_dimension_with_its_interval(gap_result):
    table = gap_result.verdicts
    assert list(table.columns) == list(VERDICT_COLUMNS) and len(table) == 12
    rows = table.set_index(["model", "dimension"])
    for model, (implicit, explicit) in GAP_TRUTH.items():
        cells = rows.loc[model]
        assert set(cells.index) == set(DIMS)
        # each interval covers the true gap and lies on the side its finding names
        assert ((cells["ci_low"] < explicit - implicit) & (explicit - implicit < cells["ci_high"])).all(), model
    assert (rows.loc["hf:llama-3-8b-instruct", "ci_high"] < -0.05).all()
    assert (rows.loc["hf:llama-3-8b", "ci_low"] > 0.05).all()
    tuned = rows.loc["hf:llama-3-70b-instruct"]
    assert ((tuned["ci_low"] > -0.05) & (tuned["ci_high"] < 0.05)).all()
    assert set(table["measure"]) == {f"gap_explicit_implicit ({IntervalKind.ITEM_CLUSTER_T})"}
    assert table["reason"].str.contains("ROPE \\+/-0.05").all()


def test_q3_names_the_robust_and_the_controllable_model():
    truth = {"sim:robust": {"implicit": 0.9, "ablated": 0.88}, "sim:controlled": {"implicit": 0.9, "ablated": 0.52}}
    res = framing(_study(truth, item_sd=0.3, n_items=12, sessions=1, reps=3), config=AnalysisConfig(n_resamples=500))
    assert "robust in 3/3 dimensions for sim:robust" in res.summary
    assert "controllable in 3/3 dimensions for sim:controlled" in res.summary
    table = res.verdicts.set_index(["model", "dimension"])
    assert len(table) == 6 and res.verdict is Verdict.INCONCLUSIVE
    assert (table.loc["sim:robust", "ci_low"] > 0.5).all() and (table.loc["sim:controlled", "ci_high"] < 0.5).all()
    assert (table["measure"] == f"ablation_retained_share ({IntervalKind.FIELLER_ITEM_CLUSTER})").all()


def test_q2_names_the_convergent_and_the_divergent_model():
    convergent_model = simulate_responses(models=["sim:agrees"], dimensions=DIMS, item_sd=2.0, reps=2, seed=0)
    apart = simulate_responses(
        models=["sim:apart"], dimensions=DIMS, n_items=40, item_sd=2.0, shared_item_effects=False, seed=1
    )
    res = convergent(pd.concat([convergent_model, apart], ignore_index=True))
    assert "convergent for sim:agrees; not convergent for sim:apart" in res.summary
    table = res.verdicts.set_index("model")
    assert list(table["dimension"]) == ["all", "all"] and res.verdict is Verdict.INCONCLUSIVE
    assert table.loc["sim:agrees", "ci_low"] > 0 and table.loc["sim:apart", "ci_high"] < 0.3
    assert table.loc["sim:apart", "reason"].count("r = ") == 2  # both deciding pairs named with their figures


def test_q5_names_the_model_that_disowns_and_the_one_that_endorses():
    truth = {
        "sim:disowns": {"implicit": 0.7, "explicit": 0.6, "reflection": 0.15},
        "sim:endorses": {"implicit": 0.7, "explicit": 0.6, "reflection": 0.85},
    }
    res = reflection(_study(truth))
    assert "disowns for sim:disowns; endorses for sim:endorses" in res.summary
    assert "disowns in 3/3 dimensions for sim:disowns; endorses in 3/3 dimensions for sim:endorses" in res.summary
    pooled = res.verdicts[res.verdicts["dimension"] == "all"].set_index("model")
    assert pooled.loc["sim:disowns", "ci_high"] < 0.5 < pooled.loc["sim:endorses", "ci_low"]
    assert len(res.verdicts) == 8 and res.verdict is Verdict.INCONCLUSIVE


def test_a_figure_the_data_cannot_give_is_worded_not_printed_as_nan():
    """A model without logprob or embedding scores: Q2 names it as not estimable with its reason."""
    only = simulate_responses(models=["sim:only"], dimensions=["age"], seed=3)
    only = only[~only["method"].isin(["logprob", "embedding"])]
    both = pd.concat([only, simulate_responses(models=["sim:full"], dimensions=["age"], seed=4)], ignore_index=True)
    q2 = convergent(both)
    row = q2.verdicts.set_index("model").loc["sim:only"]
    assert row["verdict"] == "not estimable" and np.isnan(row["estimate"])
    assert "no deciding pair" in row["reason"] and "nan" not in q2.summary.lower()
