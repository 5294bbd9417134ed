"""Compare two models per dimension and method: posterior difference of SC, its HDI and P(A > B)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from bias_validity.psychometrics.bayes import BayesFit

__all__ = ["compare_models"]


def compare_models(fit: BayesFit, a: str, b: str, *, hdi_prob: float | None = None) -> pd.DataFrame:
    """Posterior SC difference of model ``a`` minus model ``b`` in every dimension x method both were asked.

    Parameters
    ----------
    fit : BayesFit
        A fit from :func:`bias_validity.analyses.fit.fit_study`, or one saved and read back with
        :func:`bias_validity.psychometrics.bayes.load_fit` (the posterior and the design travel with it).
    a, b : str
        Model names as in the responses table.
    hdi_prob : float, optional
        HDI mass; defaults to the fit's own (:attr:`FitConfig.hdi_prob` unless the fit was given another).

    Returns
    -------
    DataFrame
        ``dimension``, ``method``, ``sc_a``, ``sc_b``, ``difference`` (posterior mean of SC_a - SC_b), ``hdi_low``,
        ``hdi_high``, ``p_a_greater`` (posterior probability that SC_a > SC_b); ``attrs``: ``hdi_prob``, ``a``,
        ``b``.

    Notes
    -----
    The SCs are the design-averaged ones of :func:`bias_validity.psychometrics.bayes.group_scores`, so the difference
    carries the shared item, template and order effects once (not twice, as two separate fits would).
    """
    from bias_validity.probes.schema import is_reversed
    from bias_validity.psychometrics.bayes import FitConfig, group_scores
    from bias_validity.psychometrics.bayes._arviz import summarise_draws

    if getattr(fit, "idata", None) is None or getattr(fit, "design", None) is None:
        raise ValueError("compare needs a fit with its posterior and design (a BayesFit); fit the responses again")
    hdi_prob = fit.quantities.attrs.get("hdi_prob", FitConfig.hdi_prob) if hdi_prob is None else hdi_prob
    sc = group_scores(fit.idata, fit.design, reversed_order=is_reversed)
    models = sorted({k[0] for k in sc})
    for name in (a, b):
        if name not in models:
            raise ValueError(f"model {name!r} is not in the fit; models: {', '.join(models)}")
    cells = sorted({(t, m) for u, t, m in sc if u == a} & {(t, m) for u, t, m in sc if u == b})
    if not cells:
        raise ValueError(f"models {a!r} and {b!r} share no dimension x method to compare")
    diff = np.stack([sc[(a, t, m)] - sc[(b, t, m)] for t, m in cells], axis=-1)
    stats = summarise_draws(diff, hdi_prob=hdi_prob)
    out = pd.DataFrame(cells, columns=["dimension", "method"])
    out["sc_a"] = [float(sc[(a, t, m)].mean()) for t, m in cells]
    out["sc_b"] = [float(sc[(b, t, m)].mean()) for t, m in cells]
    out["difference"] = stats["mean"]
    out["hdi_low"], out["hdi_high"] = stats["hdi_low"], stats["hdi_high"]
    out["p_a_greater"] = (diff > 0).reshape(-1, len(cells)).mean(axis=0)
    out.attrs = {"hdi_prob": hdi_prob, "a": a, "b": b}
    return out
