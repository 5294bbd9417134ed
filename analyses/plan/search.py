"""The search for a design: one question's requirement in one cell (``_Need``) and the cheapest (items, repetitions)
that meets it, preferring designs within the item pool (``_search``; items by bisection, ``_smallest_items``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from bias_validity.analyses.plan.model import _Cell
from bias_validity.psychometrics.clustered import MIN_CLUSTERS
from bias_validity.psychometrics.planning import PlanTargets

#: The largest design searched: beyond it a target is reported as out of reach.
_MAX_SEARCH_ITEMS = 5000


@dataclass(frozen=True)
class _Need:
    """One question's requirement in one cell: a criterion on (items, reps) and the figures at a design."""

    question: str
    quantity: str
    target: str
    assumed: float
    threshold: float
    sessions: int
    basis: str
    ok: Callable[[int, int], bool] | None  #: None: no design decides it (``why`` says why)
    figures: Callable[[int, int], tuple[float, float, float]]  #: (half-width, power, margin)
    why: str = ""
    note: str = ""
    check: str = ""  #: which estimator the simulation check runs
    extra: dict[str, object] = field(default_factory=dict)
    #: the chance of deciding at (items, reps), simulated over the planning model's items (None: the closed form)
    simulate: Callable[[int, int], float] | None = None


def _smallest_items(ok: Callable[[int], bool]) -> int | None:
    """The fewest items (>= MIN_CLUSTERS) meeting a criterion that more items only help, by bisection."""
    low, high = MIN_CLUSTERS, _MAX_SEARCH_ITEMS
    if not ok(high):
        return None
    if ok(low):
        return low
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (low, mid) if ok(mid) else (mid, high)
    return high


def _search(need: _Need, cell: _Cell, targets: PlanTargets) -> tuple[int, int] | None:
    """The cheapest (items, reps) meeting ``need``: within the item pool if any design there does, else overall."""
    found: list[tuple[int, int, int]] = []
    for reps in range(1, targets.max_reps + 1):
        items = _smallest_items(lambda m, r=reps: need.ok(m, r))
        if items is not None:
            found.append((cell.answers_at(items, need.sessions, reps), reps, items))
        if items == MIN_CLUSTERS or (items is not None and len(found) > 1 and items >= found[-2][2]):
            break  # more repetitions no longer save items: they only cost more
    if not found:
        return None
    cap = targets.max_items or cell.pool
    within = [f for f in found if cap is None or f[2] <= cap]
    _, reps, items = min(within or found)
    return items, reps
