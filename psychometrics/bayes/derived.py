"""Derived quantities on the probability scale, from posterior draws: SCs, gaps, ratios, contrasts, correlations."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy.special import expit

from bias_validity.psychometrics.bayes import _arviz
from bias_validity.psychometrics.bayes.design import Design
from bias_validity.psychometrics.estimands import ESTIMANDS, Quantity, chance_overlap

__all__ = ["QUANTITIES", "group_scores", "derived_draws", "summarise"]

#: Quantity names of the result table, in the order rows appear (definitions: ``psychometrics.estimands``).
QUANTITIES: tuple[str, ...] = tuple(
    q.value
    for q in (Quantity.SC, Quantity.SC_NEW_ITEM, Quantity.GAP, Quantity.RETAINED_SHARE,
              Quantity.REFLECTION_MINUS_IMPLICIT, Quantity.MODEL_CONTRAST, Quantity.BASE_VS_TUNED,
              Quantity.LATENT_CORRELATION)
)  # fmt: skip
#: Value each quantity's direction is judged against, from the one declaration of each estimand.
NULL_VALUES: dict[str, float] = {q: ESTIMANDS[Quantity(q)].null for q in QUANTITIES}
#: Gauss-Hermite nodes for the integral over a new item's effect (20 nodes: exact to < 1e-6 for logit SDs < 3).
_GH_NODES, _GH_WEIGHTS = np.polynomial.hermite.hermgauss(20)


def group_scores(
    idata: object, design: Design, *, agree_from: int = 4, new_item: bool = False
) -> dict[tuple[str, str, str], np.ndarray]:
    """Design-averaged SC draws ``(chain, draw)`` per (unit, trait, method) for binary and ordinal methods.

    The SC of a group is the mean, over the group's design cells (item x template x order, equally weighted), of the
    model's probability of a consistent answer (binary) or of an answer at or above ``agree_from`` (ordinal): the
    share a study of this design would show with infinitely many repetitions of *these* items.

    With ``new_item=True`` the item effect is integrated out instead: the SC expected for a new item of the same
    trait, ``E_e[logistic(eta_without_item + e)]`` averaged over the group's template x order cells, with
    ``e ~ Normal(0, sd_m^2 (1 + 1/J))``: ``sd_m`` the method's item SD and ``J`` the group's items. The ``1/J``
    term is the unknown mean of the items asked (the item effects sum to zero within a trait, so the group mean is
    the mean of *these* items; a new item deviates from it by its own effect and by their mean's). The integral is
    Gauss-Hermite quadrature (20 nodes). A method without item effects (fewer than 2 items in all) has no new-item
    SC: nothing says how items vary.
    """
    out: dict[tuple[str, str, str], np.ndarray] = {}
    b_item = _arviz.posterior_array(idata, "b_item")
    tmpl = _arviz.posterior_array(idata, "tmpl")
    ords = _arviz.posterior_array(idata, "ords")
    mask = design.item_mask()
    item_sd = _arviz.posterior_array(idata, "chol_stds") if new_item else None
    parts = [("binary", design.binary, design.binary_groups, "mu_b"), ("ordinal", design.ordinal,
             design.ordinal_groups, "mu_o")]  # fmt: skip
    for kind, cells, groups, mu_name in parts:
        if len(cells) == 0:
            continue
        mu = _arviz.posterior_array(idata, mu_name)
        g, i, m = cells["g"].to_numpy(), cells["i"].to_numpy(), cells["k_m"].to_numpy()
        t, o = cells["t"].to_numpy(dtype=int), cells["o"].to_numpy(dtype=int)
        eta = mu[..., g] + tmpl[..., t] + ords[..., o]
        if kind == "ordinal":
            cut = _arviz.posterior_array(idata, "cut")
            eta = eta - cut[..., cells["c_m"].to_numpy(), agree_from - 2]
        if new_item:
            n_items = pd.Series(i).groupby(g).nunique().reindex(range(len(groups)), fill_value=1).to_numpy()
            scale = item_sd[..., m] * np.sqrt(1.0 + 1.0 / n_items[g])  # (chain, draw, cell)
            nodes = np.sqrt(2.0) * scale[..., None] * _GH_NODES
            p = (expit(eta[..., None] + nodes) * _GH_WEIGHTS).sum(axis=-1) / np.sqrt(np.pi)
        else:
            p = expit(eta + b_item[..., i, m])
        weights = np.zeros((len(cells), len(groups)))
        weights[np.arange(len(cells)), g] = 1.0
        weights /= weights.sum(axis=0, keepdims=True)
        sc = p @ weights
        for j, key in enumerate(map(tuple, groups.to_numpy())):
            if new_item and not mask[design.methods.index(key[2])]:
                continue
            out[key] = sc[..., j]
    return out


def derived_draws(
    idata: object,
    design: Design,
    *,
    base_tuned: Sequence[tuple[str, str]] = (),
    agree_from: int = 4,
    explicit: str = "explicit",
    implicit: str = "implicit",
    ablated: str = "ablated",
    reflection: str = "reflection",
) -> tuple[pd.DataFrame, np.ndarray]:
    """Labels and draws ``(chain, draw, n)`` of every derived quantity the data support.

    ``base_tuned`` lists (base unit, tuned unit) pairs; their contrast is labelled ``"tuned - base"``.
    """
    sc = group_scores(idata, design, agree_from=agree_from)
    new = group_scores(idata, design, agree_from=agree_from, new_item=True)
    labels: list[tuple[str, str, str, str]] = []
    draws: list[np.ndarray] = []

    def add(quantity: Quantity, unit: str, trait: str, method: str, value: np.ndarray) -> None:
        labels.append((quantity.value, unit, trait, method))
        draws.append(value)

    for (u, t, m), v in sc.items():
        add(Quantity.SC, u, t, m, v)
    for (u, t, m), v in new.items():
        add(Quantity.SC_NEW_ITEM, u, t, m, v)
    units = sorted({k[0] for k in sc})
    traits = sorted({k[1] for k in sc})
    # contrasts that generalise to the trait (gap, retained share, reflection) use the new-item SCs
    for u, t in itertools.product(units, traits):
        got = {m: new.get((u, t, m)) for m in (explicit, implicit, ablated, reflection)}
        if got[explicit] is not None and got[implicit] is not None:
            add(Quantity.GAP, u, t, "", got[explicit] - got[implicit])
        if got[ablated] is not None and got[implicit] is not None:
            with np.errstate(divide="ignore", invalid="ignore"):
                add(Quantity.RETAINED_SHARE, u, t, "", (got[ablated] - 0.5) / (got[implicit] - 0.5))
        if got[reflection] is not None and got[implicit] is not None:
            add(Quantity.REFLECTION_MINUS_IMPLICIT, u, t, "", got[reflection] - got[implicit])
    cells = sorted({(t, m) for _, t, m in sc})
    for (a, b), (t, m) in itertools.product(itertools.combinations(units, 2), cells):
        if (a, t, m) in sc and (b, t, m) in sc:
            add(Quantity.MODEL_CONTRAST, f"{a} - {b}", t, m, sc[(a, t, m)] - sc[(b, t, m)])
    for base, tuned in base_tuned:
        for (u, t, m), v in sc.items():
            if u == tuned and (base, t, m) in sc:
                add(Quantity.BASE_VS_TUNED, f"{tuned} - {base}", t, m, v - sc[(base, t, m)])
    corr = _arviz.posterior_array(idata, "chol_corr")
    varied = design.item_mask()  # methods seen on >= 2 items; elsewhere the correlation is the prior's
    for a, b in itertools.combinations(range(len(design.methods)), 2):
        if varied[a] and varied[b]:
            add(Quantity.LATENT_CORRELATION, "", "", f"{design.methods[a]}~{design.methods[b]}", corr[..., a, b])
    cols = design.columns
    frame = pd.DataFrame(labels, columns=["quantity", cols.unit, cols.trait, cols.method])
    return frame, np.stack(draws, axis=-1) if draws else np.empty((0, 0, 0))


def summarise(
    labels: pd.DataFrame,
    draws: np.ndarray,
    *,
    hdi_prob: float = 0.94,
    chance_margin: float = 0.05,
    implicit: str = "implicit",
) -> pd.DataFrame:
    """Mean, HDI, probability of direction, estimability and convergence diagnostics of each derived quantity.

    Returns the label columns plus ``mean``, ``hdi_low``, ``hdi_high``, ``p_direction`` (posterior probability
    that the quantity lies on the same side of its null value as its median; nulls from
    :data:`bias_validity.psychometrics.estimands.ESTIMANDS`), ``estimable`` and ``reason`` (why not), and
    ``rhat``, ``ess_bulk``, ``ess_tail``. ``attrs`` holds ``hdi_prob``, ``chance_margin`` and ``null_values``.

    The retained share R is not estimable where the implicit new-item SC's HDI overlaps 0.5 +/- ``chance_margin``
    (its denominator may be zero: R's draws are then unbounded), the same guard the bootstrap path applies; such
    rows are kept, labelled, and read by no verdict.
    """
    stats = _arviz.summarise_draws(draws, hdi_prob=hdi_prob)
    null = labels["quantity"].map(NULL_VALUES).to_numpy(dtype=float)
    flat = draws.reshape(-1, draws.shape[-1]) if draws.size else np.empty((0, 0))
    above = (flat > null).mean(axis=0) if flat.size else np.empty(0)
    out = labels.copy()
    for key in ("mean", "hdi_low", "hdi_high"):
        out[key] = stats[key]
    out["p_direction"] = np.maximum(above, 1 - above)
    out["estimable"] = True
    out["reason"] = ""
    quantity, unit, trait, method = labels.columns[:4]
    implicit_sc = out[(out[quantity] == Quantity.SC_NEW_ITEM.value) & (out[method] == implicit)]
    bands = {(r[unit], r[trait]): (r["hdi_low"], r["hdi_high"]) for _, r in implicit_sc.iterrows()}
    for idx in out.index[out[quantity] == Quantity.RETAINED_SHARE.value]:
        low, high = bands.get((out.at[idx, unit], out.at[idx, trait]), (np.nan, np.nan))
        if chance_overlap(low, high, chance_margin):
            out.at[idx, "estimable"] = False
            out.at[idx, "reason"] = (f"the implicit new-item SC's HDI [{low:.2f}, {high:.2f}] overlaps "
                                     f"0.5 +/- {chance_margin:g}")  # fmt: skip
    for key in ("rhat", "ess_bulk", "ess_tail"):
        out[key] = stats[key]
    out.attrs = {"hdi_prob": hdi_prob, "chance_margin": chance_margin, "null_values": dict(NULL_VALUES)}
    return out
