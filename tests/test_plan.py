"""``plan``: the design each question needs, from a pilot or stated assumptions, checked by simulation through the
questions' own estimators; the report's reasons and Planning section; ``bias-validity plan``."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats
from scipy.special import gammaln

import bias_validity as bv
from bias_validity.analyses.config import AnalysisConfig
from bias_validity.analyses.plan import PLAN_COLUMNS, plan
from bias_validity.analyses.report import build_report
from bias_validity.cli import main
from bias_validity.psychometrics.planning import Assumptions, PlanTargets
from bias_validity.reports.markdown import render_markdown
from bias_validity.simulate import simulate_responses


@pytest.fixture(scope="module")
def pilot():
    return simulate_responses(dimensions=["age", "race"], n_items=8, seed=4)


def test_sc_items_solve_the_half_width_by_hand():
    """No item spread: an item's SC varies only binomially, 0.7 x 0.3 / 24 answers (3 wordings x 2 sessions x 4
    orders), and the plan is the fewest items m with t(0.975, m - 1) c4(m) sqrt(0.21 / 24 / m) <= 0.05."""

    def half(m: int) -> float:
        c4 = np.sqrt(2 / (m - 1)) * np.exp(gammaln(m / 2) - gammaln((m - 1) / 2))
        return stats.t.ppf(0.975, m - 1) * c4 * np.sqrt(0.21 / 24 / m)

    expected = next(m for m in range(5, 500) if half(m) <= 0.05)
    table = plan(Assumptions(sc={"implicit": 0.7}, item_sd=0.0, score_corr=None), PlanTargets(max_reps=1))
    row = table[table["question"] == "SC"].iloc[0]
    assert (int(row["items"]), int(row["reps"])) == (expected, 1)
    assert row["planned_half_width"] == pytest.approx(half(expected), rel=1e-6)
    assert int(row["answers"]) == expected * 24 and list(table.columns[: len(PLAN_COLUMNS)]) == list(PLAN_COLUMNS)


def test_the_check_achieves_what_the_plan_promises():
    """200 studies drawn at each planned design, run through the questions' estimators: the mean half-width within
    15% of the planned one, and the deciding rows decide in at least 75% of them (planned power 80%)."""
    truth = Assumptions(sc={"implicit": 0.75, "explicit": 0.45}, item_sd=0.5, template_sd=0.8, score_corr=None)
    table = plan(
        truth,
        PlanTargets(half_width=0.08),
        config=AnalysisConfig(n_resamples=500),
        check=True,
        check_replications=200,
    )
    checked = table[table["check_replications"] == 200]
    assert {"SC", "Q1", "Q4"} <= set(checked["question"])
    ratio = checked["planned_half_width"] / checked["achieved_half_width"]
    assert ratio.between(0.85, 1.15).all(), checked[["quantity", "planned_half_width", "achieved_half_width"]]
    deciding = checked[checked["target"].str.startswith("decide")]
    assert (deciding["planned_power"] >= 0.8).all() and (deciding["decide_share"] >= 0.75).all()


def test_a_pilot_plans_every_question_per_cell(pilot):
    table = plan(pilot)
    cells = table[table["dimension"] != "all"]
    assert set(cells["dimension"]) == {"age", "race"}
    assert set(table["question"]) == {"SC", "Q1", "Q2", "Q3", "Q4", "Q5"}
    assert set(table.loc[table["question"] == "Q2", "dimension"]) == {"all"}
    sc = table[table["question"] == "SC"].set_index("dimension")["assumed"]
    ok = pilot[(pilot["method"] == "implicit") & (pilot["status"] == "ok")]
    assert sc.to_dict() == pytest.approx(ok.groupby("dimension")["consistent"].mean().to_dict(), abs=0.03)
    reached = table[table["items"].notna()]
    assert (reached["items"] >= 5).all() and reached["would_decide"].str.contains("items per dimension").all()
    assert table.attrs["source"].startswith("pilot") and table.attrs["thresholds"]["gap_rope"] == 0.05


def test_a_design_the_pilot_already_covers_adds_no_answers(pilot):
    table = plan(pilot, PlanTargets(half_width=0.45, max_reps=1))
    sc = table[table["question"] == "SC"].iloc[0]
    assert int(sc["items"]) == 5 and int(sc["more_answers"]) == 0
    assert sc["would_decide"].startswith("the pilot already covers")


def test_costs_price_the_more_answers(pilot):
    table = plan(pilot, seconds_per_answer=2.0, price_per_1k_tokens=0.5, tokens_per_answer=100.0)
    more = table["more_answers"].astype(float)
    assert np.allclose(table["hours"], more * 2 / 3600, equal_nan=True)
    assert np.allclose(table["cost"], more * 100 / 1000 * 0.5, equal_nan=True)
    with pytest.raises(ValueError, match="--tokens-per-answer"):
        plan(Assumptions(sc={"implicit": 0.7}), price_per_1k_tokens=0.5)
    with pytest.raises(ValueError, match="--seconds-per-answer"):
        plan(pilot, seconds_per_answer=-1.0)


def test_bad_targets_and_assumptions_name_the_field(pilot):
    with pytest.raises(ValueError, match="unknown field.*half"):
        plan(pilot, targets={"half": 0.1})
    with pytest.raises(ValueError, match="sc needs implicit"):
        plan(Assumptions(sc={"explicit": 0.4}))
    with pytest.raises(ValueError, match="check_replications"):
        plan(pilot, check=True, check_replications=5)


def test_the_report_ends_undecided_reasons_with_what_would_decide_them(pilot):
    report = build_report(pilot, config=AnalysisConfig(n_resamples=200))
    undecided = [
        (q.question, r.reason)
        for q in report.questions
        if q.question in ("Q1", "Q3", "Q4")
        for r in q.verdicts.itertuples()
        if r.verdict in ("inconclusive", "not estimable")
    ]
    assert undecided, "the pilot leaves some cells undecided"
    endings = ("more answers", "at the assumed figure)", "no design decides it")
    for question, reason in undecided:
        last = reason.rsplit("; ", 1)[-1]
        assert last.startswith(("would decide with about", "the pilot already covers", "no design")), (question, last)
        assert reason.endswith(endings) or "no design decides it" in last, reason
        assert "nan" not in reason.lower().split()
    assert {"plan", "plan_summary"} <= set(report.extra_tables)
    markdown = render_markdown(report)
    assert "## Planning: the design that would decide" in markdown and "would decide with about" in markdown


def test_cli_plans_from_assumptions_as_json(capsys):
    argv = ["plan", "--sc", "implicit=0.7", "--sc", "explicit=0.4", "--item-sd", "1.0", "--template-sd", "0.5"]
    assert main([*argv, "--json", "--seconds-per-answer", "3"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["source"] == "stated assumptions" and doc["targets"]["half_width"] == 0.05
    rows = {(r["question"], r["target"]): r for r in doc["rows"]}
    gap = rows[("Q4", "decide, 80% power")]
    assert gap["items"] >= 5 and gap["hours"] == pytest.approx(gap["more_answers"] * 3 / 3600)


def test_cli_reads_a_pilot_table(tmp_path, pilot, capsys):
    path = tmp_path / "pilot.csv"
    pilot.to_csv(path, index=False)
    assert main(["plan", str(path), "--half-width", "0.1"]) == 0
    out = capsys.readouterr().out
    assert "sc (implicit)" in out and "half-width 0.1" in out


@pytest.mark.parametrize(
    "argv, message",
    [
        (["plan"], "a pilot store or responses table, or --sc"),
        (["plan", "--sc", "implicit"], "--sc takes METHOD=SC"),
        (["plan", "--sc", "implicit=0.7", "--power", "1.5"], "power must be"),
        (["plan", "--sc", "implicit=0.7", "--seconds-per-answer", "0"], "--seconds-per-answer"),
    ],
)
def test_cli_usage_errors_are_one_line(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1


def test_plan_is_public():
    assert bv.plan is plan and "plan" in bv.__all__
