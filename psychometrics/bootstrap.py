"""Bootstrap confidence intervals (BCa, percentile) for any statistic, by ``scipy.stats.bootstrap``."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from bias_validity.psychometrics._checks import check_ci
from bias_validity.psychometrics.interval_kind import IntervalKind

__all__ = ["BOOTSTRAP_KINDS", "BOOTSTRAP_METHODS", "bootstrap_ci"]

BOOTSTRAP_METHODS = ("BCa", "percentile", "basic")
#: The interval kind of each ``method`` of :func:`bootstrap_ci` (scipy's names).
BOOTSTRAP_KINDS = {"BCa": IntervalKind.BCA, "percentile": IntervalKind.PERCENTILE, "basic": IntervalKind.BASIC}


def _bootstrap_interval(
    samples: Sequence[np.ndarray],
    statistic: Callable[..., float],
    *,
    paired: bool,
    vectorized: bool,
    method: str,
    ci: float,
    n_resamples: int,
    seed: int | None,
) -> tuple[float, float, float, str]:
    """Run scipy's bootstrap; return (low, high, standard error, reason), NaN with a reason where degenerate."""
    from scipy.stats import bootstrap

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy warns on degenerate resamples; reported as a reason below
        res = bootstrap(
            tuple(samples),
            statistic,
            paired=paired,
            vectorized=vectorized,
            method=method,
            confidence_level=ci,
            n_resamples=n_resamples,
            rng=np.random.default_rng(seed),
        )
    low, high = float(res.confidence_interval.low), float(res.confidence_interval.high)
    reason = ""
    if np.isnan(low) or np.isnan(high):
        reason = "degenerate bootstrap distribution: the statistic barely varies over resamples (constant data?)"
    return low, high, float(res.standard_error), reason


def _bootstrap_draws(
    samples: Sequence[np.ndarray], statistic: Callable[..., np.ndarray], *, n_resamples: int, seed: int | None
) -> np.ndarray:
    """scipy's paired, vectorised resampling of ``samples``: the statistic's draws, shape ``(..., n_resamples)``.

    The same resamples as :func:`_bootstrap_interval` with the same samples and seed; for a statistic that returns
    several values at once (their joint bootstrap distribution, e.g. for a covariance).
    """
    from scipy.stats import bootstrap

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # degenerate resamples show as non-finite draws, handled by the caller
        res = bootstrap(
            tuple(samples),
            statistic,
            paired=True,
            vectorized=True,
            method="percentile",
            n_resamples=n_resamples,
            rng=np.random.default_rng(seed),
        )
    return np.asarray(res.bootstrap_distribution, dtype=float)


def bootstrap_ci(
    samples: Sequence[Sequence[float] | np.ndarray],
    statistic: Callable[..., float],
    *,
    paired: bool = False,
    method: str = "BCa",
    ci: float = 0.95,
    n_resamples: int = 2000,
    seed: int | None = None,
    vectorized: bool = False,
) -> pd.DataFrame:
    """Bootstrap confidence interval (BCa or percentile) for any statistic of one or more samples.

    Parameters
    ----------
    samples : sequence of array-like
        The samples, e.g. ``[x]`` or ``[x, y]``; with ``paired=True`` they are resampled together by row.
    statistic : callable
        ``statistic(*samples) -> float``; with ``vectorized=True`` it must accept an ``axis`` keyword.
    paired : bool
        Resample the samples jointly (paired observations) rather than independently.
    method : {"BCa", "percentile", "basic"}
        Interval construction.
    ci : float
        Confidence level.
    n_resamples : int
        Number of bootstrap resamples (>= 100).
    seed : int or None
        Seed for the resampling generator (the interval is reproducible with a seed).
    vectorized : bool
        Whether ``statistic`` is vectorised over an ``axis`` keyword (much faster).

    Returns
    -------
    pandas.DataFrame
        One row with columns ``estimate`` (the statistic on the data), ``se`` (bootstrap standard error),
        ``ci_low``, ``ci_high``. Constant data give NaN bounds; ``attrs["nan_reason"]`` says why. ``attrs`` also
        holds ``ci``, ``method``, ``interval`` (the method's :class:`IntervalKind`: ``BCA``, ``PERCENTILE`` or
        ``BASIC``, see :data:`BOOTSTRAP_KINDS`), ``n_resamples`` and ``seed``.

    Notes
    -----
    Resampling and interval construction are done by ``scipy.stats.bootstrap``; BCa corrects the percentile
    interval for bias and skewness with a jackknife acceleration [1]_.

    References
    ----------
    .. [1] Efron, B., & Tibshirani, R. J. (1993). An Introduction to the Bootstrap, ch. 14. Chapman & Hall.

    Examples
    --------
    >>> x = np.arange(20.0)
    >>> out = bootstrap_ci([x], np.mean, seed=1)
    >>> float(out["estimate"].iloc[0]), bool(out["ci_low"].iloc[0] < 9.5 < out["ci_high"].iloc[0])
    (9.5, True)
    """
    if method not in BOOTSTRAP_METHODS:
        raise ValueError(f"bootstrap_ci: method {method!r} not known; valid methods are {', '.join(BOOTSTRAP_METHODS)}")
    check_ci(ci)
    if not isinstance(n_resamples, int) or n_resamples < 100:
        raise ValueError(f"bootstrap_ci: n_resamples must be an integer >= 100, got {n_resamples!r}")
    if not callable(statistic):
        raise ValueError("bootstrap_ci: statistic must be a callable taking the samples")
    arrays = [np.asarray(s, dtype=float) for s in samples]
    if not arrays or any(a.ndim != 1 or a.size < 2 for a in arrays):
        raise ValueError("bootstrap_ci: samples must be a non-empty sequence of 1-d arrays with >= 2 values each")
    if any(np.isnan(a).any() for a in arrays):
        raise ValueError("bootstrap_ci: samples contain NaN; drop or impute missing values first")
    if paired and len({a.size for a in arrays}) != 1:
        raise ValueError("bootstrap_ci: paired samples must have the same length")
    estimate = float(statistic(*arrays))
    low, high, se, reason = _bootstrap_interval(
        arrays,
        statistic,
        paired=paired,
        vectorized=vectorized,
        method=method,
        ci=ci,
        n_resamples=n_resamples,
        seed=seed,
    )
    out = pd.DataFrame({"estimate": [estimate], "se": [se], "ci_low": [low], "ci_high": [high]})
    out.attrs.update(
        ci=ci,
        method=method,
        interval=BOOTSTRAP_KINDS[method],
        n_resamples=n_resamples,
        seed=seed,
        nan_reason=reason,
    )
    return out
