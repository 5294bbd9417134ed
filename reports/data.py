"""The report as data: JSON (every question with its per-model verdicts and figures) and CSV (the verdict rows)."""

from __future__ import annotations

import io
import json
import math

import pandas as pd

from bias_validity.analyses.result import ALL_DIMENSIONS, VERDICT_COLUMNS, ValidityReport
from bias_validity.reports._sections import summary

__all__ = ["verdict_rows", "render_json", "render_csv"]


def _plain(value: object) -> object:
    """JSON-ready: NaN and infinities as null, numpy scalars as Python numbers, containers walked."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, str):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _records(frame: pd.DataFrame | None) -> list[dict[str, object]] | None:
    """A table as JSON records (NaN and missing values as null)."""
    if frame is None:
        return None
    return json.loads(frame.to_json(orient="records", default_handler=str))


def verdict_rows(report: ValidityReport) -> pd.DataFrame:
    """Every question's verdicts as one table: ``question``, ``title``, ``level`` and the verdict columns.

    ``level`` is ``model`` for the rows of a question's per-model verdict table (``QuestionResult.verdicts``,
    the rows its matrix shows) and ``study`` for the one row of a question that gives a study-level verdict only,
    whose reason is its summary sentence.

    Examples
    --------
    >>> from bias_validity.analyses.result import QuestionResult, Verdict
    >>> q = QuestionResult.answer("Q3", Verdict.NOT_ESTIMABLE, "No ablated answers.", "0 answers")
    >>> rows = verdict_rows(ValidityReport([q], sc_table=pd.DataFrame(), status_counts=pd.DataFrame()))
    >>> rows[["question", "level", "model", "verdict", "reason"]].to_dict("records")
    [{'question': 'Q3', 'level': 'study', 'model': 'all', 'verdict': 'not estimable', 'reason': 'No ablated answers.'}]
    """
    parts = []
    for q in report.questions:
        if len(q.verdicts):
            rows = q.verdicts.assign(level="model")
        else:
            rows = pd.DataFrame(
                [
                    dict(
                        model=ALL_DIMENSIONS,
                        dimension=ALL_DIMENSIONS,
                        verdict=q.verdict.value,
                        finding=q.verdict.value,
                        measure="",
                        reason=q.summary,
                        level="study",
                    )
                ]
            )
        parts.append(rows.assign(question=q.question, title=q.title))
    columns = ["question", "title", "level", *VERDICT_COLUMNS]
    if not parts:
        return pd.DataFrame(columns=columns)
    return pd.concat(parts, ignore_index=True).reindex(columns=columns)


def render_json(report: ValidityReport) -> str:
    """The report as one JSON document.

    Keys: ``summary`` (the report's paragraph), ``questions`` (each with ``question``, ``title``, ``verdict``,
    ``summary``, ``evidence``, ``verdicts``: the per-model rows of :data:`VERDICT_COLUMNS`, ``figures`` and
    ``figure_settings``), ``sc_table``, ``status_counts``, ``posterior`` and ``diagnostics`` (null without a fit),
    ``provenance``. Missing figures are null.

    Examples
    --------
    >>> from bias_validity.analyses.result import QuestionResult, Verdict
    >>> q = QuestionResult.answer("Q1", Verdict.SUPPORTED, "Reliable.", "40 answers")
    >>> doc = json.loads(render_json(ValidityReport([q], sc_table=pd.DataFrame(), status_counts=pd.DataFrame())))
    >>> doc["questions"][0]["verdict"], doc["questions"][0]["verdicts"], doc["posterior"]
    ('supported', [], None)
    """
    questions = [
        dict(
            question=q.question,
            title=q.title,
            verdict=q.verdict.value,
            summary=q.summary,
            evidence=q.evidence,
            verdicts=_records(q.verdicts),
            figures=_records(q.figures),
            figure_settings=_plain({k: v for k, v in q.figures.attrs.items() if not isinstance(v, pd.DataFrame)}),
        )
        for q in report.questions
    ]
    doc = {
        "summary": summary(report),
        "questions": questions,
        "sc_table": _records(report.sc_table),
        "status_counts": _records(report.status_counts),
        "posterior": _records(report.posterior),
        "diagnostics": _plain(report.diagnostics),
        "provenance": _plain(report.provenance),
    }
    return json.dumps(doc, indent=1, default=str, allow_nan=False) + "\n"


def render_csv(report: ValidityReport) -> str:
    """The verdict rows of every question (:func:`verdict_rows`) as CSV; missing figures are empty fields."""
    buffer = io.StringIO()
    verdict_rows(report).to_csv(buffer, index=False)
    return buffer.getvalue()
