"""The steps every import of another tool's log shares: its fields as columns, the responses-table columns it fills
by default, ``--map``/``--set`` on top, and errors that name the log's sample or line instead of a table row.

A reader (:mod:`bias_validity.probes.inspect_log`, :mod:`bias_validity.probes.lm_eval_samples`) turns a log into a
:class:`LogTable`; :func:`responses_from_log` brings it to the responses schema through the same path a table
import takes (:func:`bias_validity.probes.store.adapt_table`, then
:func:`bias_validity.probes.schema.validate_responses`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

import pandas as pd

from bias_validity.probes.schema import COLUMNS, DESIGN_KEY, validate_responses
from bias_validity.probes.store import adapt_table

__all__ = ["LogTable", "responses_from_log"]

#: The columns a row needs before its ``response_id`` can be derived and it can be stored.
_NEEDED = (*DESIGN_KEY, "rep", "status")
_ROW = re.compile(r"^(?P<source>.*?): row (?P<row>\d+), ")
_SHOWN_FIELDS = 12


@dataclass(frozen=True)
class LogTable:
    """A log read as a table, one row per answer.

    Attributes
    ----------
    fields : pandas.DataFrame
        The log's own fields, one column each (``metadata.dimension``, ``doc.bias_type``, ...): what ``--map``
        renames. No field is named like a responses-table column.
    defaults : dict of str to pandas.Series
        Responses-table columns the reader fills from the log, each used unless ``--map`` or ``--set`` gives
        that column.
    origins : list of str
        Where each row came from, file included, for messages (``run.eval sample 3 epoch 2``,
        ``samples.jsonl line 4``).
    source : str
        The log file(s), for messages.
    hints : dict of str to str
        What to do when nothing gives a responses-table column the log could not fill, by column.
    """

    fields: pd.DataFrame
    defaults: dict[str, pd.Series] = field(default_factory=dict)
    origins: list[str] = field(default_factory=list)
    source: str = "log"
    hints: dict[str, str] = field(default_factory=dict)


def responses_from_log(
    log: LogTable, *, rename: Mapping[str, str] | None = None, constants: Mapping[str, str] | None = None
) -> pd.DataFrame:
    """The responses table of a log: its defaults, then ``--map`` (``rename``) and ``--set`` (``constants``).

    Parameters
    ----------
    log : LogTable
        The log as its reader gives it.
    rename : mapping of str to str, optional
        A field of the log -> the responses-table column it fills (``--map metadata.item=item_id``); it replaces
        the reader's default for that column.
    constants : mapping of str to str, optional
        A responses-table column -> the value every row gets (``--set session=1``); it replaces the default.

    Returns
    -------
    pandas.DataFrame
        The validated responses table (:func:`bias_validity.probes.schema.validate_responses`), ``response_id``
        derived from the design key as collection derives it.

    Raises ``ValueError`` in one line naming the log and, for a value, the sample or line and the field: a
    ``--map`` of a field the log lacks, a design column nothing gives, a value of the wrong type, two answers with
    one design key.
    """
    rename, constants = dict(rename or {}), dict(constants or {})
    if not len(log.fields):
        raise ValueError(f"{log.source}: holds no answers")
    fields = list(log.fields.columns)
    for theirs, ours in rename.items():
        if theirs not in log.fields.columns:
            raise ValueError(
                f"{log.source}: --map {theirs}={ours}: the log has no field {theirs!r}; its fields: {_list(fields)}"
            )
    given = set(rename.values()) | set(constants)
    table = log.fields.copy()
    for column, values in log.defaults.items():
        if column not in given:
            table[column] = values.to_numpy()
    lacking = [c for c in _NEEDED if c not in table.columns and c not in given]
    if lacking:
        hint = log.hints.get(lacking[0], "")
        raise ValueError(
            f"{log.source}: nothing gives {', '.join(lacking)}{f' ({hint})' if hint else ''}: --map FIELD="
            f"{lacking[0]} names the log's field that holds it, or --set {lacking[0]}=VALUE gives every row one "
            f"value; the log's fields: {_list(fields)}"
        )
    adapted = adapt_table(table, rename=rename, constants=constants, source=log.source)
    for column in (c.name for c in COLUMNS if c.required and c.name in adapted.columns):
        empty = (adapted[column].isna() | adapted[column].astype("string").str.strip().eq("")).fillna(True)
        if empty.any():
            at = int(empty.to_numpy().argmax())
            theirs = next((t for t, o in rename.items() if o == column), None)
            whence = f" (from {theirs})" if theirs else ""
            raise ValueError(f"{log.origins[at]}: field {column!r}{whence} is empty")
    duplicated = adapted["response_id"].duplicated(keep=False)
    if duplicated.any():
        first, second = (log.origins[i] for i in duplicated.to_numpy().nonzero()[0][:2])
        raise ValueError(
            f"{first} and {second} have the same design key ({', '.join((*DESIGN_KEY, 'rep'))}): "
            "--map the field that tells them apart (e.g. to item_id or order)"
        )
    try:
        return validate_responses(adapted, source=log.source)
    except ValueError as exc:
        raise ValueError(_name_origin(str(exc), log.origins)) from None


def _name_origin(message: str, origins: list[str]) -> str:
    """A validation message with its table row (1-based after a header) replaced by the log's sample or line."""
    found = _ROW.match(message)
    if not found:
        return message
    at = int(found["row"]) - 2
    origin = origins[at] if 0 <= at < len(origins) else f"{found['source']}: row {found['row']}"
    return f"{origin}: {message[found.end() :]}"


def _list(fields: list[str]) -> str:
    shown = ", ".join(fields[:_SHOWN_FIELDS])
    return shown + (f", ... ({len(fields)} in all)" if len(fields) > _SHOWN_FIELDS else "")
