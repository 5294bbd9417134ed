"""The self-contained HTML validity report: inline CSS, figures as base64 PNG, no script, no network."""

from __future__ import annotations

import base64
import numbers
from html import escape
from importlib import resources

import pandas as pd

from bias_validity.analyses.result import ValidityReport
from bias_validity.reports import _sections as s

__all__ = ["render_html"]

_TITLE = "Bias measurement validity report"
#: Defence in depth: even if some text escaped escaping, the page may run no script and load nothing from outside.
_CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"
_TEXT_COLUMNS = frozenset({"prompt", "raw_response"})


def render_html(report: ValidityReport) -> str:
    """Render a validity report as one self-contained HTML page.

    Parameters
    ----------
    report : bias_validity.analyses.result.ValidityReport
        What ``analyses`` computed; nothing is recomputed here.

    Returns
    -------
    str
        An HTML5 document. Sections, in order: title and one-paragraph summary (with a FAILED banner when the
        Bayesian fit failed its diagnostics), verdict table (question, verdict, summary, evidence), the per-model
        verdict matrix of each question that gives one (models as rows, dimensions as columns, cells coloured by
        verdict, the reason on hover), forest plot of
        SC per model x dimension x method (posterior HDIs where a posterior is present, else Wilson intervals on
        the raw SC, labelled which), explicit-implicit gap plot, reliability table, MTMM heatmap, ablation drop
        ratio plot, further posterior quantities, status and refusal counts, diagnostics, provenance, example
        answers, each question's figures, and any further ``extra_tables``. A missing part renders as
        "not available: <reason>".

    Notes
    -----
    Every string that can come from a model or a user file (prompts, raw responses, model names, template ids,
    summaries, evidence) is HTML-escaped with :func:`html.escape`, so ``<script>`` in an answer shows as text.
    The page carries no script and a Content-Security-Policy that forbids scripts and any outside resource.
    Figures are matplotlib PNGs (Agg canvas) embedded as ``data:`` URIs. Checked by rendering in headless
    Chromium (tests/test_reports_browser.py): the verdict table is present, images decode, an injected script
    does not run.

    Examples
    --------
    >>> from bias_validity.analyses.result import QuestionResult, ValidityReport, Verdict
    >>> q = QuestionResult("Q3", "Framing", Verdict.NOT_ESTIMABLE, "<b>no</b> ablated answers", "0 answers")
    >>> page = render_html(ValidityReport([q], sc_table=pd.DataFrame(), status_counts=pd.DataFrame()))
    >>> "&lt;b&gt;no&lt;/b&gt; ablated answers" in page, "<b>no</b>" in page
    (True, False)
    >>> "not available: no Bayesian fit in this report" in page
    True
    """
    sections = s.build_sections(report, draw=True)
    banner = s.failure_banner(report)
    nav = "".join(f'<a href="#{sec.key}">{escape(sec.title)}</a>' for sec in sections)
    body = "\n".join(_section(sec) for sec in sections)
    css = resources.files(__package__).joinpath("assets/report.css").read_text(encoding="utf-8")
    top = _block(banner) if banner else ""
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{_TITLE}</title>\n<style>\n{css}</style>\n</head>\n<body>\n<main>\n"
        f"<h1>{_TITLE}</h1>\n"
        f'<p class="summary">{escape(s.summary(report))}</p>\n{top}'
        f"<nav>{nav}</nav>\n{body}\n"
        "<footer>Rendered by bias-validity reports; every figure was computed by its analyses.</footer>\n"
        "</main>\n</body>\n</html>\n"
    )


def _section(section: s.Section) -> str:
    blocks = "\n".join(_block(b, verdicts=section.key == "verdicts") for b in section.blocks)
    return f'<section id="{section.key}">\n<h2>{escape(section.title)}</h2>\n{blocks}\n</section>'


def _block(block: object, *, verdicts: bool = False) -> str:
    if isinstance(block, s.Table):
        return _table(block, verdicts=verdicts)
    if isinstance(block, s.Matrix):
        return _matrix(block)
    if isinstance(block, s.Image):
        data = base64.b64encode(block.png or b"").decode("ascii")
        return (
            f'<figure><img src="data:image/png;base64,{data}" alt="{escape(block.alt)}">'
            f"<figcaption>{escape(block.title)}</figcaption></figure>"
        )
    if isinstance(block, s.Unavailable):
        return f'<p class="unavailable">not available: {escape(block.reason)}</p>'
    if isinstance(block, s.Banner):
        return f'<div class="banner" role="alert">{escape(block.text)}</div>'
    return f'<p class="note">{escape(block.text)}</p>'


def _matrix(matrix: s.Matrix) -> str:
    """Models as rows, dimensions as columns; each cell coloured by its verdict, its reason on hover."""
    head = "<th>model</th>" + "".join(f"<th>{escape(c)}</th>" for c in matrix.columns)
    rows = [
        f'<tr><th scope="row">{escape(model)}</th>{"".join(_matrix_cell(c) for c in cells)}</tr>'
        for model, cells in matrix.grid()
    ]
    return (
        f'<div class="scroll"><table class="matrix" id="matrix-{escape(matrix.key)}">'
        f"<caption>{escape(matrix.caption)}</caption><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody>"
        '</table></div><p class="legend"><span class="verdict-supported">supported</span> '
        '<span class="verdict-not-supported">not supported</span> <span class="verdict-inconclusive">inconclusive'
        '</span> <span class="verdict-not-estimable">not estimable</span>; each cell gives the finding and its '
        "deciding figure, and its reason on hover (and in the data below).</p>"
    )


def _matrix_cell(cell: s.MatrixCell | None) -> str:
    if cell is None:
        return '<td class="matrix-cell not-asked">-</td>'
    figure = f'<span class="figure">{escape(cell.figure)}</span>' if cell.figure else ""
    return (
        f'<td class="matrix-cell verdict-{escape("-".join(cell.verdict.split()))}" '
        f'title="{escape(f"{cell.verdict}: {cell.reason}")}">{escape(cell.finding)}{figure}</td>'
    )


def _table(table: s.Table, *, verdicts: bool) -> str:
    frame = table.data
    head = "".join(f"<th>{escape(str(c))}</th>" for c in frame.columns)
    rows = []
    for values in frame.itertuples(index=False, name=None):
        cells = "".join(_cell(col, v, verdicts) for col, v in zip(frame.columns, values, strict=True))
        rows.append(f"<tr>{cells}</tr>")
    klass = "data verdicts" if verdicts else "data"
    table_id = ' id="verdict-table"' if verdicts else ""
    caption = f"<caption>{escape(table.caption)}</caption>" if table.caption and not table.collapsed else ""
    html = (
        f'<div class="scroll"><table class="{klass}"{table_id}>{caption}'
        f"<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
    )
    if table.collapsed:
        return f"<details><summary>{escape(table.caption)}</summary>{html}</details>"
    return html


def _cell(column: object, value: object, verdicts: bool) -> str:
    text = escape(s.format_cell(value))
    if verdicts and column == "verdict":
        return f'<td class="verdict verdict-{escape("-".join(str(value).split()))}">{text}</td>'
    if column in _TEXT_COLUMNS:
        return f'<td class="text">{text}</td>'
    if isinstance(value, numbers.Number) and not isinstance(value, bool) and not pd.isna(value):
        return f'<td class="num">{text}</td>'
    return f"<td>{text}</td>"
