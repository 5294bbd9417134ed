"""Reliability against Shrout & Fleiss (1979), pingouin's examples, closed forms and simulated known reliability."""

import numpy as np
import pandas as pd
import pingouin
import pytest

from bias_validity.psychometrics.interval_kind import IntervalKind
from bias_validity.psychometrics.reliability import ICC_FORMS, cronbach_alpha, icc, spearman_brown, split_half

SHROUT_FLEISS = [[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]]


def _long(matrix: np.ndarray) -> pd.DataFrame:
    n, k = matrix.shape
    return pd.DataFrame({"cell": np.repeat(np.arange(n), k), "session": np.tile(np.arange(k), n), "sc": matrix.ravel()})


def test_icc_matches_shrout_fleiss_1979_table_2():
    """Shrout & Fleiss (1979) Psychol Bull 86:420, Table 2 data (6 targets x 4 judges) and Table 4 estimates."""
    out = icc(_long(np.array(SHROUT_FLEISS, dtype=float)), targets="cell", raters="session", ratings="sc")
    assert out["form"].tolist() == list(ICC_FORMS)
    np.testing.assert_allclose(out["icc"], [0.17, 0.29, 0.71, 0.44, 0.62, 0.91], atol=0.006)
    assert (out["ci_low"] < out["icc"]).all() and (out["icc"] < out["ci_high"]).all()


@pytest.mark.filterwarnings("ignore:The inplace keyword")
def test_icc_intervals_agree_with_pingouin_rounded_95():
    """pingouin 0.7 reports the same F-based intervals, rounded to two decimals."""
    data = _long(np.array(SHROUT_FLEISS, dtype=float))
    ours = icc(data, targets="cell", raters="session", ratings="sc")
    theirs = pingouin.intraclass_corr(data, targets="cell", raters="session", ratings="sc")
    bounds = np.vstack(theirs["CI95"].to_numpy())
    np.testing.assert_allclose(ours[["ci_low", "ci_high"]].to_numpy(), bounds, atol=0.0051)
    narrower = icc(data, targets="cell", raters="session", ratings="sc", ci=0.8)
    assert (narrower["ci_high"] - narrower["ci_low"] < ours["ci_high"] - ours["ci_low"]).all()
    assert narrower.attrs["ci"] == 0.8


def test_icc_interval_coverage_on_simulated_two_way_data():
    """Known ICC(A,1) = 0.6 / (0.6 + 0.1 + 0.3) = 0.6 and ICC(C,1) = 0.6 / 0.9 = 2/3; 30 targets x 3 raters.

    Over 150 replications the nominal 95% intervals cover the truth in 90% to 99% of them.
    """
    rng = np.random.default_rng(11)
    reps, n, k = 150, 30, 3
    hits = {"ICC(A,1)": 0, "ICC(C,1)": 0, "ICC(1,1)": 0}
    truth = {"ICC(A,1)": 0.6, "ICC(C,1)": 2 / 3}
    for _ in range(reps):
        x = (
            rng.normal(0, np.sqrt(0.6), (n, 1))
            + rng.normal(0, np.sqrt(0.1), (1, k))
            + rng.normal(0, np.sqrt(0.3), (n, k))
        )
        out = icc(_long(x), targets="cell", raters="session", ratings="sc").set_index("form")
        for form, value in truth.items():
            hits[form] += out.at[form, "ci_low"] <= value <= out.at[form, "ci_high"]
        y = rng.normal(0, 1, (n, 1)) + rng.normal(0, 1, (n, k))  # one-way model: ICC(1,1) = 0.5
        one_way = icc(_long(y), targets="cell", raters="session", ratings="sc").set_index("form")
        hits["ICC(1,1)"] += one_way.at["ICC(1,1)", "ci_low"] <= 0.5 <= one_way.at["ICC(1,1)", "ci_high"]
    for form, count in hits.items():
        assert 0.90 <= count / reps <= 0.99, form


def test_icc_constant_ratings_give_nan_with_reason():
    out = icc(_long(np.ones((5, 2))), targets="cell", raters="session", ratings="sc")
    assert out["icc"].isna().all() and out["form"].tolist() == list(ICC_FORMS)
    assert "all ratings are equal" in out.attrs["nan_reason"]


@pytest.mark.parametrize(
    ("frame", "message"),
    [
        (_long(np.arange(6.0).reshape(6, 1)), "at least 2 raters"),
        (_long(np.arange(6.0).reshape(6, 1)).rename(columns={"sc": "score"}), r"columns \['sc'\] not in data"),
        (_long(np.array([[1.0, np.nan], [2.0, 3.0]])), "1 missing values"),
        (_long(np.arange(6.0).reshape(3, 2)).iloc[:-1], "unbalanced design"),
        (pd.concat([_long(np.arange(6.0).reshape(3, 2))] * 2), "aggregate repeats"),
        (_long(np.arange(6.0).reshape(3, 2)).assign(sc=list("abcdef")), "must be numeric"),
    ],
)
def test_icc_bad_input_one_line_errors(frame, message):
    with pytest.raises(ValueError, match=message):
        icc(frame, targets="cell", raters="session", ratings="sc")


def test_spearman_brown_closed_form_and_round_trip():
    """Brown (1910)/Spearman (1910): m r / (1 + (m - 1) r); lengthening then shortening returns r."""
    assert spearman_brown(0.6, 3) == pytest.approx(1.8 / 2.2)
    assert spearman_brown(spearman_brown(0.35, 4), 0.25) == pytest.approx(0.35)
    with pytest.raises(ValueError, match="factor must be a positive"):
        spearman_brown(0.5, 0)
    with pytest.raises(ValueError, match="reliability must be in"):
        spearman_brown(1.5, 2)


def test_split_half_recovers_known_reliability():
    """Parallel items with inter-item correlation rho = 0.25, k = 8: full-test reliability 8 rho / (1 + 7 rho) = 0.727.

    The median Spearman-Brown over splits lands within 0.08 of the truth in >= 85% of 100 simulated data sets.
    """
    rng = np.random.default_rng(5)
    truth = 8 * 0.25 / (1 + 7 * 0.25)
    close = 0
    for _ in range(100):
        x = rng.normal(size=(150, 1)) + rng.normal(0, np.sqrt(3), size=(150, 8))
        frame = pd.DataFrame({"s": np.repeat(np.arange(150), 8), "i": np.tile(np.arange(8), 150), "y": x.ravel()})
        out = split_half(frame, subjects="s", items="i", scores="y", n_splits=50, seed=0).set_index("coefficient")
        close += abs(out.at["spearman_brown", "estimate"] - truth) < 0.08
    assert close >= 85
    assert out.at["spearman_brown", "estimate"] == pytest.approx(spearman_brown(out.at["split_half_r", "estimate"], 2))


def test_split_half_single_item_refused():
    frame = pd.DataFrame({"s": [0, 1, 2], "i": [0, 0, 0], "y": [1.0, 2.0, 3.0]})
    with pytest.raises(ValueError, match="at least 2 items"):
        split_half(frame, subjects="s", items="i", scores="y")


def test_cronbach_alpha_matches_pingouin_example_and_feldt():
    """pingouin's cronbach_alpha dataset: alpha = 0.5917, 95% CI [0.195, 0.840] (pingouin's docstring)."""
    data = pingouin.read_dataset("cronbach_alpha")
    out = cronbach_alpha(data, subjects="Subj", items="Items", scores="Scores")
    assert out["alpha"].iloc[0] == pytest.approx(0.5917188, abs=1e-6)
    np.testing.assert_allclose(out[["ci_low", "ci_high"]].to_numpy()[0], [0.195, 0.840], atol=5e-4)


def test_cronbach_alpha_coverage_on_parallel_items():
    """Population alpha of k = 5 parallel items with rho = 0.3 is 5 * 0.3 / (1 + 4 * 0.3) = 0.682; Feldt CI covers
    it in 90% to 99% of 150 replications (n = 60)."""
    rng = np.random.default_rng(2)
    truth = 1.5 / 2.2
    hits = 0
    for _ in range(150):
        x = rng.normal(0, np.sqrt(0.3), size=(60, 1)) + rng.normal(0, np.sqrt(0.7), size=(60, 5))
        frame = pd.DataFrame({"s": np.repeat(np.arange(60), 5), "i": np.tile(np.arange(5), 60), "y": x.ravel()})
        out = cronbach_alpha(frame, subjects="s", items="i", scores="y")
        hits += out["ci_low"].iloc[0] <= truth <= out["ci_high"].iloc[0]
    assert 0.90 <= hits / 150 <= 0.99


def test_cronbach_alpha_constant_scores_nan():
    frame = pd.DataFrame({"s": [0, 0, 1, 1], "i": [0, 1, 0, 1], "y": [1.0, 1.0, 1.0, 1.0]})
    out = cronbach_alpha(frame, subjects="s", items="i", scores="y")
    assert np.isnan(out["alpha"].iloc[0]) and "constant" in out.attrs["nan_reason"]


def test_pingouin_labels_of_every_version_map_to_stable_forms():
    """pingouin <= 0.5 labelled rows ICC1 ... ICC3k with a Description; >= 0.6 uses ICC(1,1) ... ICC(C,k)."""
    from bias_validity.psychometrics.reliability import _stable_form

    old = pd.DataFrame(
        {
            "Type": ["ICC1", "ICC2", "ICC3", "ICC1k", "ICC2k", "ICC3k"],
            "Description": [
                "Single raters absolute",
                "Single random raters",
                "Single fixed raters",
                "Average raters absolute",
                "Average random raters",
                "Average fixed raters",
            ],
        }
    )
    assert old.apply(_stable_form, axis=1).tolist() == list(ICC_FORMS)
    described_only = old.assign(Type="?")
    assert described_only.apply(_stable_form, axis=1).tolist() == list(ICC_FORMS)
    new = pd.DataFrame({"Type": list(ICC_FORMS)})
    assert new.apply(_stable_form, axis=1).tolist() == list(ICC_FORMS)
    with pytest.raises(ValueError, match="unrecognised pingouin ICC label"):
        _stable_form(pd.Series({"Type": "ICC4"}))


def test_icc_and_alpha_stamp_their_f_interval_kinds():
    data = _long(np.array(SHROUT_FLEISS, dtype=float))
    assert icc(data, targets="cell", raters="session", ratings="sc").attrs["interval"] is IntervalKind.ICC_F
    constant = icc(_long(np.ones((5, 2))), targets="cell", raters="session", ratings="sc")
    assert constant.attrs["interval"] is IntervalKind.ICC_F
    alpha = cronbach_alpha(data, subjects="cell", items="session", scores="sc")
    assert alpha.attrs["interval"] is IntervalKind.FELDT
