"""Classical gauges of how far effects spread, to parameterise the model: the units' own effects around the shared
ones (an estimate and its reach), and the shared wordings' and orders' levels (their pooled logits).

The hierarchical model draws each unit's deviation from a shared template, order or item effect centred or
non-centred by how much the data pin it down against its spread (:func:`bias_validity.psychometrics.bayes.model.
_weights`). Which form samples well depends on the spread the posterior finds, not on its prior: a deviation with
hundreds of answers whose SD is near zero (models that share their wordings' effects) is a funnel when drawn
centred. This estimate only chooses the parameterisation; the model and its posterior are the same either way.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from bias_validity.psychometrics.bayes.design import Design

__all__ = ["MIN_ANSWERS", "REACH_Z", "SPREAD_RANGE", "deviation_spread", "level_logits"]

#: Answers a unit's level needs to enter the estimate: below this an empirical logit's sampling variance (about
#: 4 / n at even odds) swamps any spread worth telling apart from the prior's.
MIN_ANSWERS = 20
#: The estimate is clipped to this range; 1.0 (the mean of the deviations' Gamma(2, 2) SD prior) is also what a
#: facet with too few answers gets, so the estimate never makes a deviation more centred than its prior would.
SPREAD_RANGE = (0.01, 1.0)
#: Standard errors above the estimate that ``reach=True`` adds: a one-sided 90% upper bound.
REACH_Z = 1.2816

#: each facet column's shared level (items: per method, as the item effects are)
_FACETS = {"ut": ["t"], "uo": ["o"], "ui": ["i", "k_m"]}


def deviation_spread(design: Design, *, reach: bool = False) -> dict[str, float]:
    """Method-of-moments estimate of the SD of the units' deviations from the shared effects, per facet column
    (``ut`` templates, ``uo`` orders, ``ui`` items) of the cells of :attr:`Design.unit_methods`; with ``reach``, the
    largest SD the answers do not rule out.

    For each unit x level holding at least :data:`MIN_ANSWERS` binary answers or Likert ratings that take a side,
    the empirical logit ``y = log((k + 1/2) / (n - k + 1/2))`` and its sampling variance
    ``v = 1 / (k + 1/2) + 1 / (n - k + 1/2)`` (Cox & Snell 1989, sec. 2.1.6); ``y`` is centred within each unit's
    group (unit x method, x trait for items: the group means are not deviations) and, at each shared level asked of
    at least two such units, its variance across units estimates ``sigma^2 (1 - 1/L) + mean(v)`` for a group of
    ``L`` levels. Hence ``sigma^2 = mean over levels of (var - mean v) / (1 - 1/L)``, the moment estimator of a
    random-effects variance (DerSimonian & Laird 1986) on double-centred logits, clipped to :data:`SPREAD_RANGE`;
    a facet with no two such units at two levels of a group gets the range's top.

    ``reach`` adds :data:`REACH_Z` standard errors of the mean excess to the variance before the square root, a
    one-sided 90% upper bound; the variance across ``U`` units of a level has sampling variance
    ``2 (sigma^2 + v)^2 / (U - 1)`` for normal logits (Cochran 1934), averaged over the levels. Few units or few
    answers per unit leave a wide reach however alike the units answer: the SD's posterior cannot sink below it,
    and a shared effect the units' deviations may absorb up to it is less pinned by its answers than their number
    says (:func:`bias_validity.psychometrics.bayes.model._information`).

    Returns
    -------
    dict
        Spread per facet column; empty where no method has units' own deviations.
    """
    if not design.unit_methods:
        return {}
    cells = _side_counts(design)
    cells = cells[cells[design.columns.method].isin(design.unit_methods)]
    out = {}
    for column, shared in _FACETS.items():
        group = [design.columns.unit, design.columns.method] + ([design.columns.trait] if column == "ui" else [])
        level = cells.groupby([*group, column, *shared], observed=True)[["k", "n"]].sum().reset_index()
        out[column] = _moment_spread(level[level["n"] >= MIN_ANSWERS], group, shared, reach)
    return out


def level_logits(design: Design, column: str, levels: int) -> np.ndarray:
    """Empirical logit ``log((k + 1/2) / (n - k + 1/2))`` of each of the ``levels`` levels of a shared facet
    (``column``: ``t`` templates, ``o`` orders), its binary and Likert cells' side counts pooled over units, traits,
    items and the other facet; 0.0 for a level without such answers.

    Pooled over items and wordings with effects of their own, a level's logit is shrunk towards zero (Zeger, Liang &
    Albert 1988): it gauges how far the levels stand apart, for a choice of parameterisation, not an estimate.
    """
    pooled = _side_counts(design).groupby(column)[["k", "n"]].sum().reindex(range(levels), fill_value=0.0)
    k, n = pooled["k"].to_numpy(float), pooled["n"].to_numpy(float)
    return np.where(n > 0, np.log((k + 0.5) / (n - k + 0.5)), 0.0)


def _side_counts(design: Design) -> pd.DataFrame:
    """Binary cells and Likert cells as (k, n): a Likert cell's ratings above the midpoint out of those that take a
    side (the SC's own reading of a rating)."""
    frames = [design.binary.assign(k=design.binary["k"].astype(float), n=design.binary["n"].astype(float))]
    if len(design.ordinal):
        levels = np.arange(1, design.levels + 1)
        middle = (design.levels + 1) / 2
        counts = design.ordinal_counts
        frames.append(
            design.ordinal.assign(
                k=counts[:, levels > middle].sum(axis=1).astype(float),
                n=counts[:, levels != middle].sum(axis=1).astype(float),
            )
        )
    return pd.concat([f.drop(columns=["counts"], errors="ignore") for f in frames], ignore_index=True)


def _moment_spread(level: pd.DataFrame, group: list[str], shared: list[str], reach: bool) -> float:
    """The moment estimate of the deviations' SD (or its reach) from unit x level counts (columns ``k``, ``n``),
    ``group`` naming each unit's zero-sum group and ``shared`` the shared level."""
    low, high = SPREAD_RANGE
    level = level[level.groupby(group, observed=True)["n"].transform("size") >= 2]
    level = level[level.groupby(shared, observed=True)["n"].transform("size") >= 2]
    if level.empty:
        return high
    k, n = level["k"].to_numpy(), level["n"].to_numpy()
    frame = level.assign(y=np.log((k + 0.5) / (n - k + 0.5)), v=1.0 / (k + 0.5) + 1.0 / (n - k + 0.5))
    within = frame.groupby(group, observed=True)["y"]
    frame = frame.assign(y=frame["y"] - within.transform("mean"), kept=1.0 - 1.0 / within.transform("size"))
    at = frame.groupby(shared, observed=True)
    excess = (at["y"].var() - at["v"].mean()) / at["kept"].mean()
    variance = max(excess.mean(), 0.0)
    if reach:
        sampling = 2.0 * (variance + at["v"].mean()) ** 2 / (at["y"].size() - 1) / at["kept"].mean() ** 2
        independent = len(sampling) * at["kept"].mean().mean()  # centring within a group of L levels leaves L - 1
        variance += REACH_Z * np.sqrt(sampling.mean() / independent)
    return float(np.clip(np.sqrt(variance), low, high))
