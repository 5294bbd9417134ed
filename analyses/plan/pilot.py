"""The planning model's parameters: from a pilot's answers by the method of moments on the probability scale, then
mapped to the logit scale (``_pilot_cells``), or from stated :class:`~bias_validity.psychometrics.planning.Assumptions`
(``_assumed_cells``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np
import pandas as pd
from scipy import optimize, stats
from scipy.special import expit, logit

from bias_validity.analyses.plan.model import _EMB, _EXP, _IMP, _LOG, _ORDERS, _SAMPLED, _Cell, _Method
from bias_validity.analyses.study import Study, item_keys
from bias_validity.probes.schema import WEAT_ITEM
from bias_validity.psychometrics.planning import Assumptions


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
