"""A longer run of the report property (tests/test_property_reports.py): random responses tables and models files,
each built into a report and rendered; a table fails when building or rendering raises or a verdict lacks a reason.

Counts the tables tried, the failures (with the first few problems) and the shapes drawn (models, methods,
dimensions, answers). No Bayesian fit. The last line printed is one JSON object.
Usage: python bench/property_reports.py [--examples 500] [--seed 0]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the strategies live in tests/_support

from _support.property_reports import check_report, models_files, responses_tables  # noqa: E402
from hypothesis import HealthCheck, Phase, given, seed, settings  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=500, help="tables to try (default 500)")
    parser.add_argument("--seed", type=int, default=0, help="hypothesis seed (default 0)")
    args = parser.parse_args()
    tried, failures, shapes = 0, [], []

    @seed(args.seed)
    @settings(
        max_examples=args.examples,
        deadline=None,
        phases=[Phase.generate],
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(table=responses_tables(), models_file=models_files())
    def run(table, models_file):
        nonlocal tried
        tried += 1
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
            problems = check_report(table, models_file)
        except Exception as exc:  # noqa: BLE001 - every crash is counted and shown, none stops the run
            problems = [f"{type(exc).__name__}: {exc} at {traceback.extract_tb(exc.__traceback__)[-1]}"]
        if problems:
            failures.append(problems[:3])

    start = time.perf_counter()
    run()
    seconds = time.perf_counter() - start
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
