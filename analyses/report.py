"""Assemble the validity report: the six questions, the SC table, status counts, examples and provenance."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pandas as pd

from bias_validity import package_versions
from bias_validity.analyses.questions import convergent, framing, gap, mtmm_tables, reflection, reliability, scaling
from bias_validity.analyses.questions._common import check_responses
from bias_validity.analyses.result import QUESTIONS, QuestionResult, Thresholds, ValidityReport, Verdict
from bias_validity.analyses.summary import acquiescence_table, sc_table, status_counts
from bias_validity.probes.schema import Status
from bias_validity.psychometrics.bayes.ppc import share_outside

__all__ = ["EXAMPLES_PER_STATUS", "build_report"]

#: Refusals and unparseable answers shown per model x method in the report's examples.
EXAMPLES_PER_STATUS = 3
_EXAMPLE_COLUMNS = ["model", "method", "status", "prompt", "raw_response"]


def _fit_parts(fit: object) -> tuple[pd.DataFrame | None, dict[str, object] | None]:
    if fit is None:
        return None, None
    posterior, diagnostics = getattr(fit, "quantities", None), getattr(fit, "diagnostics", None)
    if not isinstance(posterior, pd.DataFrame) or not isinstance(diagnostics, dict):
        raise ValueError("build_report: fit must carry 'quantities' (a DataFrame) and 'diagnostics' (a dict)")
    return posterior, diagnostics


def _ask(question: str, ask: Callable[[], QuestionResult]) -> QuestionResult:
    """Run one question; data it cannot use gives NOT_ESTIMABLE with the reason instead of ending the report."""
    try:
        return ask()
    except ValueError as exc:
        return QuestionResult.answer(
            question,
            Verdict.NOT_ESTIMABLE,
            f"Not estimable on these data: {exc}",
            f"The analysis stopped on the data with: {exc}",
        )


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


def _provenance(responses: pd.DataFrame, runs: Sequence[dict[str, object]], skipped: pd.DataFrame | None) -> dict:
    design = {
        "answers": len(responses),
        "dimensions": sorted(responses["dimension"].astype(str).unique()),
        "methods": sorted(responses["method"].astype(str).unique()),
        "templates": int(responses["template_id"].nunique()),
        "items": int(responses["item_id"].nunique()),
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
    responses: pd.DataFrame,
    *,
    fit: object | None = None,
    models_meta: pd.DataFrame | None = None,
    skipped: pd.DataFrame | None = None,
    runs: Sequence[dict[str, object]] | None = None,
    thresholds: Thresholds | None = None,
    seed: int = 0,
) -> ValidityReport:
    """Answer the six reviewer questions on a responses table and gather everything the report shows.

    Parameters
    ----------
    responses : pandas.DataFrame
        The responses table (``bias_validity.probes.schema``), e.g. ``bias_validity.probes.store.read_responses(path)``.
    fit : object, optional
        The Bayesian fit (``bias_validity.analyses.fit``): its ``quantities`` (derived quantities: ``quantity``,
        ``model``, ``dimension``, ``method``, ``mean``, ``hdi_low``, ``hdi_high``, ``p_direction``) and ``diagnostics``
        (``max_rhat``, ``min_ess_bulk``, ``min_ess_tail``, ``divergences``, ``passed``). Without it the report
        rests on the classical intervals.
    models_meta : pandas.DataFrame, optional
        One row per model (``model``, ``family``, ``parameters``, ``training_tokens``, ``aligned``) for Q6.
    skipped : pandas.DataFrame, optional
        Methods skipped per model (``model``, ``method``, ``reason``), from ``ResponseStore.skipped()``.
    runs : sequence of dict, optional
        The store's run specs (``ResponseStore.runs()``): models, seeds, git commit, package versions.
    thresholds : Thresholds, optional
        Verdict thresholds (ICC, convergent r, gap ROPE, retained share, chance margin); defaults and sources in
        :class:`bias_validity.psychometrics.estimands.Thresholds`. The report's provenance records them.
    seed : int
        Seed of the bootstraps (Q2, Q3, Q4).

    Returns
    -------
    ValidityReport
        ``questions`` Q1-Q6 in order; ``sc_table`` (:func:`bias_validity.analyses.summary.sc_table`); ``status_counts``
        (``model``, ``method``, ``status``, ``n``); ``posterior`` and ``diagnostics`` from ``fit``;
        ``provenance`` (``models``, ``design``, ``seeds``, ``runs``, package versions at collection and analysis,
        ``skipped methods``); ``extra_tables`` (``mtmm`` and ``mtmm_checks`` when at least 5 models allow it,
        ``skipped`` when methods were skipped; ``ppc`` and ``ppc_share_outside`` when the fit carries a posterior
        predictive check); ``examples`` (``model``, ``method``, ``status``, ``prompt``,
        ``raw_response``: refusals and unparseable answers, and the first answer of each model x method, text
        kept as is for the renderer to escape).

    Notes
    -----
    Each question is computed by its module in :mod:`bias_validity.analyses.questions`; a question that cannot use the
    data (e.g. a design too small for an interval) is reported as NOT_ESTIMABLE with the reason, so one unusable
    part never hides the rest of the report.

    Examples
    --------
    >>> from bias_validity.analyses.questions import simulate_responses
    >>> rep = build_report(simulate_responses(seed=0))
    >>> [(q.question, q.verdict.value) for q in rep.questions][:3]
    [('Q1', 'not supported'), ('Q2', 'supported'), ('Q3', 'inconclusive')]
    """
    check_responses(responses, "build_report", extra=("score",))
    if responses.empty:
        raise ValueError("build_report: the responses table is empty; collect or import answers first")
    posterior, diagnostics = _fit_parts(fit)
    limits = thresholds or Thresholds()
    asks = (
        lambda: reliability(responses, icc_threshold=limits.icc, shift_limit=limits.shift_limit),
        lambda: convergent(responses, posterior=posterior, thresholds=limits, seed=seed),
        lambda: framing(responses, posterior=posterior, thresholds=limits, seed=seed),
        lambda: gap(responses, posterior=posterior, thresholds=limits, seed=seed),
        lambda: reflection(responses, posterior=posterior),
        lambda: scaling(responses, models_meta=models_meta, posterior=posterior),
    )
    questions = [_ask(question, ask) for question, ask in zip(QUESTIONS, asks, strict=True)]
    extra = mtmm_tables(responses)
    balance = acquiescence_table(responses)
    if len(balance):
        extra["acquiescence"] = balance
    ppc = getattr(fit, "ppc", None)
    if isinstance(ppc, pd.DataFrame) and len(ppc):
        extra["ppc"] = ppc.reset_index(drop=True)
        extra["ppc_share_outside"] = share_outside(ppc).reset_index()
    if skipped is not None and len(skipped):
        extra["skipped"] = skipped.reset_index(drop=True)
    return ValidityReport(
        questions=questions,
        sc_table=sc_table(responses),
        status_counts=status_counts(responses),
        posterior=posterior,
        diagnostics=diagnostics,
        provenance={**_provenance(responses, list(runs or []), skipped), "thresholds": limits.to_dict()},
        extra_tables=extra,
        examples=_examples(responses),
    )
