"""``bias-validity export``: write the responses table to CSV, JSONL or Parquet."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "export",
        help="export the responses table (CSV, JSONL or Parquet, by extension)",
        epilog="Example: bias-validity export study.sqlite --out responses.parquet",
    )
    p.add_argument("store", help="the SQLite store")
    p.add_argument("--out", required=True, help="output file: .csv, .jsonl or .parquet")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from bias_validity.probes.store import export_responses

    n = export_responses(args.store, args.out)
    print(f"wrote {n} responses to {args.out}")
    return 0
