"""Hierarchical Bayesian models of bias studies: partial pooling, derived quantities, diagnostics gate, scaling.

Knows nothing of LLMs: cell tables come in with their column names in a :class:`Columns` record.
"""

from bias_validity.psychometrics.bayes.config import SAMPLERS, FitConfig
from bias_validity.psychometrics.bayes.derived import QUANTITIES, derived_draws, group_scores, summarise
from bias_validity.psychometrics.bayes.design import Columns, Design, index_design
from bias_validity.psychometrics.bayes.diagnostics import GATE, diagnostics_gate
from bias_validity.psychometrics.bayes.hierarchical import fit_hierarchical
from bias_validity.psychometrics.bayes.model import build_model
from bias_validity.psychometrics.bayes.result import BayesFit, load_fit
from bias_validity.psychometrics.bayes.sampling import sample
from bias_validity.psychometrics.bayes.scaling import COLLINEAR, scaling_identifiability
from bias_validity.psychometrics.bayes.simulate import simulate_study

__all__ = [
    "QUANTITIES",
    "GATE",
    "COLLINEAR",
    "SAMPLERS",
    "Columns",
    "Design",
    "BayesFit",
    "FitConfig",
    "load_fit",
    "index_design",
    "build_model",
    "sample",
    "fit_hierarchical",
    "group_scores",
    "derived_draws",
    "summarise",
    "diagnostics_gate",
    "scaling_identifiability",
    "simulate_study",
]
