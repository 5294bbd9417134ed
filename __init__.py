"""bias-validity: whether an LLM bias measurement is reliable and valid, with intervals instead of bare scores.

One import name; its parts load on first use, so ``import bias_validity as bv`` is instant::

    bv.probes         what is asked and what came back: stimuli, templates, backends, collection, the store
    bv.psychometrics  statistics that know nothing of LLMs: intervals, reliability, validity, Bayesian models
    bv.analyses       the six reviewer questions over a study
    bv.simulate       responses tables drawn from known truths
    bv.reports        rendering only: the HTML and Markdown validity reports
    bv.cli            the ``bias-validity`` command and the demo

The pipeline, from the top level::

    study = bv.read_study("study.sqlite")                  # a store, or a .csv / .jsonl / .parquet table
    fit = bv.fit(study)                                    # the hierarchical Bayesian model (optional)
    report = bv.report_study(study, fit, out="report.html")

``bv.read_study``, ``bv.as_study`` and ``bv.Study`` (:mod:`bias_validity.analyses.study`); ``bv.fit``
(:func:`bias_validity.analyses.fit.fit_study`); ``bv.report_study`` and ``bv.build_report``
(:mod:`bias_validity.analyses.report`); ``bv.write_report`` (:mod:`bias_validity.reports`);
``bv.simulate_responses`` (:mod:`bias_validity.simulate`); ``bv.plan`` (:func:`bias_validity.analyses.plan.plan`, the
design each question needs to decide, from a pilot or stated assumptions); ``bv.AnalysisConfig`` and
``bv.FitConfig``, the settings of an analysis and of a fit.

Examples
--------
>>> import bias_validity as bv
>>> bv.psychometrics.wilson_interval(7, 10)["estimate"].item()
0.7
>>> bv.fit.__name__
'fit_study'
"""

from __future__ import annotations

import importlib
from importlib import metadata

import lazy_loader

_SUBPACKAGES = ["probes", "psychometrics", "analyses", "simulate", "reports", "cli"]
_subpackage, _, _ = lazy_loader.attach(__name__, submodules=_SUBPACKAGES)

#: The top-level names of the Python API: name -> (module, attribute), imported on first use.
PUBLIC_API: dict[str, tuple[str, str]] = {
    "read_study": ("bias_validity.analyses.study", "read_study"),
    "as_study": ("bias_validity.analyses.study", "as_study"),
    "Study": ("bias_validity.analyses.study", "Study"),
    "fit": ("bias_validity.analyses.fit", "fit_study"),
    "report_study": ("bias_validity.pipeline", "report_study"),
    "build_report": ("bias_validity.analyses.report", "build_report"),
    "write_report": ("bias_validity.reports", "write_report"),
    "simulate_responses": ("bias_validity.simulate", "simulate_responses"),
    "plan": ("bias_validity.analyses.plan", "plan"),
    "AnalysisConfig": ("bias_validity.analyses.config", "AnalysisConfig"),
    "FitConfig": ("bias_validity.psychometrics.bayes.config", "FitConfig"),
}

__all__ = ["__version__", "PROVENANCE_PACKAGES", "package_versions", *_SUBPACKAGES, *PUBLIC_API]


def __getattr__(name: str) -> object:
    """A subpackage or a name of :data:`PUBLIC_API`, imported on first use and kept (``bv.fit`` is
    :func:`bias_validity.analyses.fit.fit_study`: a renamed attribute, which ``lazy_loader`` cannot map)."""
    if name in PUBLIC_API:
        module, attr = PUBLIC_API[name]
        value = getattr(importlib.import_module(module), attr)
        globals()[name] = value
        return value
    return _subpackage(name)


#: Distributions whose versions change what a study collects or computes; recorded with every run and report.
PROVENANCE_PACKAGES: tuple[str, ...] = (
    "bias-validity",
    "numpy",
    "pandas",
    "scipy",
    "statsmodels",
    "pingouin",
    "pymc",
    "arviz",
    "nutpie",
    "torch",
    "transformers",
    "gguf",
    "httpx",
)

try:
    __version__ = metadata.version("bias-validity")
except metadata.PackageNotFoundError:  # pragma: no cover - run from a source tree that was never installed
    __version__ = "0+unknown"


def package_versions() -> dict[str, str | None]:
    """Installed version of each of :data:`PROVENANCE_PACKAGES` (None where one is not installed)."""
    versions: dict[str, str | None] = {}
    for name in PROVENANCE_PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def __dir__() -> list[str]:
    return sorted(__all__)
