"""``bias-validity import``: load a responses table (CSV, JSONL or Parquet) from another tool into a new store."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "import",
        help="import a responses table (CSV, JSONL or Parquet) into a new store",
        description="Validate a responses table in the documented schema (bias_validity.probes.schema: response_id, "
        "model, dimension, method, template_id, item_id, order, session, rep, status, ...) and write it into a new "
        "SQLite store. Another tool's table imports as it is: --map renames its columns to ours, --set gives a "
        "column it lacks one value for every row, and a missing response_id is derived from the design key. A "
        "missing column, a wrong type or an unknown status is reported with its row and field, and nothing is "
        "written.",
        epilog="Example: bias-validity import theirs.csv --map llm=model answer_status=status --set session=1 "
        "--out study.sqlite",
    )
    p.add_argument("file", help="the responses table: .csv, .jsonl or .parquet")
    p.add_argument("--out", required=True, help="the new SQLite store to create (must not exist)")
    p.add_argument(
        "--map",
        nargs="+",
        action="extend",
        default=[],
        metavar="THEIRS=OURS",
        help="rename the table's column THEIRS to the responses-table column OURS (repeatable: the pairs add up)",
    )
    p.add_argument(
        "--set",
        nargs="+",
        action="extend",
        default=[],
        metavar="COLUMN=VALUE",
        help="add COLUMN, which the table lacks, with VALUE in every row (e.g. session=1; repeatable)",
    )
    p.set_defaults(func=run)


def _pairs(option: str, items: list[str]) -> dict[str, str]:
    """``["a=b", ...]`` as a dict; a malformed item is a usage error naming it."""
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key or (option == "--map" and not value):
            raise ValueError(f"{option} {item!r}: write it as {'THEIRS=OURS' if option == '--map' else 'COLUMN=VALUE'}")
        if key in out:
            raise ValueError(f"{option} names {key!r} twice")
        out[key] = value
    return out


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from bias_validity.probes.sources import read_responses_table
    from bias_validity.probes.store import adapt_table, write_responses

    rename, constants = _pairs("--map", args.map), _pairs("--set", args.set)
    source = Path(args.file).name
    table = adapt_table(read_responses_table(args.file), rename=rename, constants=constants, source=source)
    n = write_responses(table, args.out, source=source)
    print(f"imported {n} responses from {args.file} into {args.out}")
    return 0
