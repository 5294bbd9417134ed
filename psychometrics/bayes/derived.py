"""Derived quantities on the probability scale, from posterior draws: SCs, gaps, ratios, contrasts, correlations."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd
from scipy.special import expit, log_expit

from bias_validity.psychometrics.bayes import _arviz
from bias_validity.psychometrics.bayes.design import Design
from bias_validity.psychometrics.estimands import ESTIMANDS, Quantity, Thresholds, chance_overlap

__all__ = ["QUANTITIES", "group_scores", "derived_draws", "summarise"]

#: Quantity names of the result table, in the order rows appear (definitions: ``psychometrics.estimands``).
QUANTITIES: tuple[str, ...] = tuple(
    q.value
    for q in (
        Quantity.SC,
        Quantity.SC_NEW_ITEM,
        Quantity.ACQUIESCENCE,
        Quantity.GAP,
        Quantity.RETAINED_SHARE,
        Quantity.REFLECTION_MINUS_IMPLICIT,
        Quantity.MODEL_CONTRAST,
        Quantity.BASE_VS_TUNED,
        Quantity.LATENT_CORRELATION,
    )
)
#: Value each quantity's direction is judged against, from the one declaration of each estimand.
NULL_VALUES: dict[str, float] = {q: ESTIMANDS[Quantity(q)].null for q in QUANTITIES}
#: Gauss-Hermite nodes for the integral over a new item's effect (20 nodes: exact to < 1e-6 for logit SDs < 3).
_GH_NODES, _GH_WEIGHTS = np.polynomial.hermite.hermgauss(20)


def _side_share(eta: np.ndarray, cut: np.ndarray | None) -> np.ndarray:
    """P(consistent) of a binary cell, or P(keyed rating 4-5 | a side is taken) of a Likert cell.

    The Likert share ``a / (a + d)`` with ``a = P(y >= 4) = expit(eta - cut_3)`` and ``d = P(y <= 2) =
    expit(cut_2 - eta)`` is computed as ``expit(log a - log d)``: where both underflow (a wide middle gap far from
    ``eta``) the quotient of the probabilities is 0/0, their log-ratio is not.

    Examples
    --------
    >>> cut = np.array([[-950.0, -900.0, 900.0, 950.0], [-2.0, -1.0, 1.0, 2.0]])
    >>> _side_share(np.array([0.0, 3.0]), cut).round(3).tolist()
    [0.5, 0.98]
    """
    if cut is None:
        return expit(eta)
    return expit(log_expit(eta - cut[..., 2]) - log_expit(cut[..., 1] - eta))


def cell_scores(
    idata: object, design: Design, kind: str, *, new_item: bool = False, draws: slice = slice(None), seed: int = 0
) -> np.ndarray:
    """SC draws ``(chain, draw, cell)`` of each binary or ordinal (``kind``) design cell, for the posterior draws
    ``draws`` of each chain (all by default).

    A binary cell's SC is the probability of a consistent answer; a Likert cell's (ratings keyed towards the
    stereotype) the probability of a keyed 4-5 among ratings that take a side (1, 2, 4, 5), so its chance level is
    0.5 like every SC (the midpoint is no stance). With ``new_item=True`` the item effect is integrated over the item
    distribution: ``E_e[SC(eta_without_item - d + e)]``, ``e ~ Normal(0, sd_m^2)`` with ``sd_m`` the method's item
    SD (Gauss-Hermite quadrature, 20 nodes), where ``d ~ Normal(0, sd_m^2 / J)`` is drawn once per posterior draw and
    trait (``J`` items), correlated across methods by the item effects' correlation matrix: item effects sum to zero
    within a trait, so the group mean is the mean of *these* items, which deviates from the item distribution's
    mean by ``d``; drawing it carries that uncertainty into the new-item SC and its contrasts. ``seed`` seeds the
    draws of ``d``, so a fit always gives the same quantities; draws that must be independent of each other (a
    truth and the posterior it is ranked among, in simulation-based calibration) need different seeds.
    """
    cells = design.binary if kind == "binary" else design.ordinal

    def post(name: str) -> np.ndarray:
        return _arviz.posterior_array(idata, name, draws)

    mu = post("mu_b" if kind == "binary" else "mu_o")
    g, i, m = cells["g"].to_numpy(), cells["i"].to_numpy(), cells["k_m"].to_numpy()
    t, o = cells["t"].to_numpy(dtype=int), cells["o"].to_numpy(dtype=int)
    eta = mu[..., g] + post("tmpl")[..., t] + post("ords")[..., o]
    names = _arviz.posterior_names(idata)
    own = "tmpl_unit" in names  # each unit's own deviations (methods several units answered)
    if own:
        eta = eta + post("tmpl_unit")[..., cells["ut"].to_numpy(dtype=int)]
        eta = eta + post("ords_unit")[..., cells["uo"].to_numpy(dtype=int)]
    if kind == "binary":
        cut = None
    elif "cut_unit" in names:
        cut = post("cut_unit")[..., cells["c_um"].to_numpy(dtype=int), :]
    else:
        cut = post("cut")[..., cells["c_m"].to_numpy(), :]
    if not new_item:
        item = post("b_item")[..., i, m]
        if own:
            item = item + post("item_unit")[..., cells["ui"].to_numpy(dtype=int)]
        return _side_share(eta + item, cut)
    sd_all = _arviz.posterior_array(idata, "chol_stds")
    sd = sd_all[:, draws][..., m]  # sd_all whole: its shape sizes the draws of z below
    # the mean of the items asked, relative to the item distribution's: correlated across methods as the item
    # effects are (LKJ), one draw per posterior draw and trait
    traits = sorted(set(design.item_traits()))
    t_code = cells[design.columns.trait].astype(str).map({name: k for k, name in enumerate(traits)}).to_numpy()
    corr = post("chol_corr")
    chol = np.linalg.cholesky(corr + 1e-9 * np.eye(corr.shape[-1]))
    # drawn for every posterior draw and then sliced, so a slice of draws gets the numbers the whole would;
    # (chain, draw, method, trait)
    z = np.random.default_rng(seed).standard_normal((*sd_all.shape, len(traits)))[:, draws]
    w = np.einsum("cdij,cdjt->cdit", chol, z)
    n_items = pd.Series(i).groupby([t_code, m]).transform("nunique").to_numpy()
    shift = sd * w[..., m, t_code] / np.sqrt(n_items)
    if own:  # a new item's own deviation for this unit, and these items' mean of it, as for the shared effect
        unit_sd = _unit_sd(idata, design, cells, draws)
        u_code = cells[design.columns.unit].astype(str).map({name: k for k, name in enumerate(design.units)})
        z_unit = np.random.default_rng([seed, 1]).standard_normal(
            (*sd_all.shape[:2], len(design.units), len(design.methods), len(traits))
        )[:, draws]
        per_unit_items = pd.Series(i).groupby([u_code.to_numpy(), t_code, m]).transform("nunique").to_numpy()
        shift = shift + unit_sd * z_unit[..., u_code.to_numpy(), m, t_code] / np.sqrt(per_unit_items)
        sd = np.sqrt(sd**2 + unit_sd**2)
    # a new item's SC depends on the cell's group, template and order only: integrate once per distinct triple
    codes, first = _distinct(g, t, o)
    eta, shift, sd = eta[..., first] - shift[..., first], None, sd[..., first]
    cut = None if cut is None else cut[..., first, None, :]
    nodes = np.sqrt(2.0) * sd[..., None] * _GH_NODES
    share = (_side_share(eta[..., None] + nodes, cut) * _GH_WEIGHTS).sum(axis=-1) / np.sqrt(np.pi)
    return share[..., codes]


def _distinct(*columns: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row's code among the distinct rows of ``columns``, and the first row of each code."""
    codes, _ = pd.factorize(pd.MultiIndex.from_arrays(columns))
    _, first = np.unique(codes, return_index=True)
    return codes, first


def _unit_sd(idata: object, design: Design, cells: pd.DataFrame, draws: slice) -> np.ndarray:
    """Each cell's SD of unit deviations from the shared item effects (0 for a method only one unit answered)."""
    sd = _arviz.posterior_array(idata, "sigma_item_unit", draws)
    sd = np.concatenate([sd, np.zeros((*sd.shape[:2], 1))], axis=-1)
    index = {name: k for k, name in enumerate(design.unit_methods)}
    return sd[..., cells[design.columns.method].map(index).fillna(len(index)).to_numpy(dtype=int)]


#: Most values (chains x draws x cells x quadrature nodes) one slice of :func:`cell_scores` holds: 2^24 doubles,
#: 128 MB. A large imported study (24,000 cells, 4000 draws, 20 nodes) would otherwise need 15 GB at once.
_CHUNK_VALUES = 2**24


def _draw_slices(idata: object, cells: int, per_cell: int) -> list[slice]:
    """Slices of each chain's draws small enough that ``chains x draws x cells x per_cell`` stays within
    :data:`_CHUNK_VALUES`."""
    chains, n_draws = _arviz.posterior_array(idata, "tmpl").shape[:2]
    step = max(1, _CHUNK_VALUES // max(1, chains * cells * per_cell))
    return [slice(start, start + step) for start in range(0, n_draws, step)]


def _group_means(
    values: np.ndarray,
    g: np.ndarray,
    n_groups: int,
    mask: np.ndarray | None = None,
    weight: np.ndarray | None = None,
) -> np.ndarray:
    """Weighted mean of each group's cells (optionally only those in ``mask``; equal weights unless ``weight``):
    ``(chain, draw, group)``."""
    weights = np.zeros((len(g), n_groups))
    keep = np.ones(len(g), dtype=bool) if mask is None else mask
    weights[np.flatnonzero(keep), g[keep]] = 1.0 if weight is None else weight[keep]
    with np.errstate(invalid="ignore"):
        weights /= weights.sum(axis=0, keepdims=True)
    return values @ np.nan_to_num(weights)


def answer_weights(design: Design, kind: str, reversed_order: Callable[[str], bool] | None = None) -> np.ndarray:
    """Each binary or ordinal cell's weight in its group's SC: the answers it holds that take a side, as the
    classical SC pools them (:data:`bias_validity.psychometrics.estimands.ESTIMANDS` ``[sc]``).

    For a Likert group asked statements and reversals (``reversed_order`` tells them apart by the cell's order)
    each polarity's cells share half the weight, as the classical SC is the mean of the two polarities' shares.
    A group without a side-taking answer weighs its cells equally.
    """
    cells = design.binary if kind == "binary" else design.ordinal
    if kind == "binary":
        n = cells["n"].to_numpy(dtype=float)
    else:
        levels = np.arange(1, design.levels + 1)
        n = design.ordinal_counts[:, levels != (design.levels + 1) / 2].sum(axis=1).astype(float)
    g = cells["g"].to_numpy()
    polarity = np.zeros(len(cells), dtype=int)
    if kind != "binary" and reversed_order is not None:
        polarity = cells[design.columns.order].astype(str).map(reversed_order).to_numpy(dtype=int)
    key = pd.Series(n).groupby([g, polarity])
    total, parts = key.transform("sum").to_numpy(), pd.Series(polarity).groupby(g).transform("nunique").to_numpy()
    cells_in = key.transform("size").to_numpy()
    with np.errstate(invalid="ignore", divide="ignore"):
        weight = np.where(total > 0, n / total, 1.0 / cells_in) / parts
    return weight


def group_scores(
    idata: object,
    design: Design,
    *,
    new_item: bool = False,
    seed: int = 0,
    reversed_order: Callable[[str], bool] | None = None,
) -> dict[tuple[str, str, str], np.ndarray]:
    """Design-averaged SC draws ``(chain, draw)`` per (unit, trait, method) for binary and ordinal methods.

    The SC of a group is the mean, over the group's design cells (item x template x order) weighted by the answers
    each holds (:func:`answer_weights`, the weighting the classical SC has), of :func:`cell_scores`: the share a
    study of this design would show with infinitely many repetitions of *these* items, or with ``new_item=True``
    of a new item of the same trait asked under the wordings and orders in the proportions the study asked them.
    A method without item effects (seen on fewer than 2 items) has no new-item SC: nothing says how items vary.
    ``seed``: as in :func:`cell_scores`; ``reversed_order``: as in :func:`answer_weights`.
    """
    out: dict[tuple[str, str, str], np.ndarray] = {}
    mask = design.item_mask()
    parts = [("binary", design.binary, design.binary_groups), ("ordinal", design.ordinal, design.ordinal_groups)]
    for kind, cells, groups in parts:
        if len(cells) == 0:
            continue
        g = cells["g"].to_numpy()
        slices = _draw_slices(idata, len(cells), len(_GH_NODES) if new_item else 1)
        parts_sc = [cell_scores(idata, design, kind, new_item=new_item, draws=part, seed=seed) for part in slices]
        weight = answer_weights(design, kind, reversed_order)
        sc = np.concatenate([_group_means(values, g, len(groups), weight=weight) for values in parts_sc], axis=1)
        for j, key in enumerate(map(tuple, groups.to_numpy())):
            if new_item and not mask[design.methods.index(key[2])]:
                continue
            out[key] = sc[..., j]
    return out


def acquiescence_scores(
    idata: object, design: Design, reversed_order: Callable[[str], bool]
) -> dict[tuple[str, str, str], np.ndarray]:
    """Acquiescence index draws per (unit, trait, method) of Likert groups asked both a statement and its reversal.

    The mean of P(agree | a side is taken) over the stereotype statements and over their reversals, each
    equally weighted over their cells: 0.5 for a responder whose agreement follows the content, 1 for one who
    agrees with everything (:data:`bias_validity.psychometrics.estimands.ESTIMANDS` ``[ACQUIESCENCE]``). On a
    reversed cell, agreeing is the keyed rating's disagreeing, so its agreement is ``1 - SC``.
    ``reversed_order`` tells from a cell's order label whether it is a reversed statement.
    """
    cells = design.ordinal
    if len(cells) == 0:
        return {}
    g = cells["g"].to_numpy()
    flipped = cells[design.columns.order].astype(str).map(reversed_order).to_numpy(dtype=bool)
    n = len(design.ordinal_groups)
    plain, reversed_ = [], []
    for part in _draw_slices(idata, len(cells), 1):
        sc = cell_scores(idata, design, "ordinal", draws=part)
        plain.append(_group_means(sc, g, n, ~flipped))
        reversed_.append(_group_means(1.0 - sc, g, n, flipped))
    agree_plain, agree_reversed = np.concatenate(plain, axis=1), np.concatenate(reversed_, axis=1)
    out = {}
    for j, key in enumerate(map(tuple, design.ordinal_groups.to_numpy())):
        if (flipped & (g == j)).any() and (~flipped & (g == j)).any():
            out[key] = 0.5 * (agree_plain[..., j] + agree_reversed[..., j])
    return out


def derived_draws(
    idata: object,
    design: Design,
    *,
    base_tuned: Sequence[tuple[str, str]] = (),
    reversed_order: Callable[[str], bool] | None = None,
    explicit: str = "explicit",
    implicit: str = "implicit",
    ablated: str = "ablated",
    reflection: str = "reflection",
    seed: int = 0,
) -> tuple[pd.DataFrame, np.ndarray]:
    """Labels and draws ``(chain, draw, n)`` of every derived quantity the data support.

    ``base_tuned`` lists (base unit, tuned unit) pairs; their contrast is labelled ``"tuned - base"``.
    ``reversed_order`` marks the order labels of reversed Likert statements; with it, Likert groups asked both
    polarities get an ``acquiescence`` row (:func:`acquiescence_scores`). ``seed`` seeds the new-item SCs' draws of
    the items' mean (:func:`cell_scores`).
    """
    sc = group_scores(idata, design, reversed_order=reversed_order)
    new = group_scores(idata, design, new_item=True, seed=seed, reversed_order=reversed_order)
    labels: list[tuple[str, str, str, str]] = []
    draws: list[np.ndarray] = []

    def add(quantity: Quantity, unit: str, trait: str, method: str, value: np.ndarray) -> None:
        labels.append((quantity.value, unit, trait, method))
        draws.append(value)

    for (u, t, m), v in sc.items():
        add(Quantity.SC, u, t, m, v)
    for (u, t, m), v in new.items():
        add(Quantity.SC_NEW_ITEM, u, t, m, v)
    for (u, t, m), v in (acquiescence_scores(idata, design, reversed_order) if reversed_order else {}).items():
        add(Quantity.ACQUIESCENCE, u, t, m, v)
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
    hdi_prob: float = 0.95,
    chance_margin: float = Thresholds.chance_margin,
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
            out.at[idx, "reason"] = (
                f"the implicit new-item SC's HDI [{low:.2f}, {high:.2f}] overlaps 0.5 +/- {chance_margin:g}"
            )
    for key in ("rhat", "ess_bulk", "ess_tail"):
        out[key] = stats[key]
    out.attrs = {"hdi_prob": hdi_prob, "chance_margin": chance_margin, "null_values": dict(NULL_VALUES)}
    return out
