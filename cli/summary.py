"""``bias-validity summary``: raw SC with Wilson intervals and status counts per model x dimension x method."""

from __future__ import annotations

import argparse

from bias_validity.cli._options import SOURCE_HELP, add_analysis_arguments, add_run_argument, analysis_config


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "summary",
        help="raw SC with Wilson intervals and status counts",
        description="Print the share of stereotype-consistent answers (SC) with Wilson intervals and the counts of "
        "each status, per model x dimension x method, the acquiescence table, and the methods skipped per model.",
        epilog="Example: bias-validity summary study.sqlite --json (or responses.csv)",
    )
    p.add_argument("store", help=SOURCE_HELP)
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    add_run_argument(p)
    add_analysis_arguments(p, ci="classical")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import json

    from bias_validity.analyses.study import read_study

    config = analysis_config(args)
    study = read_study(args.store, run=args.run)
    table, balance, skipped = study.sc_table(config), study.acquiescence(config), study.skipped
    if args.json:
        payload = {
            "store": args.store,
            "run": study.run,
            "runs": list(study.run_ids),
            "ci": table.attrs["ci"],
            "interval": table.attrs["method"],
            "cells": json.loads(table.to_json(orient="records")),
            "acquiescence": json.loads(balance.to_json(orient="records")),
            "skipped": skipped.to_dict("records"),
        }
        print(json.dumps(payload, indent=2))
        return 0
    print(table.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    if len(balance):
        print("\nacquiescence (0.5: agreement follows the statement; 1: agrees with everything):")
        print(balance.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    for row in skipped.itertuples():
        print(f"skipped: {row.model} {row.method}: {row.reason}")
    return 0
