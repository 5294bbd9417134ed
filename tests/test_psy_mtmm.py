"""Multitrait-multimethod matrix on simulated data with a known trait/method structure."""

import numpy as np
import pandas as pd
import pytest

from bias_validity.psychometrics.mtmm import mtmm


def _simulate(rng, n_units, n_traits, trait_sd, method_sd, noise_sd, methods=("implicit", "logprob", "embedding")):
    """score = trait factor (unit x trait) + method factor (unit x method, shared by all traits) + noise.

    Trait factors correlate 0.7 ** |i - j| (a clear pattern of trait interrelations for criterion 4).
    """
    lags = np.abs(np.subtract.outer(np.arange(n_traits), np.arange(n_traits)))
    trait = trait_sd * rng.multivariate_normal(np.zeros(n_traits), 0.7**lags, size=n_units)
    method = rng.normal(0, method_sd, (n_units, len(methods)))
    rows = [
        (u, f"d{t}", m, trait[u, t] + method[u, j] + rng.normal(0, noise_sd))
        for u in range(n_units)
        for t in range(n_traits)
        for j, m in enumerate(methods)
    ]
    return pd.DataFrame(rows, columns=["model", "dimension", "method", "score"])


def _run(frame):
    return mtmm(frame, units="model", traits="dimension", methods="method", scores="score")


def test_matrix_entries_are_the_unit_level_correlations():
    frame = _simulate(np.random.default_rng(0), 8, 3, 1.0, 0.3, 0.5)
    res = _run(frame)
    wide = frame.pivot(index="model", columns=["dimension", "method"], values="score")
    expected = np.corrcoef(wide[("d0", "implicit")], wide[("d1", "logprob")])[0, 1]
    assert res.matrix.loc[("d0", "implicit"), ("d1", "logprob")] == pytest.approx(expected)
    kinds = res.correlations["kind"].value_counts().to_dict()
    # 9 columns: 3 traits x C(3,2) method pairs = 9 validities; 3 methods x 3 trait pairs = 9 monomethod; rest 18.
    assert kinds == {"heterotrait_heteromethod": 18, "validity": 9, "heterotrait_monomethod": 9}


def test_trait_dominant_structure_passes_all_four_criteria_in_most_replications():
    """Trait variance 1, method variance 0.05, noise variance 0.04, 40 units, 3 traits: all four criteria hold in
    >= 90 of 100 replications."""
    rng = np.random.default_rng(1)
    passed = sum(bool(_run(_simulate(rng, 40, 3, 1.0, 0.22, 0.2)).checks["passed"].all()) for _ in range(100))
    assert passed >= 90


def test_method_dominant_structure_fails_monomethod_discrimination():
    """A strong method factor (variance 4 vs trait 0.25) makes heterotrait-monomethod correlations exceed the
    validities: discriminant_monomethod fails in >= 90 of 100 replications."""
    rng = np.random.default_rng(2)
    failed = 0
    for _ in range(100):
        checks = _run(_simulate(rng, 30, 3, 0.5, 2.0, 0.3)).checks.set_index("criterion")
        failed += not checks.at["discriminant_monomethod", "passed"]
    assert failed >= 90


def test_two_traits_leave_pattern_untestable():
    res = _run(_simulate(np.random.default_rng(3), 10, 2, 1.0, 0.2, 0.3, methods=("implicit", "logprob")))
    row = res.checks.set_index("criterion").loc["trait_pattern"]
    assert pd.isna(row["passed"]) and "at least 3 traits" in row["reason"]


def test_refuses_fewer_than_five_units():
    frame = _simulate(np.random.default_rng(4), 4, 3, 1.0, 0.2, 0.3)
    with pytest.raises(ValueError, match="at least 5 units in column 'model'"):
        _run(frame)


def test_refuses_incomplete_design_and_constant_scores():
    frame = _simulate(np.random.default_rng(5), 6, 3, 1.0, 0.2, 0.3)
    with pytest.raises(ValueError, match="incomplete design"):
        _run(frame.iloc[1:])
    constant = frame.assign(score=np.where(frame["dimension"] == "d0", 1.0, frame["score"]))
    with pytest.raises(ValueError, match="constant across units"):
        _run(constant)
