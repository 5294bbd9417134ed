"""Agreement between repeated categorical or ordinal answers: Krippendorff's alpha, Cohen's and Fleiss' kappa.

The ``krippendorff`` package computes alpha, statsmodels (``statsmodels.stats.inter_rater``) the kappas; intervals
for alpha and Fleiss' kappa come from a bootstrap over units (scipy), since neither library provides one.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd
from scipy import stats

from bias_validity.psychometrics._checks import check_ci, check_columns, numeric_values, to_wide
from bias_validity.psychometrics.bootstrap import _bootstrap_interval
from bias_validity.psychometrics.interval_kind import IntervalKind

__all__ = ["krippendorff_alpha", "cohen_kappa", "fleiss_kappa"]

LEVELS = ("nominal", "ordinal", "interval", "ratio")
KAPPA_WEIGHTS = (None, "linear", "quadratic")


def _check_bootstrap(n_resamples: int, where: str) -> None:
    if not isinstance(n_resamples, int) or n_resamples < 100:
        raise ValueError(f"{where}: n_resamples must be an integer >= 100, got {n_resamples!r}")


def _unit_bootstrap(
    n_units: int, statistic: Callable[[np.ndarray], float], ci: float, n_resamples: int, seed: int | None
) -> tuple[float, float]:
    """Percentile bootstrap over units: ``statistic`` receives the resampled unit indices."""
    low, high, _, _ = _bootstrap_interval(
        [np.arange(n_units)],
        lambda idx: statistic(idx.astype(int)),
        paired=False,
        vectorized=False,
        method="percentile",
        ci=ci,
        n_resamples=n_resamples,
        seed=seed,
    )
    return low, high


def krippendorff_alpha(
    data: pd.DataFrame,
    *,
    units: str,
    raters: str,
    ratings: str,
    level: str = "ordinal",
    ci: float = 0.95,
    n_resamples: int = 1000,
    seed: int | None = None,
) -> pd.DataFrame:
    """Krippendorff's alpha for repeated answers, missing values allowed, with a bootstrap interval over units.

    Parameters
    ----------
    data : pandas.DataFrame
        Long table, one row per (unit, rater) with a numeric rating (e.g. a Likert answer); NaN ratings and
        absent pairs are missing values, which alpha handles.
    units : str
        Column of what is rated (e.g. the item x template cell).
    raters : str
        Column of the repeated occasions or coders (e.g. ``rep`` or ``session``).
    ratings : str
        Numeric rating column.
    level : {"nominal", "ordinal", "interval", "ratio"}
        Level of measurement, which sets the distance metric.
    ci : float
        Confidence level of the bootstrap interval.
    n_resamples : int
        Bootstrap resamples of units (>= 100).
    seed : int or None
        Bootstrap seed.

    Returns
    -------
    pandas.DataFrame
        One row: ``alpha``, ``ci_low``, ``ci_high``, ``n_units`` (units with at least two ratings), ``n_raters``,
        ``n_values`` (pairable ratings). With a single observed value alpha is undefined: NaN, and
        ``attrs["nan_reason"]`` says so. ``attrs`` holds ``ci``, ``interval`` (``IntervalKind.PERCENTILE``),
        ``level``, ``n_resamples``, ``seed``.

    Notes
    -----
    :math:`\\alpha = 1 - D_o / D_e`, observed over expected disagreement from the coincidence matrix with the
    level's distance metric [1]_; computed by ``krippendorff.alpha``. The interval is a percentile bootstrap
    over units (the package has none). Validated against the worked example of Krippendorff (2011), four coders
    and twelve units with missing data: nominal 0.743, ordinal 0.815, interval 0.849, ratio 0.797.

    References
    ----------
    .. [1] Krippendorff, K. (2011). Computing Krippendorff's alpha-reliability. Annenberg School for
       Communication, University of Pennsylvania. https://repository.upenn.edu/asc_papers/43

    Examples
    --------
    >>> df = pd.DataFrame({"item": [0, 0, 1, 1, 2, 2, 3, 3, 4, 4],
    ...                    "rep": [0, 1] * 5,
    ...                    "likert": [1, 1, 2, 2, 4, 5, 5, 5, 3, 2]})
    >>> out = krippendorff_alpha(df, units="item", raters="rep", ratings="likert", seed=0)
    >>> round(float(out["alpha"].iloc[0]), 3)
    0.908
    """
    import krippendorff

    check_ci(ci)
    _check_bootstrap(n_resamples, "krippendorff_alpha")
    if level not in LEVELS:
        raise ValueError(f"krippendorff_alpha: level {level!r} not known; valid levels are {', '.join(LEVELS)}")
    wide = to_wide(data, rows=units, columns=raters, values=ratings, where="krippendorff_alpha", allow_missing=True)
    wide = wide[wide.notna().sum(axis=1) >= 2]
    if wide.shape[1] < 2:
        raise ValueError(f"krippendorff_alpha: needs at least 2 raters in column {raters!r}, found {wide.shape[1]}")
    if wide.shape[0] < 2:
        raise ValueError("krippendorff_alpha: needs at least 2 units rated at least twice; found fewer")
    x = wide.to_numpy()
    domain = np.unique(x[~np.isnan(x)])
    out = pd.DataFrame({"n_units": [x.shape[0]], "n_raters": [x.shape[1]], "n_values": [int((~np.isnan(x)).sum())]})
    out.attrs.update(
        ci=ci, interval=IntervalKind.PERCENTILE, level=level, n_resamples=n_resamples, seed=seed, nan_reason=""
    )
    if domain.size < 2:
        out.insert(0, "alpha", np.nan)
        out.insert(1, "ci_low", np.nan)
        out.insert(2, "ci_high", np.nan)
        out.attrs["nan_reason"] = "every rating has the same value: no expected disagreement, alpha is undefined"
        return out

    def alpha_of(idx: np.ndarray) -> float:
        sample = x[idx]
        if np.unique(sample[~np.isnan(sample)]).size < 2:
            return np.nan
        return krippendorff.alpha(sample.T, value_domain=domain, level_of_measurement=level)

    estimate = alpha_of(np.arange(x.shape[0]))
    low, high = _unit_bootstrap(x.shape[0], alpha_of, ci, n_resamples, seed)
    out.insert(0, "alpha", estimate)
    out.insert(1, "ci_low", low)
    out.insert(2, "ci_high", high)
    return out


def cohen_kappa(
    data: pd.DataFrame,
    *,
    units: str,
    raters: str,
    ratings: str,
    weights: str | None = None,
    ci: float = 0.95,
) -> pd.DataFrame:
    """Cohen's kappa (optionally weighted) between exactly two raters, with its asymptotic interval.

    Parameters
    ----------
    data : pandas.DataFrame
        Long table, one rating per (unit, rater); both raters must rate every unit.
    units : str
        Column of what is rated.
    raters : str
        Column naming the two raters (e.g. two sessions).
    ratings : str
        Rating column (numeric codes; ordered categories for weighted kappa).
    weights : {None, "linear", "quadratic"}
        Unweighted kappa, or weighted kappa with linear or quadratic disagreement weights.
    ci : float
        Confidence level.

    Returns
    -------
    pandas.DataFrame
        One row: ``kappa``, ``se`` (asymptotic standard error), ``ci_low``, ``ci_high``, ``n_units``. When both
        raters use one and the same category throughout, kappa is 0/0: NaN with ``attrs["nan_reason"]``.
        ``attrs`` holds ``ci``, ``interval`` (``IntervalKind.WALD``) and ``weights``.

    Notes
    -----
    :math:`\\kappa = (p_o - p_e) / (1 - p_e)` with observed and chance agreement from the two raters' marginals
    [1]_; weighted kappa replaces agreement by weighted disagreement [2]_. Computed by
    ``statsmodels.stats.inter_rater.cohens_kappa`` (the interval is kappa +/- z * its standard error).
    Validated against the closed form of a hand-worked 2 x 2 table.

    References
    ----------
    .. [1] Cohen, J. (1960). A coefficient of agreement for nominal scales. Educational and Psychological
       Measurement 20, 37-46.
    .. [2] Cohen, J. (1968). Weighted kappa. Psychological Bulletin 70, 213-220.

    Examples
    --------
    >>> df = pd.DataFrame({"item": list(range(6)) * 2, "session": [1] * 6 + [2] * 6,
    ...                    "consistent": [1, 1, 0, 0, 1, 0, 1, 1, 0, 1, 1, 0]})
    >>> round(float(cohen_kappa(df, units="item", raters="session", ratings="consistent")["kappa"].iloc[0]), 3)
    0.667
    """
    from statsmodels.stats.inter_rater import cohens_kappa

    check_ci(ci)
    if weights not in KAPPA_WEIGHTS:
        raise ValueError(f"cohen_kappa: weights {weights!r} not known; valid choices are None, linear, quadratic")
    wide = to_wide(data, rows=units, columns=raters, values=ratings, where="cohen_kappa")
    if wide.shape[1] != 2:
        raise ValueError(f"cohen_kappa: needs exactly 2 raters in column {raters!r}, found {wide.shape[1]}")
    if wide.shape[0] < 2:
        raise ValueError(f"cohen_kappa: needs at least 2 units in column {units!r}, found {wide.shape[0]}")
    a, b = wide.iloc[:, 0].to_numpy(), wide.iloc[:, 1].to_numpy()
    categories = np.unique(np.concatenate([a, b]))
    table = pd.crosstab(
        pd.Categorical(a, categories=categories), pd.Categorical(b, categories=categories), dropna=False
    ).to_numpy()
    out = pd.DataFrame({"kappa": [np.nan], "se": [np.nan], "ci_low": [np.nan], "ci_high": [np.nan]})
    out["n_units"] = wide.shape[0]
    out.attrs.update(ci=ci, interval=IntervalKind.WALD, weights=weights, nan_reason="")
    if categories.size < 2:
        out.attrs["nan_reason"] = "both raters used a single category throughout: kappa is 0/0"
        return out
    with np.errstate(divide="ignore", invalid="ignore"):
        res = cohens_kappa(table, wt=weights) if weights else cohens_kappa(table)
    z = stats.norm.ppf((1 + ci) / 2)
    kappa, se = float(res["kappa"]), float(res["std_kappa"])
    out.loc[0, ["kappa", "se", "ci_low", "ci_high"]] = [kappa, se, kappa - z * se, kappa + z * se]
    return out


def fleiss_kappa(
    data: pd.DataFrame,
    *,
    units: str,
    ratings: str,
    ci: float = 0.95,
    n_resamples: int = 1000,
    seed: int | None = None,
) -> pd.DataFrame:
    """Fleiss' kappa for many exchangeable raters (e.g. repeated samples), with a bootstrap interval over units.

    Parameters
    ----------
    data : pandas.DataFrame
        Long table, one row per rating; every unit must have the same number of ratings (no missing values).
    units : str
        Column of what is rated (e.g. the item x template x order cell).
    ratings : str
        Categorical rating column (numeric codes, e.g. ``consistent``).
    ci : float
        Confidence level of the percentile bootstrap interval.
    n_resamples : int
        Bootstrap resamples of units (>= 100).
    seed : int or None
        Bootstrap seed.

    Returns
    -------
    pandas.DataFrame
        One row: ``kappa``, ``ci_low``, ``ci_high``, ``n_units``, ``n_ratings`` (ratings per unit). A single
        category throughout gives NaN with ``attrs["nan_reason"]``. ``attrs`` holds ``ci``, ``interval``
        (``IntervalKind.PERCENTILE``), ``n_resamples``, ``seed``.

    Notes
    -----
    :math:`\\kappa = (\\bar P - \\bar P_e)/(1 - \\bar P_e)`, the mean pairwise agreement per unit against the
    agreement expected from the pooled category shares [1]_; computed by ``statsmodels.stats.inter_rater``
    (``aggregate_raters`` and ``fleiss_kappa``). Interval: percentile bootstrap over units. Validated against the
    10-subject, 14-rater, 5-category example (kappa = 0.210) reproduced in the Wikipedia entry on Fleiss' kappa.

    References
    ----------
    .. [1] Fleiss, J. L. (1971). Measuring nominal scale agreement among many raters. Psychological Bulletin 76,
       378-382.

    Examples
    --------
    >>> df = pd.DataFrame({"cell": np.repeat(range(5), 3),
    ...                    "consistent": [1, 1, 1, 0, 0, 0, 1, 1, 0, 1, 1, 1, 0, 0, 1]})
    >>> round(float(fleiss_kappa(df, units="cell", ratings="consistent", seed=0)["kappa"].iloc[0]), 3)
    0.444
    """
    from statsmodels.stats.inter_rater import aggregate_raters
    from statsmodels.stats.inter_rater import fleiss_kappa as _fleiss

    check_ci(ci)
    _check_bootstrap(n_resamples, "fleiss_kappa")
    check_columns(data, [units, ratings], "fleiss_kappa")
    values = numeric_values(data, ratings, "fleiss_kappa")
    per_unit = pd.Series(values).groupby(data[units].to_numpy(), sort=True)
    sizes = per_unit.size()
    if sizes.nunique() != 1:
        raise ValueError(
            f"fleiss_kappa: every unit needs the same number of ratings, found {sizes.min()} to {sizes.max()}"
        )
    m = int(sizes.iloc[0])
    if m < 2:
        raise ValueError("fleiss_kappa: needs at least 2 ratings per unit, found 1")
    if sizes.size < 2:
        raise ValueError(f"fleiss_kappa: needs at least 2 units in column {units!r}, found 1")
    matrix = np.vstack([group.to_numpy() for _, group in per_unit])
    counts, _ = aggregate_raters(matrix)
    out = pd.DataFrame({"kappa": [np.nan], "ci_low": [np.nan], "ci_high": [np.nan]})
    out["n_units"], out["n_ratings"] = counts.shape[0], m
    out.attrs.update(ci=ci, interval=IntervalKind.PERCENTILE, n_resamples=n_resamples, seed=seed, nan_reason="")
    if counts.shape[1] < 2:
        out.attrs["nan_reason"] = "a single category throughout: no chance-corrected agreement, kappa is 0/0"
        return out

    def kappa_of(idx: np.ndarray) -> float:
        with np.errstate(divide="ignore", invalid="ignore"):
            return float(_fleiss(counts[idx]))

    low, high = _unit_bootstrap(counts.shape[0], kappa_of, ci, n_resamples, seed)
    out.loc[0, ["kappa", "ci_low", "ci_high"]] = [kappa_of(np.arange(counts.shape[0])), low, high]
    return out
