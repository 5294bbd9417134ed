"""The responses store: one SQLite file holding the responses table, the run specs and skipped methods.

A rerun never duplicates a row: ``response_id`` is the primary key. Rows with status ``error`` are the only ones a
later write may replace, so a rerun completes what failed and keeps everything else exactly as it was.

A store holds one or more runs (the ``run`` column): answers collected under one run spec (see
:mod:`bias_validity.probes.run_spec`). Analyses read one run at a time, the latest unless told otherwise
(:func:`read_run`), so answers collected under different settings are never pooled silently.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from bias_validity.probes.schema import (
    COLUMNS,
    DESIGN_KEY,
    FIRST_RUN,
    SCHEMA_VERSION,
    Status,
    response_id,
    validate_responses,
)

__all__ = [
    "ResponseStore",
    "StoredRun",
    "read_run",
    "read_responses",
    "write_responses",
    "export_responses",
    "read_table_file",
    "adapt_table",
    "select_run",
]

_SQL_TYPES = {"string": "TEXT", "Int64": "INTEGER", "Float64": "REAL"}
_NAMES = [c.name for c in COLUMNS]
_DEFAULTS = {c.name: c.default for c in COLUMNS if c.default is not None}
_RUNS_TABLE = (
    "CREATE TABLE IF NOT EXISTS runs (entry INTEGER PRIMARY KEY AUTOINCREMENT, run INTEGER NOT NULL, model TEXT, "
    "spec TEXT NOT NULL)"
)
_SKIPPED_TABLE = (
    "CREATE TABLE IF NOT EXISTS skipped (run INTEGER NOT NULL, model TEXT, method TEXT, reason TEXT, "
    "PRIMARY KEY (run, model, method))"
)


class ResponseStore:
    """A responses table in a SQLite file (created on first use; a store of schema 1 is upgraded in place).

    Each :meth:`write` is one transaction, so a process killed at any point leaves the file holding exactly the
    batches written before it.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(self.path)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=NORMAL")
        with self._conn:
            self._conn.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
            found = self._conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
            version = int(found[0]) if found else SCHEMA_VERSION
            if version == 1:
                _upgrade_from_1(self._conn)
            elif version != SCHEMA_VERSION:
                raise ValueError(f"{self.path}: schema_version {version}, this toolkit reads {SCHEMA_VERSION}")
            columns = ", ".join(
                f'"{c.name}" {_SQL_TYPES[c.dtype]}' + (" PRIMARY KEY" if c.name == "response_id" else "")
                for c in COLUMNS
            )
            self._conn.execute(f"CREATE TABLE IF NOT EXISTS responses ({columns})")
            self._conn.execute(_RUNS_TABLE)
            self._conn.execute(_SKIPPED_TABLE)
            self._conn.execute("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))

    def __enter__(self) -> ResponseStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._conn.close()

    def done_ids(self, run: int = FIRST_RUN) -> set[str]:
        """Ids of the answers of ``run`` that need no asking again (every status but ``error``)."""
        cur = self._conn.execute(
            "SELECT response_id FROM responses WHERE status != ? AND run = ?", (Status.ERROR.value, int(run))
        )
        return {row[0] for row in cur}

    def write(self, rows: Iterable[Mapping[str, object]]) -> int:
        """Insert rows in one transaction; only an existing ``error`` row is replaced. Returns rows written.

        A row without ``run`` belongs to the first run.
        """
        placeholders = ", ".join("?" for _ in _NAMES)
        names = ", ".join(f'"{name}"' for name in _NAMES)
        values = [tuple(_with_default(name, _sql_value(row.get(name))) for name in _NAMES) for row in rows]
        with self._conn:
            before = self._conn.total_changes
            self._conn.executemany(
                f"DELETE FROM responses WHERE response_id = ? AND status = '{Status.ERROR.value}'",
                [(v[0],) for v in values],
            )
            deleted = self._conn.total_changes - before
            self._conn.executemany(f"INSERT OR IGNORE INTO responses ({names}) VALUES ({placeholders})", values)
            return self._conn.total_changes - before - deleted

    def record_run(self, run: int, model: str | None, spec: Mapping[str, object]) -> None:
        """Keep one collection's run spec (model identity, decoding settings, seeds, templates, versions)."""
        text = json.dumps({**spec, "run": int(run), "model": model}, sort_keys=True, default=str)
        with self._conn:
            self._conn.execute("INSERT INTO runs (run, model, spec) VALUES (?, ?, ?)", (int(run), model, text))

    def record_skip(self, run: int, model: str, method: str, reason: str) -> None:
        """Record that ``model`` cannot take ``method`` in ``run`` and why (shown in summaries and reports)."""
        with self._conn:
            self._conn.execute("INSERT OR REPLACE INTO skipped VALUES (?, ?, ?, ?)", (int(run), model, method, reason))

    def run_ids(self) -> list[int]:
        """The runs this store holds (answers or specs), in order."""
        cur = self._conn.execute("SELECT run FROM responses UNION SELECT run FROM runs ORDER BY run")
        return [int(row[0]) for row in cur]

    def models_in_run(self, run: int) -> set[str]:
        """The models with answers stored in ``run``."""
        cur = self._conn.execute("SELECT DISTINCT model FROM responses WHERE run = ?", (int(run),))
        return {row[0] for row in cur}

    def read(self, run: int | None = None) -> pd.DataFrame:
        """The responses table (of one ``run``, or of all), typed and validated, ordered by creation."""
        where, args = ("WHERE run = ?", (int(run),)) if run is not None else ("", ())
        frame = pd.read_sql_query(f"SELECT * FROM responses {where} ORDER BY rowid", self._conn, params=args)
        return validate_responses(frame, source=str(self.path))

    def skipped(self, run: int | None = None) -> pd.DataFrame:
        """Methods skipped per model, with the reason (of one ``run``, or of all): columns run, model, method,
        reason."""
        where, args = ("WHERE run = ?", (int(run),)) if run is not None else ("", ())
        query = f"SELECT run, model, method, reason FROM skipped {where} ORDER BY run, model, method"
        return pd.read_sql_query(query, self._conn, params=args)

    def runs(self, run: int | None = None) -> list[dict[str, object]]:
        """Every run spec recorded (for one ``run``, or for all), oldest first; each names its ``run`` and
        ``model``."""
        where, args = ("WHERE run = ?", (int(run),)) if run is not None else ("", ())
        cur = self._conn.execute(f"SELECT run, model, spec FROM runs {where} ORDER BY entry", args)
        return [{**json.loads(spec), "run": run, "model": model} for run, model, spec in cur]


def _upgrade_from_1(conn: sqlite3.Connection) -> None:
    """Schema 1 to 2 in the caller's transaction: every stored answer, spec and skip becomes part of run 1.

    Nothing stored is changed: the answers keep their ids (the first run's ids are those of schema 1).
    """
    conn.execute(f"ALTER TABLE responses ADD COLUMN run INTEGER NOT NULL DEFAULT {FIRST_RUN}")
    conn.execute("ALTER TABLE runs RENAME COLUMN run_id TO entry")
    conn.execute(f"ALTER TABLE runs ADD COLUMN run INTEGER NOT NULL DEFAULT {FIRST_RUN}")
    conn.execute("ALTER TABLE runs ADD COLUMN model TEXT")
    conn.execute("UPDATE runs SET model = json_extract(spec, '$.model')")
    conn.execute("ALTER TABLE skipped RENAME TO skipped_1")
    conn.execute(_SKIPPED_TABLE)
    conn.execute(f"INSERT INTO skipped SELECT {FIRST_RUN}, model, method, reason FROM skipped_1")
    conn.execute("DROP TABLE skipped_1")


def _sql_value(value: object) -> object:
    if value is None or value is pd.NA:
        return None
    if isinstance(value, float) and value != value:  # NaN
        return None
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    return value


def _with_default(name: str, value: object) -> object:
    return _DEFAULTS.get(name) if value is None else value


def select_run(run_ids: Sequence[int], run: int | None, *, source: str) -> int | None:
    """The run an analysis reads: ``run`` when the store holds it, else the latest (None for an empty store).

    Examples
    --------
    >>> select_run([1, 2], None, source="s.sqlite")
    2
    >>> select_run([1, 2], 3, source="s.sqlite")
    Traceback (most recent call last):
    ...
    ValueError: s.sqlite holds no run 3; its runs are 1, 2
    """
    if run is None:
        return max(run_ids) if run_ids else None
    if run not in run_ids:
        held = ", ".join(map(str, run_ids)) or "none"
        raise ValueError(f"{source} holds no run {run}; its runs are {held}")
    return run


@dataclass(frozen=True)
class StoredRun:
    """What a store holds of one run: its responses, skipped methods and run specs, and which runs the store
    holds. :func:`bias_validity.analyses.study.read_study` grows it into the analysis object."""

    responses: pd.DataFrame
    skipped: pd.DataFrame
    runs: list[dict[str, object]]
    run: int | None = None
    run_ids: tuple[int, ...] = ()

    @property
    def run_note(self) -> str | None:
        """One line saying which run is analysed, when the store holds several (None otherwise)."""
        if len(self.run_ids) < 2:
            return None
        latest = " (the latest)" if self.run == max(self.run_ids) else ""
        held = ", ".join(map(str, self.run_ids))
        return f"the store holds runs {held}: analysing run {self.run}{latest}; --run N analyses another"


def read_run(path: str | Path, *, run: int | None = None) -> StoredRun:
    """Read one run of a store file: its responses table, skipped methods and run specs.

    ``run`` picks the run; by default the latest. Runs are never pooled: each was collected under its own
    settings.
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such store")
    with ResponseStore(path) as store:
        run_ids = store.run_ids()
        chosen = select_run(run_ids, run, source=str(path))
        skipped = store.skipped(chosen).drop(columns=["run"])
        runs = store.runs(chosen) if chosen is not None else []
        return StoredRun(store.read(chosen), skipped, runs, chosen, tuple(run_ids))


def read_responses(path: str | Path, *, run: int | None = None) -> pd.DataFrame:
    """Read the validated responses table of one run (by default the latest) from a store file."""
    return read_run(path, run=run).responses


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
            for run, rows in table.groupby("run").size().items():
                store.record_run(int(run), None, {"imported_from": source, "rows": int(rows)})
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


def adapt_table(
    frame: pd.DataFrame,
    *,
    rename: Mapping[str, str] | None = None,
    constants: Mapping[str, str] | None = None,
    source: str = "table",
) -> pd.DataFrame:
    """Bring another tool's table to the responses schema: rename columns, add constant ones, derive the ids.

    Parameters
    ----------
    frame : pandas.DataFrame
        The table as read (:func:`read_table_file`).
    rename : mapping of str to str, optional
        Their column name -> our column name (``--map their=our``).
    constants : mapping of str to str, optional
        Our column name -> the value every row gets, for a column the table lacks (``--set session=1``).
    source : str
        Named in error messages.

    Returns
    -------
    pandas.DataFrame
        The adapted table, still to be validated; a missing ``response_id`` is derived from the design key, ``rep``
        and ``run`` (:func:`bias_validity.probes.schema.response_id`), as collection derives it.

    Examples
    --------
    >>> theirs = pd.DataFrame({"llm": ["m"], "dimension": ["race"], "method": ["implicit"], "template_id": ["T1"],
    ...                        "item_id": ["race-01"], "order": ["ab-xy"], "rep": [0], "status": ["ok"]})
    >>> ours = adapt_table(theirs, rename={"llm": "model"}, constants={"session": "1"})
    >>> ours.loc[0, "model"], ours.loc[0, "session"], len(ours.loc[0, "response_id"])
    ('m', '1', 20)
    >>> adapt_table(theirs, rename={"name": "model"}, source="their.csv")
    Traceback (most recent call last):
    ...
    ValueError: their.csv: --map name=model: the table has no column 'name'
    """
    known = {c.name for c in COLUMNS}
    table = frame.copy()
    for theirs, ours in (rename or {}).items():
        if theirs not in table.columns:
            raise ValueError(f"{source}: --map {theirs}={ours}: the table has no column {theirs!r}")
        if ours not in known:
            raise ValueError(f"{source}: --map {theirs}={ours}: {ours!r} is not a responses-table column")
        if ours in table.columns and ours != theirs:
            raise ValueError(f"{source}: --map {theirs}={ours}: the table already has a column {ours!r}")
    table = table.rename(columns=dict(rename or {}))
    for column, value in (constants or {}).items():
        if column not in known:
            raise ValueError(f"{source}: --set {column}={value}: {column!r} is not a responses-table column")
        if column in table.columns:
            raise ValueError(f"{source}: --set {column}={value}: the table already has a column {column!r}")
        table[column] = value
    if "response_id" not in table.columns:
        key = [*DESIGN_KEY, "rep"]
        lacking = [k for k in key if k not in table.columns]
        if lacking:
            raise ValueError(
                f"{source}: no response_id column, and it cannot be derived without "
                f"{', '.join(lacking)} (--map or --set them)"
            )
        runs = table["run"] if "run" in table.columns else [FIRST_RUN] * len(table)
        table["response_id"] = [
            response_id(run=int(run), **row) for run, row in zip(runs, table[key].to_dict("records"), strict=True)
        ]
    return table


def export_responses(store_path: str | Path, out: str | Path) -> int:
    """Write the store's whole responses table, every run, to CSV, JSONL or Parquet (by the extension of ``out``)."""
    out, store_path = Path(out), Path(store_path)
    if not store_path.exists():
        raise FileNotFoundError(f"{store_path}: no such store")
    with ResponseStore(store_path) as store:
        table = store.read()
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
