"""Rendering only: HTML and Markdown validity reports and their figures.

``render_html(report)`` and ``render_markdown(report)`` turn an :class:`analyses.result.ValidityReport` into a
self-contained page or its Markdown twin; ``write_report(report, path)`` picks the format from the extension.
"""

from reports.html import render_html
from reports.markdown import render_markdown
from reports.write import REPORT_SUFFIXES, write_report

__all__ = ["render_html", "render_markdown", "write_report", "REPORT_SUFFIXES"]
