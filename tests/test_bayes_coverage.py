"""Calibration: 90% HDIs of SC and gap cover the truth in 85-95% of 100 simulated studies (slow; bench/fit.py)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest


@pytest.mark.slow
def test_ninety_percent_intervals_cover_85_to_95_percent_of_truths():
    path = Path(__file__).resolve().parents[1] / "bench" / "fit.py"
    spec = importlib.util.spec_from_file_location("bench_fit", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    out = bench.part_coverage(100, prob=0.9)
    assert 0.85 <= out["coverage_sc"] <= 0.95, out
    assert 0.85 <= out["coverage_gap_explicit_implicit"] <= 0.95, out
