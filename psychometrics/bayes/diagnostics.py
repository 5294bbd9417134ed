"""The diagnostics gate: R-hat, bulk and tail ESS of every reported quantity, and divergences."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["GATE", "describe_gate", "diagnostics_gate"]

#: Thresholds of the gate (Vehtari et al. 2021): R-hat at most 1.01, bulk and tail ESS at least 400, no divergence.
GATE: dict[str, float] = {"max_rhat": 1.01, "min_ess_bulk": 400.0, "min_ess_tail": 400.0, "divergences": 0.0}


def describe_gate(gate: dict[str, float] = GATE) -> str:
    """The gate's thresholds in words, as help texts, the FAILED line and the report state them.

    Examples
    --------
    >>> describe_gate()
    'R-hat <= 1.01, bulk ESS >= 400, tail ESS >= 400, no divergences'
    """
    divergences = "no divergences" if gate["divergences"] == 0 else f"at most {gate['divergences']:g} divergences"
    return (f"R-hat <= {gate['max_rhat']:g}, bulk ESS >= {gate['min_ess_bulk']:g}, "
            f"tail ESS >= {gate['min_ess_tail']:g}, {divergences}")  # fmt: skip


def diagnostics_gate(quantities: pd.DataFrame, *, divergences: int) -> dict[str, object]:
    """Summarise convergence over the reported quantities and say whether the fit passes the gate.

    Parameters
    ----------
    quantities : DataFrame
        Derived quantities with columns ``rhat``, ``ess_bulk`` and ``ess_tail`` (from
        :func:`bias_validity.psychometrics.bayes.derived.summarise`).
    divergences : int
        Divergent transitions after warm-up.

    Returns
    -------
    dict
        ``max_rhat``, ``min_ess_bulk``, ``min_ess_tail``, ``divergences`` and ``passed`` (all thresholds in
        :data:`GATE` met; a quantity whose R-hat or ESS cannot be computed fails), plus ``failing``: the number of
        quantities that miss a threshold, and ``gate``: the thresholds in words (:func:`describe_gate`).

    Notes
    -----
    The thresholds follow Vehtari et al. [1]_: rank-normalised split R-hat at most 1.01 and bulk and tail effective
    sample sizes of at least 400 (100 per chain over 4 chains) for every reported quantity, and no divergent
    transition. ESS and R-hat are computed by ArviZ on each derived quantity's draws.

    References
    ----------
    .. [1] Vehtari, A., Gelman, A., Simpson, D., Carpenter, B. & Buerkner, P.-C. (2021). Rank-normalization,
       folding, and localization: an improved R-hat for assessing convergence of MCMC. Bayesian Analysis 16(2),
       667-718.

    Examples
    --------
    >>> import pandas as pd
    >>> q = pd.DataFrame({"rhat": [1.002, 1.004], "ess_bulk": [900.0, 1200.0], "ess_tail": [700.0, 650.0]})
    >>> diagnostics_gate(q, divergences=0)["passed"]
    True
    >>> diagnostics_gate(q.assign(rhat=[1.002, 1.03]), divergences=0)["failing"]
    1
    """
    if not {"rhat", "ess_bulk", "ess_tail"} <= set(quantities.columns):
        raise ValueError("quantities need columns rhat, ess_bulk and ess_tail; pass the output of summarise()")
    rhat = quantities["rhat"].to_numpy(dtype=float)
    bulk = quantities["ess_bulk"].to_numpy(dtype=float)
    tail = quantities["ess_tail"].to_numpy(dtype=float)
    bad = (
        ~np.isfinite(rhat)
        | ~np.isfinite(bulk)
        | ~np.isfinite(tail)
        | (rhat > GATE["max_rhat"])
        | (bulk < GATE["min_ess_bulk"])
        | (tail < GATE["min_ess_tail"])
    )
    result = {
        "max_rhat": float(np.nanmax(rhat)) if len(rhat) else float("nan"),
        "min_ess_bulk": float(np.nanmin(bulk)) if len(bulk) else float("nan"),
        "min_ess_tail": float(np.nanmin(tail)) if len(tail) else float("nan"),
        "divergences": int(divergences),
    }
    result["passed"] = bool(len(rhat) > 0 and not bad.any() and divergences <= GATE["divergences"])
    result["failing"] = int(bad.sum())
    result["gate"] = describe_gate()
    return result
