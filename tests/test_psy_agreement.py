"""Agreement coefficients against Krippendorff (2011), Fleiss (1971) as reproduced on Wikipedia, and closed forms."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from bias_validity.psychometrics.agreement import cohen_kappa, fleiss_kappa, krippendorff_alpha
from bias_validity.psychometrics.interval_kind import IntervalKind

NAN = np.nan
# Krippendorff (2011), "Computing Krippendorff's alpha-reliability", section C: 4 coders x 12 units, missing data.
KRIPPENDORFF_2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, NAN, NAN, NAN],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, NAN, 3],
    [NAN, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, NAN],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, NAN],
]


def _krippendorff_long() -> pd.DataFrame:
    rows = [(u, c, v) for c, coder in enumerate(KRIPPENDORFF_2011) for u, v in enumerate(coder)]
    return pd.DataFrame(rows, columns=["unit", "coder", "value"])


@pytest.mark.parametrize(
    ("level", "expected"), [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849), ("ratio", 0.797)]
)
def test_krippendorff_alpha_matches_krippendorff_2011(level, expected):
    """Krippendorff (2011) worked example: nominal 0.743, ordinal 0.815, interval 0.849, ratio 0.797.

    Unit 12 has a single value and is unpairable; it is dropped and alpha is unchanged.
    """
    out = krippendorff_alpha(
        _krippendorff_long(), units="unit", raters="coder", ratings="value", level=level, n_resamples=200, seed=0
    )
    assert out["alpha"].iloc[0] == pytest.approx(expected, abs=5e-4)
    assert out["n_units"].iloc[0] == 11 and out["n_values"].iloc[0] == 40
    assert out["ci_low"].iloc[0] < out["alpha"].iloc[0] < out["ci_high"].iloc[0] <= 1


def test_krippendorff_alpha_constant_ratings_nan():
    df = pd.DataFrame({"unit": [0, 0, 1, 1], "rep": [0, 1, 0, 1], "likert": [3, 3, 3, 3]})
    out = krippendorff_alpha(df, units="unit", raters="rep", ratings="likert")
    assert np.isnan(out["alpha"].iloc[0]) and "same value" in out.attrs["nan_reason"]


def test_krippendorff_alpha_bad_level():
    with pytest.raises(ValueError, match="valid levels are nominal, ordinal, interval, ratio"):
        krippendorff_alpha(_krippendorff_long(), units="unit", raters="coder", ratings="value", level="likert")


def test_krippendorff_alpha_single_rater_refused():
    df = pd.DataFrame({"unit": [0, 1, 2], "rep": [0, 0, 0], "likert": [1, 2, 3]})
    with pytest.raises(ValueError, match="at least 2 raters in column 'rep'"):
        krippendorff_alpha(df, units="unit", raters="rep", ratings="likert")


def test_cohen_kappa_matches_hand_worked_table():
    """2 x 2 table [[20, 5], [10, 15]]: po = 35/50 = 0.7, pe = (25*30 + 25*20)/50^2 = 0.5, kappa = 0.4."""
    a = [1] * 20 + [1] * 5 + [0] * 10 + [0] * 15
    b = [1] * 20 + [0] * 5 + [1] * 10 + [0] * 15
    df = pd.DataFrame({"unit": list(range(50)) * 2, "session": [1] * 50 + [2] * 50, "y": a + b})
    out = cohen_kappa(df, units="unit", raters="session", ratings="y", ci=0.9)
    assert out["kappa"].iloc[0] == pytest.approx(0.4)
    z = stats.norm.ppf(0.95)
    assert out["ci_high"].iloc[0] - out["kappa"].iloc[0] == pytest.approx(z * out["se"].iloc[0])
    assert 0.1 < out["se"].iloc[0] < 0.2


def test_weighted_cohen_kappa_quadratic_equals_closed_form():
    """Quadratic-weighted kappa = 1 - sum(w * O) / sum(w * E) with w_ij = (i - j)^2 (Cohen 1968)."""
    rng = np.random.default_rng(0)
    a = rng.integers(1, 6, 80)
    b = np.clip(a + rng.integers(-1, 2, 80), 1, 5)
    df = pd.DataFrame({"unit": list(range(80)) * 2, "rep": [0] * 80 + [1] * 80, "likert": np.concatenate([a, b])})
    observed = pd.crosstab(a, b).reindex(index=range(1, 6), columns=range(1, 6), fill_value=0).to_numpy() / 80
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    w = (np.arange(5)[:, None] - np.arange(5)[None, :]) ** 2
    truth = 1 - (w * observed).sum() / (w * expected).sum()
    out = cohen_kappa(df, units="unit", raters="rep", ratings="likert", weights="quadratic")
    assert out["kappa"].iloc[0] == pytest.approx(truth)


def test_cohen_kappa_needs_two_raters():
    df = pd.DataFrame({"unit": [0, 1, 0, 1, 0, 1], "rep": [0, 0, 1, 1, 2, 2], "y": [1, 0, 1, 0, 1, 1]})
    with pytest.raises(ValueError, match="exactly 2 raters"):
        cohen_kappa(df, units="unit", raters="rep", ratings="y")
    with pytest.raises(ValueError, match="valid choices are None, linear, quadratic"):
        cohen_kappa(df, units="unit", raters="rep", ratings="y", weights="cubic")


# Fleiss' kappa example (10 subjects, 14 raters, 5 categories) as on Wikipedia ("Fleiss' kappa"): kappa = 0.210.
FLEISS_COUNTS = [
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
]


def test_fleiss_kappa_matches_published_example():
    rows = [(s, c + 1) for s, counts in enumerate(FLEISS_COUNTS) for c, n in enumerate(counts) for _ in range(n)]
    df = pd.DataFrame(rows, columns=["subject", "category"])
    out = fleiss_kappa(df, units="subject", ratings="category", n_resamples=300, seed=1)
    assert out["kappa"].iloc[0] == pytest.approx(0.210, abs=5e-4)
    assert out["n_units"].iloc[0] == 10 and out["n_ratings"].iloc[0] == 14
    assert out["ci_low"].iloc[0] < 0.210 < out["ci_high"].iloc[0]


def test_fleiss_kappa_recovers_known_agreement():
    """Each of 5 answers keeps the unit's fixed answer with probability 0.8, else is a fair coin.

    Closed form: P(a pair agrees) = q^2 + (1 - q^2)/2 = 0.82 with q = 0.8, P_e = 0.5, kappa = 0.64. The 95%
    bootstrap interval covers it in >= 85 of 100 replications of 60 units.
    """
    rng = np.random.default_rng(4)

    def draw(n_units: int) -> pd.DataFrame:
        fixed = rng.integers(0, 2, (n_units, 1))
        keep = rng.random((n_units, 5)) < 0.8
        y = np.where(keep, fixed, rng.integers(0, 2, (n_units, 5)))
        return pd.DataFrame({"u": np.repeat(np.arange(n_units), 5), "y": y.ravel()})

    truth = (0.8**2 + (1 - 0.8**2) / 2 - 0.5) / 0.5
    hits = sum(
        (lambda o: o["ci_low"].iloc[0] <= truth <= o["ci_high"].iloc[0])(
            fleiss_kappa(draw(60), units="u", ratings="y", n_resamples=200, seed=0)
        )
        for _ in range(100)
    )
    assert hits >= 85


def test_fleiss_kappa_unequal_ratings_refused():
    df = pd.DataFrame({"u": [0, 0, 1, 1, 1], "y": [1, 0, 1, 1, 0]})
    with pytest.raises(ValueError, match="same number of ratings"):
        fleiss_kappa(df, units="u", ratings="y")


def test_agreement_coefficients_stamp_their_interval_kinds():
    alpha = krippendorff_alpha(_krippendorff_long(), units="unit", raters="coder", ratings="value", n_resamples=100)
    assert alpha.attrs["interval"] is IntervalKind.PERCENTILE
    same = pd.DataFrame({"unit": [0, 0, 1, 1], "coder": [0, 1, 0, 1], "value": [2, 2, 2, 2]})
    assert krippendorff_alpha(same, units="unit", raters="coder", ratings="value").attrs["interval"] is (
        IntervalKind.PERCENTILE
    )
    pairs = pd.DataFrame(
        {"item": list(range(6)) * 2, "s": [1] * 6 + [2] * 6, "y": [1, 1, 0, 0, 1, 0, 1, 1, 0, 1, 1, 0]}
    )
    assert cohen_kappa(pairs, units="item", raters="s", ratings="y").attrs["interval"] is IntervalKind.WALD
    cells = pd.DataFrame({"cell": np.repeat(range(5), 3), "y": [1, 1, 1, 0, 0, 0, 1, 1, 0, 1, 1, 1, 0, 0, 1]})
    assert fleiss_kappa(cells, units="cell", ratings="y", n_resamples=100).attrs["interval"] is IntervalKind.PERCENTILE
