"""Hypothesis strategies for the report property: random table shapes drawn by hypothesis (so it can shrink them),
their answers and the models files drawn by ``bias_validity.simulate.random_tables`` from a drawn seed.

The check itself is ``bias_validity.cli._report_check.report_problems``, which bench/property_reports.py runs
longer on shapes and seeds it draws with numpy.
"""

from __future__ import annotations

from hypothesis import strategies as st

from bias_validity.probes.schema import IMPLICIT_ORDERS
from bias_validity.simulate.random_tables import (
    DIMENSIONS,
    METHODS,
    MISSING_SHARES,
    MODEL_NAMES,
    NOT_OK_SHARES,
    TableShape,
    random_models_file,
    random_table,
)

__all__ = ["table_shapes", "responses_tables", "models_files"]

_SEEDS = st.integers(0, 2**32 - 1)


def _some(values: tuple[str, ...], most: int) -> st.SearchStrategy[tuple[str, ...]]:
    return st.lists(st.sampled_from(values), min_size=1, max_size=most, unique=True).map(tuple)


def table_shapes() -> st.SearchStrategy[TableShape]:
    """Random models, methods, dimensions, items, wordings, sessions, repetitions and orders, down to one of each,
    with random shares of answers that are not ``ok`` and of missing cells."""
    return st.builds(
        TableShape,
        models=_some(MODEL_NAMES, 4),
        methods=_some(METHODS, 6),
        dimensions=_some(DIMENSIONS, 3),
        n_items=st.integers(1, 4),
        n_templates=st.integers(1, 3),
        sessions=st.integers(1, 2),
        reps=st.integers(1, 3),
        orders=_some(IMPLICIT_ORDERS, 4),
        not_ok=st.sampled_from(NOT_OK_SHARES),
        missing=st.sampled_from(MISSING_SHARES),
    )


def responses_tables() -> st.SearchStrategy:
    """A validated responses table of a random shape (:func:`table_shapes`), answers from a random seed."""
    return st.builds(random_table, table_shapes(), _SEEDS)


def models_files() -> st.SearchStrategy:
    """A models file's CSV text from a random seed, or None (no models file)."""
    return st.none() | _SEEDS.map(random_models_file)
