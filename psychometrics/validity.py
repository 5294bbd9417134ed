"""Convergent validity: correlations with Fisher-z and bootstrap intervals, disattenuation, rank agreement.

scipy computes the correlations, their p-values and the bootstrap; the Fisher-z interval is written here because
scipy offers it for Pearson only (Spearman and Kendall need the Fieller, Hartley & Pearson variances).
"""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pandas as pd
from scipy import stats

from bias_validity.psychometrics._checks import check_ci, check_columns, numeric_values, to_wide
from bias_validity.psychometrics.bootstrap import _bootstrap_interval
from bias_validity.psychometrics.interval_kind import IntervalKind

__all__ = [
    "CORRELATION_METHODS",
    "FISHER_Z_VARIANCE",
    "INTERVAL_KINDS",
    "correlation_ci",
    "disattenuate",
    "convergent_validity",
    "rank_agreement",
]

CORRELATION_METHODS = ("pearson", "spearman", "kendall")
#: The :class:`IntervalKind` of each value of the ``interval`` column of :func:`correlation_ci` (the column keeps
#: these short names; its ``kind`` column holds the members).
INTERVAL_KINDS = {"fisher_z": IntervalKind.FISHER_Z, "bootstrap_bca": IntervalKind.BCA}
#: Fisher-z variance numerator and the sample-size offset per method (Fieller, Hartley & Pearson 1957).
FISHER_Z_VARIANCE = {"pearson": (1.0, 3), "spearman": (1.06, 3), "kendall": (0.437, 4)}
_COLUMNS = ["x", "y", "method", "n", "r", "p_value", "interval", "kind", "ci_low", "ci_high"]


def _pearson_along(a: np.ndarray, b: np.ndarray, axis: int = -1) -> np.ndarray:
    a = a - a.mean(axis=axis, keepdims=True)
    b = b - b.mean(axis=axis, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        return (a * b).sum(axis=axis) / np.sqrt((a * a).sum(axis=axis) * (b * b).sum(axis=axis))


def _statistic(method: str):
    if method == "pearson":
        return _pearson_along, True
    if method == "spearman":
        return (lambda a, b, axis=-1: _pearson_along(stats.rankdata(a, axis=axis), stats.rankdata(b, axis=axis))), True
    return (lambda a, b: stats.kendalltau(a, b).statistic), False


def correlation_ci(
    data: pd.DataFrame,
    *,
    x: str,
    y: str,
    method: str = "pearson",
    ci: float = 0.95,
    n_resamples: int = 2000,
    seed: int | None = None,
    groups: str | None = None,
    bootstrap: bool = True,
) -> pd.DataFrame:
    """Correlation of two columns with a Fisher-z interval and a BCa bootstrap interval.

    Parameters
    ----------
    data : pandas.DataFrame
        One row per unit (e.g. per item), with the two measures as columns.
    x, y : str
        The two numeric columns. Rows where either is missing are dropped (count in ``attrs["n_dropped"]``).
    method : {"pearson", "spearman", "kendall"}
        Correlation coefficient.
    ci : float
        Confidence level.
    n_resamples : int
        Bootstrap resamples of units (>= 100).
    seed : int or None
        Bootstrap seed.
    groups : str, optional
        Column of a grouping (e.g. the dimension of each item): the correlation is then the pooled within-group
        one (Pearson or Spearman only; see Notes), so differences between the group means alone do not make two
        measures correlate. A group with one complete row carries no within-group information and is dropped
        (counted in ``attrs["n_dropped"]``). Needs ``bootstrap=False``: no within-group bootstrap is offered.
    bootstrap : bool
        False skips the bootstrap (``n_resamples`` and ``seed`` are then unused and recorded as None): only the
        Fisher-z row is returned.

    Returns
    -------
    pandas.DataFrame
        Two rows, ``interval`` = ``fisher_z`` and ``bootstrap_bca`` (only the first when ``bootstrap`` is False),
        with columns ``x``, ``y``, ``method``, ``n``, ``r``, ``p_value`` (scipy's test of zero correlation; with
        ``groups`` the t test on n - g - 1 degrees of freedom), ``interval``, ``kind`` (the row's
        :class:`IntervalKind`: ``FISHER_Z``, ``BCA``; see :data:`INTERVAL_KINDS`), ``ci_low``, ``ci_high``. Bounds
        are NaN where not computable (n too small for Fisher z, constant data); ``attrs["nan_reason"]`` says why.
        ``attrs`` also holds ``ci``, ``n_resamples``, ``seed``, ``bootstrap``, ``n_dropped``, ``groups`` (the column
        or None), ``n_groups`` (g; 1 without ``groups``) and ``df`` (n - g - 1, the degrees of freedom of the
        correlation); the interval kind is per row, so there is no ``attrs["interval"]``.

    Notes
    -----
    Fisher z: :math:`\\tanh(\\operatorname{atanh} r \\pm z_{1-a/2} \\sqrt{c/(n-m)})` with (c, m) = (1, 3) for
    Pearson [1]_, (1.06, 3) for Spearman and (0.437, 4) for Kendall [2]_. The Pearson interval is validated
    against ``scipy.stats.pearsonr(...).confidence_interval()``; the bootstrap (``scipy.stats.bootstrap``, paired,
    BCa) by coverage on simulated bivariate normal data.

    With ``groups`` (g groups, n rows in all) the correlation is the pooled within-group correlation of Bland &
    Altman [3]_: both columns (for Spearman their ranks within each group, ties averaged) are centred on their
    group means and correlated over all rows, i.e. the partial correlation given the group (the ANCOVA of one
    column on the other and the group). Centring spends g - 1 degrees of freedom more than one correlation does,
    so the test has n - g - 1 of them and the Fisher-z width uses the effective sample size n - g + 1 in place of
    n: :math:`\\sqrt{c/(n-g+1-m)}`. With one group this is the ordinary correlation and its interval.

    References
    ----------
    .. [1] Fisher, R. A. (1921). On the "probable error" of a coefficient of correlation deduced from a small
       sample. Metron 1, 3-32.
    .. [2] Fieller, E. C., Hartley, H. O., & Pearson, E. S. (1957). Tests for rank correlation coefficients. I.
       Biometrika 44, 470-481.
    .. [3] Bland, J. M., & Altman, D. G. (1995). Calculating correlation coefficients with repeated observations:
       Part 1--correlation within subjects. BMJ 310, 446.

    Examples
    --------
    >>> df = pd.DataFrame({"implicit": [0.9, 0.7, 0.8, 0.4, 0.6, 0.3, 0.5, 0.2],
    ...                    "logprob": [1.2, 0.9, 0.7, 0.1, 0.8, -0.2, 0.3, 0.0]})
    >>> out = correlation_ci(df, x="implicit", y="logprob", seed=0)
    >>> out[["interval", "n", "r", "ci_low", "ci_high"]].iloc[[0]].round(3)
       interval  n      r  ci_low  ci_high
    0  fisher_z  8  0.931   0.657    0.988

    Two groups whose means differ on both columns, but no association within either: pooled r is high, the
    within-group r is not.

    >>> two = pd.DataFrame({"a": [1, 2, 3, 4, 11, 12, 13, 14], "b": [2, 4, 1, 3, 12, 14, 11, 13],
    ...                     "dim": ["p"] * 4 + ["q"] * 4})
    >>> round(float(correlation_ci(two, x="a", y="b", bootstrap=False)["r"].iloc[0]), 3)
    0.952
    >>> within = correlation_ci(two, x="a", y="b", groups="dim", bootstrap=False)
    >>> float(within["r"].iloc[0]), within.attrs["df"]
    (0.0, 5)
    """
    check_ci(ci)
    if method not in CORRELATION_METHODS:
        raise ValueError(
            f"correlation_ci: method {method!r} not known; valid methods are {', '.join(CORRELATION_METHODS)}"
        )
    if not isinstance(n_resamples, int) or n_resamples < 100:
        raise ValueError(f"correlation_ci: n_resamples must be an integer >= 100, got {n_resamples!r}")
    if groups is not None and method == "kendall":
        raise ValueError("correlation_ci: a within-group (groups=...) correlation is Pearson or Spearman, not kendall")
    if groups is not None and bootstrap:
        raise ValueError("correlation_ci: no within-group (groups=...) bootstrap is offered; pass bootstrap=False")
    check_columns(data, [x, y] if groups is None else [x, y, groups], "correlation_ci")
    a = numeric_values(data, x, "correlation_ci", allow_nan=True)
    b = numeric_values(data, y, "correlation_ci", allow_nan=True)
    keep = ~(np.isnan(a) | np.isnan(b))
    if groups is not None:
        lacking = pd.Series(data[groups].to_numpy()[keep]).isna()
        if lacking.any():
            raise ValueError(f"correlation_ci: {groups!r} is missing on {int(lacking.sum())} complete rows")
    a, b = a[keep], b[keep]
    n = a.size
    if n < 3:
        raise ValueError(f"correlation_ci: needs at least 3 complete ({x!r}, {y!r}) pairs, found {n}")
    n_dropped = int((~keep).sum())
    reasons = []
    fisher = (np.nan, np.nan)
    r = p = np.nan
    boot = (np.nan, np.nan)
    if groups is None:
        g = 1
        constant = np.ptp(a) == 0 or np.ptp(b) == 0
        if constant:
            reasons.append(f"{x if np.ptp(a) == 0 else y!r} is constant: the correlation is undefined")
        else:
            test = {"pearson": stats.pearsonr, "spearman": stats.spearmanr, "kendall": stats.kendalltau}[method](a, b)
            r, p = float(test.statistic), float(test.pvalue)
    else:
        codes, _ = pd.factorize(data[groups].to_numpy()[keep])
        sizes = np.bincount(codes)
        single = sizes[codes] < 2  # a lone row of its group is its own mean: no within-group information
        n_dropped += int(single.sum())
        a, b, codes = a[~single], b[~single], pd.factorize(codes[~single])[0]
        n, g = a.size, int(codes.max()) + 1 if a.size else 0
        ac, bc = _centred_within(a, codes, method), _centred_within(b, codes, method)
        ssa, ssb = float((ac * ac).sum()), float((bc * bc).sum())
        constant = ssa == 0 or ssb == 0
        if constant:
            reasons.append(
                f"{x if ssa == 0 else y!r} is constant within every {groups!r}: the correlation is undefined"
            )
        else:
            r = float(np.clip((ac * bc).sum() / np.sqrt(ssa * ssb), -1.0, 1.0))
            df = n - g - 1
            if df >= 1 and abs(r) < 1:
                p = float(2 * stats.t.sf(abs(r) * np.sqrt(df / (1 - r * r)), df))
            elif df >= 1:
                p = 0.0
    n_eff = n - g + 1  # the sample size of one correlation with the same degrees of freedom (n - g - 1)
    if not constant:
        c, m = FISHER_Z_VARIANCE[method]
        if n_eff > m and abs(r) < 1:
            half = stats.norm.ppf((1 + ci) / 2) * np.sqrt(c / (n_eff - m))
            fisher = (float(np.tanh(np.arctanh(r) - half)), float(np.tanh(np.arctanh(r) + half)))
        elif groups is None:
            reasons.append(f"Fisher z needs n > {m} and |r| < 1 (n = {n}, r = {r:.3f})")
        else:
            reasons.append(f"Fisher z needs n - g + 1 > {m} and |r| < 1 (n = {n}, g = {g}, r = {r:.3f})")
        if bootstrap:
            stat, vectorized = _statistic(method)
            low, high, _, reason = _bootstrap_interval(
                [a, b],
                stat,
                paired=True,
                vectorized=vectorized,
                method="BCa",
                ci=ci,
                n_resamples=n_resamples,
                seed=seed,
            )
            boot = (low, high)
            if reason:
                reasons.append(reason)
    labels = ["fisher_z", "bootstrap_bca"] if bootstrap else ["fisher_z"]
    bounds = {"fisher_z": fisher, "bootstrap_bca": boot}
    out = pd.DataFrame(
        [(x, y, method, n, r, p, label, INTERVAL_KINDS[label], *bounds[label]) for label in labels], columns=_COLUMNS
    )
    # the members themselves in an object column: pandas (>= 3) would store their str values
    out["kind"] = pd.Series([INTERVAL_KINDS[label] for label in out["interval"]], index=out.index, dtype=object)
    out.attrs.update(
        ci=ci,
        n_resamples=n_resamples if bootstrap else None,
        seed=seed if bootstrap else None,
        bootstrap=bootstrap,
        n_dropped=n_dropped,
        groups=groups,
        n_groups=g,
        df=n - g - 1,
        nan_reason="; ".join(reasons),
    )
    return out


def _centred_within(values: np.ndarray, codes: np.ndarray, method: str) -> np.ndarray:
    """``values`` (their ranks within each group for Spearman) minus their group's mean."""
    if method == "spearman":
        values = values.astype(float).copy()
        for code in np.unique(codes):
            at = codes == code
            values[at] = stats.rankdata(values[at])
    means = np.bincount(codes, weights=values) / np.bincount(codes)
    return values - means[codes]


def disattenuate(
    r: float | np.ndarray,
    reliability_x: float | np.ndarray,
    reliability_y: float | np.ndarray,
    *,
    ci_low: float | np.ndarray | None = None,
    ci_high: float | np.ndarray | None = None,
    min_reliability: float = 0.5,
) -> pd.DataFrame:
    """Correct correlations for the unreliability of both measures (Spearman 1904), flagging unsafe corrections.

    Parameters
    ----------
    r : float or array-like
        Observed correlation(s).
    reliability_x, reliability_y : float or array-like
        Reliabilities of the two measures (e.g. test-retest ICC, split-half), broadcast against ``r``.
    ci_low, ci_high : float or array-like, optional
        Interval of the observed correlation; its bounds are corrected the same way.
    min_reliability : float
        Reliabilities below this are flagged: the correction divides by a small, noisy number.

    Returns
    -------
    pandas.DataFrame
        One row per correlation: ``r``, ``reliability_x``, ``reliability_y``, ``r_disattenuated``, ``ci_low``,
        ``ci_high`` (corrected bounds, NaN when not given), ``flagged`` (bool) and ``reason`` ("" when not
        flagged). A non-positive reliability gives NaN; a corrected value beyond +/-1 is kept but flagged.
        ``attrs`` holds ``min_reliability``.

    Notes
    -----
    :math:`r^* = r_{xy} / \\sqrt{r_{xx} r_{yy}}` [1]_, the correlation of the true scores under classical test
    theory; interval bounds are corrected by the same factor (Hunter & Schmidt 2004, ch. 3 [2]_). Written here
    because it is one line; validated against the closed form.

    References
    ----------
    .. [1] Spearman, C. (1904). The proof and measurement of association between two things. American Journal of
       Psychology 15, 72-101.
    .. [2] Hunter, J. E., & Schmidt, F. L. (2004). Methods of Meta-Analysis, 2nd ed. Sage.

    Examples
    --------
    >>> disattenuate(0.3, 0.6, 0.5)[["r_disattenuated", "flagged"]].round(4)
       r_disattenuated  flagged
    0           0.5477    False
    """
    arrays = [np.atleast_1d(np.asarray(v, dtype=float)) for v in (r, reliability_x, reliability_y)]
    bounds = [np.full(1, np.nan) if v is None else np.atleast_1d(np.asarray(v, dtype=float)) for v in (ci_low, ci_high)]
    try:
        r_, rx, ry, lo, hi = np.broadcast_arrays(*arrays, *bounds)
    except ValueError:
        raise ValueError("disattenuate: r, reliabilities and bounds must have broadcastable shapes") from None
    if np.isnan(r_).any() or np.isnan(rx).any() or np.isnan(ry).any():
        raise ValueError("disattenuate: r and reliabilities must not be NaN")
    if (np.abs(r_) > 1).any() or (rx > 1).any() or (ry > 1).any():
        raise ValueError("disattenuate: correlations must lie in [-1, 1] and reliabilities be at most 1")
    if not 0 <= min_reliability <= 1:
        raise ValueError(f"disattenuate: min_reliability must be in [0, 1], got {min_reliability!r}")
    positive = (rx > 0) & (ry > 0)
    factor = np.where(positive, np.sqrt(np.where(positive, rx * ry, 1.0)), np.nan)
    corrected = r_ / factor
    reasons = []
    for i in range(r_.size):
        why = []
        if not positive[i]:
            why.append("a reliability is not positive: no correction possible")
        elif min(rx[i], ry[i]) < min_reliability:
            why.append(f"a reliability is below {min_reliability}: the correction is unstable")
        if positive[i] and abs(corrected[i]) > 1:
            why.append("the corrected correlation exceeds 1 in absolute value")
        reasons.append("; ".join(why))
    out = pd.DataFrame(
        {
            "r": r_,
            "reliability_x": rx,
            "reliability_y": ry,
            "r_disattenuated": corrected,
            "ci_low": lo / factor,
            "ci_high": hi / factor,
            "flagged": [bool(w) for w in reasons],
            "reason": reasons,
        }
    )
    out.attrs.update(min_reliability=min_reliability)
    return out


def convergent_validity(
    data: pd.DataFrame,
    *,
    units: str,
    methods: str,
    scores: str,
    reliabilities: dict[str, float] | None = None,
    method: str = "pearson",
    ci: float = 0.95,
    n_resamples: int = 2000,
    seed: int | None = None,
    min_reliability: float = 0.5,
    groups: str | None = None,
    bootstrap: bool = True,
) -> pd.DataFrame:
    """Unit-level correlations between every pair of measurement methods, optionally disattenuated.

    Parameters
    ----------
    data : pandas.DataFrame
        Long table, one score per (unit, method), e.g. per item: the implicit SC, the mean logprob score and the
        embedding score.
    units : str
        Column of the units correlated over (e.g. ``item_id``).
    methods : str
        Column naming the measurement method (e.g. ``method``); at least two levels.
    scores : str
        Numeric score column. Units missing under a method are left out of that pair only.
    reliabilities : dict, optional
        Reliability of each method (keys = method levels) for the Spearman (1904) correction.
    method, ci, n_resamples, seed, bootstrap
        As in :func:`correlation_ci`.
    min_reliability : float
        As in :func:`disattenuate`.
    groups : str, optional
        Column giving each unit's group (e.g. ``dimension``; one value per unit): the correlations are then
        within group (:func:`correlation_ci` ``groups``; needs ``bootstrap=False``).

    Returns
    -------
    pandas.DataFrame
        Two rows per method pair (one, ``fisher_z``, when ``bootstrap`` is False; the :func:`correlation_ci`
        columns: ``x``, ``y``, ``method``, ``n``, ``r``, ``p_value``, ``interval``, ``kind``, ``ci_low``,
        ``ci_high``) plus ``n_groups``, ``r_disattenuated``, ``ci_low_disattenuated``, ``ci_high_disattenuated``,
        ``flagged`` and ``reason`` (NaN / False / "" without ``reliabilities``).

    Notes
    -----
    Campbell & Fiske's (1959) convergent validity [1]_ at the unit level; each pair is :func:`correlation_ci`
    (pooled within ``groups`` when given, Bland & Altman 1995), corrected by :func:`disattenuate`.

    References
    ----------
    .. [1] Campbell, D. T., & Fiske, D. W. (1959). Convergent and discriminant validation by the
       multitrait-multimethod matrix. Psychological Bulletin 56, 81-105.

    Examples
    --------
    >>> df = pd.DataFrame({"item": list(range(6)) * 2, "method": ["implicit"] * 6 + ["logprob"] * 6,
    ...                    "score": [0.9, 0.7, 0.8, 0.4, 0.6, 0.3, 1.1, 0.8, 0.9, 0.1, 0.5, 0.0]})
    >>> out = convergent_validity(df, units="item", methods="method", scores="score",
    ...                           reliabilities={"implicit": 0.8, "logprob": 0.9}, seed=0)
    >>> out[["x", "y", "r", "r_disattenuated", "flagged"]].iloc[[0]].round(3)
              x        y      r  r_disattenuated  flagged
    0  implicit  logprob  0.994            1.172     True
    """
    wide = to_wide(data, rows=units, columns=methods, values=scores, where="convergent_validity", allow_missing=True)
    levels = list(wide.columns)
    if len(levels) < 2:
        raise ValueError(f"convergent_validity: needs at least 2 methods in column {methods!r}, found {levels}")
    if groups is not None:
        check_columns(data, [groups], "convergent_validity")
        if groups in levels:
            raise ValueError(f"convergent_validity: groups column {groups!r} is also a level of {methods!r}")
        per_unit = data.groupby(units, observed=True, sort=False)[groups].nunique(dropna=False)
        if (per_unit > 1).any():
            raise ValueError(f"convergent_validity: some {units!r} lie in more than one {groups!r}; one per unit")
        wide = wide.assign(**{groups: data.drop_duplicates(units).set_index(units)[groups].reindex(wide.index)})
    if reliabilities is not None:
        missing = [m for m in levels if m not in reliabilities]
        if missing:
            raise ValueError(f"convergent_validity: reliabilities lack methods {missing}; give one per method")
    frames = []
    for first, second in combinations(levels, 2):
        pair = correlation_ci(
            wide,
            x=first,
            y=second,
            method=method,
            ci=ci,
            n_resamples=n_resamples,
            seed=seed,
            groups=groups,
            bootstrap=bootstrap,
        )
        pair["n_groups"] = pair.attrs["n_groups"]
        if reliabilities is None:
            pair["r_disattenuated"] = pair["ci_low_disattenuated"] = pair["ci_high_disattenuated"] = np.nan
            pair["flagged"], pair["reason"] = False, ""
        else:
            fix = disattenuate(
                pair["r"].fillna(0).to_numpy(),
                reliabilities[first],
                reliabilities[second],
                ci_low=pair["ci_low"].to_numpy(),
                ci_high=pair["ci_high"].to_numpy(),
                min_reliability=min_reliability,
            )
            pair["r_disattenuated"] = np.where(pair["r"].isna(), np.nan, fix["r_disattenuated"])
            pair["ci_low_disattenuated"] = fix["ci_low"].to_numpy()
            pair["ci_high_disattenuated"] = fix["ci_high"].to_numpy()
            pair["flagged"], pair["reason"] = fix["flagged"].to_numpy(), fix["reason"].to_numpy()
        frames.append(pair)
    out = pd.concat(frames, ignore_index=True)
    out.attrs.update(
        ci=ci,
        n_resamples=n_resamples if bootstrap else None,
        seed=seed if bootstrap else None,
        bootstrap=bootstrap,
        groups=groups,
        min_reliability=min_reliability,
    )
    return out


def rank_agreement(
    data: pd.DataFrame,
    *,
    estimate: str,
    reference: str,
    ci: float = 0.95,
    n_resamples: int = 2000,
    seed: int | None = None,
    bootstrap: bool = True,
) -> pd.DataFrame:
    """Rank-order agreement (Spearman and Kendall, with intervals) between estimates and reference values.

    Parameters
    ----------
    data : pandas.DataFrame
        One row per unit (e.g. per dimension) with both values.
    estimate : str
        Column of the estimates (e.g. each dimension's LLM effect size).
    reference : str
        Column of the reference values (e.g. the human IAT effect size).
    ci, n_resamples, seed, bootstrap
        As in :func:`correlation_ci`.

    Returns
    -------
    pandas.DataFrame
        Four rows: ``method`` in (``spearman``, ``kendall``) x ``interval`` in (``fisher_z``, ``bootstrap_bca``)
        (two, the ``fisher_z`` ones, when ``bootstrap`` is False),
        with the :func:`correlation_ci` columns (``x``, ``y``, ``method``, ``n``, ``r``, ``p_value``,
        ``interval``, ``kind``, ``ci_low``, ``ci_high``). With few units the intervals are NaN and
        ``attrs["nan_reason"]`` says why; the exact p-value remains.

    Notes
    -----
    Spearman's rho and Kendall's tau-b by scipy, intervals as in :func:`correlation_ci` (Fieller, Hartley &
    Pearson 1957 [1]_ variances for the Fisher z). With n units the smallest attainable two-sided p-value is
    2/n! for both, so fewer than five units cannot reach p < 0.05.

    References
    ----------
    .. [1] Fieller, E. C., Hartley, H. O., & Pearson, E. S. (1957). Tests for rank correlation coefficients. I.
       Biometrika 44, 470-481.

    Examples
    --------
    >>> df = pd.DataFrame({"llm": [0.2, 0.5, 0.1, 0.9, 0.4, 0.7], "human": [0.3, 0.6, 0.2, 1.1, 0.7, 0.5]})
    >>> rank_agreement(df, estimate="llm", reference="human", seed=0)[["method", "r"]].drop_duplicates().round(3)
         method      r
    0  spearman  0.771
    2   kendall  0.600
    """
    frames = [
        correlation_ci(
            data, x=estimate, y=reference, method=m, ci=ci, n_resamples=n_resamples, seed=seed, bootstrap=bootstrap
        )
        for m in ("spearman", "kendall")
    ]
    out = pd.concat(frames, ignore_index=True)
    out.attrs.update(frames[0].attrs)
    out.attrs["nan_reason"] = "; ".join(sorted({f.attrs["nan_reason"] for f in frames if f.attrs["nan_reason"]}))
    return out
