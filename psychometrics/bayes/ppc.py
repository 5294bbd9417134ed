"""Posterior predictive check: each group's observed SC against the SCs of data sets replicated from the posterior."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

if TYPE_CHECKING:  # light at import: the analyses summarise a saved check without loading PyMC
    from bias_validity.psychometrics.bayes._pymc import pm
    from bias_validity.psychometrics.bayes.design import Design

__all__ = ["PPC_INTERVAL", "posterior_predictive_check", "share_outside"]

#: Central mass of the replicated interval an observed SC is checked against.
PPC_INTERVAL = 0.9


def posterior_predictive_check(
    model: pm.Model,
    idata: object,
    design: Design,
    *,
    draws: int = 400,
    seed: int = 0,
) -> pd.DataFrame:
    """Observed SC per group (unit x trait x method x template) against its distribution over replicated data sets.

    Parameters
    ----------
    model : pymc.Model
        The fitted model (:func:`bias_validity.psychometrics.bayes.build_model`).
    idata : InferenceData
        Its posterior.
    design : Design
        The design fitted.
    draws : int
        Posterior draws (evenly thinned) to replicate the answers from.
    seed : int
        Seed of the replicated answers.

    Returns
    -------
    DataFrame
        One row per binary or ordinal group: the unit/trait/method/template columns, ``n`` (answers that take a
        side),
        ``observed`` (share of consistent answers; for Likert methods, of keyed agreeing ratings among the ratings
        that take a side, as the SC is defined in :mod:`bias_validity.psychometrics.bayes.derived`),
        ``replicated_mean``, ``replicated_low`` and ``replicated_high`` (the
        central :data:`PPC_INTERVAL` interval of the replicated shares) and ``outside`` (the observed share lies
        outside it).

    Notes
    -----
    Replicated answers are drawn from the model's own likelihood at each posterior draw
    (``pymc.sample_posterior_predictive``) with the design's answer counts, and aggregated exactly as the observed
    ones: a calibrated model leaves about 10% of the groups outside their 90% interval, fewer where the answers are
    few (a discrete share rarely falls strictly outside), more where the model misses structure [1]_. Groups are
    split by template, so a model that shares one wording effect among units which react to the wording
    differently shows it here, not only in the pooled SC.

    References
    ----------
    .. [1] Gelman, A., Meng, X.-L. & Stern, H. (1996). Posterior predictive assessment of model fitness via
       realized discrepancies. Statistica Sinica 6, 733-807.
    """
    from bias_validity.psychometrics.bayes._pymc import pm

    post = idata.posterior
    n_total = post.sizes["chain"] * post.sizes["draw"]
    keep = np.unique(np.linspace(0, n_total - 1, min(draws, n_total)).round().astype(int))
    thinned = post.stack(sample=("chain", "draw")).isel(sample=keep)
    thinned = thinned.drop_vars(["sample", "chain", "draw"]).expand_dims(chain=[0]).rename(sample="draw")
    names = [v for v in ("y_binary", "y_likert") if v in model.named_vars]
    if not names:
        return pd.DataFrame()
    with model:
        rep = pm.sample_posterior_predictive(thinned, var_names=names, random_seed=seed, progressbar=False)
    rep = rep.posterior_predictive
    frames = []
    if "y_binary" in names:
        k_rep = np.asarray(rep["y_binary"])[0]  # (draws, cells)
        cells = design.binary
        g, groups = _by_template(cells, design.binary_groups, design)
        frames.append(_groups(g, groups, cells["k"].to_numpy(), cells["n"].to_numpy(), k_rep))
    if "y_likert" in names:
        counts_rep = np.asarray(rep["y_likert"])[0]  # (draws, cells, levels)
        levels = np.arange(1, design.levels + 1)
        agree, disagree = levels > (design.levels + 1) / 2, levels < (design.levels + 1) / 2  # the midpoint: no side
        sided = agree | disagree
        observed, replicated = design.ordinal_counts, counts_rep
        g, groups = _by_template(design.ordinal, design.ordinal_groups, design)
        frames.append(
            _groups(
                g,
                groups,
                observed[:, agree].sum(axis=1),
                observed[:, sided].sum(axis=1),
                replicated[..., agree].sum(axis=-1),
                replicated[..., sided].sum(axis=-1),
            )
        )
    out = pd.concat(frames, ignore_index=True)
    out.attrs["interval"] = PPC_INTERVAL
    return out


def _by_template(cells: pd.DataFrame, groups: pd.DataFrame, design: Design) -> tuple[np.ndarray, pd.DataFrame]:
    """Each cell's index among the (group, template) pairs present, and those pairs' labels (the group's columns
    and the template's)."""
    pairs = pd.MultiIndex.from_arrays([cells["g"].to_numpy(dtype=int), cells["t"].to_numpy(dtype=int)])
    codes, present = pd.factorize(pairs, sort=True)
    g, t = present.get_level_values(0).to_numpy(), present.get_level_values(1).to_numpy()
    labels = groups.iloc[g].reset_index(drop=True)
    templates = [design.templates[k].split("|", 1)[1] for k in t]
    return np.asarray(codes), labels.assign(**{design.columns.template: templates})


def _groups(
    g: np.ndarray,
    groups: pd.DataFrame,
    k: np.ndarray,
    n: np.ndarray,
    k_rep: np.ndarray,
    n_rep: np.ndarray | None = None,
) -> pd.DataFrame:
    """Observed and replicated shares per group from per-cell counts (replicated ``k_rep``, ``n_rep``: draws x
    cells; ``n_rep`` defaults to the observed ``n``, fixed by the design)."""
    weights = np.zeros((len(g), len(groups)))
    weights[np.arange(len(g)), g] = 1.0
    n_group = n @ weights
    observed = (k @ weights) / n_group
    with np.errstate(invalid="ignore", divide="ignore"):
        replicated = (k_rep @ weights) / (n_group if n_rep is None else n_rep @ weights)
    tail = (1 - PPC_INTERVAL) / 2
    low, high = np.nanquantile(replicated, [tail, 1 - tail], axis=0)
    out = groups.copy()
    out["n"] = n_group.astype(int)
    out["observed"] = observed
    out["replicated_mean"] = np.nanmean(replicated, axis=0)
    out["replicated_low"], out["replicated_high"] = low, high
    out["outside"] = (observed < low) | (observed > high)
    return out


def share_outside(ppc: pd.DataFrame, method: str = "method") -> pd.Series:
    """Per method, the share of groups whose observed SC lies outside its replicated interval.

    Examples
    --------
    >>> share_outside(pd.DataFrame({"method": ["a", "a", "b"], "outside": [True, False, False]})).to_dict()
    {'a': 0.5, 'b': 0.0}
    """
    return ppc.groupby(method)["outside"].mean().rename("share_outside")
