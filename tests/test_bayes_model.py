"""Recovery of known parameters by the hierarchical model, on a simulated responses table (real PyMC + nutpie).

One fit per module (compile plus sampling take about a minute on 2 cores); the coverage study over 100+ simulated
studies is ``bench/fit.py --part coverage`` (and the slow-marked test in test_bayes_coverage.py).
"""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from bias_validity.analyses.compare import compare_models
from bias_validity.analyses.fit import check_fit_matches, fit_study, responses_to_cells
from bias_validity.analyses.summary import status_counts
from bias_validity.probes.schema import is_reversed
from bias_validity.psychometrics.bayes import FitConfig, load_fit, simulate_study
from bias_validity.psychometrics.bayes.result import SAVED_DRAWS
from bias_validity.simulate import cells_to_responses, with_design_orders


def _study(seed: int) -> dict[str, pd.DataFrame]:
    sim = simulate_study(
        units=2,
        traits=2,
        items=6,
        templates=2,
        orders=2,
        reps=25,
        seed=seed,
        binary_methods=("implicit", "ablated"),
        ordinal_methods=("explicit",),
        score_methods=("logprob",),
        item_corr=0.8,
    )
    ren = {"unit": "model", "trait": "dimension"}
    return {k: v.rename(columns=ren) for k, v in sim.items()}


@pytest.fixture(scope="module")
def study() -> tuple[dict[str, pd.DataFrame], pd.DataFrame]:
    sim = with_design_orders(_study(seed=11))  # orders as the responses table writes them
    return sim, cells_to_responses(sim, refusals=1)


@pytest.fixture(scope="module")
def fitted(study):
    _, responses = study
    return fit_study(responses, config=FitConfig(draws=1000, tune=1000, chains=4, seed=2))


def test_cells_pool_repetitions_and_exclude_non_ok(study):
    sim, responses = study
    cells = responses_to_cells(responses)
    merged = cells["binary"].merge(
        sim["binary"], on=["model", "dimension", "method", "template_id", "item_id", "order"], suffixes=("", "_true")
    )
    assert len(merged) == len(sim["binary"])
    assert (merged["k"] == merged["k_true"]).all() and (merged["n"] == merged["n_true"]).all()  # refusals left out
    assert cells["ordinal"]["n"].sum() == sim["ordinal"]["n"].sum()
    assert len(cells["scores"]) == len(sim["scores"])


def test_fit_passes_the_gate_and_recovers_scs(study, fitted):
    sim, _ = study
    assert fitted.diagnostics["passed"], fitted.diagnostics
    sc = fitted.quantities[fitted.quantities["quantity"] == "sc"]
    got = sc.merge(sim["truth"], on=["model", "dimension", "method"])
    assert len(got) == len(sim["truth"]) == 12
    inside = ((got["hdi_low"] <= got["sc"]) & (got["sc"] <= got["hdi_high"])).mean()
    assert inside >= 0.75, got  # 95% intervals; 12 groups, P(fewer than 9 inside | calibrated) < 0.02
    assert np.abs(got["mean"] - got["sc"]).max() < 0.12
    assert np.corrcoef(got["mean"], got["sc"])[0, 1] > 0.9


def test_gap_matches_the_difference_of_the_true_scs(study, fitted):
    sim, _ = study
    truth = sim["truth"].pivot_table(index=["model", "dimension"], columns="method", values="sc")
    truth = (truth["explicit"] - truth["implicit"]).rename("gap").reset_index()
    gap = fitted.quantities[fitted.quantities["quantity"] == "gap_explicit_implicit"].merge(truth)
    assert len(gap) == 4
    assert ((gap["hdi_low"] <= gap["gap"]) & (gap["gap"] <= gap["hdi_high"])).sum() >= 3
    assert (gap["method"] == "").all()


def test_latent_correlation_is_positive_when_items_correlate(fitted):
    q = fitted.quantities
    corr = q[(q["quantity"] == "latent_correlation") & (q["method"] == "implicit~logprob")].iloc[0]
    # true item correlation 0.8 across all methods; 12 items give a wide but clearly positive interval
    assert corr["mean"] > 0.3 and corr["hdi_low"] > -0.2 and corr["hdi_high"] <= 1.0
    assert corr["hdi_low"] <= 0.8 <= corr["hdi_high"]


def test_result_shape_and_status_rates(study, fitted):
    cols = [
        "quantity",
        "model",
        "dimension",
        "method",
        "mean",
        "hdi_low",
        "hdi_high",
        "p_direction",
        "estimable",
        "reason",
        "contraction",
        "item_contrasts",
        "identified",
    ]
    assert list(fitted.quantities.columns) == cols
    assert fitted.quantities.attrs["hdi_prob"] == 0.95
    # acquiescence where the explicit statements were asked in both polarities (a reversed order beside a plain one)
    both = study[1].loc[study[1]["method"] == "explicit", "order"].map(is_reversed).nunique() == 2
    assert set(fitted.quantities["quantity"]) == {
        "sc",
        "sc_new_item",
        "gap_explicit_implicit",
        "ablation_retained_share",
        "model_contrast",
        "latent_correlation",
    } | ({"acquiescence"} if both else set())
    assert ((fitted.quantities["p_direction"] >= 0.5) & (fitted.quantities["p_direction"] <= 1)).all()
    rates = status_counts(study[1]).set_index(["model", "method", "status"])["rate"]
    # 25 answers + 1 refusal per implicit cell
    assert rates[("u0", "implicit", "refusal")] == pytest.approx(1 / 26)


def test_compare_is_the_model_contrast(fitted):
    table = compare_models(fitted, "u0", "u1")
    q = fitted.quantities
    contrast = q[q["quantity"] == "model_contrast"].set_index(["dimension", "method"])
    for r in table.itertuples():
        assert r.difference == pytest.approx(contrast.loc[(r.dimension, r.method), "mean"], abs=1e-12)
        assert r.difference == pytest.approx(r.sc_a - r.sc_b, abs=1e-9)
        assert (r.p_a_greater > 0.5) == (r.difference > 0)
    with pytest.raises(ValueError, match="not in the fit"):
        compare_models(fitted, "u0", "nobody")


def test_saved_fit_round_trips_with_its_design(study, fitted, tmp_path):
    path = fitted.save(tmp_path / "fit.nc")
    loaded = load_fit(path)
    pd.testing.assert_frame_equal(loaded.quantities, fitted.quantities, check_dtype=False)
    pd.testing.assert_frame_equal(loaded.quantity_diagnostics, fitted.quantity_diagnostics, check_dtype=False)
    pd.testing.assert_frame_equal(loaded.ppc, fitted.ppc, check_dtype=False)
    assert loaded.quantities.attrs == json.loads(json.dumps(fitted.quantities.attrs))
    assert loaded.diagnostics == json.loads(json.dumps(fitted.diagnostics))
    assert loaded.config == fitted.config and loaded.seconds == pytest.approx(fitted.seconds)
    for name in ("methods", "items", "templates", "orders", "ordinal_methods", "binary_methods", "score_methods"):
        assert getattr(loaded.design, name) == getattr(fitted.design, name), name
    for name in ("binary", "ordinal", "scores"):
        pd.testing.assert_frame_equal(
            loaded.design.cell_tables()[name], fitted.design.cell_tables()[name], check_dtype=False
        )
    # the saved posterior keeps the SCs' variables, thinned to SAVED_DRAWS float32 draws: a reloaded fit's comparison
    # is the fit's within the Monte Carlo error of 1000 draws
    assert loaded.idata.posterior.sizes["chain"] * loaded.idata.posterior.sizes["draw"] <= SAVED_DRAWS
    assert "z_item_implicit" not in loaded.idata.posterior and "b_item" in loaded.idata.posterior
    again, full = compare_models(loaded, "u0", "u1"), compare_models(fitted, "u0", "u1")
    assert again[["dimension", "method"]].equals(full[["dimension", "method"]])
    for column in ("sc_a", "sc_b", "difference", "hdi_low", "hdi_high"):
        assert np.abs(again[column] - full[column]).max() < 0.02, column
    check_fit_matches(loaded, study[1], fit_name="fit.nc", responses_name="study")


def test_a_saved_fit_is_refused_for_other_answers(study, fitted):
    _, responses = study
    fewer = responses[responses["item_id"] != responses["item_id"].iloc[0]]
    with pytest.raises(ValueError, match="fit.nc was fitted to other answers than study.sqlite"):
        check_fit_matches(fitted, fewer, fit_name="fit.nc", responses_name="study.sqlite")
    shifted = responses.assign(score=responses["score"] + 0.01)
    with pytest.raises(ValueError, match=r"\(scores cells: "):
        check_fit_matches(fitted, shifted, fit_name="fit.nc", responses_name="study.sqlite")


def test_a_file_that_is_not_a_fit_is_refused_in_one_line(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such file"):
        load_fit(tmp_path / "missing.nc")
    text = tmp_path / "fit.nc"
    text.write_text("not netcdf")
    with pytest.raises(ValueError, match="fit.nc: not a netCDF posterior"):
        load_fit(text)


def test_identified_quantities_include_every_sc_and_the_gate_covers_them(fitted):
    q = fitted.quantities
    sc = q[q["quantity"] == "sc"]
    assert sc["identified"].all() and (sc["contraction"] > 0.8).all()  # 50-150 answers per group
    corr = q[q["quantity"] == "latent_correlation"]
    assert (corr["item_contrasts"] == 10).all()  # 2 dimensions x (6 items - 1)
    assert fitted.diagnostics["not_identified"] == int((~q["identified"]).sum())


def test_posterior_predictive_check_covers_the_observed_shares(fitted):
    ppc = fitted.ppc
    # one group per model x dimension x method x template: 2 x 2 x 3 x 2
    assert len(ppc) == 24 and set(ppc["method"]) == {"implicit", "ablated", "explicit"}
    assert ppc.groupby(["model", "dimension", "method"])["template_id"].nunique().eq(2).all()
    assert (ppc["n"] >= 50).all()
    assert np.abs(ppc["observed"] - ppc["replicated_mean"]).max() < 0.1
    assert ppc["outside"].mean() <= 0.25  # 90% intervals: P(more than 6 of 24 outside | calibrated) ~ 0.03


def test_posterior_predictive_check_flags_answers_the_model_did_not_fit(fitted):
    from bias_validity.psychometrics.bayes import build_model
    from bias_validity.psychometrics.bayes.ppc import posterior_predictive_check

    design = fitted.design
    changed = design.binary.assign(k=np.where(design.binary["g"] == 0, design.binary["n"], design.binary["k"]))
    other = dataclasses.replace(design, binary=changed)  # group 0 now answered consistently every time
    ppc = posterior_predictive_check(build_model(design), fitted.idata, other)
    first = design.binary_groups.iloc[0]
    rows = ppc[
        (ppc["model"] == first["model"]) & (ppc["dimension"] == first["dimension"]) & (ppc["method"] == first["method"])
    ]
    assert len(rows) == 2 and (rows["observed"] == 1.0).all() and rows["outside"].all()  # both of its templates
    assert ppc["outside"].sum() <= len(rows) + 6  # the other groups are unchanged


def test_report_shows_the_posterior_predictive_check(study, fitted):
    from bias_validity.analyses.report import build_report
    from bias_validity.reports._sections import Image, Text, build_sections

    report = build_report(study[1], fit=fitted)
    section = next(s for s in build_sections(report, draw=True) if s.key == "ppc")
    kinds = [type(b) for b in section.blocks]
    assert Text in kinds and Image in kinds
    shares = report.extra_tables["ppc_share_outside"].set_index("method")["share_outside"]
    assert shares.to_dict() == fitted.ppc.groupby("method")["outside"].mean().to_dict()
    assert "outside their 90% interval per method: " in section.blocks[0].text


def test_a_study_of_one_method_fits_and_recovers_its_scs():
    # one method leaves no correlation matrix: LKJCholeskyCov cannot draw a 1 x 1 factor, which crashed the fit's
    # prior draws (identification) before any sampling
    from bias_validity.psychometrics.bayes import fit_hierarchical

    sim = simulate_study(
        units=1,
        traits=2,
        items=4,
        templates=2,
        orders=1,
        reps=30,
        seed=5,
        binary_methods=("implicit",),
        ordinal_methods=(),
        score_methods=(),
    )
    fit = fit_hierarchical(sim["binary"], config=FitConfig(draws=500, tune=500, chains=2, seed=1, max_draws=None))
    sc = fit.quantities[fit.quantities["quantity"] == "sc"].set_index("dimension")
    truth = sim["truth"].set_index("dimension")["sc"]
    answers = sim["binary"].groupby("dimension")[["k", "n"]].sum()
    observed = answers["k"] / answers["n"]  # balanced cells: the SC weighted by wording is the pooled share
    assert len(sc) == 2 and sc["identified"].all()
    # the posterior SD from the HDI's width; one fit's HDI misses the truth once in 20 at 95% (here t0's data lie
    # 1.6 binomial SEs from it), 3 SDs once in 370
    sd = (sc["hdi_high"] - sc["hdi_low"]) / (2 * norm.ppf(0.5 + fit.quantities.attrs["hdi_prob"] / 2))
    for dim in sc.index:
        assert abs(sc.loc[dim, "mean"] - truth[dim]) <= 3 * sd[dim], (dim, truth[dim])
        assert abs(sc.loc[dim, "mean"] - observed[dim]) <= sd[dim], (dim, observed[dim])
