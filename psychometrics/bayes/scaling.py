"""Scaling identifiability: can a design separate the effect of model size from that of training data?"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd
import statsmodels.api as sm
from statsmodels.stats.outliers_influence import variance_inflation_factor

__all__ = ["COLLINEAR", "scaling_identifiability"]

#: Thresholds beyond which the two predictors are called collinear: VIF (Kutner et al.) and the absolute
#: correlation of the two slope estimates. With two centred predictors the condition number of the standardised
#: design is sqrt((1 + |r|) / (1 - |r|)), a function of their correlation r alone: Belsley et al.'s limit of 30
#: needs |r| > 0.9978, where VIF 5 (|r| > 0.894) has long fired, so it is reported and never a check of its own.
COLLINEAR: dict[str, float] = {"vif": 5.0, "slope_correlation": 0.8}


def _why_not_identified(frame: pd.DataFrame, column: str, family: str | None) -> str:
    """Why a log predictor's slope cannot be estimated from these units ("" when it can)."""
    values = frame[column].astype(float)
    if values.nunique() <= 1:
        return (
            f"{column} take one value ({values.iloc[0]:.4g}) across the {len(frame)} units: no variation to "
            "estimate a slope from"
        )
    if family and frame[family].nunique() > 1 and (frame.groupby(family)[column].nunique() <= 1).all():
        return (
            f"{column} vary only between the {frame[family].nunique()} families, so a slope on them is the "
            "family difference (architecture, data mix, recipe)"
        )
    return ""


def _slopes(
    frame: pd.DataFrame,
    logx: np.ndarray,
    keep: list[int],
    *,
    score: str,
    score_sd: str | None,
    family: str | None,
    covariates: Sequence[str],
    fixed_family: bool,
) -> dict[str, object]:
    """WLS of the score on the identified log predictors (+ family fixed effects, + varying covariates)."""
    blocks, adjusted = [logx[:, keep]], []
    if fixed_family:
        dummies = pd.get_dummies(frame[family].astype(str), drop_first=True, dtype=float)
        blocks.append(dummies.to_numpy())
        adjusted.append(f"{family} fixed effects")
    for c in covariates:
        x = frame[c].astype(float).to_numpy()
        if np.ptp(x) > 0:
            blocks.append(x[:, None])
            adjusted.append(c)
    design = sm.add_constant(np.column_stack(blocks), has_constant="add")
    n, k = design.shape
    if np.linalg.matrix_rank(design) < k:
        return {
            "fit_note": f"the design of {n} units on {k} coefficients is rank-deficient ({', '.join(adjusted)})",
            "df_resid": 0,
            "adjusted_for": adjusted,
        }
    if n <= k:
        return {
            "fit_note": f"{n} units for {k} coefficients leave no residual degrees of freedom",
            "df_resid": 0,
            "adjusted_for": adjusted,
        }
    weights = 1 / frame[score_sd].to_numpy(dtype=float) ** 2 if score_sd else np.ones(n)
    res = sm.WLS(frame[score].to_numpy(dtype=float), design, weights=weights).fit()
    return {
        "coefficients": [(float(res.params[1 + j]), float(res.bse[1 + j])) for j in range(len(keep))],
        "df_resid": int(res.df_resid),
        "fit_note": "",
        "adjusted_for": adjusted,
    }


def scaling_identifiability(
    units: pd.DataFrame,
    *,
    parameters: str = "parameters",
    tokens: str = "training_tokens",
    score: str | None = None,
    score_sd: str | None = None,
    family: str | None = None,
    covariates: Sequence[str] = (),
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
    covariates : sequence of str
        Further numeric columns the regression adjusts for where they vary (e.g. ``aligned`` as 0/1).

    Returns
    -------
    dict
        ``n``, ``vif`` (of each log predictor), ``condition_number`` (of the column-standardised design with intercept;
        shown, not a check: see :data:`COLLINEAR`), ``predictor_correlation``, ``slope_correlation`` (correlation of the
        two slope estimates: the posterior correlation under flat priors), ``collinear`` (bool), ``verdict`` (one
        sentence), ``confounded_with_family`` (bool: tokens differ between families and never within one; False without
        ``family``), ``reason`` (which check decided); ``identified`` and ``why_not`` (per predictor, keyed
        ``parameters`` and ``tokens``: whether its slope can be estimated from these units, and else why not, in a
        sentence). With ``score``: ``slope_parameters``, ``slope_tokens``, ``se_parameters``, ``se_tokens`` (NaN for a
        slope not identified or not estimable), ``df_resid``, ``adjusted_for`` (family fixed effects, covariates) and
        ``fit_note`` (why no slope could be fitted, else "").

    Notes
    -----
    With predictors :math:`x_1 = \\log P`, :math:`x_2 = \\log T` the VIF of either is :math:`1/(1-r^2)` and the
    correlation of the two OLS slopes is :math:`-r` (from :math:`(X'X)^{-1}`), so the design alone decides whether
    size and data can be told apart. The closed forms are checked in the tests; statsmodels computes the VIF and
    the regression. The design is called collinear when any figure passes :data:`COLLINEAR`, or when fewer than
    four distinct (size, data) points exist.

    A predictor that takes one value, or (with ``family``) varies only between families, has no slope of its own
    in this design: it is left out and named in ``why_not``, and the other slope is estimated alone, within
    families (family fixed effects) when the one left out varies between them. Two models of one family at 8B and
    70B trained on the same 15T tokens identify a size slope and no token slope.

    References
    ----------
    .. [1] Belsley, Kuh, Welsch (1980). Regression Diagnostics. Wiley.
    .. [2] Kutner, Nachtsheim, Neter, Li (2005). Applied Linear Statistical Models, 5th ed., section 10.5.

    Examples
    --------
    >>> d = pd.DataFrame({"parameters": [1, 2, 4, 8], "training_tokens": [1, 2, 4, 8.5]})
    >>> scaling_identifiability(d)["verdict"]
    'size and data cannot be separated in this design'
    >>> same = pd.DataFrame({"parameters": [8e9, 8e9, 70e9, 70e9], "training_tokens": [15e12] * 4,
    ...                      "sc": [0.60, 0.62, 0.70, 0.71], "aligned": [0, 1, 0, 1]})
    >>> out = scaling_identifiability(same, score="sc", covariates=["aligned"])
    >>> out["identified"], round(out["slope_parameters"], 3), bool(np.isnan(out["slope_tokens"]))
    ({'parameters': True, 'tokens': False}, 0.044, True)
    >>> out["why_not"]["tokens"]
    'training_tokens take one value (1.5e+13) across the 4 units: no variation to estimate a slope from'
    """
    cols = [parameters, tokens, *(c for c in (score, score_sd, family) if c), *covariates]
    missing = [c for c in cols if c not in units.columns]
    if missing:
        raise ValueError(f"units table lacks column(s) {', '.join(missing)}; it has {', '.join(map(str, units))}")
    frame = units[list(dict.fromkeys(cols))].dropna()
    x = frame[[parameters, tokens]].astype(float)
    if (x <= 0).any().any():
        raise ValueError(f"{parameters} and {tokens} must be positive (they enter as logs)")
    logx = np.log(x.to_numpy())
    distinct = len({tuple(r) for r in np.round(logx, 9)})
    design = sm.add_constant(logx, has_constant="add")
    r = float(np.corrcoef(logx.T)[0, 1]) if distinct > 1 and np.all(logx.std(axis=0) > 0) else float("nan")
    if np.isfinite(r) and abs(r) < 1 - 1e-12:  # exactly collinear logs (e.g. two points) leave X'X singular
        with warnings.catch_warnings():  # statsmodels warns of a poorly conditioned design: reported below
            warnings.simplefilter("ignore", UserWarning)
            vif = [float(variance_inflation_factor(design, j)) for j in (1, 2)]
        scaled = np.column_stack([np.ones(len(logx)), (logx - logx.mean(0)) / logx.std(0)])
        cond = float(np.linalg.cond(scaled))
        cov = np.linalg.inv(design.T @ design)[1:, 1:]
        slope_corr = float(cov[0, 1] / np.sqrt(cov[0, 0] * cov[1, 1]))
    else:
        vif, cond, slope_corr = [float("inf")] * 2, float("inf"), float("nan")
    tokens_vary = frame[tokens].nunique() > 1
    confounded = bool(family) and tokens_vary and bool((frame.groupby(family)[tokens].nunique() <= 1).all())
    checks = {f"fewer than 4 distinct (size, data) points ({distinct})": distinct < 4}
    if np.isfinite(r):
        checks.update(
            {
                f"VIF {max(vif):.3g} > {COLLINEAR['vif']:g}": max(vif) > COLLINEAR["vif"],
                f"slope correlation {abs(slope_corr):.3g} > {COLLINEAR['slope_correlation']:g}": abs(slope_corr)
                > COLLINEAR["slope_correlation"],
            }
        )
    else:
        checks["size or training data takes one value, so the two cannot be compared"] = True
    checks["training tokens never vary within a family, so their slope is the family difference"] = confounded
    failed = [name for name, hit in checks.items() if hit]
    collinear = bool(failed)
    predictors = (("parameters", parameters), ("tokens", tokens))
    why = {key: _why_not_identified(frame, col, family) for key, col in predictors}
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
        "identified": {k: not v for k, v in why.items()},
        "why_not": why,
    }
    if score:
        keep = [j for j, k in enumerate(("parameters", "tokens")) if not why[k]]
        out.update(slope_parameters=np.nan, slope_tokens=np.nan, se_parameters=np.nan, se_tokens=np.nan)
        if not keep:
            out.update(df_resid=0, adjusted_for=[], fit_note="neither predictor varies within the units' families")
            return out
        fixed_family = bool(family) and len(keep) < 2 and frame[family].nunique() > 1
        fit = _slopes(
            frame,
            logx,
            keep,
            score=score,
            score_sd=score_sd,
            family=family,
            covariates=covariates,
            fixed_family=fixed_family,
        )
        for j, (b, se) in zip(keep, fit.pop("coefficients", []), strict=False):
            name = ("parameters", "tokens")[j]
            out.update({f"slope_{name}": b, f"se_{name}": se})
        out.update(fit)
    return out
