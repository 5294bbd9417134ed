"""The one pipeline of the toolkit: open a study, load or run its fit, answer the questions, write the report.

It sits above the layers (it calls both ``analyses`` and ``reports``), as the command line does; ``bv.report_study``
is this function.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from bias_validity.analyses.config import AnalysisConfig
from bias_validity.analyses.report import build_report
from bias_validity.analyses.result import ValidityReport
from bias_validity.analyses.study import Study, as_study, read_study

if TYPE_CHECKING:
    from bias_validity.psychometrics.bayes import BayesFit, FitConfig

__all__ = ["report_study"]


def report_study(
    study: Study | pd.DataFrame | str | Path,
    fit: BayesFit | FitConfig | str | Path | None = None,
    *,
    config: AnalysisConfig | None = None,
    out: str | Path | Sequence[str | Path] | None = None,
) -> ValidityReport:
    """The one pipeline: open the study, load or run the fit, answer the questions, write the report files.

    Parameters
    ----------
    study : Study, pandas.DataFrame, str or Path
        The study, its responses table, or the path of a store or responses table file
        (:func:`bias_validity.analyses.study.read_study`).
    fit : BayesFit, FitConfig, str or Path, optional
        A fit to use as it is; a :class:`~bias_validity.psychometrics.bayes.FitConfig` to fit the study now with
        those sampler settings (:func:`bias_validity.analyses.fit.fit_study`); the path of a saved fit (``fit.nc``),
        read and checked to be a fit of exactly these answers; or None for a report on classical intervals only. A
        given or saved fit must have its HDIs at ``config.ci`` (ValueError otherwise, naming both levels).
    config : AnalysisConfig, optional
        The analysis settings (:class:`bias_validity.analyses.config.AnalysisConfig`); its ``ci`` is also the fit's
        HDI mass, and its chance margin the fit's, when it fits now.
    out : str, Path or sequence of them, optional
        Report files to write (``.html``, ``.md``, ``.json``, ``.csv``; :func:`bias_validity.reports.write_report`).

    Returns
    -------
    ValidityReport
        As :func:`build_report` returns it, after every ``out`` file is written.

    Examples
    --------
    >>> from bias_validity.simulate import simulate_responses
    >>> report = report_study(simulate_responses(dimensions=["age"], seed=0))
    >>> [q.question for q in report.questions]
    ['Q1', 'Q2', 'Q3', 'Q4', 'Q5', 'Q6']
    """
    from bias_validity.analyses.fit import check_fit_level, check_fit_matches, fit_study
    from bias_validity.psychometrics.bayes import FitConfig, load_fit
    from bias_validity.reports import write_report

    config = AnalysisConfig() if config is None else config
    study = read_study(study) if isinstance(study, str | Path) else as_study(study)
    if isinstance(fit, FitConfig):
        fit = fit_study(study, config=fit, analysis=config)
    elif isinstance(fit, str | Path):
        saved = load_fit(fit)
        check_fit_matches(saved, study, fit_name=str(fit), responses_name=study.source)
        check_fit_level(saved, config.ci, fit_name=str(fit))
        fit = saved
    report = build_report(study, fit, config)
    for path in [out] if isinstance(out, str | Path) else list(out or []):
        write_report(report, path)
    return report
