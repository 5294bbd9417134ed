"""Per-model verdicts as a matrix (models x dimensions) for every question that gives them, and the reliability and
scaling sections. Selecting and reshaping only: every verdict, figure and reason was computed by ``analyses``."""

from __future__ import annotations

from bias_validity.analyses.result import (
    ALL_DIMENSIONS,
    QuestionResult,
    ValidityReport,
    describe_verdicts,
    figure_text,
)
from bias_validity.reports._sections import (
    Matrix,
    MatrixCell,
    Table,
    Text,
    Unavailable,
    _interval_note,
)

__all__ = ["verdict_matrix", "matrix_blocks", "reliability_blocks", "scaling_blocks"]

_SCALING_DESIGN = ("slope_log_", "predictor_correlation", "condition_number", "slope_correlation", "vif")


def verdict_matrix(question: QuestionResult) -> Matrix:
    """The question's verdict table as a grid: models in order of appearance, dimensions sorted, ``all`` last."""
    table = question.verdicts
    dims = sorted({str(d) for d in table["dimension"]}, key=lambda d: (d == ALL_DIMENSIONS, d))
    cells = {
        (str(r.model), str(r.dimension)): MatrixCell(
            r.verdict, r.finding, figure_text(r.estimate, r.ci_low, r.ci_high, missing=""), r.reason
        )
        for r in table.itertuples()
    }
    rows = tuple(dict.fromkeys(str(m) for m in table["model"]))
    return Matrix(question.question, f"{question.question} {question.title}", rows, tuple(dims), cells)


def matrix_blocks(report: ValidityReport) -> tuple:
    """For each question with per-model verdicts: its study-level line, the matrix and the rows behind it."""
    blocks: list = []
    for q in report.questions:
        if len(q.verdicts):
            blocks += [
                Text(f"{q.question} {q.title}: {describe_verdicts(q.verdicts)}."),
                verdict_matrix(q),
                Table(
                    q.verdicts.reset_index(drop=True), caption=f"Data: {q.question} verdicts per model", collapsed=True
                ),
            ]
    if not blocks:
        return (Unavailable("no question in this report gives verdicts per model"),)
    rest = [q.question for q in report.questions if not len(q.verdicts)]
    if rest:
        blocks.append(Text(f"{', '.join(rest)}: a study-level verdict only (see the verdict table)."))
    return tuple(blocks)


def _question(report: ValidityReport, question: str) -> QuestionResult | None:
    return next((q for q in report.questions if q.question == question), None)


def reliability_blocks(report: ValidityReport) -> tuple:
    """Q1's figures within each dimension (the decisive ones) apart from those pooled over dimensions."""
    table = report.extra_tables.get("reliability")
    if table is not None and len(table):
        return (Table(table, caption=f"Reliability estimates{_interval_note(table)}"),)
    q1 = _question(report, "Q1")
    if q1 is None or not len(q1.figures):
        return (Unavailable("no reliability table and no Q1 figures"),)
    figs = q1.figures
    if "dimension" not in figs.columns:
        return (Table(figs.reset_index(drop=True), caption=f"Q1 reliability figures{_interval_note(figs)}"),)
    scope = figs.attrs.get("icc_scope")
    within, pooled = figs[figs["dimension"] != ALL_DIMENSIONS], figs[figs["dimension"] == ALL_DIMENSIONS]
    blocks: list = []
    if scope:
        blocks.append(
            Text(
                f"The decisive ICCs are computed {scope}. Rows pooled over dimensions mix "
                "between-dimension differences into the ICC: they rank dimensions and decide nothing."
            )
        )
    blocks.append(Table(within.reset_index(drop=True), caption=f"Q1 figures per dimension{_interval_note(figs)}"))
    if len(pooled):
        blocks.append(Table(pooled.reset_index(drop=True), caption="Pooled over dimensions (not deciding)"))
    return tuple(blocks)


def scaling_blocks(report: ValidityReport) -> tuple:
    """Q6's answer, its slopes and design diagnostics, and the base-versus-tuned contrasts."""
    q6 = _question(report, "Q6")
    if q6 is None:
        return (Unavailable("no Q6 in this report"),)
    if not len(q6.figures) or "measure" not in q6.figures.columns:
        return (Unavailable(f"{q6.summary} {q6.evidence}"),)
    figs = q6.figures
    design = figs["measure"].astype(str).str.startswith(_SCALING_DESIGN)
    blocks: list = [
        Text(q6.summary),
        Table(
            figs[design].reset_index(drop=True), caption=f"Size and training-data slopes, design{_interval_note(figs)}"
        ),
    ]
    if (~design).any():
        blocks.append(Table(figs[~design].reset_index(drop=True), caption="Aligned minus base, per dimension"))
    return tuple(blocks)
