"""Binomial-logit and cumulative-logit count likelihoods for the model's cells, without their data-only constants.

PyMC's ``Binomial`` and ``Multinomial`` recompute the combinatorial constants (``log C(n, k)``, the multinomial
coefficient: log-gamma functions of the observed counts) and check their parameters at every gradient, because the
counts are ``pm.Data`` (a refit swaps them in). On the paper-scale workload those terms took 40% of the gradient
and the Likert multinomial alone 70% of it. The densities here drop the constants, which leaves the posterior
unchanged, and write the cumulative-logit log-probabilities in closed form, so each Likert cell costs one softplus
per cutpoint. Forward draws (prior and posterior predictive) are the exact binomial and multinomial draws.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit

from bias_validity.psychometrics.bayes._pymc import pm, pt

__all__ = ["binomial_logit", "cumulative_logit_counts"]


def binomial_logit(name: str, n: object, eta: object, observed: object) -> pt.TensorVariable:
    """``k ~ Binomial(n, logistic(eta))`` with log-density ``k eta - n log(1 + e^eta)`` (up to ``log C(n, k)``)."""
    return pm.CustomDist(name, n, eta, logp=_binomial_logp, random=_binomial_random, observed=observed, dtype="int64")


def cumulative_logit_counts(
    name: str, n: object, cut: object, method: np.ndarray, eta: object, observed: object
) -> pt.TensorVariable:
    """Counts over ordered answers, ``Multinomial(n, p)`` with ``P(y <= j) = logistic(cut_{m,j} - eta)``.

    ``cut`` (methods x (levels - 1), increasing along each row) holds the cutpoints, ``method`` each cell's row of
    it, ``eta`` each cell's linear predictor. With ``x_j = cut_{m,j} - eta``, ``n_j`` answers at level ``j`` and
    ``s_j = log(1 + e^{x_j})``, the log-density up to the multinomial coefficient is

    ``sum_j [n_j x_j - (n_j + n_{j+1}) s_j] + sum_{j=2}^{L-1} n_j log(1 - e^{cut_{m,j-1} - cut_{m,j}})``,

    from ``logistic(b) - logistic(a) = logistic(b) logistic(-a) (1 - e^{a - b})`` for ``a < b``: each middle
    level's probability factors into the two cumulative terms it lies between, and the last term is free of the
    linear predictor, so it is computed once per method. Exact for ordered cutpoints, where the naive difference of
    CDFs loses precision in the tails. Cells take their method's row through a one-hot product, whose gradient is a
    matrix product rather than a scatter of every cell into a few rows.
    """
    one_hot = np.eye(cut.type.shape[0])[method]  # cut's rows are fixed by the design
    cells = pt.dot(one_hot, cut)
    log_gaps = pt.dot(one_hot, pt.log1mexp(cut[:, :-1] - cut[:, 1:]))
    levels = pt.arange(cells.shape[1] + 1)  # fixes the support's size for forward draws
    return pm.CustomDist(
        name,
        n,
        cells - eta[:, None],
        log_gaps,
        levels,
        logp=_cumulative_logp,
        random=_cumulative_random,
        signature="(),(t),(g),(l)->(l)",
        observed=observed,
        dtype="int64",
    )


def _binomial_logp(value: pt.TensorVariable, n: pt.TensorVariable, eta: pt.TensorVariable) -> pt.TensorVariable:
    return value * eta - n * pt.softplus(eta)


def _binomial_random(n: np.ndarray, eta: np.ndarray, rng: np.random.Generator, size: tuple | None) -> np.ndarray:
    return rng.binomial(n, expit(eta), size=size)


def _cumulative_logp(
    value: pt.TensorVariable,
    n: pt.TensorVariable,
    x: pt.TensorVariable,
    log_gaps: pt.TensorVariable,
    levels: pt.TensorVariable,
) -> pt.TensorVariable:
    below, above = value[..., :-1], value[..., 1:]
    return (below * x - (below + above) * pt.softplus(x)).sum(axis=-1) + (value[..., 1:-1] * log_gaps).sum(axis=-1)


def _cumulative_random(
    n: np.ndarray,
    x: np.ndarray,
    log_gaps: np.ndarray,
    levels: np.ndarray,
    rng: np.random.Generator,
    size: tuple | None,
) -> np.ndarray:
    cdf = expit(x)
    edge = np.zeros_like(cdf[..., :1])
    p = np.clip(np.diff(np.concatenate([edge, cdf, edge + 1.0], axis=-1), axis=-1), 0.0, None)
    return rng.multinomial(n, p / p.sum(axis=-1, keepdims=True), size=size)
