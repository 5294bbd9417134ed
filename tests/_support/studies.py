"""Simulated studies with known truth for the per-model verdict, incomplete-design and scaling tests.

``incomplete_study``: six dimensions whose SCs differ widely, a second wording that shares one cell per dimension
with the first and covers other items of its own, and moves the SC by a known amount in ``race`` only.
``llama3_study`` / ``llama3_meta``: Llama-3 8B and 70B, base and instruct, on the same 15T tokens.
``mixed_reliability_study``: three models whose Q1 findings differ (reliable, coin flips, one wording and one
session).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from bias_validity.probes.schema import IMPLICIT_ORDERS
from bias_validity.simulate import answer_row, rows_to_table, simulate_responses

__all__ = [
    "DIMENSION_SC",
    "RACE_SHIFT",
    "incomplete_study",
    "MODELS",
    "DIMENSIONS",
    "llama3_study",
    "llama3_meta",
    "mixed_reliability_study",
]

DIMENSION_SC = {
    "age": 0.15,
    "disability": 0.3,
    "gender_career": 0.45,
    "gender_occupation": 0.6,
    "race": 0.75,
    "science": 0.9,
}
RACE_SHIFT = 0.45  # the synonym wording's SC in race is 0.75 - 0.45 = 0.30


def incomplete_study(
    *,
    race_shift: float = RACE_SHIFT,
    reps: int = 100,
    sessions: int = 1,
    seed: int = 0,
    models: tuple[str, ...] = ("sim:a",),
) -> pd.DataFrame:
    """T1 asks items 1-4 in every order; T2 (a synonym form) asks items 5-8 in every order and item 1 in one order
    only, so the two wordings share one cell per dimension. Item effects are nil: a cell's SC is its dimension's,
    except for T2's own items (5-8) in race, shifted down by ``race_shift``."""
    rng = np.random.default_rng(seed)
    rows = []
    design = [("T1", f"{i}", o) for i in range(1, 5) for o in IMPLICIT_ORDERS]
    design += [("T2", f"{i}", o) for i in range(5, 9) for o in IMPLICIT_ORDERS] + [("T2", "1", IMPLICIT_ORDERS[0])]
    for model in models:
        for dim, sc in DIMENSION_SC.items():
            for template, item, order in design:
                p = sc - race_shift if (dim == "race" and template == "T2" and item != "1") else sc
                for session in range(1, sessions + 1):
                    rows += [
                        answer_row(
                            model=model,
                            dimension=dim,
                            method="implicit",
                            template_id=template,
                            item_id=f"{dim}-{item}",
                            order=order,
                            session=session,
                            rep=rep,
                            consistent=int(rng.random() < p),
                        )
                        for rep in range(reps)
                    ]
    return rows_to_table(rows, source="incomplete_study")


#: Llama-3 8B and 70B, base and instruct, all trained on 15T tokens. True SCs per model: the implicit SC grows with
#: size and is untouched by alignment; the explicit SC drops under alignment.
MODELS = {
    "hf:llama-3-8b": dict(parameters=8e9, aligned=False, implicit=0.60, explicit=0.60),
    "hf:llama-3-8b-instruct": dict(parameters=8e9, aligned=True, implicit=0.60, explicit=0.20),
    "hf:llama-3-70b": dict(parameters=70e9, aligned=False, implicit=0.75, explicit=0.60),
    "hf:llama-3-70b-instruct": dict(parameters=70e9, aligned=True, implicit=0.75, explicit=0.20),
}
DIMENSIONS = ["age", "race", "gender_career"]


def llama3_study(seed: int = 0) -> pd.DataFrame:
    parts = [
        simulate_responses(
            models=[m],
            dimensions=DIMENSIONS,
            sc={"implicit": v["implicit"], "explicit": v["explicit"]},
            item_sd=0.0,
            reps=6,
            seed=seed + i,
        )
        for i, (m, v) in enumerate(MODELS.items())
    ]
    return pd.concat(parts, ignore_index=True)


def llama3_meta(names: dict[str, str] | None = None) -> pd.DataFrame:
    rows = [
        dict(
            model=(names or {}).get(m, m),
            family="llama-3",
            parameters=v["parameters"],
            training_tokens=15e12,
            aligned=v["aligned"],
        )
        for m, v in MODELS.items()
    ]
    return pd.DataFrame(rows)


def mixed_reliability_study(dimensions: tuple[str, ...] = ("age", "race", "science")) -> pd.DataFrame:
    """``sim:steady`` answers each item the same way every time (reliable); ``sim:coin`` flips a coin (unreliable);
    ``sim:single`` has one wording and one session (nothing to estimate reliability from)."""
    steady = simulate_responses(models=["sim:steady"], dimensions=dimensions, item_sd=6.0, reps=3, seed=21)
    coin = simulate_responses(
        models=["sim:coin"], dimensions=dimensions, sc={"implicit": 0.5, "explicit": 0.5}, item_sd=0.0, seed=22
    )
    single = simulate_responses(models=["sim:single"], dimensions=dimensions, n_templates=1, sessions=1, seed=23)
    return pd.concat([steady, coin, single], ignore_index=True)
