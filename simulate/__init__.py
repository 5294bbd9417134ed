"""Responses tables drawn from known truths: the one place that builds them (tests, benchmarks, docs).

Every simulator builds its rows with :func:`answer_row` (the ``response_id``, the orders each method takes and
the Likert coding come from :mod:`bias_validity.probes.schema`) and validates them with :func:`rows_to_table`:

- :func:`simulate_responses` draws every method of a study from a known model;
- :func:`cells_to_responses` expands the design cells of the Bayesian model's simulator
  (:func:`bias_validity.psychometrics.bayes.simulate_study`) into one row per answer;
- :func:`random_table` and :func:`random_models_file` draw random but schema-valid tables and models files of a
  :class:`TableShape` (:func:`random_shape`), for the report's property test;
- :mod:`bias_validity.simulate.worked_example` is the README's study of base and tuned models.

:func:`bias_validity.cli._report_check.report_problems`, the report's property, builds and renders reports, so
it calls the analyses and the reports; it is imported from its module, not from here, which keeps this package
below the analyses.

Examples
--------
>>> row = answer_row(model="sim:m", dimension="age", method="explicit", template_id="explicit-1",
...                  item_id="age-01", order="xy", session=1, rep=0, likert=4)
>>> rows_to_table([row]).loc[0, ["method", "order", "likert", "consistent"]].astype(str).tolist()
['explicit', 'xy', '4', '1']
"""

from __future__ import annotations

from bias_validity.simulate.cells import cells_to_responses, with_design_orders
from bias_validity.simulate.random_tables import TableShape, random_models_file, random_shape, random_table
from bias_validity.simulate.responses import DEFAULT_SC, simulate_responses
from bias_validity.simulate.rows import SIMULATED_ANSWER, answer_row, rows_to_table, valid_orders

__all__ = [
    "DEFAULT_SC",
    "SIMULATED_ANSWER",
    "TableShape",
    "answer_row",
    "cells_to_responses",
    "random_models_file",
    "random_shape",
    "random_table",
    "rows_to_table",
    "simulate_responses",
    "valid_orders",
    "with_design_orders",
]
