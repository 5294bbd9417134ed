"""The Markdown twin of the validity report: the same sections as tables, figures referenced by title."""

from __future__ import annotations

from bias_validity.analyses.result import ValidityReport
from bias_validity.reports import _sections as s

__all__ = ["render_markdown"]

_TITLE = "Bias measurement validity report"
#: Backslash first, so the escapes added after it are not doubled; & before the entities that use it.
_ESCAPES = (("\\", "\\\\"), ("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"), ("`", "\\`"), ("[", "\\["), ("]", "\\]"))


def render_markdown(report: ValidityReport) -> str:
    """Render a validity report as Markdown (GitHub-flavoured tables).

    Parameters
    ----------
    report : bias_validity.analyses.result.ValidityReport
        What ``analyses`` computed; nothing is recomputed here.

    Returns
    -------
    str
        A Markdown document with the HTML report's sections in the same order (see
        :func:`bias_validity.reports.html.render_html`); each figure is replaced by a line naming it and the table of
        its data. A missing part renders as "not available: <reason>".

    Notes
    -----
    Text from models or user files is escaped for Markdown: ``|`` and backticks (which would break a table or open
    code), brackets (links), and ``<``, ``>``, ``&`` as entities so raw HTML in an answer is shown, not rendered.
    Newlines inside a cell become ``<br>``.

    Examples
    --------
    >>> import pandas as pd
    >>> from bias_validity.analyses.result import QuestionResult, ValidityReport, Verdict
    >>> q = QuestionResult("Q1", "Reliability", Verdict.SUPPORTED, "ICC 0.81 [0.70, 0.88]", "a|b `x`")
    >>> md = render_markdown(ValidityReport([q], sc_table=pd.DataFrame(), status_counts=pd.DataFrame()))
    >>> print(md.splitlines()[8])
    | Q1 Reliability | supported | ICC 0.81 \\[0.70, 0.88\\] | a\\|b \\`x\\` |
    """
    lines = [f"# {_TITLE}", "", _text(s.summary(report)), ""]
    banner = s.failure_banner(report)
    if banner:
        lines += [_block(banner), ""]
    for section in s.build_sections(report, draw=False):
        lines += [f"## {section.title}", ""]
        for block in section.blocks:
            lines += [_block(block), ""]
    return "\n".join(lines)


def _block(block: object) -> str:
    if isinstance(block, s.Table):
        caption = f"**{_text(block.caption)}**\n\n" if block.caption else ""
        return caption + _table(block)
    if isinstance(block, s.Matrix):
        return f"**{_text(block.caption)}**\n\n" + _matrix(block)
    if isinstance(block, s.Image):
        return f"*Figure: {_text(block.title)} (drawn in the HTML report; its data follow).*"
    if isinstance(block, s.Unavailable):
        return f"*not available: {_text(block.reason)}*"
    if isinstance(block, s.Banner):
        return f"> **{_text(block.text)}**"
    return _text(block.text)


def _matrix(matrix: s.Matrix) -> str:
    """Models as rows, dimensions as columns; each cell 'verdict: finding (figure)'."""
    header = "| model | " + " | ".join(_cell(c) for c in matrix.columns) + " |"
    rule = "|" + "|".join("---" for _ in range(len(matrix.columns) + 1)) + "|"
    rows = [f"| {_cell(model)} | {' | '.join(_matrix_cell(c) for c in cells)} |" for model, cells in matrix.grid()]
    return "\n".join([header, rule, *rows])


def _matrix_cell(cell: s.MatrixCell | None) -> str:
    if cell is None:
        return "-"
    text = cell.verdict if cell.finding == cell.verdict else f"{cell.verdict}: {cell.finding}"
    return _cell(f"{text} ({cell.figure})" if cell.figure else text)


def _table(table: s.Table) -> str:
    frame = table.data
    header = "| " + " | ".join(_cell(c) for c in frame.columns) + " |"
    rule = "|" + "|".join("---" for _ in frame.columns) + "|"
    rows = ["| " + " | ".join(_cell(v) for v in values) + " |" for values in frame.itertuples(index=False, name=None)]
    return "\n".join([header, rule, *rows])


def _cell(value: object) -> str:
    text = _text(s.format_cell(value)).replace("|", "\\|")
    return "<br>".join(part for part in text.splitlines()) if "\n" in text or "\r" in text else text


def _text(value: str) -> str:
    for old, new in _ESCAPES:
        value = value.replace(old, new)
    return value
