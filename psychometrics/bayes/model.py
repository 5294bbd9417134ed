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
        Free variables: ``beta`` (method logit mean, binary methods), ``tau_b``/``z_b`` (group spread and
        offsets), ``tau_o``/``z_o`` and ``cut`` (ordinal), ``a_s``/``sigma_s`` (scores), ``chol`` (LKJ Cholesky
        factor with per-method item SDs) and ``z_item`` (non-centred) or ``raw_item`` (centred),
        ``sigma_tmpl``/``z_tmpl``, ``sigma_ord``/``z_ord``. Observed data are ``pm.Data`` containers ``k``, ``n``,
        ``likert_counts`` and
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

    Parameterisation follows the data. A group, template or order effect is drawn partially non-centred [1]_ [2]_,
    with weight ``w = I s^2 / (I s^2 + 1)`` from the Fisher information ``I`` its answers carry (about 1/4 per answer)
    and its prior spread ``s``: non-centred where few answers inform it (a small demo), centred where many do (a
    paper-scale study, where the non-centred form made NUTS take 250 leapfrog steps per draw against 32). Item
    effects are centred when the median item weight exceeds 1/2, else non-centred. The posterior is the same
    either way; only the geometry NUTS sees changes.

    References
    ----------
    .. [1] Papaspiliopoulos, O., Roberts, G. O. & Skold, M. (2003). Non-centered parameterisations for hierarchical
       models and data augmentation. Bayesian Statistics 7, 307-326.
    .. [2] Gorinova, M., Moore, D. & Hoffman, M. (2020). Automatic reparameterisation of probabilistic programs.
       ICML, PMLR 119:3648-3657.
    """
    d = design
    n_m = len(d.methods)
    coords = {"method": d.methods, "item": d.items, "template": d.templates, "order": d.orders}
    info = _information(d)
    with pm.Model(coords=coords) as model:
        chol, _, _ = pm.LKJCholeskyCov(
            "chol", n=n_m, eta=lkj_eta, sd_dist=pm.HalfNormal.dist(1.0, shape=n_m), compute_corr=True
        )
        if _item_weight(d) > 0.5:  # data dominate the item effects: centred
            raw_item = pm.MvNormal("raw_item", mu=np.zeros(n_m), chol=chol, dims=("item", "method"))
        else:
            raw_item = pt.dot(pm.Normal("z_item", 0.0, 1.0, dims=("item", "method")), chol.T)
        # centred within each trait, so item effects cannot trade off with the group means (a ridge that made the
        # chains mix slowly); the group means carry the traits' levels
        raw_item = raw_item * d.item_mask()
        b_item = pm.Deterministic("b_item", pt.dot(_centring(d.item_traits()), raw_item), dims=("item", "method"))
        sigma_tmpl = pm.HalfNormal("sigma_tmpl", 0.5)
        sigma_ord = pm.HalfNormal("sigma_ord", 0.5)
        w_t, w_o = _weights(info["t"], 0.5) * _varied(d.templates), _weights(info["o"], 0.5) * _varied(d.orders)
        # an effect enters only where its method has >= 2 levels: one level is confounded with the method mean
        # and centred within method, for the same reason: the method mean carries the level
        tmpl_raw = _varied(d.templates) * _partially_centred("z_tmpl", 0.0, sigma_tmpl, w_t, dims="template")
        ords_raw = _varied(d.orders) * _partially_centred("z_ord", 0.0, sigma_ord, w_o, dims="order")
        tmpl = pm.Deterministic("tmpl", pt.dot(_centring(_method_of(d.templates)), tmpl_raw), dims="template")
        ords = pm.Deterministic("ords", pt.dot(_centring(_method_of(d.orders)), ords_raw), dims="order")

        if len(d.binary):
            b = d.binary
            bm = np.array([d.methods.index(m) for m in d.binary_methods])
            g_method = d.binary_groups[d.columns.method].map({m: j for j, m in enumerate(d.binary_methods)}).to_numpy()
            beta = pm.Normal("beta", 0.0, 1.5, shape=len(bm))
            tau_b = pm.HalfNormal("tau_b", 1.0, shape=len(bm))
            pooled = _pooled(g_method)  # a method measured in one group has no spread: its mean is the method's
            offset = _partially_centred("z_b", beta[g_method], tau_b[g_method], _weights(info["gb"], 1.0) * pooled)
            mu_b = pm.Deterministic("mu_b", beta[g_method] + pooled * offset)
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
            g_ord = g_method.to_numpy()
            pooled = _pooled(g_ord)
            offset = _partially_centred("z_o", 0.0, tau_o[g_ord], _weights(info["go"], 1.0) * pooled)
            mu_o = pm.Deterministic("mu_o", pooled * offset)
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


def _information(design: Design) -> dict[str, np.ndarray]:
    """Approximate Fisher information on the logit scale that the data give each effect.

    A valid answer carries about 1/4 (a Bernoulli logit at p = 1/2; used for Likert answers too) and a standardised
    score about 1. Keys: ``gb``/``go`` (binary/ordinal groups), ``t`` (templates), ``o`` (orders) and ``item``
    (items x methods).
    """
    d = design
    out = {"gb": np.zeros(len(d.binary_groups)), "go": np.zeros(len(d.ordinal_groups)),
           "t": np.zeros(len(d.templates)), "o": np.zeros(len(d.orders)),
           "item": np.zeros((len(d.items), len(d.methods)))}  # fmt: skip
    parts = [(d.binary, 0.25 * d.binary["n"].to_numpy(dtype=float), "gb"),
             (d.ordinal, 0.25 * d.ordinal_counts.sum(axis=1).astype(float), "go"),
             (d.scores, np.ones(len(d.scores)), None)]  # fmt: skip
    for cells, w, group in parts:
        if not len(cells):
            continue
        if group is not None:  # scores carry no template, order or pooled group effect
            np.add.at(out[group], cells["g"].to_numpy(dtype=int), w)
            np.add.at(out["t"], cells["t"].to_numpy(dtype=int), w)
            np.add.at(out["o"], cells["o"].to_numpy(dtype=int), w)
        np.add.at(out["item"], (cells["i"].to_numpy(dtype=int), cells["k_m"].to_numpy(dtype=int)), w)
    return out


def _weights(information: np.ndarray, scale: float) -> np.ndarray:
    """Centring weight ``w = I s^2 / (I s^2 + 1)`` of each effect with data information I and prior spread s.

    The optimal partial centring of a Gaussian hierarchy with known variances (Papaspiliopoulos, Roberts & Skold 2003):
    0 (non-centred) when the data say little about the effect, towards 1 (centred) when they pin it down.

    Examples
    --------
    >>> _weights(np.array([0.0, 1.0, 400.0]), 1.0).round(3).tolist()
    [0.0, 0.5, 0.998]
    """
    x = np.asarray(information, dtype=float) * scale**2
    return x / (x + 1.0)


def _item_weight(design: Design) -> float:
    """Median centring weight of the item effects of the methods seen on >= 2 items (spread 0.5, as templates)."""
    info = _information(design)["item"][:, design.item_mask() > 0]
    return float(np.median(_weights(info, 0.5))) if info.size else 0.0


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
