"""The report's property: on any responses table and models file, the report builds, renders and explains itself.

:func:`report_problems` builds the report of a table (a random one from :mod:`bias_validity.simulate.random_tables`)
and renders it in every format, and lists what does not hold. Shared by the property test
(``tests/test_property_reports.py``, bounded) and its benchmark (``bench/property_reports.py``, a longer run).

This module calls the analyses and the reports, as the command line does; the rest of
:mod:`bias_validity.simulate` sits below them.
"""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path

import pandas as pd

from bias_validity.analyses.models_meta import ModelsFileError, match_models, read_models_meta
from bias_validity.analyses.report import build_report
from bias_validity.analyses.result import VERDICT_COLUMNS, Verdict
from bias_validity.analyses.study import as_study
from bias_validity.reports import render_csv, render_html, render_json, render_markdown

__all__ = ["FALLBACK_TEXTS", "HTML_ROWS", "report_problems"]

#: The report's catch-all for a question that stopped on the data: a question must say why it is not estimable
#: in its own words, so none of its sentences may carry these.
FALLBACK_TEXTS: tuple[str, ...] = ("Not estimable on these data", "The analysis stopped on the data with")
#: Tables smaller than this are rendered to HTML too (figures cost about a second).
HTML_ROWS = 400
#: A missing figure printed as a number: ``nan`` as a word of its own (not inside a word or a hyphenated name).
_NAN = re.compile(r"(?<![\w-])nan(?![\w-])", re.IGNORECASE)


def _models_meta(table: pd.DataFrame, models_file: str, problems: list[str]) -> pd.DataFrame | None:
    """The models file read and matched to the table's models, as ``--models-file`` is; None where it is refused
    (the command line would stop there), with a problem where the refusal does not name the row and field."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "models.csv"
        path.write_text(models_file, encoding="utf-8")
        meta = read_models_meta(path)
    try:
        return match_models(meta, table["model"].astype(str).unique())
    except ModelsFileError as exc:  # the documented refusal: one line naming the row and field
        if "\n" in str(exc) or "field 'model'" not in str(exc):
            problems.append(f"models file refused without naming the row and field: {exc}")
        return None


def _text_problems(where: str, what: str, text: str) -> list[str]:
    """A sentence that is empty, falls back on the catch-all or prints NaN."""
    if not text.strip():
        return [f"{where}: empty {what}"]
    found = [f"{where}: {what} is the catch-all: {text}" for fallback in FALLBACK_TEXTS if fallback in text][:1]
    if _NAN.search(text):
        found.append(f"{where}: {what} prints NaN: {text}")
    return found


def report_problems(table: pd.DataFrame, models_file: str | None = None) -> list[str]:
    """Build and render the report of ``table``; the problems found (an empty list when the report holds).

    Parameters
    ----------
    table : pandas.DataFrame
        A responses table (e.g. :func:`bias_validity.simulate.random_tables.random_table`).
    models_file : str, optional
        A models file's CSV text (e.g. :func:`bias_validity.simulate.random_tables.random_models_file`), matched
        to the table's models as ``--models-file`` is.

    Returns
    -------
    list of str
        One line per problem: a models file refused without naming the row and field; a question whose summary
        or evidence, or a verdict whose reason, is empty, is the report's catch-all for a question that stopped
        (:data:`FALLBACK_TEXTS`) or prints NaN; a verdict table with other columns than
        :data:`bias_validity.analyses.result.VERDICT_COLUMNS` or an unknown verdict; a Markdown report without
        the per-model section, a JSON report that lost a question, a CSV without one row per verdict. Tables of
        fewer than :data:`HTML_ROWS` answers are rendered to HTML too.

    Raises
    ------
    Exception
        Whatever building or rendering the report raises: a crash shows as the exception it is.

    Examples
    --------
    >>> from bias_validity.simulate import simulate_responses
    >>> report_problems(simulate_responses(dimensions=["age"], n_items=4, seed=0))
    []
    """
    problems: list[str] = []
    meta = None if models_file is None else _models_meta(table, models_file, problems)
    report = build_report(as_study(table, models_meta=meta))
    for q in report.questions:
        problems += _text_problems(q.question, "summary", q.summary)
        problems += _text_problems(q.question, "evidence", q.evidence)
        if list(q.verdicts.columns) != list(VERDICT_COLUMNS):
            problems.append(f"{q.question}: verdict table columns {list(q.verdicts.columns)}")
        for row in q.verdicts.itertuples():
            reason = "" if pd.isna(row.reason) else str(row.reason)
            problems += _text_problems(f"{q.question} {row.model} {row.dimension}", "verdict reason", reason)
            if row.verdict not in {v.value for v in Verdict}:
                problems.append(f"{q.question}: unknown verdict {row.verdict!r}")
    markdown = render_markdown(report)
    if "## Verdicts per model and dimension" not in markdown:
        problems.append("the Markdown report lacks the per-model section")
    doc = json.loads(render_json(report))
    if [q["question"] for q in doc["questions"]] != [q.question for q in report.questions]:
        problems.append("the JSON report lost a question")
    csv_rows = render_csv(report).splitlines()
    expected = sum(max(len(q.verdicts), 1) for q in report.questions)
    if len(csv_rows) - 1 != expected:
        problems.append(f"the CSV holds {len(csv_rows) - 1} verdict rows, expected {expected}")
    if len(table) < HTML_ROWS:
        render_html(report)
    return problems
