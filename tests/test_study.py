"""The analysis object: every view of a study is computed once, and one number gets one interval in a report."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from bias_validity.analyses import summary
from bias_validity.analyses.config import AnalysisConfig
from bias_validity.analyses.report import build_report
from bias_validity.analyses.study import Study, as_study
from bias_validity.probes.schema import CHOICE_PREFIX, WEAT_ITEM
from bias_validity.psychometrics.framing import ablation_retained_share
from bias_validity.simulate import simulate_responses


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    return simulate_responses(dimensions=["age", "race"], n_items=6, refusal_rate=0.05, seed=3)


def test_a_report_computes_each_table_view_once(table, monkeypatch):
    calls = {"sc": 0, "acquiescence": 0}
    sc, acq = summary._sc_table, summary._acquiescence_table

    def counted(name, compute):
        def wrapper(*args, **kwargs):
            calls[name] += 1
            return compute(*args, **kwargs)

        return wrapper

    monkeypatch.setattr(summary, "_sc_table", counted("sc", sc))
    monkeypatch.setattr(summary, "_acquiescence_table", counted("acquiescence", acq))
    build_report(table)
    assert calls == {"sc": 1, "acquiescence": 1}  # Q4 and the report's tables read the same acquiescence view


def test_views_are_cached_per_setting(table):
    study = as_study(table)
    config = AnalysisConfig(n_resamples=200)
    assert study.sc_table(config) is study.sc_table(config)
    other = study.sc_table(AnalysisConfig(n_resamples=200, seed=1))
    assert other is not study.sc_table(config) and other.attrs["seed"] == 1
    assert study.item_scores is study.item_scores


def test_the_framing_interval_of_the_implicit_sc_is_the_sc_tables(table):
    """Q3's chance guard and the SC table bootstrap the implicit SC over the same items with the same settings."""
    study, config = as_study(table), AnalysisConfig(n_resamples=300, seed=5)
    row = study.sc_table(config).set_index(["dimension", "method"]).loc[("age", "implicit")]
    cell = pd.concat([study.answers("implicit"), study.answers("ablated")]).query("dimension == 'age'")
    cell = cell.assign(consistent=cell["consistent"].astype(float))
    out = ablation_retained_share(cell, condition="method", outcome="consistent", cluster="item_id", **config.bootstrap)
    assert out["sc_implicit_low"].iloc[0] == pytest.approx(row["item_ci_low"], abs=1e-12)
    assert out["sc_implicit_high"].iloc[0] == pytest.approx(row["item_ci_high"], abs=1e-12)


def test_likert_view_codes_ratings_from_the_schema(table):
    likert = as_study(table).likert
    assert len(likert) > 0 and likert["method"].isin(["explicit", "reflection"]).all()
    rating = likert["likert"].to_numpy()
    np.testing.assert_array_equal(likert["keyed"], np.where(likert["reversed"], 6 - rating, rating))
    np.testing.assert_array_equal(likert["side"], rating != 3)
    np.testing.assert_array_equal(likert["agree"], rating > 3)
    sided = likert[likert["side"]]
    assert (sided["consistent"].astype(int) == (sided["agree"] != sided["reversed"]).astype(int)).all()


def test_score_rows_leave_out_weat_and_closed_set_rows(table):
    choice = table[table["method"] == "logprob"].head(2).assign(template_id=CHOICE_PREFIX + "t1")
    study = as_study(pd.concat([table, choice], ignore_index=True))
    assert not (study.scores["item_id"] == WEAT_ITEM).any()
    assert not study.scores["template_id"].str.startswith(CHOICE_PREFIX).any()
    assert set(study.weat["dimension"]) == {"age", "race"} and study.weat["score"].notna().all()
    assert (study.series[study.is_choice] == "implicit_expected").all()


def test_a_table_missing_a_column_is_refused_in_one_line():
    with pytest.raises(ValueError, match=r"^t.csv: the responses table lacks column\(s\) order, session$"):
        Study(
            pd.DataFrame(columns=["model", "dimension", "method", "template_id", "item_id", "status", "consistent"]),
            source="t.csv",
        )
