"""Cells of the Bayesian model's simulator expanded into a responses table, one row per answer.

:func:`bias_validity.psychometrics.bayes.simulate_study` draws counts per design cell (binomial ``k`` of ``n``,
Likert level counts, one score per cell), labelled as the model sees them (orders ``o0``, ``o1``...);
:func:`cells_to_responses` writes the answers those counts stand for, built with
:func:`bias_validity.simulate.rows.answer_row`, so the analyses can be run on the study the fit is checked against.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from bias_validity.probes.schema import Status, is_reversed, keyed_likert
from bias_validity.simulate.rows import answer_row, rows_to_table, valid_orders

__all__ = ["CELL_KEY", "with_design_orders", "cells_to_responses"]

#: The columns of one design cell in the simulated tables (after ``unit``/``trait`` are renamed to
#: ``model``/``dimension``).
CELL_KEY: tuple[str, ...] = ("model", "dimension", "method", "template_id", "item_id", "order")
_GENERIC_ORDER = re.compile(r"o(\d+)")
#: The session of every simulated answer (the cells carry one measurement occasion).
_SESSION = 1


def _design_order(method: str, template_id: str, order: object) -> str:
    """A cell's order as the method's design writes it: ``o<k>`` becomes the method's k-th order."""
    text = str(order)
    orders = valid_orders(method, template_id)
    if text in orders:
        return text
    generic = _GENERIC_ORDER.fullmatch(text)
    if generic is None:
        raise ValueError(f"cells_to_responses: order {text!r} is neither o<k> nor an order of {method}")
    k = int(generic.group(1))
    if k >= len(orders):
        raise ValueError(
            f"cells_to_responses: {method} has {len(orders)} orders ({', '.join(orders)}); the cells have {text}"
        )
    return orders[k]


def with_design_orders(sim: dict[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """The simulated tables with their generic orders (``o0``, ``o1``...) written as each method's own orders.

    Parameters
    ----------
    sim : dict of pandas.DataFrame
        :func:`bias_validity.psychometrics.bayes.simulate_study` output, ``unit``/``trait`` renamed to
        ``model``/``dimension``.

    Returns
    -------
    dict of pandas.DataFrame
        New tables (the input is left as it is): order ``o<k>`` becomes the k-th of
        :func:`bias_validity.simulate.rows.valid_orders` for the cell's method (so two orders of ``explicit`` are
        ``xy`` and ``yx``, and a third and fourth are their reversals), and the ``binary``, ``ordinal`` and
        ``scores`` cells match those read back from :func:`cells_to_responses`' table; orders the method already
        takes are kept.

    Raises
    ------
    ValueError
        Where a method has fewer orders than the cells (``embedding`` has one, ``logprob`` sentences two).

    Examples
    --------
    >>> from bias_validity.psychometrics.bayes import simulate_study
    >>> sim = simulate_study(units=1, traits=1, items=1, templates=1, orders=2, reps=2, seed=0)
    >>> sim = with_design_orders({k: v.rename(columns={"unit": "model", "trait": "dimension"}) for k, v in sim.items()})
    >>> sorted(set(zip(sim["binary"]["method"], sim["binary"]["order"])))
    [('ablated', 'ab-xy'), ('ablated', 'ab-yx'), ('implicit', 'ab-xy'), ('implicit', 'ab-yx')]
    >>> sorted(sim["ordinal"]["order"].unique())
    ['xy', 'yx']
    """
    out = {}
    for name, frame in sim.items():
        if "order" in frame.columns and len(frame):
            orders = [
                _design_order(m, t, o)
                for m, t, o in zip(frame["method"], frame["template_id"], frame["order"], strict=True)
            ]
            frame = frame.assign(order=orders)
        out[name] = frame
    return out


def cells_to_responses(sim: dict[str, pd.DataFrame], *, refusals: int = 0) -> pd.DataFrame:
    """Expand simulated cells into a responses table: one row per answer, plus ``refusals`` refusals per cell.

    Parameters
    ----------
    sim : dict of pandas.DataFrame
        :func:`bias_validity.psychometrics.bayes.simulate_study` output with ``unit``/``trait`` renamed to
        ``model``/``dimension``: ``binary`` (cell columns, ``k``, ``n``), ``ordinal`` (cell columns, ``level``,
        ``n``) and ``scores`` (cell columns, ``score``).
    refusals : int
        Refusals added to every binary cell (status ``refusal``, no stance).

    Returns
    -------
    pandas.DataFrame
        The validated responses table, session 1, one ``rep`` per answer of a cell. Orders are those of
        :func:`with_design_orders`. A binary cell gives ``k`` consistent and ``n - k`` inconsistent answers. An
        ordinal cell's levels are keyed towards the stereotype, as the model's are: on a reversed statement
        (``xy~reversed``...) level ``l`` is the rating ``6 - l``, so the rating codes the same stance
        (:func:`bias_validity.probes.schema.likert_consistent`; the midpoint takes no side). A score cell gives one
        answer, consistent when the score is positive.

    Examples
    --------
    >>> from bias_validity.psychometrics.bayes import simulate_study
    >>> sim = simulate_study(units=1, traits=1, items=2, templates=1, orders=2, reps=5, seed=1)
    >>> sim = {k: v.rename(columns={"unit": "model", "trait": "dimension"}) for k, v in sim.items()}
    >>> table = cells_to_responses(sim, refusals=1)
    >>> table.groupby("method").size().to_dict()
    {'ablated': 24, 'explicit': 20, 'implicit': 24, 'logprob': 4}
    >>> table.loc[table["status"] == "refusal", "method"].unique().tolist()
    ['implicit', 'ablated']
    >>> binary = table["method"].isin(["implicit", "ablated"])
    >>> int(table.loc[binary, "consistent"].sum()) == int(sim["binary"]["k"].sum())
    True
    """
    sim = with_design_orders(sim)
    rows: list[dict[str, object]] = []
    for c in sim["binary"].to_dict("records"):
        key = {k: c[k] for k in CELL_KEY}
        answers = [1] * int(c["k"]) + [0] * int(c["n"] - c["k"])
        rows += [answer_row(**key, session=_SESSION, rep=r, consistent=v) for r, v in enumerate(answers)]
        rows += [
            answer_row(**key, session=_SESSION, rep=int(c["n"]) + r, status=Status.REFUSAL.value)
            for r in range(refusals)
        ]
    for values, group in sim["ordinal"].groupby(list(CELL_KEY), sort=True):
        key = dict(zip(CELL_KEY, values, strict=True))
        levels = np.repeat(group["level"].to_numpy(), group["n"].to_numpy())
        ratings = keyed_likert(levels, is_reversed(key["order"]))
        rows += [answer_row(**key, session=_SESSION, rep=r, likert=int(v)) for r, v in enumerate(ratings)]
    for c in sim["scores"].to_dict("records"):
        key = {k: c[k] for k in CELL_KEY}
        score = float(c["score"])
        rows.append(answer_row(**key, session=_SESSION, rep=0, score=score, consistent=int(score > 0)))
    return rows_to_table(rows, source="cells_to_responses")
