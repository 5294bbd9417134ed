"""Property: on any responses table (random models, methods, dimensions, templates, sessions, statuses, missing
cells; one item, one model) and any models file, building and rendering the report never raises and every verdict
has a reason (issue 14, Deliver 3). Bounded here; bench/property_reports.py runs it longer."""

from __future__ import annotations

import pytest
from _support.property_reports import check_report, models_files, responses_tables
from hypothesis import HealthCheck, Phase, find, given, settings

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
    assert check_report(table, models_file) == []


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
