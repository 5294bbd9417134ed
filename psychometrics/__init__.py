"""Statistics that know nothing of LLMs: intervals, reliability, validity and Bayesian models.

Plain DataFrames and arrays in (column names passed as keyword arguments), tidy DataFrames out, with interval
settings in ``df.attrs``. The Bayesian models live in ``bias_validity.psychometrics.bayes``; their names are re-exported
here lazily, so importing the classical statistics does not import PyMC.
"""

from bias_validity.psychometrics.agreement import cohen_kappa, fleiss_kappa, krippendorff_alpha
from bias_validity.psychometrics.bootstrap import bootstrap_ci
from bias_validity.psychometrics.framing import FramingVerdict, ablation_drop_ratio, position_bias
from bias_validity.psychometrics.intervals import (
    agresti_caffo_diff_interval,
    clopper_pearson_interval,
    failure_rate,
    newcombe_diff_interval,
    wilson_interval,
)
from bias_validity.psychometrics.mtmm import MTMMResult, mtmm
from bias_validity.psychometrics.reference import compare_to_human, human_iat_reference
from bias_validity.psychometrics.reliability import ICC_FORMS, cronbach_alpha, icc, spearman_brown, split_half
from bias_validity.psychometrics.validity import convergent_validity, correlation_ci, disattenuate, rank_agreement

_BAYES = (
    "BayesFit",
    "FitConfig",
    "load_fit",
    "Columns",
    "COLLINEAR",
    "GATE",
    "SAMPLERS",
    "diagnostics_gate",
    "fit_hierarchical",
    "scaling_identifiability",
    "simulate_study",
)

__all__ = [
    # intervals
    "wilson_interval",
    "clopper_pearson_interval",
    "newcombe_diff_interval",
    "agresti_caffo_diff_interval",
    "failure_rate",
    "bootstrap_ci",
    # reliability
    "ICC_FORMS",
    "icc",
    "split_half",
    "spearman_brown",
    "cronbach_alpha",
    # agreement
    "krippendorff_alpha",
    "cohen_kappa",
    "fleiss_kappa",
    # validity
    "correlation_ci",
    "disattenuate",
    "convergent_validity",
    "rank_agreement",
    "MTMMResult",
    "mtmm",
    # framing and position
    "FramingVerdict",
    "ablation_drop_ratio",
    "position_bias",
    # human reference
    "human_iat_reference",
    "compare_to_human",
    # Bayesian models (lazy: bias_validity.psychometrics.bayes imports PyMC)
    *_BAYES,
]


def __getattr__(name: str) -> object:
    if name in _BAYES:
        from bias_validity.psychometrics import bayes

        return getattr(bayes, name)
    raise AttributeError(f"module 'psychometrics' has no attribute {name!r}")
