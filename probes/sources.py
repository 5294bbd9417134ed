"""Where a study comes from: a store file or a responses table file, told apart by what the file holds.

A file that is neither is refused in one line that says what it is and what to give instead.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pandas as pd
import pyarrow

from bias_validity.probes.store import read_table_file

__all__ = ["TABLE_SUFFIXES", "is_table_file", "read_responses_table", "describe_file"]

TABLE_SUFFIXES = (".csv", ".jsonl", ".ndjson", ".parquet")
_SQLITE_MAGIC = b"SQLite format 3\x00"
_WHAT_TO_GIVE = "give a store (from bias-validity collect or import) or a .csv, .jsonl or .parquet responses table"


def is_table_file(path: str | Path) -> bool:
    """Whether ``path`` names a responses table file (by its extension) rather than a store."""
    file = Path(path)
    return file.suffix.lower() in TABLE_SUFFIXES and file.is_file()


def read_responses_table(path: str | Path) -> pd.DataFrame:
    """Read a responses table file (CSV, JSONL or Parquet), unvalidated; a file that cannot be read is one line."""
    try:
        return read_table_file(path)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError, pyarrow.ArrowException) as exc:
        reason = " ".join(str(exc).split())
        raise ValueError(f"{path}: cannot be read as a {Path(path).suffix} table ({reason})") from None


def describe_file(file: Path) -> str:
    """What a file that is not a store is, and what to run instead; "" for a SQLite store with a responses table."""
    if file.is_dir():
        return f"a directory; {_WHAT_TO_GIVE}"
    head = file.read_bytes()[:4096] if file.stat().st_size else b""
    if head.startswith(_SQLITE_MAGIC):
        with sqlite3.connect(f"{file.resolve().as_uri()}?mode=ro", uri=True) as conn:
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        return "" if "responses" in tables else f"a SQLite database without a responses table; {_WHAT_TO_GIVE}"
    if not head:
        return f"an empty file; {_WHAT_TO_GIVE}"
    fit = f"a netCDF file, such as a saved fit: pass it as --fit {file} to report or compare, beside its store"
    binary = {
        b"\x89HDF\r\n\x1a\n": fit,
        b"CDF\x01": fit,
        b"CDF\x02": fit,
        b"PAR1": f"a Parquet file without the .parquet extension; rename it to {file.stem}.parquet",
        b"\x89PNG": f"a PNG image; {_WHAT_TO_GIVE}",
        b"%PDF": f"a PDF document; {_WHAT_TO_GIVE}",
        b"PK\x03\x04": f"a zip archive; unpack it and {_WHAT_TO_GIVE}",
        b"\x1f\x8b": f"a gzip-compressed file; decompress it and {_WHAT_TO_GIVE}",
    }
    for magic, what in binary.items():
        if head.startswith(magic):
            return what
    try:
        text = head.decode("utf-8").lstrip()
    except UnicodeDecodeError:
        return f"a binary file of another kind; {_WHAT_TO_GIVE}"
    lowered = text[:200].lower()
    if lowered.startswith(("<!doctype html", "<html")):
        return f"an HTML page, such as a rendered report; {_WHAT_TO_GIVE}"
    if text.startswith(("{", "[")):
        try:
            data = json.loads(file.read_text(encoding="utf-8"))
        except ValueError:
            return f"JSON lines or broken JSON; name a JSON-lines responses table .jsonl, or {_WHAT_TO_GIVE}"
        if isinstance(data, dict) and "cells" in data:
            return f"the JSON that bias-validity summary prints; {_WHAT_TO_GIVE}"
        if isinstance(data, dict) and "quantities" in data:
            return f"the JSON that bias-validity fit prints; {_WHAT_TO_GIVE}"
        if isinstance(data, list) and data and isinstance(data[0], dict) and {"family", "parameters"} <= set(data[0]):
            return "a models file: pass it with --models-file beside the store or responses table"
        return f"a JSON document; {_WHAT_TO_GIVE}"
    first = text.splitlines()[0] if text else ""
    if "," in first or "\t" in first:
        return f"a table without the .csv extension; rename it to {file.stem}.csv, or {_WHAT_TO_GIVE}"
    return f"a text file; {_WHAT_TO_GIVE}"
