"""Assemble the validity report: the six questions, the SC table, status counts, examples and provenance."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import pandas as pd

from bias_validity import package_versions
from bias_validity.analyses.config import AnalysisConfig
from bias_validity.analyses.fit import check_fit_level
from bias_validity.analyses.plan import plan, plan_summary
from bias_validity.analyses.questions import mtmm_tables
from bias_validity.analyses.registry import Question, registered_questions
from bias_validity.analyses.result import QuestionResult, ValidityReport, Verdict
from bias_validity.analyses.study import Study, as_study, item_keys
from bias_validity.analyses.trust import mark_trust
from bias_validity.probes.schema import Status
from bias_validity.psychometrics.bayes.ppc import share_outside
from bias_validity.psychometrics.errors import NotEstimable

if TYPE_CHECKING:
    from bias_validity.psychometrics.bayes import BayesFit

__all__ = ["EXAMPLES_PER_STATUS", "build_report"]

#: Refusals and unparseable answers shown per model x method in the report's examples.
EXAMPLES_PER_STATUS = 3
_EXAMPLE_COLUMNS = ["model", "method", "status", "prompt", "raw_response"]


def _fit_parts(fit: BayesFit | None) -> tuple[pd.DataFrame | None, dict[str, object] | None]:
    if fit is None:
        return None, None
    posterior, diagnostics = getattr(fit, "quantities", None), getattr(fit, "diagnostics", None)
    if not isinstance(posterior, pd.DataFrame) or not isinstance(diagnostics, dict):
        raise ValueError("build_report: fit must carry 'quantities' (a DataFrame) and 'diagnostics' (a dict)")
    return posterior, diagnostics


def _ask(question: Question, study: Study, posterior: pd.DataFrame | None, config: AnalysisConfig) -> QuestionResult:
    """Run one registered question; a data condition it names (:class:`NotEstimable`) becomes a not-estimable
    answer with that reason, so one unusable part never hides the rest. Any other exception is a bug and surfaces."""
    try:
        result = question.ask(study, posterior, config)
    except NotEstimable as exc:
        return QuestionResult.answer(
            question.number,
            Verdict.NOT_ESTIMABLE,
            f"Not estimable: {exc}.",
            f"{question.title} needs what these data lack: {exc}.",
        )
    if result.question != question.number:
        raise ValueError(f"question {question.number} answered as {result.question}")
    return result


#: The verdicts whose reasons end with what would decide them (:func:`_with_plan`).
_UNDECIDED = (Verdict.INCONCLUSIVE.value, Verdict.NOT_ESTIMABLE.value)


def _with_plan(result: QuestionResult, planned: pd.DataFrame) -> QuestionResult:
    """The question's inconclusive and not-estimable cells, their reasons ending with what would decide them: the
    plan's deciding row of that question and cell that needs the most items (:func:`bias_validity.analyses.plan.plan`,
    its ``would_decide``)."""
    rows = planned[(planned["question"] == result.question) & planned["target"].str.startswith("decide")]
    if rows.empty or result.verdicts.empty:
        return result
    order = rows.assign(_items=rows["items"].astype("Float64").fillna(float("inf"))).sort_values("_items")
    clause = order.groupby(["model", "dimension"], sort=False)["would_decide"].last()
    table = result.verdicts.copy()
    for i, row in table.iterrows():
        key = (row["model"], row["dimension"])
        if row["verdict"] in _UNDECIDED and key in clause.index:
            table.at[i, "reason"] = f"{row['reason']}; {clause[key]}"
    return replace(result, verdicts=table)


def _examples(responses: pd.DataFrame) -> pd.DataFrame:
    """Refusals and unparseable answers (a few per model x method) and the first answer of each model x method."""
    cols = [c for c in _EXAMPLE_COLUMNS if c in responses.columns]
    failed = responses[responses["status"].isin([Status.REFUSAL.value, Status.UNPARSEABLE.value])]
    picks = [
        failed.groupby(["model", "method", "status"], observed=True).head(EXAMPLES_PER_STATUS),
        responses.groupby(["model", "method"], observed=True).head(1),
    ]
    out = pd.concat(picks)
    return out[~out.index.duplicated()][cols].reset_index(drop=True)


def _provenance(study: Study) -> dict:
    responses, runs, skipped = study.responses, study.runs, study.skipped
    design = {
        "answers": len(responses),
        "dimensions": sorted(responses["dimension"].astype(str).unique()),
        "methods": sorted(responses["method"].astype(str).unique()),
        "templates": int(responses["template_id"].nunique()),
        "items": int(item_keys(responses).nunique()),
        "sessions": sorted(int(s) for s in responses["session"].dropna().unique()),
    }
    out: dict[str, object] = {"models": sorted(responses["model"].astype(str).unique()), "design": design}
    out["seeds"] = sorted({r["seed"] for r in runs if "seed" in r}) or "not recorded"
    keys = ("model", "started_at", "git_commit", "temperature", "imported_from")
    collected = [{k: r.get(k) for k in keys if k in r} for r in runs]
    out["runs"] = collected or "not recorded"
    recorded = [r["packages"] for r in runs if isinstance(r.get("packages"), dict)]
    if recorded:
        out["packages at collection"] = recorded[-1]
    out["packages at analysis"] = package_versions()
    if skipped is not None and len(skipped):
        out["skipped methods"] = [f"{r.model} {r.method}: {r.reason}" for r in skipped.itertuples()]
    return out


def build_report(
    study: Study | pd.DataFrame, fit: BayesFit | None = None, config: AnalysisConfig | None = None
) -> ValidityReport:
    """Answer every registered reviewer question on a study and gather everything the report shows.

    Parameters
    ----------
    study : Study or pandas.DataFrame
        The study (:func:`bias_validity.analyses.study.read_study`, :func:`~bias_validity.analyses.study.as_study`)
        or its responses table. Its models file (``models_meta``, for Q6), skipped methods and run specs travel
        with it.
    fit : BayesFit, optional
        The Bayesian fit (:func:`bias_validity.analyses.fit.fit_study`): its ``quantities`` (derived quantities:
        ``quantity``, ``model``, ``dimension``, ``method``, ``mean``, ``hdi_low``, ``hdi_high``, ``p_direction``),
        ``diagnostics`` (``max_rhat``, ``min_ess_bulk``, ``min_ess_tail``, ``divergences``, ``passed``) and ``ppc``.
        Without it the report rests on the classical intervals. Its HDIs must be intervals at ``config.ci``
        (:func:`bias_validity.analyses.fit.check_fit_level`; ValueError otherwise). Each derived quantity decides
        only where the fit passed its gate, the quantity is identified and its methods' predictive checks fit
        (:func:`bias_validity.analyses.trust.mark_trust`); elsewhere the classical interval decides and the cell's
        reason says why.
    config : AnalysisConfig, optional
        Interval level (of the classical intervals and the HDIs), resamples, seed and verdict thresholds
        (:class:`bias_validity.analyses.config.AnalysisConfig`); every question and table reads them, and the
        report's provenance records them.

    Returns
    -------
    ValidityReport
        ``questions`` in the registry's order (Q1-Q6, :func:`bias_validity.analyses.registry.registered_questions`);
        ``sc_table`` (:func:`bias_validity.analyses.summary.sc_table`); ``status_counts`` (``model``, ``method``,
        ``status``, ``n``); ``posterior`` and ``diagnostics`` from ``fit``; ``provenance`` (``models``, ``design``,
        ``seeds``, ``runs``, package versions at collection and analysis, ``skipped methods``, ``analysis``: the
        settings of ``config``, ``thresholds``); ``extra_tables`` (``mtmm`` and ``mtmm_checks`` when at least 5
        models allow it, ``acquiescence`` where Likert methods were asked, ``skipped`` when methods were skipped;
        ``ppc`` and ``ppc_share_outside`` when the fit carries a posterior predictive check; ``plan`` and
        ``plan_summary``: the design each question needs to decide, :func:`bias_validity.analyses.plan.plan` and
        :func:`~bias_validity.analyses.plan.plan_summary`, where the study has planable cells); ``examples``
        (``model``, ``method``, ``status``, ``prompt``, ``raw_response``: refusals and unparseable answers, and the
        first answer of each model x method, text kept as is for the renderer to escape).

    Notes
    -----
    Each question is one registered function ``(study, posterior, config) -> QuestionResult`` in
    :mod:`bias_validity.analyses.questions`. A question that cannot use the data raises
    :class:`~bias_validity.psychometrics.errors.NotEstimable` with the reason, reported as NOT_ESTIMABLE, so one
    unusable part never hides the rest of the report; any other exception is a bug and is raised. Every
    inconclusive or not-estimable cell of Q1-Q5 ends its reason with what would decide it: the ``would_decide``
    sentence of the plan's deciding row for that question and cell (the one needing the most items).

    Examples
    --------
    >>> from bias_validity.simulate import simulate_responses
    >>> rep = build_report(simulate_responses(seed=0))
    >>> [(q.question, q.verdict.value) for q in rep.questions][:3]
    [('Q1', 'inconclusive'), ('Q2', 'supported'), ('Q3', 'inconclusive')]
    """
    study = as_study(study)
    config = AnalysisConfig() if config is None else config
    if study.responses.empty:
        raise ValueError(f"build_report: {study.source} holds no answers; collect or import answers first")
    posterior, diagnostics = _fit_parts(fit)
    if fit is not None:
        check_fit_level(fit, config.ci)
        unit_effects = bool(getattr(getattr(fit, "config", None), "unit_effects", True))
        posterior = mark_trust(
            posterior, diagnostics, getattr(fit, "ppc", None), config.thresholds, unit_effects=unit_effects
        )
    questions = [_ask(question, study, posterior, config) for question in registered_questions()]
    planned = plan(study, config=config)
    questions = [_with_plan(q, planned) for q in questions]
    extra = mtmm_tables(study, config)
    if len(planned):
        extra["plan"], extra["plan_summary"] = planned, plan_summary(planned)
    balance = study.acquiescence(config)
    if len(balance):
        extra["acquiescence"] = balance
    ppc = getattr(fit, "ppc", None)
    if isinstance(ppc, pd.DataFrame) and len(ppc):
        extra["ppc"] = ppc.reset_index(drop=True)
        extra["ppc_share_outside"] = share_outside(ppc).reset_index()
    if len(study.skipped):
        extra["skipped"] = study.skipped.reset_index(drop=True)
    settings = {k: v for k, v in config.to_dict().items() if k != "thresholds"}
    return ValidityReport(
        questions=questions,
        sc_table=study.sc_table(config),
        status_counts=study.status_counts,
        posterior=posterior,
        diagnostics=diagnostics,
        provenance={**_provenance(study), "analysis": settings, "thresholds": config.thresholds.to_dict()},
        extra_tables=extra,
        examples=_examples(study.responses),
    )
