"""Input checks shared by the psychometrics modules: one-line ``ValueError`` messages, never a deep traceback."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

__all__: list[str] = []


def check_ci(ci: float) -> None:
    """Raise if ``ci`` is not a confidence level strictly between 0 and 1."""
    if isinstance(ci, bool) or not isinstance(ci, (int, float)) or not 0 < ci < 1:
        raise ValueError(f"ci must be a number strictly between 0 and 1 (e.g. 0.95), got {ci!r}")


def check_columns(data: object, columns: Sequence[str], where: str) -> None:
    """Raise unless ``data`` is a non-empty DataFrame holding every column in ``columns``."""
    if not isinstance(data, pd.DataFrame):
        raise ValueError(f"{where}: data must be a pandas DataFrame, got {type(data).__name__}")
    missing = [c for c in columns if c not in data.columns]
    if missing:
        raise ValueError(f"{where}: columns {missing} not in data; available columns: {list(data.columns)}")
    if data.empty:
        raise ValueError(f"{where}: data has no rows")


def numeric_values(data: pd.DataFrame, column: str, where: str, *, allow_nan: bool = False) -> np.ndarray:
    """Return ``data[column]`` as float, raising if it is not numeric or (unless allowed) has missing values."""
    values = pd.to_numeric(data[column], errors="coerce")
    non_numeric = values.isna() & data[column].notna()
    if non_numeric.any():
        example = data.loc[non_numeric, column].iloc[0]
        raise ValueError(f"{where}: column {column!r} must be numeric, found {example!r}")
    if not allow_nan and values.isna().any():
        raise ValueError(
            f"{where}: column {column!r} has {int(values.isna().sum())} missing values; drop those rows first"
        )
    return values.to_numpy(dtype=float)


def to_wide(
    data: pd.DataFrame, *, rows: str, columns: str, values: str, where: str, allow_missing: bool = False
) -> pd.DataFrame:
    """Pivot a long table to rows x columns, refusing duplicates and (unless allowed) NaNs or unbalanced cells."""
    check_columns(data, [rows, columns, values], where)
    numeric = numeric_values(data, values, where, allow_nan=allow_missing)
    long = pd.DataFrame({"r": data[rows].to_numpy(), "c": data[columns].to_numpy(), "v": numeric})
    if long.duplicated(["r", "c"]).any():
        raise ValueError(
            f"{where}: more than one {values!r} per ({rows!r}, {columns!r}) pair; aggregate repeats first "
            "(e.g. the mean per cell)"
        )
    wide = long.pivot(index="r", columns="c", values="v")
    if not allow_missing and wide.isna().any().any():
        raise ValueError(
            f"{where}: unbalanced design, {int(wide.isna().sum().sum())} ({rows!r}, {columns!r}) pairs have no "
            f"value; keep only {rows!r} levels observed under every {columns!r}"
        )
    wide.index.name, wide.columns.name = rows, columns
    return wide
