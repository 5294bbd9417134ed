"""Plan a study that decides: from a pilot study (or stated assumptions) to the design each question needs.

The planning model is the one the questions' intervals are built for: per model x dimension x method, an answer is
consistent with probability ``expit(mean + u_item + v_wording + w_item,wording + s_session + e_item,session)``, items
random (the item-cluster intervals generalise to the dimension's items), wordings and sessions fixed. A pilot gives
its parameters by the method of moments (:func:`plan`, Notes); stated assumptions give them directly
(:class:`Assumptions`). From them each question's deciding figure is planned forward with the closed forms of
:mod:`bias_validity.psychometrics.planning`, and ``check=True`` draws studies at the planned design and runs the
same estimators the questions run (:func:`bias_validity.analyses.study.sc_interval`,
:func:`~bias_validity.analyses.study.sc_difference`, :func:`bias_validity.psychometrics.forms.form_shifts`,
:func:`bias_validity.psychometrics.validity.convergent_validity`,
:func:`bias_validity.psychometrics.framing.ablation_retained_share`) with the questions' verdict rules.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from itertools import combinations

import numpy as np
import pandas as pd
from scipy import optimize, stats
from scipy.special import expit, logit, ndtri, stdtrit

from bias_validity.analyses.config import AnalysisConfig
from bias_validity.analyses.questions._common import all_must_hold, interval_verdict
from bias_validity.analyses.questions.convergent import verdict_rule
from bias_validity.analyses.questions.gap import rope_verdict
from bias_validity.analyses.questions.reliability import shift_verdict
from bias_validity.analyses.result import ALL_DIMENSIONS, Verdict
from bias_validity.analyses.study import Study, as_study, item_keys, sc_difference, sc_interval
from bias_validity.probes.schema import ATTRIBUTE_ORDERS, IMPLICIT_ORDERS, REVERSED_SUFFIX, WEAT_ITEM, Method
from bias_validity.psychometrics.clustered import MIN_CLUSTERS
from bias_validity.psychometrics.forms import form_shifts
from bias_validity.psychometrics.framing import FramingVerdict, ablation_retained_share
from bias_validity.psychometrics.planning import (
    CHECK_REPLICATIONS,
    Assumptions,
    PlanTargets,
    fieller_half_width,
    fisher_z_half_width,
    fisher_z_power,
    fisher_z_sample_size,
    icc_interval_width,
    icc_sample_size,
    power_to_clear,
    spearman_from_pearson,
    t_half_width,
    tost_power,
)
from bias_validity.psychometrics.validity import FISHER_Z_VARIANCE, convergent_validity

__all__ = ["CHECK_MAX_ANSWERS", "PLAN_COLUMNS", "PlanTargets", "Assumptions", "plan", "plan_summary"]

#: Columns of :func:`plan`'s table, in order (``hours``, ``cost`` and the check's columns follow when asked for).
PLAN_COLUMNS: tuple[str, ...] = (
    "question",
    "quantity",
    "model",
    "dimension",
    "target",
    "assumed",
    "threshold",
    "items",
    "wordings",
    "sessions",
    "reps",
    "answers",
    "more_answers",
    "planned_half_width",
    "planned_power",
    "margin",
    "basis",
    "note",
    "would_decide",
)
_IMP, _ABL, _EXP, _REF = (m.value for m in (Method.IMPLICIT, Method.ABLATED, Method.EXPLICIT, Method.REFLECTION))
_LOG, _EMB = Method.LOGPROB.value, Method.EMBEDDING.value
_SAMPLED = (_IMP, _ABL, _EXP, _REF)
#: Answers per item x wording x session x repetition: the counterbalanced order cells.
_ORDERS = len(IMPLICIT_ORDERS)
#: Items drawn to compute the planning model's moments (fixed seed: the plan is deterministic).
_MC_ITEMS = 4000
#: The largest design searched: beyond it a target is reported as out of reach.
_MAX_SEARCH_ITEMS = 5000
_SPEARMAN_FACTOR = FISHER_Z_VARIANCE["spearman"][0]  # the Fisher-z variance factor of Q2's interval
#: Characters per token of English text, for a token estimate from the pilot's prompts and answers (a common rule
#: of thumb for BPE tokenisers, e.g. OpenAI's "about 4 characters per token").
CHARS_PER_TOKEN = 4.0
_HALF, _DECIDE = "half-width", "decide"
#: Rows whose planned study holds more answers than this are not simulated by the check (``check_replications``
#: 0): a study of that size takes minutes per replication, and its figures rest on the same closed forms.
CHECK_MAX_ANSWERS = 100_000


# --- the planning model --------------------------------------------------------------------------------------------


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


# --- the pilot's estimates (method of moments on the probability scale, then the logit scale) -------------------------


def _hermite() -> tuple[np.ndarray, np.ndarray]:
    nodes, weights = np.polynomial.hermite_e.hermegauss(40)
    return nodes, weights / weights.sum()


def _logit_normal(sc: float, var: float) -> tuple[float, float, float]:
    """Location and SD of a logit-normal with mean ``sc`` and variance ``var``, and its mean ``p (1 - p)`` (the
    slope that maps small probability-scale SDs to logit SDs)."""
    nodes, weights = _hermite()
    sc = float(np.clip(sc, 1e-3, 1 - 1e-3))

    def location(sd: float) -> float:
        return optimize.brentq(lambda mu: float(weights @ expit(mu + sd * nodes)) - sc, -30, 30)

    def spread(sd: float) -> float:
        p = expit(location(sd) + sd * nodes)
        return float(weights @ p**2 - (weights @ p) ** 2)

    ceiling = spread(8.0)
    sd = 0.0 if var <= 1e-12 else 8.0 if var >= ceiling else optimize.brentq(lambda s: spread(s) - var, 1e-6, 8.0)
    mu = location(sd)
    p = expit(mu + sd * nodes)
    return mu, sd, float(weights @ (p * (1 - p)))


def _residual_variance(frame: pd.DataFrame, factor: str) -> float | None:
    """Item x ``factor`` variance of cell SCs beyond the additive item + factor model, less its binomial part
    (the interaction mean square of the two-way layout; unbalanced cells by least squares)."""
    cells = frame.groupby(["item", factor], observed=True)[["k", "n"]].sum().reset_index()
    items, levels = cells["item"].nunique(), cells[factor].nunique()
    dof = len(cells) - items - levels + 1
    if levels < 2 or items < 2 or dof < 1:
        return None
    y = (cells["k"] / cells["n"]).to_numpy()
    design = pd.get_dummies(cells[["item", factor]].astype(str), drop_first=True).to_numpy(dtype=float)
    design = np.column_stack([np.ones(len(cells)), design])
    fitted = design @ np.linalg.lstsq(design, y, rcond=None)[0]
    within = frame.attrs["within"]
    return max(0.0, float(((y - fitted) ** 2).sum() / dof - (within / cells["n"]).mean()))


def _estimate_method(rows: pd.DataFrame) -> tuple[_Method, dict[str, float], str] | None:
    """A method's planning parameters from its pilot answers in one model x dimension (None with < 2 items)."""
    frame = rows.assign(item=rows["item_id"].astype(str), wording=rows["template_id"].astype(str))
    frame = frame.assign(session=frame["session"].astype(int), y=frame["consistent"].astype(float))
    cells = frame.groupby(["item", "wording", "session"], observed=True)["y"].agg(k="sum", n="size").reset_index()
    items = cells["item"].nunique()
    if items < 2:
        return None
    k, n = cells["k"].to_numpy(float), cells["n"].to_numpy(float)
    sc = (k.sum() + 0.5) / (n.sum() + 1)
    several = n >= 2
    within = (
        float((k * (n - k) / n)[several].sum() / (n[several] - 1).sum()) if several.any() else sc * (1 - sc)
    )  # pooled within-cell variance of one answer
    cells.attrs["within"] = within
    wording_var = _residual_variance(cells, "wording")
    session_var = _residual_variance(cells, "session")
    per_item = cells.groupby("item")[["k", "n"]].sum()
    y_item = per_item["k"] / per_item["n"]
    n_wordings, n_sessions = cells["wording"].nunique(), cells["session"].nunique()
    noise = float((within / per_item["n"]).mean())
    between = max(
        0.0, float(y_item.var(ddof=1)) - (wording_var or 0.0) / n_wordings - (session_var or 0.0) / n_sessions - noise
    )
    mean, sd, slope = _logit_normal(sc, between)
    levels = {}
    for factor in ("wording", "session"):
        g = cells.groupby(factor)[["k", "n"]].sum()
        levels[factor] = tuple(((g["k"] + 0.5) / (g["n"] + 1) - sc) / slope)
    method = _Method(
        mean=mean,
        item_sd=sd,
        wording_sd=np.sqrt(wording_var or 0.0) / slope,
        session_sd=np.sqrt(session_var or 0.0) / slope,
        wordings=levels["wording"],
        sessions=levels["session"],
    )
    note = f"{items} items, {int(n.sum())} answers"
    if wording_var is None and n_wordings > 1:
        note += "; item x wording variance not estimable (assumed 0)"
    if n_sessions < 2:
        note += "; one session: items assumed stable across sessions"
    return method, {"between": between, "y": y_item}, note


def _correlation(a: pd.Series, b: pd.Series, var_a: float, var_b: float) -> float:
    """Correlation of two methods' item effects from their item SCs: the covariance over their shared items over the
    between-item SDs (sampling errors are independent between methods), kept within +/-0.95."""
    shared = a.index.intersection(b.index)
    if len(shared) < 2 or var_a <= 0 or var_b <= 0:
        return 0.0
    cov = float(np.cov(a[shared], b[shared])[0, 1])
    return float(np.clip(cov / np.sqrt(var_a * var_b), -0.95, 0.95))


def _pilot_cells(study: Study, pool: Callable[[str], int | None]) -> list[_Cell]:
    """Every model x dimension of the pilot with ok implicit answers, with its planning parameters."""
    responses = study.responses
    scores = study.item_scores
    cells = []
    for (model, dim), group in responses.groupby(["model", "dimension"], observed=True):
        methods, notes, item_info = {}, {}, {}
        for name in _SAMPLED:
            rows = study.answers(name)
            rows = rows[(rows["model"] == model) & (rows["dimension"] == dim)]
            found = _estimate_method(rows) if len(rows) else None
            if found is not None:
                methods[name], item_info[name], notes[name] = found
        if _IMP not in methods:
            continue
        imp = item_info[_IMP]
        for name in list(methods):
            if name != _IMP:
                corr = _correlation(imp["y"], item_info[name]["y"], imp["between"], item_info[name]["between"])
                methods[name] = replace(methods[name], corr=corr)
        mine = scores[(scores["model"] == model) & (scores["dimension"] == dim)]
        score_corr = {}
        for name in (_LOG, _EMB):
            s = mine[mine["method"] == name].assign(item=lambda f: f["item_id"].astype(str)).set_index("item")["score"]
            y = imp["y"]
            shared = y.index.intersection(s.index)
            if len(shared) >= 2 and s[shared].std() > 0 and imp["between"] > 0:
                noise = float(y[shared].var(ddof=1))
                r = float(np.corrcoef(y[shared], s[shared])[0, 1])
                reliability = min(1.0, imp["between"] / noise) if noise > 0 else 1.0
                score_corr[name] = float(np.clip(r / np.sqrt(max(reliability, 0.05)), -0.95, 0.95))
            elif len(shared) >= 2:
                score_corr[name] = 0.0
        per_item = {}
        for name, g in group[group["method"].isin(_SAMPLED)].groupby("method", observed=True):
            occasions = len(g[[c for c in ("session", "rep") if c in g.columns]].drop_duplicates())
            per_item[str(name)] = len(g) / (g["item_id"].nunique() * max(occasions, 1))
        for name in (_LOG, _EMB):
            det = group[(group["method"] == name) & (group["item_id"] != WEAT_ITEM)]
            if len(det):
                per_item[name] = len(det) / det["item_id"].nunique()
        imp_rows = study.answers(_IMP)
        imp_rows = imp_rows[(imp_rows["model"] == model) & (imp_rows["dimension"] == dim)]
        cells.append(
            _Cell(
                model=str(model),
                dimension=str(dim),
                methods=methods,
                scores=score_corr,
                sessions=int(imp_rows["session"].nunique()),
                reps=int(imp_rows["rep"].nunique()) if "rep" in imp_rows.columns else 1,
                items=int(item_keys(imp_rows).nunique()),
                answers=len(group),
                per_item=per_item,
                pool=pool(str(dim)),
                notes=notes,
            )
        )
    return cells


def _blom(k: int, sd: float) -> tuple[float, ...]:
    """Expected normal order statistics of ``k`` draws with SD ``sd`` (Blom's 1958 approximation)."""
    ranks = np.arange(1, k + 1)
    return tuple(sd * stats.norm.ppf((ranks - 0.375) / (k + 0.25)))


def _assumed_cells(a: Assumptions, pool: int | None) -> list[_Cell]:
    cells = []
    for model in range(a.models):
        for dim in range(a.dimensions):
            methods = {
                name: _Method(
                    mean=float(logit(sc)),
                    item_sd=a.item_sd,
                    wording_sd=a.item_template_sd,
                    session_sd=a.item_session_sd,
                    wordings=_blom(a.wordings if name != _EXP else 1, a.template_sd),
                    sessions=(0.0,) * a.sessions,
                    corr=1.0 if name == _IMP else a.item_corr,
                )
                for name, sc in a.sc.items()
            }
            per_item = {name: len(m.wordings) * _ORDERS for name, m in methods.items()}
            scores = {} if a.score_corr is None else {_LOG: a.score_corr, _EMB: a.score_corr}
            per_item.update({name: 1 for name in scores})
            cells.append(
                _Cell(
                    model=f"assumed-{model + 1}" if a.models > 1 else "assumed",
                    dimension=f"dimension-{dim + 1}" if a.dimensions > 1 else "dimension",
                    methods=methods,
                    scores=scores,
                    sessions=a.sessions,
                    reps=1,
                    items=0,
                    answers=0,
                    per_item=per_item,
                    pool=pool,
                )
            )
    return cells


# --- the search ----------------------------------------------------------------------------------------------------


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


# --- each question's requirement -------------------------------------------------------------------------------------


def _t_margin(sd: float, items: int, ci: float, power: float) -> float:
    """Distance from a threshold the truth must clear for a ``ci`` t interval to clear it with chance ``power``."""
    df = items - 1
    return float((stdtrit(df, 0.5 + ci / 2) + stdtrit(df, power)) * sd / np.sqrt(items))


#: Studies simulated per design when a decision's power is refined by simulation (SE of a power near 0.8: 0.013).
_POWER_SIMULATIONS = 1000


def _sample(
    parts: list[tuple[np.ndarray, np.ndarray]], items: int, reps: int, rng: np.random.Generator
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Mean and standard error of each of ``parts`` (true item values, binomial variance x reps) over ``items``
    items drawn jointly (one item set for all parts), binomial noise as normal: per simulated study."""
    idx = rng.integers(parts[0][0].size, size=(_POWER_SIMULATIONS, items))
    out = []
    for true, noise in parts:
        x = true[idx] + rng.standard_normal(idx.shape) * np.sqrt(noise[idx] / reps)
        out.append((x.mean(axis=1), x.std(axis=1, ddof=1) / np.sqrt(items)))
    return out


def _beyond(mean: np.ndarray, se: np.ndarray, q: float, threshold: float, above: bool) -> np.ndarray:
    """Whether each interval ``mean +/- q se`` lies wholly above (or below) ``threshold``."""
    return mean - q * se > threshold if above else mean + q * se < threshold


def _inside(mean: np.ndarray, se: np.ndarray, q: float, limit: float) -> np.ndarray:
    return (mean - q * se > -limit) & (mean + q * se < limit)


def _refine(need: _Need, design: tuple[int, int] | None, power: float) -> tuple[tuple[int, int] | None, float]:
    """The closed-form design, items added (8% a step) until the simulated chance of deciding reaches ``power``:
    the closed forms assume normal item values, and items whose SCs spread towards 0 or 1 are skewed."""
    if design is None or need.simulate is None:
        return design, np.nan
    items, reps = design
    chance = need.simulate(items, reps)
    for _ in range(40):
        if chance >= power or items >= _MAX_SEARCH_ITEMS:
            break
        items = min(int(np.ceil(items * 1.08)), _MAX_SEARCH_ITEMS)
        chance = need.simulate(items, reps)
    return (items, reps), chance


_SIMULATED = "; power refined by simulating the interval over the planning model's items (skewed item SCs)"


def _needs(cell: _Cell, config: AnalysisConfig, targets: PlanTargets) -> list[_Need]:
    """What each question asks of one model x dimension: the SC's half-width, Q1's shifts and item-score ICCs,
    Q3's retained share, Q4's gap and Q5's reflection SC (Q2 and Q5 pooled: :func:`_q2_needs`, :func:`_q5_needs`)."""
    ci, power, th = config.ci, targets.power, config.thresholds
    s0 = max(cell.sessions, 1)
    mom = cell.moments(s0, config.seed)
    out: list[_Need] = []

    def rng() -> np.random.Generator:
        return np.random.default_rng(config.seed + 1)

    def q(items: int) -> float:
        return float(stdtrit(items - 1, 0.5 + ci / 2))

    def sc_half(method: str, sessions: int = s0) -> Callable[[int, int], tuple[float, float, float]]:
        m = cell.moments(sessions, config.seed)
        return lambda items, reps: (t_half_width(np.sqrt(m.item_var(method, reps)), items, ci=ci), np.nan, np.nan)

    # SC of the implicit measure: an interval of the target half-width
    half = sc_half(_IMP)
    out.append(
        _Need(
            "SC",
            f"sc ({_IMP})",
            f"{_HALF} {targets.half_width:g}",
            mom.sc(_IMP),
            np.nan,
            s0,
            "closed form: t interval on the item-cluster variance (between-item + binomial / answers per item, "
            "Kish's design effect)",
            lambda m, r: half(m, r)[0] <= targets.half_width,
            half,
            check="sc",
        )
    )
    # Q4: the gap, an interval of the target half-width and one that clears the ROPE
    if _EXP in cell.methods:
        gap = mom.sc(_EXP) - mom.sc(_IMP)

        def gap_figures(items: int, reps: int) -> tuple[float, float, float]:
            sd = np.sqrt(mom.diff_var(_EXP, _IMP, reps))
            clear = (
                power_to_clear(abs(gap) - th.gap_rope, sd, items, ci=ci)
                if abs(gap) > th.gap_rope
                else tost_power(gap, sd, items, limit=th.gap_rope, ci=ci)
            )
            return t_half_width(sd, items, ci=ci), clear, _t_margin(sd, items, ci, power)

        def gap_simulated(items: int, reps: int) -> float:
            parts = [(mom.share(_EXP) - mom.share(_IMP), mom.noise(_EXP) + mom.noise(_IMP))]
            (mean, se), crit = _sample(parts, items, reps, rng())[0], q(items)
            if abs(gap) > th.gap_rope:
                hit = _beyond(mean, se, crit, np.sign(gap) * th.gap_rope, gap > 0)
            else:
                hit = _inside(mean, se, crit, th.gap_rope)
            return float(hit.mean())

        basis = "closed form: t interval on the item-cluster variance of the paired item gap"
        out.append(
            _Need(
                "Q4",
                "gap_explicit_implicit",
                f"{_HALF} {targets.half_width:g}",
                gap,
                th.gap_rope,
                s0,
                basis,
                lambda m, r: gap_figures(m, r)[0] <= targets.half_width,
                gap_figures,
                check="gap",
            )
        )
        on_edge = abs(abs(gap) - th.gap_rope) < 1e-3
        out.append(
            _Need(
                "Q4",
                "gap_explicit_implicit",
                f"{_DECIDE}, {power:.0%} power",
                gap,
                th.gap_rope,
                s0,
                basis
                + (
                    "; noncentral-t power of the bound beyond the ROPE"
                    if abs(gap) > th.gap_rope
                    else "; two one-sided tests inside the ROPE (Phillips 1990 approximation)"
                )
                + _SIMULATED,
                None if on_edge else (lambda m, r: gap_figures(m, r)[1] >= power),
                gap_figures,
                why=f"the assumed gap {gap:.2f} sits on the ROPE edge +/-{th.gap_rope:g}",
                check="gap",
                simulate=gap_simulated,
            )
        )
    # Q1: every wording and session shift equivalent within the limit (or one beyond it)
    s1 = max(2, s0)
    mom1 = cell.moments(s1, config.seed)
    imp = cell.methods[_IMP]
    pairs = [(1, i, j) for i, j in combinations(range(len(imp.wordings)), 2)]
    pairs += [(2, i, j) for i, j in combinations(range(s1), 2)]
    shifts = {p: mom1.pair(_IMP, *p, 1)[0] for p in pairs}
    limit = th.shift_limit
    beyond = [p for p in pairs if abs(shifts[p]) > limit]

    def q1_figures(items: int, reps: int) -> tuple[float, float, float]:
        sds = {p: np.sqrt(mom1.pair(_IMP, *p, reps)[1]) for p in pairs}
        worst = max(sds.values())
        if beyond:
            chance = max(power_to_clear(abs(shifts[p]) - limit, sds[p], items, ci=ci) for p in beyond)
        else:
            chance = float(np.prod([tost_power(shifts[p], sds[p], items, limit=limit, ci=ci) for p in pairs]))
        return t_half_width(worst, items, ci=ci), chance, _t_margin(worst, items, ci, power)

    def q1_simulated(items: int, reps: int) -> float:
        found = _sample([mom1.pair_items(_IMP, *p) for p in pairs], items, reps, rng())
        crit = q(items)
        beyond_any = np.any(
            [_beyond(m, e, crit, limit, True) | _beyond(m, e, crit, -limit, False) for m, e in found], 0
        )
        inside_all = np.all([_inside(m, e, crit, limit) for m, e in found], axis=0)
        return float((beyond_any | inside_all).mean())

    largest = max(shifts.values(), key=abs)
    edge = any(abs(abs(v) - limit) < 1e-3 for v in shifts.values())
    q1_note = "" if cell.sessions >= 2 else "test-retest needs a second session: planned with 2"
    out.append(
        _Need(
            "Q1",
            "form and session shifts",
            f"{_DECIDE}, {power:.0%} power",
            largest,
            limit,
            s1,
            (
                "two one-sided tests per pair (Phillips 1990), the pairs multiplied as if independent"
                if not beyond
                else "noncentral-t power of the shift beyond the limit"
            )
            + "; power refined by simulating every pair's interval jointly over the planning model's items",
            None if edge else (lambda m, r: q1_figures(m, r)[1] >= power),
            q1_figures,
            why=f"an assumed shift sits on the limit +/-{limit:g}",
            note=q1_note,
            check="shifts",
            extra={"pairs": pairs},
            simulate=q1_simulated,
        )
    )
    for axis, facet in ((2, "test_retest"), (1, "alternate_forms")):
        raters = s1 if axis == 2 else len(imp.wordings)
        per_target = len(imp.wordings) if axis == 2 else s1  # targets per item
        if raters < 2:
            continue
        rho = float(np.clip(mom1.icc(_IMP, axis, 1), 0.0, 0.99))

        def icc_figures(items: int, reps: int, axis=axis, raters=raters, per_target=per_target):
            rho_r = float(np.clip(mom1.icc(_IMP, axis, reps), 0.0, 0.99))
            return icc_interval_width(rho_r, raters, items * per_target, ci=ci) / 2, np.nan, np.nan

        out.append(
            _Need(
                "Q1",
                f"{facet} ICC(A,1)",
                f"{_HALF} {targets.icc_width / 2:g}",
                rho,
                np.nan,
                s1,
                f"closed form: Bonett (2002) with {raters} raters (shown, does not decide)",
                lambda m, r, f=icc_figures: f(m, r)[0] <= targets.icc_width / 2,
                icc_figures,
                note=f"targets are items x {'wordings' if axis == 2 else 'sessions'}; "
                f"{icc_sample_size(rho, raters, targets.icc_width, ci=ci):.0f} targets at the assumed ICC",
            )
        )
    # Q3: R estimable (the implicit SC clear of the chance band) and its interval clear of the threshold
    if _ABL in cell.methods:
        b = mom.sc(_IMP) - 0.5
        a = mom.sc(_ABL) - 0.5
        ratio = a / b if b else np.nan

        def q3_figures(items: int, reps: int) -> tuple[float, float, float]:
            va, vb, cov = mom.item_var(_ABL, reps), mom.item_var(_IMP, reps), mom.cov(_ABL, _IMP)
            estimable = power_to_clear(abs(b) - th.chance_margin, np.sqrt(vb), items, ci=ci)
            theta = th.retained_share
            clears = power_to_clear(
                abs(a - theta * b), np.sqrt(max(va - 2 * theta * cov + theta**2 * vb, 0.0)), items, ci=ci
            )
            q = stdtrit(items - 1, 0.5 + ci / 2)
            half = fieller_half_width(a, b, va / items, vb / items, cov / items, quantile=q, margin=th.chance_margin)
            return half, estimable * clears, _t_margin(np.sqrt(vb), items, ci, power)

        def q3_simulated(items: int, reps: int) -> float:
            theta = th.retained_share
            parts = [
                (mom.share(_IMP) - 0.5, mom.noise(_IMP)),
                (mom.share(_ABL) - 0.5 - theta * (mom.share(_IMP) - 0.5), mom.noise(_ABL) + theta**2 * mom.noise(_IMP)),
            ]
            (b_mean, b_se), (l_mean, l_se) = _sample(parts, items, reps, rng())
            crit = q(items)
            estimable = _beyond(b_mean, b_se, crit, th.chance_margin, True) | _beyond(
                b_mean, b_se, crit, -th.chance_margin, False
            )
            clears = _beyond(l_mean, l_se, crit, 0.0, True) | _beyond(l_mean, l_se, crit, 0.0, False)
            return float((estimable & clears).mean())

        why = (
            f"the assumed implicit SC {b + 0.5:.2f} lies within the chance band 0.5 +/- {th.chance_margin:g}"
            if abs(b) <= th.chance_margin
            else f"the assumed R {ratio:.2f} sits on the threshold {th.retained_share:g}"
        )
        plannable = abs(b) > th.chance_margin and abs(ratio - th.retained_share) > 1e-3
        out.append(
            _Need(
                "Q3",
                "ablation_retained_share",
                f"{_DECIDE}, {power:.0%} power",
                ratio,
                th.retained_share,
                s0,
                "Fieller's interval's expected half-width (quadrature over the two SCs' estimates); its clearing the "
                "threshold is the t test of SC_abl - 0.5 - threshold x (SC_imp - 0.5); power simulated jointly with "
                "the implicit SC clearing the chance band over the planning model's items",
                (lambda m, r: q3_figures(m, r)[1] >= power) if plannable else None,
                q3_figures,
                why=why,
                note="margin: the implicit SC's distance from the chance band needed for R to be estimable",
                check="ratio",
                simulate=q3_simulated,
            )
        )
    # Q5: the reflection SC's interval clear of 0.5
    if _REF in cell.methods:
        ref = mom.sc(_REF)

        def q5_figures(items: int, reps: int) -> tuple[float, float, float]:
            sd = np.sqrt(mom.item_var(_REF, reps))
            return (
                t_half_width(sd, items, ci=ci),
                power_to_clear(abs(ref - 0.5), sd, items, ci=ci),
                _t_margin(sd, items, ci, power),
            )

        out.append(
            _Need(
                "Q5",
                "sc_reflection",
                f"{_DECIDE}, {power:.0%} power",
                ref,
                0.5,
                s0,
                "closed form: noncentral-t power of the item-cluster interval's bound beyond 0.5" + _SIMULATED,
                (lambda m, r: q5_figures(m, r)[1] >= power) if abs(ref - 0.5) > 1e-3 else None,
                q5_figures,
                why=f"the assumed reflection SC {ref:.2f} sits on 0.5",
                check=Method.REFLECTION.value,
                simulate=lambda m, r: _sc_simulated([(mom, rng(), 1.0)], m, r, ref, ci),
            )
        )
    return out


def _sc_simulated(
    sources: list[tuple[_Moments, np.random.Generator, float]], items: int, reps: int, sc: float, ci: float
) -> float:
    """Chance that the reflection SC's interval over ``items`` items of each source (dimension, with the answers one
    of its items carries as weight) clears 0.5: the pooled SC weighs items by their answers, as the question's
    pooled counts do, and its standard error is the linearised cluster one the item-cluster bootstrap estimates."""
    values, weights = [], []
    for mom, rng, weight in sources:
        idx = rng.integers(mom.share(_REF).size, size=(_POWER_SIMULATIONS, items))
        noise = np.sqrt(mom.noise(_REF)[idx] / reps)
        values.append(mom.share(_REF)[idx] + rng.standard_normal(idx.shape) * noise)
        weights.append(np.full(idx.shape, weight))
    x, w = np.concatenate(values, axis=1), np.concatenate(weights, axis=1)
    n = x.shape[1]
    mean = (w * x).sum(axis=1) / w.sum(axis=1)
    se = np.sqrt(n / (n - 1) * ((w * (x - mean[:, None])) ** 2).sum(axis=1)) / w.sum(axis=1)
    return float(_beyond(mean, se, float(stdtrit(n - 1, 0.5 + ci / 2)), 0.5, sc > 0.5).mean())


def _q2_needs(cells: list[_Cell], config: AnalysisConfig, targets: PlanTargets) -> list[tuple[_Need, list[_Cell]]]:
    """Q2 per model and deciding pair: the pooled within-dimension correlation's Fisher-z interval clear of 0 (or
    wholly below the floor), the correlation attenuated by the implicit item scores' reliability at the design."""
    ci, power, floor = config.ci, targets.power, config.thresholds.convergent_r
    out = []
    models = dict.fromkeys(c.model for c in cells)
    for model in models:
        mine = [c for c in cells if c.model == model]
        for score in (_LOG, _EMB):
            have = [c for c in mine if score in c.scores]
            if not have:
                continue
            g = len(have)
            s0 = max(have[0].sessions, 1)

            def r_at(reps: int, have=have, score=score, s0=s0) -> float:
                pearson = np.mean([c.moments(s0, config.seed).correlation(_IMP, score, reps) for c in have])
                return spearman_from_pearson(float(pearson))  # Q2 correlates ranks

            def figures(items: int, reps: int, g=g, r_at=r_at) -> tuple[float, float, float]:
                r = r_at(reps)
                half = fisher_z_half_width(r, items * g, ci=ci, variance_factor=_SPEARMAN_FACTOR, groups=g)
                chance = fisher_z_power(
                    r, _nearest(r, floor), items * g, ci=ci, variance_factor=_SPEARMAN_FACTOR, groups=g
                )
                return half, chance, np.nan

            r1 = r_at(1)
            bounds = _q2_boundaries(r1, floor)
            out.append(
                (
                    _Need(
                        "Q2",
                        f"{_IMP}~{score}",
                        f"{_DECIDE}, {power:.0%} power",
                        r1,
                        floor,
                        s0,
                        f"closed form: Fisher z with Spearman's variance {_SPEARMAN_FACTOR}/(n - g - 2) over the "
                        f"model's {g} dimension(s); the correlation attenuated by the implicit item SCs' "
                        "reliability, as Spearman's of a bivariate normal (Kruskal 1958)",
                        (
                            lambda m, r, g=g, r_at=r_at: (
                                _q2_items(r_at(r), _nearest(r_at(r), floor), ci, power, g) <= m * g
                            )
                        )
                        if bounds
                        else None,
                        figures,
                        why="the assumed correlation sits on the decision boundaries",
                        check="correlation",
                        extra={"score": score},
                    ),
                    have,
                )
            )
    return out


def _q5_needs(cells: list[_Cell], config: AnalysisConfig, targets: PlanTargets) -> list[tuple[_Need, list[_Cell]]]:
    """Q5 per model, the verdict the question decides on: the reflection SC pooled over the model's dimensions, its
    item-cluster interval (over every item of them) clear of 0.5."""
    ci, power = config.ci, targets.power
    out = []
    for model in dict.fromkeys(c.model for c in cells):
        have = [c for c in cells if c.model == model and _REF in c.methods]
        if not have:
            continue
        s0 = max(have[0].sessions, 1)
        moments = [c.moments(s0, config.seed) for c in have]
        weights = np.array([len(c.methods[_REF].wordings) for c in have], dtype=float)  # answers per item
        scs = np.array([m.sc(_REF) for m in moments])
        sc = float(weights @ scs / weights.sum())
        g = len(have)

        def figures(
            items: int, reps: int, moments=moments, weights=weights, scs=scs, sc=sc, g=g
        ) -> tuple[float, float, float]:
            spread = np.array([m.item_var(_REF, reps) for m in moments]) + (scs - sc) ** 2
            # the weighted mean's variance over the items, as one item's SD over items * g items
            sd = np.sqrt(g * (weights**2 @ spread) / weights.sum() ** 2)
            n = items * g
            return t_half_width(sd, n, ci=ci), power_to_clear(abs(sc - 0.5), sd, n, ci=ci), _t_margin(sd, n, ci, power)

        need = _Need(
            "Q5",
            "sc_reflection",
            f"{_DECIDE}, {power:.0%} power",
            sc,
            0.5,
            s0,
            f"closed form: noncentral-t power of the item-cluster interval's bound beyond 0.5, items of the model's "
            f"{g} dimension(s) pooled and weighed by their answers, as the pooled SC is (their SCs' spread counted "
            "as between-item variance)" + _SIMULATED,
            (lambda m, r, f=figures: f(m, r)[1] >= power) if abs(sc - 0.5) > 1e-3 else None,
            figures,
            why=f"the assumed reflection SC {sc:.2f} sits on 0.5",
            check=Method.REFLECTION.value,
            simulate=lambda m, r, moments=moments, weights=weights, sc=sc: _sc_simulated(
                [
                    (mo, np.random.default_rng(config.seed + 1 + k), w)
                    for k, (mo, w) in enumerate(zip(moments, weights, strict=True))
                ],
                m,
                r,
                sc,
                ci,
            ),
        )
        out.append((need, have))
    return out


def _q2_boundaries(r: float, floor: float) -> list[float]:
    """The boundaries an interval around ``r`` could clear to decide Q2: above 0 (convergent), below the floor."""
    return [b for b, side in ((0.0, r > 0), (floor, r < floor)) if side and abs(r - b) > 1e-3]


def _nearest(r: float, floor: float) -> float:
    """The boundary needing the fewest items (the decision the assumed correlation reaches first)."""
    return max(_q2_boundaries(r, floor) or [0.0], key=lambda b: abs(np.arctanh(r) - np.arctanh(b)))


def _q2_items(r: float, boundary: float, ci: float, power: float, groups: int) -> float:
    return fisher_z_sample_size(
        float(np.clip(r, -0.99, 0.99)),
        boundary,
        ci=ci,
        power=power,
        variance_factor=_SPEARMAN_FACTOR,
        groups=groups,
    )


# --- the table -----------------------------------------------------------------------------------------------------


def _clause(row: dict[str, object]) -> str:
    """The sentence a report cell's reason ends with: the design that decides it and the answers it adds."""
    if pd.isna(row["items"]):
        return f"no design decides it: {str(row['note']).split('; ')[0]}"
    items, reps, sessions = int(row["items"]), int(row["reps"]), int(row["sessions"])
    deciding = str(row["target"]).startswith(_DECIDE)
    parts = [f"{items:,} items per dimension", f"{reps} repetition{'s' if reps != 1 else ''}"]
    if row.get("_more_sessions"):
        parts.append(f"{sessions} sessions")
    more = int(row["more_answers"])
    if more == 0:
        reach = f"{row['planned_power']:.0%} power to decide it" if deciding else f"a {row['target']}"
        return f"the pilot already covers a design with {reach} at the assumed figure ({', '.join(parts)})"
    what = "would decide" if deciding else f"would reach a {row['target']}"
    return f"{what} with about {', '.join(parts)}: ~{more:,} more answers"


def _row(
    need: _Need,
    cell: _Cell,
    design: tuple[int, int] | None,
    dims: int = 1,
    pooled: bool = False,
    chance: float = np.nan,
) -> dict[str, object]:
    base = dict(
        question=need.question,
        quantity=need.quantity,
        model=cell.model,
        dimension=ALL_DIMENSIONS if pooled else cell.dimension,
        target=need.target,
        assumed=float(need.assumed),
        threshold=float(need.threshold),
        wordings=len(cell.methods[_IMP].wordings),
        sessions=need.sessions,
        basis=need.basis,
        _check=need.check,
        _extra=need.extra,
        _more_sessions=need.sessions > cell.sessions and cell.items > 0,
    )
    notes = [n for n in (need.note, cell.notes.get(_IMP, "")) if n]
    if design is None:
        why = need.why if need.ok is None else f"not reached within {_MAX_SEARCH_ITEMS} items per dimension"
        return {
            **base,
            "items": np.nan,
            "reps": np.nan,
            "answers": np.nan,
            "more_answers": np.nan,
            "planned_half_width": np.nan,
            "planned_power": np.nan,
            "margin": np.nan,
            "note": "; ".join([why, *notes]),
        }
    items, reps = design
    half, closed, margin = need.figures(items, reps)
    chance = closed if np.isnan(chance) else chance
    answers = cell.answers_at(items, need.sessions, reps) * dims
    if cell.pool is not None and items > cell.pool:
        notes.insert(0, f"more items than the {cell.pool} packaged for the dimension: write new stimuli")
    return {
        **base,
        "items": items,
        "reps": reps,
        "answers": answers,
        "more_answers": cell.more_at(items, need.sessions, reps) * dims,
        "planned_half_width": half,
        "planned_power": chance,
        "margin": margin,
        "note": "; ".join(notes),
    }


def _pool(dimension: str) -> int | None:
    from bias_validity.probes.stimuli import DIMENSIONS, load_dimension

    return len(load_dimension(dimension).items) if dimension in DIMENSIONS else None


def plan(
    study_or_assumptions: Study | pd.DataFrame | Assumptions,
    targets: PlanTargets | Mapping[str, object] | None = None,
    *,
    config: AnalysisConfig | None = None,
    check: bool = False,
    check_replications: int = CHECK_REPLICATIONS,
    seconds_per_answer: float | None = None,
    price_per_1k_tokens: float | None = None,
    tokens_per_answer: float | None = None,
) -> pd.DataFrame:
    """The design each question needs to decide, per model x dimension, from a pilot study or stated assumptions.

    Parameters
    ----------
    study_or_assumptions : Study, pandas.DataFrame or Assumptions
        A pilot (:func:`bias_validity.analyses.study.read_study`, a responses table) or an :class:`Assumptions`.
    targets : PlanTargets or mapping, optional
        Half-width of the SC and gap intervals (0.05), power (0.8), ICC interval width, most repetitions, item
        pool (:class:`PlanTargets`; a mapping of its fields).
    config : AnalysisConfig, optional
        The interval level, thresholds (shift limit, ROPE, chance margin, retained-share threshold, correlation
        floor) and seed the questions use: the plan reads the same ones.
    check : bool
        Draw ``check_replications`` studies at each planned design from the planning model and run the questions'
        estimators on them: adds ``achieved_half_width`` (mean half-width of the estimator's interval),
        ``decide_share`` (share of replications whose verdict rule decides) and ``check_replications`` (0 for
        rows it does not run: no design, a figure shown only, or a study of more than :data:`CHECK_MAX_ANSWERS`
        answers).
    check_replications : int
        Replications per row of the check (>= 20).
    seconds_per_answer, price_per_1k_tokens, tokens_per_answer : float, optional
        Add ``hours`` (of the more answers at that rate) and ``cost`` (their tokens at that price; tokens per answer
        default to the pilot's prompt and answer lengths at :data:`CHARS_PER_TOKEN` characters per token).

    Returns
    -------
    pandas.DataFrame
        :data:`PLAN_COLUMNS`, one row per question x quantity x model x dimension (Q2: per model, dimension
        ``all``): ``target`` (``half-width 0.05`` or ``decide, 80% power``), ``assumed`` (the figure the plan
        assumes: the pilot's, model-implied), ``threshold``, the design (``items`` per dimension, ``wordings``,
        ``sessions``, ``reps`` per session; NaN where no design reaches the target, ``note`` says why),
        ``answers`` (of every method of the model x dimension at that design), ``more_answers`` (beyond the
        pilot's), ``planned_half_width``, ``planned_power``, ``margin`` (how far beyond the threshold the truth
        must lie to be decided with that power), ``basis`` (the formula, and whether it is exact or approximate),
        ``note`` and ``would_decide`` (the sentence a report's inconclusive cell ends with). ``attrs``: ``ci``,
        ``targets``, ``thresholds``, ``source``.

    Notes
    -----
    Per model x dimension x method, the pilot's answers give (method of moments, probability scale): the SC; the
    binomial variance of one answer (pooled within item x wording x session cells); the item x wording and item x
    session variances (the interaction mean squares of the two-way layouts, less their binomial part); the
    between-item variance (of the item SCs, less the interaction and binomial parts); each wording's and
    session's shift; the correlation of item effects between methods (covariance over the between-item SDs) and of
    the implicit item effects with the logprob and embedding scores (disattenuated by the implicit item SCs'
    reliability). These become a logit-normal model (location and item SD matched exactly, interactions and
    shifts through the mean slope ``p (1 - p)``), whose moments at any design are taken over 4000 drawn items. The
    item-cluster intervals' widths then follow in closed form: the variance of an item's SC is between-item plus
    binomial over its answers (Kish's design effect, :func:`bias_validity.psychometrics.planning.design_effect`),
    the interval a t interval over the items (:func:`~bias_validity.psychometrics.planning.t_half_width`, expected
    half-width). Deciding: the chance the interval clears the question's threshold
    (:func:`~bias_validity.psychometrics.planning.power_to_clear`, noncentral t;
    :func:`~bias_validity.psychometrics.planning.tost_power` for equivalence; Fisher z for Q2; Fieller's interval's
    expected half-width, :func:`~bias_validity.psychometrics.planning.fieller_half_width`, for Q3). Those powers
    assume normal item values; item SCs spread towards 0 or 1 are skewed, and Q1 (every pair at once) and Q3
    (estimable and clearing) are joint events, so for the deciding rows of Q1, Q3, Q4 and Q5 the closed-form
    design is then checked by simulating the interval over 1000 studies of the planning model's items (binomial
    noise as normal) and items are added until that chance reaches ``power`` (``planned_power`` is the simulated
    one; the ``basis`` says so). The design searched: items per dimension (>= 5, the floor of
    every item-cluster interval) and repetitions (1 to ``max_reps``), wordings as the pilot's, sessions as the
    pilot's (Q1: at least 2); the cheapest in answers, preferring designs within the item pool.

    Examples
    --------
    >>> table = plan(Assumptions(sc={"implicit": 0.7, "explicit": 0.45}, item_sd=0.5, score_corr=None))
    >>> row = table[(table["question"] == "SC")].iloc[0]
    >>> int(row["items"]), int(row["reps"]), bool(row["planned_half_width"] <= 0.05)
    (32, 1, True)
    """
    config = AnalysisConfig() if config is None else config
    if targets is None:
        targets = PlanTargets()
    elif isinstance(targets, Mapping):
        unknown = sorted(set(targets) - set(PlanTargets.__dataclass_fields__))
        if unknown:
            raise ValueError(
                f"targets: unknown field(s) {unknown}; valid: {', '.join(PlanTargets.__dataclass_fields__)}"
            )
        targets = PlanTargets(**targets)
    elif not isinstance(targets, PlanTargets):
        raise ValueError(f"targets must be a PlanTargets or a mapping, got {type(targets).__name__}")
    if isinstance(check_replications, bool) or not isinstance(check_replications, int) or check_replications < 20:
        raise ValueError(f"check_replications must be an integer >= 20, got {check_replications!r}")
    if isinstance(study_or_assumptions, Assumptions):
        given = study_or_assumptions.sc
        if set(given) - set(_SAMPLED) or _IMP not in given:
            raise ValueError(f"assumptions: sc needs {_IMP} and takes {', '.join(_SAMPLED)}; got {', '.join(given)}")
        cells = _assumed_cells(study_or_assumptions, targets.max_items)
        source, study = "stated assumptions", None
    else:
        study = as_study(study_or_assumptions)
        cells = _pilot_cells(study, _pool)
        source = f"pilot: {study.source}"
    rows, truths = [], []
    for cell in cells:
        for need in _needs(cell, config, targets):
            design, chance = _refine(need, None if need.ok is None else _search(need, cell, targets), targets.power)
            rows.append(_row(need, cell, design, chance=chance))
            truths.append(([cell], need))
    for need, have in [*_q2_needs(cells, config, targets), *_q5_needs(cells, config, targets)]:
        merged = replace(have[0], answers=sum(c.answers for c in have))
        design = None if need.ok is None else _search(need, have[0], targets)
        design, chance = _refine(need, design, targets.power)
        row = _row(need, merged, design, dims=len(have), pooled=True, chance=chance)
        if design is not None:
            items, reps = design
            row["answers"] = sum(c.answers_at(items, need.sessions, reps) for c in have)
            row["more_answers"] = sum(c.more_at(items, need.sessions, reps) for c in have)
        rows.append(row)
        truths.append((have, need))
    table = pd.DataFrame(rows, columns=[*PLAN_COLUMNS, "_check", "_extra", "_more_sessions"])
    table["would_decide"] = [_clause(r) for r in table.to_dict("records")]
    if seconds_per_answer is not None or price_per_1k_tokens is not None:
        table = _with_costs(table, study, seconds_per_answer, price_per_1k_tokens, tokens_per_answer)
    if check:
        from_check = [
            _check_row(r, have, need, config, check_replications)
            for r, (have, need) in zip(table.to_dict("records"), truths, strict=True)
        ]
        table = table.assign(**pd.DataFrame(from_check, index=table.index))
    table = table.drop(columns=["_check", "_extra", "_more_sessions"])
    rank = {q: i for i, q in enumerate(("SC", "Q1", "Q2", "Q3", "Q4", "Q5"))}
    table = table.sort_values("question", key=lambda q: q.map(rank), kind="stable")
    for col in ("items", "reps", "answers", "more_answers"):
        table[col] = table[col].astype("Int64")
    table.attrs.update(
        ci=config.ci,
        targets=dict(targets.__dict__),
        thresholds=config.thresholds.to_dict(),
        source=source,
    )
    return table.reset_index(drop=True)


def _with_costs(
    table: pd.DataFrame,
    study: Study | None,
    seconds: float | None,
    price: float | None,
    tokens: float | None,
) -> pd.DataFrame:
    """``hours`` and ``cost`` of each row's more answers."""
    if seconds is not None and not seconds > 0:
        raise ValueError(f"--seconds-per-answer must be > 0, got {seconds!r}")
    if price is not None and not price > 0:
        raise ValueError(f"--price-per-1k-tokens must be > 0, got {price!r}")
    if tokens is not None and not tokens > 0:
        raise ValueError(f"--tokens-per-answer must be > 0, got {tokens!r}")
    more = table["more_answers"].astype(float)
    out = table.copy()
    if seconds is not None:
        out["hours"] = more * seconds / 3600
    if price is not None:
        if tokens is None:
            if study is None:
                raise ValueError("--price-per-1k-tokens needs --tokens-per-answer when planning from assumptions")
            text = study.responses[study.responses["method"].isin(_SAMPLED)]
            chars = text["prompt"].fillna("").str.len() + text["raw_response"].fillna("").str.len()
            if not len(chars) or chars.mean() == 0:
                raise ValueError("--price-per-1k-tokens: the pilot stores no prompts; give --tokens-per-answer")
            tokens = float(chars.mean() / CHARS_PER_TOKEN)
        out["cost"] = more * tokens / 1000 * price
        out.attrs["tokens_per_answer"] = tokens
    return out


def plan_summary(table: pd.DataFrame) -> pd.DataFrame:
    """One row per question x quantity x target: the design that decides in the most demanding cell that any
    design decides, the cells decided, and the answers for every cell at that design.

    Columns ``question``, ``quantity``, ``target``, ``cells`` ("k of n": cells a design reaches), ``items``,
    ``reps``, ``sessions``, ``more_answers`` (summed over the cells, each at its own design).
    """
    out = []
    for (question, quantity, target), rows in table.groupby(["question", "quantity", "target"], sort=False):
        reached = rows[rows["items"].notna()]
        top = reached.sort_values(["items", "reps"]).iloc[-1] if len(reached) else None
        out.append(
            dict(
                question=question,
                quantity=quantity,
                target=target,
                cells=f"{len(reached)} of {len(rows)}",
                items=None if top is None else int(top["items"]),
                reps=None if top is None else int(top["reps"]),
                sessions=None if top is None else int(top["sessions"]),
                more_answers=int(reached["more_answers"].sum()) if len(reached) else None,
            )
        )
    return pd.DataFrame(out)


# --- the simulation check ------------------------------------------------------------------------------------------


def _answers(
    cell: _Cell, probs: dict[str, np.ndarray], method: str, reps: int, rng: np.random.Generator
) -> pd.DataFrame:
    """Answers of one method drawn from its item x wording x session probabilities, ``_ORDERS x reps`` per cell, as
    the rows the questions read (explicit: half of them reversed statements, as the collector balances them)."""
    p = probs[method]
    n, t, s = p.shape
    counts = rng.binomial(reps, np.repeat(p[..., None], _ORDERS, axis=3))  # (items, wordings, sessions, orders)
    item, wording, session, order = np.indices(counts.shape).reshape(4, -1)
    k = counts.reshape(-1)
    each = np.repeat(np.arange(k.size), reps)
    rank = np.tile(np.arange(reps), k.size)
    orders = np.array(IMPLICIT_ORDERS)
    if method == _EXP:
        orders = np.array([*ATTRIBUTE_ORDERS, *(o + REVERSED_SUFFIX for o in ATTRIBUTE_ORDERS)])
    return pd.DataFrame(
        {
            "model": cell.model,
            "dimension": cell.dimension,
            "method": method,
            "item_id": item[each].astype(str),
            "template_id": wording[each].astype(str),
            "session": session[each] + 1,
            "order": orders[order[each]],
            "consistent": (rank < k[each]).astype(float),
        }
    )


def _check_row(
    row: dict[str, object], have: list[_Cell], need: _Need, config: AnalysisConfig, replications: int
) -> dict[str, object]:
    """Run the questions' estimators on studies drawn at the row's design: mean half-width, share that decides."""
    empty = dict(achieved_half_width=np.nan, decide_share=np.nan, check_replications=0)
    if pd.isna(row["items"]) or not need.check or row["answers"] > CHECK_MAX_ANSWERS:
        return empty
    items, reps, sessions = int(row["items"]), int(row["reps"]), int(row["sessions"])
    rng = np.random.default_rng(config.seed)
    th = config.thresholds
    halves, decided = [], []
    for _ in range(replications):
        draws = [_draw_items(c, items, sessions, rng) for c in have]
        probs, cell = draws[0], have[0]
        if need.check == "sc":
            est = sc_interval(_answers(cell, probs, _IMP, reps, rng), config)
            halves.append((est.high - est.low) / 2)
        elif need.check == "gap":
            exp, imp = (_answers(cell, probs, m, reps, rng) for m in (_EXP, _IMP))
            _, low, high, _ = sc_difference(exp, imp, config)
            halves.append((high - low) / 2)
            decided.append(rope_verdict(low, high, th.gap_rope))
        elif need.check == Method.REFLECTION.value:
            rows = pd.concat([_answers(c, d, _REF, reps, rng) for c, d in zip(have, draws, strict=True)])
            est = sc_interval(rows, config)
            halves.append((est.high - est.low) / 2)
            decided.append(interval_verdict(est.low, est.high, 0.5, above_is_supported=False))
        elif need.check == "ratio":
            rows = pd.concat([_answers(cell, probs, m, reps, rng) for m in (_IMP, _ABL)])
            out = ablation_retained_share(
                rows,
                condition="method",
                outcome="consistent",
                cluster="item_id",
                ci=config.ci,
                n_resamples=config.n_resamples,
                seed=int(rng.integers(2**31)),
                threshold=th.retained_share,
                chance_margin=th.chance_margin,
            ).iloc[0]
            if np.isfinite(out["ci_low"]):
                halves.append((out["ci_high"] - out["ci_low"]) / 2)
            decided.append(
                Verdict.SUPPORTED
                if out["verdict"] in (FramingVerdict.ROBUST, FramingVerdict.CONTROLLABLE)
                else Verdict.INCONCLUSIVE
            )
        elif need.check == "shifts":
            rows = _answers(cell, probs, _IMP, reps, rng)
            cells = rows.groupby(["item_id", "template_id", "session", "order"])["consistent"].agg(k="sum", n="size")
            cells = cells.reset_index().assign(session=lambda f: f["session"].astype(str))
            verdicts, widths = [], []
            for forms in ("template_id", "session"):
                if cells[forms].nunique() < 2:
                    continue
                found = form_shifts(cells, forms=forms, clusters="item_id", successes="k", trials="n", ci=config.ci)
                verdicts += [shift_verdict(s.ci_low, s.ci_high, th.shift_limit) for s in found.itertuples()]
                widths += list((found["ci_high"] - found["ci_low"]) / 2)
            halves.append(max(widths))
            decided.append(all_must_hold(verdicts))
        elif need.check == "correlation":
            score = need.extra["score"]
            frames = []
            for c, d in zip(have, draws, strict=True):
                imp = _answers(c, d, _IMP, reps, rng).groupby("item_id")["consistent"].mean()
                frames.append(pd.DataFrame({"dimension": c.dimension, "item": imp.index, _IMP: imp.to_numpy()}))
                frames[-1][score] = d[score][frames[-1]["item"].astype(int).to_numpy()]
            wide = pd.concat(frames)
            wide["unit"] = wide["dimension"] + "/" + wide["item"]
            long = wide.melt(id_vars=["unit", "dimension"], value_vars=[_IMP, score], var_name="method")
            pair = convergent_validity(
                long,
                units="unit",
                methods="method",
                scores="value",
                method="spearman",
                ci=config.ci,
                groups="dimension",
                bootstrap=False,
            ).iloc[0]
            halves.append((pair["ci_high"] - pair["ci_low"]) / 2)
            decided.append(verdict_rule(pair["ci_low"], pair["ci_high"], th.convergent_r))
    share = (
        float(np.mean([v not in (Verdict.INCONCLUSIVE, Verdict.NOT_ESTIMABLE) for v in decided])) if decided else np.nan
    )
    return dict(
        achieved_half_width=float(np.mean(halves)) if halves else np.nan,
        decide_share=share,
        check_replications=replications,
    )
