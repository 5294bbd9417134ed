"""The posterior decides a cell only where the fit earned it: a passed gate, an identified quantity, predictive
checks that fit for every method the quantity is computed from, and a row for that cell. Elsewhere the classical
interval decides and the cell's reason says why.

The fit here is a :class:`BayesFit` holding tables (its quantities, gate and predictive check), the parts
``build_report`` reads: the rule is about those tables, so each condition is set exactly, with posterior gaps on
the other side of the ROPE from the classical ones so that a verdict shows which interval decided it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from bias_validity.analyses.config import AnalysisConfig
from bias_validity.analyses.report import build_report
from bias_validity.psychometrics.bayes import BayesFit
from bias_validity.psychometrics.estimands import Thresholds
from bias_validity.simulate import simulate_responses

DIMENSIONS = ("age", "race", "gender_career")


@pytest.fixture(scope="module")
def study() -> pd.DataFrame:
    """Explicit far below implicit (classical: credible negative gaps; R well below 1)."""
    return simulate_responses(
        dimensions=DIMENSIONS, n_items=8, sc={"implicit": 0.85, "explicit": 0.3, "ablated": 0.6}, item_sd=0.5, seed=4
    )


def _quantities(study: pd.DataFrame, identified: bool = True, dimensions=DIMENSIONS) -> pd.DataFrame:
    """A credible *positive* gap in every given cell (the classical gap is negative), implicit SCs clear of chance
    and a retained share near 1 (robust; classical: controllable)."""
    model = str(study["model"].iloc[0])
    figures = {  # quantity: (method, mean, hdi_low, hdi_high)
        "gap_explicit_implicit": ("", 0.3, 0.2, 0.4),
        "sc_new_item": ("implicit", 0.85, 0.8, 0.9),
        "ablation_retained_share": ("", 0.98, 0.9, 1.05),
    }
    keys = ("method", "mean", "hdi_low", "hdi_high")
    rows = [
        dict(quantity=q, model=model, dimension=d, **dict(zip(keys, values, strict=True)))
        for d in dimensions
        for q, values in figures.items()
    ]
    out = pd.DataFrame(rows).assign(p_direction=1.0, identified=identified, contraction=0.9 if identified else 0.2)
    out.attrs["hdi_prob"] = 0.95
    return out


def _ppc(explicit_outside: float) -> pd.DataFrame:
    """Predictive check groups: 10 explicit (the given share outside), 10 implicit and 10 ablated (1 outside)."""
    rows = [dict(method="explicit", outside=i < round(10 * explicit_outside)) for i in range(10)]
    rows += [dict(method=m, outside=i == 0) for m in ("implicit", "ablated") for i in range(10)]
    return pd.DataFrame(rows)


def _fit(quantities: pd.DataFrame, *, passed: bool = True, explicit_outside: float = 0.1) -> BayesFit:
    diagnostics = {"passed": passed, "gate": "max R-hat 1.08 > 1.01" if not passed else ""}
    return BayesFit(None, None, quantities, pd.DataFrame(), diagnostics, ppc=_ppc(explicit_outside))


def _verdicts(report, question: str) -> pd.DataFrame:
    return next(q for q in report.questions if q.question == question).verdicts


def test_a_trusted_posterior_decides_every_cell(study):
    report = build_report(study, _fit(_quantities(study)))
    q4, q3 = _verdicts(report, "Q4"), _verdicts(report, "Q3")
    assert (q4["finding"] == "credible positive gap").all() and q4["measure"].str.contains("HDI").all()
    assert (q3["finding"] == "robust").all() and q3["measure"].str.contains("HDI").all()
    assert not q4["reason"].str.contains("posterior not used").any()


def test_a_method_whose_predictive_check_fails_leaves_its_cells_to_the_classical_interval(study):
    without = build_report(study, None)
    report = build_report(study, _fit(_quantities(study), explicit_outside=0.5))
    q4 = _verdicts(report, "Q4")
    # the gap rests on explicit answers: every cell goes back to the item-cluster interval, and says why
    assert q4["measure"].str.contains("item-cluster").all()
    assert q4["finding"].tolist() == _verdicts(without, "Q4")["finding"].tolist()
    assert set(q4["finding"]) == {"credible negative gap"}
    assert (
        q4["reason"]
        .str.contains(
            "posterior not used: the posterior predictive check puts 50% of the explicit groups outside their 90% "
            "interval (the posterior decides at most 20%)",
            regex=False,
        )
        .all()
    )
    # the retained share rests on implicit and ablated answers, whose checks fit: the posterior still decides it
    assert _verdicts(report, "Q3")["measure"].str.contains("HDI").all()


def test_the_predictive_check_threshold_is_an_option(study):
    fit = _fit(_quantities(study), explicit_outside=0.3)
    strict = build_report(study, fit)
    lenient = build_report(study, fit, AnalysisConfig(thresholds=Thresholds(ppc_outside=0.35)))
    assert _verdicts(strict, "Q4")["measure"].str.contains("item-cluster").all()
    assert _verdicts(lenient, "Q4")["measure"].str.contains("HDI").all()


def test_a_fit_that_failed_its_gate_decides_nothing(study):
    report = build_report(study, _fit(_quantities(study), passed=False))
    for question in ("Q3", "Q4"):
        table = _verdicts(report, question)
        assert not table["measure"].str.contains("HDI").any()
        assert (
            table["reason"].str.contains("the Bayesian fit failed its diagnostics gate (max R-hat", regex=False).all()
        )


def test_a_quantity_that_is_not_identified_does_not_decide(study):
    report = build_report(study, _fit(_quantities(study, identified=False)))
    q4 = _verdicts(report, "Q4")
    assert q4["measure"].str.contains("item-cluster").all()
    assert q4["reason"].str.contains("posterior not used: not identified (contraction 0.20)", regex=False).all()


def test_cells_missing_from_the_posterior_keep_their_classical_verdict(study):
    report = build_report(study, _fit(_quantities(study, dimensions=("race",))))
    q4 = _verdicts(report, "Q4").set_index("dimension")
    assert sorted(q4.index) == sorted(DIMENSIONS)  # all three cells, not only the one the fit holds
    assert "HDI" in q4.loc["race", "measure"] and q4.loc["race", "finding"] == "credible positive gap"
    for d in ("age", "gender_career"):
        assert "item-cluster" in q4.loc[d, "measure"]
        assert q4.loc[d, "reason"].endswith("posterior not used: the cell is not in the fit")
        assert q4.loc[d, "finding"] == "credible negative gap"


def test_the_predictive_check_groups_by_template():
    """One group per model x dimension x method x template, from the fitted design's cells."""
    from bias_validity.analyses.fit import fit_study
    from bias_validity.psychometrics.bayes import FitConfig

    table = simulate_responses(dimensions=("race",), n_items=4, n_templates=3, sessions=1, seed=1)
    table = table[table["method"].isin(["implicit"])]
    fit = fit_study(table, config=FitConfig(draws=200, tune=200, chains=2, seed=0, max_draws=None))
    keys = ["model", "dimension", "method", "template_id"]
    assert list(fit.ppc[keys].itertuples(index=False, name=None)) == sorted(
        set(table[keys].astype(str).itertuples(index=False, name=None))
    )
    expected = table.groupby("template_id")["consistent"].mean().to_numpy()
    assert np.allclose(fit.ppc["observed"].to_numpy(), expected)


@pytest.mark.parametrize(
    ("models", "unit_effects", "named"),
    [(("a", "b"), False, True), (("a",), False, False), (("a", "b"), True, False)],
)
def test_a_misfit_that_own_effects_could_mend_names_them(models, unit_effects, named):
    """A method several models answered, fitted with shared wording and item effects only, misfits: the reason names
    the fit without ``--shared-only``; not for one model, nor for a fit that had them."""
    from bias_validity.analyses.trust import mark_trust

    ppc = pd.DataFrame(
        [dict(model=m, method="explicit", outside=i < 5) for m in models for i in range(10)]
        + [dict(model=m, method="implicit", outside=False) for m in models for i in range(10)]
    )
    post = pd.DataFrame(
        {"quantity": ["sc", "sc"], "model": "a", "dimension": "race", "method": ["explicit", "implicit"]}
    )
    marked = mark_trust(post, {"passed": True}, ppc, unit_effects=unit_effects)
    assert marked["decides"].tolist() == [False, True]
    assert ("a fit without --shared-only gives each model its own" in marked["why_not"].iloc[0]) is named
    assert marked["why_not"].iloc[1] == ""
