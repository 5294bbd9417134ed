"""Where the posterior may decide: each derived quantity of a fit marked with whether it decides a verdict, and why not.

A posterior interval decides a cell only where the fit has earned it. Three checks, each read from the fit itself:

- the fit passed its diagnostics gate (R-hat, ESS, divergences);
- the quantity is identified (its posterior is not mostly its prior: ``identified`` from
  :mod:`bias_validity.psychometrics.bayes.identification`);
- the posterior predictive check of every method the quantity is computed from fits: at most
  ``Thresholds.ppc_outside`` of the method's model x dimension x method x template groups lie outside their 90%
  replicated interval (:func:`bias_validity.psychometrics.bayes.ppc.share_outside`).

Elsewhere the classical interval decides, and the cell's reason says why the posterior did not.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from bias_validity.probes.schema import Method
from bias_validity.psychometrics.bayes.identification import NOT_IDENTIFIED
from bias_validity.psychometrics.bayes.ppc import PPC_INTERVAL, share_outside
from bias_validity.psychometrics.estimands import Quantity, Thresholds

__all__ = ["mark_trust", "posterior_standing", "classical_reason"]

#: The methods a contrast is computed from (the rest are computed from their own row's ``method``).
_CONTRAST_METHODS: dict[str, tuple[str, ...]] = {
    Quantity.GAP.value: (Method.EXPLICIT.value, Method.IMPLICIT.value),
    Quantity.RETAINED_SHARE.value: (Method.ABLATED.value, Method.IMPLICIT.value),
    Quantity.REFLECTION_MINUS_IMPLICIT.value: (Method.REFLECTION.value, Method.IMPLICIT.value),
}


def _methods(quantity: str, method: object) -> tuple[str, ...]:
    """The methods whose predictive check a quantity's row rests on."""
    if quantity in _CONTRAST_METHODS:
        return _CONTRAST_METHODS[quantity]
    if quantity == Quantity.LATENT_CORRELATION.value:
        return tuple(str(method).split("~"))
    return (str(method),) if isinstance(method, str) and method else ()


def mark_trust(
    posterior: pd.DataFrame,
    diagnostics: dict[str, object] | None,
    ppc: pd.DataFrame | None,
    thresholds: Thresholds | None = None,
    *,
    unit_effects: bool = True,
) -> pd.DataFrame:
    """The fit's derived quantities with ``decides`` (bool) and ``why_not`` (the reasons it does not, joined by "; ").

    Parameters
    ----------
    posterior : pandas.DataFrame
        The fit's ``quantities`` (``quantity``, ``model``, ``dimension``, ``method``, ...; ``identified`` and
        ``contraction`` where the fit labelled them).
    diagnostics : dict, optional
        The fit's gate (``passed``, ``gate``).
    ppc : pandas.DataFrame, optional
        The fit's posterior predictive check (one row per group, ``method`` and ``outside``).
    thresholds : Thresholds, optional
        ``ppc_outside``, the largest share of a method's groups outside their interval at which its posterior still
        decides (default 0.20).
    unit_effects : bool
        Whether the fit gave each model its own wording, order and item effects (``FitConfig.unit_effects``). A
        misfit of a method that several models answered, in a fit without them, names that remedy.

    Examples
    --------
    >>> post = pd.DataFrame({"quantity": ["gap_explicit_implicit", "sc"], "model": "m", "dimension": "race",
    ...                      "method": ["", "implicit"]})
    >>> ppc = pd.DataFrame({"method": ["explicit"] * 4 + ["implicit"] * 4, "outside": [True] * 3 + [False] * 5})
    >>> marked = mark_trust(post, {"passed": True}, ppc)
    >>> marked["decides"].tolist()
    [False, True]
    >>> marked["why_not"].iloc[0].split(" (")[0]
    'the posterior predictive check puts 75% of the explicit groups outside their 90% interval'
    """
    thresholds = Thresholds() if thresholds is None else thresholds
    reasons: list[list[str]] = [[] for _ in range(len(posterior))]
    if diagnostics and diagnostics.get("passed") is False:
        gate = diagnostics.get("gate")
        failed = "the Bayesian fit failed its diagnostics gate" + (f" ({gate})" if gate else "")
        for found in reasons:
            found.append(failed)
    if "identified" in posterior:
        contraction = posterior["contraction"] if "contraction" in posterior else pd.Series(np.nan, posterior.index)
        for found, known, c in zip(reasons, posterior["identified"], contraction, strict=True):
            if not bool(known):
                found.append(NOT_IDENTIFIED + ("" if pd.isna(c) else f" (contraction {c:.2f})"))
    shares = share_outside(ppc) if isinstance(ppc, pd.DataFrame) and len(ppc) else pd.Series(dtype=float)
    misfit = shares[shares > thresholds.ppc_outside]
    remedy = dict.fromkeys(misfit.index, "")
    if not unit_effects and isinstance(ppc, pd.DataFrame) and "model" in ppc:
        shared = ppc.groupby("method")["model"].nunique()
        for m in remedy:
            if shared.get(m, 0) > 1:
                remedy[m] = "; a fit without --shared-only gives each model its own wording, order and item effects"
    for found, quantity, method in zip(reasons, posterior["quantity"], posterior["method"], strict=True):
        for m in _methods(str(quantity), method):
            if m in misfit.index:
                found.append(
                    f"the posterior predictive check puts {misfit[m]:.0%} of the {m} groups outside their "
                    f"{PPC_INTERVAL:.0%} interval (the posterior decides at most {thresholds.ppc_outside:.0%})"
                    + remedy[m]
                )
    out = posterior.copy()
    out["decides"] = [not found for found in reasons]
    out["why_not"] = ["; ".join(found) for found in reasons]
    return out


def posterior_standing(rows: pd.DataFrame) -> dict[tuple[str, str], str]:
    """Per (model, dimension) of a quantity's posterior rows: "" where the row decides, else why it does not.

    A table not marked by :func:`mark_trust` (a posterior handed to a question directly) decides everywhere.
    """
    why = rows["why_not"] if "why_not" in rows else pd.Series("", index=rows.index)
    return {(str(m), str(d)): str(w) for m, d, w in zip(rows["model"], rows["dimension"], why, strict=True)}


def classical_reason(standing: dict[tuple[str, str], str], cell: tuple[str, str]) -> str | None:
    """None where the posterior decides ``cell``; else why the classical interval does ("" without a posterior).

    Examples
    --------
    >>> standing = {("m", "race"): "", ("m", "age"): "not identified"}
    >>> [classical_reason(standing, ("m", d)) for d in ("race", "age", "gender")]
    [None, 'posterior not used: not identified', 'posterior not used: the cell is not in the fit']
    >>> classical_reason({}, ("m", "race"))
    ''
    """
    if cell in standing:
        return None if not standing[cell] else f"posterior not used: {standing[cell]}"
    return "posterior not used: the cell is not in the fit" if standing else ""
