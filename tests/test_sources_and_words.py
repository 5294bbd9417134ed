"""What a figure is said to be: the collinearity checks that can fire, the ROPE named as a convention, the
direction of reflection minus implicit, and figures at zero printed as zero."""

from __future__ import annotations

import numpy as np
import pandas as pd

from bias_validity.analyses.config import AnalysisConfig
from bias_validity.analyses.questions import gap
from bias_validity.analyses.questions._common import figure_row, figures_frame
from bias_validity.psychometrics.bayes import scaling_identifiability
from bias_validity.psychometrics.bayes.scaling import COLLINEAR
from bias_validity.psychometrics.estimands import ESTIMANDS, Quantity, Thresholds
from bias_validity.reports._sections import format_cell
from bias_validity.simulate import simulate_responses


def _design(r: float, n: int = 40, seed: int = 0) -> pd.DataFrame:
    """Log size and log data with sample correlation exactly ``r``."""
    rng = np.random.default_rng(seed)
    a, b = rng.normal(size=(2, n))
    a, b = (a - a.mean()) / a.std(), b - b.mean()
    b = b - (b @ a) / n * a
    b /= b.std()
    return pd.DataFrame({"parameters": np.exp(a), "training_tokens": np.exp(r * a + np.sqrt(1 - r * r) * b)})


def test_the_condition_number_is_shown_and_never_a_check_of_its_own():
    """For two centred predictors it is sqrt((1 + |r|) / (1 - |r|)): past 30 only beyond |r| = 0.9978, where the
    VIF (past 5 beyond |r| = 0.894) has fired long before."""
    assert set(COLLINEAR) == {"vif", "slope_correlation"}
    out = scaling_identifiability(_design(0.999))
    assert out["condition_number"] > 30 and out["collinear"]
    assert "condition number" not in out["reason"] and "VIF" in out["reason"]
    r_at_30 = (30**2 - 1) / (30**2 + 1)
    assert r_at_30 > 0.9977 and 1 / (1 - r_at_30**2) > 200  # the VIF at the condition number's limit
    assert not scaling_identifiability(_design(0.5))["collinear"]


def test_the_gap_rope_is_named_a_convention_with_its_rationale():
    t = simulate_responses(dimensions=["age"], sc={"implicit": 0.8, "explicit": 0.2}, item_sd=0.0, seed=0)
    default = gap(t, config=AnalysisConfig(n_resamples=200))
    assert "by convention, not an empirical norm" in default.evidence and "--gap-rope" in default.evidence
    assert "convention" in Thresholds.__doc__
    own = gap(t, config=AnalysisConfig(n_resamples=200, thresholds=Thresholds(gap_rope=0.1)))
    assert "ROPE +/-0.1 as set" in own.evidence and "convention" not in own.evidence


def test_reflection_minus_implicit_says_disowning_is_a_reflection_sc_below_a_half():
    direction = ESTIMANDS[Quantity.REFLECTION_MINUS_IMPLICIT].direction
    assert "reflection SC below 0.5" in direction and not direction.startswith("below 0: the model disowns")


def test_figures_at_zero_print_as_zero():
    frame = figures_frame([figure_row("m", "d", "form_shift (T1 - T2)", -1.1e-16, -0.2, 2e-17, "", 10, "")])
    assert frame[["estimate", "ci_high"]].iloc[0].tolist() == [0.0, 0.0]
    assert format_cell(frame["estimate"].iloc[0]) == "0.000" and "e-1" not in format_cell(frame["ci_high"].iloc[0])
