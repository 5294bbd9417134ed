"""The Likert SC follows its declared formula.

The declared SC of a Likert method (``psychometrics/estimands.py``, ``_SC_FORMULA``) is the equal-weight mean of
P(agree | statement) and P(disagree | reversal) among ratings that take a side; for ``reflection`` the two kinds
are the model's own consistent and inconsistent completions shown to it. A stance-free yea-sayer (it agrees
whatever is stated) therefore has SC 0.5 whatever share of one polarity it leaves on the midpoint, and whatever
share of its own completions were consistent. The tables are built row by row with ``answer_row``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from bias_validity.analyses.config import AnalysisConfig
from bias_validity.analyses.questions import gap, reflection
from bias_validity.analyses.questions._common import consistent_counts
from bias_validity.analyses.questions.gap import POSITIVE_GAP
from bias_validity.analyses.questions.reflection import ENDORSES
from bias_validity.analyses.summary import sc_table
from bias_validity.probes.schema import ATTRIBUTE_ORDERS, IMPLICIT_ORDERS, REVERSED_SUFFIX
from bias_validity.simulate import answer_row, rows_to_table

MODEL, DIM = "sim:yea", "age"
CONFIG = AnalysisConfig(n_resamples=400)


def _row(method: str, template: str, item: str, order: str, session: int, rep: int, **answer) -> dict:
    return answer_row(
        model=MODEL,
        dimension=DIM,
        method=method,
        template_id=template,
        item_id=item,
        order=order,
        session=session,
        rep=rep,
        **answer,
    )


def _rating(rng: np.random.Generator, agree: bool) -> int:
    return int(rng.integers(4, 6) if agree else rng.integers(1, 3))


def yea_sayer(
    *,
    seed: int = 0,
    n_items: int = 20,
    reps: int = 5,
    p_agree: float = 0.85,
    midpoint_reversed: float = 0.8,
    implicit_sc: float = 0.5,
    reflection_rows: bool = False,
    reflection_midpoint: float = 0.0,
) -> pd.DataFrame:
    """A stance-free yea-sayer: agrees with any statement at ``p_agree`` (its SC by the formula: exactly 0.5).

    Explicit: statements rated on a side always; reversals on the midpoint at ``midpoint_reversed``. Implicit:
    consistent at ``implicit_sc``. With ``reflection_rows``, each implicit answer is shown back (inconsistent ones
    reversed) and agreed with at ``p_agree``, on the midpoint at ``reflection_midpoint``.
    """
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n_items):
        item = f"{DIM}-{i + 1:02d}"
        for session in (1, 2):
            for rep in range(reps):
                for order in ATTRIBUTE_ORDERS:
                    likert = _rating(rng, rng.random() < p_agree)
                    rows.append(_row("explicit", "explicit-1", item, order, session, rep, likert=likert))
                    flipped = rng.random() < midpoint_reversed
                    likert = 3 if flipped else _rating(rng, rng.random() < p_agree)
                    rows.append(
                        _row("explicit", "explicit-1", item, order + REVERSED_SUFFIX, session, rep, likert=likert)
                    )
                for order in IMPLICIT_ORDERS:
                    c = int(rng.random() < implicit_sc)
                    rows.append(_row("implicit", "implicit-1", item, order, session, rep, consistent=c))
                    if reflection_rows:
                        shown = order if c else order + REVERSED_SUFFIX
                        mid = rng.random() < reflection_midpoint
                        likert = 3 if mid else _rating(rng, rng.random() < p_agree)
                        rows.append(_row("reflection", "reflect/implicit-1", item, shown, session, rep, likert=likert))
    return rows_to_table(rows, source="yea_sayer")


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    return yea_sayer()


def test_sc_table_gives_the_yea_sayer_the_declared_formula(table):
    """The yea-sayer's explicit SC is 0.5 by the formula (its pooled k/n is about 0.73); both intervals cover 0.5."""
    row = sc_table(table, CONFIG).set_index("method").loc["explicit"]
    assert row["sc"] == pytest.approx(0.5, abs=0.05)
    assert row["ci_low"] < 0.5 < row["ci_high"]
    assert row["item_ci_low"] < 0.5 < row["item_ci_high"]
    assert row["balanced"] and row["note"] == ""
    # the pooled counts stay what they are: k_consistent / n_side is not the SC here
    assert row["k_consistent"] / row["n_side"] > 0.65


def test_consistent_counts_gives_the_formula_for_likert_rows_and_k_over_n_otherwise(table):
    """consistent_counts gives the formula's 0.50 for the explicit rows (pooled k/n: 0.73); implicit rows stay k / n."""
    explicit = table[(table["method"] == "explicit") & table["consistent"].notna()]
    implicit = table[table["method"] == "implicit"]
    got = consistent_counts(explicit, ["model"]).iloc[0]
    assert got["sc"] == pytest.approx(0.5, abs=0.05) and got["k"] / got["n"] > 0.65
    imp = consistent_counts(implicit, ["model"]).iloc[0]
    assert imp["sc"] == imp["k"] / imp["n"]


def test_a_one_polarity_group_is_labelled_and_is_that_one_rate(table):
    """New: a Likert group of statements only or reversals only is never pooled silently (no such label before)."""
    from bias_validity.analyses.study import NOT_BALANCED, ONLY_REVERSALS, sc_counts

    explicit = table[(table["method"] == "explicit") & table["consistent"].notna()]
    by_order = sc_counts(explicit.assign(rev=explicit["order"].str.endswith(REVERSED_SUFFIX)), ["rev"])
    by_order = by_order.set_index("rev")
    assert not by_order["balanced"].any()
    assert by_order.loc[False, "note"] == NOT_BALANCED and by_order.loc[True, "note"] == ONLY_REVERSALS
    assert (by_order["sc"] == by_order["k"] / by_order["n"]).all()


def test_gap_finds_no_positive_gap_for_the_yea_sayer_against_an_implicit_sc_of_a_half(table):
    """Against an implicit SC of 0.5 the yea-sayer's gap is about 0 and its interval spans 0: no credible gap."""
    res = gap(table, config=CONFIG)
    row = res.verdicts.iloc[0]
    assert row["finding"] != POSITIVE_GAP
    assert row["estimate"] == pytest.approx(0.0, abs=0.05)
    assert row["ci_low"] < 0 < row["ci_high"]
    these = res.figures[res.figures["interval"] == "Newcombe"].iloc[0]
    assert these["estimate"] == pytest.approx(row["estimate"]) and these["ci_low"] < 0 < these["ci_high"]


def test_the_sc_intervals_cover_the_formula_value_in_most_seeds():
    """The Wilson-based and item intervals of the SC cover the formula's 0.5 in most seeds (over 40 seeds: 0.975 and
    0.925 at a nominal 0.95); those of the pooled share would miss it in every seed."""
    seeds = range(6)
    covered = {"ci": 0, "item": 0}
    for seed in seeds:
        t = yea_sayer(seed=seed, n_items=10, reps=3)
        row = sc_table(t, AnalysisConfig(n_resamples=300, seed=seed)).set_index("method").loc["explicit"]
        covered["ci"] += row["ci_low"] <= 0.5 <= row["ci_high"]
        covered["item"] += row["item_ci_low"] <= 0.5 <= row["item_ci_high"]
    assert covered["ci"] >= 5 and covered["item"] >= 5, covered


def test_reflection_weighs_the_two_kinds_of_shown_completion_equally():
    """Implicit SC 0.9, a yea-sayer shown its own answers: reflection SC 0.50 with an item-cluster interval that
    spans 0.5, never 'endorses' (pooling the ratings would weight them by the implicit SC and give about 0.85)."""
    t = yea_sayer(implicit_sc=0.9, reflection_rows=True, reflection_midpoint=0.3, seed=1)
    res = reflection(t, config=CONFIG)
    pooled = res.verdicts.set_index("dimension").loc["all"]
    assert pooled["finding"] != ENDORSES
    assert pooled["estimate"] == pytest.approx(0.5, abs=0.05)
    assert pooled["ci_low"] < 0.5 < pooled["ci_high"]
    fig = res.figures.query("dimension == 'all' and measure == 'sc_reflection'").iloc[0]
    assert fig["interval"] == "item-cluster bootstrap, t-corrected"
    # against the explicit SC (also 0.5 by the formula): no difference
    diff = res.figures.query("dimension == 'all' and measure == 'reflection_minus_explicit'").iloc[0]
    assert diff["estimate"] == pytest.approx(0.0, abs=0.07) and diff["ci_low"] < 0 < diff["ci_high"]


def test_reflection_interval_covers_the_formula_value_in_most_seeds():
    """The reflection SC's interval covers the formula's 0.5 (the pooled share, about 0.85, lies far from it)."""
    hits = 0
    for seed in range(8):  # the interval covers 0.9 of the time over 40 seeds at a nominal 0.95
        t = yea_sayer(implicit_sc=0.9, reflection_rows=True, n_items=15, reps=2, seed=10 + seed)
        fig = reflection(t, config=AnalysisConfig(n_resamples=300, seed=seed)).figures
        row = fig.query("dimension == 'all' and measure == 'sc_reflection'").iloc[0]
        hits += row["ci_low"] <= 0.5 <= row["ci_high"]
    assert hits >= 6, hits
