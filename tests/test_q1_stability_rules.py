"""Q1 judges the stability of the SC it reports, on simulated tables with known truth.

- Restricted range: items alike, wordings and sessions identical in truth: the SC is stable, the item ICC is ~0.
- A content-blind responder that puts the first-listed candidate in the first blank: SC 0.5 under each candidate
  order, driven wholly by position; only the candidate x attribute order interaction shows it.
- Two items per dimension: too few for any item-cluster shift interval.
- The between-form SD comes with a Q-profile interval; three or more models give a study-level ICC of their SCs.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from bias_validity.analyses.questions import reliability
from bias_validity.analyses.result import ALL_MODELS, Verdict
from bias_validity.probes.schema import ATTRIBUTE_ORDERS, CANDIDATE_ORDERS, IMPLICIT_ORDERS, candidate_order
from bias_validity.psychometrics import form_agreement
from bias_validity.simulate import answer_row, rows_to_table, simulate_responses

SEEDS = range(5)
_SHIFT_PREFIXES = ("form_shift", "session_shift", "position_bias", "attribute_order_bias", "position_interaction")


def _restricted_range(seed: int) -> pd.DataFrame:
    """10 near-identical items (logit SD 0.05), 3 wordings and 2 sessions identical in truth, 20 repetitions."""
    return simulate_responses(
        dimensions=["age"],
        n_items=10,
        n_templates=3,
        sessions=2,
        reps=20,
        item_sd=0.05,
        sc={"implicit": 0.7},
        seed=seed,
    )


def _first_listed_responder(seed: int, first: float = 0.95, n_items: int = 8, reps: int = 10) -> pd.DataFrame:
    """Puts the first-listed candidate in the first blank with probability ``first``, whatever the words.

    In ``ab-xy`` (group A's exemplar listed first, its consistent attribute named first) and ``ba-yx`` that answer
    is consistent; in ``ab-yx`` and ``ba-xy`` it is inconsistent: SC 0.5 under each candidate order by construction.
    """
    rng = np.random.default_rng(seed)
    rows = []
    for dim in ("age", "race"):
        for template in ("implicit-1", "implicit-2"):
            for item in range(n_items):
                for order in IMPLICIT_ORDERS:
                    aligned = (candidate_order(order) == CANDIDATE_ORDERS[0]) == order.endswith(ATTRIBUTE_ORDERS[0])
                    for session in (1, 2):
                        for rep in range(reps):
                            first_in_first = rng.random() < first
                            rows.append(
                                answer_row(
                                    model="sim:position",
                                    dimension=dim,
                                    method="implicit",
                                    template_id=template,
                                    item_id=f"{dim}-{item:02d}",
                                    order=order,
                                    session=session,
                                    rep=rep,
                                    consistent=int(first_in_first == aligned),
                                )
                            )
    return rows_to_table(rows, source="first_listed_responder")


def test_restricted_range_stable_sc_is_reliable_whatever_the_item_icc():
    results = [reliability(_restricted_range(seed)) for seed in SEEDS]
    verdicts = [res.verdicts.iloc[0]["verdict"] for res in results]
    assert Verdict.NOT_SUPPORTED.value not in verdicts and verdicts.count(Verdict.SUPPORTED.value) >= 4, verdicts
    for res in results:
        cell = res.verdicts.iloc[0]
        # the deciding figure is a shift of the SC itself
        assert cell["measure"].startswith(("form shift", "session shift")), cell["measure"]
        af = res.figures.query("dimension == 'age' and measure == 'alternate_forms'").iloc[0]
        assert af["ci_low"] < 0.5 and "does not decide" in af["note"]  # shown for what it is, near zero
        assert "item-score alternate-forms ICC(A,1)" in cell["reason"]
        shifts = res.figures[res.figures["measure"].str.startswith(("form_shift", "session_shift"))]
        assert len(shifts) == 3 + 1  # every pair of the 3 wordings, and the pair of sessions


def test_the_first_listed_responder_is_position_bias_never_reliable():
    for seed in SEEDS:
        res = reliability(_first_listed_responder(seed))
        cells = res.verdicts
        assert (cells["verdict"] == Verdict.NOT_SUPPORTED.value).all(), cells[["verdict", "reason"]]
        assert (cells["finding"] == "position bias").all()
        assert cells["measure"].str.contains("candidate x attribute order").all()
        # aligned minus crossed: 0.95 - 0.05 = 0.90 in truth, and the interval lies wholly beyond the limit
        assert (cells["ci_low"] < 0.9).all() and (cells["ci_high"] > 0.9).all() and (cells["ci_low"] > 0.1).all()
        figures = res.figures.query("dimension == 'age'").set_index("measure")
        assert abs(figures.loc["position_bias", "estimate"]) < 0.05  # candidate order alone sees nothing
        # the item ICC on order-averaged item SCs does not mistake the order pattern for stable items
        assert figures.loc["test_retest", "ci_low"] < 0.5
        assert res.verdict is Verdict.NOT_SUPPORTED and "reliable" not in set(cells["finding"])


def test_two_item_shifts_are_not_estimable_and_never_fail_the_forms():
    for seed in SEEDS:
        t = simulate_responses(dimensions=["age", "science"], n_items=2, reps=3, item_sd=2.0, seed=seed)
        res = reliability(t)
        shifts = res.figures[res.figures["measure"].str.startswith(_SHIFT_PREFIXES)]
        assert len(shifts) and shifts["ci_low"].isna().all() and shifts["ci_high"].isna().all()
        within = shifts[shifts["dimension"] != "all"]
        assert within["note"].eq("2 items are too few for an item-cluster interval (needs >= 5)").all()
        assert shifts["note"].str.endswith("items are too few for an item-cluster interval (needs >= 5)").all()
        assert (res.verdicts["verdict"] == Verdict.NOT_ESTIMABLE.value).all(), res.verdicts[["verdict", "reason"]]
        assert res.verdicts["reason"].str.contains("2 items are too few for an item-cluster interval").all()


def test_sessions_get_pairwise_shifts_and_a_moved_session_fails():
    rng = np.random.default_rng(7)
    rows = []
    for item in range(8):
        for template in ("implicit-1", "implicit-2"):
            for order in IMPLICIT_ORDERS:
                for session, p in ((1, 0.75), (2, 0.45)):  # the second occasion moves the SC by -0.30
                    rows += [
                        answer_row(
                            model="sim:drift",
                            dimension="age",
                            method="implicit",
                            template_id=template,
                            item_id=f"age-{item}",
                            order=order,
                            session=session,
                            rep=rep,
                            consistent=int(rng.random() < p),
                        )
                        for rep in range(10)
                    ]
    res = reliability(rows_to_table(rows))
    cell = res.verdicts.iloc[0]
    assert cell["verdict"] == Verdict.NOT_SUPPORTED.value and cell["finding"] == "sessions disagree"
    assert cell["measure"] == "session shift 1 - 2" and cell["ci_low"] < 0.30 < cell["ci_high"]
    form = res.figures.query("measure == 'form_shift (implicit-1 - implicit-2)'").iloc[0]
    assert -0.1 < form["ci_low"] and form["ci_high"] < 0.1  # the wordings agree


def test_three_models_give_a_study_level_icc_of_their_scs_that_does_not_decide():
    dims = ["age", "race", "gender_career"]
    parts = [
        simulate_responses(models=[m], dimensions=dims, sc={"implicit": sc}, item_sd=0.0, reps=6, seed=i)
        for i, (m, sc) in enumerate((("sim:low", 0.2), ("sim:mid", 0.5), ("sim:high", 0.85)))
    ]
    res = reliability(pd.concat(parts, ignore_index=True))
    study = res.figures[res.figures["model"] == ALL_MODELS].set_index("measure")
    assert set(study.index) == {"model_sc_icc (forms)", "model_sc_icc (sessions)"}
    # nine SCs spread from 0.2 to 0.85, ranked alike by every form and session
    assert (study["estimate"] > 0.9).all() and (study["ci_low"] > 0.5).all()
    assert study["note"].str.contains("does not decide").all()
    assert ALL_MODELS not in set(res.verdicts["model"])


def test_the_between_form_sd_has_a_q_profile_interval_that_rarely_excludes_zero_under_the_null():
    rng = np.random.default_rng(11)
    excludes = 0
    for _ in range(300):
        rows = [
            (form, f"{form}{item}", rng.binomial(20, np.clip(0.6 + rng.normal(0, 0.1), 0, 1)), 20)
            for form in "ABCD"
            for item in range(5)
        ]
        out = form_agreement(
            pd.DataFrame(rows, columns=["f", "i", "k", "n"]), forms="f", clusters="i", successes="k", trials="n"
        )
        assert out.attrs["tau_ci_low"] <= out.attrs["tau"] <= out.attrs["tau_ci_high"]
        excludes += out.attrs["tau_ci_low"] > 0
    assert excludes / 300 <= 0.08  # nominal 2.5% (the lower end of a 95% interval); 4% in this simulation


def test_forms_cite_the_interval_each_figure_uses():
    doc = form_agreement.__doc__
    assert "Korn" not in doc and "Wilson, E. B. (1927)" in doc and "Viechtbauer, W. (2007)" in doc


@pytest.mark.parametrize("seed", [0, 1])
def test_q1_reads_every_level_from_the_config(seed):
    from bias_validity.analyses.config import AnalysisConfig
    from bias_validity.psychometrics.estimands import Thresholds

    t = _restricted_range(seed)
    wide = reliability(t, config=AnalysisConfig(ci=0.99, thresholds=Thresholds(shift_limit=0.2)))
    assert wide.verdicts.iloc[0]["verdict"] == Verdict.SUPPORTED.value
    assert wide.figures.attrs["equivalence_alpha"] == pytest.approx(0.005) and "+/-0.20" in wide.summary
    shift = wide.figures.query("measure == 'session_shift (1 - 2)'").iloc[0]
    strict = reliability(t).figures.query("measure == 'session_shift (1 - 2)'").iloc[0]
    assert shift["ci_high"] - shift["ci_low"] > strict["ci_high"] - strict["ci_low"]  # a 99% interval is wider
