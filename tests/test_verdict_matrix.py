"""Verdicts at the level the question is asked, for Q1 and Q6: a study whose models differ keeps
each model's finding in the study-level line, the matrix (HTML with coloured cells, Markdown) and the JSON/CSV."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest
from _support.browser import check_report_in_browser
from _support.html import parse_html
from _support.studies import DIMENSIONS, llama3_meta, llama3_study, mixed_reliability_study
from PIL import Image

from bias_validity.analyses.report import build_report
from bias_validity.analyses.result import Verdict
from bias_validity.analyses.study import as_study
from bias_validity.reports import render_html, render_markdown, write_report

#: The matrix cell colours of reports/assets/report.css: supported, not supported, not estimable.
GREEN, RED, GREY = (0xC8, 0xE6, 0xC9), (0xFF, 0xCD, 0xD2), (0xE6, 0xE8, 0xEB)
AMBER = (0xFF, 0xE9, 0xB3)  #: inconclusive


@pytest.fixture(scope="module")
def mixed():
    """Three models: one reliable, one answering coin flips, one with a single wording and session."""
    return build_report(mixed_reliability_study())


def _q(report, question):
    return next(q for q in report.questions if q.question == question)


def test_the_study_line_keeps_each_models_finding(mixed):
    q1 = _q(mixed, "Q1")
    assert q1.verdict is Verdict.INCONCLUSIVE  # the study-level conjunction ...
    # ... does not hide that one model is reliable in every dimension
    assert "reliable in 3/3 dimensions for sim:steady" in q1.summary
    # a coin flip's SC does not move; 64 answers a form cannot show it within +/-0.10
    assert "inconclusive in 3/3 dimensions for sim:coin" in q1.summary
    assert "not estimable in 3/3 dimensions for sim:single" in q1.summary


def test_the_verdict_table_has_one_row_per_model_and_dimension_with_its_deciding_figure(mixed):
    table = _q(mixed, "Q1").verdicts.set_index(["model", "dimension"])
    assert len(table) == 9 and set(table.index.get_level_values("dimension")) == {"age", "race", "science"}
    steady = table.loc["sim:steady"]
    # the within-dimension SC shift nearest the limit, equivalent within +/-0.10
    assert (steady["verdict"] == "supported").all() and (steady[["ci_low", "ci_high"]].abs() < 0.1).all().all()
    assert steady["measure"].str.startswith(("form shift", "session shift")).all()
    coin = table.loc["sim:coin"]
    assert (coin["verdict"] == "inconclusive").all() and (coin[["ci_low", "ci_high"]].abs().max(axis=1) > 0.1).all()
    single = table.loc["sim:single"]
    assert single["estimate"].isna().all()
    assert single["reason"].str.contains("test-retest needs >= 2 sessions").all()
    assert (table["reason"].str.len() > 0).all()


def test_html_shows_the_matrix_with_cells_coloured_by_verdict(mixed):
    root = parse_html(render_html(mixed))
    matrix = next(t for t in root.iter("table") if t.attrs.get("id") == "matrix-Q1")
    head = [th.all_text() for th in next(matrix.iter("thead")).iter("th")]
    assert head == ["model", "age", "race", "science"]
    body = list(next(matrix.iter("tbody")).iter("tr"))
    assert [next(r.iter("th")).all_text() for r in body] == ["sim:coin", "sim:single", "sim:steady"]
    classes = [[td.attrs["class"] for td in r.iter("td")] for r in body]
    assert classes == [
        ["matrix-cell verdict-inconclusive"] * 3,
        ["matrix-cell verdict-not-estimable"] * 3,
        ["matrix-cell verdict-supported"] * 3,
    ]
    steady = list(body[2].iter("td"))[0]
    assert steady.all_text().startswith("reliable") and steady.attrs["title"].startswith("supported: ")


def test_markdown_shows_the_matrix_as_a_table(mixed):
    md = render_markdown(mixed)
    start = md.index("**Q1 Reliability**\n\n| model | age | race | science |")
    rows = md[start:].split("\n\n", 2)[1].splitlines()[2:]
    assert [r.split(" | ")[0] for r in rows] == ["| sim:coin", "| sim:single", "| sim:steady"]
    assert all(cell.startswith("supported: reliable (") for cell in rows[2].strip("| ").split(" | ")[1:])


def test_json_and_csv_carry_the_same_rows(mixed, tmp_path):
    q1 = _q(mixed, "Q1")
    doc = json.loads(write_report(mixed, tmp_path / "report.json").read_text(encoding="utf-8"))
    rows = doc["questions"][0]["verdicts"]
    assert [(r["model"], r["dimension"], r["verdict"], r["finding"]) for r in rows] == list(
        q1.verdicts[["model", "dimension", "verdict", "finding"]].itertuples(index=False, name=None)
    )
    assert rows[3]["estimate"] is None  # a missing figure is null, not NaN
    with open(write_report(mixed, tmp_path / "report.csv"), newline="", encoding="utf-8") as f:
        table = list(csv.DictReader(f))
    model_rows = [r for r in table if r["question"] == "Q1"]
    assert {r["level"] for r in model_rows} == {"model"} and len(model_rows) == 9
    assert [(r["model"], r["dimension"], r["verdict"]) for r in model_rows] == [
        (r["model"], r["dimension"], r["verdict"]) for r in rows
    ]
    # a question without per-model verdicts (Q6 without a models file) carries its study-level row, its summary as
    # the reason; every other question carries one row per verdict
    study_rows = {r["question"]: r for r in table if r["level"] == "study"}
    assert set(study_rows) == {"Q6"}
    assert study_rows["Q6"]["reason"] == _q(mixed, "Q6").summary
    for q in mixed.questions[:5]:
        assert sum(r["question"] == q.question for r in table) == len(q.verdicts) > 0, q.question


@pytest.fixture(scope="module")
def llama():
    return build_report(as_study(llama3_study(), models_meta=llama3_meta()))


def test_q6_matrix_has_a_row_per_tuned_model_and_a_column_per_dimension(llama):
    q6 = _q(llama, "Q6")
    root = parse_html(render_html(llama))
    matrix = next(t for t in root.iter("table") if t.attrs.get("id") == "matrix-Q6")
    body = list(next(matrix.iter("tbody")).iter("tr"))
    assert [next(r.iter("th")).all_text() for r in body] == list(dict.fromkeys(q6.verdicts["model"]))
    assert len(body) == 2 and all(len(list(r.iter("td"))) == len(DIMENSIONS) for r in body)
    csv_rows = list(csv.DictReader(io.StringIO(write_csv(llama))))
    assert sum(r["question"] == "Q6" and r["level"] == "model" for r in csv_rows) == 2 * len(DIMENSIONS)
    scaling = render_markdown(llama).split("## Scaling and alignment", 1)[1]
    assert "slope_log_parameters" in scaling and "not identified: training_tokens take one value" in scaling


def write_csv(report) -> str:
    from bias_validity.reports import render_csv

    return render_csv(report)


def test_the_matrix_is_coloured_in_chromium(mixed, tmp_path):
    page = write_report(mixed, tmp_path / "report.html")
    shown = check_report_in_browser(
        page, tmp_path / "chromium", expected_verdicts=[(q.question, q.verdict.value) for q in mixed.questions]
    )
    q1 = next(t for t in shown.dom.iter("table") if t.attrs.get("id") == "matrix-Q1")
    cells = [td for td in q1.iter("td") if "matrix-cell" in td.attrs.get("class", "")]
    assert len(cells) == 9
    with Image.open(shown.screenshot) as im:
        pixels = np.asarray(im.convert("RGB")).reshape(-1, 3)
    # three cells of each colour, each at least 7em x 2 lines: thousands of pixels of each verdict colour
    for colour in (GREEN, AMBER, GREY):  # Q1: sim:steady reliable, sim:coin inconclusive, sim:single
        assert (np.abs(pixels.astype(int) - colour).sum(axis=1) <= 6).sum() > 3000, colour
