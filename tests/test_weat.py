"""WEAT against hand-computed values, its null distribution, and Caliskan et al. (2017) on GloVe."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from bias_validity.probes.weat import pair_association, weat_effect_size, weat_p_value, weat_test

#: Caliskan et al. (2017)'s ten WEAT word lists (tests/data/README.md gives the source).
CALISKAN = Path(__file__).parent / "data" / "caliskan2017_weat.json"

# A = {(1,0)}, B = {(0,1)}; X = {(1,0), (1,1)}, Y = {(0,1), (1,1)}.
# s(w) = cos(w, A) - cos(w, B): s(1,0) = 1, s(1,1) = .7071 - .7071 = 0, s(0,1) = -1.
# s_X = (1, 0), s_Y = (-1, 0): mean difference 0.5 - (-0.5) = 1; sample SD of (1, 0, -1, 0) = sqrt(2/3).
# d = 1 / sqrt(2/3) = sqrt(1.5) = 1.2247449.
# Partitions of (1, 0, -1, 0) into pairs, sum of the X part: 1, 0, 1, -1, 0, -1 -> 2 of 6 are >= 1 (observed): p = 1/3.
TINY = (
    np.array([[1.0, 0.0], [1.0, 1.0]]),
    np.array([[0.0, 1.0], [1.0, 1.0]]),
    np.array([[1.0, 0.0]]),
    np.array([[0.0, 1.0]]),
)


def test_tiny_closed_form():
    assert weat_effect_size(*TINY) == pytest.approx(math.sqrt(1.5), abs=1e-12)
    assert weat_p_value(*TINY) == pytest.approx(1 / 3, abs=1e-12)


def test_swapping_targets_negates_d_and_swapping_attributes_too():
    rng = np.random.default_rng(3)
    X, Y, A, B = (rng.normal(size=(8, 10)) for _ in range(4))
    d = weat_effect_size(X, Y, A, B)
    assert d != 0
    assert weat_effect_size(Y, X, A, B) == pytest.approx(-d, abs=1e-12)
    assert weat_effect_size(X, Y, B, A) == pytest.approx(-d, abs=1e-12)
    # cosine similarity ignores vector length
    assert weat_effect_size(3 * X, Y, A, 0.5 * B) == pytest.approx(d, abs=1e-12)


def test_p_value_is_valid_under_the_null():
    """Exchangeable targets: P(p <= alpha) must be close to alpha (exact test, 6+6 targets, 924 partitions)."""
    rng = np.random.default_rng(11)
    p = np.array([weat_p_value(*(rng.normal(size=(6, 5)) for _ in range(4))) for _ in range(400)])
    for alpha in (0.05, 0.2, 0.5):
        share = np.mean(p <= alpha)
        se = math.sqrt(alpha * (1 - alpha) / len(p))
        assert abs(share - alpha) < 4 * se, (alpha, share)


def test_sampled_p_value_agrees_with_exact_and_detects_a_planted_association():
    rng = np.random.default_rng(5)
    A, B = rng.normal(size=(5, 20)), rng.normal(size=(5, 20))
    X = rng.normal(size=(7, 20)) + 0.6 * A.mean(0)
    Y = rng.normal(size=(7, 20)) + 0.6 * B.mean(0)
    exact = weat_p_value(X, Y, A, B, n_permutations=5000)  # C(14, 7) = 3432 partitions: enumerated
    sampled = weat_p_value(X, Y, A, B, n_permutations=3000, seed=1)
    assert exact < 0.01 and weat_effect_size(X, Y, A, B) > 1
    assert sampled == pytest.approx(exact, abs=0.005)
    assert weat_test(X, Y, A, B, n_permutations=5000).attrs["exact"] is True


def test_nan_rows_are_dropped_and_counted():
    X, Y, A, B = TINY
    nan = np.full((1, 2), np.nan)
    row = weat_test(np.vstack([X, nan]), Y, np.vstack([nan, A]), B).iloc[0]
    assert row["effect_size"] == pytest.approx(math.sqrt(1.5))
    assert (row["n_x"], row["n_a"], row["n_dropped"]) == (2, 1, 2)
    with pytest.raises(ValueError, match="A has 0 vectors without NaN"):
        weat_effect_size(X, Y, nan, B)


def test_invalid_inputs_give_one_line_errors():
    X, Y, A, B = TINY
    with pytest.raises(ValueError, match="one common dimension"):
        weat_effect_size(X, Y, A, np.ones((2, 3)))
    with pytest.raises(ValueError, match="identical for every word"):
        weat_effect_size(X[:1], X[:1], A, B)
    with pytest.raises(ValueError, match="n_permutations"):
        weat_p_value(X, Y, A, B, n_permutations=0)


def test_pair_association():
    x, y = np.array([1.0, 0.0]), np.array([0.0, 1.0])
    a, b = np.array([[1.0, 0.0], [1.0, 1.0]]), np.array([[0.0, 1.0]])
    # s(x) = (1 + .7071)/2 - 0 = .85355; s(y) = (0 + .7071)/2 - 1 = -.64645; difference 1.5
    assert pair_association(x, y, a, b) == pytest.approx(1.5)
    assert pair_association(y, x, a, b) == pytest.approx(-1.5)
    assert np.isnan(pair_association(np.array([np.nan, 0.0]), y, a, b))
    assert np.isnan(pair_association(x, y, np.full((1, 2), np.nan), b))


def _caliskan_results(glove):
    tests = json.loads(CALISKAN.read_text())
    rows = []
    for i, test in enumerate(tests, start=1):
        sets = [glove.embed_words(test[k]["words"]) for k in ("first_target", "second_target")]
        sets += [glove.embed_words(test[k]["words"]) for k in ("first_attribute", "second_attribute")]
        row = weat_test(*sets).iloc[0]
        label = f"WEAT{i} {test['first_target']['name']}/{test['second_target']['name']}"
        rows.append((label, float(row["effect_size"]), float(row["p_value"]), int(row["n_dropped"])))
        print(f"{label}: d={row['effect_size']:.2f} p={row['p_value']:.4f} dropped={int(row['n_dropped'])}")
    return rows


def test_caliskan_flowers_and_instruments_on_glove(glove):
    """Caliskan et al. (2017) report d = 1.50 (flowers/insects) and 1.53 (instruments/weapons) on GloVe 840B."""
    rows = _caliskan_results(glove)
    for label, d, p, _ in rows[:2]:
        assert d > 1 and p < 0.01, (label, d, p)
    # all ten tests point the way the human IAT does on these 6B-50d vectors (d from 0.96 to 1.71)
    assert all(d > 0.5 for _, d, _, _ in rows)
