"""Simulate studies with known parameters from the model's own generative process (for recovery and coverage)."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
from scipy.special import expit

from bias_validity.psychometrics.bayes.design import DEFAULT_COLUMNS, Columns

__all__ = ["simulate_study"]


def simulate_study(
    *,
    units: int = 2,
    traits: int = 2,
    items: int = 6,
    templates: int = 3,
    orders: int = 2,
    reps: int = 10,
    binary_methods: tuple[str, ...] = ("implicit", "ablated"),
    ordinal_methods: tuple[str, ...] = ("explicit",),
    score_methods: tuple[str, ...] = ("logprob",),
    item_corr: float = 0.6,
    unit_sd: float = 0.0,
    seed: int = 0,
    columns: Columns = DEFAULT_COLUMNS,
) -> dict[str, pd.DataFrame]:
    """Draw one study with known group logits, correlated item effects, template and order effects.

    Parameters
    ----------
    units, traits, items, templates, orders, reps : int
        Design size: units x traits groups per method, ``items`` per trait, each cell asked ``reps`` times.
    binary_methods, ordinal_methods, score_methods : tuple of str
        Methods observed as binomial counts, as 5-point Likert counts, and as one continuous score per cell.
    item_corr : float
        Correlation of the item effects between every pair of methods.
    unit_sd : float
        Logit SD of each unit's own deviations from the shared item, template and order effects of the sampled and
        Likert methods (the model's unit deviations); 0 draws none.
    seed : int
        Random seed.
    columns : Columns
        Column names to write.

    Returns
    -------
    dict of DataFrame
        ``binary`` (cell columns, ``k``, ``n``), ``ordinal`` (cell columns, ``level``, ``n``), ``scores`` (cell
        columns, ``score``) and ``truth`` (unit, trait, method, ``sc``: the design-averaged probability of a
        consistent answer, or for ordinal methods of agreeing (4-5) among the answers that take a side (1, 2, 4, 5), as
        :mod:`bias_validity.psychometrics.bayes.derived` defines the SC: what the fit should recover).

    Notes
    -----
    Draws from the generative model of :func:`bias_validity.psychometrics.bayes.build_model` (logit-normal group
    effects, multivariate-normal item effects with the given correlation, template and order effects, binomial and
    cumulative-logit observations, Gaussian scores), so that recovery and interval coverage can be checked against
    known truth, as simulation-based calibration does [1]_.

    References
    ----------
    .. [1] Talts, S., Betancourt, M., Simpson, D., Vehtari, A. & Gelman, A. (2018). Validating Bayesian inference
       algorithms with simulation-based calibration. arXiv:1804.06788.

    Examples
    --------
    >>> sim = simulate_study(units=1, traits=1, items=2, templates=1, orders=1, reps=5, seed=1)
    >>> sorted(sim)
    ['binary', 'ordinal', 'scores', 'truth']
    >>> int(sim["binary"]["n"].sum())
    20
    """
    rng = np.random.default_rng(seed)
    c = columns
    methods = [*binary_methods, *ordinal_methods, *score_methods]
    n_m = len(methods)
    corr = np.full((n_m, n_m), item_corr) + (1 - item_corr) * np.eye(n_m)
    sd = rng.uniform(0.3, 0.8, n_m)
    unit_names = [f"u{j}" for j in range(units)]
    trait_names = [f"t{j}" for j in range(traits)]
    item_names = [f"{t}-{j:02d}" for t in trait_names for j in range(items)]
    b = rng.multivariate_normal(np.zeros(n_m), corr * np.outer(sd, sd), size=len(item_names))
    tmpl = {m: rng.normal(0, 0.3, templates) for m in methods}
    ordr = {m: rng.normal(0, 0.3, orders) for m in methods}
    cut = np.array([-2.0, -0.8, 0.4, 1.5])
    rows: dict[str, list[dict]] = {"binary": [], "ordinal": [], "scores": [], "truth": []}
    # each unit's own deviations from the shared item, template and order effects (sampled and Likert methods),
    # from a stream of their own, so unit_sd=0 leaves every other draw as it was
    dev = np.random.default_rng([seed, 2])
    own = {
        u: {m: tuple(dev.normal(0, unit_sd, size) for size in (len(item_names), templates, orders)) for m in methods}
        for u in unit_names
    }
    for u, t, (mi, m) in itertools.product(unit_names, trait_names, enumerate(methods)):
        mu = rng.normal(0.6, 0.6) if m not in ordinal_methods else rng.normal(0.0, 0.6)
        if m in score_methods:
            mu = rng.normal(0, 1)
        probs = []
        for j, tp, o in itertools.product(range(items), range(templates), range(orders)):
            i = item_names.index(f"{t}-{j:02d}")
            eta = mu + b[i, mi] + tmpl[m][tp] + ordr[m][o]
            if m not in score_methods:
                item_u, tmpl_u, ord_u = own[u][m]
                eta += item_u[i] + tmpl_u[tp] + ord_u[o]
            key = {c.unit: u, c.trait: t, c.method: m, c.template: f"T{tp}", c.item: item_names[i], c.order: f"o{o}"}
            if m in binary_methods:
                p = expit(eta)
                probs.append(p)
                rows["binary"].append({**key, "k": int(rng.binomial(reps, p)), "n": reps})
            elif m in ordinal_methods:
                cdf = np.append(expit(cut - eta), 1.0)
                p_level = np.diff(cdf, prepend=0.0)
                probs.append((1 - cdf[2]) / (1 - cdf[2] + cdf[1]))  # P(4-5 | a side taken), as the SC is defined
                for lv, n in enumerate(rng.multinomial(reps, p_level), start=1):
                    rows["ordinal"].append({**key, "level": lv, "n": int(n)})
            else:
                rows["scores"].append({**key, "score": float(mu + b[i, mi] + rng.normal(0, 0.3))})
        if probs:
            rows["truth"].append({c.unit: u, c.trait: t, c.method: m, "sc": float(np.mean(probs))})
    cell = c.cell
    columns_of = {
        "binary": [*cell, "k", "n"],
        "ordinal": [*cell, "level", "n"],
        "scores": [*cell, "score"],
        "truth": [*c.group, "sc"],
    }
    return {name: pd.DataFrame(r, columns=columns_of[name]) for name, r in rows.items()}
