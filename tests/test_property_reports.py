"""Property: on any responses table (random models, methods, dimensions, templates, sessions, statuses, missing
cells; one item, one model) and any models file, building and rendering the report never raises, every verdict
has a reason of its own (never the report's catch-all) and no sentence prints NaN. Bounded
here; bench/property_reports.py runs it longer."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from _support.property_reports import models_files, responses_tables
from hypothesis import HealthCheck, Phase, find, given, settings

from bias_validity.cli import _report_check as report_check
from bias_validity.cli._report_check import report_problems
from bias_validity.simulate import random_models_file, random_shape, random_table, simulate_responses, valid_orders

#: Examples per run of the fast suite (about a second each, no Bayesian fit).
EXAMPLES = 30


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(table=responses_tables(), models_file=models_files())
def test_any_table_gives_a_report_whose_verdicts_all_have_reasons(table, models_file):
    assert report_problems(table, models_file) == []


@pytest.mark.parametrize(
    "what, holds",
    [
        ("one item", lambda t: t.loc[t["item_id"] != "WEAT", "item_id"].nunique() == 1),
        ("one model", lambda t: t["model"].nunique() == 1),
        ("several models and every method", lambda t: t["model"].nunique() >= 3 and t["method"].nunique() == 6),
        ("one session", lambda t: t["session"].nunique() == 1),
        ("every status", lambda t: t["status"].nunique() == 5),
        ("no ok answer", lambda t: (t["status"] != "ok").all()),
        ("an incomplete wording design", lambda t: _incomplete(t)),
    ],
)
def test_the_tables_reach_the_edge_cases(what, holds):
    """The strategy reaches each shape the property is meant to cover (else it would pass by never trying it)."""
    found = find(
        responses_tables(),
        holds,
        settings=settings(
            max_examples=2000,
            database=None,
            deadline=None,
            phases=[Phase.generate],
            suppress_health_check=list(HealthCheck),
        ),
    )
    assert holds(found), what


def _incomplete(t) -> bool:
    """Two wordings of the implicit method that do not ask the same items x orders."""
    imp = t[t["method"] == "implicit"]
    cells = imp.groupby("template_id")[["item_id", "order"]].apply(lambda g: set(map(tuple, g.to_numpy())))
    return len(cells) >= 2 and len(set.intersection(*cells)) < len(set.union(*cells))


@settings(max_examples=EXAMPLES, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(table=responses_tables())
def test_the_tables_ask_each_method_in_its_own_orders(table):
    keys = table[["method", "template_id", "order"]].drop_duplicates().itertuples(index=False)
    wrong = [tuple(k) for k in keys if k.order not in valid_orders(k.method, k.template_id)]
    assert wrong == []


def test_numpy_draws_give_the_same_tables_and_files_again():
    """The benchmark's draws (numpy only) are reproducible from the seed."""

    def draw(seed):
        rng = np.random.default_rng(seed)
        return random_table(random_shape(rng), rng), random_models_file(rng)

    (a, file_a), (b, file_b) = draw(5), draw(5)
    pd.testing.assert_frame_equal(a, b)
    assert file_a == file_b


def test_the_check_sees_the_catch_all_and_nan(monkeypatch):
    """A report whose sentences fall back on the catch-all or print NaN fails the check (it is not vacuous)."""
    real = report_check.build_report

    def spoiled(study, fit=None, config=None):
        report = real(study, fit, config)
        report.questions[0].summary = "Test-retest ICC = nan [nan, nan]."
        report.questions[1].evidence = "The analysis stopped on the data with: a bug"
        first = next(q for q in report.questions if len(q.verdicts))
        first.verdicts.loc[first.verdicts.index[0], "reason"] = "Not estimable on these data: a bug"
        return report

    table = simulate_responses(dimensions=["age"], n_items=4, seed=0)
    assert report_problems(table) == []
    monkeypatch.setattr(report_check, "build_report", spoiled)
    problems = report_problems(table)
    assert any(p.startswith("Q1: summary prints NaN") for p in problems), problems
    assert any(p.startswith("Q2: evidence is the catch-all") for p in problems), problems
    assert any("verdict reason is the catch-all" in p for p in problems), problems
