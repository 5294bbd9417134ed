"""Hierarchical Bayesian models of bias studies: partial pooling, derived quantities, diagnostics gate, scaling.

Knows nothing of LLMs: cell tables come in with their column names in a :class:`Columns` record.
"""

from psychometrics.bayes.derived import QUANTITIES, derived_draws, group_scores, summarise
from psychometrics.bayes.design import Columns, Design, index_design
from psychometrics.bayes.diagnostics import GATE, diagnostics_gate
from psychometrics.bayes.hierarchical import BayesFit, fit_hierarchical
from psychometrics.bayes.model import build_model
from psychometrics.bayes.sampling import SAMPLERS, sample
from psychometrics.bayes.scaling import COLLINEAR, scaling_identifiability
from psychometrics.bayes.simulate import simulate_study

__all__ = [
    "QUANTITIES",
    "GATE",
    "COLLINEAR",
    "SAMPLERS",
    "Columns",
    "Design",
    "BayesFit",
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
