"""What the data identify: prior-to-posterior contraction of every derived quantity, and item contrasts per correlation.

A quantity whose posterior is mostly its prior is labelled "not identified": shown with its interval, never a
verdict's deciding figure, and outside the diagnostics gate (its tail ESS measures how well the sampler explores the
prior, which says nothing about the data).
"""

from __future__ import annotations

import itertools
import logging
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from bias_validity.psychometrics.estimands import Quantity

if TYPE_CHECKING:  # light at import: the analyses read the labels and thresholds without loading PyMC
    from bias_validity.psychometrics.bayes._pymc import pm
    from bias_validity.psychometrics.bayes.design import Design

__all__ = ["DERIVED_FROM", "IDENTIFICATION", "NOT_IDENTIFIED", "prior_draws", "item_contrasts", "identification"]

#: Thresholds below which a quantity is labelled not identified.
#:
#: ``min_contraction`` 0.5: the posterior variance is at least half the prior's. For a Gaussian prior and likelihood
#: the contraction is ``I_data / (I_data + I_prior)``, so 0.5 is the point where the data carry as much information
#: as the prior; below it the interval is more prior than data.
#:
#: ``min_item_contrasts`` 10 (latent correlations only): a correlation of ``n`` paired item contrasts has a Fisher-z
#: standard error of ``1 / sqrt(n - 3)`` (Fisher 1921), 0.38 at ``n = 10``: above that the data cannot move a
#: correlation beyond the LKJ(2) prior's own spread (SD 0.33 in 6 dimensions) however well the chains mix.
IDENTIFICATION: dict[str, float] = {"min_contraction": 0.5, "min_item_contrasts": 10}

#: The label a quantity below :data:`IDENTIFICATION` gets, wherever it is shown.
NOT_IDENTIFIED = "not identified"

#: The model variables derived quantities are computed from (:func:`bias_validity.psychometrics.bayes.derived_draws`).
DERIVED_FROM = (
    "b_item",
    "tmpl",
    "ords",
    "mu_b",
    "mu_o",
    "cut",
    "chol_corr",
    "chol_stds",
    "tmpl_unit",
    "ords_unit",
    "item_unit",
    "cut_unit",
    "sigma_item_unit",
)


def prior_draws(model: pm.Model, *, draws: int = 2000, seed: int = 0) -> object:
    """Draws of the model's prior, shaped like a posterior (one chain), for the variables derived quantities use.

    Forward sampling (``pymc.sample_prior_predictive``): exact draws, no MCMC, a few seconds.
    """
    from bias_validity.psychometrics.bayes import _arviz
    from bias_validity.psychometrics.bayes._pymc import pm

    names = [v for v in DERIVED_FROM if v in model.named_vars]
    logging.getLogger("pymc").setLevel(logging.ERROR)  # as sampling.sample: no "Sampling: [...]" line per fit
    with model:
        prior = pm.sample_prior_predictive(draws=draws, var_names=names, random_seed=seed)
    return _arviz.prior_as_posterior(prior)


def item_contrasts(design: Design) -> dict[str, int]:
    """Per method pair ``"a~b"`` (the ``latent_correlation`` labels), the item contrasts both methods measure.

    Item effects sum to zero within each trait, so a trait with ``n`` items seen by both methods gives ``n - 1``
    contrasts: the paired observations the correlation is estimated from.

    Examples
    --------
    >>> import pandas as pd
    >>> from bias_validity.psychometrics.bayes import index_design
    >>> cells = pd.DataFrame([dict(model="u", dimension=t, method=m, template_id="T", item_id=f"{t}{j}", order="o",
    ...                            k=1, n=2) for t in "ab" for j in range(3) for m in ("x", "y")])
    >>> item_contrasts(index_design(cells))
    {'x~y': 4}
    """
    m_col, i_col, t_col = design.columns.method, design.columns.item, design.columns.trait
    seen: dict[str, set[tuple[str, str]]] = {name: set() for name in design.methods}
    for frame in (design.binary, design.ordinal, design.scores):
        for method, item, trait in zip(frame[m_col], frame[i_col], frame[t_col], strict=True):
            seen[method].add((str(trait), str(item)))
    out = {}
    for a, b in itertools.combinations(design.methods, 2):
        both = pd.DataFrame(sorted(seen[a] & seen[b]), columns=["trait", "item"])
        per_trait = both.groupby("trait")["item"].nunique() if len(both) else pd.Series(dtype=int)
        out[f"{a}~{b}"] = int((per_trait - 1).clip(lower=0).sum())
    return out


def identification(
    labels: pd.DataFrame,
    posterior: np.ndarray,
    prior: np.ndarray,
    design: Design,
    *,
    thresholds: dict[str, float] = IDENTIFICATION,
) -> pd.DataFrame:
    """Contraction, item contrasts and the identified flag of each derived quantity.

    Parameters
    ----------
    labels : DataFrame
        Labels of the derived quantities (``quantity`` and the unit/trait/method columns).
    posterior, prior : ndarray
        Their posterior and prior draws, shaped ``(chain, draw, n)`` (:func:`prior_draws` through
        :func:`bias_validity.psychometrics.bayes.derived_draws` gives the prior's, in the same order).
    design : Design
        The design fitted (for the item contrasts of each latent correlation).
    thresholds : dict
        :data:`IDENTIFICATION`.

    Returns
    -------
    DataFrame
        ``contraction`` (``1 - Var_post / Var_prior``, Schad, Betancourt & Vasishth 2021), ``item_contrasts``
        (latent correlations; missing elsewhere) and ``identified`` (contraction at least ``min_contraction`` and,
        for correlations, at least ``min_item_contrasts`` contrasts), one row per label, in its order.

    Notes
    -----
    The prior variance of a quantity is taken from exact forward draws of the model's prior, so it includes what
    the hierarchy implies (an SC's prior is the logistic of a sum of several normal effects), not a nominal scale.
    Variances are measured as the squared interquartile range over 1.349 (equal to the variance for a normal): a
    ratio whose denominator can be near zero has no finite variance, before or after the data, and its sample
    variance would make the contraction a matter of a few extreme draws.

    References
    ----------
    .. [1] Schad, D. J., Betancourt, M. & Vasishth, S. (2021). Toward a principled Bayesian workflow in cognitive
       science. Psychological Methods 26(1), 103-126 (posterior contraction, after Betancourt 2018).
    .. [2] Fisher, R. A. (1921). On the "probable error" of a coefficient of correlation deduced from a small
       sample. Metron 1, 3-32.

    Examples
    --------
    >>> import pandas as pd
    >>> from bias_validity.psychometrics.bayes import index_design
    >>> cells = pd.DataFrame([dict(model="u", dimension="d", method="x", template_id="T", item_id=f"i{j}",
    ...                            order="o", k=1, n=2) for j in range(3)])
    >>> rng = np.random.default_rng(0)
    >>> labels = pd.DataFrame({"quantity": ["sc"], "model": ["u"], "dimension": ["d"], "method": ["x"]})
    >>> out = identification(labels, rng.normal(0, 0.4, (2, 4000, 1)), rng.normal(0, 1, (1, 8000, 1)),
    ...                      index_design(cells))
    >>> round(float(out["contraction"].iloc[0]), 1), bool(out["identified"].iloc[0])
    (0.8, True)
    """
    var_post, var_prior = _robust_variance(posterior), _robust_variance(prior)
    with np.errstate(divide="ignore", invalid="ignore"):
        contraction = np.where(var_prior > 0, 1.0 - var_post / var_prior, np.nan)
    contrasts = item_contrasts(design)
    is_corr = (labels["quantity"] == Quantity.LATENT_CORRELATION.value).to_numpy()
    n_contrasts = np.where(is_corr, labels[design.columns.method].map(contrasts).to_numpy(dtype=float), np.nan)
    identified = np.nan_to_num(contraction, nan=0.0) >= thresholds["min_contraction"]
    identified &= ~is_corr | (np.nan_to_num(n_contrasts) >= thresholds["min_item_contrasts"])
    return pd.DataFrame(
        {"contraction": contraction, "item_contrasts": n_contrasts, "identified": identified}, index=labels.index
    )


def _robust_variance(draws: np.ndarray) -> np.ndarray:
    """Squared normal-consistent IQR of each quantity's draws ``(chain, draw, n)``: the variance for a normal."""
    flat = draws.reshape(-1, draws.shape[-1])
    q1, q3 = np.quantile(flat, [0.25, 0.75], axis=0)
    return ((q3 - q1) / _IQR_PER_SD) ** 2


_IQR_PER_SD = 1.3489795  # interquartile range of the standard normal, 2 * Phi^-1(0.75)
