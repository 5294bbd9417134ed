"""Raw stereotype-consistency scores (SC) with Wilson intervals and status counts, per model x dimension x method."""

from __future__ import annotations

import pandas as pd

from bias_validity.probes.schema import WEAT_ITEM, Status
from bias_validity.psychometrics.intervals import wilson_interval

__all__ = ["sc_table", "status_counts", "STATUS_COLUMNS"]

STATUS_COLUMNS: tuple[str, ...] = tuple(s.value for s in Status)
_CELL = ["model", "dimension", "method"]


def sc_table(responses: pd.DataFrame, *, ci: float = 0.95) -> pd.DataFrame:
    """Share of stereotype-consistent answers among ``ok`` answers, per model x dimension x method.

    Parameters
    ----------
    responses : the responses table (``bias_validity.probes.schema``).
    ci : interval level.

    Returns
    -------
    pandas.DataFrame
        Columns ``model``, ``dimension``, ``method``, ``n`` (all answers), one count column per status (``ok``,
        ``refusal``, ``unparseable``, ``invalid_choice``, ``error``), ``k_consistent``, ``sc``, ``ci_low``,
        ``ci_high`` (Wilson score interval over the ``ok`` answers; NaN when none is ok). ``attrs``: ``ci``,
        ``method``. Non-``ok`` answers are counted, never coded as a stance. The ``embedding`` method's whole-set
        WEAT row is excluded here (it is an effect size, not an answer).

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"model": ["m"] * 3, "dimension": ["age"] * 3, "method": ["implicit"] * 3,
    ...                   "item_id": ["age-01"] * 3, "status": ["ok", "ok", "refusal"],
    ...                   "consistent": [1, 0, None]})
    >>> sc_table(t)[["ok", "refusal", "k_consistent", "sc"]].to_dict("records")
    [{'ok': 2, 'refusal': 1, 'k_consistent': 1, 'sc': 0.5}]
    """
    missing = [c for c in (*_CELL, "item_id", "status", "consistent") if c not in responses.columns]
    if missing:
        raise ValueError(f"responses table lacks column(s): {', '.join(missing)}")
    table = responses[responses["item_id"] != WEAT_ITEM]
    counts = table.groupby([*_CELL, "status"]).size().unstack("status", fill_value=0).reindex(columns=STATUS_COLUMNS)
    counts = counts.fillna(0).astype(int)
    ok = table[table["status"] == Status.OK.value]
    k = ok.groupby(_CELL)["consistent"].sum().reindex(counts.index, fill_value=0).astype(int)
    out = counts.reset_index()
    out.columns.name = None
    out.insert(3, "n", counts.sum(axis=1).to_numpy())
    out["k_consistent"] = k.to_numpy()
    interval = wilson_interval(out["k_consistent"].to_numpy(), out[Status.OK.value].to_numpy(), ci=ci)
    out["sc"] = interval["estimate"].to_numpy()
    out["ci_low"] = interval["ci_low"].to_numpy()
    out["ci_high"] = interval["ci_high"].to_numpy()
    out.attrs.update(ci=ci, method="wilson")
    return out


def status_counts(responses: pd.DataFrame) -> pd.DataFrame:
    """Answers per model x method x status: ``model``, ``method``, ``status``, ``n`` and ``rate`` (share of the
    model x method's answers).

    SCs are conditional on a valid (``ok``) answer; these rates say how many answers that condition set aside.

    Examples
    --------
    >>> df = pd.DataFrame({"model": ["m"] * 4, "method": ["implicit"] * 4, "status": ["ok", "ok", "ok", "refusal"]})
    >>> status_counts(df)[["status", "n", "rate"]].to_dict("records")
    [{'status': 'ok', 'n': 3, 'rate': 0.75}, {'status': 'refusal', 'n': 1, 'rate': 0.25}]
    """
    counts = responses.groupby(["model", "method", "status"]).size().rename("n").reset_index()
    counts["rate"] = counts["n"] / counts.groupby(["model", "method"])["n"].transform("sum")
    return counts
