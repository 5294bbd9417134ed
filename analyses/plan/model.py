"""The planning model: per model x dimension x method, items random and wordings and sessions fixed, on the logit
scale (``_Method``, ``_Cell``), new items drawn from it (``_draw_items``, Latin hypercube for the moments) and the
variances of item-level figures those draws give (``_Moments``), which the item-cluster intervals' widths depend on.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from scipy.special import expit, ndtri

from bias_validity.probes.schema import IMPLICIT_ORDERS, Method

_IMP, _ABL, _EXP, _REF = (m.value for m in (Method.IMPLICIT, Method.ABLATED, Method.EXPLICIT, Method.REFLECTION))
_LOG, _EMB = Method.LOGPROB.value, Method.EMBEDDING.value
_SAMPLED = (_IMP, _ABL, _EXP, _REF)
#: Answers per item x wording x session x repetition: the counterbalanced order cells.
_ORDERS = len(IMPLICIT_ORDERS)
#: Items drawn to compute the planning model's moments (fixed seed: the plan is deterministic).
_MC_ITEMS = 4000


@dataclass(frozen=True)
class _Method:
    """One method of one model x dimension on the logit scale; ``wordings`` and ``sessions`` are fixed effects."""

    mean: float
    item_sd: float
    wording_sd: float  #: item x wording
    session_sd: float  #: item x session
    wordings: tuple[float, ...]
    sessions: tuple[float, ...] = (0.0,)
    corr: float = 0.0  #: correlation of its item effects with the implicit method's


@dataclass
class _Cell:
    """A model x dimension: its methods, score correlations, the pilot's design and answers per item."""

    model: str
    dimension: str
    methods: dict[str, _Method]
    scores: dict[str, float]  #: method -> correlation of its item scores with the implicit item effects
    sessions: int
    reps: int
    items: int  #: in the pilot (0 for assumptions)
    answers: int  #: in the pilot
    per_item: dict[str, float]  #: method -> answers per item (per session x repetition for sampled methods)
    pool: int | None  #: items available before new stimuli are needed
    notes: dict[str, str] = field(default_factory=dict)  #: method -> what the estimates rest on
    _moments: dict[int, _Moments] = field(default_factory=dict, repr=False)

    def moments(self, sessions: int, seed: int) -> _Moments:
        if sessions not in self._moments:
            self._moments[sessions] = _Moments(
                _draw_items(self, _MC_ITEMS, sessions, np.random.default_rng(seed), latin=True)
            )
        return self._moments[sessions]

    def answers_at(self, items: int, sessions: int, reps: int) -> int:
        """Answers of every method of this model x dimension at a design."""
        total = sum(
            per * items * (sessions * reps if method in _SAMPLED else 1) for method, per in self.per_item.items()
        )
        return int(round(total))

    def more_at(self, items: int, sessions: int, reps: int) -> int:
        """Answers a design needs beyond the pilot's, the pilot extended as ``collect`` extends a store: its items
        asked in the sessions and repetitions they lack, new items in all of them."""
        old = min(items, self.items)
        total = 0.0
        for method, per in self.per_item.items():
            if method in _SAMPLED:
                total += per * (old * max(sessions * reps - self.sessions * self.reps, 0))
                total += per * (items - old) * sessions * reps
            else:
                total += per * (items - old)
        return int(round(total))


def _with_sessions(effects: tuple[float, ...], sessions: int) -> np.ndarray:
    """The fixed session effects of a design: the pilot's first ones, new sessions at 0 (no shift assumed)."""
    out = np.zeros(sessions)
    out[: min(sessions, len(effects))] = effects[:sessions]
    return out


def _draw_items(
    cell: _Cell, n: int, sessions: int, rng: np.random.Generator, *, latin: bool = False
) -> dict[str, np.ndarray]:
    """``n`` new items of a cell: per method the probability of a consistent answer per item x wording x session
    (shape ``(n, wordings, sessions)``) and per scored method its item scores (shape ``(n,)``).

    ``latin``: every normal effect by Latin hypercube sampling (McKay, Beckman & Conover 1979), each column's draws
    one per stratum of equal probability: the planning model's moments, whose error from a finite number of
    drawn items would otherwise move a plan's assumed figures by more than a large design can resolve."""

    def normal(*shape: int) -> np.ndarray:
        if not latin:
            return rng.standard_normal(shape)
        flat = (n, int(np.prod(shape[1:], dtype=int)))
        strata = rng.permuted(np.tile(np.arange(n)[:, None], (1, flat[1])), axis=0)
        return ndtri((strata + rng.random(flat)) / n).reshape(shape)

    z = normal(n)
    out: dict[str, np.ndarray] = {}
    for name, m in cell.methods.items():
        own = z if name == _IMP else m.corr * z + np.sqrt(max(1 - m.corr**2, 0.0)) * normal(n)
        t = len(m.wordings)
        eta = (
            m.mean
            + m.item_sd * own[:, None, None]
            + np.asarray(m.wordings)[None, :, None]
            + m.wording_sd * normal(n, t)[:, :, None]
            + _with_sessions(m.sessions, sessions)[None, None, :]
            + m.session_sd * normal(n, sessions)[:, None, :]
        )
        out[name] = expit(eta)
    for name, r in cell.scores.items():
        out[name] = r * z + np.sqrt(max(1 - r**2, 0.0)) * normal(n)
    return out


class _Moments:
    """Variances of item-level figures under the planning model, from many drawn items: what the item-cluster
    intervals' widths depend on, as a function of the repetitions (the binomial part shrinks with them). Each
    figure is computed once per key and kept."""

    def __init__(self, draws: dict[str, np.ndarray]) -> None:
        self.draws = draws
        self._kept: dict[tuple, object] = {}

    def _once(self, key: tuple, compute: Callable[[], object]) -> object:
        if key not in self._kept:
            self._kept[key] = compute()
        return self._kept[key]

    @staticmethod
    def _binomial(p: np.ndarray) -> float:
        """Binomial variance of an item's observed share over the cells of ``p``, times the repetitions (each cell
        holds ``_ORDERS x reps`` answers)."""
        return float((p * (1 - p)).mean() / (p[0].size * _ORDERS))

    def share(self, method: str) -> np.ndarray:
        return self._once(("share", method), lambda: self.draws[method].mean(axis=(1, 2)))

    def noise(self, method: str) -> np.ndarray:
        """Each drawn item's binomial variance of its observed SC, times the repetitions."""
        p = self.draws[method]
        return self._once(("noise", method), lambda: (p * (1 - p)).mean(axis=(1, 2)) / (p[0].size * _ORDERS))

    def pair_items(self, method: str, axis: int, i: int, j: int) -> tuple[np.ndarray, np.ndarray]:
        """Each drawn item's true shift between two wordings (axis 1) or sessions (axis 2), and its binomial
        variance times the repetitions."""

        def compute() -> tuple[np.ndarray, np.ndarray]:
            p = self.draws[method]
            a, b = np.take(p, i, axis=axis), np.take(p, j, axis=axis)
            noise = ((a * (1 - a)).mean(axis=1) + (b * (1 - b)).mean(axis=1)) / (a.shape[1] * _ORDERS)
            return a.mean(axis=1) - b.mean(axis=1), noise

        return self._once(("pair_items", method, axis, i, j), compute)

    def sc(self, method: str) -> float:
        return float(self._once(("sc", method), lambda: self.share(method).mean()))

    def _parts(self, method: str) -> tuple[float, float]:
        return self._once(
            ("parts", method), lambda: (float(self.share(method).var()), self._binomial(self.draws[method]))
        )

    def item_var(self, method: str, reps: int) -> float:
        """Variance of an item's observed SC: between items + binomial (the item-cluster interval's)."""
        between, binomial = self._parts(method)
        return between + binomial / reps

    def diff_var(self, a: str, b: str, reps: int) -> float:
        """Variance of an item's SC(a) - SC(b), answers of the two methods independent."""
        between = self._once(("diff", a, b), lambda: float((self.share(a) - self.share(b)).var()))
        return between + (self._parts(a)[1] + self._parts(b)[1]) / reps

    def cov(self, a: str, b: str) -> float:
        return float(self._once(("cov", a, b), lambda: np.cov(self.share(a), self.share(b))[0, 1]))

    def pair(self, method: str, axis: int, i: int, j: int, reps: int) -> tuple[float, float]:
        """Mean and variance of an item's SC shift between wordings (axis 1) or sessions (axis 2) ``i`` and ``j``."""

        def compute() -> tuple[float, float, float]:
            p = self.draws[method]
            a, b = np.take(p, i, axis=axis), np.take(p, j, axis=axis)
            d = a.mean(axis=1) - b.mean(axis=1)
            return float(d.mean()), float(d.var()), self._binomial(a[:, :, None]) + self._binomial(b[:, :, None])

        mean, between, binomial = self._once(("pair", method, axis, i, j), compute)
        return mean, between + binomial / reps

    def correlation(self, method: str, score: str, reps: int) -> float:
        """Expected correlation of the observed implicit item SCs with a method's item scores at ``reps``."""
        cov, var = self._once(
            ("corr", method, score),
            lambda: (float(np.cov(self.share(method), self.draws[score])[0, 1]), float(self.draws[score].var())),
        )
        return cov / np.sqrt(self.item_var(method, reps) * var)

    def icc(self, method: str, raters: int, reps: int) -> float:
        """ICC(A,1) of order-averaged item x wording SCs with sessions (axis 2) or item x session SCs with wordings
        (axis 1) as raters: between-target over total variance, the raters' fixed effects counted as error."""

        def compute() -> tuple[float, float, float]:
            p = self.draws[method]
            other = 1 if raters == 2 else 2
            cells = np.moveaxis(p, (other, raters), (1, 2))  # (items, targets within item, raters)
            between = float(cells.mean(axis=2).var())
            return between, float(cells.var(axis=2).mean()), float((cells * (1 - cells)).mean() / _ORDERS)

        between, spread, binomial = self._once(("icc", method, raters), compute)
        total = between + spread + binomial / reps
        return between / total if total > 0 else 0.0
