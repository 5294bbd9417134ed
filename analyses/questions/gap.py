"""Q4: is the explicit-implicit gap credible once uncertainty is counted, per model and per dimension?"""

from __future__ import annotations

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
from bias_validity.analyses.result import QuestionResult, Verdict, describe_verdicts, figure_text, verdict_table
from bias_validity.analyses.study import Study, sc_counts, sc_difference
from bias_validity.analyses.summary import NOT_BALANCED
from bias_validity.analyses.trust import classical_reason, posterior_standing
from bias_validity.probes.schema import Method
from bias_validity.psychometrics.contrasts import mover_difference
from bias_validity.psychometrics.estimands import ROPE_CONVENTION, Quantity, Thresholds
from bias_validity.psychometrics.interval_kind import IntervalKind

__all__ = ["NEGATIVE_GAP", "POSITIVE_GAP", "NO_GAP", "MILDER_CLAIM", "milder_verdict", "rope_verdict", "gap"]

_ITEMS = IntervalKind.ITEM_CLUSTER_T
_THESE = IntervalKind.NEWCOMBE  #: answers independent: an interval for these items only
_HDI = IntervalKind.HDI
#: Findings of a model x dimension: explicit credibly below implicit, credibly above, or equal within the ROPE.
NEGATIVE_GAP = "credible negative gap"
POSITIVE_GAP = "credible positive gap"
NO_GAP = "no gap"
#: The seed paper's directional claim, which the study-level verdict decides one-sided.
MILDER_CLAIM = "explicit milder than implicit"


def rope_verdict(low: float, high: float, rope: float) -> Verdict:
    """A gap interval against the region of practical equivalence +/- ``rope`` (Kruschke 2018): wholly beyond it
    SUPPORTED (a gap), wholly inside it NOT_SUPPORTED (no gap), otherwise INCONCLUSIVE; NaN bounds NOT_ESTIMABLE.
    The Q4 rule, which the planner's check applies to its simulated intervals too."""
    if pd.isna(low) or pd.isna(high):
        return Verdict.NOT_ESTIMABLE
    if low > rope or high < -rope:
        return Verdict.SUPPORTED
    if -rope < low and high < rope:
        return Verdict.NOT_SUPPORTED
    return Verdict.INCONCLUSIVE


def milder_verdict(low: float, high: float, rope: float) -> Verdict:
    """The seed's claim "explicit milder than implicit" on one gap interval, decided one-sided against -ROPE.

    SUPPORTED when the interval lies wholly below ``-rope`` (explicit credibly milder by more than the ROPE);
    NOT_SUPPORTED when it lies wholly above ``-rope`` (the gap is credibly not that negative: none, or explicit
    the stronger); else INCONCLUSIVE; a NaN bound -> NOT_ESTIMABLE. The one-sided test at the interval's level
    (Kruschke 2018's HDI+ROPE rule with one side of the ROPE).

    Examples
    --------
    >>> [milder_verdict(lo, hi, 0.05).value for lo, hi in [(-0.3, -0.1), (0.1, 0.3), (-0.02, 0.03), (-0.2, 0.0)]]
    ['supported', 'not supported', 'not supported', 'inconclusive']
    """
    if pd.isna(low) or pd.isna(high):
        return Verdict.NOT_ESTIMABLE
    if high < -rope:
        return Verdict.SUPPORTED
    return Verdict.NOT_SUPPORTED if low > -rope else Verdict.INCONCLUSIVE


def _directions(table: pd.DataFrame) -> str:
    """Which models' gaps go which way, where credible gaps of both signs are found ("" otherwise)."""
    found = {f: table[table["finding"] == f] for f in (NEGATIVE_GAP, POSITIVE_GAP)}
    if any(rows.empty for rows in found.values()):
        return ""

    def named(rows: pd.DataFrame) -> str:
        return "; ".join(f"{m} ({', '.join(g['dimension'])})" for m, g in rows.groupby("model", sort=False))

    return (
        f" Directions differ: explicit below implicit for {named(found[NEGATIVE_GAP])}; above it for "
        f"{named(found[POSITIVE_GAP])}."
    )


def _cell_verdict(cell: object, rope: float, source: str, why: str = "") -> dict[str, object]:
    """A model x dimension's verdict from its deciding gap row: the finding names the gap's sign; ``why`` (why the
    posterior did not decide, where it did not) ends the reason."""
    verdict = rope_verdict(cell.ci_low, cell.ci_high, rope)
    fig = figure_text(cell.estimate, cell.ci_low, cell.ci_high, missing="")
    if verdict is Verdict.NOT_ESTIMABLE:
        finding = verdict.value
        reason = f"no {source} interval of the gap" + (f": {cell.note}" if cell.note else "")
    else:
        finding = {
            Verdict.SUPPORTED: NEGATIVE_GAP if cell.estimate < 0 else POSITIVE_GAP,
            Verdict.NOT_SUPPORTED: NO_GAP,
        }.get(verdict, verdict.value)
        where = {Verdict.SUPPORTED: "wholly outside", Verdict.NOT_SUPPORTED: "wholly inside"}.get(verdict, "spans")
        reason = f"explicit minus implicit SC {fig} ({source}) {where} the ROPE +/-{rope:g}"
    if why:
        reason += f"; {why}"
    return dict(
        model=cell.model,
        dimension=cell.dimension,
        verdict=verdict,
        finding=finding,
        measure=f"{Quantity.GAP.value} ({source})",
        estimate=cell.estimate,
        ci_low=cell.ci_low,
        ci_high=cell.ci_high,
        reason=reason,
    )


def _item_gap(study: Study, model: str, dim: str, config: AnalysisConfig) -> tuple[float, float, str]:
    """Item-cluster bootstrap interval of the gap of the two SCs (:func:`~bias_validity.analyses.study.sc_counts`):
    items resampled with their explicit and implicit answers, the statistic recomputed on each resample."""
    exp, imp = (study.answers(m) for m in (Method.EXPLICIT, Method.IMPLICIT))
    exp, imp = (r[(r["model"] == model) & (r["dimension"] == dim)] for r in (exp, imp))
    _, low, high, why = sc_difference(exp, imp, config)
    return low, high, why


@register_question("Q4", "Explicit-implicit gap")
def gap(
    study: Study | pd.DataFrame,
    posterior: pd.DataFrame | None = None,
    config: AnalysisConfig | None = None,
) -> QuestionResult:
    """Q4: explicit SC minus implicit SC per model x dimension, with frequentist intervals and the posterior HDI.

    Parameters
    ----------
    study : Study or pandas.DataFrame
        The study (:class:`bias_validity.analyses.study.Study`) or its responses table; needs ``ok`` explicit and
        implicit answers.
    posterior : pandas.DataFrame, optional
        The Bayesian fit's derived quantities (columns ``quantity``, ``model``, ``dimension``, ``method``,
        ``mean``, ``hdi_low``, ``hdi_high``, ``p_direction``); its ``gap_explicit_implicit`` rows (from the
        new-item SCs) decide the verdict where present.
    config : AnalysisConfig, optional
        ``ci`` (the frequentist intervals), the bootstrap's ``n_resamples`` and ``seed``, and the threshold
        ``gap_rope`` (default 0.05).

    Returns
    -------
    QuestionResult
        ``figures`` columns ``model``, ``dimension``, ``measure`` (``gap_explicit_implicit``), ``estimate``,
        ``ci_low``, ``ci_high``, ``interval`` (``item-cluster bootstrap, t-corrected``, ``Newcombe``: answers
        independent, for these items only, or ``HDI``), ``n`` (answers), ``note``. ``attrs``: ``ci``, ``rope``.
        ``verdicts``: one row per model x dimension (:func:`bias_validity.analyses.result.verdict_table`) from
        the deciding interval.

    Notes
    -----
    Gap = SC_explicit - SC_implicit (:data:`bias_validity.psychometrics.estimands.ESTIMANDS`), the explicit SC
    the equal-weight mean of P(agree | statement) and P(disagree | reversal) among ratings that take a side
    (:func:`bias_validity.analyses.study.sc_counts`), so acquiescence cancels where reversals were asked; where
    they were not, the note says the explicit SC is not corrected for acquiescence. The verdict generalises to the
    dimension, so it reads an interval that resamples items: the posterior HDI of the gap between new-item SCs
    when a fit is given, else the item-cluster bootstrap of the difference of the two SCs. Newcombe's (1998)
    hybrid score interval, in its MOVER form from the two SCs' intervals of
    :func:`bias_validity.analyses.study.sc_counts` (Zou & Donner 2008), is shown beside them for these items only
    (answers independent). Decision per cell by the HDI+ROPE rule (Kruschke 2018 [1]_): interval wholly outside
    the ROPE -> a credible gap (SUPPORTED); wholly inside -> no gap worth the name (NOT_SUPPORTED); otherwise
    INCONCLUSIVE. Each cell's finding names the sign: a credible negative gap (explicit below implicit,
    :data:`NEGATIVE_GAP`), a credible positive gap (:data:`POSITIVE_GAP`), no gap (:data:`NO_GAP`), inconclusive
    or not estimable. The summary words the findings per model and, where credible gaps of both signs occur,
    names the models and dimensions that go each way. The study-level verdict is the seed paper's directional
    claim, :data:`MILDER_CLAIM`, decided one-sided in each cell by :func:`milder_verdict` (the gap's interval
    wholly below -ROPE: holds; wholly above -ROPE: does not) and combined: SUPPORTED or NOT_SUPPORTED only where
    the cells agree, else INCONCLUSIVE. A mix of credible negative and credible positive gaps is therefore never
    SUPPORTED.

    References
    ----------
    .. [1] Kruschke, J. K. (2018). Rejecting or accepting parameter values in Bayesian estimation. Advances in
       Methods and Practices in Psychological Science 1, 270-280.

    Examples
    --------
    >>> from bias_validity.simulate import simulate_responses
    >>> res = gap(simulate_responses(sc={"implicit": 0.8, "explicit": 0.2}, item_sd=0.5, seed=0))
    >>> res.verdict.value, res.figures["estimate"].round(2).tolist()[:3]
    ('supported', [-0.46, -0.46, -0.65])
    >>> res.summary.split(" (")[0]
    'By model and dimension: credible negative gap in 3/3 dimensions for sim:model'
    """
    study, posterior, config = prepare(study, posterior, config, "gap")
    rope, ci = config.thresholds.gap_rope, config.ci
    counts = {
        m: sc_counts(study.answers(m), ["model", "dimension"], ci=ci).set_index(["model", "dimension"])
        for m in (Method.EXPLICIT, Method.IMPLICIT)
    }
    explicit, implicit = counts[Method.EXPLICIT], counts[Method.IMPLICIT]
    cells = explicit.merge(implicit, left_index=True, right_index=True, suffixes=("_exp", "_imp"))
    if cells.empty:
        return QuestionResult.answer(
            "Q4",
            Verdict.NOT_ESTIMABLE,
            "No model x dimension has both ok explicit and ok implicit answers.",
            "The gap needs both methods on the same model and dimension.",
        )
    balance = study.acquiescence(config)
    balance = balance[balance["method"] == Method.EXPLICIT.value].set_index(["model", "dimension"])
    # these items: the MOVER difference of the two SCs' intervals (Newcombe's where both are single rates)
    diff = pd.DataFrame(
        [
            mover_difference(c.sc_exp, (c.ci_low_exp, c.ci_high_exp), c.sc_imp, (c.ci_low_imp, c.ci_high_imp))
            for c in cells.itertuples()
        ],
        columns=["difference", "ci_low", "ci_high"],
    ).assign(n1=cells["n_exp"].to_numpy(), n2=cells["n_imp"].to_numpy())
    rows = []
    for (m, d), r in zip(cells.index, diff.itertuples(), strict=True):
        note = ""
        if (m, d) in balance.index:
            b = balance.loc[(m, d)]
            index = figure_text(b["acquiescence"], b["ci_low"], b["ci_high"], missing="not estimable")
            note = f"explicit acquiescence {index}" if b["balanced"] else cells.loc[(m, d), "note_exp"] or NOT_BALANCED
        low, high, why = _item_gap(study, m, d, config)
        rows.append(
            figure_row(
                m,
                d,
                Quantity.GAP.value,
                r.difference,
                low,
                high,
                _ITEMS,
                r.n1 + r.n2,
                "; ".join(x for x in (note, why) if x),
            )
        )
        rows.append(
            figure_row(m, d, Quantity.GAP.value, r.difference, r.ci_low, r.ci_high, _THESE, r.n1 + r.n2, "these items")
        )
    post = posterior_rows(posterior, Quantity.GAP.value)
    standing = posterior_standing(post)
    rows += [
        figure_row(r.model, r.dimension, Quantity.GAP.value, r.mean, r.hdi_low, r.hdi_high, _HDI, 0, note)
        for r in post.itertuples()
        for note in ["; ".join(x for x in ("new-item SCs", classical_reason(standing, (r.model, r.dimension))) if x)]
    ]
    frame = figures_frame(rows, ci=ci, rope=rope)
    # per cell, the posterior HDI where it decides (mark_trust), else the item-cluster interval with the reason
    chosen, sources = [], []
    for i, cell in frame[frame["interval"] == _ITEMS].iterrows():
        why = classical_reason(standing, (cell["model"], cell["dimension"]))
        if why is None:
            mine = frame[(frame["interval"] == _HDI) & (frame["model"] == cell["model"])]
            chosen.append(mine.index[mine["dimension"] == cell["dimension"]][0])
            sources.append((_HDI, ""))
        else:
            chosen.append(i)
            sources.append((_ITEMS, why))
    decide = frame.loc[chosen]
    table = verdict_table(
        _cell_verdict(r, rope, source, why) for r, (source, why) in zip(decide.itertuples(), sources, strict=True)
    )
    used = {source for source, _ in sources}
    source = next(iter(used)) if len(used) == 1 else f"{_HDI} where the posterior decides, else {_ITEMS}"
    claims = [milder_verdict(r.ci_low, r.ci_high, rope) for r in decide.itertuples()]
    verdict = combine_verdicts(claims)
    holds = sum(c is Verdict.SUPPORTED for c in claims)
    decided = sum(c is not Verdict.NOT_ESTIMABLE for c in claims)
    summary = (
        f"By model and dimension: {describe_verdicts(table)} (explicit minus implicit SC, {source}, ROPE +/-{rope:g})."
        + _directions(table)
        + f" The seed's claim, {MILDER_CLAIM} (one-sided: the gap's interval wholly below -{rope:g}), holds in "
        f"{holds} of {decided} estimable cells: {verdict.value} at the study level."
    )
    estimable = decide[decide["estimate"].notna()]
    if len(estimable):
        big = estimable.iloc[estimable["estimate"].abs().argmax()]
        fig = figure_text(big["estimate"], big["ci_low"], big["ci_high"], missing="")
        summary += f" The largest gap is {fig} ({big['model']}, {big['dimension']})."
    unbalanced = int((~balance["balanced"]).sum()) if len(balance) else 0
    n_answers = int(cells["n_exp"].sum() + cells["n_imp"].sum())
    evidence = (
        f"{n_answers} ok explicit and implicit answers in {len(cells)} model x dimension cells; "
        + (
            "posterior HDI of the new-item gap decides; item-cluster bootstrap and Newcombe (these items) shown."
            if used == {_HDI}
            else "posterior HDI of the new-item gap decides where the fit passed its gate, the gap is identified and "
            "both methods' predictive checks fit; elsewhere the item-cluster bootstrap (each cell's reason says "
            "why); Newcombe (these items) shown."
            if len(post)
            else "item-cluster bootstrap intervals decide (no Bayesian fit given); Newcombe (these items) shown."
        )
        + (f" {unbalanced} cell(s): {NOT_BALANCED}." if unbalanced else "")
        + (f" {ROPE_CONVENTION}." if rope == Thresholds.gap_rope else f" ROPE +/-{rope:g} as set.")
    )
    return QuestionResult.answer("Q4", verdict, summary, evidence, frame, table)
