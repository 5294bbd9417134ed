"""Q2: does the implicit score converge with log-probabilities, embeddings, the latent model and human IATs?"""

from __future__ import annotations

import numpy as np
import pandas as pd

from bias_validity.analyses.config import AnalysisConfig
from bias_validity.analyses.questions._common import (
    combine_verdicts,
    figure_row,
    figures_frame,
    posterior_rows,
    prepare,
)
from bias_validity.analyses.registry import register_question
from bias_validity.analyses.result import (
    ALL_DIMENSIONS,
    ALL_MODELS,
    QuestionResult,
    Verdict,
    describe_verdicts,
    figure_text,
    verdict_table,
)
from bias_validity.analyses.study import Study, as_study, item_keys
from bias_validity.probes.schema import Method
from bias_validity.psychometrics.bayes.identification import NOT_IDENTIFIED
from bias_validity.psychometrics.estimands import Quantity
from bias_validity.psychometrics.interval_kind import IntervalKind
from bias_validity.psychometrics.mtmm import MIN_UNITS, mtmm
from bias_validity.psychometrics.reference import DIMENSION_TO_IAT, compare_to_human
from bias_validity.psychometrics.validity import convergent_validity

_DECIDES = "decides"
_SHOWN = "shown, not counted"
#: Column of the units correlated over: the item as dimension/item_id (an id asked under two dimensions is two items)
_UNIT = "_item"

__all__ = [
    "DECIDING_PAIRS",
    "CONVERGENT",
    "NOT_CONVERGENT",
    "RULE",
    "item_scores",
    "verdict_rule",
    "convergent",
    "mtmm_tables",
]

#: Findings of a model's deciding correlations: wholly below the convergent floor (checked first), or above zero.
CONVERGENT = "convergent"
NOT_CONVERGENT = "not convergent"

#: The pairs whose correlation decides Q2: the implicit measure against the measures that need no deliberate
#: choice. Other pairs (e.g. ablated~explicit) are shown, never counted.
DECIDING_PAIRS: frozenset[frozenset[str]] = frozenset(
    frozenset((Method.IMPLICIT.value, m)) for m in (Method.LOGPROB.value, Method.EMBEDDING.value)
)


def item_scores(study: Study | pd.DataFrame) -> pd.DataFrame:
    """One score per model x dimension x method x item: implicit SC, mean sentence log-odds, embedding association.

    Parameters
    ----------
    study : Study or pandas.DataFrame
        The study or its responses table (``bias_validity.probes.schema``).

    Returns
    -------
    pandas.DataFrame
        The study's ``item_scores`` view (:attr:`bias_validity.analyses.study.Study.item_scores`): columns
        ``model``, ``dimension``, ``method`` (``implicit``, ``logprob``, ``embedding``), ``item_id``, ``score``: the
        share of consistent ``ok`` implicit answers; the mean ``score`` of the ``ok`` logprob sentence rows
        (``choice:`` templates left out: they score the implicit prompt itself); the ``score`` of the embedding
        ``pair`` rows (the whole-set ``WEAT`` rows left out).

    Examples
    --------
    >>> from bias_validity.simulate import simulate_responses
    >>> item_scores(simulate_responses(dimensions=["age"], n_items=3, seed=0)).groupby("method").size().to_dict()
    {'embedding': 3, 'implicit': 3, 'logprob': 3}
    """
    return as_study(study).item_scores


#: The rule, as the verdicts' reasons and the summary word it (``{floor}``: ``thresholds.convergent_r``).
RULE = "interval wholly below {floor:g} = not convergent, else interval above 0 = convergent, else inconclusive"


def verdict_rule(low: float, high: float, floor: float) -> Verdict:
    """The Q2 verdict of one correlation's interval [low, high] against the convergent floor.

    Checked in this order: an interval wholly below ``floor`` (``high < floor``) -> NOT_SUPPORTED (not
    convergent), even when it also lies above 0: a correlation shown to be below a medium one (Cohen 1988) is too
    weak to call two measures of one construct convergent; else an interval wholly above 0 (``low > 0``) ->
    SUPPORTED (convergent: the correlation differs from zero, Campbell & Fiske 1959, and may reach ``floor``);
    else INCONCLUSIVE; a NaN bound -> NOT_ESTIMABLE.

    Examples
    --------
    >>> [verdict_rule(lo, hi, 0.3).value for lo, hi in [(0.05, 0.20), (0.10, 0.50), (-0.10, 0.50), (-0.2, 0.1)]]
    ['not supported', 'supported', 'inconclusive', 'not supported']
    """
    if np.isnan(low) or np.isnan(high):
        return Verdict.NOT_ESTIMABLE
    if high < floor:
        return Verdict.NOT_SUPPORTED
    if low > 0:
        return Verdict.SUPPORTED
    return Verdict.INCONCLUSIVE


def _decides(pair: str) -> bool:
    return frozenset(pair.split("~")) in DECIDING_PAIRS


def _model_verdict(model: str, dim: str, decided: list[tuple[Verdict, dict[str, object]]], floor: float) -> dict:
    """One model's (x dimension's) verdict from its deciding correlations: they must agree, else inconclusive; the
    deciding figure is the highest correlation whose verdict is the model's."""
    verdict = combine_verdicts(v for v, _ in decided)
    picked = [r for v, r in decided if v is verdict] or [r for _, r in decided]
    best = max(picked, key=lambda r: -np.inf if np.isnan(r["estimate"]) else r["estimate"])
    clauses = [
        f"{r['measure']} r = {figure_text(r['estimate'], r['ci_low'], r['ci_high'], missing='not estimable')}"
        f" ({r['interval']}, {r.get('basis') or 'n = ' + str(r['n'])})"
        for _, r in decided
    ]
    rule = RULE.format(floor=floor)
    finding = {Verdict.SUPPORTED: CONVERGENT, Verdict.NOT_SUPPORTED: NOT_CONVERGENT}.get(verdict, verdict.value)
    return dict(
        model=model,
        dimension=dim,
        verdict=verdict,
        finding=finding,
        measure=best["measure"],
        estimate=best["estimate"],
        ci_low=best["ci_low"],
        ci_high=best["ci_high"],
        reason=f"{'; '.join(clauses)} ({rule})",
    )


def _not_estimable(model: str, methods: set[str]) -> dict[str, object]:
    have = ", ".join(sorted(methods)) or "no scored method"
    return dict(
        model=model,
        dimension=ALL_DIMENSIONS,
        verdict=Verdict.NOT_ESTIMABLE,
        finding=Verdict.NOT_ESTIMABLE,
        reason=f"no deciding pair: needs {Method.IMPLICIT.value} item scores next to {Method.LOGPROB.value} "
        f"or {Method.EMBEDDING.value} ones; has {have}",
    )


def _human_rows(study: Study, config: AnalysisConfig) -> list[dict[str, object]]:
    """Rank agreement of each model's per-dimension effects with the human IAT (implicit SC and WEAT d)."""
    scores = study.item_scores
    effects = scores[scores["method"] == Method.IMPLICIT].groupby(["model", "dimension"], observed=True)["score"].mean()
    sources = [("implicit SC", effects.reset_index())]
    if len(study.weat):
        sources.append(("WEAT d", study.weat[["model", "dimension", "score"]]))
    rows = []
    for label, frame in sources:
        for model, group in frame.groupby("model", observed=True):
            matched = group[group["dimension"].isin(list(DIMENSION_TO_IAT))]
            matched = matched.groupby("dimension", as_index=False)["score"].mean()  # one effect per dimension
            measure = f"human_iat_spearman ({label})"
            if len(matched) < 3:
                rows.append(
                    figure_row(
                        model,
                        "all",
                        measure,
                        note=f"{len(matched)} of the 3 human-IAT dimensions "
                        "(age, disability, race) present; needs all 3",
                    )
                )
                continue
            out = compare_to_human(matched, dimension="dimension", effect="score", ci=config.ci, bootstrap=False)
            r = out[(out["method"] == "spearman") & (out["interval"] == "fisher_z")].iloc[0]
            note = f"n = {int(r['n'])} dimensions: too few for a rank correlation to mean much; p = {r['p_value']:.2f}"
            rows.append(
                figure_row(
                    model, "all", measure, r["r"], r["ci_low"], r["ci_high"], IntervalKind.FISHER_Z, r["n"], note
                )
            )
    return rows


@register_question("Q2", "Convergent validity")
def convergent(
    study: Study | pd.DataFrame,
    posterior: pd.DataFrame | None = None,
    config: AnalysisConfig | None = None,
) -> QuestionResult:
    """Q2: item-level convergence of implicit SC with logprob and embedding scores, latent correlation, human IAT.

    Parameters
    ----------
    study : Study or pandas.DataFrame
        The study (:class:`bias_validity.analyses.study.Study`) or its responses table.
    posterior : pandas.DataFrame, optional
        The Bayesian fit's derived quantities; its ``latent_correlation`` rows (disattenuated, from the
        correlated item effects) decide the verdict where present and identified (``identified`` column); the
        others are shown with the note "not identified" and their contraction, never counted.
    config : AnalysisConfig, optional
        ``ci`` (the level of every Fisher-z interval) and the threshold ``convergent_r`` (default 0.3). Q2 runs no
        bootstrap: its ``n_resamples`` and ``seed`` are not used.

    Returns
    -------
    QuestionResult
        ``figures`` columns ``model``, ``dimension`` (``all``: the within-dimension correlation pooled over the
        model's dimensions), ``measure`` (``implicit~logprob`` and the other method pairs: pooled within-dimension
        Spearman r over items; ``latent implicit~logprob``: posterior HDI; ``human_iat_spearman (implicit SC)`` /
        ``(WEAT d)``: rank agreement with human IAT effect sizes), ``estimate``, ``ci_low``, ``ci_high``,
        ``interval`` (Fisher z for every classical row, HDI for the latent ones), ``n`` (items or dimensions),
        ``note`` (``decides`` for the pairs the verdict counts, ``shown, not counted`` for the others). ``attrs``:
        ``ci``, ``correlation`` (``spearman``), ``within`` (``dimension``), ``bootstrap`` (False), ``seed`` (the
        config's, unused). ``verdicts``: one row per model (dimension ``all``), its finding ``convergent``,
        ``not convergent``, ``inconclusive`` or ``not estimable``
        (:func:`bias_validity.analyses.result.verdict_table`).

    Notes
    -----
    Per model, the :func:`item_scores` are correlated across items (dimension x item id pairs: an id asked under
    two dimensions is two items) within dimension, as the latent correlation is: by
    :func:`bias_validity.psychometrics.validity.convergent_validity` with ``groups="dimension"``, the pooled
    within-dimension Spearman correlation (each method's scores ranked and centred within each dimension, then
    correlated over all the model's items; Bland & Altman 1995 [3]_), so differences between the dimensions' mean
    scores alone do not make a measure convergent. Its Fisher-z interval (Fieller, Hartley & Pearson variance)
    counts the g dimensions' degrees of freedom: width :math:`\\sqrt{1.06/(n - g - 2)}` for n items, i.e. the
    effective sample size n - g + 1. No bootstrap is run. Only the :data:`DECIDING_PAIRS` (implicit~logprob,
    implicit~embedding) are counted, by :func:`verdict_rule`, in this order: interval wholly below
    ``convergent_r`` (0.3, a medium correlation, Cohen 1988 [2]_) -> NOT_SUPPORTED, even when it is also above 0
    (e.g. [0.05, 0.20]); else interval above 0 (Campbell & Fiske 1959 [1]_: convergent correlations must differ
    from zero) -> SUPPORTED; else INCONCLUSIVE.
    A model's deciding pairs must agree, else its verdict is INCONCLUSIVE; so must the models' for the study. The
    posterior's latent correlations of those pairs replace the classical ones in the verdict when given; the fit
    estimates them over all models and dimensions, so they give one row, model :data:`ALL_MODELS`. The
    closed-set ``choice:`` log-odds are never the logprob measure here: they score the implicit prompt itself.
    Human IAT figures (Charlesworth & Banaji 2019, via
    :func:`bias_validity.psychometrics.reference.compare_to_human`) overlap only age, disability and race: n = 3, shown
    with that caveat, never part of the verdict.

    References
    ----------
    .. [1] Campbell, D. T., & Fiske, D. W. (1959). Convergent and discriminant validation by the
       multitrait-multimethod matrix. Psychological Bulletin 56, 81-105.
    .. [2] Cohen, J. (1988). Statistical Power Analysis for the Behavioral Sciences (2nd ed.). Erlbaum.
    .. [3] Bland, J. M., & Altman, D. G. (1995). Calculating correlation coefficients with repeated observations:
       Part 1--correlation within subjects. BMJ 310, 446.

    Examples
    --------
    >>> from bias_validity.simulate import simulate_responses
    >>> convergent(simulate_responses(item_sd=2.0, reps=2, seed=0)).verdict.value
    'supported'
    >>> res = convergent(simulate_responses(n_items=40, item_sd=2.0, shared_item_effects=False, seed=0))
    >>> res.verdict.value, res.verdicts["finding"].tolist()
    ('not supported', ['not convergent'])
    """
    study, posterior, config = prepare(study, posterior, config, "convergent")
    floor = config.thresholds.convergent_r
    scores = study.item_scores
    scores = scores.assign(**{_UNIT: item_keys(scores)})
    latent = posterior_rows(posterior, Quantity.LATENT_CORRELATION.value)
    # a latent correlation decides where the fit earned it (mark_trust: gate, identification, predictive checks)
    standing = latent["why_not"] if "why_not" in latent else pd.Series("", index=latent.index, dtype=object)
    if "identified" in latent and "why_not" not in latent:  # labelled by the fit but not marked: identification
        standing = latent["identified"].astype(bool).map({True: "", False: NOT_IDENTIFIED})
    identified = standing == ""
    rows, verdicts, cells = [], [], []
    for model, group in scores.groupby("model", observed=True):
        methods = set(group["method"])
        if len(methods) < 2 or Method.IMPLICIT not in methods:
            if not identified.any():
                cells.append(_not_estimable(model, methods))
            continue
        wide = group.pivot_table(index=_UNIT, columns="method", values="score").notna()
        paired = [(wide[a] & wide[b]).sum() for i, a in enumerate(wide.columns) for b in wide.columns[i + 1 :]]
        if min(paired, default=0) < 3:  # a correlation needs three items scored by both methods of every pair
            if not identified.any():
                cells.append(_not_estimable(model, methods))
            continue
        pairs = convergent_validity(
            group,
            units=_UNIT,
            methods="method",
            scores="score",
            method="spearman",
            ci=config.ci,
            groups="dimension",
            bootstrap=False,
        )
        decided = []
        for r in pairs[pairs["interval"] == "fisher_z"].itertuples():
            measure = f"{r.x}~{r.y}"
            counted = not identified.any() and _decides(measure)
            row = figure_row(
                model,
                ALL_DIMENSIONS,
                measure,
                r.r,
                r.ci_low,
                r.ci_high,
                IntervalKind.FISHER_Z,
                r.n,
                _DECIDES if counted else _SHOWN,
            )
            row["basis"] = f"n = {r.n} items within {r.n_groups} dimension{'s' if r.n_groups != 1 else ''}"
            rows.append(row)
            if counted:
                decided.append((verdict_rule(r.ci_low, r.ci_high, floor), row))
        verdicts += [v for v, _ in decided]
        if decided:
            cells.append(_model_verdict(model, ALL_DIMENSIONS, decided, floor))
        elif not identified.any():
            cells.append(_not_estimable(model, methods))
    latent_decided: dict[tuple[str, str], list] = {}
    for r, known in zip(latent.itertuples(), identified, strict=True):
        counted = known and _decides(r.method)  # a correlation that is mostly prior is shown, never counted
        dim = ALL_DIMENSIONS if pd.isna(r.dimension) or not r.dimension else r.dimension
        if known:
            note = _DECIDES if counted else _SHOWN
        elif "why_not" in latent:
            note = f"posterior not used: {r.why_not}"
        else:
            contraction = figure_text(getattr(r, "contraction", np.nan), missing="not computed")
            note = f"{NOT_IDENTIFIED} (contraction {contraction})"
        row = figure_row(r.model, dim, f"latent {r.method}", r.mean, r.hdi_low, r.hdi_high, IntervalKind.HDI, 0, note)
        rows.append(row)
        if counted:
            key = (ALL_MODELS if pd.isna(r.model) or not r.model else r.model, dim)
            latent_decided.setdefault(key, []).append((verdict_rule(r.hdi_low, r.hdi_high, floor), row))
            verdicts.append(latent_decided[key][-1][0])
    cells += [_model_verdict(m, d, decided, floor) for (m, d), decided in latent_decided.items()]
    if len(latent) and not identified.any():  # the classical correlations decide: each cell says why
        why = "; ".join(dict.fromkeys(w for w in standing if w))
        cells = [{**c, "reason": f"{c['reason']}; latent correlations not used: {why}"} for c in cells]
    rows += _human_rows(study, config)
    frame = figures_frame(
        rows, ci=config.ci, correlation="spearman", within="dimension", bootstrap=False, seed=config.seed
    )
    table = verdict_table(cells)
    if not verdicts:
        return QuestionResult.answer(
            "Q2",
            Verdict.NOT_ESTIMABLE,
            "No model has implicit answers next to logprob or embedding scores.",
            "Convergent validity needs a model measured by implicit and a deterministic method.",
            frame,
            table,
        )
    summary = (
        f"By model: {describe_verdicts(table)} (the implicit SC against "
        f"{'latent item effects' if len(latent) else 'item-level scores'} of {Method.LOGPROB.value} and "
        f"{Method.EMBEDDING.value}: {RULE.format(floor=floor)}; other pairs shown, not counted)."
    )
    if table["estimate"].notna().any():
        best = table.iloc[table["estimate"].fillna(-np.inf).argmax()]
        fig = figure_text(best["estimate"], best["ci_low"], best["ci_high"], missing="")
        summary += f" The highest deciding correlation is r = {fig} ({best['measure']}, {best['model']})."
    evidence = (
        f"Item-level scores of {scores[_UNIT].nunique()} items ({len(scores)} model x method x item scores); "
        "pooled within-dimension Spearman correlations (scores ranked and centred per model x dimension) with "
        "Fisher-z intervals on n - g + 1 (n items, g dimensions), no bootstrap"
        + (
            "; latent correlations from the hierarchical model decide (those it does not identify are shown only)"
            if identified.any()
            else ""
        )
        + "; human IAT rank agreement on age, disability and race only (n = 3)."
    )
    return QuestionResult.answer("Q2", combine_verdicts(verdicts), summary, evidence, frame, table)


def mtmm_tables(study: Study | pd.DataFrame, config: AnalysisConfig | None = None) -> dict[str, pd.DataFrame]:
    """The multitrait-multimethod matrix (models x dimensions x methods) and its Campbell-Fiske checks.

    Parameters
    ----------
    study : Study or pandas.DataFrame
        The study or its responses table (``bias_validity.probes.schema``).
    config : AnalysisConfig, optional
        Its ``ci`` is the level of the Fisher-z intervals.

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
    >>> from bias_validity.simulate import simulate_responses
    >>> mtmm_tables(simulate_responses(seed=0))
    {}
    """
    study, config = as_study(study), AnalysisConfig() if config is None else config
    cells = study.item_scores.groupby(["model", "dimension", "method"], observed=True)["score"].mean()
    wide = cells.unstack(["dimension", "method"]).dropna(axis=1)
    dims = wide.columns.get_level_values("dimension")
    methods = wide.columns.get_level_values("method")
    if len(wide) < MIN_UNITS or len(set(dims)) < 2 or len(set(methods)) < 2:
        return {}
    long = wide.stack(["dimension", "method"], future_stack=True).rename("score").reset_index()
    result = mtmm(long, units="model", traits="dimension", methods="method", scores="score", ci=config.ci)
    matrix = result.matrix.copy()
    labels = [f"{t}/{m}" for t, m in matrix.index]
    matrix.index, matrix.columns = labels, labels
    return {"mtmm": matrix, "mtmm_checks": result.checks}
