"""Derived quantities on the probability scale, from posterior draws: SCs, gaps, ratios, contrasts, correlations."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

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


def _expit(x: np.ndarray) -> np.ndarray:
    """The logistic function as ``(1 + tanh(x / 2)) / 2``: numpy's vectorised tanh takes a tenth of the time of
    scipy's ``expit`` (a scalar loop) on the 10^8 values of a large study's draws, to within 1e-16 absolute."""
    out = np.tanh(0.5 * x)
    out += 1.0
    out *= 0.5
    return out


def _log_expit(x: np.ndarray) -> np.ndarray:
    """``log(expit(x)) = min(x, 0) - log1p(exp(-|x|))``, stable for any ``x``; numpy's vectorised exp and log1p,
    for the reason of :func:`_expit`."""
    out = np.exp(-np.abs(x))
    np.log1p(out, out=out)
    return np.minimum(x, 0.0) - out


def _side_share(above: np.ndarray, below: np.ndarray | None = None) -> np.ndarray:
    """P(consistent) of a binary cell with log-odds ``above``, or P(keyed rating 4-5 | a side is taken) of a Likert
    cell with ``above = eta - cut_3`` and ``below = cut_2 - eta``.

    The Likert share ``a / (a + d)`` with ``a = P(y >= 4) = expit(above)`` and ``d = P(y <= 2) = expit(below)`` is
    computed as ``expit(log a - log d)``: where both underflow (a wide middle gap far from ``eta``) the quotient of
    the probabilities is 0/0, their log-ratio is not.

    Examples
    --------
    >>> eta, cut_2, cut_3 = np.array([0.0, 3.0]), np.array([-900.0, -1.0]), np.array([900.0, 1.0])
    >>> _side_share(eta - cut_3, cut_2 - eta).round(3).tolist()
    [0.5, 0.98]
    """
    if below is None:
        return _expit(above)
    return _expit(_log_expit(above) - _log_expit(below))


@dataclass(frozen=True)
class CellIndex:
    """What :func:`cell_scores` needs of one kind's (binary or ordinal) design cells, computed once per fit rather
    than once per slice of draws.

    A cell's SC without its item effect depends only on its group, template and order, so that part is computed
    once per distinct (group, template, order) triple (``first`` holds each triple's first cell, ``codes`` each
    cell's triple) and the per-cell work is the item effect alone.
    """

    kind: str  #: "binary" or "ordinal"
    codes: np.ndarray  #: each cell's (group, template, order) triple
    first: pd.DataFrame  #: the index columns (g, t, o, ut, uo, cut row) of each triple's first cell
    item: np.ndarray  #: each cell's position in the flattened (item, method) effects
    unit_item: np.ndarray  #: each cell's unit x item deviation (``ui``)
    traits: int  #: number of traits
    units: int  #: number of units
    methods: int  #: number of methods
    method: np.ndarray  #: per triple: the method's position in :attr:`Design.methods`
    trait: np.ndarray  #: per triple: the trait's position among the traits
    unit: np.ndarray  #: per triple: the unit's position in :attr:`Design.units`
    n_items: np.ndarray  #: per triple: items its trait x method was asked
    n_unit_items: np.ndarray  #: per triple: items its unit x trait x method was asked
    own_effects: np.ndarray  #: per triple: 1.0 where its method has each unit's own deviations, else 0.0

    @classmethod
    def of(cls, design: Design, kind: str) -> CellIndex:
        """The index of ``design``'s binary or ordinal (``kind``) cells."""
        cells = design.binary if kind == "binary" else design.ordinal
        g, i, m = cells["g"].to_numpy(), cells["i"].to_numpy(), cells["k_m"].to_numpy()
        t, o = cells["t"].to_numpy(dtype=int), cells["o"].to_numpy(dtype=int)
        codes, _ = pd.factorize(pd.MultiIndex.from_arrays([g, t, o]))
        _, first = np.unique(codes, return_index=True)
        traits = sorted(set(design.item_traits()))
        t_code = cells[design.columns.trait].astype(str).map({name: k for k, name in enumerate(traits)}).to_numpy()
        u_code = cells[design.columns.unit].astype(str).map({name: k for k, name in enumerate(design.units)})
        u_code = u_code.to_numpy()
        n_items = pd.Series(i).groupby([t_code, m]).transform("nunique").to_numpy()
        n_unit_items = pd.Series(i).groupby([u_code, t_code, m]).transform("nunique").to_numpy()
        own_effects = cells[design.columns.method].isin(design.unit_methods).to_numpy(dtype=float)
        index_cols = ["g", "t", "o", "ut", "uo", *(c for c in ("c_m", "c_um") if c in cells)]
        return cls(
            kind=kind,
            codes=codes,
            first=cells.iloc[first][index_cols].astype(int).reset_index(drop=True),
            item=i * len(design.methods) + m,
            unit_item=cells["ui"].to_numpy(dtype=int),
            traits=len(traits),
            units=len(design.units),
            methods=len(design.methods),
            method=m[first],
            trait=t_code[first],
            unit=u_code[first],
            n_items=n_items[first],
            n_unit_items=n_unit_items[first],
            own_effects=own_effects[first],
        )


def cell_scores(
    idata: object, index: CellIndex, *, new_item: bool = False, draws: slice = slice(None), seed: int = 0
) -> np.ndarray:
    """SC draws ``(chain, draw, cell)`` of each binary or ordinal design cell of ``index`` (:class:`CellIndex`), for
    the posterior draws ``draws`` of each chain (all by default).

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

    def post(name: str) -> np.ndarray:
        return _arviz.posterior_array(idata, name, draws)

    first = index.first
    names = _arviz.posterior_names(idata)
    own = "tmpl_unit" in names  # each unit's own deviations (methods several units answered)
    # the linear predictor without the item effect, once per (group, template, order) triple
    eta = post("mu_b" if index.kind == "binary" else "mu_o")[..., first["g"]]
    eta += post("tmpl")[..., first["t"]] + post("ords")[..., first["o"]]
    if own:
        eta += post("tmpl_unit")[..., first["ut"]] + post("ords_unit")[..., first["uo"]]
    if index.kind == "binary":
        cut = None
    elif "cut_unit" in names:
        cut = post("cut_unit")[..., first["c_um"], :]
    else:
        cut = post("cut")[..., first["c_m"], :]
    if not new_item:
        item = post("b_item").reshape(*eta.shape[:2], -1)[..., index.item]
        if own:
            item += post("item_unit")[..., index.unit_item]
        if cut is None:
            return _side_share(item + eta[..., index.codes])
        above, below = eta - cut[..., 2], cut[..., 1] - eta
        return _side_share(above[..., index.codes] + item, below[..., index.codes] - item)
    sd_all = _arviz.posterior_array(idata, "chol_stds")
    sd = sd_all[:, draws][..., index.method]  # sd_all whole: its shape sizes the draws of z below
    # the mean of the items asked, relative to the item distribution's: correlated across methods as the item
    # effects are (LKJ), one draw per posterior draw and trait
    corr = post("chol_corr")
    chol = np.linalg.cholesky(corr + 1e-9 * np.eye(corr.shape[-1]))
    # drawn for every posterior draw and then sliced, so a slice of draws gets the numbers the whole would;
    # (chain, draw, method, trait)
    z = np.random.default_rng(seed).standard_normal((*sd_all.shape, index.traits))[:, draws]
    w = np.einsum("cdij,cdjt->cdit", chol, z)
    shift = sd * w[..., index.method, index.trait] / np.sqrt(index.n_items)
    if own:  # a new item's own deviation for this unit, and these items' mean of it, as for the shared effect
        unit_sd = _arviz.posterior_array(idata, "sigma_item_unit", draws)[..., None] * index.own_effects
        z_unit = np.random.default_rng([seed, 1]).standard_normal(
            (*sd_all.shape[:2], index.units, index.methods, index.traits)
        )[:, draws]
        shift = shift + unit_sd * z_unit[..., index.unit, index.method, index.trait] / np.sqrt(index.n_unit_items)
        sd = np.sqrt(sd**2 + unit_sd**2)
    nodes = (eta - shift)[..., None] + np.sqrt(2.0) * sd[..., None] * _GH_NODES
    if cut is None:
        share = _side_share(nodes)
    else:
        share = _side_share(nodes - cut[..., 2, None], cut[..., 1, None] - nodes)
    return ((share * _GH_WEIGHTS).sum(axis=-1) / np.sqrt(np.pi))[..., index.codes]


#: Most values (chains x draws x cells x quadrature nodes) one slice of :func:`cell_scores` holds: 2^24 doubles,
#: 128 MB. A large imported study (24,000 cells, 4000 draws, 20 nodes) would otherwise need 15 GB at once.
_CHUNK_VALUES = 2**24


def _draw_slices(idata: object, cells: int, per_cell: int) -> list[slice]:
    """Slices of each chain's draws small enough that ``chains x draws x cells x per_cell`` stays within
    :data:`_CHUNK_VALUES`."""
    chains, n_draws = _arviz.posterior_array(idata, "tmpl").shape[:2]
    step = max(1, _CHUNK_VALUES // max(1, chains * cells * per_cell))
    return [slice(start, start + step) for start in range(0, n_draws, step)]


def _mean_weights(
    g: np.ndarray, n_groups: int, mask: np.ndarray | None = None, weight: np.ndarray | None = None
) -> np.ndarray:
    """The ``(cell, group)`` matrix that takes each group's weighted mean of its cells (optionally only those in
    ``mask``; equal weights unless ``weight``); a group without such cells gets 0."""
    weights = np.zeros((len(g), n_groups))
    keep = np.ones(len(g), dtype=bool) if mask is None else mask
    weights[np.flatnonzero(keep), g[keep]] = 1.0 if weight is None else weight[keep]
    with np.errstate(invalid="ignore"):
        weights /= weights.sum(axis=0, keepdims=True)
    return np.nan_to_num(weights)


def _group_means(
    idata: object, design: Design, kind: str, weights: Sequence[np.ndarray], *, new_item: bool = False, seed: int = 0
) -> list[np.ndarray]:
    """For each ``(cell, group)`` matrix of ``weights`` (:func:`_mean_weights`), the groups' weighted means of the
    cells' SC draws (:func:`cell_scores`), ``(chain, draw, group)``: one pass over the draws, in slices."""
    index = CellIndex.of(design, kind)
    per_cell = len(_GH_NODES) if new_item else 1
    parts: list[list[np.ndarray]] = [[] for _ in weights]
    for part in _draw_slices(idata, len(index.codes), per_cell):
        values = cell_scores(idata, index, new_item=new_item, draws=part, seed=seed)
        for out, w in zip(parts, weights, strict=True):
            out.append(values @ w)
    return [np.concatenate(p, axis=1) for p in parts]


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
    return _scores(idata, design, new_item=new_item, seed=seed, reversed_order=reversed_order)[0]


def _scores(
    idata: object,
    design: Design,
    *,
    new_item: bool = False,
    seed: int = 0,
    reversed_order: Callable[[str], bool] | None = None,
    acquiescence: bool = False,
) -> tuple[dict[tuple[str, str, str], np.ndarray], dict[tuple[str, str, str], np.ndarray]]:
    """:func:`group_scores` and, with ``acquiescence`` (and ``reversed_order``), from the same pass over the draws,
    the acquiescence index draws of the Likert groups asked both a statement and its reversal.

    The acquiescence index is the mean of P(agree | a side is taken) over the stereotype statements and over their
    reversals, each equally weighted over their cells: 0.5 for a responder whose agreement follows the content, 1
    for one who agrees with everything (:data:`bias_validity.psychometrics.estimands.ESTIMANDS` ``[ACQUIESCENCE]``).
    On a reversed cell, agreeing is the keyed rating's disagreeing, so its agreement is ``1 - SC``.
    """
    out: dict[tuple[str, str, str], np.ndarray] = {}
    agree: dict[tuple[str, str, str], np.ndarray] = {}
    mask = design.item_mask()
    parts = [("binary", design.binary, design.binary_groups), ("ordinal", design.ordinal, design.ordinal_groups)]
    for kind, cells, groups in parts:
        if len(cells) == 0:
            continue
        g = cells["g"].to_numpy()
        weights = [_mean_weights(g, len(groups), weight=answer_weights(design, kind, reversed_order))]
        both: list[int] = []
        if kind == "ordinal" and acquiescence and reversed_order is not None:
            flipped = cells[design.columns.order].astype(str).map(reversed_order).to_numpy(dtype=bool)
            weights += [_mean_weights(g, len(groups), ~flipped), _mean_weights(g, len(groups), flipped)]
            both = sorted(set(g[flipped]) & set(g[~flipped]))
        sc, *polarities = _group_means(idata, design, kind, weights, new_item=new_item, seed=seed)
        for j, key in enumerate(map(tuple, groups.to_numpy())):
            if new_item and not mask[design.methods.index(key[2])]:
                continue
            out[key] = sc[..., j]
        for j in both:
            plain, keyed_reversed = polarities[0][..., j], polarities[1][..., j]
            agree[tuple(groups.to_numpy()[j])] = 0.5 * (plain + 1.0 - keyed_reversed)
    return out, agree


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
    polarities get an ``acquiescence`` row (:func:`_scores`). ``seed`` seeds the new-item SCs' draws of
    the items' mean (:func:`cell_scores`).
    """
    sc, agree = _scores(idata, design, reversed_order=reversed_order, acquiescence=True)
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
    for (u, t, m), v in agree.items():
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
