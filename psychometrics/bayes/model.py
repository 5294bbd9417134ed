"""The hierarchical PyMC model: binomial cells, cumulative-logit Likert cells and Gaussian scores sharing item effects.

One joint model so that the item effects of every method live in one correlation matrix (LKJ prior): the posterior
correlation between the implicit and the log-probability item effects is the latent, disattenuated convergent
validity.
"""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytensor.tensor as pt

from psychometrics.bayes.design import Design

__all__ = ["build_model"]


def build_model(design: Design, *, lkj_eta: float = 2.0) -> pm.Model:
    """Build the joint hierarchical model of one study.

    Parameters
    ----------
    design : Design
        Indexed cells from :func:`psychometrics.bayes.index_design`.
    lkj_eta : float, default 2.0
        Shape of the LKJ prior on the item-effect correlation matrix (1 is uniform; 2 mildly favours small
        correlations).

    Returns
    -------
    pymc.Model
        Free variables (all non-centred): ``beta`` (method logit mean, binary methods), ``tau_b``/``z_b`` (group
        spread and offsets), ``tau_o``/``z_o`` and ``cut`` (ordinal), ``a_s``/``sigma_s`` (scores), ``chol``
        (LKJ Cholesky factor with per-method item SDs) and ``z_item``, ``sigma_tmpl``/``z_tmpl``,
        ``sigma_ord``/``z_ord``. Observed data are ``pm.Data`` containers ``k``, ``n``, ``likert_counts`` and
        ``score_z`` so a compiled model can be refitted on new data of the same design.

    Notes
    -----
    For a binary cell ``c`` of group ``g`` (unit x trait x method ``m``), item ``i``, template ``t`` and order
    ``o``: ``k_c ~ Binomial(n_c, logistic(eta_c))`` with
    ``eta_c = beta_m + tau_m z_g + b_{i,m} + s_T z_t + s_O z_o``; item effects ``b_i = L z_i`` with
    ``L L' = diag(sd) R diag(sd)``, ``R ~ LKJ(eta)``, ``sd_m ~ HalfNormal(1)``.
    Item effects are centred within each trait and template and order effects within each method (sum-to-zero), so
    they cannot trade off with the group and method means (a ridge that slowed mixing); the correlation of item
    effects is thus the correlation of within-trait item deviations across methods.
    Item, template and order effects enter only for methods with at least two items (templates, orders), and a
    method measured in a single group gets no group spread: they would otherwise be unidentified and make
    divergences.
    A Likert cell has the same linear predictor without ``beta`` (the cutpoints carry the location) and
    ``counts_c ~ Multinomial(n_c, p)``, ``P(y <= j) = logistic(cut_{m,j} - eta_c)``.
    A score (standardised within method x template) is ``z ~ Normal(a_g + b_{i,m}, sigma_m)``: deterministic scores
    (log-probabilities, embedding effects) measure the same item effects without sampling noise.
    """
    d = design
    n_m = len(d.methods)
    coords = {"method": d.methods, "item": d.items, "template": d.templates, "order": d.orders}
    with pm.Model(coords=coords) as model:
        chol, _, _ = pm.LKJCholeskyCov(
            "chol", n=n_m, eta=lkj_eta, sd_dist=pm.HalfNormal.dist(1.0, shape=n_m), compute_corr=True
        )
        z_item = pm.Normal("z_item", 0.0, 1.0, dims=("item", "method"))
        # centred within each trait, so item effects cannot trade off with the group means (a ridge that made the
        # chains mix slowly); the group means carry the traits' levels
        raw_item = pt.dot(z_item, chol.T) * d.item_mask()
        b_item = pm.Deterministic("b_item", pt.dot(_centring(d.item_traits()), raw_item), dims=("item", "method"))
        sigma_tmpl = pm.HalfNormal("sigma_tmpl", 0.5)
        z_tmpl = pm.Normal("z_tmpl", 0.0, 1.0, dims="template")
        sigma_ord = pm.HalfNormal("sigma_ord", 0.5)
        z_ord = pm.Normal("z_ord", 0.0, 1.0, dims="order")
        # an effect enters only where its method has >= 2 levels: one level is confounded with the method mean
        # and centred within method, for the same reason: the method mean carries the level
        tmpl_raw = _varied(d.templates) * sigma_tmpl * z_tmpl
        ords_raw = _varied(d.orders) * sigma_ord * z_ord
        tmpl = pm.Deterministic("tmpl", pt.dot(_centring(_method_of(d.templates)), tmpl_raw), dims="template")
        ords = pm.Deterministic("ords", pt.dot(_centring(_method_of(d.orders)), ords_raw), dims="order")

        if len(d.binary):
            b = d.binary
            bm = np.array([d.methods.index(m) for m in d.binary_methods])
            g_method = d.binary_groups[d.columns.method].map({m: j for j, m in enumerate(d.binary_methods)}).to_numpy()
            beta = pm.Normal("beta", 0.0, 1.5, shape=len(bm))
            tau_b = pm.HalfNormal("tau_b", 1.0, shape=len(bm))
            z_b = pm.Normal("z_b", 0.0, 1.0, shape=len(d.binary_groups))
            spread = tau_b[g_method] * _pooled(g_method)  # a method measured in one group has no spread
            mu_b = pm.Deterministic("mu_b", beta[g_method] + spread * z_b)
            eta = mu_b[b["g"].to_numpy()] + b_item[b["i"].to_numpy(), b["k_m"].to_numpy()]
            eta = eta + tmpl[b["t"].to_numpy().astype(int)] + ords[b["o"].to_numpy().astype(int)]
            k = pm.Data("k", b["k"].to_numpy(dtype="int64"))
            n = pm.Data("n", b["n"].to_numpy(dtype="int64"))
            pm.Binomial("y_binary", n=n, logit_p=eta, observed=k)

        if len(d.ordinal):
            o = d.ordinal
            n_levels = d.ordinal_counts.shape[1]
            g_method = d.ordinal_groups[d.columns.method].map({m: j for j, m in enumerate(d.ordinal_methods)})
            tau_o = pm.HalfNormal("tau_o", 1.0, shape=len(d.ordinal_methods))
            z_o = pm.Normal("z_o", 0.0, 1.0, shape=len(d.ordinal_groups))
            g_ord = g_method.to_numpy()
            mu_o = pm.Deterministic("mu_o", tau_o[g_ord] * _pooled(g_ord) * z_o)
            start = np.linspace(-2.0, 2.0, n_levels - 1)
            cut = pm.Normal(
                "cut", 0.0, 2.5, shape=(len(d.ordinal_methods), n_levels - 1),
                transform=pm.distributions.transforms.ordered,
                initval=np.tile(start, (len(d.ordinal_methods), 1)),
            )  # fmt: skip
            eta = mu_o[o["g"].to_numpy()] + b_item[o["i"].to_numpy(), o["k_m"].to_numpy()]
            eta = eta + tmpl[o["t"].to_numpy().astype(int)] + ords[o["o"].to_numpy().astype(int)]
            cdf = pm.math.sigmoid(cut[o["c_m"].to_numpy()] - eta[:, None])
            ones, zeros = pt.ones((len(o), 1)), pt.zeros((len(o), 1))
            probs = pt.concatenate([cdf, ones], axis=1) - pt.concatenate([zeros, cdf], axis=1)
            probs = pt.clip(probs, 1e-12, 1.0)
            counts = pm.Data("likert_counts", d.ordinal_counts.astype("int64"))
            pm.Multinomial("y_likert", n=counts.sum(axis=1), p=probs / probs.sum(axis=1, keepdims=True),
                           observed=counts)  # fmt: skip

        # a score method seen on one item only measures no item effect (and its lone score per group would make
        # the Gaussian likelihood unbounded as sigma -> 0), so it is left out
        s = d.scores[d.item_mask()[d.scores["k_m"].to_numpy(dtype=int)] > 0] if len(d.scores) else d.scores
        if len(s):
            sm = {m: j for j, m in enumerate(d.score_methods)}
            a_s = pm.Normal("a_s", 0.0, 1.0, shape=len(d.score_groups))
            sigma_s = pm.HalfNormal("sigma_s", 1.0, shape=len(d.score_methods))
            mu_s = a_s[s["g"].to_numpy()] + b_item[s["i"].to_numpy(), s["k_m"].to_numpy()]
            z = pm.Data("score_z", s["z"].to_numpy(dtype=float))
            pm.Normal("y_score", mu_s, sigma_s[s[d.columns.method].map(sm).to_numpy()], observed=z)
    return model


def _method_of(labels: list[str]) -> list[str]:
    """The method part of "method|level" labels."""
    return [label.split("|", 1)[0] for label in labels]


def _centring(groups: list[str]) -> np.ndarray:
    """The matrix that subtracts each group's mean: ``x - mean(x over the same group)`` for every element."""
    g = np.asarray(groups, dtype=object)
    same = (g[:, None] == g[None, :]).astype(float)
    return np.eye(len(g)) - same / same.sum(axis=1, keepdims=True)


def _varied(labels: list[str]) -> np.ndarray:
    """1.0 for each "method|level" label whose method has at least two levels, else 0.0."""
    methods = [label.split("|", 1)[0] for label in labels]
    return np.array([float(methods.count(m) > 1) for m in methods])


def _pooled(group_method: np.ndarray) -> np.ndarray:
    """1.0 for each group whose method is measured in at least two groups, else 0.0 (its mean is the method's)."""
    counts = np.bincount(group_method)
    return (counts[group_method] > 1).astype(float)
