"""The responses table: the one contract every layer shares.

One row per answer. Columns are declared once here (name, dtype, required, allowed values) and every entry point
(collection, import) validates against them, so later code can trust the table.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from enum import StrEnum

import numpy as np
import pandas as pd

__all__ = [
    "SCHEMA_VERSION",
    "Method",
    "Status",
    "Column",
    "COLUMNS",
    "DESIGN_KEY",
    "CANDIDATE_ORDERS",
    "ATTRIBUTE_ORDERS",
    "IMPLICIT_ORDERS",
    "CHOICE_PREFIX",
    "EXPECTED_IMPLICIT",
    "REVERSED_SUFFIX",
    "LIKERT_SCALE",
    "LIKERT_MIDPOINT",
    "takes_side",
    "agrees",
    "keyed_likert",
    "is_reversed",
    "likert_consistent",
    "WEAT_ITEM",
    "FIRST_RUN",
    "RUN_SETTINGS",
    "RUN_EXTENT",
    "candidate_order",
    "response_id",
    "validate_responses",
    "empty_responses",
]

SCHEMA_VERSION = 2


class Method(StrEnum):
    """How an association is asked about (the README's "The responses table" lists them)."""

    IMPLICIT = "implicit"
    EXPLICIT = "explicit"
    ABLATED = "ablated"
    REFLECTION = "reflection"
    LOGPROB = "logprob"
    EMBEDDING = "embedding"


class Status(StrEnum):
    """What became of one answer. Only ``ok`` rows carry a stance (``consistent``/``likert``)."""

    OK = "ok"
    REFUSAL = "refusal"
    UNPARSEABLE = "unparseable"
    INVALID_CHOICE = "invalid_choice"
    ERROR = "error"


@dataclass(frozen=True)
class Column:
    """One column of the responses table: its pandas dtype, whether it must be present and non-null, and the value
    a table without the column gets (``default``; None: no default)."""

    name: str
    dtype: str
    required: bool
    allowed: tuple[str, ...] | None = None
    description: str = ""
    default: object = None


#: The run of a table or store collected before runs existed, or without ``--new-run``.
FIRST_RUN = 1


COLUMNS: tuple[Column, ...] = (
    Column("response_id", "string", True, description="hash of the design key and rep; primary key"),
    Column("model", "string", True, description="backend:model, e.g. hf:SmolLM2-135M-Instruct-Q4_1"),
    Column("dimension", "string", True, description="stimulus dimension"),
    Column("method", "string", True, tuple(m.value for m in Method)),
    Column("template_id", "string", True, description="which wording of the method's prompt"),
    Column("item_id", "string", True, description="attribute pair and exemplar pair asked about"),
    Column("order", "string", True, description="counterbalancing cell"),
    Column("session", "Int64", True, description="measurement occasion (test-retest)"),
    Column("rep", "Int64", True, description="repetition within a session"),
    Column("run", "Int64", True, description="collection run: answers collected under one run spec", default=FIRST_RUN),
    Column("seed", "Int64", False),
    Column("temperature", "Float64", False),
    Column("params", "string", False, description="JSON of the remaining request parameters"),
    Column("prompt", "string", False),
    Column("raw_response", "string", False),
    Column("status", "string", True, tuple(s.value for s in Status)),
    Column("consistent", "Int64", False, description="1 consistent, 0 inconsistent, null unless status is ok"),
    Column("likert", "Int64", False, description="1-5 for explicit/reflection, else null"),
    Column("score", "Float64", False, description="continuous measure: log-odds, probability, WEAT effect"),
    Column("created_at", "string", False, description="ISO 8601 timestamp"),
)

#: Candidate orders of the implicit and ablated prompts: ``ab`` lists group A's exemplar first, ``ba`` second.
CANDIDATE_ORDERS: tuple[str, ...] = ("ab", "ba")
#: Attribute orders: ``xy`` names the stereotype-consistent attribute of group A first, ``yx`` second.
ATTRIBUTE_ORDERS: tuple[str, ...] = ("xy", "yx")
#: The ``order`` values of the implicit and ablated methods: candidate order, a hyphen, attribute order.
IMPLICIT_ORDERS: tuple[str, ...] = tuple(f"{c}-{a}" for c in CANDIDATE_ORDERS for a in ATTRIBUTE_ORDERS)
#: ``template_id`` prefix of the closed-set rows (``logprob`` method): exact answer probabilities of the implicit
#: prompt whose template follows the prefix, not an independent measure.
CHOICE_PREFIX = "choice:"
#: The series name of those closed-set rows in the SC table: the implicit prompt's own expected SC (the mean
#: probability of the consistent answer, no sampling noise). Never the ``logprob`` method in a correlation: it would
#: correlate the implicit measure with itself.
EXPECTED_IMPLICIT = "implicit_expected"
#: ``order`` suffix of a counter-stereotype (reversed) Likert statement: the same pair with the groups swapped
#: (explicit), or the model's own stereotype-inconsistent completion (reflection). Agreeing with it is inconsistent.
REVERSED_SUFFIX = "~reversed"
#: ``item_id`` of the ``embedding`` method's whole-set WEAT effect size (an effect size, not an answer to an item).
WEAT_ITEM = "WEAT"


def is_reversed(order: object) -> bool:
    """Whether an ``order`` value marks a reversed (counter-stereotype) statement.

    >>> is_reversed("xy"), is_reversed("yx" + REVERSED_SUFFIX)
    (False, True)
    """
    return str(order).endswith(REVERSED_SUFFIX)


#: The 5-point agreement scale of the Likert methods, and its midpoint (neither agrees nor disagrees).
LIKERT_SCALE: tuple[int, ...] = (1, 2, 3, 4, 5)
LIKERT_MIDPOINT = 3


def takes_side(likert: object) -> object:
    """Whether a rating takes a side (agrees or disagrees); the midpoint does not. Works elementwise on arrays.

    >>> takes_side(3), takes_side(4), takes_side(np.array([1, 3, 5])).tolist()
    (False, True, [True, False, True])
    """
    return np.asarray(likert) != LIKERT_MIDPOINT if np.ndim(likert) else likert != LIKERT_MIDPOINT


def agrees(likert: object) -> object:
    """Whether a rating agrees (above the midpoint). Works elementwise on arrays.

    >>> agrees(4), agrees(3), agrees(np.array([2, 5])).tolist()
    (True, False, [False, True])
    """
    return np.asarray(likert) > LIKERT_MIDPOINT if np.ndim(likert) else likert > LIKERT_MIDPOINT


def keyed_likert(likert: object, reversed_statement: object) -> object:
    """A rating keyed towards the stereotype: a reversed statement's rating ``r`` becomes ``6 - r``. Elementwise.

    >>> keyed_likert(5, True), keyed_likert(5, False), keyed_likert(np.array([1, 4]), np.array([True, False])).tolist()
    (1, 5, [5, 4])
    """
    flipped = LIKERT_SCALE[0] + LIKERT_SCALE[-1] - np.asarray(likert)
    if np.ndim(likert) or np.ndim(reversed_statement):
        return np.where(np.asarray(reversed_statement, dtype=bool), flipped, np.asarray(likert))
    return int(flipped) if reversed_statement else likert


def likert_consistent(likert: int | None, reversed_statement: bool) -> int | None:
    """Code a 1-5 agreement rating as stereotype-consistent (1), inconsistent (0) or no side taken (None).

    Agreeing (4, 5) with a stereotype statement or disagreeing (1, 2) with its reversal is consistent; the
    neutral midpoint (3) takes no side, so it is kept (``likert`` = 3) but carries no stance. With balanced
    statements, chance is then 0.5 for any responder without a stance: one who agrees with everything
    (acquiescence) scores 0.5, as does one who answers at random.

    >>> likert_consistent(5, False), likert_consistent(5, True), likert_consistent(3, False), likert_consistent(1, True)
    (1, 0, None, 1)
    """
    if likert is None or not takes_side(likert):
        return None
    return int(bool(agrees(likert)) != reversed_statement)


def candidate_order(order: str) -> str:
    """The candidate-order part of an implicit ``order`` value (``ab-yx`` -> ``ab``).

    Examples
    --------
    >>> [candidate_order(o) for o in IMPLICIT_ORDERS]
    ['ab', 'ab', 'ba', 'ba']
    """
    return str(order).split("-", 1)[0]


#: The fields whose values identify one question asked; with ``rep`` they make the ``response_id``.
DESIGN_KEY: tuple[str, ...] = ("model", "dimension", "method", "template_id", "item_id", "order", "session")


#: Run-spec fields that change answers: a store's run takes more answers only under the same values (the model's
#: identity, ``model_identity``, is compared per model as well).
RUN_SETTINGS: tuple[str, ...] = ("toolkit_version", "templates", "stimuli", "seed", "temperature", "max_new_tokens")
#: Run-spec fields that only say how much was asked: a run is extended under other values.
RUN_EXTENT: tuple[str, ...] = ("dimensions", "methods", "sessions", "reps", "items_per_dimension")


def response_id(*, run: int = FIRST_RUN, **key: object) -> str:
    """Stable hash of the design key plus ``rep`` (and ``run`` after the first): the same question asked again in
    the same run gets the same id.

    The first run's ids hash the design key and ``rep`` alone, so tables and stores made before runs existed keep
    their ids; a later run's ids hash its number too, so every run's answers are kept side by side.

    Examples
    --------
    >>> key = dict(model="m", dimension="race", method="implicit", template_id="T1", item_id="race-01",
    ...            order="ab-xy", session=1, rep=0)
    >>> response_id(**key) == response_id(run=1, **key) != response_id(run=2, **key)
    True
    """
    missing = [k for k in (*DESIGN_KEY, "rep") if k not in key]
    if missing:
        raise ValueError(f"response_id needs the design key fields; missing: {', '.join(missing)}")
    fields = {k: str(key[k]) for k in (*DESIGN_KEY, "rep")}
    if int(run) != FIRST_RUN:
        fields["run"] = str(int(run))
    payload = json.dumps(fields, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()[:20]


def empty_responses() -> pd.DataFrame:
    """An empty responses table with every column and its dtype."""
    return pd.DataFrame({c.name: pd.Series(dtype=c.dtype) for c in COLUMNS})


def validate_responses(df: pd.DataFrame, *, source: str = "responses") -> pd.DataFrame:
    """Check and coerce a table to the responses schema; return a new, typed DataFrame.

    Raises ``ValueError`` with one line naming ``source``, the row (1-based, as in a file with a header) and the
    field for the first problem found: a missing required column, a value of the wrong type, a null in a required
    field, a value outside the allowed set, a stance on a non-``ok`` row, or a duplicated ``response_id``.
    """
    missing = [c.name for c in COLUMNS if c.required and c.default is None and c.name not in df.columns]
    if missing:
        raise ValueError(f"{source}: missing required column(s): {', '.join(missing)}")
    out = pd.DataFrame(index=range(len(df)))
    frame = df.reset_index(drop=True)
    for col in COLUMNS:
        if col.name not in frame.columns:
            fill = pd.NA if col.default is None else col.default
            out[col.name] = pd.Series([fill] * len(frame), dtype=col.dtype)
            continue
        out[col.name] = _coerce(frame[col.name], col, source)
        if col.required:
            bad = out[col.name].isna()
            if bad.any():
                raise ValueError(f"{source}: row {_row(bad)}, field '{col.name}': required value is empty")
        if col.allowed is not None:
            bad = out[col.name].notna() & ~out[col.name].isin(col.allowed)
            if bad.any():
                value = out.loc[bad.idxmax(), col.name]
                raise ValueError(
                    f"{source}: row {_row(bad)}, field '{col.name}': {value!r} is not one of {', '.join(col.allowed)}"
                )
    stance = out["consistent"].notna() | out["likert"].notna()
    bad = stance & (out["status"] != Status.OK.value)
    if bad.any():
        raise ValueError(f"{source}: row {_row(bad)}, field 'status': a non-ok answer carries a stance")
    bad = out["consistent"].notna() & ~out["consistent"].isin([0, 1])
    if bad.any():
        raise ValueError(f"{source}: row {_row(bad)}, field 'consistent': must be 0, 1 or empty")
    bad = out["likert"].notna() & ~out["likert"].isin([1, 2, 3, 4, 5])
    if bad.any():
        raise ValueError(f"{source}: row {_row(bad)}, field 'likert': must be 1-5 or empty")
    bad = out["response_id"].duplicated()
    if bad.any():
        raise ValueError(f"{source}: row {_row(bad)}, field 'response_id': duplicated id")
    return out


def _row(mask: pd.Series) -> int:
    return int(mask.to_numpy().argmax()) + 2  # header is row 1


def _show(value: object) -> str:
    return repr(value) if isinstance(value, str) else str(value)


def _coerce(series: pd.Series, col: Column, source: str) -> pd.Series:
    if col.dtype == "string":
        return series.astype("string")
    numeric = pd.to_numeric(series, errors="coerce")
    bad = numeric.isna() & series.notna() & (series.astype("string").str.strip() != "")
    if bad.any():
        value = series[bad].iloc[0]
        raise ValueError(f"{source}: row {_row(bad)}, field '{col.name}': {value!r} is not a number")
    if col.dtype == "Int64":
        frac = numeric.notna() & (numeric != numeric.round())
        if frac.any():
            value = _show(series[frac].iloc[0])
            raise ValueError(f"{source}: row {_row(frac)}, field '{col.name}': {value} is not an integer")
        return numeric.astype("Int64")
    return numeric.astype("Float64")
