"""The README's worked example: the documented commands build it, the report takes seconds
without a fit, and its per-model verdict matrix shows each model's finding, as the checked-in screenshot does."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from _support.browser import screenshot_section
from _support.html import parse_html
from PIL import Image

from bias_validity.simulate.worked_example import RESPONSES_FILE, TRUTH

BIN = Path(sys.executable).parent
SCREENSHOT = Path(__file__).resolve().parents[1] / "docs" / "worked_example_matrix.png"
#: The matrix cell colours of reports/assets/report.css: supported, not supported, inconclusive.
GREEN, RED = (0xC8, 0xE6, 0xC9), (0xFF, 0xCD, 0xD2)


@pytest.fixture(scope="module")
def example(tmp_path_factory):
    """The README's two commands: write the study and its models file, report it without a fit."""
    folder = tmp_path_factory.mktemp("worked_example")
    subprocess.run(
        [sys.executable, "-m", "bias_validity.simulate.worked_example", str(folder)],
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
    )
    page = folder / "report.html"
    done = subprocess.run(
        [
            str(BIN / "bias-validity"),
            "report",
            str(folder / RESPONSES_FILE),
            "--models-file",
            str(folder / "worked_example_models.csv"),
            "--no-fit",
            "--out",
            str(page),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return folder, page


def _matrix(page: Path, question: str) -> dict[str, list[str]]:
    root = parse_html(page.read_text(encoding="utf-8"))
    table = next(t for t in root.iter("table") if t.attrs.get("id") == f"matrix-{question}")
    head = [th.all_text() for th in next(table.iter("thead")).iter("th")][1:]
    rows = {}
    for tr in next(table.iter("tbody")).iter("tr"):
        cells = [td.all_text() for td in tr.iter("td")]
        assert len(cells) == len(head)
        rows[next(tr.iter("th")).all_text()] = cells
    return rows


def test_the_gap_matrix_names_each_models_direction(example):
    q4 = _matrix(example[1], "Q4")
    assert sorted(q4) == sorted(TRUTH)
    expected = {
        "sim:base-1b": "credible positive gap",
        "sim:base-8b": "credible positive gap",
        "sim:tuned-1b": "inconclusive",
        "sim:tuned-8b": "credible negative gap",
    }
    for model, finding in expected.items():
        # a cell may sit on the ROPE's edge (base-8b gender_career: lower bound 0.05), never on the wrong side
        agree = [cell.startswith(finding) for cell in q4[model]]
        assert sum(agree) >= 2 and all(
            a or cell.startswith("inconclusive") for a, cell in zip(agree, q4[model], strict=True)
        ), (
            model,
            q4[model],
        )


def test_the_reflection_and_alignment_matrices(example):
    q5 = _matrix(example[1], "Q5")
    for model, spec in TRUTH.items():
        assert all(c.startswith("disowns" if spec["aligned"] else "endorses") for c in q5[model]), (model, q5[model])
    q6 = _matrix(example[1], "Q6")
    assert list(q6) == ["sim:tuned-1b", "sim:tuned-8b"]
    assert all(c.startswith("explicit down") for cells in q6.values() for c in cells)


def test_the_incomplete_design_is_answered_with_its_reasons(example):
    root = parse_html(example[1].read_text(encoding="utf-8"))
    q1 = next(t for t in root.iter("table") if t.attrs.get("id") == "matrix-Q1")
    titles = [td.attrs["title"] for td in q1.iter("td")]
    assert len(titles) == 12 and all("test-retest needs >= 2 sessions" in t for t in titles)
    assert "nan" not in " ".join(titles).lower()


def test_the_screenshot_shows_the_matrix_in_chromium(example, tmp_path):
    shot = screenshot_section(example[1], "per-model", tmp_path / "matrix.png", tmp_path / "chromium")
    if os.environ.get("BIAS_VALIDITY_UPDATE_DOCS"):  # refresh the README's picture
        shutil.copyfile(shot, SCREENSHOT)
    for png in (shot, SCREENSHOT):  # the fresh one and the one the README shows
        with Image.open(png) as im:
            assert im.format == "PNG" and im.width == 1280 and 600 < im.height <= 2400, (png, im.size)
            pixels = np.asarray(im.convert("RGB")).reshape(-1, 3).astype(int)
        for colour in (GREEN, RED):
            assert (np.abs(pixels - colour).sum(axis=1) <= 6).sum() > 3000, (png, colour)
