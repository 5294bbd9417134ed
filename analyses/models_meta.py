"""Model metadata (family, size, training tokens, aligned): the models file, base/tuned pairs, the LLaMA example."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from importlib import resources
from pathlib import Path

import pandas as pd

__all__ = [
    "ModelsFileError",
    "UnreadableCount",
    "META_COLUMNS",
    "UNIT_SUFFIXES",
    "parse_count",
    "read_models_meta",
    "match_models",
    "base_tuned_pairs",
    "llama_example",
]

#: Columns of a models file, one row per model: name as in the responses table, family, parameters (any unit, or
#: a count with a suffix from :data:`UNIT_SUFFIXES`), training tokens (likewise), aligned (yes/no).
META_COLUMNS: tuple[str, ...] = ("model", "family", "parameters", "training_tokens", "aligned")
#: Suffixes a count may carry in a models file ("8B", "1.5T"), case-insensitive, and what they multiply by.
UNIT_SUFFIXES: dict[str, float] = {"k": 1e3, "m": 1e6, "b": 1e9, "t": 1e12}
_TRUE = {"true", "yes", "1", "y", "t"}
_FALSE = {"false", "no", "0", "n", "f"}
_COUNT = re.compile(r"^\s*([+-]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?)\s*([a-z]?)\s*$", re.IGNORECASE)


class ModelsFileError(ValueError):
    """A models file refused: one line naming the file, the row and the field of the first problem."""


class UnreadableCount(ValueError):
    """A value that :func:`parse_count` cannot read as a count."""


def parse_count(value: object) -> tuple[float, bool]:
    """A count as written in a models file: ``(value, had_suffix)``; :class:`UnreadableCount` when it is not one.

    Examples
    --------
    >>> [parse_count(v) for v in ("8B", "70e9", "1.5T", "135m")]
    [(8000000000.0, True), (70000000000.0, False), (1500000000000.0, True), (135000000.0, True)]
    >>> [parse_count(v) for v in (405, " 2 ")]
    [(405.0, False), (2.0, False)]
    >>> parse_count("8 bn")
    Traceback (most recent call last):
    ...
    bias_validity.analyses.models_meta.UnreadableCount: cannot read '8 bn' as a count; write e.g. 8e9, 8B or 8000000000
    """
    match = _COUNT.match(str(value))
    if isinstance(value, bool) or not match or (match.group(2) and match.group(2).lower() not in UNIT_SUFFIXES):
        raise UnreadableCount(f"cannot read {str(value)!r} as a count; write e.g. 8e9, 8B or 8000000000")
    number, suffix = float(match.group(1)), match.group(2).lower()
    return number * UNIT_SUFFIXES.get(suffix, 1.0), bool(suffix)


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

    Notes
    -----
    Counts are numbers in any unit (only their logs enter the analyses) or carry a suffix (``8B``, ``1.5T``,
    ``135M``; :data:`UNIT_SUFFIXES`), then read as absolute counts; a column must not mix the two, since ``70``
    beside ``8B`` would read as 70 against 8 billion. Any problem is one :class:`ModelsFileError` naming the file,
    the row (its line in a CSV, counting the header and comment lines; its position in a JSON list) and the field.

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
    try:
        if path.suffix.lower() == ".json":
            raw = pd.read_json(path, dtype=False)
            rows = [f"record {i + 1}" for i in range(len(raw))]
        elif path.suffix.lower() == ".csv":
            raw = pd.read_csv(path, comment="#", dtype=str, keep_default_na=False, skip_blank_lines=True)
            rows = _csv_lines(path.read_text(encoding="utf-8"))[1 : len(raw) + 1]
        else:
            raise ModelsFileError(f"{path}: models file must be .csv or .json")
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise ModelsFileError(f"{path}: cannot be read as a models file ({' '.join(str(exc).split())})") from None
    return _validate(raw, str(path), rows)


def _csv_lines(text: str) -> list[str]:
    """'line N' for the header and each data row of a CSV whose '#' lines are comments."""
    return [f"line {i}" for i, line in enumerate(text.splitlines(), 1) if line.strip() and not line.startswith("#")]


def _validate(raw: pd.DataFrame, source: str, rows: Sequence[str] | None = None) -> pd.DataFrame:
    """Check and type a models table; every error names ``source``, the row and the field."""
    missing = [c for c in META_COLUMNS if c not in raw.columns]
    if missing:
        raise ModelsFileError(
            f"{source}: models file lacks column(s) {', '.join(missing)}; needs {', '.join(META_COLUMNS)}"
        )
    raw = raw.reset_index(drop=True)
    labels = list(rows) if rows is not None and len(rows) == len(raw) else [f"row {i + 1}" for i in range(len(raw))]

    def fail(i: int, field: str, problem: str) -> ModelsFileError:
        return ModelsFileError(f"{source}: {labels[i]} (model {str(raw.at[i, 'model'])!r}), field '{field}': {problem}")

    for col in ("model", "family"):
        for i, value in enumerate(raw[col]):
            if pd.isna(value) or not str(value).strip():
                raise fail(i, col, "empty")
    out = pd.DataFrame({"model": raw["model"].astype(str).str.strip(), "family": raw["family"].astype(str).str.strip()})
    for col in ("parameters", "training_tokens"):
        parsed = []
        for i, value in enumerate(raw[col]):
            try:
                number, suffixed = parse_count(value)
            except UnreadableCount as exc:
                raise fail(i, col, str(exc)) from None
            if number <= 0:
                raise fail(i, col, f"{value!r} is not positive (counts enter as logs)")
            parsed.append((number, suffixed))
        suffixed = [s for _, s in parsed]
        if any(suffixed) and not all(suffixed):
            i = suffixed.index(False)
            raise fail(
                i,
                col,
                f"{str(raw.at[i, col]).strip()!r} has no unit while other rows use K/M/B/T "
                "suffixes; write every row the same way",
            )
        out[col] = [number for number, _ in parsed]
    for i, value in enumerate(raw["aligned"]):
        if str(value).strip().lower() not in _TRUE | _FALSE:
            raise fail(i, "aligned", f"{value!r}; use yes/no or true/false")
    out["aligned"] = raw["aligned"].astype(str).str.strip().str.lower().isin(_TRUE)
    twice = out["model"].duplicated()
    if twice.any():
        raise fail(int(twice.to_numpy().argmax()), "model", "listed twice")
    out.attrs.update(source=source, rows=labels)
    return out


def _bare(name: str) -> str:
    """A model name without its backend prefix (``hf:``, ``openai:``) and endpoint (``@host:port``), lower-cased."""
    return name.split(":", 1)[-1].split("@", 1)[0].strip().lower()


def match_models(meta: pd.DataFrame, models: Iterable[str], *, source: str | None = None) -> pd.DataFrame:
    """Map the models file's names onto the responses' model names; refuse a file that names none of them.

    Parameters
    ----------
    meta : pandas.DataFrame
        A models table (:func:`read_models_meta`).
    models : iterable of str
        The model names of the responses table.
    source : str, optional
        The file's name for the error messages; defaults to the one :func:`read_models_meta` recorded.

    Returns
    -------
    pandas.DataFrame
        ``meta`` with ``model`` replaced by the responses' name where a row matches one: exactly, or else
        case-insensitively once the backend prefix and endpoint are set aside (``llama-3-8b`` matches
        ``openai:Llama-3-8B@10.0.0.1:8000``). Rows that match nothing are kept, flagged in ``attrs["unmatched"]``
        (their names).

    Raises
    ------
    ModelsFileError
        One line naming the row and field: no row matches any model of the responses, a row matches two, or two
        rows match the same model.

    Examples
    --------
    >>> meta = pd.DataFrame({"model": ["smol", "gemma"], "family": ["s", "g"], "parameters": [1.0, 2.0],
    ...                      "training_tokens": [1.0, 2.0], "aligned": [True, False]})
    >>> out = match_models(meta, ["hf:SMOL", "hf:x"])
    >>> out["model"].tolist(), out.attrs["unmatched"]
    (['hf:SMOL', 'gemma'], ['gemma'])
    >>> match_models(meta, ["hf:x"], source="models.csv")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    bias_validity.analyses.models_meta.ModelsFileError: models.csv: no row's field 'model' matches ...; they are: hf:x
    """
    source = source or meta.attrs.get("source", "models file")
    rows = meta.attrs.get("rows") or [f"row {i + 1}" for i in range(len(meta))]
    known = sorted({str(m) for m in models})
    by_bare: dict[str, list[str]] = {}
    for name in known:
        by_bare.setdefault(_bare(name), []).append(name)
    names, unmatched = [], []
    for i, name in enumerate(meta["model"].astype(str)):
        found = [name] if name in known else by_bare.get(_bare(name), [])
        if len(found) > 1:
            raise ModelsFileError(
                f"{source}: {rows[i]}, field 'model': {name!r} matches {len(found)} models of the "
                f"responses ({', '.join(found)}); write the full name"
            )
        names.append(found[0] if found else name)
        if not found:
            unmatched.append(name)
    if len(unmatched) == len(meta):
        first = f" ({rows[0]} is {str(meta['model'].iloc[0])!r})" if len(meta) else ""
        raise ModelsFileError(
            f"{source}: no row's field 'model' matches a model of the responses{first}; they are: "
            f"{', '.join(known) or 'none'}"
        )
    out = meta.assign(model=names)
    twice = out["model"].duplicated() & ~out["model"].isin(unmatched)
    if twice.any():
        i = int(twice.to_numpy().argmax())
        raise ModelsFileError(
            f"{source}: {rows[i]}, field 'model': {meta['model'].iloc[i]!r} names the same model as an "
            f"earlier row ({names[i]})"
        )
    out.attrs.update(meta.attrs, unmatched=unmatched)
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
