"""A study shaped like published multi-model ones: base and tuned models that react differently to the same wordings
and items, many items, sparse unbalanced cells, with the true SCs and gaps it was drawn from.

Published bias studies are not the model's own simulation: several models answer the same items under many prompt
wordings, each model reacting to a wording or an item in its own way, and the wordings hold very different numbers of
answers (some were not shown to every model). A hierarchical model calibrated only on its own simulations (SBC) can
still misfit such data. This simulator draws them, with the truth of each quantity under the estimands' declared
weighting, so tests and ``bench/fit.py`` can check coverage, agreement of the classical and Bayesian paths and the
posterior predictive check on data the model did not generate.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.special import expit, logit

from bias_validity.probes.schema import ATTRIBUTE_ORDERS, IMPLICIT_ORDERS, REVERSED_SUFFIX, Method
from bias_validity.simulate.rows import answer_row, rows_to_table

__all__ = ["RealShapedStudy", "REAL_SHAPED_MODELS", "simulate_real_shaped"]

#: (model, kind) of the four models: base and tuned at two sizes.
REAL_SHAPED_MODELS: tuple[tuple[str, str], ...] = (
    ("sim:base-1b", "base"),
    ("sim:tuned-1b", "tuned"),
    ("sim:base-8b", "base"),
    ("sim:tuned-8b", "tuned"),
)
_IMP, _EXP = Method.IMPLICIT.value, Method.EXPLICIT.value
_ORDERS = {_IMP: IMPLICIT_ORDERS, _EXP: (*ATTRIBUTE_ORDERS, *(o + REVERSED_SUFFIX for o in ATTRIBUTE_ORDERS))}
#: Logit offset of a strong rating (1 or 5): the side taken must outweigh it, so strength grows with the evidence.
_STRONG_OFFSET = 1.0
#: Gauss-Hermite nodes for the truth's integral over a new item's effect.
_GH_NODES, _GH_WEIGHTS = np.polynomial.hermite.hermgauss(40)


@dataclass(frozen=True)
class RealShapedStudy:
    """A drawn study and its truth."""

    responses: pd.DataFrame  #: the responses table (validated)
    #: per model x dimension x method: ``sc_new_item``, the true SC of a new item of the dimension, its wordings and
    #: orders weighted by the answers they hold (Likert: within each polarity, statements and reversals equally),
    #: as :data:`bias_validity.psychometrics.estimands.ESTIMANDS` declares
    truth: pd.DataFrame
    #: per model x dimension: ``gap``, explicit minus implicit ``sc_new_item``
    gaps: pd.DataFrame


def simulate_real_shaped(
    *,
    models: Sequence[tuple[str, str]] = REAL_SHAPED_MODELS,
    dimensions: Sequence[str] = ("gender", "race", "religion"),
    n_items: int = 280,
    n_templates: int = 15,
    n_answers: int = 25_000,
    unseen_templates: int = 6,
    template_sd: float = 0.5,
    model_template_sd: float = 1.5,
    item_sd: float = 1.0,
    model_item_sd: float = 1.0,
    dimension_sd: float = 0.4,
    sc: dict[str, dict[str, float]] | None = None,
    acquiescence: dict[str, float] | None = None,
    seed: int = 0,
) -> RealShapedStudy:
    """Draw an implicit (two-way choice) and explicit (Likert, statements and reversals) study of several models.

    Parameters
    ----------
    models : sequence of (str, str)
        Model labels and kinds (``"base"`` or ``"tuned"``); default four, base and tuned at two sizes.
    dimensions : sequence of str
        Bias dimensions.
    n_items : int
        Items per dimension (shared by both methods and all models).
    n_templates : int
        Wordings per method.
    n_answers : int
        Answers drawn in all; each answer's model, dimension, method, item and order are uniform, its wording
        drawn with unequal weights (a Dirichlet(4) draw per method: some wordings hold several times the answers
        of others), so most design cells hold one answer.
    unseen_templates : int
        Wordings of each method that the second and fourth models never saw.
    template_sd, model_template_sd : float
        Logit SD of the wordings' shared effects and of each model's own deviation from them.
    item_sd, model_item_sd : float
        Logit SD of the items' shared effects (per method) and of each model's own deviation from them.
    dimension_sd : float
        Logit SD of each model x dimension x method's level around its kind's mean SC.
    sc : dict, optional
        Mean SC per model kind and method before wording and item effects; default implicit 0.7 for both kinds,
        explicit 0.6 for base and 0.35 for tuned models (tuning lowers the explicit SC).
    acquiescence : dict, optional
        Logit shift towards agreeing with any statement per model kind (default base 0.6, tuned 0.0).
    seed : int
        Seed of every draw.

    Returns
    -------
    RealShapedStudy

    Notes
    -----
    P(consistent) of an implicit answer = expit(a_{m,d} + t_w + t_{m,w} + o_o + b_i + b_{m,i}), a_{m,d} the kind's
    logit SC plus Normal(0, dimension_sd^2); a Likert answer agrees at logit x = +/-eta + acq_m (minus for a
    reversal) and is rated 4 or 5, else 2 or 1, never the midpoint, so its SC (the equal-weight mean of
    P(agree | statement) and P(disagree | reversal)) is the mean of expit(eta + acq) and expit(eta - acq). Its
    strength grows with the evidence for the side it took: 5 with probability expit(x - 1) if it agreed, 1 with
    probability expit(-x - 1) if it disagreed, as a graded response does. The cumulative logit of
    :func:`bias_validity.psychometrics.bayes.build_model` assumes such grading; with a strength unrelated to the
    evidence (4 or 5 at even odds) its predictive check put 22% of the explicit groups of the default study outside
    their 90% interval (with unit effects), against 0.7% of the implicit ones. The truth
    integrates eta over a new item, b + b_m ~ Normal(0, item_sd^2 + model_item_sd^2) (Gauss-Hermite), and weights
    each wording x order by the answers drawn there (Likert: within each polarity, the polarities equally), the
    weighting the estimands declare.

    Examples
    --------
    >>> study = simulate_real_shaped(n_items=20, n_templates=4, unseen_templates=1, n_answers=2000, seed=1)
    >>> len(study.responses), study.responses["model"].nunique(), study.gaps.shape
    (2000, 4, (12, 3))
    """
    sc = sc or {"base": {_IMP: 0.7, _EXP: 0.6}, "tuned": {_IMP: 0.7, _EXP: 0.35}}
    acquiescence = acquiescence or {"base": 0.6, "tuned": 0.0}
    if unseen_templates >= n_templates:
        raise ValueError(f"unseen_templates ({unseen_templates}) must leave some of the {n_templates} wordings")
    rng = np.random.default_rng(seed)
    methods = (_IMP, _EXP)
    shares = {m: rng.dirichlet(np.full(n_templates, 4.0)) for m in methods}
    levels = {
        (j, d, m): logit(sc[kind][m]) + rng.normal(0.0, dimension_sd)
        for j, (_, kind) in enumerate(models)
        for d in dimensions
        for m in methods
    }
    orders = {m: rng.normal(0.0, 0.2, len(_ORDERS[m])) for m in methods}
    # logit of each (model, dimension, method, wording, item, order) cell, as the sum of its parts
    wording = {(None, m): rng.normal(0.0, template_sd, n_templates) for m in methods}
    items = {(d, m): rng.normal(0.0, item_sd, n_items) for d in dimensions for m in methods}
    seen = [n_templates - unseen_templates if j % 2 else n_templates for j in range(len(models))]
    own_wording = {(j, m): rng.normal(0.0, model_template_sd, n_templates) for j in range(len(models)) for m in methods}
    own_items = {
        (j, d, m): rng.normal(0.0, model_item_sd, n_items)
        for j in range(len(models))
        for d in dimensions
        for m in methods
    }
    rows, reps = [], {}
    for _ in range(n_answers):
        j = int(rng.integers(len(models)))
        (model, kind), d, m = models[j], dimensions[rng.integers(len(dimensions))], methods[rng.integers(2)]
        t = int(rng.choice(seen[j], p=shares[m][: seen[j]] / shares[m][: seen[j]].sum()))
        i, o = int(rng.integers(n_items)), int(rng.integers(len(_ORDERS[m])))
        eta = levels[(j, d, m)] + wording[(None, m)][t] + own_wording[(j, m)][t] + orders[m][o]
        eta += items[(d, m)][i] + own_items[(j, d, m)][i]
        order = _ORDERS[m][o]
        key = (j, d, m, t, i, o)
        reps[key] = rep = reps.get(key, -1) + 1
        cell = dict(
            model=model,
            dimension=d,
            method=m,
            template_id=f"{m}-{t + 1:02d}",
            item_id=f"{d}-{i + 1:03d}",
            order=order,
            session=1,
            rep=rep,
        )
        if m == _IMP:
            rows.append(answer_row(**cell, consistent=int(rng.random() < expit(eta))))
        else:
            acq = acquiescence.get(kind, 0.0)
            side = (-eta if order.endswith(REVERSED_SUFFIX) else eta) + acq
            agree = rng.random() < expit(side)
            strong = rng.random() < expit((side if agree else -side) - _STRONG_OFFSET)
            rows.append(answer_row(**cell, likert=(5 if strong else 4) if agree else (1 if strong else 2)))
    # the truth under the estimands' weighting: a new item (its effect integrated), each answered wording x order
    # weighted by its answers (Likert: within each polarity, the two polarities equally)
    node = np.sqrt(2.0 * (item_sd**2 + model_item_sd**2)) * _GH_NODES
    asked = pd.DataFrame(list(reps), columns=["j", "d", "m", "t", "i", "o"]).assign(n=[r + 1 for r in reps.values()])
    truth = []
    for (j, d, m), cells in asked.groupby(["j", "d", "m"]):
        (model, kind), acq = models[j], acquiescence.get(models[j][1], 0.0)
        per = cells.groupby(["t", "o"])["n"].sum().reset_index()
        t, o = per["t"].to_numpy(), per["o"].to_numpy()
        eta = levels[(j, d, m)] + wording[(None, m)][t] + own_wording[(j, m)][t] + orders[m][o]
        reversed_ = np.array([_ORDERS[m][k].endswith(REVERSED_SUFFIX) for k in o])
        side = np.where(reversed_, -acq, acq) if m == _EXP else np.zeros(len(o))
        share = (expit(eta[:, None] + side[:, None] + node) @ _GH_WEIGHTS) / np.sqrt(np.pi)
        weight = per["n"].to_numpy(float)
        for polarity in (reversed_, ~reversed_):
            weight[polarity] /= weight[polarity].sum() * (1 + (reversed_.any() and (~reversed_).any()))
        truth.append(dict(model=model, dimension=d, method=m, sc_new_item=float(share @ weight)))
    truth = pd.DataFrame(truth)
    wide = truth.pivot_table(index=["model", "dimension"], columns="method", values="sc_new_item")
    gaps = (wide[_EXP] - wide[_IMP]).rename("gap").reset_index()
    return RealShapedStudy(rows_to_table(rows, source="simulate_real_shaped"), truth, gaps)
