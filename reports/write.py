"""Write a validity report to a file, the format chosen by the file's extension."""

from __future__ import annotations

from pathlib import Path

from bias_validity.analyses.result import ValidityReport

__all__ = ["write_report", "REPORT_SUFFIXES"]

#: Extensions :func:`write_report` understands.
REPORT_SUFFIXES: tuple[str, ...] = (".html", ".htm", ".md", ".json", ".csv")


def write_report(report: ValidityReport, path: str | Path) -> Path:
    """Render a validity report and write it to ``path``: HTML (.html/.htm), Markdown (.md), or as data: JSON
    (.json, every question with its per-model verdicts and figures) or CSV (.csv, the verdict rows).

    Parameters
    ----------
    report : bias_validity.analyses.result.ValidityReport
        The report to render.
    path : str or pathlib.Path
        Destination; its extension (case-insensitive) picks the format. Missing parent folders are created.

    Returns
    -------
    pathlib.Path
        The path written.

    Notes
    -----
    The text is written to a temporary file beside the target and renamed onto it, so a failed render never
    leaves a half-written report.

    Examples
    --------
    >>> import pandas as pd, tempfile
    >>> report = ValidityReport([], sc_table=pd.DataFrame(), status_counts=pd.DataFrame())
    >>> out = write_report(report, Path(tempfile.mkdtemp()) / "report.md")
    >>> out.read_text(encoding="utf-8").splitlines()[0]
    '# Bias measurement validity report'
    >>> write_report(report, "report.pdf")
    Traceback (most recent call last):
    ...
    ValueError: report path 'report.pdf' has extension '.pdf'; valid extensions: .html, .htm, .md, .json, .csv
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in REPORT_SUFFIXES:
        raise ValueError(
            f"report path '{path}' has extension '{path.suffix}'; valid extensions: {', '.join(REPORT_SUFFIXES)}"
        )
    if suffix == ".md":
        from bias_validity.reports.markdown import render_markdown

        text = render_markdown(report)
    elif suffix in (".json", ".csv"):
        from bias_validity.reports.data import render_csv, render_json

        text = render_json(report) if suffix == ".json" else render_csv(report)
    else:
        from bias_validity.reports.html import render_html

        text = render_html(report)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)
    return path
