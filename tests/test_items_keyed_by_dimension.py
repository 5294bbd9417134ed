"""An item is a (dimension, item id) pair everywhere: a table whose item ids repeat across dimensions (an attribute
word used in several categories) fits and reports like the same table with ids unique per dimension."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from bias_validity.analyses.config import AnalysisConfig
from bias_validity.analyses.fit import fit_study
from bias_validity.analyses.report import build_report
from bias_validity.analyses.study import as_study
from bias_validity.psychometrics.bayes import FitConfig, index_design
from bias_validity.psychometrics.bayes.design import DEFAULT_COLUMNS
from bias_validity.simulate import simulate_responses

_DIMENSIONS = ("age", "race")
_FIGURE_COLUMNS = ["model", "dimension", "measure", "estimate", "ci_low", "ci_high", "interval", "n"]
_VERDICT_COLUMNS = ["model", "dimension", "verdict", "finding", "measure", "estimate", "ci_low", "ci_high"]


def _repeated(table: pd.DataFrame) -> pd.DataFrame:
    """The table with each item id stripped of its dimension prefix: ``age-01`` and ``race-01`` both ``item-01``."""
    ids = [
        "item-" + item.removeprefix(f"{dim}-") if item.startswith(f"{dim}-") else item
        for item, dim in zip(table["item_id"].astype(str), table["dimension"].astype(str), strict=True)
    ]
    return table.assign(item_id=pd.Series(ids, index=table.index, dtype=table["item_id"].dtype))


@pytest.fixture(scope="module")
def tables() -> tuple[pd.DataFrame, pd.DataFrame]:
    unique = simulate_responses(dimensions=_DIMENSIONS, n_items=5, n_templates=2, sessions=2, seed=4)
    repeated = _repeated(unique)
    answered = repeated[repeated["item_id"] != "WEAT"]
    per_id = answered.groupby("item_id")["dimension"].nunique()
    assert (per_id == len(_DIMENSIONS)).all()  # every item id names one item in each dimension
    return unique, repeated


def _design(table: pd.DataFrame):
    cells = as_study(table).cells
    return index_design(cells["binary"], ordinal=cells["ordinal"], scores=cells["scores"])


def test_design_has_one_item_per_dimension_and_item_id(tables):
    unique, repeated = tables
    a, b = _design(unique), _design(repeated)
    assert len(b.items) == len(a.items) == len(_DIMENSIONS) * 5
    assert b.item_traits() == a.item_traits()
    assert b.item_mask().tolist() == a.item_mask().tolist()
    for kind in ("binary", "ordinal", "scores"):
        assert getattr(b, kind)["i"].tolist() == getattr(a, kind)["i"].tolist()
    # each item index points at one dimension, whatever its id
    trait = DEFAULT_COLUMNS.trait
    assert (b.binary.groupby("i")[trait].nunique() == 1).all()


def test_design_labels_are_item_ids_where_ids_are_unique(tables):
    unique, repeated = tables
    assert _design(unique).items == sorted(unique.loc[unique["item_id"] != "WEAT", "item_id"].unique())
    assert _design(repeated).items[:2] == ["age/item-01", "age/item-02"]


def _figures(frame: pd.DataFrame) -> pd.DataFrame:
    return frame[[c for c in _FIGURE_COLUMNS if c in frame.columns]].reset_index(drop=True)


def test_report_figures_and_verdicts_are_those_of_unique_ids(tables):
    unique, repeated = tables
    config = AnalysisConfig(n_resamples=200)
    a, b = build_report(unique, None, config), build_report(repeated, None, config)
    assert [q.question for q in a.questions] == [q.question for q in b.questions]
    for qa, qb in zip(a.questions, b.questions, strict=True):
        assert qa.verdict == qb.verdict, qa.question
        pd.testing.assert_frame_equal(_figures(qb.figures), _figures(qa.figures), obj=f"{qa.question} figures")
        cols = [c for c in _VERDICT_COLUMNS if c in qa.verdicts.columns]
        pd.testing.assert_frame_equal(
            qb.verdicts[cols].reset_index(drop=True),
            qa.verdicts[cols].reset_index(drop=True),
            obj=f"{qa.question} verdicts",
        )
    pd.testing.assert_frame_equal(b.sc_table, a.sc_table)


def test_convergent_units_are_items_within_dimensions(tables):
    unique, repeated = tables
    config = AnalysisConfig(n_resamples=200)
    q2 = {q.question: q for q in build_report(repeated, None, config).questions}["Q2"]
    pairs = q2.figures.loc[q2.figures["measure"].isin(["implicit~logprob", "embedding~implicit"])]
    assert len(pairs) == 2 and (pairs["n"] == len(_DIMENSIONS) * 5).all()  # 5 items in each of 2 dimensions


def test_bayesian_fit_of_repeated_ids_gives_the_quantities_of_unique_ids(tables):
    unique, repeated = tables
    # binomial cells and scores: the ordinal likelihood would double the compile time of a fresh PyTensor cache;
    # its cells are indexed like the others (test_design_has_one_item_per_dimension_and_item_id)
    keep = ["implicit", "logprob"]

    def fit(table: pd.DataFrame):
        small = table[table["method"].isin(keep) & (table["session"] == table["session"].min())]
        config = FitConfig(chains=2, draws=100, tune=100, seed=3, max_draws=None)
        return fit_study(small, config=config).quantities

    a, b = fit(unique), fit(repeated)
    labels = ["quantity", "model", "dimension", "method"]
    pd.testing.assert_frame_equal(b[labels], a[labels])
    for col in ("mean", "hdi_low", "hdi_high"):
        assert np.allclose(b[col].to_numpy(dtype=float), a[col].to_numpy(dtype=float), equal_nan=True), col
