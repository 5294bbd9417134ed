"""Scaling identifiability: can a design separate the effect of model size from that of training data?"""

from __future__ import annotations

import numpy as np
import pandas as pd
import statsmodels.api as sm
from statsmodels.stats.outliers_influence import variance_inflation_factor

__all__ = ["COLLINEAR", "scaling_identifiability"]

#: Thresholds beyond which the two predictors are called collinear: VIF (Kutner et al.), condition number of the
#: standardised design (Belsley et al.), and the absolute correlation of the two slope estimates.
COLLINEAR: dict[str, float] = {"vif": 5.0, "condition_number": 30.0, "slope_correlation": 0.8}


def scaling_identifiability(
    units: pd.DataFrame,
    *,
    parameters: str = "parameters",
    tokens: str = "training_tokens",
    score: str | None = None,
    score_sd: str | None = None,
    family: str | None = None,
) -> dict[str, object]:
    """Regress a per-unit score on log parameters and log training tokens and diagnose their collinearity.

    Parameters
    ----------
    units : DataFrame
        One row per unit (model) with positive ``parameters`` and ``tokens`` columns, and optionally the score.
    parameters, tokens : str
        Column names of model size and training-set size (any unit; only their logs enter).
    score : str, optional
        Column with the per-unit score (e.g. the posterior mean SC). Without it only the design is diagnosed.
    score_sd : str, optional
        Column with the score's posterior SD; when given, the regression is weighted by ``1 / sd**2``.
    family : str, optional
        Column naming each unit's family (generation). When training tokens never vary within a family, the token
        slope is the family difference (architecture, data mix, recipe) and the design is called confounded.

    Returns
    -------
    dict
        ``n``, ``vif`` (of each log predictor), ``condition_number`` (of the column-standardised design with
        intercept), ``predictor_correlation``, ``slope_correlation`` (correlation of the two slope estimates: the
        posterior correlation under flat priors), ``collinear`` (bool), ``verdict`` (one sentence), and when
        ``confounded_with_family`` (bool, False without ``family``), ``reason`` (which check decided), and when
        ``score`` is given ``slope_parameters``, ``slope_tokens`` with ``se_parameters``, ``se_tokens``.

    Notes
    -----
    With predictors :math:`x_1 = \\log P`, :math:`x_2 = \\log T` the VIF of either is :math:`1/(1-r^2)` and the
    correlation of the two OLS slopes is :math:`-r` (from :math:`(X'X)^{-1}`), so the design alone decides whether
    size and data can be told apart. The closed forms are checked in the tests; statsmodels computes the VIF and
    the regression. The design is called collinear when any figure passes :data:`COLLINEAR`, or when fewer than
    four distinct (size, data) points exist.

    References
    ----------
    .. [1] Belsley, Kuh, Welsch (1980). Regression Diagnostics. Wiley.
    .. [2] Kutner, Nachtsheim, Neter, Li (2005). Applied Linear Statistical Models, 5th ed., section 10.5.

    Examples
    --------
    >>> d = pd.DataFrame({"parameters": [1, 2, 4, 8], "training_tokens": [1, 2, 4, 8.5]})
    >>> scaling_identifiability(d)["verdict"]
    'size and data cannot be separated in this design'
    """
    cols = [parameters, tokens, *(c for c in (score, score_sd, family) if c)]
    missing = [c for c in cols if c not in units.columns]
    if missing:
        raise ValueError(f"units table lacks column(s) {', '.join(missing)}; it has {', '.join(map(str, units))}")
    frame = units[cols].dropna()
    x = frame[[parameters, tokens]].astype(float)
    if (x <= 0).any().any():
        raise ValueError(f"{parameters} and {tokens} must be positive (they enter as logs)")
    logx = np.log(x.to_numpy())
    distinct = len({tuple(r) for r in np.round(logx, 9)})
    design = sm.add_constant(logx, has_constant="add")
    r = float(np.corrcoef(logx.T)[0, 1]) if distinct > 1 and np.all(logx.std(axis=0) > 0) else float("nan")
    if np.isfinite(r):
        vif = [float(variance_inflation_factor(design, j)) for j in (1, 2)]
        scaled = np.column_stack([np.ones(len(logx)), (logx - logx.mean(0)) / logx.std(0)])
        cond = float(np.linalg.cond(scaled))
        cov = np.linalg.inv(design.T @ design)[1:, 1:]
        slope_corr = float(cov[0, 1] / np.sqrt(cov[0, 0] * cov[1, 1]))
    else:
        vif, cond, slope_corr = [float("inf")] * 2, float("inf"), float("nan")
    confounded = bool(family) and bool((frame.groupby(family)[tokens].nunique() <= 1).all())
    checks = {
        f"fewer than 4 distinct (size, data) points ({distinct})": distinct < 4 or not np.isfinite(r),
        f"VIF {max(vif):.3g} > {COLLINEAR['vif']:g}": max(vif) > COLLINEAR["vif"],
        f"condition number {cond:.3g} > {COLLINEAR['condition_number']:g}": cond > COLLINEAR["condition_number"],
        f"slope correlation {abs(slope_corr):.3g} > {COLLINEAR['slope_correlation']:g}": abs(slope_corr)
        > COLLINEAR["slope_correlation"],
        "training tokens never vary within a family, so their slope is the family difference": confounded,
    }
    failed = [name for name, hit in checks.items() if hit]
    collinear = bool(failed)
    out: dict[str, object] = {
        "n": len(frame),
        "vif": {parameters: vif[0], tokens: vif[1]},
        "condition_number": cond,
        "predictor_correlation": r,
        "slope_correlation": slope_corr,
        "collinear": collinear,
        "confounded_with_family": confounded,
        "reason": "; ".join(failed) if failed else "no collinearity check failed",
        "verdict": "size and data cannot be separated in this design"
        if collinear
        else "size and data can be separated in this design",
    }
    if score and np.isfinite(r) and len(frame) > 3:
        weights = 1 / frame[score_sd].to_numpy(dtype=float) ** 2 if score_sd else np.ones(len(frame))
        res = sm.WLS(frame[score].to_numpy(dtype=float), design, weights=weights).fit()
        out.update(
            slope_parameters=float(res.params[1]),
            slope_tokens=float(res.params[2]),
            se_parameters=float(res.bse[1]),
            se_tokens=float(res.bse[2]),
        )
    return out
