"""Closed forms for planning a study: the clustered design effect, t-interval half-widths and the power to clear a
threshold, two one-sided tests, Bonett's ICC sample size, Fisher-z correlation sample sizes and the delta-method
variance of a ratio.

Each function is a published formula on plain numbers; :mod:`bias_validity.analyses.plan` composes them with the
variance components of a pilot study. Where a library computes the figure (the noncentral-t power of a one-sided t
test: ``statsmodels.stats.power.TTestPower``; normal and t quantiles: ``scipy.stats``) it is called, not rewritten.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

__all__ = [
    "CHECK_REPLICATIONS",
    "PlanTargets",
    "Assumptions",
    "design_effect",
    "cluster_mean_variance",
    "c4",
    "t_half_width",
    "power_to_clear",
    "tost_power",
    "icc_sample_size",
    "icc_interval_width",
    "fisher_z_sample_size",
    "fisher_z_interval",
    "fisher_z_power",
    "spearman_from_pearson",
    "fisher_z_half_width",
    "fieller_interval",
    "fieller_half_width",
    "ratio_variance",
]


#: Studies a plan's simulation check draws per row by default (the issue's floor for a check of 80% power: the
#: share decided has a standard error of about 0.03 there).
CHECK_REPLICATIONS = 200


@dataclass(frozen=True)
class PlanTargets:
    """What a plan aims for (:func:`bias_validity.analyses.plan.plan`).

    Attributes
    ----------
    half_width : float
        Half-width of the SC and gap intervals (0.05: one answer in twenty, the gap's ROPE).
    power : float
        Chance that the planned design decides a question where the truth is as assumed (0.8).
    icc_width : float
        Full width of the item-score ICC intervals (0.2, the width of Bonett's 2002 worked example; shown, never
        deciding).
    max_reps : int
        Most repetitions per session searched.
    max_items : int, optional
        Items per dimension a design may use before it needs new stimuli; by default the packaged pool of the
        dimension where the dimension is packaged, else no limit. Designs within it are preferred.

    Examples
    --------
    >>> PlanTargets(power=1.2)
    Traceback (most recent call last):
    ...
    ValueError: targets: power must be a number strictly between 0 and 1, got 1.2
    """

    half_width: float = 0.05
    power: float = 0.8
    icc_width: float = 0.2
    max_reps: int = 10
    max_items: int | None = None

    def __post_init__(self) -> None:
        for name in ("half_width", "power", "icc_width"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < 1:
                raise ValueError(f"targets: {name} must be a number strictly between 0 and 1, got {value!r}")
        if isinstance(self.max_reps, bool) or not isinstance(self.max_reps, int) or self.max_reps < 1:
            raise ValueError(f"targets: max_reps must be an integer >= 1, got {self.max_reps!r}")
        if self.max_items is not None and (not isinstance(self.max_items, int) or self.max_items < 5):
            raise ValueError(f"targets: max_items must be an integer >= 5, got {self.max_items!r}")


@dataclass(frozen=True)
class Assumptions:
    """A study stated instead of piloted: the truths a plan assumes, on the logit scale of a crossed design.

    An answer is consistent with probability ``expit(logit(sc[method]) + u_item + v_wording + w_item,wording +
    e_item,session)``, as :func:`bias_validity.simulate.simulate_responses` draws it (which has no wording terms).

    Attributes
    ----------
    sc : mapping
        The SC of an average item per sampled method (e.g. ``{"implicit": 0.7, "explicit": 0.4}``).
    item_sd : float
        SD of the items' logit effects.
    template_sd : float
        SD of the wordings' logit effects: the wordings are set at the expected order statistics of that normal
        (Blom 1958), so their shifts are those a typical set of wordings of that spread shows.
    item_template_sd, item_session_sd : float
        SD of the item x wording and item x session logit effects (items that move with the wording or the day).
    item_corr : float
        Correlation of an item's effects between methods.
    score_corr : float, optional
        Correlation of the implicit item effects with the logprob and embedding scores (None: no Q2 rows).
    wordings, sessions : int
        Wordings per sampled method (explicit: one) and sessions of the design (test-retest needs 2).
    dimensions, models : int
        How many of each the study asks (they multiply the answers; Q2 pools a model's dimensions).

    Examples
    --------
    >>> Assumptions(sc={"implicit": 1.0})
    Traceback (most recent call last):
    ...
    ValueError: assumptions: sc implicit=1.0 must lie strictly between 0 and 1
    """

    sc: Mapping[str, float]
    item_sd: float = 1.0
    template_sd: float = 0.0
    item_template_sd: float = 0.0
    item_session_sd: float = 0.0
    item_corr: float = 1.0
    score_corr: float | None = 0.5
    wordings: int = 3
    sessions: int = 2
    dimensions: int = 1
    models: int = 1

    def __post_init__(self) -> None:
        if not isinstance(self.sc, Mapping) or not self.sc:
            raise ValueError("assumptions: sc needs at least one method's SC, e.g. {'implicit': 0.7}")
        for method, value in self.sc.items():
            if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < 1:
                raise ValueError(f"assumptions: sc {method}={value!r} must lie strictly between 0 and 1")
        for name in ("item_sd", "template_sd", "item_template_sd", "item_session_sd"):
            if not getattr(self, name) >= 0:
                raise ValueError(f"assumptions: {name} must be >= 0, got {getattr(self, name)!r}")
        if not -1 <= self.item_corr <= 1:
            raise ValueError(f"assumptions: item_corr must lie in [-1, 1], got {self.item_corr!r}")
        if self.score_corr is not None and not -1 < self.score_corr < 1:
            raise ValueError(f"assumptions: score_corr must lie strictly between -1 and 1, got {self.score_corr!r}")
        for name in ("wordings", "sessions", "dimensions", "models"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"assumptions: {name} must be an integer >= 1, got {value!r}")


def _check_ci(ci: float) -> None:
    """:func:`bias_validity.psychometrics._checks.check_ci`, imported when called: this module stays importable
    without pandas or scipy, so the command line can read :class:`PlanTargets`'s defaults for its help."""
    from bias_validity.psychometrics._checks import check_ci as check

    check(ci)


def _check_power(power: float) -> None:
    if isinstance(power, bool) or not isinstance(power, int | float) or not 0 < power < 1:
        raise ValueError(f"power must be a number strictly between 0 and 1 (e.g. 0.8), got {power!r}")


def design_effect(cluster_size: float, icc: float) -> float:
    """Kish's design effect of cluster sampling: ``1 + (m - 1) * icc`` for clusters of ``m`` answers.

    Parameters
    ----------
    cluster_size : float
        Answers per cluster (per item), ``m >= 1``.
    icc : float
        Intraclass correlation of the answers within a cluster (the share of their variance that lies between
        clusters), in [0, 1].

    Returns
    -------
    float
        The factor by which clustering multiplies the variance of a mean over what independent answers would give.

    Notes
    -----
    :math:`\\mathrm{deff} = 1 + (m - 1)\\rho` (Kish 1965 [1]_, sec. 5.4). For a share of answers whose per-cluster
    probabilities vary with variance :math:`\\sigma_b^2` around :math:`p`, :math:`\\rho = \\sigma_b^2 / (p(1-p))`,
    and ``design_effect`` times :math:`p(1-p)/(m G)` is the variance of the mean over :math:`G` clusters
    (:func:`cluster_mean_variance`); the tests check it against the exact variance of scipy's beta-binomial.

    References
    ----------
    .. [1] Kish, L. (1965). Survey Sampling. Wiley.

    Examples
    --------
    Clusters of 20 answers with an ICC of 0.05 (20 - 1 = 19; 19 x 0.05 = 0.95):

    >>> round(design_effect(20, 0.05), 10)
    1.95
    """
    if cluster_size < 1:
        raise ValueError(f"design_effect: cluster_size must be >= 1, got {cluster_size!r}")
    if not 0 <= icc <= 1:
        raise ValueError(f"design_effect: icc must lie in [0, 1], got {icc!r}")
    return float(1 + (cluster_size - 1) * icc)


def cluster_mean_variance(between: float, within: float, *, clusters: float, cluster_size: float) -> float:
    """Variance of a mean of ``clusters`` clusters of ``cluster_size`` answers each: ``(between + within / m) / G``.

    Parameters
    ----------
    between : float
        Variance of the clusters' true means (for items: the between-item variance of their SCs).
    within : float
        Variance of one answer around its cluster's mean (for 0/1 answers: the mean of ``p_i (1 - p_i)``).
    clusters, cluster_size : float
        ``G`` clusters, ``m`` answers per cluster.

    Returns
    -------
    float
        :math:`(\\sigma_b^2 + \\sigma_w^2 / m) / G`, which equals :math:`(\\sigma_b^2 + \\sigma_w^2)
        \\,\\mathrm{deff}/(m G)` with :func:`design_effect` at :math:`\\rho = \\sigma_b^2 / (\\sigma_b^2 +
        \\sigma_w^2)`.

    Notes
    -----
    The between-cluster variance enters once per cluster, the within-cluster variance once per answer: the
    variance of a two-stage cluster mean (Kish 1965 [1]_, sec. 5.4; Donner & Klar 2000 [2]_, ch. 2).

    References
    ----------
    .. [1] Kish, L. (1965). Survey Sampling. Wiley.
    .. [2] Donner, A., & Klar, N. (2000). Design and Analysis of Cluster Randomization Trials in Health Research.
       Arnold.

    Examples
    --------
    >>> round(cluster_mean_variance(0.01, 0.2, clusters=10, cluster_size=20), 6)
    0.002
    """
    if clusters < 1 or cluster_size < 1:
        raise ValueError(
            f"cluster_mean_variance: clusters and cluster_size must be >= 1, got {clusters}, {cluster_size}"
        )
    return float((between + within / cluster_size) / clusters)


def c4(n: float) -> float:
    """The bias factor of a sample standard deviation: ``E[s] = c4(n) sigma`` for ``n`` normal draws.

    Parameters
    ----------
    n : float
        Draws the standard deviation is computed from, ``n >= 2``.

    Returns
    -------
    float
        :math:`c_4(n) = \\sqrt{2/(n-1)}\\,\\Gamma(n/2)/\\Gamma((n-1)/2)`, below 1 and rising towards it with ``n``.

    Notes
    -----
    The mean of the chi distribution with ``n - 1`` degrees of freedom, scaled by :math:`1/\\sqrt{n-1}`
    (ASTM E2587 [1]_; 0.9400 at n = 5). Computed from log-gammas so large ``n`` does not overflow.

    References
    ----------
    .. [1] ASTM E2587-16 (2016). Standard Practice for Use of Control Charts in Statistical Process Control.
       ASTM International.

    Examples
    --------
    >>> round(c4(5), 4)
    0.94
    """
    from scipy.special import gammaln

    if n < 2:
        raise ValueError(f"c4: needs n >= 2, got {n!r}")
    return float(np.sqrt(2 / (n - 1)) * np.exp(gammaln(n / 2) - gammaln((n - 1) / 2)))


def t_half_width(sd: float, n: float, *, ci: float = 0.95, expected: bool = True) -> float:
    """Half-width of the t interval of a mean of ``n`` units whose values have standard deviation ``sd``.

    Parameters
    ----------
    sd : float
        Standard deviation of one unit's value (for items: of an item's observed SC).
    n : float
        Units (items); ``n - 1`` degrees of freedom.
    ci : float
        Interval level.
    expected : bool
        Multiply by :func:`c4`, so the figure is the half-width expected when ``sd`` is estimated from the ``n``
        units (as the item-cluster intervals do); False gives the half-width at the true ``sd``.

    Returns
    -------
    float
        :math:`t_{(1+ci)/2,\\,n-1} \\cdot [c_4(n)] \\cdot sd / \\sqrt{n}`.

    Notes
    -----
    The one-sample t interval (Student 1908 [1]_). With ``expected`` the estimated SD's mean :math:`c_4(n)\\sigma`
    replaces :math:`\\sigma`, so the figure is the half-width an analysis of ``n`` units reports on average.

    References
    ----------
    .. [1] Student (1908). The probable error of a mean. Biometrika 6, 1-25.

    Examples
    --------
    >>> round(t_half_width(0.2, 16, expected=False), 4)  # 2.1314 x 0.2 / 4
    0.1066
    """
    from scipy.special import stdtrit

    _check_ci(ci)
    if n < 2:
        raise ValueError(f"t_half_width: needs n >= 2 units, got {n!r}")
    factor = c4(n) if expected else 1.0
    return float(stdtrit(n - 1, 0.5 + ci / 2) * factor * sd / np.sqrt(n))


def power_to_clear(distance: float, sd: float, n: float, *, ci: float = 0.95) -> float:
    """Chance that a two-sided ``ci`` t interval lies wholly beyond a threshold the truth clears by ``distance``.

    Parameters
    ----------
    distance : float
        How far the true mean lies beyond the threshold, towards the side the interval must clear (> 0 to have a
        chance above the one-sided level).
    sd : float
        Standard deviation of one unit's value.
    n : float
        Units; the t interval has ``n - 1`` degrees of freedom.
    ci : float
        Level of the two-sided interval: its bound on one side is a one-sided test at ``(1 - ci) / 2``.

    Returns
    -------
    float
        The noncentral-t power of that one-sided one-sample t test, effect size ``distance / sd``: the figure of
        ``statsmodels.stats.power.TTestPower().power(..., alternative="larger")`` (the tests check they agree),
        computed here with scipy's noncentral-t ufunc because planning calls it thousands of times.

    Notes
    -----
    The interval's bound lies beyond the threshold exactly when the one-sided t test of the threshold at
    :math:`(1 - ci)/2` rejects; its power is :math:`1 - F_{nct}(t_{crit};\\, n - 1,\\, \\delta\\sqrt{n}/\\sigma)`
    (Cohen 1988 [1]_, ch. 2).

    References
    ----------
    .. [1] Cohen, J. (1988). Statistical Power Analysis for the Behavioral Sciences (2nd ed.). Erlbaum.

    Examples
    --------
    >>> round(power_to_clear(0.1, 0.2, 34), 3)
    0.808
    """
    from scipy.special import nctdtr, stdtrit

    _check_ci(ci)
    if sd <= 0:
        return 1.0 if distance > 0 else 0.0
    critical = stdtrit(n - 1, 0.5 + ci / 2)
    return float(1.0 - nctdtr(n - 1, distance / sd * np.sqrt(n), critical))


def tost_power(shift: float, sd: float, n: float, *, limit: float, ci: float = 0.95) -> float:
    """Power of two one-sided tests to show a mean shift lies within +/- ``limit``, on a two-sided ``ci`` interval.

    Parameters
    ----------
    shift : float
        The true shift (a paired mean difference).
    sd : float
        Standard deviation of one unit's difference.
    n : float
        Paired units (items); ``n - 1`` degrees of freedom.
    limit : float
        The equivalence limit.
    ci : float
        Level of the interval the two tests read (each one-sided test at ``(1 - ci) / 2``, Schuirmann 1987 [1]_).

    Returns
    -------
    float
        :math:`\\max(0, P_+ + P_- - 1)`, :math:`P_\\pm` the power of each one-sided test
        (:func:`power_to_clear` with distances ``limit - shift`` and ``limit + shift``).

    Notes
    -----
    Both tests must reject, so the joint power is at least :math:`P_+ + P_- - 1` (Bonferroni). This is the usual
    approximation (Phillips 1990 [2]_): exact when one test's power is near one, a lower bound otherwise, and
    within a few points of the simulated TOST power over the range planning uses (tests).

    References
    ----------
    .. [1] Schuirmann, D. J. (1987). A comparison of the two one-sided tests procedure and the power approach for
       assessing the equivalence of average bioavailability. J Pharmacokinet Biopharm 15, 657-680.
    .. [2] Phillips, K. F. (1990). Power of the two one-sided tests procedure in bioequivalence. J Pharmacokinet
       Biopharm 18, 137-144.

    Examples
    --------
    >>> round(tost_power(0.0, 0.2, 40, limit=0.1), 3)
    0.739
    """
    if limit <= 0:
        raise ValueError(f"tost_power: limit must be > 0, got {limit!r}")
    upper = power_to_clear(limit - shift, sd, n, ci=ci)
    lower = power_to_clear(limit + shift, sd, n, ci=ci)
    return max(0.0, upper + lower - 1.0)


def icc_sample_size(icc: float, raters: int, width: float, *, ci: float = 0.95) -> float:
    """Targets needed for an ICC interval of full width ``width`` (Bonett 2002), not yet rounded up.

    Parameters
    ----------
    icc : float
        Planning value of the ICC of a single rating, in [0, 1).
    raters : int
        Ratings per target (raters, forms or occasions), >= 2.
    width : float
        Desired full width of the ``ci`` interval.
    ci : float
        Interval level.

    Returns
    -------
    float
        :math:`n = 8 z^2 (1-\\rho)^2 (1+(k-1)\\rho)^2 / (k (k-1) w^2) + 1`, plus :math:`5\\rho` where ``k = 2``
        and :math:`\\rho \\ge 0.7` (Bonett 2002 [1]_, eq. 3 and its note); round up for a sample size.

    Notes
    -----
    Validated against the paper's worked example (k = 4 raters, ICC 0.85, width 0.2: 19.2 targets, as quoted by
    R presize's ``prec_icc``) and statpsych's documented ``size.ci.icc(.05, .70, 3, .2)`` = 68.

    References
    ----------
    .. [1] Bonett, D. G. (2002). Sample size requirements for estimating intraclass correlations with desired
       precision. Statistics in Medicine 21, 1331-1335.

    Examples
    --------
    >>> round(icc_sample_size(0.85, 4, 0.2), 1)
    19.2
    """
    from scipy.special import ndtri

    _check_ci(ci)
    if raters < 2 or not 0 <= icc < 1 or width <= 0:
        raise ValueError(f"icc_sample_size: needs raters >= 2, 0 <= icc < 1, width > 0; got {raters}, {icc}, {width}")
    z = ndtri(0.5 + ci / 2)
    n = 8 * z**2 * (1 - icc) ** 2 * (1 + (raters - 1) * icc) ** 2 / (raters * (raters - 1) * width**2) + 1
    return float(n + (5 * icc if raters == 2 and icc >= 0.7 else 0.0))


def icc_interval_width(icc: float, raters: int, targets: float, *, ci: float = 0.95) -> float:
    """Expected full width of an ICC interval over ``targets`` targets: Bonett's (2002) formula solved for ``w``.

    Parameters
    ----------
    icc : float
        Planning value of the ICC of a single rating, in [0, 1).
    raters : int
        Ratings per target, >= 2.
    targets : float
        Targets rated, > 1.
    ci : float
        Interval level.

    Returns
    -------
    float
        :math:`w = \\sqrt{8 z^2 (1-\\rho)^2 (1+(k-1)\\rho)^2 / (k (k-1) (n - 1))}`.

    Notes
    -----
    The inverse of :func:`icc_sample_size` without its small-k correction (Bonett 2002 [1]_, eq. 3): the
    example's 67.4 targets are statpsych's ``size.ci.icc(.05, .70, 3, .2)`` before rounding up.

    References
    ----------
    .. [1] Bonett, D. G. (2002). Sample size requirements for estimating intraclass correlations with desired
       precision. Statistics in Medicine 21, 1331-1335.

    Examples
    --------
    >>> round(icc_interval_width(0.7, 3, 67.4), 3)
    0.2
    """
    from scipy.special import ndtri

    _check_ci(ci)
    if raters < 2 or targets <= 1:
        raise ValueError(f"icc_interval_width: needs raters >= 2 and targets > 1, got {raters}, {targets}")
    z = ndtri(0.5 + ci / 2)
    return float(
        np.sqrt(8 * z**2 * (1 - icc) ** 2 * (1 + (raters - 1) * icc) ** 2 / (raters * (raters - 1) * (targets - 1)))
    )


def fisher_z_sample_size(
    r: float,
    boundary: float = 0.0,
    *,
    ci: float = 0.95,
    power: float = 0.8,
    variance_factor: float = 1.0,
    groups: int = 1,
) -> float:
    """Units needed for a correlation's ``ci`` interval to clear ``boundary`` with probability ``power`` (Fisher z).

    Parameters
    ----------
    r : float
        Planning value of the correlation.
    boundary : float
        The value the interval must exclude (0: "differs from zero"; a floor such as 0.3 from below).
    ci : float
        Level of the two-sided interval (its bound is a one-sided test at ``(1 - ci) / 2``).
    power : float
        Chance of clearing.
    variance_factor : float
        Variance of Fisher's z times ``n - 3``: 1 for Pearson, 1.06 for Spearman (Fieller, Hartley & Pearson 1957).
    groups : int
        Groups the correlation is pooled within (each centred), costing one degree of freedom each beyond the
        first (the pooled within-group correlation's effective n is ``n - groups + 1``).

    Returns
    -------
    float
        :math:`n = f\\,(z_{(1+ci)/2} + z_{power})^2 / (\\operatorname{atanh} r - \\operatorname{atanh} b)^2 + 2 +
        g` (Lachin 1981 [1]_ for g = 1, f = 1), not rounded; ``inf`` where ``r`` equals ``boundary``.

    Notes
    -----
    Validated against Lachin's worked example (r = 0.4, two-sided 5%, 80% power: 46.7, i.e. 47 pairs) and the
    usual table value of 85 for r = 0.3 (Cohen 1988).

    References
    ----------
    .. [1] Lachin, J. M. (1981). Introduction to sample size determination and power analysis for clinical
       trials. Controlled Clinical Trials 2, 93-113.
    .. [2] Fieller, E. C., Hartley, H. O., & Pearson, E. S. (1957). Tests for rank correlation coefficients. I.
       Biometrika 44, 470-481.

    Examples
    --------
    >>> round(fisher_z_sample_size(0.4), 1)
    46.7
    """
    from scipy.special import ndtri

    _check_ci(ci)
    _check_power(power)
    if not (-1 < r < 1 and -1 < boundary < 1):
        raise ValueError(f"fisher_z_sample_size: r and boundary must lie in (-1, 1), got {r}, {boundary}")
    distance = abs(np.arctanh(r) - np.arctanh(boundary))
    if distance == 0:
        return float("inf")
    z = ndtri(0.5 + ci / 2) + ndtri(power)
    return float(variance_factor * z**2 / distance**2 + 2 + groups)


def fisher_z_interval(
    r: float, n: float, *, ci: float = 0.95, variance_factor: float = 1.0, groups: int = 1
) -> tuple[float, float]:
    """The Fisher-z interval of a correlation ``r`` over ``n`` units pooled within ``groups`` groups.

    Parameters
    ----------
    r : float
        The observed correlation.
    n : float
        Units (pairs).
    ci : float
        Interval level.
    variance_factor : float
        Variance of Fisher's z times ``n - 3``: 1 for Pearson, 1.06 for Spearman.
    groups : int
        Groups the correlation is pooled within, one degree of freedom each.

    Returns
    -------
    tuple of float
        :math:`\\tanh(\\operatorname{atanh} r \\pm z \\sqrt{f / (n - g - 2)})` (NaN with fewer than ``g + 3``
        units).

    Notes
    -----
    :math:`\\operatorname{atanh} r` is near normal with variance :math:`1/(n-3)` (Fisher 1921 [1]_); Spearman's
    coefficient has about 1.06 times that (Fieller, Hartley & Pearson 1957 [2]_).

    References
    ----------
    .. [1] Fisher, R. A. (1921). On the "probable error" of a coefficient of correlation deduced from a small
       sample. Metron 1, 3-32.
    .. [2] Fieller, E. C., Hartley, H. O., & Pearson, E. S. (1957). Tests for rank correlation coefficients. I.
       Biometrika 44, 470-481.

    Examples
    --------
    >>> [round(v, 3) for v in fisher_z_interval(0.4, 47)]
    [0.127, 0.616]
    """
    from scipy.special import ndtri

    _check_ci(ci)
    dof = n - groups - 2
    if dof <= 0:
        return float("nan"), float("nan")
    half = ndtri(0.5 + ci / 2) * np.sqrt(variance_factor / dof)
    centre = np.arctanh(np.clip(r, -0.999999, 0.999999))
    return float(np.tanh(centre - half)), float(np.tanh(centre + half))


def fisher_z_half_width(
    r: float, n: float, *, ci: float = 0.95, variance_factor: float = 1.0, groups: int = 1
) -> float:
    """Expected half-width, on the correlation scale, of the Fisher-z interval of a correlation ``r`` over ``n``.

    Parameters
    ----------
    r : float
        Planning value of the correlation.
    n : float
        Units (pairs).
    ci : float
        Interval level.
    variance_factor : float
        Variance of Fisher's z times ``n - 3`` (1 Pearson, 1.06 Spearman).
    groups : int
        Groups the correlation is pooled within.

    Returns
    -------
    float
        The mean over the estimate's sampling distribution of half the interval's width; NaN with fewer than
        ``groups + 3`` units.

    Notes
    -----
    On the z scale the half-width :math:`h = z_{(1+ci)/2}\\sqrt{f/(n-g-2)}` is fixed; on the r scale it is
    :math:`(\\tanh(\\hat z + h) - \\tanh(\\hat z - h))/2`, which depends on the estimate. Its expectation over
    :math:`\\hat z \\sim N(\\operatorname{atanh} r, f/(n-g-2))` (Fisher 1921 [1]_) is taken by 40-point
    Gauss-Hermite quadrature.

    References
    ----------
    .. [1] Fisher, R. A. (1921). On the "probable error" of a coefficient of correlation deduced from a small
       sample. Metron 1, 3-32.

    Examples
    --------
    >>> round(fisher_z_half_width(0.0, 103), 3)
    0.192
    """
    from scipy.special import ndtri

    _check_ci(ci)
    dof = n - groups - 2
    if dof <= 0:
        return float("nan")
    se = np.sqrt(variance_factor / dof)
    half = ndtri(0.5 + ci / 2) * se
    nodes, weights = np.polynomial.hermite_e.hermegauss(40)
    z = np.arctanh(np.clip(r, -0.999999, 0.999999)) + se * nodes
    return float(weights @ ((np.tanh(z + half) - np.tanh(z - half)) / 2) / weights.sum())


def spearman_from_pearson(r: float) -> float:
    """Spearman's rank correlation of a bivariate normal pair with Pearson correlation ``r``.

    Parameters
    ----------
    r : float
        Pearson correlation of the bivariate normal pair, in [-1, 1] (clipped).

    Returns
    -------
    float
        :math:`\\rho_S = (6/\\pi)\\arcsin(r/2)`.

    Notes
    -----
    Pearson (1907); Kruskal 1958 [1]_, eq. 5.8: slightly below ``r`` in between (0.433 at 0.45), equal at 0 and
    +/-1. Planning a Spearman interval from a Pearson-scale correlation reads it here.

    References
    ----------
    .. [1] Kruskal, W. H. (1958). Ordinal measures of association. JASA 53, 814-861.

    Examples
    --------
    >>> round(spearman_from_pearson(0.45), 3)
    0.433
    """
    return float(6 / np.pi * np.arcsin(np.clip(r, -1.0, 1.0) / 2))


def fisher_z_power(
    r: float,
    boundary: float,
    n: float,
    *,
    ci: float = 0.95,
    variance_factor: float = 1.0,
    groups: int = 1,
) -> float:
    """Chance that the Fisher-z interval of a correlation ``r`` over ``n`` units lies wholly beyond ``boundary``.

    Parameters
    ----------
    r : float
        Planning value of the correlation.
    boundary : float
        The value the interval must exclude, in (-1, 1).
    n : float
        Units (pairs).
    ci : float
        Level of the two-sided interval.
    variance_factor : float
        Variance of Fisher's z times ``n - 3`` (1 Pearson, 1.06 Spearman).
    groups : int
        Groups the correlation is pooled within.

    Returns
    -------
    float
        :math:`\\Phi(|\\operatorname{atanh} r - \\operatorname{atanh} b| \\sqrt{(n - g - 2)/f} - z_{(1+ci)/2})`; 0 with
        fewer than ``groups + 3`` units.

    Notes
    -----
    The inverse of :func:`fisher_z_sample_size` (Lachin 1981 [1]_), ignoring the far side's negligible chance.

    References
    ----------
    .. [1] Lachin, J. M. (1981). Introduction to sample size determination and power analysis for clinical
       trials. Controlled Clinical Trials 2, 93-113.

    Examples
    --------
    >>> round(fisher_z_power(0.4, 0.0, 47), 3)
    0.802
    """
    from scipy.special import ndtr, ndtri

    _check_ci(ci)
    dof = n - groups - 2
    if dof <= 0:
        return 0.0
    distance = abs(np.arctanh(np.clip(r, -0.999999, 0.999999)) - np.arctanh(boundary))
    return float(ndtr(distance * np.sqrt(dof / variance_factor) - ndtri(0.5 + ci / 2)))


def fieller_interval(
    a: float, b: float, var_a: float, var_b: float, cov_ab: float, *, quantile: float
) -> tuple[float, float]:
    """Fieller's interval of ``a / b`` from the (co)variances of ``a`` and ``b`` and a critical value.

    Parameters
    ----------
    a, b : float
        The estimated numerator and denominator.
    var_a, var_b, cov_ab : float
        Their estimated (co)variances.
    quantile : float
        The critical value :math:`q` (e.g. 1.96 for a 95% interval).

    Returns
    -------
    tuple of float
        The interval's bounds; (NaN, NaN) where it is unbounded.

    Notes
    -----
    The set of :math:`\\theta` with :math:`(a - \\theta b)^2 \\le q^2 (V_{aa} - 2\\theta V_{ab} + \\theta^2 V_{bb})`
    (Fieller 1954 [1]_): the roots of that quadratic where :math:`b^2 > q^2 V_{bb}` (the denominator's interval excludes
    0), else unbounded (NaN, NaN). A value :math:`\\theta_0` lies outside it exactly when the t statistic of
    :math:`a - \\theta_0 b` exceeds :math:`q`, so the chance that the interval clears :math:`\\theta_0` is the
    power of that test (:func:`power_to_clear` with distance :math:`|a - \\theta_0 b|` and SD
    :math:`\\sqrt{V_{aa} - 2\\theta_0 V_{ab} + \\theta_0^2 V_{bb}}`).

    References
    ----------
    .. [1] Fieller, E. C. (1954). Some problems in interval estimation. JRSS B 16, 175-185.

    Examples
    --------
    >>> [round(v, 3) for v in fieller_interval(0.15, 0.2, 0.001, 0.001, 0.0, quantile=1.96)]
    [0.415, 1.245]
    """
    quad = b * b - quantile**2 * var_b
    if quad <= 0:
        return float("nan"), float("nan")
    lin = a * b - quantile**2 * cov_ab
    const = a * a - quantile**2 * var_a
    root = np.sqrt(max(lin * lin - quad * const, 0.0))
    return float((lin - root) / quad), float((lin + root) / quad)


def fieller_half_width(
    a: float, b: float, var_a: float, var_b: float, cov_ab: float, *, quantile: float, margin: float = 0.0
) -> float:
    """Expected half-width of Fieller's interval of ``a / b`` over the estimates' sampling distribution.

    Parameters
    ----------
    a, b : float
        The true numerator and denominator.
    var_a, var_b, cov_ab : float
        The (co)variances of their estimates.
    quantile : float
        The critical value.
    margin : float
        Only estimates whose denominator interval ``b_hat +/- quantile sqrt(var_b)`` clears ``+/- margin`` count
        (a ratio reported only where its denominator is clear of a band around 0, as Q3 reports R).

    Returns
    -------
    float
        The mean half-width over the estimates that count; NaN where none does.

    Notes
    -----
    Fieller's half-width (:func:`fieller_interval`) grows as :math:`\\hat b` nears 0, so its value at the true
    ``a, b`` understates the mean over replications; the expectation is taken over :math:`(\\hat a, \\hat b)`
    bivariate normal with the given covariance by 20 x 20-point Gauss-Hermite quadrature, the variances held at
    their true values (Fieller 1954 [1]_).

    References
    ----------
    .. [1] Fieller, E. C. (1954). Some problems in interval estimation. JRSS B 16, 175-185.

    Examples
    --------
    >>> round(fieller_half_width(0.15, 0.2, 0.001, 0.001, 0.0, quantile=1.96), 3)
    0.449
    """
    nodes, weights = np.polynomial.hermite_e.hermegauss(20)
    weights = weights / weights.sum()
    cov = np.array([[var_a, cov_ab], [cov_ab, var_b]])
    chol = np.linalg.cholesky(cov + 1e-15 * np.eye(2))
    za, zb = np.meshgrid(nodes, nodes, indexing="ij")
    w = np.outer(weights, weights).ravel()
    draws = np.array([a, b])[:, None] + chol @ np.vstack([za.ravel(), zb.ravel()])
    ah, bh = draws
    quad = bh * bh - quantile**2 * var_b
    lin = ah * bh - quantile**2 * cov_ab
    const = ah * ah - quantile**2 * var_a
    keep = (quad > 0) & (np.abs(bh) - quantile * np.sqrt(var_b) > margin)
    if not keep.any():
        return float("nan")
    half = np.sqrt(np.maximum(lin * lin - quad * const, 0.0))[keep] / quad[keep]
    return float((w[keep] * half).sum() / w[keep].sum())


def ratio_variance(a: float, b: float, var_a: float, var_b: float, cov_ab: float) -> float:
    """Delta-method variance of ``a / b`` from the variances and covariance of ``a`` and ``b``.

    Parameters
    ----------
    a, b : float
        Numerator and denominator.
    var_a, var_b, cov_ab : float
        The (co)variances of their estimates.

    Returns
    -------
    float
        :math:`(V_{aa} - 2R V_{ab} + R^2 V_{bb}) / b^2` with :math:`R = a/b`; ``inf`` where ``b`` is 0.

    Notes
    -----
    The first-order form of Fieller's (1954) interval, which it approaches when the denominator is far from zero
    relative to its standard error (Franz 2007 [1]_, sec. 3). Planning uses it for the retained share's width;
    the simulation check runs Fieller's interval itself.

    References
    ----------
    .. [1] Franz, V. H. (2007). Ratios: a short guide to confidence limits and proper use. arXiv:0710.2024.

    Examples
    --------
    >>> round(ratio_variance(0.1, 0.2, 0.001, 0.001, 0.0), 4)
    0.0312
    """
    if b == 0:
        return float("inf")
    ratio = a / b
    return float((var_a - 2 * ratio * cov_ab + ratio**2 * var_b) / b**2)
