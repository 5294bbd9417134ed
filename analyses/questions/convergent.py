"""Q2: does the implicit score converge with log-probabilities, embeddings, the latent model and human IATs?"""

from __future__ import annotations

import numpy as np
import pandas as pd

from bias_validity.analyses.questions._common import (
    check_posterior,
    check_responses,
    combine_verdicts,
    count_verdicts,
    figure_row,
    figures_frame,
    fmt,
    ok_rows,
    posterior_rows,
)
from bias_validity.analyses.result import QuestionResult, Verdict
from bias_validity.probes.schema import CHOICE_PREFIX, WEAT_ITEM, Method, Status
from bias_validity.psychometrics.bayes.identification import NOT_IDENTIFIED
from bias_validity.psychometrics.mtmm import MIN_UNITS, mtmm
from bias_validity.psychometrics.reference import DIMENSION_TO_IAT, compare_to_human
from bias_validity.psychometrics.validity import convergent_validity

__all__ = ["CONVERGENT_FLOOR", "item_scores", "convergent", "mtmm_tables"]

#: Cohen (1988): r = 0.3 is a medium correlation; an interval wholly below it cannot support convergence.
CONVERGENT_FLOOR = 0.3
_DETERMINISTIC = (Method.LOGPROB.value, Method.EMBEDDING.value)


def item_scores(responses: pd.DataFrame) -> pd.DataFrame:
    """One score per model x dimension x method x item: implicit SC, mean sentence log-odds, embedding association.

    Parameters
    ----------
    responses : pandas.DataFrame
        The responses table (``bias_validity.probes.schema``).

    Returns
    -------
    pandas.DataFrame
        Columns ``model``, ``dimension``, ``method`` (``implicit``, ``logprob``, ``embedding``), ``item_id``,
        ``score``: the share of consistent ``ok`` implicit answers; the mean ``score`` of the ``ok`` logprob
        sentence rows (``choice:`` templates left out: they score the implicit prompt itself); the ``score`` of
        the embedding ``pair`` rows (the whole-set ``WEAT`` rows left out).

    Examples
    --------
    >>> from bias_validity.analyses.questions.simulate import simulate_responses
    >>> item_scores(simulate_responses(dimensions=["age"], n_items=3, seed=0)).groupby("method").size().to_dict()
    {'embedding': 3, 'implicit': 3, 'logprob': 3}
    """
    check_responses(responses, "item_scores", extra=("score",))
    implicit = ok_rows(responses, Method.IMPLICIT)
    implicit = implicit.assign(score=implicit["consistent"].astype(float))
    other = responses[responses["method"].isin(_DETERMINISTIC) & (responses["status"] == Status.OK.value)]
    other = other[(other["item_id"] != WEAT_ITEM) & ~other["template_id"].astype(str).str.startswith(CHOICE_PREFIX)]
    other = other[other["score"].notna()].assign(score=lambda f: f["score"].astype(float))
    keys = ["model", "dimension", "method", "item_id"]
    return pd.concat([implicit, other])[[*keys, "score"]].groupby(keys, observed=True)["score"].mean().reset_index()


def _verdict(low: float, high: float) -> Verdict:
    if np.isnan(low) or np.isnan(high):
        return Verdict.NOT_ESTIMABLE
    if low > 0:
        return Verdict.SUPPORTED
    return Verdict.NOT_SUPPORTED if high < CONVERGENT_FLOOR else Verdict.INCONCLUSIVE


def _human_rows(responses: pd.DataFrame, scores: pd.DataFrame, ci: float, seed: int) -> list[dict[str, object]]:
    """Rank agreement of each model's per-dimension effects with the human IAT (implicit SC and WEAT d)."""
    effects = scores[scores["method"] == Method.IMPLICIT].groupby(["model", "dimension"], observed=True)["score"].mean()
    sources = [("implicit SC", effects.reset_index())]
    weat = responses[(responses["item_id"] == WEAT_ITEM) & responses["score"].notna()]
    if len(weat):
        sources.append(("WEAT d", weat.assign(score=weat["score"].astype(float))[["model", "dimension", "score"]]))
    rows = []
    for label, frame in sources:
        for model, group in frame.groupby("model", observed=True):
            matched = group[group["dimension"].isin(list(DIMENSION_TO_IAT))]
            measure = f"human_iat_spearman ({label})"
            if len(matched) < 3:
                rows.append(figure_row(model, "all", measure, note=f"{len(matched)} of the 3 human-IAT dimensions "
                                       "(age, disability, race) present; needs all 3"))  # fmt: skip
                continue
            out = compare_to_human(matched, dimension="dimension", effect="score", ci=ci, n_resamples=200, seed=seed)
            r = out[(out["method"] == "spearman") & (out["interval"] == "fisher_z")].iloc[0]
            note = f"n = {int(r['n'])} dimensions: too few for a rank correlation to mean much; p = {r['p_value']:.2f}"
            rows.append(figure_row(model, "all", measure, r["r"], r["ci_low"], r["ci_high"], "Fisher z", r["n"], note))
    return rows


def convergent(
    responses: pd.DataFrame, *, posterior: pd.DataFrame | None = None, ci: float = 0.95, seed: int = 0
) -> QuestionResult:
    """Q2: item-level convergence of implicit SC with logprob and embedding scores, latent correlation, human IAT.

    Parameters
    ----------
    responses : pandas.DataFrame
        The responses table (``bias_validity.probes.schema``).
    posterior : pandas.DataFrame, optional
        The Bayesian fit's derived quantities; its ``latent_correlation`` rows (disattenuated, from the
        correlated item effects) decide the verdict where present and identified (``identified`` column); the
        others are shown with the note "not identified" and their contraction.
    ci : float
        Interval level.
    seed : int
        Bootstrap seed.

    Returns
    -------
    QuestionResult
        ``figures`` columns ``model``, ``dimension`` (``all``: items pooled over dimensions), ``measure``
        (``implicit~logprob`` and the other method pairs: Spearman r over items; ``latent implicit~logprob``:
        posterior HDI; ``human_iat_spearman (implicit SC)`` / ``(WEAT d)``: rank agreement with human IAT effect
        sizes), ``estimate``, ``ci_low``, ``ci_high``, ``interval``, ``n`` (items or dimensions), ``note``.
        ``attrs``: ``ci``, ``correlation``, ``seed``.

    Notes
    -----
    Per model, the :func:`item_scores` are correlated across items (pooled over dimensions: item ids are unique)
    by :func:`bias_validity.psychometrics.validity.convergent_validity` (Spearman, Fisher-z interval with the Fieller,
    Hartley & Pearson variance). Verdict per correlation with ``implicit`` (Campbell & Fiske 1959 [1]_: convergent
    correlations must differ from zero): interval above 0 -> SUPPORTED; wholly below 0.3 (a medium correlation,
    Cohen 1988 [2]_) -> NOT_SUPPORTED; else INCONCLUSIVE. The posterior's latent correlations replace the
    classical ones in the verdict when given. Human IAT figures (Charlesworth & Banaji 2019, via
    :func:`bias_validity.psychometrics.reference.compare_to_human`) overlap only age, disability and race: n = 3, shown
    with that caveat, never part of the verdict.

    References
    ----------
    .. [1] Campbell, D. T., & Fiske, D. W. (1959). Convergent and discriminant validation by the
       multitrait-multimethod matrix. Psychological Bulletin 56, 81-105.
    .. [2] Cohen, J. (1988). Statistical Power Analysis for the Behavioral Sciences (2nd ed.). Erlbaum.

    Examples
    --------
    >>> from bias_validity.analyses.questions.simulate import simulate_responses
    >>> convergent(simulate_responses(item_sd=2.0, reps=2, seed=0)).verdict.value
    'supported'
    >>> convergent(simulate_responses(n_items=40, item_sd=2.0, shared_item_effects=False, seed=0)).verdict.value
    'not supported'
    """
    check_responses(responses, "convergent", extra=("score",))
    posterior = check_posterior(posterior, "convergent")
    scores = item_scores(responses)
    rows, verdicts = [], []
    latent = posterior_rows(posterior, "latent_correlation")
    deciding = latent[latent["identified"].astype(bool)] if "identified" in latent else latent
    for model, group in scores.groupby("model", observed=True):
        if group["method"].nunique() < 2 or Method.IMPLICIT not in set(group["method"]):
            continue
        pairs = convergent_validity(group, units="item_id", methods="method", scores="score", method="spearman",
                                    ci=ci, n_resamples=200, seed=seed)  # fmt: skip
        for r in pairs[pairs["interval"] == "fisher_z"].itertuples():
            measure = f"{r.x}~{r.y}"
            rows.append(figure_row(model, "all", measure, r.r, r.ci_low, r.ci_high, "Fisher z", r.n))
            if not len(deciding) and Method.IMPLICIT in (r.x, r.y):
                verdicts.append(_verdict(r.ci_low, r.ci_high))
    for r in posterior_rows(posterior, "latent_correlation").itertuples():
        shown_only = not getattr(r, "identified", True)  # mostly prior: shown with its label, never a verdict
        note = f"{NOT_IDENTIFIED} (contraction {fmt(r.contraction)})" if shown_only else ""
        rows.append(figure_row(r.model, "all" if pd.isna(r.dimension) else r.dimension, f"latent {r.method}",
                               r.mean, r.hdi_low, r.hdi_high, "HDI", note=note))  # fmt: skip
        if not shown_only:
            verdicts.append(_verdict(r.hdi_low, r.hdi_high))
    rows += _human_rows(responses, scores, ci, seed)
    frame = figures_frame(rows, ci=ci, correlation="spearman", seed=seed)
    if not verdicts:
        return QuestionResult.answer("Q2", Verdict.NOT_ESTIMABLE,
                              "No model has implicit answers next to logprob or embedding scores.",
                              "Convergent validity needs a model measured by implicit and a deterministic method.",
                              frame)  # fmt: skip
    decided = frame[frame["measure"].str.contains(Method.IMPLICIT.value) & ~frame["measure"].str.startswith("human")
                    & ~frame["note"].str.startswith(NOT_IDENTIFIED)]
    best = decided.iloc[decided["estimate"].fillna(-np.inf).argmax()]
    summary = (
        f"Convergence with the implicit SC reaches r = {fmt(best['estimate'])} [{fmt(best['ci_low'])}, "
        f"{fmt(best['ci_high'])}] ({best['measure']}, {best['model']}); {count_verdicts(verdicts)} over "
        f"{len(verdicts)} correlation(s) (needs > 0; below {CONVERGENT_FLOOR} = not convergent)."
    )
    evidence = (
        f"Item-level scores of {scores['item_id'].nunique()} items ({len(scores)} model x method x item scores); "
        "Spearman correlations with Fisher-z intervals"
        + (
            "; latent correlations from the hierarchical model decide (those it does not identify are shown only)"
            if len(deciding)
            else ""
        )  # fmt: skip
        + "; human IAT rank agreement on age, disability and race only (n = 3)."
    )
    return QuestionResult.answer("Q2", combine_verdicts(verdicts), summary, evidence, frame)


def mtmm_tables(responses: pd.DataFrame, *, ci: float = 0.95) -> dict[str, pd.DataFrame]:
    """The multitrait-multimethod matrix (models x dimensions x methods) and its Campbell-Fiske checks.

    Parameters
    ----------
    responses : pandas.DataFrame
        The responses table (``bias_validity.probes.schema``).
    ci : float
        Level of the Fisher-z intervals.

    Returns
    -------
    dict
        Empty when fewer than :data:`bias_validity.psychometrics.mtmm.MIN_UNITS` (5) models carry two or more methods on
        two or more dimensions; else ``"mtmm"``: the square correlation matrix, rows and columns labelled
        ``dimension/method``; ``"mtmm_checks"``: the four Campbell-Fiske rows (``criterion``, ``description``,
        ``n_comparisons``, ``n_satisfied``, ``share``, ``passed``, ``reason``).

    Notes
    -----
    Units = models, traits = dimensions, methods = implicit, logprob, embedding; each cell's score is the mean
    of the model's :func:`item_scores` on that dimension. Methods and dimensions not observed for every model
    are left out. :func:`bias_validity.psychometrics.mtmm.mtmm` builds the matrix and the checks (Campbell & Fiske
    1959).

    Examples
    --------
    >>> from bias_validity.analyses.questions.simulate import simulate_responses
    >>> mtmm_tables(simulate_responses(seed=0))
    {}
    """
    check_responses(responses, "mtmm_tables", extra=("score",))
    cells = item_scores(responses).groupby(["model", "dimension", "method"], observed=True)["score"].mean()
    wide = cells.unstack(["dimension", "method"]).dropna(axis=1)
    dims = wide.columns.get_level_values("dimension")
    methods = wide.columns.get_level_values("method")
    if len(wide) < MIN_UNITS or len(set(dims)) < 2 or len(set(methods)) < 2:
        return {}
    long = wide.stack(["dimension", "method"], future_stack=True).rename("score").reset_index()
    result = mtmm(long, units="model", traits="dimension", methods="method", scores="score", ci=ci)
    matrix = result.matrix.copy()
    labels = [f"{t}/{m}" for t, m in matrix.index]
    matrix.index, matrix.columns = labels, labels
    return {"mtmm": matrix, "mtmm_checks": result.checks}
