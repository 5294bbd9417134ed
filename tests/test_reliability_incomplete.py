"""Q1 on incomplete designs: forms that share few items, one session, a pooled ICC that must not
decide. The study is simulated with known truth: six dimensions whose SCs differ widely, a second wording that
shares one cell per dimension with the first and covers other items of its own, and, in ``race`` only, moves the SC
by a known amount on its own items."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from _support.studies import RACE_SHIFT, incomplete_study
from scipy import stats

from bias_validity.analyses.config import AnalysisConfig
from bias_validity.analyses.questions import reliability
from bias_validity.analyses.result import Verdict
from bias_validity.psychometrics.estimands import Thresholds


@pytest.fixture(scope="module")
def study():
    return reliability(incomplete_study())


def test_forms_that_disagree_within_a_dimension_fail_it_and_are_named(study):
    from bias_validity.analyses.questions.reliability import FORMS_DISAGREE

    cells = study.verdicts.set_index("dimension")
    assert cells.loc["race", "verdict"] == Verdict.NOT_SUPPORTED.value
    assert cells.loc["race", "finding"] == FORMS_DISAGREE
    # the deciding figure is the race shift T1 - T2, whose interval covers the simulated one: T2's 16 own cells
    # of its 17 are shifted by 0.45
    truth = RACE_SHIFT * 16 / 17
    assert cells.loc["race", "measure"] == "form shift T1 - T2"
    assert cells.loc["race", "ci_low"] < truth < cells.loc["race", "ci_high"]
    assert cells.loc["race", "ci_low"] > 0.10
    others = cells.drop(index="race")
    assert (others["verdict"] == Verdict.SUPPORTED.value).all(), others[["verdict", "reason"]]
    assert study.verdict is Verdict.NOT_SUPPORTED
    assert "Forms disagree in race for sim:a." in study.summary


def test_the_pooled_icc_is_high_but_does_not_decide(study):
    pooled = study.figures.query("dimension == 'all' and measure == 'alternate_forms'").iloc[0]
    assert pooled["ci_low"] > 0.5  # six shared cells whose SCs span 0.15-0.9: between-dimension spread
    assert "does not decide" in pooled["note"]
    assert study.verdict is not Verdict.SUPPORTED
    assert study.figures.attrs["icc_scope"] == "within dimension"


def test_one_session_says_needs_two_sessions_and_nothing_else(study):
    tr = study.figures[study.figures["measure"].str.startswith("test_retest")]
    assert (tr["note"] == "needs >= 2 sessions").all() and tr["estimate"].isna().all()
    assert "Test-retest needs >= 2 sessions." in study.summary
    assert study.summary.count("est-retest") == 1


def test_no_summary_prints_nan(study):
    assert "nan" not in study.summary.lower()


def test_every_cell_verdict_has_a_reason_without_nan(study):
    assert not study.verdicts["reason"].str.contains("nan", case=False).any()
    assert (study.verdicts["reason"].str.len() > 0).all()
    age = study.verdicts.set_index("dimension").loc["age", "reason"]
    assert "test-retest needs >= 2 sessions" in age and "alternate-forms ICC(A,1): 1 cell shared by T1 and T2" in age


def test_the_per_dimension_icc_is_not_estimable_with_its_reason(study):
    af = study.figures.query("dimension == 'age' and measure == 'alternate_forms'").iloc[0]
    assert np.isnan(af["estimate"]) and af["note"] == "1 cell shared by T1 and T2; needs >= 3"


def test_within_dimension_iccs_decide_once_forms_share_cells():
    # two sessions: test-retest is estimable within each dimension over the cells both sessions share
    res = reliability(incomplete_study(race_shift=0.0, reps=1, sessions=2, seed=1))
    tr = res.figures.query("dimension != 'all' and measure == 'test_retest'")
    assert len(tr) == 6 and tr["note"].str.startswith("within dimension").all()
    # the cells' answers are coin flips around their dimension's SC: within a dimension the ICC is about 0
    assert (tr["ci_low"] < 0.5).all()


def test_a_third_form_gives_one_icc_per_pair_over_the_cells_it_shares():
    t = incomplete_study(race_shift=0.0, reps=2, seed=2)
    third = t[t["template_id"] == "T1"].assign(template_id="T3")
    third = third[third["item_id"].str.endswith(("-1", "-2"))]
    third["response_id"] = third["response_id"] + "-T3"
    res = reliability(pd.concat([t, third], ignore_index=True))
    measures = set(res.figures.query("dimension == 'age'")["measure"])
    assert {"alternate_forms (T1~T2)", "alternate_forms (T1~T3)", "alternate_forms (T2~T3)"} <= measures
    pair = res.figures.query("dimension == 'age' and measure == 'alternate_forms (T1~T3)'").iloc[0]
    assert pair["note"] == "2 cells shared by T1 and T3; needs >= 3"  # items 1-2, averaged over orders


def test_icc_threshold_is_an_option():
    t = incomplete_study(race_shift=0.0, reps=2, sessions=2, seed=3)
    strict = reliability(t, config=AnalysisConfig(thresholds=Thresholds(icc=0.99)))
    assert strict.figures.attrs["icc_threshold"] == 0.99 and "threshold 0.99" in strict.summary


def test_form_agreement_covers_known_shares_and_flags_known_heterogeneity():
    from bias_validity.psychometrics import form_agreement, form_shifts

    # forms of 6 items x 20 answers at known shares with item effects: coverage of each form's interval
    rng = np.random.default_rng(4)
    hits, trials, rejected = 0, 0, 0
    for _ in range(200):
        rows = []
        for form, p in (("A", 0.7), ("B", 0.7), ("C", 0.4)):
            for item in range(6):
                pi = np.clip(p + rng.normal(0, 0.1), 0, 1)
                rows.append((form, f"{form}{item}", rng.binomial(20, pi), 20))
        cells = pd.DataFrame(rows, columns=["f", "i", "k", "n"])
        out = form_agreement(cells, forms="f", clusters="i", successes="k", trials="n")
        truth = {"A": 0.7, "B": 0.7, "C": 0.4}
        hits += sum(r.ci_low <= truth[r.form] <= r.ci_high for r in out.itertuples())
        trials += 3
        rejected += out.attrs["p_value"] < 0.05
    assert 0.90 <= hits / trials <= 0.99  # nominal 95%, items cluster the answers
    assert rejected / 200 > 0.95  # 0.7 vs 0.4 over 120 answers each
    shifts = form_shifts(cells, forms="f", clusters="i", successes="k", trials="n")
    assert list(zip(shifts["form_a"], shifts["form_b"], strict=True)) == [("A", "B"), ("A", "C"), ("B", "C")]
    assert (shifts["shared_clusters"] == 0).all()


def test_form_shift_equals_the_cluster_robust_regression_and_covers_paired_and_disjoint_shifts():
    import statsmodels.api as sm

    from bias_validity.psychometrics import form_shifts

    # the true shift of the shares: the mean over items of the two logistic curves, by Monte Carlo quadrature
    z = np.random.default_rng(0).normal(0, 1.0, 200_000)
    truth = np.mean(1 / (1 + np.exp(-(0.5 + z)))) - np.mean(1 / (1 + np.exp(-(-0.1 + z))))
    rng = np.random.default_rng(5)
    hits = {"paired": 0, "disjoint": 0}
    for rep in range(300):
        for kind in hits:
            rows = []
            for item in range(8):
                shared = rng.normal(0, 1.0)  # item effect of a paired item, asked under both forms
                for form, shift in (("A", 0.0), ("B", -0.6)):
                    cluster = f"{item}" if kind == "paired" else f"{form}{item}"
                    u = shared if kind == "paired" else rng.normal(0, 1.0)  # disjoint: each form its own items
                    p = 1 / (1 + np.exp(-(0.5 + u + shift)))
                    rows.append((form, cluster, rng.binomial(15, p), 15))
            cells = pd.DataFrame(rows, columns=["f", "i", "k", "n"])
            out = form_shifts(cells, forms="f", clusters="i", successes="k", trials="n").iloc[0]
            hits[kind] += out["ci_low"] <= truth <= out["ci_high"]
            if rep == 0 and kind == "paired":
                # the same difference and, up to the small-sample factor, the same SE as statsmodels' WLS
                fit = sm.WLS(
                    cells["k"] / cells["n"], sm.add_constant((cells["f"] == "A").astype(float)), weights=cells["n"]
                ).fit(cov_type="cluster", cov_kwds={"groups": cells["i"]})
                assert fit.params.iloc[1] == pytest.approx(out["difference"])
                half = (out["ci_high"] - out["ci_low"]) / 2 / stats.t.ppf(0.975, 8 - 1)
                assert fit.bse.iloc[1] == pytest.approx(half, rel=0.1)
    assert 0.92 <= hits["paired"] / 300 <= 0.985
    assert 0.92 <= hits["disjoint"] / 300 <= 0.985


def test_a_form_answered_all_one_way_keeps_a_positive_variance():
    from bias_validity.psychometrics import form_agreement

    cells = pd.DataFrame({"f": ["A", "A", "B"], "i": ["1", "2", "3"], "k": [10, 10, 5], "n": [10, 10, 10]})
    out = form_agreement(cells, forms="f", clusters="i", successes="k", trials="n")
    assert (out["variance"] > 0).all() and out.loc[0, "ci_high"] == 1.0 and out.loc[0, "ci_low"] < 1.0
    assert np.isfinite(out.attrs["p_value"])
