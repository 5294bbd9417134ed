"""Q1: is the implicit measure reliable across sessions (test-retest), wordings (alternate forms) and order?"""

from __future__ import annotations

import numpy as np
import pandas as pd

from bias_validity.analyses.questions._common import (
    all_must_hold,
    check_responses,
    consistent_counts,
    count_verdicts,
    figure_row,
    figures_frame,
    fmt,
    interval_verdict,
    ok_rows,
)
from bias_validity.analyses.result import QuestionResult, Verdict
from bias_validity.probes.schema import CANDIDATE_ORDERS, Method, candidate_order
from bias_validity.psychometrics.framing import position_bias
from bias_validity.psychometrics.reliability import icc

__all__ = ["ICC_POOR", "POSITION_LIMIT", "reliability"]

#: Koo & Li (2016): an ICC below 0.5 is poor reliability.
ICC_POOR = 0.5
#: A shift of the SC by more than 0.10 from candidate order alone counts as position bias (this toolkit's rule).
POSITION_LIMIT = 0.10
_ALL = "all"


def _icc_row(cells: pd.DataFrame, model: str, dim: str, measure: str, key: list[str], raters: str,
             ci: float) -> dict[str, object]:  # fmt: skip
    """ICC(A,1) of the cells' SC across ``raters``, over the targets observed under every rater."""
    levels = cells[raters].nunique()
    if levels < 2:
        return figure_row(model, dim, measure, note=f"needs >= 2 levels of {raters}, found {levels}")
    wide = cells.pivot_table(index=key, columns=raters, values="sc", observed=True).dropna()
    if len(wide) < 3:
        return figure_row(model, dim, measure, note=f"{len(wide)} cells observed under every {raters}; needs >= 3")
    long = wide.reset_index(drop=True).rename_axis("target").reset_index().melt("target", var_name="rater")
    out = icc(long, targets="target", raters="rater", ratings="value", ci=ci)
    row = out[out["form"] == "ICC(A,1)"].iloc[0]
    note = out.attrs.get("nan_reason", "")
    return figure_row(model, dim, measure, row["icc"], row["ci_low"], row["ci_high"], "F-test (McGraw-Wong)",
                      len(wide) * levels, note)  # fmt: skip


def _position_row(rows: pd.DataFrame, model: str, dim: str, ci: float) -> dict[str, object]:
    first, second = CANDIDATE_ORDERS
    listed = rows.assign(listed=rows["order"].map(candidate_order), consistent=rows["consistent"].astype(float))
    if set(listed["listed"]) != set(CANDIDATE_ORDERS):
        return figure_row(model, dim, "position_bias",
                          note=f"needs answers under both candidate orders ({first}-*, {second}-*)")  # fmt: skip
    d = position_bias(listed, order="listed", outcome="consistent", reference=second, ci=ci).iloc[0]
    return figure_row(model, dim, "position_bias", d["difference"], d["ci_low"], d["ci_high"], "Newcombe",
                      d["n"] + d["n_reference"])  # fmt: skip


def _position_verdict(low: float, high: float) -> Verdict:
    if np.isnan(low) or np.isnan(high):
        return Verdict.NOT_ESTIMABLE
    if low > POSITION_LIMIT or high < -POSITION_LIMIT:
        return Verdict.NOT_SUPPORTED
    return Verdict.SUPPORTED if max(abs(low), abs(high)) < POSITION_LIMIT else Verdict.INCONCLUSIVE


def reliability(responses: pd.DataFrame, *, method: str = Method.IMPLICIT.value, ci: float = 0.95) -> QuestionResult:
    """Q1: test-retest and alternate-forms reliability of the SC, and position bias, per model x dimension.

    Parameters
    ----------
    responses : pandas.DataFrame
        The responses table (``bias_validity.probes.schema``).
    method : str
        The sampled method whose reliability is asked about (``implicit`` by default; ``ablated`` or ``explicit``
        work the same way).
    ci : float
        Interval level.

    Returns
    -------
    QuestionResult
        ``figures`` columns ``model``, ``dimension`` (a dimension or ``all``, the model pooled over dimensions),
        ``measure`` (``test_retest``, ``alternate_forms``, ``position_bias``), ``estimate``, ``ci_low``,
        ``ci_high``, ``interval``, ``n`` (cell SCs or answers entering the estimate), ``note`` (why a figure is
        NaN). ``attrs``: ``ci``, ``method``, ``icc_form``.

    Notes
    -----
    Cells are item x template x order (x session). Test-retest: the cell SC (share of consistent ``ok`` answers)
    in each session, ICC(A,1) (absolute agreement, McGraw & Wong 1996 [2]_) with sessions as raters over the cells
    observed in every session. Alternate forms: the same with template wordings as raters over item x order x
    session cells. Both come from :func:`bias_validity.psychometrics.reliability.icc` (validated there against Shrout &
    Fleiss 1979). Position bias: SC when the group-A exemplar is listed first (``ab-*``) minus SC when it is listed
    second (``ba-*``), Newcombe (1998) interval, by :func:`bias_validity.psychometrics.framing.position_bias` (it treats
    answers as independent, so with strong item effects the interval is somewhat narrow).

    Verdict, from each model's pooled (``all``) rows: an ICC whose interval lies above 0.5 is acceptable, below 0.5
    poor (Koo & Li 2016 [1]_); an interval spanning 0.5 is inconclusive. A position-bias interval lying wholly
    beyond +/-0.10 (:data:`POSITION_LIMIT`, this toolkit's rule) is position bias, one wholly within it is none,
    else inconclusive. The verdicts of
    the pooled rows must all hold: any NOT_SUPPORTED fails the question, all SUPPORTED passes it, else INCONCLUSIVE.

    References
    ----------
    .. [1] Koo, T. K., & Li, M. Y. (2016). A guideline of selecting and reporting intraclass correlation
       coefficients for reliability research. Journal of Chiropractic Medicine 15, 155-163.
    .. [2] McGraw, K. O., & Wong, S. P. (1996). Forming inferences about some intraclass correlation coefficients.
       Psychological Methods 1, 30-46.

    Examples
    --------
    >>> from bias_validity.analyses.questions.simulate import simulate_responses
    >>> res = reliability(simulate_responses(item_sd=4.0, reps=3, seed=0))
    >>> res.verdict.value
    'supported'
    >>> res.figures.query("dimension == 'all'")[["measure", "estimate"]].round(2).to_dict("list")
    {'measure': ['test_retest', 'alternate_forms', 'position_bias'], 'estimate': [0.86, 0.84, 0.02]}
    """
    check_responses(responses, "reliability")
    rows = ok_rows(responses, method)
    if rows.empty:
        return QuestionResult.answer("Q1", Verdict.NOT_ESTIMABLE,
                              f"No ok {method} answers: reliability cannot be estimated.",
                              f"0 ok {method} answers in {len(responses)} rows.")  # fmt: skip
    figures, decisive = [], []
    scopes = [(m, d, g) for (m, d), g in rows.groupby(["model", "dimension"], observed=True)]
    scopes += [(m, _ALL, g) for m, g in rows.groupby("model", observed=True)]
    for model, dim, group in scopes:
        cells = consistent_counts(group, ["dimension", "item_id", "template_id", "order", "session"])
        found = [
            _icc_row(cells, model, dim, "test_retest", ["dimension", "item_id", "template_id", "order"], "session", ci),
            _icc_row(
                cells, model, dim, "alternate_forms", ["dimension", "item_id", "order", "session"], "template_id", ci
            ),  # fmt: skip
            _position_row(group, model, dim, ci),
        ]
        figures += found
        if dim == _ALL:
            decisive += [interval_verdict(r["ci_low"], r["ci_high"], ICC_POOR) for r in found[:2]]
            decisive.append(_position_verdict(found[2]["ci_low"], found[2]["ci_high"]))
    verdict = all_must_hold(decisive)
    frame = figures_frame(figures, ci=ci, method=method, icc_form="ICC(A,1)")
    pooled = frame[frame["dimension"] == _ALL]
    tr = pooled[pooled["measure"] == "test_retest"].iloc[0]
    af = pooled[pooled["measure"] == "alternate_forms"].iloc[0]
    pb = pooled[pooled["measure"] == "position_bias"].iloc[0]
    summary = (
        f"Test-retest ICC(A,1) {fmt(tr['estimate'])} [{fmt(tr['ci_low'])}, {fmt(tr['ci_high'])}] and alternate-forms "
        f"ICC(A,1) {fmt(af['estimate'])} [{fmt(af['ci_low'])}, {fmt(af['ci_high'])}], position bias "
        f"{fmt(pb['estimate'])} [{fmt(pb['ci_low'])}, {fmt(pb['ci_high'])}]"
        + (f" for {tr['model']}" if len(pooled) == 3 else f" for the first of {len(pooled) // 3} models")
        + f" ({count_verdicts(decisive)} over the pooled figures; threshold 0.5, Koo & Li 2016)."
    )
    evidence = (
        f"{len(rows)} ok {method} answers in {rows['model'].nunique()} model(s), {rows['dimension'].nunique()} "
        f"dimension(s), {rows['session'].nunique()} session(s), {rows['template_id'].nunique()} template(s); "
        "ICC(A,1) with F-test intervals on cell SCs; position bias as the Newcombe difference of SC between "
        "candidate orders."
    )
    return QuestionResult.answer("Q1", verdict, summary, evidence, frame)
