"""The hierarchical PyMC model: binomial cells, cumulative-logit Likert cells and Gaussian scores sharing item effects.

One joint model so that the item effects of every method live in one correlation matrix (LKJ prior): the posterior
correlation between the implicit and the log-probability item effects is the latent, disattenuated convergent
validity.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

import numpy as np
import pandas as pd

from bias_validity.psychometrics.bayes._pymc import pm, pt
from bias_validity.psychometrics.bayes.design import Design
from bias_validity.psychometrics.bayes.deviation_spread import deviation_spread, level_logits
from bias_validity.psychometrics.bayes.likelihoods import Gathered, binomial_logit, cumulative_logit_counts

__all__ = ["build_model", "shared_centring"]


def build_model(
    design: Design,
    *,
    lkj_eta: float = 2.0,
    prior_scale: float = 1.0,
    non_centred: Collection[str] = (),
    fused: bool = True,
) -> pm.Model:
    """Build the joint hierarchical model of one study.

    Parameters
    ----------
    design : Design
        Indexed cells from :func:`bias_validity.psychometrics.bayes.index_design`.
    lkj_eta : float, default 2.0
        Shape of the LKJ prior on the item-effect correlation matrix (1 is uniform; 2 mildly favours small
        correlations).
    prior_scale : float, default 1.0
        Factor on the scale of every top-level prior (method means, spreads, item SDs, cutpoints): not a modelling
        choice but the knob simulation-based calibration turns to show that it detects a prior off by this factor.
    non_centred : collection of str, optional
        Families of shared effects drawn non-centred whatever information their answers carry: ``"tmpl"``
        (templates), ``"ords"`` (orders). What a fit asks for after divergences at the neck of their funnel
        (:func:`bias_validity.psychometrics.bayes.funnels.funnel_necks`); the model is the same, its geometry not.
    fused : bool, default True
        Evaluate the count cells' log-density with the fused kernels of
        :mod:`bias_validity.psychometrics.bayes.cell_kernels` (numba: nutpie's and PyMC's samplers); False keeps
        PyTensor's own graph, which JAX backends (numpyro) need. The same density either way.

    Returns
    -------
    pymc.Model
        Free variables: ``beta`` (method logit mean, binary methods), ``tau_b``/``z_b`` (group spread and
        offsets), ``tau_o``/``z_o`` (or ``z_o_mean`` and ``z_o_deviation``, :func:`_ordinal_offsets`) and
        ``cut_ordered`` (ordinal; ``cut`` is its sorted copy), ``a_s``/``sigma_s`` (scores), ``chol`` (LKJ Cholesky
        factor with per-method item SDs), ``z_item_<method>`` (item contrasts), ``sigma_tmpl``/``z_tmpl``,
        ``sigma_ord``/``z_ord``. Observed data are ``pm.Data`` containers ``k``, ``n``, ``likert_counts`` and
        ``score_z`` so a compiled model can be refitted on new data of the same design.

    Notes
    -----
    For a binary cell ``c`` of group ``g`` (unit x trait x method ``m``), item ``i``, template ``t`` and order
    ``o``: ``k_c ~ Binomial(n_c, logistic(eta_c))`` with
    ``eta_c = beta_m + tau_m z_g + b_{i,m} + s_T z_t + s_O z_o``; item effects ``b_i = L z_i`` with
    ``L L' = diag(sd) R diag(sd)``, ``R ~ LKJ(eta)``, ``sd_m ~ Gamma(2, 2)`` (zero-avoiding [3]_: with two items
    per dimension the data do not exclude a zero item SD, and under a half-normal prior one chain in four on the demo
    store (seed 2) drifted into the funnel's neck, item SDs 0.5 -> 0.05, R-hat 1.15; under Gamma(2, 2) the step
    size doubled and every seed mixed).
    Item effects are centred within each trait and template and order effects within each method (sum-to-zero), so
    they cannot trade off with the group and method means (a ridge that slowed mixing); the correlation of item
    effects is thus the correlation of within-trait item deviations across methods.
    Units (models) answer the same items and wordings in their own ways: where the design asks for it
    (``index_design``'s default, ``unit_effects=True``) and several units answered a method, each binary and
    Likert cell adds its unit's own deviations from the shared item, template and order effects
    (``+ b_{i,m,u} + t_{t,u} + o_{o,u}``, :func:`_unit_effects`), and each unit x Likert method its own spacing
    of the cutpoints (:func:`_unit_cutpoints`); a study of one unit has none, and is the model above.
    Item, template and order effects enter only for methods with at least two items (templates, orders), and a
    method measured in a single group gets no group spread: they would otherwise be unidentified and make
    divergences.
    A Likert cell has the same linear predictor without ``beta`` (the cutpoints carry the location) and
    ``counts_c ~ Multinomial(n_c, p)``, ``P(y <= j) = logistic(cut_{m,j} - eta_c)``. Both count likelihoods are
    :mod:`bias_validity.psychometrics.bayes.likelihoods`' closed forms without their data-only constants: on the
    paper-scale workload they halve the cost of a gradient (1.46 to 0.73 ms; the same posterior), and a Likert cell
    of one answer costs two softplus terms instead of one per cutpoint. The answers per cell are the design's: a refit
    swaps in new counts with the same totals per cell (as ``n`` of the binary cells stays).
    A score (standardised within method x template) is ``z ~ Normal(a_g + b_{i,m}, sigma_m)``,
    ``sigma_m ~ Gamma(2, 2)`` (zero-avoiding: its density vanishes at 0 [3]_): deterministic scores
    (log-probabilities, embedding effects) measure the same item effects without sampling noise.

    Parameterisation follows the data [1]_ [2]_: each group, template, order and item effect is drawn centred where
    its answers carry at least 9 times the prior's information (about 1/4 per answer), non-centred elsewhere
    (correlated item effects through the Cholesky factor's conditional normals, one method at a time); templates and
    orders, whose SD rests on a few contrasts, against the spread their levels show (:func:`_shared_weights`). A small
    demo is thus mostly non-centred and a paper-scale study centred: there the non-centred form took 250 leapfrog
    steps per draw against 31. Zero-sum effects (items within a trait, templates
    and orders within a method) are drawn in an orthonormal basis of the zero-sum subspace, so no direction is left
    to the prior alone. The posterior is the same either way; only the geometry NUTS sees changes.

    References
    ----------
    .. [1] Papaspiliopoulos, O., Roberts, G. O. & Skold, M. (2003). Non-centered parameterisations for hierarchical
       models and data augmentation. Bayesian Statistics 7, 307-326.
    .. [2] Gorinova, M., Moore, D. & Hoffman, M. (2020). Automatic reparameterisation of probabilistic programs.
       ICML, PMLR 119:3648-3657.
    .. [3] Chung, Y., Rabe-Hesketh, S., Dorie, V., Gelman, A. & Liu, J. (2013). A nondegenerate penalized
       likelihood estimator for variance parameters in multilevel models. Psychometrika 78(4), 685-709.
    """
    d = design
    n_m = len(d.methods)
    traits = d.item_traits()
    h_item = _zero_sum_basis(traits)
    coords = {
        "method": d.methods,
        "item": d.items,
        "template": d.templates,
        "order": d.orders,
        "item_contrast": list(range(h_item.shape[1])),
    }
    spread = deviation_spread(d)
    info = _information(d, spread, deviation_spread(d, reach=True))
    with pm.Model(coords=coords) as model:
        item_sd = {"alpha": 2.0, "beta": 2.0 / prior_scale}  # zero-avoiding Gamma(2, 2), see Notes
        if n_m > 1:
            chol, _, _ = pm.LKJCholeskyCov(
                "chol", n=n_m, eta=lkj_eta, sd_dist=pm.Gamma.dist(**item_sd, shape=n_m), compute_corr=True
            )
        else:  # one method: nothing to correlate, and LKJCholeskyCov cannot draw a 1 x 1 factor forward
            sd = pm.Deterministic("chol_stds", pm.Gamma("chol_sd", **item_sd, shape=1))
            pm.Deterministic("chol_corr", pt.ones((1, 1)))
            chol = sd[:, None]
        # item effects sum to zero within each trait (the group means carry the traits' levels), drawn in an
        # orthonormal basis of the zero-sum subspace: iid rows y ~ MvNormal(0, Sigma) give b = H y the law of centred
        # iid MvNormal effects, without the prior-only direction that centring afterwards leaves to the sampler
        if h_item.shape[1]:
            y_item = _correlated_effects(chol, _contrast_weights(h_item, info["item"]), d.methods)
            effects = _zero_sum(y_item, traits) * d.item_mask()
        else:  # one item per trait: no item effects
            effects = pt.zeros((len(d.items), n_m))
        b_item = pm.Deterministic("b_item", effects, dims=("item", "method"))
        flat_item = b_item.flatten()

        def item_positions(cells: pd.DataFrame) -> np.ndarray:
            # one flat index, not an (item, method) pair: a 1-d gather's gradient is a plain loop (3% faster)
            return cells["i"].to_numpy(dtype=int) * n_m + cells["k_m"].to_numpy(dtype=int)

        # template and order effects sum to zero within each method, in the same way (a method with one level has
        # none: its level is the method mean)
        sigma_tmpl, sigma_ord = (pm.HalfNormal(name, 0.5 * prior_scale) for name in ("sigma_tmpl", "sigma_ord"))
        shared = {k: w * 0.0 if k in non_centred else w for k, w in _shared_weights(d, info).items()}
        tmpl = _zero_sum_effects("tmpl", "template", d.templates, shared["tmpl"], sigma_tmpl)
        ords = _zero_sum_effects("ords", "order", d.orders, shared["ords"], sigma_ord)
        unit = _unit_effects(d, spread, prior_scale, {"ut": tmpl, "uo": ords, "ui": flat_item})

        def predictor(cells: pd.DataFrame, mean: pt.TensorVariable) -> tuple[pt.TensorVariable, Gathered | None]:
            """Each cell's linear predictor: its group's mean, the shared template, order and item effects and its
            unit's own deviations from them; and the same sum as a :data:`Gathered` for the fused kernels."""
            parts = [
                (mean, cells["g"].to_numpy()),
                (flat_item, item_positions(cells)),
                (tmpl, cells["t"].to_numpy()),
                (ords, cells["o"].to_numpy()),
                *((effect, cells[column].to_numpy()) for column, effect in unit.items()),
            ]
            eta = sum(effect[positions.astype(int)] for effect, positions in parts)
            return eta, _gathered(parts) if fused else None

        if len(d.binary):
            b = d.binary
            bm = np.array([d.methods.index(m) for m in d.binary_methods])
            g_method = d.binary_groups[d.columns.method].map({m: j for j, m in enumerate(d.binary_methods)}).to_numpy()
            beta = pm.Normal("beta", 0.0, 1.5 * prior_scale, shape=len(bm))
            tau_b = pm.HalfNormal("tau_b", 1.0 * prior_scale, shape=len(bm))
            pooled = _pooled(g_method)  # a method measured in one group has no spread: its mean is the method's
            offset = _partially_centred("z_b", beta[g_method], tau_b[g_method], _weights(info["gb"], 1.0) * pooled)
            mu_b = pm.Deterministic("mu_b", beta[g_method] + pooled * offset)
            eta, parts = predictor(b, mu_b)
            k = pm.Data("k", b["k"].to_numpy(dtype="int64"))
            n = pm.Data("n", b["n"].to_numpy(dtype="int64"))
            binomial_logit("y_binary", n, eta, observed=k, gathered=parts)

        if len(d.ordinal):
            o = d.ordinal
            n_levels = d.ordinal_counts.shape[1]
            g_method = d.ordinal_groups[d.columns.method].map({m: j for j, m in enumerate(d.ordinal_methods)})
            tau_o = pm.HalfNormal("tau_o", 1.0 * prior_scale, shape=len(d.ordinal_methods))
            g_ord = g_method.to_numpy()
            pooled = _pooled(g_ord)
            offset = _ordinal_offsets(tau_o, g_ord, _weights(info["go"], 1.0) * pooled, pooled, len(d.ordinal_methods))
            mu_o = pm.Deterministic("mu_o", pooled * offset)
            start = np.linspace(-2.0, 2.0, n_levels - 1)
            cut_ordered = pm.Normal(
                "cut_ordered",
                0.0,
                2.5 * prior_scale,
                shape=(len(d.ordinal_methods), n_levels - 1),
                transform=pm.distributions.transforms.ordered,
                initval=np.tile(start, (len(d.ordinal_methods), 1)),
            )
            # the transform orders the sampler's values only; forward draws (prior predictive, so SBC's truths) of
            # the same variable are iid and unsorted. Sorting is the identity on ordered values and turns iid draws
            # into the ordered prior's law (the order statistics), so both paths see one prior
            cut = pm.Deterministic("cut", pt.sort(cut_ordered, axis=-1))
            eta, parts = predictor(o, mu_o)
            counts = pm.Data("likert_counts", d.ordinal_counts.astype("int64"))
            if set(d.ordinal_methods) & set(d.unit_methods):  # each unit its own spacing of the cutpoints
                cut_unit = _unit_cutpoints(d, cut, prior_scale)
                rows = o["c_um"].to_numpy()
            else:
                cut_unit, rows = cut, o["c_m"].to_numpy()
            cumulative_logit_counts(
                "y_likert", d.ordinal_counts.sum(axis=1), cut_unit, rows, eta, observed=counts, gathered=parts
            )

        # a score method seen on one item only measures no item effect (and its lone score per group would make
        # the Gaussian likelihood unbounded as sigma -> 0), so it is left out
        s = d.scores[d.item_mask()[d.scores["k_m"].to_numpy(dtype=int)] > 0] if len(d.scores) else d.scores
        if len(s):
            sm = {m: j for j, m in enumerate(d.score_methods)}
            a_s = pm.Normal("a_s", 0.0, 1.0 * prior_scale, shape=len(d.score_groups))
            # zero-avoiding prior (Chung et al. 2013): with about one score per item the item effect can absorb
            # every score, and under a half-normal the noise SD then sinks to zero, a funnel that made all the
            # demo's divergences (their median sigma_s 0.05 against 0.69 over all draws, the embedding method's)
            sigma_s = pm.Gamma("sigma_s", alpha=2.0, beta=2.0 / prior_scale, shape=len(d.score_methods))
            mu_s = a_s[s["g"].to_numpy()] + flat_item[item_positions(s)]
            z = pm.Data("score_z", s["z"].to_numpy(dtype=float))
            pm.Normal("y_score", mu_s, sigma_s[s[d.columns.method].map(sm).to_numpy()], observed=z)
    return model


def _gathered(parts: list[tuple[pt.TensorVariable, np.ndarray]]) -> Gathered:
    """Effect vectors and each cell's position in each, as one vector and each cell's positions in it."""
    sizes = [effect.type.shape[0] or int(effect.shape[0].eval()) for effect, _ in parts]  # static where known
    offsets = np.cumsum([0, *sizes[:-1]])
    idx = np.column_stack(
        [positions.astype("int64") + offset for (_, positions), offset in zip(parts, offsets, strict=True)]
    )
    return pt.concatenate([effect for effect, _ in parts]), idx


def _unit_effects(
    design: Design, spread: dict[str, float], prior_scale: float, shared: dict[str, pt.TensorVariable]
) -> dict[str, pt.TensorVariable]:
    """Each unit's own deviations from the shared template, order and item effects, by cell column (``ut``, ``uo``,
    ``ui``); none for a study of one unit (its effects are the shared ones).

    A deviation ``~ Normal(0, sigma_<facet>_unit)`` (one SD per facet, shared by the methods, zero-avoiding
    Gamma(2, 2) prior [1]_) is constrained to sum to zero over the levels the unit was asked within each unit x
    method (templates, orders) or unit x trait x method (items), as the shared effects sum to zero within method or
    trait: the group means keep carrying the levels. It is drawn as ``n - 1`` contrasts per group through the
    orthonormal zero-sum transform (:func:`_ragged_zero_sum`; no dense basis of thousands of columns, and no
    direction of the prior alone: iid effects centred afterwards leave one per group, a funnel where they are drawn
    centred, which made divergences). Each contrast is drawn centred or non-centred by the information its answers
    carry against the facet's spread (:func:`_weights` with
    :func:`~bias_validity.psychometrics.bayes.deviation_spread.deviation_spread`, a classical estimate of the SD):
    a wording asked hundreds of times per unit whose units differ centred, an item asked once or twice, or a wording
    the units answer alike, non-centred.

    One SD per facet rather than per facet and method: in a sparse design each unit x method has one contrast per
    facet, so a per-method SD rests on two contrasts; on 4 sparse prior-predictive studies (4 chains x 500 + 500)
    per-method SDs made 238 divergences, one per facet 2. The estimated spread rather than the prior's 1: on the
    paper-scale workload, whose units share their wordings' effects (spread estimate 0.01), every wording and order
    deviation drawn centred is a funnel; 4 chains x 300 + 300 took 254.6 s at 84.9 leapfrog steps per draw with the
    prior's spread, 82.3 s at 17.9 with the estimate.

    Chosen by measurement (4 chains x 1000 draws at target acceptance 0.8, one attempt, on a 2-core machine under
    load): on a 4-model real-shaped study (:func:`bias_validity.simulate.real_shaped.simulate_real_shaped`, 3000
    answers) this form gave 0 divergences and min bulk ESS 707 in 213 s, against 101 divergences with half-normal SD
    priors, and 0 divergences but ESS 584 in 428 s with every deviation non-centred; on a 2-model study drawn
    without deviations (their SDs truly 0) 52 divergences, ESS 1782 in 146 s, against 314 with half-normal priors and
    62 (ESS 886, 384 s) non-centred: those a retry at a higher target acceptance removes. An earlier form that drew
    the unit's effect around the shared one before the zero-sum transform made it worse there: 264 divergences.

    A centred contrast is drawn around the contrast of its shared effects (:func:`_ragged_contrasts`), and the
    offset returned: the sampler then moves the unit's own total, which its answers pin, and a step in a shared
    effect does not drag every centred deviation of that level along; the prior is unchanged (a unit Jacobian).
    Measured with 4 chains x 1000 + 1000 at target 0.8, seed 0, one attempt, 2-core machine: on the 25,000-answer
    real-shaped study (all 96 wording deviations centred) 24 divergences and min bulk ESS 65 (``sigma_tmpl``) in
    437 s before, 0 divergences and min ESS 90 (a cutpoint; ``sigma_tmpl`` 223) in 459 s after; on a 6000-answer one,
    85 divergences at 110.7 leapfrog steps per draw and ESS 777 on ``sigma_tmpl`` in 285 s before, 3 at 95.9 and 1834
    in 231 s after. Non-centred contrasts are drawn as before (the 2-model study has no centred ones); there (seed 1)
    the kept form's 13 divergences sit at small template and order deviation SDs; drawing those deviations always
    non-centred (items still by information) moved the divergences to larger SDs and made 35; making them also sum to
    zero over the units that answered each wording or order (so the shared effect is the units' mean, no ridge
    between them) made 96, at both small and large deviation SDs.

    References
    ----------
    .. [1] Chung, Y., Rabe-Hesketh, S., Dorie, V., Gelman, A. & Liu, J. (2013). A nondegenerate penalized
       likelihood estimator for variance parameters in multilevel models. Psychometrika 78(4), 685-709.
    """
    out = {}
    for facet in _unit_facets(design):
        sigma = pm.Gamma(f"sigma_{facet.name}_unit", alpha=2.0, beta=2.0 / prior_scale)
        if len(facet.free):
            weights = _weights(facet.information[facet.free], spread[facet.column])
            # a centred deviation is drawn with its shared effect added (the unit's own total, which its answers pin),
            # so moving the shared effect does not move what the answers pin
            around = (
                _ragged_contrasts(shared[facet.column][facet.shared_level], facet.codes, facet.free)
                if weights.any()
                else 0.0
            )
            contrasts = _partially_centred(f"z_{facet.name}_unit", around, sigma, weights, shape=len(facet.free))
            effects = _ragged_zero_sum(contrasts, facet.codes, facet.free, facet.last)
        else:  # each unit asked one level per group: nothing deviates (and a variable of size 0 breaks ArviZ)
            effects = pt.zeros(len(facet.codes))
        # one trailing zero: the deviation of cells whose method no second unit answered
        out[facet.column] = pm.Deterministic(f"{facet.name}_unit", pt.concatenate([effects, pt.zeros(1)]))
    return out


@dataclass(frozen=True)
class _UnitFacet:
    """The layout of one facet's unit deviations: cell column, name, group code of each deviation, free and last
    positions of the zero-sum groups, the answers' information on each, and its shared effect's index."""

    column: str
    name: str
    codes: np.ndarray
    free: np.ndarray
    last: np.ndarray
    information: np.ndarray
    shared_level: np.ndarray


def _unit_facets(design: Design) -> list[_UnitFacet]:
    """The layout of the units' own template, order and item deviations (:func:`_unit_effects`); none for a study
    of one unit. Depends on the design's cells and trial counts, not on the answers."""
    methods = design.unit_methods
    if not methods:
        return []
    cells = pd.concat([design.binary, design.ordinal], ignore_index=True)
    weight = np.concatenate([0.25 * design.binary["n"].to_numpy(float), 0.25 * design.ordinal_counts.sum(axis=1)])
    keep = cells[design.columns.method].isin(methods).to_numpy()
    cells, weight = cells[keep], weight[keep]
    out = []
    for column, labels, name in (
        ("ut", design.unit_templates, "tmpl"),
        ("uo", design.unit_orders, "ords"),
        ("ui", design.unit_items, "item"),
    ):
        parts = [label.split("|", 2) for label in labels]
        if name == "item":  # items sum to zero within unit x trait x method
            trait = dict(zip(cells["ui"].astype(int), cells[design.columns.trait].astype(str), strict=True))
            group = [f"{u}|{m}|{trait[j]}" for j, (u, m, _) in enumerate(parts)]
        else:
            group = [f"{u}|{m}" for u, m, _ in parts]
        codes, _ = pd.factorize(pd.Series(group))
        free, last = _zero_sum_layout(codes)
        level = np.zeros(len(labels), dtype=int)
        level[cells[column].to_numpy(dtype=int)] = _shared_level(cells, column, len(design.methods))
        information = np.bincount(cells[column].to_numpy(dtype=int), weights=weight, minlength=len(labels))
        out.append(_UnitFacet(column, name, codes, free, last, information, level))
    return out


def unit_centring(design: Design) -> dict[str, np.ndarray]:
    """Which of the units' own deviation contrasts :func:`build_model` draws centred (1.0) or non-centred (0.0), per
    cell column (``ut``, ``uo``, ``ui``), for this design and its answers.

    The centring (:func:`_weights`) weighs each contrast's information against the facet's spread, which
    :func:`~bias_validity.psychometrics.bayes.deviation_spread.deviation_spread` estimates from the answers: two data
    sets of one design may get different parameterisations of the same model (the prior is the same).
    """
    spread = deviation_spread(design)
    return {f.column: _weights(f.information[f.free], spread[f.column]) for f in _unit_facets(design)}


def shared_centring(design: Design) -> dict[str, np.ndarray]:
    """How :func:`build_model` draws each contrast of the shared template (``tmpl``) and order (``ords``) effects for
    this design and its answers, unless told to draw them non-centred: centred (1.0), non-centred (0.0) or partially
    centred in between (:func:`_shared_weights`)."""
    return _shared_weights(design, _information(design, deviation_spread(design), deviation_spread(design, reach=True)))


def _shared_weights(design: Design, info: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Centring of the shared template (``tmpl``) and order (``ords``) contrasts: the optimal partial centring
    ``w = I s^2 / (I s^2 + 1)`` (:func:`_weights`) of each contrast's information ``I`` against the spread ``s`` of its
    family's effects as far as the answers show it (:func:`_family_spread`, at most the prior's scale 0.5), kept
    between the two forms where it falls within (0.1, 0.9), rounded to them outside; never more centred than at the
    prior's scale (where :func:`_weights` leaves a contrast non-centred, so does this).

    A family has a few contrasts (2-4 orders per method), too few to pull its SD's posterior away from zero unless
    they stand clear of their noise; where they do not, centred contrasts make a funnel at the SD's neck, and
    non-centred ones a funnel where the SD is large and the answers pin the effects. Judged at the prior's scale as
    other effects are, 4-model real-shaped studies drew their orders centred (information 43-53 per contrast) and
    diverged at small ``sigma_ord``: 8 of 12 replications of ``bench/fit.py --part real-coverage`` and one of two
    25,000-answer studies. Drawn non-centred, both 25,000-answer studies (``I s^2`` 2.52 and 0.94) made one
    divergence each (4 chains x 1000 + 1000 at target 0.8) and a replication (seed 8) 31; at ``w = 0.5`` both made
    none (247 and 254 s, 31 leapfrog steps per draw), though the second's ``sigma_ord`` reached 0.016 (5% quantile).
    The paper-scale workload (``I s^2`` 55 for orders, 225 for templates) and sparse studies (near 0) keep the
    rounded forms they had. Partial weights made thousands of divergences for the demo's group effects
    (:func:`_weights`), whose information is a few answers, and divergences for the real-shaped studies' wordings
    (information about 3 per contrast, their units' own deviations being large): weighted 0.1-0.5 by their spread
    instead of non-centred, replication seed 0 made 2 at ``sigma_tmpl`` 0.003 (median 0.51); hence the prior's scale
    bounds ``w``.
    """
    out = {}
    for family, labels, key in (("tmpl", design.templates, "t"), ("ords", design.orders, "o")):
        h = _zero_sum_basis(_method_of(labels))
        if not h.shape[1]:
            out[family] = np.zeros(0)
            continue
        information = (h**2).T @ info[key]
        x = information * _family_spread(h.T @ level_logits(design, key, len(labels)), information) ** 2
        w = x / (x + 1.0)
        out[family] = np.minimum(np.where(w >= 0.9, 1.0, np.where(w <= 0.1, 0.0, w)), _weights(information, 0.5))
    return out


def _family_spread(contrasts: np.ndarray, information: np.ndarray) -> float:
    """Moment estimate of the SD of a family of zero-sum effects from the contrasts of their levels' logits and the
    information on each (its noise variance ``1 / I``): ``sqrt(mean(c^2 - 1 / I))`` over the informed contrasts,
    within [0, 0.5] (0.5: the scale of the SD's half-normal prior).

    It decides a centring, as the posterior of the SD would: the few contrasts of a family of orders (2-4 per
    method) cannot pull that posterior away from zero unless they stand well clear of their noise, and where they do
    not, centred effects make a funnel at its neck (see :func:`_zero_sum_effects`).
    """
    informed = information > 0
    if not informed.any():
        return 0.5
    excess = contrasts[informed] ** 2 - 1.0 / information[informed]
    return float(np.sqrt(np.clip(excess.mean(), 0.0, 0.25)))


def _zero_sum_layout(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Of elements grouped by ``codes``: the positions of the free ones (all but the last of each group) and the
    last position of each group (code order)."""
    last = np.full(codes.max() + 1 if len(codes) else 0, -1)
    np.maximum.at(last, codes, np.arange(len(codes)))
    free = np.setdiff1d(np.arange(len(codes)), last)
    return free, last


def _ragged_zero_sum(y: pt.TensorVariable, codes: np.ndarray, free: np.ndarray, last: np.ndarray) -> pt.TensorVariable:
    """Effects summing to zero within each group (``codes``) from ``n_g - 1`` free contrasts per group, as
    :class:`pymc.ZeroSumNormal`'s orthonormal transform builds them (iid contrasts give the zero-sum Normal's law, no
    direction left to the prior alone), for groups of unequal sizes; ``y`` holds one contrast per row (its columns,
    if any, are transformed alike).

    With ``S_g`` the sum of a group's contrasts and ``n_g`` its size, ``c_g = S_g / (sqrt(n_g) + n_g)``: each free
    element is ``y - c_g`` and the group's last ``c_g - S_g / sqrt(n_g) - c_g``; a group of one is zero. Linear in
    ``y`` at O(n) cost: the dense basis (:func:`_zero_sum_basis`) as a matrix product took 18% of a gradient on a
    real-shaped study of 838 items.
    """
    n = np.bincount(codes).astype(float)
    trailing = (slice(None),) + (None,) * (y.ndim - 1)  # broadcast per-group scalars over y's columns
    sums = pt.inc_subtensor(pt.zeros((len(n), *y.shape[1:]))[codes[free]], y)
    norm = sums / (np.sqrt(n) + n)[trailing]
    out = pt.zeros((len(codes), *y.shape[1:]))
    out = pt.set_subtensor(out[free], y - norm[codes[free]])
    return pt.set_subtensor(out[last], -sums / np.sqrt(n)[trailing])


def _ragged_contrasts(x: pt.TensorVariable, codes: np.ndarray, free: np.ndarray) -> pt.TensorVariable:
    """The contrasts whose :func:`_ragged_zero_sum` is ``x`` centred within each group (``codes``): the inverse of
    that map on zero-sum vectors. With ``x_c`` the centred values and ``T_g`` the sum of a group's free ones,
    ``y = x_c + T_g / (sqrt(n_g) + 1)`` on the free positions."""
    n = np.bincount(codes).astype(float)
    mean = pt.inc_subtensor(pt.zeros(len(n))[codes], x) / n
    centred = x[free] - mean[codes[free]]
    sums = pt.inc_subtensor(pt.zeros(len(n))[codes[free]], centred)
    return centred + (sums / (np.sqrt(n) + 1.0))[codes[free]]


def _shared_level(cells: pd.DataFrame, column: str, methods: int) -> np.ndarray:
    """Index, in the shared effect's vector (templates, orders, items x methods flattened), of each cell's level of
    the facet whose unit deviations ``column`` (``ut``, ``uo``, ``ui``) indexes."""
    if column == "ui":
        return cells["i"].to_numpy(dtype=int) * methods + cells["k_m"].to_numpy(dtype=int)
    return cells[{"ut": "t", "uo": "o"}[column]].to_numpy(dtype=int)


def _zero_sum(y: pt.TensorVariable, groups: list[str]) -> pt.TensorVariable:
    """:func:`_ragged_zero_sum` of contrasts ``y`` over elements grouped by the labels ``groups``."""
    codes, _ = pd.factorize(pd.Series(groups, dtype=object))
    return _ragged_zero_sum(y, codes, *_zero_sum_layout(codes))


def _ordinal_offsets(
    tau: pt.TensorVariable, method: np.ndarray, weights: np.ndarray, pooled: np.ndarray, methods: int
) -> pt.TensorVariable:
    """Offsets ``~ Normal(0, tau_m)`` of the Likert groups (``method``: each group's index among the ``methods``
    ordinal methods), drawn centred or not as ``weights`` say (:func:`_partially_centred`), except in a pooled
    method whose groups are all drawn non-centred: there as the groups' mean ``tau_m z / sqrt(G_m)`` plus deviations
    summing to zero over its ``G_m`` groups (``tau_m`` times :func:`_ragged_zero_sum` of iid standard contrasts),
    which is the same prior.

    The Likert groups have no method mean (the cutpoints carry the location), so the cutpoints and the mean of a
    method's offsets can move together without changing the likelihood: a ridge only their priors close. Drawn
    group by group, the ridge runs along every offset at once, and where they are non-centred it narrows with
    ``tau``; drawn as a mean and zero-sum deviations it is one variable. Measured on the demo store (every Likert
    group non-centred; 4 chains x 1000 + 1000 at target 0.8, one attempt, a 2-core machine under load): the gate
    passed at 7 of fit seeds 0-9 group by group (seed 4: a divergence; 6 and 9: quantities short of ESS 400) and at
    9 as mean and deviations (seed 5: short of ESS); on an earlier collection of the store, seed 4's explicit item
    SD and cutpoints mixed slowly group by group (the least ESS of a free variable, bulk or tail, 13; R-hat 1.044 on
    an SC) and not as mean and deviations (411). Where the groups are drawn centred their answers pin each offset
    against the cutpoints and the ridge is the same in both forms; on the real-shaped test study the split form
    ended with a divergence at 2000 draws where the group-by-group one had none, so it is kept for methods whose
    groups are all non-centred.
    """
    split = np.array([bool(pooled[method == m].all() and not weights[method == m].any()) for m in range(methods)])
    out = pt.zeros(len(method))
    grouped = np.flatnonzero(~split[method])
    if len(grouped):
        offset = _partially_centred("z_o", 0.0, tau[method[grouped]], weights[grouped], shape=len(grouped))
        out = pt.set_subtensor(out[grouped], offset)
    if split.any():
        members = np.flatnonzero(split[method])
        codes, levels = pd.factorize(method[members])
        free, last = _zero_sum_layout(codes)
        scale = tau[levels]
        mean = scale * pm.Normal("z_o_mean", 0.0, 1.0, shape=len(levels)) / np.sqrt(np.bincount(codes))
        deviation = _ragged_zero_sum(pm.Normal("z_o_deviation", 0.0, 1.0, shape=len(free)), codes, free, last)
        out = pt.set_subtensor(out[members], mean[codes] + scale[codes] * deviation)
    return out


def _unit_cutpoints(design: Design, cut: pt.TensorVariable, prior_scale: float) -> pt.TensorVariable:
    """Cutpoints of each unit x ordinal method (rows of ``design.unit_ordinal``): the shared cutpoints of the method
    with each gap between neighbours scaled by ``exp(sigma_cut_unit z)``, then recentred on the shared cutpoints'
    mean.

    A unit thus gets its own use of the scale's middle and ends (a wider gap around the midpoint: more neutral
    ratings) while its location stays with the group means, which the Likert groups share with the binary ones;
    agreeing with everything (acquiescence) is the unit's own order effect, reversals being orders. Gaps stay
    positive, so the cutpoints stay ordered.
    """
    rows = [label.split("|", 1) for label in design.unit_ordinal]
    method = np.array([design.ordinal_methods.index(m) for _, m in rows])
    varies = np.array([float(m in design.unit_methods) for _, m in rows])[:, None]  # one unit: the shared spacing
    n_cut = cut.type.shape[1]
    sigma = pm.Gamma("sigma_cut_unit", alpha=2.0, beta=4.0 / prior_scale)
    z = pm.Normal("z_cut_unit", 0.0, 1.0, shape=(len(rows), n_cut - 1))
    gaps = (cut[:, 1:] - cut[:, :-1])[method] * pt.exp(sigma * z * varies)
    steps = pt.concatenate([pt.zeros((len(rows), 1)), pt.cumsum(gaps, axis=1)], axis=1)
    centre = cut.mean(axis=1)[method]
    own = steps - steps.mean(axis=1, keepdims=True) + centre[:, None]
    return pm.Deterministic("cut_unit", pt.specify_shape(own, (len(rows), n_cut)))


def _method_of(labels: list[str]) -> list[str]:
    """The method part of "method|level" labels."""
    return [label.split("|", 1)[0] for label in labels]


def _zero_sum_basis(groups: list[str]) -> np.ndarray:
    """Orthonormal basis ``H`` (n x (n - groups)) of the vectors that sum to zero within each group: the columns of
    the linear map :func:`_zero_sum` (``H y``), so ``H H'`` is the centring projection ``x - mean(x over the
    group)``; a group of one member has no column. The model applies the map itself; ``H`` gives each contrast's
    information (:func:`_contrast_weights`).
    """
    free = len(groups) - len(set(groups))
    if free == 0:
        return np.zeros((len(groups), 0))
    return _zero_sum(pt.as_tensor(np.eye(free)), groups).eval()


def _zero_sum_effects(name: str, dim: str, labels: list[str], weights: np.ndarray, sigma: object) -> object:
    """Effects of "method|level" labels, ``Normal(0, sigma)`` constrained to sum to zero within each method.

    Drawn as contrasts in the basis of :func:`_zero_sum_basis`, centred or not as ``weights`` say
    (:func:`_shared_weights`: the information along each contrast's direction, ``sum_i h_i^2 I_i`` for a diagonal
    Fisher information, against the family's spread).

    Their SD rests on a few contrasts (a method has a handful of wordings and orders), so where the effects are small
    against their answers' noise its posterior reaches towards zero, and centred contrasts make a funnel there that
    the information alone cannot foresee: on the 4-model real-shaped study of 6,000 answers (``bench/fit.py --part
    real-coverage``, 4 units, information 43.5 per order contrast, centred at the prior's spread) every divergence sat
    at small ``sigma_ord`` (seed 1: 15, their median 0.027 against 0.158 over all draws), and seeds 0 and 1 missed the
    gate even at target acceptance 0.99 (495 and 511 s). Non-centred everywhere, the paper-scale workload with 10
    times the answers diverged at large ``sigma_ord`` and ``sigma_tmpl`` (its units share their effects, whose
    deviations' SDs sink to 0.004, so the answers pin the shared effects). Hence the weights read the family's spread
    from the answers (:func:`_shared_weights`); where a funnel's neck still shows in the divergences, the fit
    redraws the family non-centred (``build_model(non_centred=...)``, in ``fit_to_gate``'s retry loop).
    """
    groups = _method_of(labels)
    h = _zero_sum_basis(groups)
    if h.shape[1] == 0:  # every method seen at one level only
        return pm.Deterministic(name, pt.zeros(len(labels)), dims=dim)
    contrasts = _partially_centred(f"z_{name}", 0.0, sigma, weights, shape=h.shape[1])
    return pm.Deterministic(name, _zero_sum(contrasts, groups), dims=dim)


def _pooled(group_method: np.ndarray) -> np.ndarray:
    """1.0 for each group whose method is measured in at least two groups, else 0.0 (its mean is the method's)."""
    counts = np.bincount(group_method)
    return (counts[group_method] > 1).astype(float)


def _information(design: Design, spread: dict[str, float], reach: dict[str, float]) -> dict[str, np.ndarray]:
    """Approximate Fisher information on the logit scale that the data give each effect.

    A valid answer carries about 1/4 (a Bernoulli logit at p = 1/2; used for Likert answers too) and a standardised
    score about 1. Keys: ``gb``/``go`` (binary/ordinal groups), ``t`` (templates), ``o`` (orders) and ``item``
    (items x methods). Where units have their own deviations (:func:`_unit_effects`), the answers of unit ``u``
    inform the shared effect only through ``effect + deviation_u``: its information is
    ``sum_u 1 / (1 / I_u + s^2)`` with ``I_u`` the unit's and ``s^2`` the deviations' variance (the square of the
    facet's ``spread``, from :func:`~bias_validity.psychometrics.bayes.deviation_spread.deviation_spread`), at most
    ``units / s^2`` however many answers there are.

    For templates and orders ``s`` is the spread's reach, the largest SD the answers do not rule out
    (``deviation_spread(design, reach=True)``). A unit x method holds a contrast or two of them, so where the units
    answer alike their SD's posterior stays well above the classical estimate: on the data-rich 2-unit study of
    ``tests/test_bayes_model.py``, drawn without deviations, the estimate is 0.01 but the posterior mean SD 0.17;
    informed at 0.01 the shared effects there were drawn centred and diverged at small ``sigma_ord`` (4 chains x
    1000 + 1000: 35 divergent transitions at target acceptance 0.8, 11 at 0.95). Its reach, 0.14, gives 80 per
    contrast, against which its orders stand too little clear to be centred (:func:`_shared_weights`). A fixed least
    spread (0.266, the 10% quantile of the SD's prior) did the same there but also on the paper-scale workload, whose
    six units share their effects with 20 answers per cell (reach 0.03, the SD's posterior median 0.015): 84 per
    order contrast instead of 3,194. Items, with dozens of contrasts per unit, keep the classical spread: drawing them
    non-centred there took 53.6 leapfrog steps per draw against 32.6.
    """
    d = design
    out = {
        "gb": np.zeros(len(d.binary_groups)),
        "go": np.zeros(len(d.ordinal_groups)),
        "t": np.zeros(len(d.templates)),
        "o": np.zeros(len(d.orders)),
        "item": np.zeros((len(d.items), len(d.methods))),
    }
    parts = [
        (d.binary, 0.25 * d.binary["n"].to_numpy(dtype=float), "gb"),
        (d.ordinal, 0.25 * d.ordinal_counts.sum(axis=1).astype(float), "go"),
        (d.scores, np.ones(len(d.scores)), None),
    ]
    for cells, w, group in parts:
        if not len(cells):
            continue
        item = (cells["i"].to_numpy(dtype=int), cells["k_m"].to_numpy(dtype=int))
        if group is None:  # scores carry no template, order, pooled group effect or unit deviation
            np.add.at(out["item"], item, w)
            continue
        np.add.at(out[group], cells["g"].to_numpy(dtype=int), w)
        unit = cells[d.columns.unit].astype(str).to_numpy()
        own = cells[d.columns.method].isin(d.unit_methods).to_numpy()
        for key, column, index in (
            ("t", "ut", (cells["t"].to_numpy(dtype=int),)),
            ("o", "uo", (cells["o"].to_numpy(dtype=int),)),
            ("item", "ui", item),
        ):
            s = (reach if key in ("t", "o") else spread).get(column, 0.0)
            variance = np.where(own, s**2, 0.0)
            per_unit = pd.DataFrame({"w": w, "v": variance}).groupby([unit, *index]).agg(w=("w", "sum"), v=("v", "max"))
            shared = 1.0 / (1.0 / per_unit["w"] + per_unit["v"])
            where = tuple(per_unit.index.get_level_values(k + 1).to_numpy() for k in range(len(index)))
            np.add.at(out[key], where, shared.to_numpy())
    return out


def _weights(information: np.ndarray, scale: float) -> np.ndarray:
    """Centring of each effect: 1.0 (centred) where the data pin it down, else 0.0 (non-centred).

    The optimal partial centring of a Gaussian hierarchy with known variances is ``w = I s^2 / (I s^2 + 1)`` for data
    information ``I`` and prior spread ``s`` (Papaspiliopoulos, Roberts & Skold 2003). Intermediate weights made
    thousands of divergent transitions on the sparse demo store, so ``w`` is rounded: centred from ``w >= 0.9``
    (the data carry 9 times the prior's information), non-centred below.

    Examples
    --------
    >>> _weights(np.array([0.0, 8.0, 400.0]), 1.0).tolist()
    [0.0, 0.0, 1.0]
    """
    x = np.asarray(information, dtype=float) * scale**2
    return (x / (x + 1.0) >= 0.9).astype(float)


def _contrast_weights(h: np.ndarray, information: np.ndarray) -> np.ndarray:
    """Centring (:func:`_weights`, prior spread 0.5) of each zero-sum contrast (columns of ``h``), from the levels'
    ``information`` (:func:`_information`): items' (items x methods, one weight per contrast x method) or shared
    templates' and orders' (one per contrast)."""
    return _weights((h**2).T @ information, 0.5)


def _correlated_effects(chol: pt.TensorVariable, weights: np.ndarray, methods: list[str]) -> pt.TensorVariable:
    """Rows ``y ~ MvNormal(0, L L')`` (contrasts x methods), each element centred or not as ``weights`` say.

    Drawn method by method from the conditional normals the Cholesky factor gives,
    ``y_m | z_<m ~ Normal(sum_j<m L_mj z_j, L_mm)`` with ``z_j`` the standardised earlier columns, so an element
    pinned down by the data is drawn centred and a sparsely answered one non-centred within the same matrix.
    """
    columns, standard = [], []
    for m, name in enumerate(methods):
        mean = sum((chol[m, j] * standard[j] for j in range(m)), pt.zeros(weights.shape[0]))
        offset = _partially_centred(f"z_item_{name}", mean, chol[m, m], weights[:, m], dims="item_contrast")
        columns.append(mean + offset)
        standard.append(offset / chol[m, m])
    return pt.stack(columns, axis=1)


def _partially_centred(name: str, mu: object, sigma: object, w: np.ndarray, **kwargs: object) -> pt.TensorVariable:
    """Effects ``theta ~ Normal(mu, sigma)`` drawn through a partially non-centred variable (weights ``w`` in [0, 1]).

    ``theta_tilde ~ Normal(w mu, sigma^w)`` and ``theta = mu + sigma^(1-w) (theta_tilde - w mu)`` (Papaspiliopoulos,
    Roberts & Skold 2003; Gorinova, Moore & Hoffman 2020): w = 0 is the non-centred, w = 1 the centred form. Returns
    ``theta - mu``, the offsets from ``mu``.
    """
    # sigma^w as exp(w log sigma): PyTensor's power rewrites trip over constant exponents that contain 0
    log_sigma = pt.log(sigma)
    tilde = pm.Normal(name, w * mu, pt.exp(w * log_sigma), **kwargs)
    return pt.exp((1.0 - w) * log_sigma) * (tilde - w * mu)
