"""The diagnostics gate: R-hat, bulk and tail ESS of every identified reported quantity; divergences, E-BFMI and
tree depth of the sampler."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["GATE", "describe_gate", "diagnostics_gate", "missed_thresholds"]

#: Thresholds of the gate: R-hat at most 1.01, bulk and tail ESS at least 400, no divergence (Vehtari et al. 2021);
#: E-BFMI of every chain at least 0.3 (Betancourt 2016: below it the momentum resampling cannot explore the energy
#: distribution, a heavy-tailed or funnel-shaped posterior); at most 1% of transitions stopped by the maximum tree
#: depth (a trajectory cut short explores less than NUTS means to; Stan warns on any, a share is what a long fit
#: can hold to without flagging rare long excursions).
GATE: dict[str, float] = {
    "max_rhat": 1.01,
    "min_ess_bulk": 400.0,
    "min_ess_tail": 400.0,
    "divergences": 0.0,
    "min_ebfmi": 0.3,
    "max_depth_share": 0.01,
}


def describe_gate(gate: dict[str, float] = GATE) -> str:
    """The gate's thresholds in words, as help texts, the FAILED line and the report state them.

    Examples
    --------
    >>> describe_gate().split(", ")  # doctest: +NORMALIZE_WHITESPACE
    ['R-hat <= 1.01', 'bulk ESS >= 400', 'tail ESS >= 400 for every identified quantity', 'no divergences',
     'E-BFMI >= 0.3', 'at most 1% of transitions at maximum tree depth']
    """
    divergences = "no divergences" if gate["divergences"] == 0 else f"at most {gate['divergences']:g} divergences"
    return (
        f"R-hat <= {gate['max_rhat']:g}, bulk ESS >= {gate['min_ess_bulk']:g}, "
        f"tail ESS >= {gate['min_ess_tail']:g} for every identified quantity, {divergences}, "
        f"E-BFMI >= {gate['min_ebfmi']:g}, at most {gate['max_depth_share']:.0%} of transitions at maximum "
        "tree depth"
    )


def missed_thresholds(figures: Mapping[str, float]) -> list[str]:
    """The thresholds of :data:`GATE` that a gate's ``figures`` (:func:`diagnostics_gate`'s output) miss, by key.

    As the gate reads them: an R-hat or ESS that could not be computed misses, an E-BFMI that was not computed
    (NaN) is not checked. The figures are the worst over the gated quantities; a quantity whose own R-hat or ESS
    is missing shows in the gate's ``failing`` count.

    Examples
    --------
    >>> missed_thresholds({"max_rhat": 1.02, "min_ess_bulk": 900.0, "min_ess_tail": 350.0, "divergences": 0,
    ...                    "min_ebfmi": float("nan"), "max_depth_share": 0.0})
    ['max_rhat', 'min_ess_tail']
    """
    missed = []
    for key, limit in GATE.items():
        value = float(figures[key])
        if key == "min_ebfmi":
            miss = value < limit
        elif key.startswith("min_"):
            miss = not value >= limit
        else:
            miss = not value <= limit
        if miss:
            missed.append(key)
    return missed


def diagnostics_gate(
    quantities: pd.DataFrame,
    *,
    divergences: int,
    ebfmi: Sequence[float] | None = None,
    max_depth_share: float = 0.0,
) -> dict[str, object]:
    """Summarise convergence over the identified reported quantities and say whether the fit passes the gate.

    Parameters
    ----------
    quantities : DataFrame
        Derived quantities with columns ``rhat``, ``ess_bulk`` and ``ess_tail`` (from
        :func:`bias_validity.psychometrics.bayes.derived.summarise`), and optionally ``identified``
        (:func:`bias_validity.psychometrics.bayes.identification.identification`): rows where it is False are left
        out of the gate.
    divergences : int
        Divergent transitions after warm-up.
    ebfmi : sequence of float, optional
        E-BFMI of each chain (:func:`bias_validity.psychometrics.bayes._arviz.ebfmi`); not checked when omitted.
    max_depth_share : float
        Share of transitions after warm-up that stopped at the maximum tree depth.

    Returns
    -------
    dict
        ``max_rhat``, ``min_ess_bulk``, ``min_ess_tail`` (over the gated quantities), ``divergences``,
        ``min_ebfmi``, ``max_depth_share``, ``passed`` (all thresholds in :data:`GATE` met; a gated quantity whose
        R-hat or ESS cannot be computed fails), ``failing``: the number of gated quantities that miss a threshold,
        ``not_identified``: the number left out as not identified, and ``gate``: the thresholds in words
        (:func:`describe_gate`).

    Notes
    -----
    The thresholds follow Vehtari et al. [1]_: rank-normalised split R-hat at most 1.01 and bulk and tail effective
    sample sizes of at least 400 (100 per chain over 4 chains) for every identified reported quantity, and no
    divergent transition; and Betancourt [2]_: E-BFMI at least 0.3 in every chain. ESS and R-hat are computed by
    ArviZ on each derived quantity's draws. A quantity that is not identified is mostly prior: its ESS measures how
    well the chains explore the prior, not the data, so it neither passes nor fails a fit.

    References
    ----------
    .. [1] Vehtari, A., Gelman, A., Simpson, D., Carpenter, B. & Buerkner, P.-C. (2021). Rank-normalization,
       folding, and localization: an improved R-hat for assessing convergence of MCMC. Bayesian Analysis 16(2),
       667-718.
    .. [2] Betancourt, M. (2016). Diagnosing suboptimal cotangent disintegrations in Hamiltonian Monte Carlo.
       arXiv:1604.00695.

    Examples
    --------
    >>> import pandas as pd
    >>> q = pd.DataFrame({"rhat": [1.002, 1.004], "ess_bulk": [900.0, 1200.0], "ess_tail": [700.0, 650.0]})
    >>> diagnostics_gate(q, divergences=0)["passed"]
    True
    >>> diagnostics_gate(q.assign(rhat=[1.002, 1.03]), divergences=0)["failing"]
    1
    >>> diagnostics_gate(q.assign(rhat=[1.002, 1.03], identified=[True, False]), divergences=0)["passed"]
    True
    >>> diagnostics_gate(q, divergences=0, ebfmi=[0.9, 0.2])["passed"]
    False
    """
    if not {"rhat", "ess_bulk", "ess_tail"} <= set(quantities.columns):
        raise ValueError("quantities need columns rhat, ess_bulk and ess_tail; pass the output of summarise()")
    gated = quantities[quantities["identified"].astype(bool)] if "identified" in quantities else quantities
    rhat = gated["rhat"].to_numpy(dtype=float)
    bulk = gated["ess_bulk"].to_numpy(dtype=float)
    tail = gated["ess_tail"].to_numpy(dtype=float)
    bad = (
        ~np.isfinite(rhat)
        | ~np.isfinite(bulk)
        | ~np.isfinite(tail)
        | (rhat > GATE["max_rhat"])
        | (bulk < GATE["min_ess_bulk"])
        | (tail < GATE["min_ess_tail"])
    )
    low_energy = float(np.min(ebfmi)) if ebfmi is not None and len(ebfmi) else float("nan")
    result = {
        "max_rhat": float(np.nanmax(rhat)) if len(rhat) else float("nan"),
        "min_ess_bulk": float(np.nanmin(bulk)) if len(bulk) else float("nan"),
        "min_ess_tail": float(np.nanmin(tail)) if len(tail) else float("nan"),
        "divergences": int(divergences),
        "min_ebfmi": low_energy,
        "max_depth_share": float(max_depth_share),
    }
    sampler_ok = (
        divergences <= GATE["divergences"]
        and not low_energy < GATE["min_ebfmi"]
        and max_depth_share <= GATE["max_depth_share"]
    )
    result["passed"] = bool(len(rhat) > 0 and not bad.any() and sampler_ok)
    result["failing"] = int(bad.sum())
    result["not_identified"] = len(quantities) - len(gated)
    result["gate"] = describe_gate()
    return result
