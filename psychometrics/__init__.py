"""Statistics that know nothing of LLMs: intervals, reliability, validity and Bayesian models.

Plain DataFrames and arrays in (column names passed as keyword arguments), tidy DataFrames out, with interval
settings in ``df.attrs``. The Bayesian models live in ``bias_validity.psychometrics.bayes``. Every name below is
imported from its module on first use, so ``import bias_validity.psychometrics`` costs nothing until a function is
needed (the command line's ``--help`` imports neither pandas nor PyMC).
"""

from __future__ import annotations

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach(
    __name__,
    submod_attrs={
        "intervals": [
            "wilson_interval",
            "clopper_pearson_interval",
            "newcombe_diff_interval",
            "agresti_caffo_diff_interval",
            "failure_rate",
        ],
        "bootstrap": ["bootstrap_ci"],
        "interval_kind": ["IntervalKind"],
        "errors": ["NotEstimable"],
        "clustered": ["MIN_CLUSTERS", "ClusterInterval", "cluster_counts", "cluster_interval"],
        "estimands": ["Quantity", "Estimand", "ESTIMANDS", "Thresholds", "null_value", "chance_overlap"],
        "reliability": ["ICC_FORMS", "icc", "split_half", "spearman_brown", "cronbach_alpha"],
        "forms": ["form_agreement", "form_shifts"],
        "contrasts": ["mover_difference"],
        "agreement": ["krippendorff_alpha", "cohen_kappa", "fleiss_kappa"],
        "validity": ["correlation_ci", "disattenuate", "convergent_validity", "rank_agreement"],
        "mtmm": ["MTMMResult", "mtmm"],
        "framing": ["FramingVerdict", "ablation_retained_share", "position_bias"],
        "reference": ["human_iat_reference", "compare_to_human"],
        "planning": [
            "CHECK_REPLICATIONS",
            "PlanTargets",
            "Assumptions",
            "design_effect",
            "cluster_mean_variance",
            "c4",
            "t_half_width",
            "power_to_clear",
            "tost_power",
            "icc_sample_size",
            "icc_interval_width",
            "fisher_z_sample_size",
            "fisher_z_interval",
            "fisher_z_half_width",
            "fisher_z_power",
            "spearman_from_pearson",
            "fieller_interval",
            "ratio_variance",
        ],
        "bayes": [
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
        ],
    },
)
