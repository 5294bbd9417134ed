"""Alternate forms that need not share items: each form's share with a cluster-aware interval, their heterogeneity
and their pairwise shifts.

An ICC across forms needs targets observed under every form; real designs often give a wording only some items (a
synonym form with other attribute words, a prompt variant on a subset). These figures use what each form has.
"""

from __future__ import annotations

import warnings
from itertools import combinations

import numpy as np
import pandas as pd
from scipy import stats

from bias_validity.psychometrics._checks import check_ci, check_columns, numeric_values
from bias_validity.psychometrics.clustered import MIN_CLUSTERS
from bias_validity.psychometrics.interval_kind import IntervalKind

__all__ = ["between_form_sd", "form_agreement", "form_shifts", "too_few_clusters"]


#: The largest standard deviation values in [0, 1] can have: the cap of the between-form SD's interval.
_MAX_SD = 0.5


def too_few_clusters(m: int, min_clusters: int = MIN_CLUSTERS) -> str:
    """Why an item-cluster interval over ``m`` clusters is not given ("" when ``m >= min_clusters``).

    Examples
    --------
    >>> too_few_clusters(2)
    '2 items are too few for an item-cluster interval (needs >= 5)'
    >>> too_few_clusters(5)
    ''
    """
    if m >= min_clusters:
        return ""
    items = "1 item is" if m == 1 else f"{m} items are"
    return f"{items} too few for an item-cluster interval (needs >= {min_clusters})"


def _generalised_q(tau2: float, y: np.ndarray, v: np.ndarray) -> float:
    """The generalised Cochran's Q at between-form variance ``tau2``: weights 1 / (v + tau2)."""
    w = 1.0 / (v + tau2)
    mu = float((w * y).sum() / w.sum())
    return float((w * (y - mu) ** 2).sum())


def _q_root(target: float, y: np.ndarray, v: np.ndarray) -> float:
    """The tau^2 >= 0 at which the generalised Q equals ``target`` (0 where Q(0) is already at or below it)."""
    from scipy.optimize import brentq

    if _generalised_q(0.0, y, v) <= target:
        return 0.0
    high = max(float(np.var(y)), float(v.max()), 1e-12)
    while _generalised_q(high, y, v) > target:  # Q falls to 0 as tau^2 grows: a bracket is always found
        high *= 4.0
    return float(brentq(lambda t2: _generalised_q(t2, y, v) - target, 0.0, high, xtol=1e-14, rtol=1e-12))


def between_form_sd(estimates: np.ndarray, variances: np.ndarray, ci: float = 0.95) -> tuple[float, float, float]:
    """Paule-Mandel between-form SD with its Q-profile interval (Viechtbauer 2007), on the share scale.

    Parameters
    ----------
    estimates, variances : array
        Each form's share and the variance of that share (at least two forms).
    ci : float
        Confidence level of the interval.

    Returns
    -------
    tuple of float
        ``(tau, low, high)``: tau is the square root of the tau^2 at which the generalised Q equals its degrees of
        freedom k - 1 (Paule & Mandel 1982), the interval the square roots of the tau^2 at which it equals the
        chi-square(k - 1) quantiles 1 - alpha/2 (lower end) and alpha/2 (upper end), alpha = 1 - ci, each 0 where
        Q(0) already lies below the quantile; the upper end is capped at 0.5, the largest SD shares in [0, 1] can
        have.

    Examples
    --------
    >>> tau, low, high = between_form_sd(np.array([0.8, 0.2]), np.array([0.004, 0.004]))
    >>> round(tau, 2), round(low, 2), high
    (0.42, 0.18, 0.5)
    """
    check_ci(ci)
    y, v = np.asarray(estimates, dtype=float), np.asarray(variances, dtype=float)
    df = len(y) - 1
    alpha = 1 - ci
    tau2 = _q_root(df, y, v)
    low = _q_root(float(stats.chi2.ppf(1 - alpha / 2, df)), y, v)
    high = _q_root(float(stats.chi2.ppf(alpha / 2, df)), y, v)
    return float(np.sqrt(tau2)), float(np.sqrt(low)), min(float(np.sqrt(high)), _MAX_SD)


def _wilson(p: float, n: float, z: float) -> tuple[float, float]:
    """Wilson score limits for a share ``p`` of ``n`` (possibly fractional, an effective sample size)."""
    centre = (p + z**2 / (2 * n)) / (1 + z**2 / n)
    half = z / (1 + z**2 / n) * np.sqrt(p * (1 - p) / n + z**2 / (4 * n**2))
    return max(centre - half, 0.0), min(centre + half, 1.0)


def _binomial(k: float, n: float) -> float:
    """Binomial variance of the share at the shrunk estimate (k + 0.5) / (n + 1): positive even at 0/n or n/n."""
    shrunk = (k + 0.5) / (n + 1)
    return shrunk * (1 - shrunk) / n


def _cluster_counts(
    data: pd.DataFrame, forms: str, clusters: str, successes: str, trials: str, where: str
) -> pd.Series:
    """Successes ``k`` and trials ``n`` summed per (form, cluster), after checking the counts."""
    check_columns(data, [forms, clusters, successes, trials], where)
    k = numeric_values(data, successes, where)
    n = numeric_values(data, trials, where)
    if (n <= 0).any() or (k < 0).any() or (k > n).any():
        raise ValueError(f"{where}: every row needs 0 <= {successes} <= {trials} and {trials} > 0")
    frame = pd.DataFrame(
        {"form": data[forms].astype(str).to_numpy(), "cluster": data[clusters].astype(str).to_numpy(), "k": k, "n": n}
    )
    return frame.groupby(["form", "cluster"], sort=True)[["k", "n"]].sum()


def form_agreement(
    data: pd.DataFrame, *, forms: str, clusters: str, successes: str, trials: str, ci: float = 0.95
) -> pd.DataFrame:
    """Each form's share of successes with a cluster-robust interval, and a test of heterogeneity across forms.

    Parameters
    ----------
    data : pandas.DataFrame
        One row per (form, cluster) or finer, with counts: e.g. one row per template x item x order cell.
    forms : str
        Column naming the form (e.g. ``template_id``).
    clusters : str
        Column naming the cluster answers are correlated within (e.g. ``item_id``); forms may hold different
        clusters.
    successes, trials : str
        Count columns (e.g. ``k`` stereotype-consistent answers of ``n``).
    ci : float
        Confidence level.

    Returns
    -------
    pandas.DataFrame
        One row per form: ``form``, ``estimate`` (the share), ``ci_low``, ``ci_high``, ``variance`` (of the
        share, cluster-robust), ``design_effect``, ``n_clusters``, ``n`` (trials). ``attrs``: ``ci``, ``interval``
        (``IntervalKind.WILSON_DESIGN_EFFECT``), ``q``, ``df``, ``p_value`` (Cochran's Q test that every form has
        the same share), ``tau`` (Paule-Mandel between-form standard deviation of the share) with ``tau_ci_low``,
        ``tau_ci_high`` (its Q-profile interval at ``ci``), ``i2`` (Higgins-Thompson I^2), all NaN with fewer than
        two forms, and ``nan_reason`` ("" unless the test could not be computed).

    Notes
    -----
    Within a form with :math:`m` clusters of :math:`k_i` successes in :math:`n_i` trials, the share is
    :math:`p = \\sum k_i / \\sum n_i` and its variance the linearised (ratio-estimator) cluster variance
    :math:`\\frac{m}{m-1} \\sum (k_i - p n_i)^2 / (\\sum n_i)^2` (Kish 1965 [1]_), floored at the binomial variance of
    the shrunk share :math:`\\tilde p = (k + 0.5) / (n + 1)` so that a form answered all one way, or one with a
    single cluster, still has a positive variance. The interval is the Wilson score interval [2]_ computed on the
    effective sample size :math:`n / \\text{deff}` with deff the ratio of that variance to the binomial one (Kish's
    design effect [1]_; Wilson's interval on the effective n, not Clopper-Pearson's). Heterogeneity: Cochran's Q
    [3]_ with inverse-variance weights (statsmodels' ``combine_effects``), :math:`I^2 = \\max(0, (Q - df) / Q)`
    [5]_, and the between-form SD :math:`\\tau`: the Paule-Mandel estimate [4]_ (the :math:`\\tau^2` at which the
    generalised Q equals its df) with the Q-profile interval of Viechtbauer (2007) [6]_ (:func:`between_form_sd`).
    With few items per form the within-form variances are themselves noisy and Q runs high, so :math:`\\tau` is a
    descriptive figure: read its interval, not its point (a DerSimonian-Laird point above 0.05 came out in 35% of
    null 4-form x 5-item simulations). Q treats the forms as independent samples, so where they share items it errs
    towards finding no heterogeneity (:func:`form_shifts` pairs the shared items). The cluster variance is written
    here because no library computes it on these counts. Validated on simulated forms with
    known shares (coverage) and on forms answered all one way.

    References
    ----------
    .. [1] Kish, L. (1965). Survey Sampling. Wiley, section 6.3.
    .. [2] Wilson, E. B. (1927). Probable inference, the law of succession, and statistical inference. Journal of
       the American Statistical Association 22, 209-212.
    .. [3] Cochran, W. G. (1954). The combination of estimates from different experiments. Biometrics 10,
       101-129.
    .. [4] Paule, R. C., & Mandel, J. (1982). Consensus values and weighting factors. Journal of Research of the
       National Bureau of Standards 87, 377-385.
    .. [5] Higgins, J. P. T., & Thompson, S. G. (2002). Quantifying heterogeneity in a meta-analysis. Statistics
       in Medicine 21, 1539-1558.
    .. [6] Viechtbauer, W. (2007). Confidence intervals for the amount of heterogeneity in meta-analysis.
       Statistics in Medicine 26, 37-52.

    Examples
    --------
    Two wordings over different items, one answered consistently far more often:

    >>> cells = pd.DataFrame({"form": ["A"] * 4 + ["B"] * 4, "item": ["1", "2", "3", "4", "5", "6", "7", "8"],
    ...                       "k": [8, 9, 7, 8, 2, 3, 1, 2], "n": [10] * 8})
    >>> out = form_agreement(cells, forms="form", clusters="item", successes="k", trials="n")
    >>> out[["form", "estimate", "n_clusters", "n"]].to_dict("records")
    [{'form': 'A', 'estimate': 0.8, 'n_clusters': 4, 'n': 40}, {'form': 'B', 'estimate': 0.2, 'n_clusters': 4, 'n': 40}]
    >>> bool(out.attrs["p_value"] < 0.001), round(out.attrs["tau"], 2), bool(out.attrs["tau_ci_low"] > 0.1)
    (True, 0.42, True)
    """
    from statsmodels.stats.meta_analysis import combine_effects

    check_ci(ci)
    counts = _cluster_counts(data, forms, clusters, successes, trials, "form_agreement")
    z = stats.norm.ppf(0.5 + ci / 2)
    rows = []
    for form, g in counts.groupby(level="form", sort=True):
        k, n, m = g["k"].to_numpy(), g["n"].to_numpy(), len(g)
        p = k.sum() / n.sum()
        binomial = _binomial(k.sum(), n.sum())
        cluster = m / (m - 1) * ((k - p * n) ** 2).sum() / n.sum() ** 2 if m > 1 else 0.0
        variance = max(cluster, binomial)
        deff = variance / binomial
        low, high = _wilson(p, n.sum() / deff, z)
        rows.append(
            dict(
                form=form,
                estimate=p,
                ci_low=low,
                ci_high=high,
                variance=variance,
                design_effect=deff,
                n_clusters=m,
                n=int(n.sum()),
            )
        )
    out = pd.DataFrame(rows)
    out.attrs.update(
        ci=ci,
        interval=IntervalKind.WILSON_DESIGN_EFFECT,
        q=np.nan,
        df=0,
        p_value=np.nan,
        tau=np.nan,
        tau_ci_low=np.nan,
        tau_ci_high=np.nan,
        i2=np.nan,
    )
    if len(out) < 2:
        out.attrs["nan_reason"] = f"needs >= 2 forms, found {len(out)}"
        return out
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # statsmodels' random-effects SEs when tau^2 is 0
        res = combine_effects(out["estimate"].to_numpy(), out["variance"].to_numpy(), method_re="dl")
        test = res.test_homogeneity()
    q, df = float(test.statistic), int(test.df)
    tau, tau_low, tau_high = between_form_sd(out["estimate"].to_numpy(), out["variance"].to_numpy(), ci)
    out.attrs.update(
        q=q,
        df=df,
        p_value=float(test.pvalue),
        tau=tau,
        tau_ci_low=tau_low,
        tau_ci_high=tau_high,
        i2=max(0.0, (q - df) / q) if q > 0 else 0.0,
        nan_reason="",
    )
    return out


def form_shifts(
    data: pd.DataFrame,
    *,
    forms: str,
    clusters: str,
    successes: str,
    trials: str,
    ci: float = 0.95,
    min_clusters: int = MIN_CLUSTERS,
) -> pd.DataFrame:
    """Every pair of forms' difference in share, with a cluster-robust interval that pairs the clusters they share.

    Parameters
    ----------
    data : pandas.DataFrame
        Counts as for :func:`form_agreement`.
    forms, clusters, successes, trials : str
        Column names as for :func:`form_agreement`.
    ci : float
        Confidence level.
    min_clusters : int
        Below this many clusters (asked under either form of a pair) the pair's interval is NaN with the reason
        (the difference is still given); default :data:`bias_validity.psychometrics.clustered.MIN_CLUSTERS`, the
        floor of every item-cluster interval of this package.

    Returns
    -------
    pandas.DataFrame
        One row per pair of forms (in sorted order): ``form_a``, ``form_b``, ``difference`` (share of a minus share
        of b), ``ci_low``, ``ci_high``, ``shared_clusters`` (clusters asked under both), ``clusters`` (asked under
        either: the clusters the interval rests on), ``n``, ``nan_reason`` ("" unless the interval is NaN).
        ``attrs``: ``ci`` and ``interval`` (``IntervalKind.WALD_CLUSTER``).

    Notes
    -----
    With each form's share a ratio estimator :math:`p_f = \\sum_i k_{fi} / N_f`, the linearised residual of cluster
    :math:`i` is :math:`e_{fi} = (k_{fi} - p_f n_{fi}) / N_f` (0 where the form did not ask it), and over the
    :math:`m` clusters either form asked, :math:`\\mathrm{Var}(p_a - p_b) = \\frac{m}{m-1} \\sum_i (e_{ai} - e_{bi})^2`:
    the cluster-robust variance of two correlated proportions from clustered data (Obuchowski 1998 [1]_). Clusters
    both forms share enter paired, so their item effects cancel; clusters of one form only enter as in two
    independent samples. A form asked on a single cluster adds the binomial variance of its shrunk share (as in
    :func:`form_agreement`), and so do both forms when every answer is alike (a zero variance otherwise). The
    interval is the Wald interval with Student's t on m - 1 degrees of freedom (the usual guard of a
    cluster-robust interval against few clusters, Cameron & Miller 2015 [2]_), clipped to [-1, 1]. The closed
    form equals statsmodels' WLS of the cell shares on the form with cluster-robust covariance (checked in the
    tests), written out here so that it works on the counts and handles those edge cases. With fewer than
    ``min_clusters`` clusters the variance rests on too few items to mean much (2 items: 1 degree of freedom, and an
    interval that is either [-1, 1] or spuriously narrow), so none is given. Validated by coverage on simulated forms
    with shared and with disjoint items.

    References
    ----------
    .. [1] Obuchowski, N. A. (1998). On the comparison of correlated proportions for clustered data. Statistics in
       Medicine 17, 1495-1507.
    .. [2] Cameron, A. C., & Miller, D. L. (2015). A practitioner's guide to cluster-robust inference. Journal of
       Human Resources 50, 317-372.

    Examples
    --------
    Two wordings of the same five items; the second is answered consistently less often on every item:

    >>> cells = pd.DataFrame({"form": ["A"] * 5 + ["B"] * 5, "item": ["1", "2", "3", "4", "5"] * 2,
    ...                       "k": [10, 9, 2, 1, 6, 8, 7, 0, 0, 4], "n": [10] * 10})
    >>> out = form_shifts(cells, forms="form", clusters="item", successes="k", trials="n")
    >>> out[["form_a", "form_b", "difference", "shared_clusters"]].round(3).to_dict("records")
    [{'form_a': 'A', 'form_b': 'B', 'difference': 0.18, 'shared_clusters': 5}]
    >>> bool(out["ci_low"].iloc[0] > 0)
    True

    Two items give the difference and no interval:

    >>> two = form_shifts(cells[cells["item"] <= "2"], forms="form", clusters="item", successes="k", trials="n")
    >>> two[["difference", "ci_low", "nan_reason"]].round(3).to_dict("records")
    [{'difference': 0.2, 'ci_low': nan, 'nan_reason': '2 items are too few for an item-cluster interval (needs >= 5)'}]
    """
    check_ci(ci)
    counts = _cluster_counts(data, forms, clusters, successes, trials, "form_shifts")
    k, n = counts["k"].unstack("form", fill_value=0.0), counts["n"].unstack("form", fill_value=0.0)
    rows = []
    for a, b in combinations(sorted(k.columns), 2):
        asked = (n[a] > 0) | (n[b] > 0)
        ka, na, kb, nb = k.loc[asked, a], n.loc[asked, a], k.loc[asked, b], n.loc[asked, b]
        pa, pb = ka.sum() / na.sum(), kb.sum() / nb.sum()
        e = (ka - pa * na) / na.sum() - (kb - pb * nb) / nb.sum()
        m = int(asked.sum())
        variance = m / (m - 1) * float((e**2).sum()) if m > 1 else 0.0
        # a form asked on one cluster has no between-cluster spread to estimate: its binomial variance stands in
        variance += sum(_binomial(kf.sum(), nf.sum()) for kf, nf in ((ka, na), (kb, nb)) if (nf > 0).sum() < 2)
        if variance == 0:  # every answer alike under both forms
            variance = _binomial(ka.sum(), na.sum()) + _binomial(kb.sum(), nb.sum())
        d, half = pa - pb, stats.t.ppf(0.5 + ci / 2, max(m - 1, 1)) * np.sqrt(variance)
        why = too_few_clusters(m, min_clusters)
        rows.append(
            dict(
                form_a=a,
                form_b=b,
                difference=d,
                ci_low=np.nan if why else max(d - half, -1.0),
                ci_high=np.nan if why else min(d + half, 1.0),
                shared_clusters=int(((n[a] > 0) & (n[b] > 0)).sum()),
                clusters=m,
                n=int(na.sum() + nb.sum()),
                nan_reason=why,
            )
        )
    columns = ["form_a", "form_b", "difference", "ci_low", "ci_high", "shared_clusters", "clusters", "n", "nan_reason"]
    out = pd.DataFrame(rows, columns=columns)
    out.attrs.update(ci=ci, interval=IntervalKind.WALD_CLUSTER)
    return out
