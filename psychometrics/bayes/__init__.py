"""Hierarchical Bayesian models of bias studies: partial pooling, derived quantities, diagnostics gate, scaling.

Knows nothing of LLMs: cell tables come in with their column names in a :class:`Columns` record. Names are imported
from their modules on first use, so the light ones (:data:`GATE`, :data:`SAMPLERS`) cost no PyMC import.
"""

from __future__ import annotations

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach(
    __name__,
    submod_attrs={
        "derived": ["QUANTITIES", "group_scores", "derived_draws", "summarise"],
        "diagnostics": ["GATE", "diagnostics_gate"],
        "identification": ["IDENTIFICATION", "NOT_IDENTIFIED", "identification", "item_contrasts", "prior_draws"],
        "scaling": ["COLLINEAR", "scaling_identifiability"],
        "config": ["SAMPLERS", "FitConfig"],
        "sampling": ["sample", "SampleRun"],
        "design": ["Columns", "Design", "index_design"],
        "result": ["BayesFit", "load_fit"],
        "hierarchical": ["fit_hierarchical", "fit_to_gate", "summarise_fit", "prior_derived_draws", "GatedFit"],
        "model": ["build_model"],
        "simulate": ["simulate_study"],
    },
)
