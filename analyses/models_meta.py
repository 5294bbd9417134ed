"""Model metadata (family, size, training tokens, aligned): the models file, base/tuned pairs, the LLaMA example."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import pandas as pd

__all__ = ["META_COLUMNS", "read_models_meta", "base_tuned_pairs", "llama_example"]

#: Columns of a models file, one row per model: name as in the responses table, family, parameters (any unit),
#: training tokens (any unit), aligned (yes/no).
META_COLUMNS: tuple[str, ...] = ("model", "family", "parameters", "training_tokens", "aligned")
_TRUE = {"true", "yes", "1", "y", "t"}
_FALSE = {"false", "no", "0", "n", "f"}


def read_models_meta(path: str | Path) -> pd.DataFrame:
    """Read a models file (CSV or JSON records; ``#`` lines are comments) into a validated metadata table.

    Parameters
    ----------
    path : str or Path
        A ``.csv`` or ``.json`` file with the columns in :data:`META_COLUMNS`.

    Returns
    -------
    DataFrame
        ``model`` (str), ``family`` (str), ``parameters`` (float), ``training_tokens`` (float), ``aligned`` (bool).

    Examples
    --------
    >>> from bias_validity.analyses.models_meta import _example_path
    >>> meta = read_models_meta(_example_path())
    >>> meta.loc[meta["model"] == "llama-3.1-405b-instruct", ["parameters", "training_tokens"]].iloc[0].tolist()
    [405.0, 15.0]
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such models file")
    if path.suffix.lower() == ".json":
        raw = pd.read_json(path, dtype=False)
    elif path.suffix.lower() == ".csv":
        raw = pd.read_csv(path, comment="#", dtype=str)
    else:
        raise ValueError(f"{path}: models file must be .csv or .json")
    return _validate(raw, str(path))


def _validate(raw: pd.DataFrame, source: str) -> pd.DataFrame:
    missing = [c for c in META_COLUMNS if c not in raw.columns]
    if missing:
        raise ValueError(f"{source}: models file lacks column(s) {', '.join(missing)}; needs {', '.join(META_COLUMNS)}")
    out = pd.DataFrame({"model": raw["model"].astype(str), "family": raw["family"].astype(str)})
    for col in ("parameters", "training_tokens"):
        values = pd.to_numeric(raw[col], errors="coerce")
        if values.isna().any() or (values <= 0).any():
            raise ValueError(f"{source}: column '{col}' must be a positive number in every row")
        out[col] = values.astype(float)
    flags = raw["aligned"].astype(str).str.strip().str.lower()
    bad = ~flags.isin(_TRUE | _FALSE)
    if bad.any():
        raise ValueError(f"{source}: column 'aligned' has {raw['aligned'][bad].iloc[0]!r}; use yes/no or true/false")
    out["aligned"] = flags.isin(_TRUE)
    if out["model"].duplicated().any():
        raise ValueError(f"{source}: model {out['model'][out['model'].duplicated()].iloc[0]!r} is listed twice")
    return out


def base_tuned_pairs(meta: pd.DataFrame) -> list[tuple[str, str]]:
    """(base, tuned) model pairs: same family and parameter count, one not aligned and one aligned.

    Examples
    --------
    >>> meta = pd.DataFrame({"model": ["g-pt", "g-it", "s-it"], "family": ["g", "g", "s"],
    ...                      "parameters": [0.27, 0.27, 0.135], "aligned": [False, True, True]})
    >>> base_tuned_pairs(meta)
    [('g-pt', 'g-it')]
    """
    missing = [c for c in ("model", "family", "parameters", "aligned") if c not in meta.columns]
    if missing:
        raise ValueError(f"models metadata lacks column(s) {', '.join(missing)}")
    aligned = meta["aligned"].astype(bool)
    base, tuned = meta[~aligned], meta[aligned]
    pairs = base.merge(tuned, on=["family", "parameters"], suffixes=("_base", "_tuned"))
    return list(zip(pairs["model_base"], pairs["model_tuned"], strict=True))


def _example_path() -> Path:
    return Path(str(resources.files(__package__) / "data" / "llama_models.csv"))


def llama_example() -> tuple[pd.DataFrame, dict[str, object]]:
    """The seed paper's LLaMA design as a worked example of scaling identifiability.

    Returns
    -------
    tuple of (DataFrame, dict)
        The models table (:func:`read_models_meta` columns) and the verdict of
        :func:`bias_validity.psychometrics.bayes.scaling_identifiability` with ``family`` given.

    Notes
    -----
    Log size and log tokens are nearly uncorrelated here (r = 0.11, VIF 1.01), yet tokens take one value per
    family (2T for LLaMA-2, 15T for LLaMA-3/3.1, 9T for LLaMA-3.2), so a token slope is a between-generation
    contrast: size and data cannot be separated in this design.

    Examples
    --------
    >>> meta, verdict = llama_example()
    >>> len(meta), verdict["verdict"]
    (8, 'size and data cannot be separated in this design')
    >>> round(verdict["predictor_correlation"], 2)
    0.11
    """
    from bias_validity.psychometrics.bayes.scaling import scaling_identifiability

    meta = read_models_meta(_example_path())
    return meta, scaling_identifiability(meta, family="family")
