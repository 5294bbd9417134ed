"""Synthetic responses tables with known truth, for the questions' tests and docstring examples; built row by row
with :func:`bias_validity.simulate.rows.answer_row`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy.special import expit, logit

from bias_validity.probes.schema import (
    ATTRIBUTE_ORDERS,
    CANDIDATE_ORDERS,
    IMPLICIT_ORDERS,
    REVERSED_SUFFIX,
    WEAT_ITEM,
    Method,
    Status,
    candidate_order,
    is_reversed,
)
from bias_validity.simulate.rows import SIMULATED_ANSWER, answer_row, rows_to_table

__all__ = ["DEFAULT_SC", "simulate_responses"]

#: True stereotype-consistent probability per sampled method, before item effects.
DEFAULT_SC: Mapping[str, float] = {
    Method.IMPLICIT.value: 0.7,
    Method.ABLATED.value: 0.65,
    Method.EXPLICIT.value: 0.3,
    Method.REFLECTION.value: 0.3,
}
_IMP, _ABL, _EXP, _REF = Method.IMPLICIT.value, Method.ABLATED.value, Method.EXPLICIT.value, Method.REFLECTION.value
_LOG, _EMB = Method.LOGPROB.value, Method.EMBEDDING.value


def simulate_responses(
    *,
    models: Sequence[str] = ("sim:model",),
    dimensions: Sequence[str] = ("age", "race", "gender_career"),
    n_items: int = 8,
    n_templates: int = 2,
    sessions: int = 2,
    reps: int = 1,
    sc: Mapping[str, float] | None = None,
    item_sd: float = 1.5,
    position_bias: float = 0.0,
    shared_item_effects: bool = True,
    refusal_rate: float = 0.0,
    acquiescence: float = 0.0,
    balanced: bool = True,
    seed: int = 0,
) -> pd.DataFrame:
    """A validated responses table drawn from a known model of every method.

    Parameters
    ----------
    models, dimensions : sequence of str
        Labels of the simulated models and dimensions.
    n_items, n_templates, sessions, reps : int
        Items per dimension, wordings per sampled method, measurement occasions and repetitions per occasion.
    sc : mapping, optional
        True SC per sampled method (``implicit``, ``ablated``, ``explicit``, ``reflection``) for an average item;
        defaults to :data:`DEFAULT_SC`.
    item_sd : float
        Standard deviation of the items' logit effects (0 gives coin flips at the methods' SC; large values make
        every item answer the same way every time, i.e. a reliable measure).
    position_bias : float
        Logit shift towards the consistent answer when the group-A exemplar is listed first (``ab-*`` orders).
    shared_item_effects : bool
        Whether ``logprob`` and ``embedding`` scores measure the same item effects as ``implicit`` (convergent) or
        independent ones.
    refusal_rate : float
        Share of sampled answers recorded as ``refusal`` (no stance).
    acquiescence : float
        Logit shift towards agreeing with any Likert statement, whatever it says (0: none).
    balanced : bool
        Whether every explicit statement is also asked reversed, and reflection is also shown inconsistent
        completions (the toolkit's design); False gives the seed paper's unbalanced explicit probe.
    seed : int
        Random seed.

    Returns
    -------
    pandas.DataFrame
        The responses table (``bias_validity.probes.schema.validate_responses``): ``implicit`` and ``ablated`` rows for
        every template x item x order x session x rep; ``explicit`` rows (orders ``xy``/``yx`` and, when
        ``balanced``, their reversals; ``likert`` 4-5 when agreeing, 1-2 otherwise); ``reflection`` rows for the
        implicit answers (template ``reflect/<implicit template>``; inconsistent ones reversed, when ``balanced``);
        ``logprob`` sentence rows (``score`` = item effect + noise, session 1, rep 0); ``embedding`` rows
        (template ``pair``, one per item) and one ``WEAT`` row per dimension.

    Notes
    -----
    P(consistent) = expit(logit(sc[method]) + u_item + position_bias * [order starts with "ab"]), with
    u_item ~ N(0, item_sd) shared by every sampled method of one model x dimension; a Likert statement is agreed
    with at logit ``+/-(logit(sc) + u_item) + acquiescence`` (minus for a reversed one), so without acquiescence
    its SC is that of a binary method; logprob score =
    logit(sc["implicit"]) + u + N(0, 0.3); embedding score = 0.2 u + N(0, 0.1). Validated by the tests that recover
    these settings (ICC near 1 for large ``item_sd``, near 0 for ``item_sd = 0``).

    Examples
    --------
    >>> t = simulate_responses(dimensions=["age"], n_items=4, seed=1)
    >>> t.groupby("method").size().to_dict()
    {'ablated': 64, 'embedding': 5, 'explicit': 32, 'implicit': 64, 'logprob': 8, 'reflection': 64}
    """
    truth = dict(DEFAULT_SC if sc is None else sc)
    unknown = sorted(set(truth) - set(DEFAULT_SC))
    if unknown:
        raise ValueError(f"simulate_responses: sc has unknown method(s) {unknown}; valid: {', '.join(DEFAULT_SC)}")
    rng = np.random.default_rng(seed)
    rows: list[dict[str, object]] = []

    def likert_rating(consistency: float, reversed_statement: bool) -> int:
        """A Likert rating: agree (4-5) at logit +/-consistency + acquiescence, else disagree (1-2)."""
        agree = rng.random() < expit((-consistency if reversed_statement else consistency) + acquiescence)
        return int(rng.integers(4, 6) if agree else rng.integers(1, 3))

    def add(model, dim, method, template, item, order, session, rep, consistent=None, likert=None, score=None):
        refused = refusal_rate > 0 and method in DEFAULT_SC and rng.random() < refusal_rate
        rows.append(
            answer_row(
                model=model,
                dimension=dim,
                method=method,
                template_id=template,
                item_id=item,
                order=order,
                session=session,
                rep=rep,
                status=Status.REFUSAL.value if refused else Status.OK.value,
                consistent=None if refused else consistent,
                likert=None if refused else likert,
                score=score,
                raw_response="I would rather not say." if refused else SIMULATED_ANSWER,
            )
        )

    for model in models:
        for dim in dimensions:
            u = rng.normal(0.0, item_sd, n_items)
            u_other = u if shared_item_effects else rng.normal(0.0, item_sd, n_items)
            items = [f"{dim}-{i + 1:02d}" for i in range(n_items)]
            for method in (_IMP, _ABL):
                if method not in truth:
                    continue
                for t in range(1, n_templates + 1):
                    for i, item in enumerate(items):
                        for order in IMPLICIT_ORDERS:
                            shift = position_bias if candidate_order(order) == CANDIDATE_ORDERS[0] else 0.0
                            p = expit(logit(truth[method]) + u[i] + shift)
                            for session in range(1, sessions + 1):
                                for rep in range(reps):
                                    c = int(rng.random() < p)
                                    add(model, dim, method, f"{method}-{t}", item, order, session, rep, c)
                                    if method == _IMP and (c == 1 or balanced) and _REF in truth:
                                        ref_order = order if c == 1 else order + REVERSED_SUFFIX
                                        likert = likert_rating(logit(truth[_REF]) + u[i], c == 0)
                                        tid = f"reflect/{method}-{t}"
                                        add(model, dim, _REF, tid, item, ref_order, session, rep, likert=likert)
            for i, item in enumerate(items):
                if _EXP in truth:
                    polarity = ("", REVERSED_SUFFIX) if balanced else ("",)
                    for order in [o + suffix for o in ATTRIBUTE_ORDERS for suffix in polarity]:
                        for session in range(1, sessions + 1):
                            for rep in range(reps):
                                likert = likert_rating(logit(truth[_EXP]) + u[i], is_reversed(order))
                                add(model, dim, _EXP, "explicit-1", item, order, session, rep, likert=likert)
                for order in ATTRIBUTE_ORDERS:
                    score = logit(truth.get(_IMP, 0.5)) + u_other[i] + rng.normal(0.0, 0.3)
                    add(model, dim, _LOG, "sentence-1", item, order, 1, 0, int(score > 0), score=score)
                score = 0.2 * u_other[i] + rng.normal(0.0, 0.1)
                add(model, dim, _EMB, "pair", item, "-", 1, 0, int(score > 0), score=score)
            add(model, dim, _EMB, "weat", WEAT_ITEM, "-", 1, 0, score=float(np.mean(u_other)))
    return rows_to_table(rows, source="simulate_responses")
