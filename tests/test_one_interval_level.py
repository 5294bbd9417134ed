"""One interval level per report: ``AnalysisConfig.ci`` is the level of the classical intervals and the mass of
the posterior HDIs, and a fit at another mass is refused with both levels named (real PyMC + nutpie, tiny fit)."""

from __future__ import annotations

import dataclasses

import pandas as pd
import pytest

from bias_validity.analyses.config import AnalysisConfig
from bias_validity.analyses.fit import check_fit_level, fit_study
from bias_validity.analyses.report import build_report
from bias_validity.pipeline import report_study
from bias_validity.psychometrics.bayes import BayesFit, FitConfig, load_fit, simulate_study
from bias_validity.simulate import cells_to_responses


@pytest.fixture(scope="module")
def responses() -> pd.DataFrame:
    sim = simulate_study(
        units=2, traits=1, items=3, templates=1, orders=1, reps=8, seed=5, ordinal_methods=(), score_methods=()
    )
    return cells_to_responses({k: v.rename(columns={"unit": "model", "trait": "dimension"}) for k, v in sim.items()})


@pytest.fixture(scope="module")
def fit_at_90(responses) -> BayesFit:
    """A tiny fit (it need not pass the gate) made for an analysis at ci 0.9."""
    config = FitConfig(draws=50, tune=50, chains=2, seed=1, max_draws=None)
    return fit_study(responses, config=config, analysis=AnalysisConfig(ci=0.9))


def _fit_at(level: float) -> BayesFit:
    quantities = pd.DataFrame()
    quantities.attrs["hdi_prob"] = level
    return BayesFit(idata=None, design=None, quantities=quantities, quantity_diagnostics=pd.DataFrame(), diagnostics={})


def test_analysis_config_has_one_level_and_the_fit_default_is_it():
    names = {f.name for f in dataclasses.fields(AnalysisConfig)}
    assert "ci" in names and "hdi_prob" not in names
    assert AnalysisConfig().ci == FitConfig().hdi_prob == 0.95


def test_a_fit_for_an_analysis_has_its_hdis_at_the_analysis_ci(fit_at_90):
    assert fit_at_90.quantities.attrs["hdi_prob"] == 0.9
    assert fit_at_90.config.hdi_prob == 0.9


def test_the_report_provenance_records_one_level(responses, fit_at_90):
    report = build_report(responses, fit=fit_at_90, config=AnalysisConfig(ci=0.9, n_resamples=200))
    assert report.provenance["analysis"]["ci"] == 0.9
    assert "hdi_prob" not in report.provenance["analysis"]


def test_report_study_refuses_a_fit_at_another_level_naming_both(responses):
    with pytest.raises(ValueError, match=r"its HDIs are 95% intervals but the report's ci is 0\.9;") as exc:
        report_study(responses, _fit_at(0.95), config=AnalysisConfig(ci=0.9))
    assert "--ci 0.9 " in str(exc.value) and str(exc.value).endswith("--ci 0.95")
    assert "\n" not in str(exc.value)


def test_report_study_refuses_a_saved_fit_at_another_level_naming_the_file(responses, fit_at_90, tmp_path):
    path = fit_at_90.save(tmp_path / "fit.nc")
    assert load_fit(path).quantities.attrs["hdi_prob"] == 0.9
    expected = f"{path}: its HDIs are 90% intervals but the report's ci is 0.95; fit again with --ci 0.95 or report "
    with pytest.raises(ValueError) as exc:
        report_study(responses, path)
    assert str(exc.value) == expected + "with --ci 0.9"
    report = report_study(responses, path, config=AnalysisConfig(ci=0.9, n_resamples=200))
    assert report.posterior.attrs["hdi_prob"] == 0.9


def test_levels_equal_within_rounding_are_one_level():
    check_fit_level(_fit_at(0.9), 0.1 * 9)  # 0.9000000000000001: no error
    with pytest.raises(ValueError, match="the fit: its HDIs are 94% intervals but the report's ci is 0.95"):
        check_fit_level(_fit_at(0.94), 0.95)
