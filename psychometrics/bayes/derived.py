"""Derived quantities on the probability scale, from posterior draws: SCs, gaps, ratios, contrasts, correlations."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy.special import expit

from bias_validity.psychometrics.bayes import _arviz
from bias_validity.psychometrics.bayes.design import Design

__all__ = ["QUANTITIES", "group_scores", "derived_draws", "summarise"]

#: Quantity names of the result table, in the order rows appear.
QUANTITIES: tuple[str, ...] = (
    "sc",
    "gap_explicit_implicit",
    "ablation_drop_ratio",
    "reflection_minus_implicit",
    "model_contrast",
    "base_vs_tuned",
    "latent_correlation",
)
#: Value each quantity's direction is judged against (chance for an SC, zero otherwise).
NULL_VALUES: dict[str, float] = {q: (0.5 if q == "sc" else 0.0) for q in QUANTITIES}


def group_scores(idata: object, design: Design, *, agree_from: int = 4) -> dict[tuple[str, str, str], np.ndarray]:
    """Design-averaged SC draws ``(chain, draw)`` per (unit, trait, method) for binary and ordinal methods.

    The SC of a group is the mean, over the group's design cells (item x template x order, equally weighted), of the
    model's probability of a consistent answer (binary) or of an answer at or above ``agree_from`` (ordinal): the
    share a study of this design would show with infinitely many repetitions.
    """
    out: dict[tuple[str, str, str], np.ndarray] = {}
    b_item = _arviz.posterior_array(idata, "b_item")
    tmpl = _arviz.posterior_array(idata, "tmpl")
    ords = _arviz.posterior_array(idata, "ords")
    parts = [("binary", design.binary, design.binary_groups, "mu_b"), ("ordinal", design.ordinal,
             design.ordinal_groups, "mu_o")]  # fmt: skip
    for kind, cells, groups, mu_name in parts:
        if len(cells) == 0:
            continue
        mu = _arviz.posterior_array(idata, mu_name)
        g, i, m = cells["g"].to_numpy(), cells["i"].to_numpy(), cells["k_m"].to_numpy()
        t, o = cells["t"].to_numpy(dtype=int), cells["o"].to_numpy(dtype=int)
        eta = mu[..., g] + b_item[..., i, m] + tmpl[..., t] + ords[..., o]
        if kind == "ordinal":
            cut = _arviz.posterior_array(idata, "cut")
            eta = eta - cut[..., cells["c_m"].to_numpy(), agree_from - 2]
        p = expit(eta)
        weights = np.zeros((len(cells), len(groups)))
        weights[np.arange(len(cells)), g] = 1.0
        weights /= weights.sum(axis=0, keepdims=True)
        sc = p @ weights
        for j, key in enumerate(map(tuple, groups.to_numpy())):
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
    labels: list[tuple[str, str, str, str]] = []
    draws: list[np.ndarray] = []

    def add(quantity: str, unit: str, trait: str, method: str, value: np.ndarray) -> None:
        labels.append((quantity, unit, trait, method))
        draws.append(value)

    for (u, t, m), v in sc.items():
        add("sc", u, t, m, v)
    units = sorted({k[0] for k in sc})
    traits = sorted({k[1] for k in sc})
    for u, t in itertools.product(units, traits):
        got = {m: sc.get((u, t, m)) for m in (explicit, implicit, ablated, reflection)}
        if got[explicit] is not None and got[implicit] is not None:
            add("gap_explicit_implicit", u, t, "", got[explicit] - got[implicit])
        if got[ablated] is not None and got[implicit] is not None:
            add("ablation_drop_ratio", u, t, "", (got[implicit] - got[ablated]) / (got[implicit] - 0.5))
        if got[reflection] is not None and got[implicit] is not None:
            add("reflection_minus_implicit", u, t, "", got[reflection] - got[implicit])
    cells = sorted({(t, m) for _, t, m in sc})
    for (a, b), (t, m) in itertools.product(itertools.combinations(units, 2), cells):
        if (a, t, m) in sc and (b, t, m) in sc:
            add("model_contrast", f"{a} - {b}", t, m, sc[(a, t, m)] - sc[(b, t, m)])
    for base, tuned in base_tuned:
        for (u, t, m), v in sc.items():
            if u == tuned and (base, t, m) in sc:
                add("base_vs_tuned", f"{tuned} - {base}", t, m, v - sc[(base, t, m)])
    corr = _arviz.posterior_array(idata, "chol_corr")
    varied = design.item_mask()  # methods seen on >= 2 items; elsewhere the correlation is the prior's
    for a, b in itertools.combinations(range(len(design.methods)), 2):
        if varied[a] and varied[b]:
            add("latent_correlation", "", "", f"{design.methods[a]}~{design.methods[b]}", corr[..., a, b])
    cols = design.columns
    frame = pd.DataFrame(labels, columns=["quantity", cols.unit, cols.trait, cols.method])
    return frame, np.stack(draws, axis=-1) if draws else np.empty((0, 0, 0))


def summarise(labels: pd.DataFrame, draws: np.ndarray, *, hdi_prob: float = 0.94) -> pd.DataFrame:
    """Mean, HDI, probability of direction and convergence diagnostics of each derived quantity.

    Returns the label columns plus ``mean``, ``hdi_low``, ``hdi_high``, ``p_direction`` (posterior probability
    that the quantity lies on the same side of its null value as its median: 0.5 for ``sc``, 0 otherwise), and
    ``rhat``, ``ess_bulk``, ``ess_tail``. ``attrs`` holds ``hdi_prob`` and ``null_values``.
    """
    stats = _arviz.summarise_draws(draws, hdi_prob=hdi_prob)
    null = labels["quantity"].map(NULL_VALUES).to_numpy(dtype=float)
    flat = draws.reshape(-1, draws.shape[-1]) if draws.size else np.empty((0, 0))
    above = (flat > null).mean(axis=0) if flat.size else np.empty(0)
    out = labels.copy()
    for key in ("mean", "hdi_low", "hdi_high"):
        out[key] = stats[key]
    out["p_direction"] = np.maximum(above, 1 - above)
    for key in ("rhat", "ess_bulk", "ess_tail"):
        out[key] = stats[key]
    out.attrs = {"hdi_prob": hdi_prob, "null_values": dict(NULL_VALUES)}
    return out
