"""``bias-validity import``: load a responses table (CSV, JSONL or Parquet) from another tool into a new store."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "import",
        help="import a responses table (CSV, JSONL or Parquet) into a new store",
        description="Validate a responses table in the documented schema (bias_validity.probes.schema: response_id, "
        "model, dimension, method, template_id, item_id, order, session, rep, status, ...) and write it into a new "
        "SQLite store. A missing column, a wrong type or an unknown status is reported with its row and field, and "
        "nothing is written.",
        epilog="Example: bias-validity import responses.csv --out study.sqlite",
    )
    p.add_argument("file", help="the responses table: .csv, .jsonl or .parquet")
    p.add_argument("--out", required=True, help="the new SQLite store to create (must not exist)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from bias_validity.cli._options import read_responses_table
    from bias_validity.probes.store import write_responses

    n = write_responses(read_responses_table(args.file), args.out, source=Path(args.file).name)
    print(f"imported {n} responses from {args.file} into {args.out}")
    return 0
