"""The question registry: a new question is one function and one registration, and the report shows it."""

from __future__ import annotations

import pytest

from bias_validity.analyses.registry import register_question, registered_questions, unregister_question
from bias_validity.analyses.report import build_report
from bias_validity.analyses.result import QuestionResult, Verdict, verdict_table
from bias_validity.psychometrics.errors import NotEstimable
from bias_validity.reports import render_markdown
from bias_validity.simulate import simulate_responses


@pytest.fixture
def toy_question():
    @register_question("Q7", "Refusal rate")
    def refusals(study, posterior, config):
        counts = study.status_counts
        rate = counts.loc[counts["status"] == "refusal", "n"].sum() / counts["n"].sum()
        rows = [
            dict(model=m, dimension="all", verdict=Verdict.SUPPORTED, reason=f"refusal rate {rate:.3f}")
            for m in study.models
        ]
        return QuestionResult.answer(
            "Q7", Verdict.SUPPORTED, f"Refusal rate {rate:.3f}.", "status counts", verdicts=verdict_table(rows)
        )

    yield refusals
    unregister_question("Q7")


def test_a_seventh_question_registers_and_the_report_shows_it(toy_question):
    assert [q.number for q in registered_questions()] == ["Q1", "Q2", "Q3", "Q4", "Q5", "Q6", "Q7"]
    report = build_report(simulate_responses(dimensions=["age"], refusal_rate=0.1, seed=0))
    toy = report.questions[-1]
    assert (toy.question, toy.title, toy.verdict) == ("Q7", "Refusal rate", Verdict.SUPPORTED)
    rate = float(toy.summary.split()[-1].rstrip("."))
    assert 0.05 < rate < 0.1  # a tenth of the sampled answers refused; logprob and embedding rows never refuse
    assert "Refusal rate" in render_markdown(report)


def test_unregistering_removes_the_question(toy_question):
    unregister_question("Q7")
    assert [q.number for q in registered_questions()][-1] == "Q6"


def test_a_data_condition_is_not_estimable_and_a_bug_surfaces():
    @register_question("Q8", "Always short of data")
    def short(study, posterior, config):
        raise NotEstimable("needs 40 items per dimension, found 8")

    try:
        report = build_report(simulate_responses(dimensions=["age"], seed=0))
        answer = report.questions[-1]
        assert answer.verdict is Verdict.NOT_ESTIMABLE and "needs 40 items per dimension" in answer.summary

        @register_question("Q8", "Always short of data")
        def short(study, posterior, config):  # noqa: F811 - the same question, now with a bug
            return {}["missing"]

        with pytest.raises(KeyError):
            build_report(simulate_responses(dimensions=["age"], seed=0))
    finally:
        unregister_question("Q8")


def test_numbers_are_checked_and_taken_once():
    with pytest.raises(ValueError, match="must be 'Q' and a number"):
        register_question("seven", "x")
    with pytest.raises(ValueError, match="already registered"):
        register_question("Q1", "Another reliability")(lambda study, posterior, config: None)
