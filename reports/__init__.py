"""Rendering only: HTML and Markdown validity reports, their figures, and the report as JSON or CSV data.

``render_html(report)`` and ``render_markdown(report)`` turn an :class:`bias_validity.analyses.result.ValidityReport`
into a self-contained page or its Markdown twin, ``render_json`` and ``render_csv`` into data (per-model verdict rows
included); ``write_report(report, path)`` picks the format from the extension.
"""

from bias_validity.reports.data import render_csv, render_json
from bias_validity.reports.html import render_html
from bias_validity.reports.markdown import render_markdown
from bias_validity.reports.write import REPORT_SUFFIXES, write_report

__all__ = ["render_html", "render_markdown", "render_json", "render_csv", "write_report", "REPORT_SUFFIXES"]
