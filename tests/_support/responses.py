"""Simulated cell tables expanded into a responses table, one row per answer."""

from __future__ import annotations

import numpy as np
import pandas as pd

from bias_validity.probes.schema import response_id, validate_responses

__all__ = ["cells_to_responses"]


def cells_to_responses(sim: dict[str, pd.DataFrame], *, refusals: int = 0) -> pd.DataFrame:
    """Expand simulated cells into a responses table: one row per answer, plus ``refusals`` refusals per cell."""
    rows = []

    def row(key: dict, rep: int, **fields: object) -> dict:
        design = {**key, "session": 0}
        return {**design, "rep": rep, "response_id": response_id(**design, rep=rep), **fields}

    for c in sim["binary"].to_dict("records"):
        key = {k: c[k] for k in ("model", "dimension", "method", "template_id", "item_id", "order")}
        answers = [1] * c["k"] + [0] * (c["n"] - c["k"])
        rows += [row(key, r, status="ok", consistent=v) for r, v in enumerate(answers)]
        rows += [row(key, c["n"] + r, status="refusal") for r in range(refusals)]
    for key_cols, group in sim["ordinal"].groupby(["model", "dimension", "method", "template_id", "item_id", "order"]):
        key = dict(zip(["model", "dimension", "method", "template_id", "item_id", "order"], key_cols, strict=True))
        levels = np.repeat(group["level"].to_numpy(), group["n"].to_numpy())
        rows += [row(key, r, status="ok", likert=int(v), consistent=int(v >= 4)) for r, v in enumerate(levels)]
    for c in sim["scores"].to_dict("records"):
        key = {k: c[k] for k in ("model", "dimension", "method", "template_id", "item_id", "order")}
        rows.append(row(key, 0, status="ok", score=c["score"], consistent=int(c["score"] > 0)))
    return validate_responses(pd.DataFrame(rows))
