"""The responses store: one SQLite file holding the responses table, the run specs and skipped methods.

A rerun never duplicates a row: ``response_id`` is the primary key. Rows with status ``error`` are the only ones a
later write may replace, so a rerun completes what failed and keeps everything else exactly as it was.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from bias_validity.probes.schema import COLUMNS, SCHEMA_VERSION, Status, validate_responses

__all__ = [
    "ResponseStore",
    "Study",
    "read_study",
    "read_responses",
    "write_responses",
    "export_responses",
    "read_table_file",
]

_SQL_TYPES = {"string": "TEXT", "Int64": "INTEGER", "Float64": "REAL"}
_NAMES = [c.name for c in COLUMNS]


class ResponseStore:
    """A responses table in a SQLite file (created on first use).

    Each :meth:`write` is one transaction, so a process killed at any point leaves the file holding exactly the
    batches written before it.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(self.path)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=NORMAL")
        columns = ", ".join(
            f'"{c.name}" {_SQL_TYPES[c.dtype]}' + (" PRIMARY KEY" if c.name == "response_id" else "") for c in COLUMNS
        )
        with self._conn:
            self._conn.execute(f"CREATE TABLE IF NOT EXISTS responses ({columns})")
            self._conn.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
            self._conn.execute(
                "CREATE TABLE IF NOT EXISTS runs (run_id INTEGER PRIMARY KEY AUTOINCREMENT, spec TEXT NOT NULL)"
            )
            self._conn.execute(
                "CREATE TABLE IF NOT EXISTS skipped (model TEXT, method TEXT, reason TEXT, PRIMARY KEY (model, method))"
            )
            self._conn.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
        version = int(self._conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0])
        if version != SCHEMA_VERSION:
            raise ValueError(f"{self.path}: schema_version {version}, this toolkit reads {SCHEMA_VERSION}")

    def __enter__(self) -> ResponseStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._conn.close()

    def done_ids(self) -> set[str]:
        """Ids of answers that need no asking again (every status but ``error``)."""
        cur = self._conn.execute("SELECT response_id FROM responses WHERE status != ?", (Status.ERROR.value,))
        return {row[0] for row in cur}

    def write(self, rows: Iterable[Mapping[str, object]]) -> int:
        """Insert rows in one transaction; only an existing ``error`` row is replaced. Returns rows written."""
        placeholders = ", ".join("?" for _ in _NAMES)
        values = [tuple(_sql_value(row.get(name)) for name in _NAMES) for row in rows]
        with self._conn:
            before = self._conn.total_changes
            self._conn.executemany(
                f"DELETE FROM responses WHERE response_id = ? AND status = '{Status.ERROR.value}'",
                [(v[0],) for v in values],
            )
            deleted = self._conn.total_changes - before
            self._conn.executemany(f"INSERT OR IGNORE INTO responses VALUES ({placeholders})", values)
            return self._conn.total_changes - before - deleted

    def record_run(self, spec: Mapping[str, object]) -> None:
        """Keep the run spec (toolkit version, model provenance, decoding settings, seeds, package versions)."""
        with self._conn:
            self._conn.execute("INSERT INTO runs (spec) VALUES (?)", (json.dumps(spec, sort_keys=True, default=str),))

    def record_skip(self, model: str, method: str, reason: str) -> None:
        """Record that ``model`` cannot take ``method`` and why (shown in summaries and reports)."""
        with self._conn:
            self._conn.execute("INSERT OR REPLACE INTO skipped VALUES (?, ?, ?)", (model, method, reason))

    def read(self) -> pd.DataFrame:
        """The whole responses table, typed and validated, ordered by creation."""
        frame = pd.read_sql_query("SELECT * FROM responses ORDER BY rowid", self._conn)
        return validate_responses(frame, source=str(self.path))

    def skipped(self) -> pd.DataFrame:
        """Methods skipped per model, with the reason: columns model, method, reason."""
        return pd.read_sql_query("SELECT model, method, reason FROM skipped ORDER BY model, method", self._conn)

    def runs(self) -> list[dict[str, object]]:
        """Every run spec recorded in this store, oldest first."""
        return [json.loads(row[0]) for row in self._conn.execute("SELECT spec FROM runs ORDER BY run_id")]


def _sql_value(value: object) -> object:
    if value is None or value is pd.NA:
        return None
    if isinstance(value, float) and value != value:  # NaN
        return None
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    return value


@dataclass(frozen=True)
class Study:
    """Everything a store holds for analysis: the responses, the skipped methods and the run specs."""

    responses: pd.DataFrame
    skipped: pd.DataFrame
    runs: list[dict[str, object]]


def read_study(path: str | Path) -> Study:
    """Read the responses table, skipped methods and run specs of a store file."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such store")
    with ResponseStore(path) as store:
        return Study(store.read(), store.skipped(), store.runs())


def read_responses(path: str | Path) -> pd.DataFrame:
    """Read the validated responses table from a store file."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such store")
    with ResponseStore(path) as store:
        return store.read()


def write_responses(df: pd.DataFrame, path: str | Path, *, source: str = "responses") -> int:
    """Validate ``df`` and write it into a new store at ``path``; nothing is written if validation fails.

    The store is built in a temporary file beside ``path`` and renamed into place, so a failure leaves no partial
    store. Raises ``ValueError`` if ``path`` already exists.
    """
    path = Path(path)
    if path.exists():
        raise ValueError(f"{path}: already exists; choose a new store file")
    table = validate_responses(df, source=source)
    tmp = path.with_name(path.name + ".partial")
    tmp.unlink(missing_ok=True)
    try:
        with ResponseStore(tmp) as store:
            store.write(table.astype(object).where(table.notna(), None).to_dict("records"))
            store.record_run({"imported_from": source, "rows": len(table)})
            store._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        tmp.replace(path)
    finally:
        for leftover in (tmp, tmp.with_name(tmp.name + "-wal"), tmp.with_name(tmp.name + "-shm")):
            leftover.unlink(missing_ok=True)
    return len(table)


def read_table_file(path: str | Path) -> pd.DataFrame:
    """Read a responses table from CSV, JSONL or Parquet (by extension), unvalidated."""
    path = Path(path)
    suffix = path.suffix.lower()
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file")
    if suffix == ".csv":
        return pd.read_csv(path, dtype=str, keep_default_na=False, na_values=[""])
    if suffix in (".jsonl", ".ndjson"):
        try:
            return pd.read_json(path, lines=True, dtype=False)
        except ValueError as exc:
            raise ValueError(f"{path}: not valid JSON lines ({exc})") from None
    if suffix == ".parquet":
        return pd.read_parquet(path)
    raise ValueError(f"{path}: unknown format {suffix!r}; use .csv, .jsonl or .parquet")


def export_responses(store_path: str | Path, out: str | Path) -> int:
    """Write the store's responses table to CSV, JSONL or Parquet (by the extension of ``out``)."""
    out = Path(out)
    table = read_responses(store_path)
    suffix = out.suffix.lower()
    if suffix == ".csv":
        table.to_csv(out, index=False)
    elif suffix in (".jsonl", ".ndjson"):
        table.to_json(out, orient="records", lines=True)
    elif suffix == ".parquet":
        table.to_parquet(out, index=False)
    else:
        raise ValueError(f"{out}: unknown format {suffix!r}; use .csv, .jsonl or .parquet")
    return len(table)
