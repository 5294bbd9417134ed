"""Rendering only: HTML and Markdown validity reports and their figures.

``render_html(report)`` and ``render_markdown(report)`` turn an :class:`bias_validity.analyses.result.ValidityReport`
into a self-contained page or its Markdown twin; ``write_report(report, path)`` picks the format from the extension.
"""

from bias_validity.reports.html import render_html
from bias_validity.reports.markdown import render_markdown
from bias_validity.reports.write import REPORT_SUFFIXES, write_report

__all__ = ["render_html", "render_markdown", "write_report", "REPORT_SUFFIXES"]
