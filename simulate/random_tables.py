"""Random but schema-valid responses tables and models files, for the report's property test and its benchmark.

A table's shape (:class:`TableShape`: models, methods, dimensions, items, wordings, sessions, repetitions, implicit
orders, share of answers that are not ``ok``, share of missing cells) is drawn by :func:`random_shape` from a numpy
Generator, or by the property test's hypothesis strategies; :func:`random_table` then draws the answers of that
shape, row by row with :func:`bias_validity.simulate.rows.answer_row`, and :func:`random_models_file` draws a
models file's text. Nothing here depends on hypothesis.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from bias_validity.probes.schema import (
    CHOICE_PREFIX,
    IMPLICIT_ORDERS,
    LIKERT_MIDPOINT,
    LIKERT_SCALE,
    REVERSED_SUFFIX,
    WEAT_ITEM,
    Method,
    Status,
    is_reversed,
    keyed_likert,
)
from bias_validity.simulate.rows import answer_row, rows_to_table, valid_orders

__all__ = [
    "MODEL_NAMES",
    "DIMENSIONS",
    "METHODS",
    "FILE_MODEL_NAMES",
    "NOT_OK_SHARES",
    "MISSING_SHARES",
    "TableShape",
    "random_shape",
    "random_table",
    "random_models_file",
]

#: The model names a random table draws from: base and tuned pairs at two sizes, an HTTP endpoint, word vectors.
MODEL_NAMES: tuple[str, ...] = (
    "hf:base-8b",
    "hf:base-8b-instruct",
    "openai:big-70b@127.0.0.1:8000",
    "hf:big-70b-instruct",
    "glove:x",
)
#: The dimensions a random table draws from.
DIMENSIONS: tuple[str, ...] = ("age", "race", "science", "gender_career")
#: Every method, in the schema's order.
METHODS: tuple[str, ...] = tuple(m.value for m in Method)
#: The names a random models file draws from: the tables' models, the same written otherwise, and one unknown.
FILE_MODEL_NAMES: tuple[str, ...] = (*MODEL_NAMES, "BASE-8B", "big-70b", "gpt-2")
#: The shares of answers that are not ``ok`` (refused, unparseable, ...) and of cells left out that a shape takes.
NOT_OK_SHARES: tuple[float, ...] = (0.0, 0.1, 0.5, 1.0)
MISSING_SHARES: tuple[float, ...] = (0.0, 0.3, 0.7)

_SAMPLED = frozenset({Method.IMPLICIT.value, Method.ABLATED.value})
_LIKERT = frozenset({Method.EXPLICIT.value, Method.REFLECTION.value})
_SCORED = frozenset({Method.LOGPROB.value, Method.EMBEDDING.value})
_NOT_OK = tuple(s.value for s in Status if s is not Status.OK)
_NOT_OK_ANSWER = "<b>no</b> | `x`"


@dataclass(frozen=True)
class TableShape:
    """The shape of a random responses table.

    Attributes
    ----------
    models, methods, dimensions : tuple of str
        What is asked of whom (non-empty, no repeats; methods from :class:`bias_validity.probes.schema.Method`).
    n_items, n_templates, sessions, reps : int
        Items per dimension, wordings per sampled or Likert method (scored methods have one), measurement
        occasions and repetitions per occasion (each >= 1).
    orders : tuple of str
        The implicit orders asked (a non-empty subset of ``IMPLICIT_ORDERS``): the orders of ``implicit``,
        ``ablated`` and closed-set ``logprob`` rows, and, each with its reversal, of ``reflection``.
    not_ok : float
        Share of answers that are not ``ok`` (a random one of the other statuses, no stance).
    missing : float
        Share of design cells (wording x item x order) left out.

    Examples
    --------
    >>> TableShape(models=("sim:a",), methods=("implicit",), dimensions=("age",), orders=("xy",))
    Traceback (most recent call last):
    ...
    ValueError: TableShape: orders must be implicit orders (ab-xy, ab-yx, ba-xy, ba-yx), got ('xy',)
    """

    models: tuple[str, ...]
    methods: tuple[str, ...]
    dimensions: tuple[str, ...]
    n_items: int = 2
    n_templates: int = 1
    sessions: int = 1
    reps: int = 1
    orders: tuple[str, ...] = IMPLICIT_ORDERS
    not_ok: float = 0.0
    missing: float = 0.0

    def __post_init__(self) -> None:
        for name in ("models", "methods", "dimensions", "orders"):
            values = tuple(getattr(self, name))
            object.__setattr__(self, name, values)
            if not values or len(set(values)) != len(values):
                raise ValueError(f"TableShape: {name} must be non-empty and without repeats, got {values!r}")
        unknown = [m for m in self.methods if m not in METHODS]
        if unknown:
            raise ValueError(f"TableShape: unknown method(s) {unknown}; valid: {', '.join(METHODS)}")
        if not set(self.orders) <= set(IMPLICIT_ORDERS):
            raise ValueError(
                f"TableShape: orders must be implicit orders ({', '.join(IMPLICIT_ORDERS)}), got {self.orders!r}"
            )
        for name in ("n_items", "n_templates", "sessions", "reps"):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"TableShape: {name} must be >= 1, got {getattr(self, name)!r}")
        for name in ("not_ok", "missing"):
            if not 0.0 <= float(getattr(self, name)) <= 1.0:
                raise ValueError(f"TableShape: {name} must lie in [0, 1], got {getattr(self, name)!r}")


def _some(rng: np.random.Generator, values: tuple[str, ...], most: int) -> tuple[str, ...]:
    """1 to ``most`` distinct values, in a random order."""
    k = int(rng.integers(1, min(most, len(values)) + 1))
    return tuple(values[i] for i in rng.permutation(len(values))[:k])


def random_shape(rng: np.random.Generator) -> TableShape:
    """A random table shape: 1-4 models, 1-6 methods, 1-3 dimensions, 1-4 items, 1-3 wordings, 1-2 sessions, 1-3
    repetitions, 1-4 implicit orders, and a share of not-``ok`` answers and of missing cells.

    Parameters
    ----------
    rng : numpy.random.Generator
        The source of the draws.

    Returns
    -------
    TableShape

    Examples
    --------
    >>> shape = random_shape(np.random.default_rng(0))
    >>> 1 <= len(shape.models) <= 4 and set(shape.methods) <= set(METHODS) and shape.not_ok in NOT_OK_SHARES
    True
    """
    return TableShape(
        models=_some(rng, MODEL_NAMES, 4),
        methods=_some(rng, METHODS, 6),
        dimensions=_some(rng, DIMENSIONS, 3),
        n_items=int(rng.integers(1, 5)),
        n_templates=int(rng.integers(1, 4)),
        sessions=int(rng.integers(1, 3)),
        reps=int(rng.integers(1, 4)),
        orders=_some(rng, IMPLICIT_ORDERS, 4),
        not_ok=float(rng.choice(NOT_OK_SHARES)),
        missing=float(rng.choice(MISSING_SHARES)),
    )


def _generator(seed: int | np.random.Generator) -> np.random.Generator:
    return seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)


def _cell_orders(shape: TableShape, method: str, template: str) -> tuple[str, ...]:
    """The orders a method's cells take in ``shape``: the drawn implicit orders where the method takes them."""
    if method in _SAMPLED or template.startswith(CHOICE_PREFIX):
        return shape.orders
    if method == Method.REFLECTION.value:
        return tuple(o for o in valid_orders(method) if o.removesuffix(REVERSED_SUFFIX) in shape.orders)
    return valid_orders(method, template)


def _answer(rng: np.random.Generator, share: float, not_ok: float, **key: object) -> dict[str, object]:
    """One answer: not ``ok`` at ``not_ok``, else stereotype-consistent at ``share``."""
    if rng.random() < not_ok:
        return answer_row(**key, status=_NOT_OK[rng.integers(len(_NOT_OK))], raw_response=_NOT_OK_ANSWER)
    consistent = int(rng.random() < share)
    method, order = str(key["method"]), str(key["order"])
    if method in _LIKERT:  # a rating keyed towards the stereotype: 4-5 consistent, else 1-3 (3 takes no side)
        keyed = int(rng.integers(LIKERT_MIDPOINT + 1, LIKERT_SCALE[-1] + 1) if consistent else rng.integers(1, 4))
        return answer_row(**key, likert=int(keyed_likert(keyed, is_reversed(order))), raw_response="ok")
    if method in _SCORED:
        score = float(rng.normal(0.5 if consistent else -0.5, 1.0))
        stance = None if key["item_id"] == WEAT_ITEM else int(score > 0)
        return answer_row(**key, consistent=stance, score=score, raw_response="ok")
    return answer_row(**key, consistent=consistent, raw_response="ok")


def random_table(shape: TableShape, seed: int | np.random.Generator = 0) -> pd.DataFrame:
    """A random, schema-valid responses table of the given shape.

    Parameters
    ----------
    shape : TableShape
        What to ask (:func:`random_shape` draws one).
    seed : int or numpy.random.Generator
        The source of the answers.

    Returns
    -------
    pandas.DataFrame
        A validated responses table. Each model x method answers consistently at its own random share; each
        wording x item x order cell is left out at ``shape.missing`` (when all are, one answer is kept, so the
        table is never empty); the rest is asked in every session and repetition. Orders are those each method
        takes (:func:`bias_validity.simulate.rows.valid_orders`): the shape's implicit orders for ``implicit``,
        ``ablated`` and the closed-set ``logprob`` wording (``choice:implicit-1``, present at random), the same
        with their reversals for ``reflection``, both attribute orders and their reversals for ``explicit``.
        Likert ratings are 4-5 on the stereotype's side, else 1-3 (the midpoint takes no side), turned for a
        reversed statement; scores are normal around +/-0.5, consistent when positive; ``embedding`` sometimes
        carries a ``WEAT`` item without a stance.

    Examples
    --------
    >>> shape = TableShape(models=("hf:base-8b",), methods=("implicit", "explicit"), dimensions=("age",))
    >>> table = random_table(shape, seed=0)
    >>> table.groupby("method")["order"].unique().map(sorted).to_dict()
    {'explicit': ['xy', 'xy~reversed', 'yx', 'yx~reversed'], 'implicit': ['ab-xy', 'ab-yx', 'ba-xy', 'ba-yx']}
    """
    rng = _generator(seed)
    rows: list[dict[str, object]] = []
    for model in shape.models:
        for method in shape.methods:
            share = rng.uniform(0, 1)
            for dim in shape.dimensions:
                items = [f"{dim}-{i + 1:02d}" for i in range(shape.n_items)]
                if method == Method.EMBEDDING.value and rng.random() < 0.5:
                    items.append(WEAT_ITEM)
                templates = [f"{method}-{t + 1}" for t in range(1 if method in _SCORED else shape.n_templates)]
                if method == Method.LOGPROB.value and rng.random() < 0.5:
                    templates.append(f"{CHOICE_PREFIX}{Method.IMPLICIT.value}-1")
                for template in templates:
                    for item in items:
                        for order in _cell_orders(shape, method, template):
                            if rng.random() < shape.missing:
                                continue
                            key = dict(model=model, dimension=dim, method=method, template_id=template, item_id=item)
                            rows += [
                                _answer(rng, share, shape.not_ok, **key, order=order, session=session, rep=rep)
                                for session in range(1, shape.sessions + 1)
                                for rep in range(shape.reps)
                            ]
    if not rows:  # every cell dropped: keep one answer, so the table is never empty
        method, dim = shape.methods[0], shape.dimensions[0]
        template = f"{method}-1"
        key = dict(model=shape.models[0], dimension=dim, method=method, template_id=template, item_id=f"{dim}-01")
        rows.append(_answer(rng, 0.5, 0.0, **key, order=_cell_orders(shape, method, template)[0], session=1, rep=0))
    return rows_to_table(rows, source="random table")


def random_models_file(seed: int | np.random.Generator = 0) -> str:
    """A random models file's CSV text.

    Parameters
    ----------
    seed : int or numpy.random.Generator
        The source of the draws.

    Returns
    -------
    str
        A comment line, the header (``model,family,parameters,training_tokens,aligned``) and 1-5 rows naming
        models of :data:`FILE_MODEL_NAMES` (a table's models, the same written otherwise, or none of them; never
        two that name the same model), parameters and tokens written all bare or all with unit suffixes, one of
        two families and a random alignment each.

    Examples
    --------
    >>> text = random_models_file(3)
    >>> text.splitlines()[1]
    'model,family,parameters,training_tokens,aligned'
    >>> 1 <= len(text.splitlines()) - 2 <= 5
    True
    """
    rng = _generator(seed)
    names: list[str] = []
    seen: set[str] = set()
    wanted = int(rng.integers(1, 6))
    for i in rng.permutation(len(FILE_MODEL_NAMES)):
        name = FILE_MODEL_NAMES[i]
        bare = name.split(":", 1)[-1].split("@")[0].lower()
        if bare not in seen and len(names) < wanted:
            names.append(name)
            seen.add(bare)
    suffixed = bool(rng.random() < 0.5)
    sizes = ("8B", "70B", "1.5T", "135M") if suffixed else ("8", "70", "1500", "0.135")
    tokens = ("15T", "2T") if suffixed else ("15", "2")
    lines = ["# random models file", "model,family,parameters,training_tokens,aligned"]
    for name in names:
        family = ("llama-3", "llama-2")[rng.integers(2)]
        aligned = ("yes", "no")[rng.integers(2)]
        lines.append(
            ",".join([name, family, sizes[rng.integers(len(sizes))], tokens[rng.integers(len(tokens))], aligned])
        )
    return "\n".join(lines) + "\n"
