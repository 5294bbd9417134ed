"""Simulation-based calibration that can fail: a small design, truths from the prior, ranks among posterior draws.

Size: 1 model x 1 dimension x 2 binary methods x 4 items x 2 templates, 10 answers per cell; 40 replications of
2 chains x 200 draws, ranks among 49 thinned draws in 5 bins (80 SC ranks, 16 expected per bin). It detects a prior
scale off by 2x: truths drawn from a prior twice as wide as the fitted one fall outside the posteriors too often (a
U-shaped histogram, p < 0.001 at these sizes), while the calibrated case passes at the 1% level. The 200 + 100
replication study of the demo-like and paper-like designs is bench/calibration.py.
"""

from __future__ import annotations

import numpy as np
import pytest

from bias_validity.psychometrics.bayes import index_design, simulate_study
from bias_validity.psychometrics.bayes.sbc import simulation_based_calibration

_SIZE = dict(replications=40, draws=200, tune=200, chains=2, ranks_of=49, seed=1)


@pytest.fixture(scope="module")
def design():
    sim = simulate_study(units=1, traits=1, items=4, templates=2, orders=1, reps=10, seed=0, ordinal_methods=(),
                         score_methods=())  # fmt: skip
    return index_design(sim["binary"])


def test_ranks_are_uniform_when_the_prior_is_the_generating_one(design):
    families = simulation_based_calibration(design, **_SIZE).family_summary(bins=5)
    assert families["sc"]["ranks"] == 80
    assert families["sc"]["p_uniform"] > 0.01, families
    assert 0.8 <= families["sc"]["coverage_90"] <= 0.98, families


def test_ranks_reveal_a_prior_scale_off_by_two(design):
    result = simulation_based_calibration(design, generating_scale=2.0, **_SIZE)
    families = result.family_summary(bins=5)
    assert families["sc"]["p_uniform"] < 0.001, families
    extreme = np.isin(result.ranks[:, (result.labels["quantity"] == "sc").to_numpy()], (0, result.draws)).mean()
    assert extreme > 0.1  # calibrated: 2 / 50 = 0.04 of the ranks lie at either end
