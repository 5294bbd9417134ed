"""Confidence intervals for proportions, their differences and failure rates.

statsmodels does the work (``proportion_confint``, ``confint_proportions_2indep``); this module validates input,
vectorises over cells and returns tidy DataFrames with the interval settings in ``df.attrs``, its kind (an
:class:`~bias_validity.psychometrics.interval_kind.IntervalKind`) in ``attrs["interval"]``. For any other statistic
see :mod:`bias_validity.psychometrics.bootstrap`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from bias_validity.psychometrics._checks import check_ci, check_columns
from bias_validity.psychometrics.interval_kind import IntervalKind

__all__ = [
    "wilson_interval",
    "clopper_pearson_interval",
    "newcombe_diff_interval",
    "agresti_caffo_diff_interval",
    "failure_rate",
]


def _counts(successes: object, n: object, what: str) -> tuple[np.ndarray, np.ndarray]:
    """Validate successes/trials as non-negative integer arrays of the same shape with successes <= n."""
    k = np.atleast_1d(np.asarray(successes, dtype=float))
    m = np.atleast_1d(np.asarray(n, dtype=float))
    if k.shape != m.shape:
        raise ValueError(f"{what}: successes and n must have the same shape, got {k.shape} and {m.shape}")
    if np.isnan(k).any() or np.isnan(m).any():
        raise ValueError(f"{what}: successes and n must not contain NaN")
    if (k < 0).any() or (m < 0).any() or (k != np.round(k)).any() or (m != np.round(m)).any():
        raise ValueError(f"{what}: successes and n must be non-negative integers")
    if (k > m).any():
        raise ValueError(f"{what}: successes must not exceed n")
    return k.astype(int), m.astype(int)


def _proportion_interval(
    successes: object, n: object, ci: float, sm_method: str, label: str, kind: IntervalKind
) -> pd.DataFrame:
    from statsmodels.stats.proportion import proportion_confint

    check_ci(ci)
    k, m = _counts(successes, n, label)
    has_trials = m > 0
    low = np.full(k.shape, np.nan)
    high = np.full(k.shape, np.nan)
    if has_trials.any():
        lo, hi = proportion_confint(k[has_trials], m[has_trials], alpha=1 - ci, method=sm_method)
        low[has_trials], high[has_trials] = lo, hi
    with np.errstate(invalid="ignore", divide="ignore"):
        estimate = np.where(has_trials, k / np.where(has_trials, m, 1), np.nan)
    out = pd.DataFrame({"successes": k, "n": m, "estimate": estimate, "ci_low": low, "ci_high": high})
    out.attrs.update(ci=ci, method=label, interval=kind, nan_reason="n = 0: no trials, no estimate")
    return out


def wilson_interval(
    successes: int | Sequence[int] | np.ndarray, n: int | Sequence[int] | np.ndarray, *, ci: float = 0.95
) -> pd.DataFrame:
    """Wilson score interval for a binomial proportion, one row per (successes, n) pair.

    Parameters
    ----------
    successes : int or array-like of int
        Number of successes (e.g. stereotype-consistent answers) per cell.
    n : int or array-like of int
        Number of trials per cell, same shape as ``successes``.
    ci : float
        Confidence level, strictly between 0 and 1.

    Returns
    -------
    pandas.DataFrame
        One row per cell with columns ``successes``, ``n``, ``estimate`` (successes / n), ``ci_low``, ``ci_high``.
        A cell with ``n = 0`` has NaN estimate and bounds (reason in ``attrs["nan_reason"]``). ``attrs`` holds
        ``ci``, ``method`` ("wilson") and ``interval`` (``IntervalKind.WILSON``).

    Notes
    -----
    The score interval inverts the normal test with the null standard error [1]_:
    :math:`(\\hat p + z^2/2n \\pm z\\sqrt{\\hat p(1-\\hat p)/n + z^2/4n^2}) / (1 + z^2/n)`.
    Computed by ``statsmodels.stats.proportion.proportion_confint(method="wilson")``; validated against
    Newcombe (1998) [2]_ Table I, method 3 (81/263: 0.2553 to 0.3662; 0/20: 0 to 0.1611).

    References
    ----------
    .. [1] Wilson, E. B. (1927). Probable inference, the law of succession, and statistical inference. JASA 22,
       209-212.
    .. [2] Newcombe, R. G. (1998). Two-sided confidence intervals for the single proportion: comparison of seven
       methods. Statistics in Medicine 17, 857-872.

    Examples
    --------
    >>> wilson_interval(81, 263).round(4)
       successes    n  estimate  ci_low  ci_high
    0         81  263     0.308  0.2553   0.3662
    """
    return _proportion_interval(successes, n, ci, "wilson", "wilson", IntervalKind.WILSON)


def clopper_pearson_interval(
    successes: int | Sequence[int] | np.ndarray, n: int | Sequence[int] | np.ndarray, *, ci: float = 0.95
) -> pd.DataFrame:
    """Clopper-Pearson ("exact") interval for a binomial proportion, one row per (successes, n) pair.

    Parameters
    ----------
    successes : int or array-like of int
        Number of successes per cell.
    n : int or array-like of int
        Number of trials per cell, same shape as ``successes``.
    ci : float
        Confidence level, strictly between 0 and 1.

    Returns
    -------
    pandas.DataFrame
        Columns ``successes``, ``n``, ``estimate``, ``ci_low``, ``ci_high``; NaN where ``n = 0``. ``attrs`` holds
        ``ci``, ``method`` ("clopper-pearson") and ``interval`` (``IntervalKind.CLOPPER_PEARSON``).

    Notes
    -----
    Bounds are beta quantiles, :math:`B(\\alpha/2; k, n-k+1)` and :math:`B(1-\\alpha/2; k+1, n-k)` [1]_; conservative
    (coverage at least the nominal level). Computed by statsmodels ``proportion_confint(method="beta")``; validated
    against Newcombe (1998) [2]_ Table I, method 5 (81/263: 0.2527 to 0.3676; 1/29: 0.0009 to 0.1776).

    References
    ----------
    .. [1] Clopper, C. J., & Pearson, E. S. (1934). The use of confidence or fiducial limits illustrated in the case
       of the binomial. Biometrika 26, 404-413.
    .. [2] Newcombe, R. G. (1998). Two-sided confidence intervals for the single proportion. Statistics in
       Medicine 17, 857-872.

    Examples
    --------
    >>> clopper_pearson_interval([81, 1], [263, 29]).round(4)
       successes    n  estimate  ci_low  ci_high
    0         81  263    0.3080  0.2527   0.3676
    1          1   29    0.0345  0.0009   0.1776
    """
    return _proportion_interval(successes, n, ci, "beta", "clopper-pearson", IntervalKind.CLOPPER_PEARSON)


def _diff_interval(
    k1: object, n1: object, k2: object, n2: object, ci: float, sm_method: str, label: str, kind: IntervalKind
) -> pd.DataFrame:
    from statsmodels.stats.proportion import confint_proportions_2indep

    check_ci(ci)
    a, m1 = _counts(k1, n1, label)
    b, m2 = _counts(k2, n2, label)
    if a.shape != b.shape:
        raise ValueError(f"{label}: both groups must have the same shape, got {a.shape} and {b.shape}")
    if (m1 == 0).any() or (m2 == 0).any():
        raise ValueError(f"{label}: every group needs n >= 1 trials")
    lo, hi = confint_proportions_2indep(a, m1, b, m2, method=sm_method, compare="diff", alpha=1 - ci)
    out = pd.DataFrame(
        {
            "successes1": a,
            "n1": m1,
            "successes2": b,
            "n2": m2,
            "difference": a / m1 - b / m2,
            "ci_low": np.atleast_1d(lo),
            "ci_high": np.atleast_1d(hi),
        }
    )
    out.attrs.update(ci=ci, method=label, interval=kind)
    return out


def newcombe_diff_interval(
    successes1: object, n1: object, successes2: object, n2: object, *, ci: float = 0.95
) -> pd.DataFrame:
    """Newcombe hybrid-score interval for the difference of two independent proportions p1 - p2.

    Parameters
    ----------
    successes1, n1 : int or array-like of int
        Successes and trials of the first group.
    successes2, n2 : int or array-like of int
        Successes and trials of the second group (same shape).
    ci : float
        Confidence level, strictly between 0 and 1.

    Returns
    -------
    pandas.DataFrame
        Columns ``successes1``, ``n1``, ``successes2``, ``n2``, ``difference`` (p1 - p2), ``ci_low``, ``ci_high``.
        ``attrs`` holds ``ci``, ``method`` ("newcombe") and ``interval`` (``IntervalKind.NEWCOMBE``).

    Notes
    -----
    Method 10 of Newcombe (1998) [1]_: with Wilson limits :math:`(l_i, u_i)` for each proportion, the bounds are
    :math:`d - \\sqrt{(p_1-l_1)^2 + (u_2-p_2)^2}` and :math:`d + \\sqrt{(u_1-p_1)^2 + (p_2-l_2)^2}`.
    Computed by statsmodels ``confint_proportions_2indep(method="newcomb")``; validated against the paper's Table II
    worked examples (56/70 - 48/80 = 0.2000: 0.0524 to 0.3339; 9/10 - 3/10: 0.1705 to 0.8090;
    5/56 - 0/29: -0.0381 to 0.1926).

    References
    ----------
    .. [1] Newcombe, R. G. (1998). Interval estimation for the difference between independent proportions:
       comparison of eleven methods. Statistics in Medicine 17, 873-890.

    Examples
    --------
    >>> newcombe_diff_interval(56, 70, 48, 80).round(4)
       successes1  n1  successes2  n2  difference  ci_low  ci_high
    0          56  70          48  80         0.2  0.0524   0.3339
    """
    return _diff_interval(successes1, n1, successes2, n2, ci, "newcomb", "newcombe", IntervalKind.NEWCOMBE)


def agresti_caffo_diff_interval(
    successes1: object, n1: object, successes2: object, n2: object, *, ci: float = 0.95
) -> pd.DataFrame:
    """Agresti-Caffo interval for the difference of two independent proportions p1 - p2.

    Parameters
    ----------
    successes1, n1 : int or array-like of int
        Successes and trials of the first group.
    successes2, n2 : int or array-like of int
        Successes and trials of the second group (same shape).
    ci : float
        Confidence level, strictly between 0 and 1.

    Returns
    -------
    pandas.DataFrame
        Columns ``successes1``, ``n1``, ``successes2``, ``n2``, ``difference`` (the raw p1 - p2), ``ci_low``,
        ``ci_high``. ``attrs`` holds ``ci``, ``method`` ("agresti-caffo") and ``interval``
        (``IntervalKind.AGRESTI_CAFFO``).

    Notes
    -----
    Add one success and one failure to each group, then take the Wald interval [1]_:
    :math:`\\tilde p_i = (k_i+1)/(n_i+2)`, :math:`\\tilde p_1 - \\tilde p_2 \\pm z\\sqrt{\\sum \\tilde p_i(1-\\tilde
    p_i)/(n_i+2)}`. Computed by statsmodels ``confint_proportions_2indep(method="agresti-caffo")``; validated
    against that closed form.

    References
    ----------
    .. [1] Agresti, A., & Caffo, B. (2000). Simple and effective confidence intervals for proportions and
       differences of proportions result from adding two successes and two failures. The American Statistician
       54, 280-288.

    Examples
    --------
    >>> agresti_caffo_diff_interval(56, 70, 48, 80).round(4)
       successes1  n1  successes2  n2  difference  ci_low  ci_high
    0          56  70          48  80         0.2  0.0525   0.3358
    """
    kind = IntervalKind.AGRESTI_CAFFO
    return _diff_interval(successes1, n1, successes2, n2, ci, "agresti-caffo", "agresti-caffo", kind)


def failure_rate(
    data: pd.DataFrame, *, status: str, ok: str = "ok", by: Sequence[str] = (), ci: float = 0.95
) -> pd.DataFrame:
    """Share of answers whose status is not ``ok``, per group, with a Wilson interval.

    Parameters
    ----------
    data : pandas.DataFrame
        Long table, one row per answer.
    status : str
        Column holding each answer's status.
    ok : str
        The status value that counts as a usable answer; every other value is a failure.
    by : sequence of str
        Grouping columns (e.g. ``["model", "method"]``); empty for one overall rate.
    ci : float
        Confidence level.

    Returns
    -------
    pandas.DataFrame
        One row per group: the ``by`` columns, ``n`` (answers), ``n_failed``, ``failure_rate``, ``ci_low``,
        ``ci_high``. ``attrs`` holds ``ci``, ``method`` ("wilson") and ``interval`` (``IntervalKind.WILSON``).

    Notes
    -----
    A failed answer (refusal, unparseable, error) is never coded as a stance; its rate is a binomial proportion,
    here with the Wilson score interval [1]_ (see :func:`wilson_interval`).

    References
    ----------
    .. [1] Wilson, E. B. (1927). Probable inference, the law of succession, and statistical inference. JASA 22,
       209-212.

    Examples
    --------
    >>> df = pd.DataFrame({"model": ["a"] * 4 + ["b"] * 2,
    ...                    "status": ["ok", "ok", "refusal", "ok", "error", "ok"]})
    >>> failure_rate(df, status="status", by=["model"]).round(3)
      model  n  n_failed  failure_rate  ci_low  ci_high
    0     a  4         1          0.25   0.046    0.699
    1     b  2         1          0.50   0.095    0.905
    """
    by = list(by)
    check_columns(data, [status, *by], "failure_rate")
    if data[status].isna().any():
        raise ValueError(f"failure_rate: column {status!r} has missing values; every answer needs a status")
    failed = (data[status] != ok).astype(int).rename("_failed")
    if by:
        grouped = failed.groupby([data[c] for c in by], sort=True, observed=True)
        counts = grouped.agg(["size", "sum"]).reset_index()
    else:
        counts = pd.DataFrame({"size": [len(failed)], "sum": [int(failed.sum())]})
    interval = wilson_interval(counts["sum"].to_numpy(), counts["size"].to_numpy(), ci=ci)
    out = counts[by].copy()
    out["n"] = counts["size"].to_numpy()
    out["n_failed"] = counts["sum"].to_numpy()
    out["failure_rate"] = interval["estimate"].to_numpy()
    out["ci_low"] = interval["ci_low"].to_numpy()
    out["ci_high"] = interval["ci_high"].to_numpy()
    out.attrs.update(ci=ci, method="wilson", interval=IntervalKind.WILSON)
    return out
