"""Rendering only: HTML and Markdown validity reports and their figures."""
