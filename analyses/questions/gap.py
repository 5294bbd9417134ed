"""Q4: is the explicit-implicit gap credible once uncertainty is counted, per model and per dimension?"""

from __future__ import annotations

import pandas as pd

from bias_validity.analyses.questions._common import (
    check_posterior,
    check_responses,
    combine_verdicts,
    consistent_counts,
    count_verdicts,
    figure_row,
    figures_frame,
    fmt,
    ok_rows,
    posterior_rows,
)
from bias_validity.analyses.result import QuestionResult, Verdict
from bias_validity.probes.schema import Method
from bias_validity.psychometrics.intervals import newcombe_diff_interval

__all__ = ["GAP_ROPE", "gap"]

#: Region of practical equivalence around a zero gap, on the SC scale (Kruschke 2018's HDI+ROPE rule).
GAP_ROPE = 0.05


def _rope_verdict(low: float, high: float) -> Verdict:
    if pd.isna(low) or pd.isna(high):
        return Verdict.NOT_ESTIMABLE
    if low > GAP_ROPE or high < -GAP_ROPE:
        return Verdict.SUPPORTED
    if -GAP_ROPE < low and high < GAP_ROPE:
        return Verdict.NOT_SUPPORTED
    return Verdict.INCONCLUSIVE


def gap(responses: pd.DataFrame, *, posterior: pd.DataFrame | None = None, ci: float = 0.95) -> QuestionResult:
    """Q4: explicit SC minus implicit SC per model x dimension, with a frequentist interval and the posterior HDI.

    Parameters
    ----------
    responses : pandas.DataFrame
        The responses table (``bias_validity.probes.schema``); needs ``ok`` explicit and implicit answers.
    posterior : pandas.DataFrame, optional
        The Bayesian fit's derived quantities (columns ``quantity``, ``model``, ``dimension``, ``method``,
        ``mean``, ``hdi_low``, ``hdi_high``, ``p_direction``); its ``gap_explicit_implicit`` rows decide the
        verdict where present.
    ci : float
        Level of the Newcombe interval.

    Returns
    -------
    QuestionResult
        ``figures`` columns ``model``, ``dimension``, ``measure`` (``gap_explicit_implicit``), ``estimate``,
        ``ci_low``, ``ci_high``, ``interval`` (``Newcombe`` or ``HDI``), ``n`` (answers), ``note``.
        ``attrs``: ``ci``, ``rope``.

    Notes
    -----
    Gap = SC_explicit - SC_implicit, where the explicit SC is the share of agreeing (Likert >= 4) answers. The
    frequentist interval is Newcombe's (1998) hybrid score interval
    (:func:`bias_validity.psychometrics.intervals.newcombe_diff_interval`, validated there against Newcombe's worked
    examples); it treats answers as independent, so the hierarchical model's HDI (item and template effects) is
    preferred when a posterior is given. Decision per cell by the HDI+ROPE rule (Kruschke 2018 [1]_) with ROPE +/-0.05:
    interval wholly outside it -> a credible gap (SUPPORTED); wholly inside -> no gap worth the name
    (NOT_SUPPORTED); otherwise INCONCLUSIVE. The cells' verdicts must agree, else INCONCLUSIVE.

    References
    ----------
    .. [1] Kruschke, J. K. (2018). Rejecting or accepting parameter values in Bayesian estimation. Advances in
       Methods and Practices in Psychological Science 1, 270-280.

    Examples
    --------
    >>> from bias_validity.analyses.questions.simulate import simulate_responses
    >>> res = gap(simulate_responses(sc={"implicit": 0.8, "explicit": 0.2}, item_sd=0.5, seed=0))
    >>> res.verdict.value, res.figures["estimate"].round(2).tolist()
    ('supported', [-0.57, -0.52, -0.48])
    """
    check_responses(responses, "gap")
    posterior = check_posterior(posterior, "gap")
    counts = {
        m: consistent_counts(ok_rows(responses, m), ["model", "dimension"]).set_index(["model", "dimension"])
        for m in (Method.EXPLICIT, Method.IMPLICIT)
    }
    explicit, implicit = counts[Method.EXPLICIT], counts[Method.IMPLICIT]
    cells = explicit.merge(implicit, left_index=True, right_index=True, suffixes=("_exp", "_imp"))
    if cells.empty:
        return QuestionResult.answer("Q4", Verdict.NOT_ESTIMABLE,
                              "No model x dimension has both ok explicit and ok implicit answers.",
                              "The gap needs both methods on the same model and dimension.")  # fmt: skip
    diff = newcombe_diff_interval(cells["k_exp"], cells["n_exp"], cells["k_imp"], cells["n_imp"], ci=ci)
    rows = [
        figure_row(m, d, "gap_explicit_implicit", r.difference, r.ci_low, r.ci_high, "Newcombe", r.n1 + r.n2)
        for (m, d), r in zip(cells.index, diff.itertuples(), strict=True)
    ]
    post = posterior_rows(posterior, "gap_explicit_implicit")
    rows += [
        figure_row(r.model, r.dimension, "gap_explicit_implicit", r.mean, r.hdi_low, r.hdi_high, "HDI")
        for r in post.itertuples()
    ]
    frame = figures_frame(rows, ci=ci, rope=GAP_ROPE)
    source = "HDI" if len(post) else "Newcombe"
    decide = frame[frame["interval"] == source]
    verdicts = [_rope_verdict(r.ci_low, r.ci_high) for r in decide.itertuples()]
    verdict = combine_verdicts(verdicts)
    big = decide.iloc[decide["estimate"].abs().argmax()]
    summary = (
        f"The largest explicit-implicit gap is {fmt(big['estimate'])} [{fmt(big['ci_low'])}, {fmt(big['ci_high'])}] "
        f"({big['model']}, {big['dimension']}); over {len(decide)} model x dimension cells: "
        f"{count_verdicts(verdicts)} (ROPE +/-{GAP_ROPE})."
    )
    n_answers = int(cells["n_exp"].sum() + cells["n_imp"].sum())
    evidence = (
        f"{n_answers} ok explicit and implicit answers in {len(cells)} model x dimension cells; "
        + (
            "posterior HDI of the hierarchical model decides, Newcombe intervals shown beside it."
            if len(post)
            else "Newcombe difference intervals (no Bayesian fit given)."
        )  # fmt: skip
    )
    return QuestionResult.answer("Q4", verdict, summary, evidence, frame)
