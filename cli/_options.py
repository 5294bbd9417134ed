"""Command-line options shared by several subcommands, their defaults read from the one place that declares them."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from bias_validity.psychometrics.bayes.config import SAMPLERS, TARGET_ACCEPT_STEPS, FitConfig

if TYPE_CHECKING:
    from bias_validity.probes.store import Study

__all__ = [
    "add_fit_arguments",
    "fit_config",
    "add_run_argument",
    "read_run",
    "SOURCE_HELP",
    "open_study",
    "read_responses_table",
    "read_models_file",
]


def add_fit_arguments(p: argparse.ArgumentParser, *, seed_help: str = "sampler seed") -> None:
    """The sampler options of ``fit``, ``compare`` and ``report`` (defaults: :class:`FitConfig`)."""
    d = FitConfig()
    p.add_argument("--sampler", default=d.sampler, choices=SAMPLERS, help=f"NUTS backend (default {d.sampler})")
    p.add_argument("--draws", type=int, default=d.draws, help=f"draws per chain (default {d.draws})")
    p.add_argument("--tune", type=int, default=d.tune, help=f"warm-up per chain (default {d.tune})")
    p.add_argument(
        "--max-draws",
        type=int,
        default=d.max_draws,
        help=f"retry a fit that misses the gate on R-hat or ESS with twice the draws, up to this many "
        f"(default {d.max_draws}; 0 fits once, with no retry after divergences either)",
    )
    p.add_argument("--chains", type=int, default=d.chains, help=f"chains (default {d.chains})")
    p.add_argument(
        "--target-accept",
        type=float,
        default=d.target_accept,
        help=f"NUTS's target acceptance rate; a fit that diverges is retried at the next of "
        f"{', '.join(map(str, TARGET_ACCEPT_STEPS))} (default {d.target_accept})",
    )
    p.add_argument("--seed", type=int, default=d.seed, help=f"{seed_help} (default {d.seed})")


def fit_config(args: argparse.Namespace) -> FitConfig:
    """The :class:`FitConfig` the parsed sampler options describe."""
    return FitConfig(
        sampler=args.sampler,
        draws=args.draws,
        tune=args.tune,
        chains=args.chains,
        seed=args.seed,
        max_draws=args.max_draws or None,
        target_accept=args.target_accept,
    )


# --- The input of summary, fit, report and compare: a store, or a responses table analysed in memory. ---

#: Help of the positional input of the commands that analyse a study.
SOURCE_HELP = "the SQLite store, or a responses table (.csv, .jsonl or .parquet) analysed directly"
TABLE_SUFFIXES = (".csv", ".jsonl", ".ndjson", ".parquet")
_SQLITE_MAGIC = b"SQLite format 3\x00"
_WHAT_TO_GIVE = "give a store (from bias-validity collect or import) or a .csv, .jsonl or .parquet responses table"


def read_responses_table(path: str) -> object:
    """Read a responses table file (CSV, JSONL or Parquet), unvalidated; a file that cannot be read is one line."""
    from pathlib import Path

    import pandas as pd
    import pyarrow

    from bias_validity.probes.store import read_table_file

    try:
        return read_table_file(path)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError, pyarrow.ArrowException) as exc:
        reason = " ".join(str(exc).split())
        raise ValueError(f"{path}: cannot be read as a {Path(path).suffix} table ({reason})") from None


def open_study(path: str, run: int | None = None) -> object:
    """The study a command analyses (a :class:`bias_validity.probes.store.Study`), whatever ``path`` holds.

    A store is read one run at a time (:func:`read_run`: run ``run``, default the latest). A ``.csv``, ``.jsonl``
    or ``.parquet`` responses table is validated as ``import`` validates it (one line naming the row and field of
    the first problem) and held in memory, with no skipped
    methods and one run record naming the file. Anything else is refused in one line that says what the file is
    and what to give instead; nothing is written, so a file that is not a store never becomes one.
    """
    from pathlib import Path

    file = Path(path)
    if not file.exists():
        raise FileNotFoundError(f"{path}: no such store or responses table")
    if file.suffix.lower() in TABLE_SUFFIXES and file.is_file():
        return _table_study(path)
    what = _describe(file)
    if what:
        raise ValueError(f"{path}: not a store or a responses table: {what}")
    return read_run(path, run)


def _table_study(path: str) -> object:
    import pandas as pd

    from bias_validity.analyses.models_meta import META_COLUMNS
    from bias_validity.probes.schema import validate_responses
    from bias_validity.probes.store import Study

    raw = read_responses_table(path)
    if set(META_COLUMNS) <= set(raw.columns) and "response_id" not in raw.columns:
        raise ValueError(
            f"{path}: not a responses table: a models file (columns {', '.join(META_COLUMNS)}); pass "
            "it with --models-file beside the store or responses table"
        )
    table = validate_responses(raw, source=str(path))
    skipped = pd.DataFrame(columns=["model", "method", "reason"])
    return Study(table, skipped, [{"imported_from": str(path), "rows": len(table), "held": "in memory"}])


def _describe(file: object) -> str:
    """What a file that is not a store is, and what to run instead; "" for a SQLite store with a responses table."""
    import json
    import sqlite3

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


def read_models_file(path: str | None, responses: object) -> object:
    """The ``--models-file`` of fit and report, read and matched to the responses' model names (None without one).

    A row's parse error, or a file none of whose models is in the responses, is one line naming the row and field.
    """
    if not path:
        return None
    from bias_validity.analyses.models_meta import match_models, read_models_meta

    return match_models(read_models_meta(path), responses["model"].astype(str).unique())


def add_run_argument(p: argparse.ArgumentParser) -> None:
    """The ``--run`` option of the commands that analyse a store (``summary``, ``fit``, ``report``, ``compare``)."""
    p.add_argument(
        "--run",
        type=int,
        metavar="N",
        help="analyse run N of the store (default: its latest run; runs are never pooled)",
    )


def read_run(store: str, run: int | None) -> Study:
    """Read one run of ``store`` for analysis; when the store holds several, say on stderr which one."""
    import sys

    from bias_validity.probes.store import read_study

    study = read_study(store, run=run)
    if study.run_note:
        print(f"{store}: {study.run_note}", file=sys.stderr)
    return study
