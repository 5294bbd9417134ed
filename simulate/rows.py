"""The row factory: one answer of a simulated study as a responses-table row, and rows as a validated table.

Every simulator of :mod:`bias_validity.simulate` builds its rows here, so the ``response_id``, the ``order`` values
each method takes and the coding of a Likert rating as (in)consistent are written once, by
:mod:`bias_validity.probes.schema`, never retyped by a simulator.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import pandas as pd

from bias_validity.probes.schema import (
    ATTRIBUTE_ORDERS,
    CHOICE_PREFIX,
    COLUMNS,
    DESIGN_KEY,
    FIRST_RUN,
    IMPLICIT_ORDERS,
    REVERSED_SUFFIX,
    Method,
    Status,
    empty_responses,
    is_reversed,
    likert_consistent,
    response_id,
    validate_responses,
)

__all__ = ["SIMULATED_ANSWER", "valid_orders", "answer_row", "rows_to_table"]

#: ``raw_response`` of a simulated answer unless a simulator says otherwise.
SIMULATED_ANSWER = "simulated"

_LIKERT_METHODS = frozenset({Method.EXPLICIT.value, Method.REFLECTION.value})
_STATUSES = frozenset(s.value for s in Status)
#: Columns a row may set besides the design key, ``rep`` and the answer (``response_id`` is always computed).
_EXTRA_COLUMNS = frozenset(c.name for c in COLUMNS) - {*DESIGN_KEY, "rep", "response_id"}


def _with_reversals(orders: tuple[str, ...]) -> tuple[str, ...]:
    """The orders, then each reversed (``xy``, ``yx``, ``xy~reversed``, ``yx~reversed``)."""
    return (*orders, *(o + REVERSED_SUFFIX for o in orders))


_ORDERS: dict[str, tuple[str, ...]] = {
    Method.IMPLICIT.value: IMPLICIT_ORDERS,
    Method.ABLATED.value: IMPLICIT_ORDERS,
    Method.EXPLICIT.value: _with_reversals(ATTRIBUTE_ORDERS),
    Method.REFLECTION.value: _with_reversals(IMPLICIT_ORDERS),
    Method.LOGPROB.value: ATTRIBUTE_ORDERS,
    Method.EMBEDDING.value: ("-",),
}
_ORDER_SETS = {m: frozenset(o) for m, o in _ORDERS.items()}
_CHOICE_ORDERS = frozenset(IMPLICIT_ORDERS)


def valid_orders(method: str, template_id: str = "") -> tuple[str, ...]:
    """The ``order`` values an answer of ``method`` (asked with ``template_id``) can carry: plain, then reversed.

    Parameters
    ----------
    method : str
        One of :class:`bias_validity.probes.schema.Method`.
    template_id : str
        The wording; it matters for ``logprob`` only, whose closed-set rows (template ``choice:<implicit
        template>``) take the implicit orders while its sentence rows take the attribute orders.

    Returns
    -------
    tuple of str
        ``implicit``/``ablated``: the candidate x attribute orders (``ab-xy`` ...); ``explicit``: the attribute
        orders, then their reversals (``xy``, ``yx``, ``xy~reversed``, ``yx~reversed``); ``reflection``: the
        implicit orders, then their reversals (the model's own inconsistent completion);
        ``logprob``: ``xy``, ``yx`` (the implicit orders for a closed-set template); ``embedding``: ``-``.

    Raises
    ------
    ValueError
        For an unknown method.

    Examples
    --------
    >>> valid_orders("explicit")
    ('xy', 'yx', 'xy~reversed', 'yx~reversed')
    >>> valid_orders("logprob"), valid_orders("logprob", "choice:implicit-1")
    (('xy', 'yx'), ('ab-xy', 'ab-yx', 'ba-xy', 'ba-yx'))
    """
    if method not in _ORDERS:
        raise ValueError(f"unknown method {method!r}; valid methods are {', '.join(_ORDERS)}")
    if method == Method.LOGPROB.value and str(template_id).startswith(CHOICE_PREFIX):
        return IMPLICIT_ORDERS
    return _ORDERS[method]


def _check_order(method: str, template_id: str, order: str) -> None:
    if method not in _ORDER_SETS:
        raise ValueError(f"answer_row: unknown method {method!r}; valid methods are {', '.join(_ORDERS)}")
    choice = method == Method.LOGPROB.value and str(template_id).startswith(CHOICE_PREFIX)
    if order not in (_CHOICE_ORDERS if choice else _ORDER_SETS[method]):
        wording = f" ({template_id})" if method == Method.LOGPROB.value else ""
        takes = ", ".join(valid_orders(method, template_id))
        raise ValueError(f"answer_row: {method}{wording} takes orders {takes}, not {order!r}")


def answer_row(
    *,
    model: str,
    dimension: str,
    method: str,
    template_id: str,
    item_id: str,
    order: str,
    session: int,
    rep: int,
    status: str = Status.OK.value,
    consistent: int | None = None,
    likert: int | None = None,
    score: float | None = None,
    raw_response: str | None = SIMULATED_ANSWER,
    **extra: object,
) -> dict[str, object]:
    """One answer as a row of the responses table, its ``response_id`` computed from its design key.

    Parameters
    ----------
    model, dimension, method, template_id, item_id, order : str
        The design key (``bias_validity.probes.schema.DESIGN_KEY``) without ``session``; ``order`` must be one of
        :func:`valid_orders` for ``method`` and ``template_id``.
    session, rep : int
        Measurement occasion and repetition within it.
    status : str
        One of :class:`bias_validity.probes.schema.Status`; only an ``ok`` answer carries a stance.
    consistent : int, optional
        1 stereotype-consistent, 0 inconsistent. Where ``likert`` is given and ``consistent`` is not, it is coded
        from the rating and the statement's reversal (:func:`bias_validity.probes.schema.likert_consistent`).
    likert : int, optional
        1-5 agreement rating (``explicit`` and ``reflection`` only).
    score : float, optional
        The continuous measure (log-odds, probability, WEAT effect).
    raw_response : str, optional
        What the model said.
    **extra
        Any other column of the responses table (``run``, ``seed``, ``temperature``, ``params``, ``prompt``,
        ``created_at``); ``run`` also enters the ``response_id`` as in collection.

    Returns
    -------
    dict
        The row, ready for :func:`rows_to_table`.

    Raises
    ------
    ValueError
        One line: an unknown method, status or column, an order the method does not take, a stance on an answer
        that is not ``ok``, a rating on a method without one, or a ``consistent`` that contradicts the rating.

    Examples
    --------
    >>> row = answer_row(model="sim:m", dimension="age", method="explicit", template_id="explicit-1",
    ...                  item_id="age-01", order="xy~reversed", session=1, rep=0, likert=5)
    >>> row["consistent"], len(row["response_id"])
    (0, 20)
    >>> answer_row(model="sim:m", dimension="age", method="implicit", template_id="implicit-1",
    ...            item_id="age-01", order="xy", session=1, rep=0, consistent=1)
    Traceback (most recent call last):
    ...
    ValueError: answer_row: implicit takes orders ab-xy, ab-yx, ba-xy, ba-yx, not 'xy'
    """
    _check_order(method, template_id, order)
    if status not in _STATUSES:
        raise ValueError(f"answer_row: status {status!r} is not one of {', '.join(sorted(_STATUSES))}")
    unknown = sorted(set(extra) - _EXTRA_COLUMNS)
    if unknown:
        raise ValueError(f"answer_row: {', '.join(unknown)} is not a column of the responses table (or is computed)")
    if status != Status.OK.value and (consistent is not None or likert is not None):
        raise ValueError(f"answer_row: a {status} answer carries no stance (consistent/likert)")
    if likert is not None:
        if method not in _LIKERT_METHODS:
            raise ValueError(f"answer_row: {method} answers carry no Likert rating")
        coded = likert_consistent(int(likert), is_reversed(order))
        if consistent is None:
            consistent = coded
        elif coded != consistent:
            raise ValueError(
                f"answer_row: rating {likert} on order {order!r} codes consistent={coded}, not {consistent}"
            )
    key = dict(
        model=model,
        dimension=dimension,
        method=method,
        template_id=template_id,
        item_id=item_id,
        order=order,
        session=session,
    )
    return {
        **key,
        "rep": rep,
        "response_id": response_id(run=int(extra.get("run", FIRST_RUN)), **key, rep=rep),
        "status": status,
        "consistent": consistent,
        "likert": likert,
        "score": score,
        "raw_response": raw_response,
        **extra,
    }


def rows_to_table(rows: Iterable[Mapping[str, object]], *, source: str = "simulated") -> pd.DataFrame:
    """Rows from :func:`answer_row` as a validated responses table.

    Parameters
    ----------
    rows : iterable of mapping
        The answers, one row each.
    source : str
        The table's name in a validation error.

    Returns
    -------
    pandas.DataFrame
        :func:`bias_validity.probes.schema.validate_responses` of the rows: every column, typed.

    Examples
    --------
    >>> rows = [answer_row(model="sim:m", dimension="age", method="implicit", template_id="implicit-1",
    ...                    item_id="age-01", order=order, session=1, rep=0, consistent=1)
    ...         for order in valid_orders("implicit")]
    >>> rows_to_table(rows)[["order", "consistent"]].to_numpy().tolist()
    [['ab-xy', 1], ['ab-yx', 1], ['ba-xy', 1], ['ba-yx', 1]]
    """
    frame = pd.DataFrame(list(rows))
    return validate_responses(frame if len(frame.columns) else empty_responses(), source=source)
