"""The plan's table: :func:`plan` runs the search for every question and cell of a pilot or of stated assumptions
and writes one row each (the design, its figures, the sentence a report's inconclusive cell ends with, and on
request hours, cost and the simulation check's columns); :func:`plan_summary` keeps each question's most demanding
decided design.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

import numpy as np
import pandas as pd

from bias_validity.analyses.config import AnalysisConfig
from bias_validity.analyses.plan.check import _check_row
from bias_validity.analyses.plan.model import _IMP, _SAMPLED, _Cell
from bias_validity.analyses.plan.needs import _DECIDE, _needs, _q2_needs, _q5_needs, _refine
from bias_validity.analyses.plan.pilot import _assumed_cells, _pilot_cells
from bias_validity.analyses.plan.search import _MAX_SEARCH_ITEMS, _Need, _search
from bias_validity.analyses.result import ALL_DIMENSIONS
from bias_validity.analyses.study import Study, as_study
from bias_validity.psychometrics.planning import CHECK_REPLICATIONS, Assumptions, PlanTargets

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
#: Characters per token of English text, for a token estimate from the pilot's prompts and answers (a common rule
#: of thumb for BPE tokenisers, e.g. OpenAI's "about 4 characters per token").
CHARS_PER_TOKEN = 4.0


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
