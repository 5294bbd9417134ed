"""A longer run of the report property (tests/test_property_reports.py): random responses tables and models files,
each built into a report and rendered; a table fails when building or rendering raises or the report does not hold
(bias_validity.cli._report_check.report_problems: a verdict without a reason of its own, a sentence printing NaN).
Shapes, answers and models files are drawn with numpy (bias_validity.simulate.random_tables), from ``--seed``.

Counts the tables tried, the failures (with the first few problems) and the shapes drawn (models, methods,
dimensions, answers). No Bayesian fit. The last line printed is one JSON object.
Usage: python bench/property_reports.py [--examples 500] [--seed 0]
"""

from __future__ import annotations

import argparse
import json
import time
import traceback

import numpy as np

from bias_validity.cli._report_check import report_problems
from bias_validity.simulate.random_tables import random_models_file, random_shape, random_table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=500, help="tables to try (default 500)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the shapes, answers and models files (default 0)")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    failures, shapes = [], []
    start = time.perf_counter()
    for _ in range(args.examples):
        table = random_table(random_shape(rng), rng)
        models_file = random_models_file(rng) if rng.random() < 0.5 else None
        shapes.append(
            (
                table["model"].nunique(),
                table["method"].nunique(),
                table["dimension"].nunique(),
                len(table),
                models_file is not None,
            )
        )
        try:
            problems = report_problems(table, models_file)
        except Exception as exc:  # noqa: BLE001 - every crash is counted and shown, none stops the run
            problems = [f"{type(exc).__name__}: {exc} at {traceback.extract_tb(exc.__traceback__)[-1]}"]
        if problems:
            failures.append(problems[:3])
    seconds = time.perf_counter() - start
    tried = len(shapes)
    models, methods, dims, answers, with_file = zip(*shapes, strict=True) if shapes else ((),) * 5
    print(
        json.dumps(
            {
                "tables_tried": tried,
                "failures": len(failures),
                "first_failures": failures[:5],
                "one_model_tables": sum(m == 1 for m in models),
                "one_dimension_tables": sum(d == 1 for d in dims),
                "with_models_file": sum(with_file),
                "max_methods": max(methods, default=0),
                "median_answers": sorted(answers)[len(answers) // 2] if answers else 0,
                "seconds_per_table": round(seconds / max(tried, 1), 3),
            }
        )
    )


if __name__ == "__main__":
    main()
