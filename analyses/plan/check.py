"""The simulation check: studies drawn at a row's planned design from the planning model, answers as the questions
read them (``_answers``), run through the questions' own estimators and verdict rules (``_check_row``): the mean
achieved half-width and the share of replications that decide.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from bias_validity.analyses.config import AnalysisConfig
from bias_validity.analyses.plan.model import _ABL, _EXP, _IMP, _ORDERS, _REF, _Cell, _draw_items
from bias_validity.analyses.plan.search import _Need
from bias_validity.analyses.questions._common import all_must_hold, interval_verdict
from bias_validity.analyses.questions.convergent import verdict_rule
from bias_validity.analyses.questions.gap import rope_verdict
from bias_validity.analyses.questions.reliability import shift_verdict
from bias_validity.analyses.result import Verdict
from bias_validity.analyses.study import sc_difference, sc_interval
from bias_validity.probes.schema import ATTRIBUTE_ORDERS, IMPLICIT_ORDERS, REVERSED_SUFFIX, Method
from bias_validity.psychometrics.forms import form_shifts
from bias_validity.psychometrics.framing import FramingVerdict, ablation_retained_share
from bias_validity.psychometrics.validity import convergent_validity

#: Rows whose planned study holds more answers than this are not simulated by the check (``check_replications``
#: 0): a study of that size takes minutes per replication, and its figures rest on the same closed forms.
CHECK_MAX_ANSWERS = 100_000


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
