"""Q1: is the implicit measure reliable across sessions (test-retest), wordings (alternate forms) and order?

Reliability is asked within each dimension, from what the design has: the ICC over the cells each set (or each
pair) of sessions or forms shares, the spread of the SC across forms that share no cells, and position bias. An ICC
pooled over dimensions is shown for what it is (it ranks dimensions and items) and never decides.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from itertools import combinations

import numpy as np
import pandas as pd

from bias_validity.analyses.config import AnalysisConfig
from bias_validity.analyses.questions._common import (
    all_must_hold,
    consistent_counts,
    figure_row,
    figures_frame,
    interval_verdict,
    prepare,
)
from bias_validity.analyses.registry import register_question
from bias_validity.analyses.result import (
    ALL_DIMENSIONS,
    QuestionResult,
    Thresholds,
    Verdict,
    describe_verdicts,
    figure_text,
    verdict_table,
)
from bias_validity.analyses.study import Study
from bias_validity.probes.schema import CANDIDATE_ORDERS, Method, candidate_order
from bias_validity.psychometrics.forms import form_agreement, form_shifts
from bias_validity.psychometrics.framing import position_bias
from bias_validity.psychometrics.interval_kind import IntervalKind
from bias_validity.psychometrics.reliability import icc

__all__ = ["ICC_POOR", "POSITION_LIMIT", "ICC_SCOPE", "ONE_SESSION", "FORMS_DISAGREE", "reliability"]

#: Koo & Li (2016): an ICC below 0.5 is poor reliability (the default of ``reliability(icc_threshold=...)``,
#: declared with the other verdict thresholds in :class:`Thresholds`).
ICC_POOR = Thresholds.icc
#: A shift of the SC by more than 0.10 from candidate order, or between two wordings, counts (this toolkit's rule;
#: the default of ``reliability(shift_limit=...)``).
POSITION_LIMIT = Thresholds.shift_limit
#: How the decisive ICCs are computed, as the report labels them.
ICC_SCOPE = "within dimension"
#: The whole test-retest answer of a design with one session.
ONE_SESSION = "needs >= 2 sessions"
#: The finding of a model x dimension whose wordings move the SC beyond the shift limit.
FORMS_DISAGREE = "forms disagree"
_POOLED_NOTE = "pooled over dimensions: ranks dimensions and items, does not decide within-dimension reliability"
_MIN_SHARED = 3
_CELL_KEY = ["item_id", "template_id", "order", "session"]


@dataclass(frozen=True)
class _Check:
    """One aspect of a model x dimension's reliability: its verdict, the figure that gave it and a clause."""

    verdict: Verdict
    text: str  #: a clause for the verdict's reason
    finding: str = ""  #: what a NOT_SUPPORTED verdict shows
    measure: str = ""
    estimate: float = np.nan
    ci_low: float = np.nan
    ci_high: float = np.nan
    decides: bool = True  #: False: the aspect can fail a cell (NOT_SUPPORTED), not pass it or leave it open


def _relation(verdict: Verdict, above: str, below: str) -> str:
    return {Verdict.SUPPORTED: above, Verdict.NOT_SUPPORTED: below}.get(verdict, "spans")


def _facet(
    cells: pd.DataFrame,
    model: str,
    dim: str,
    facet: str,
    raters: str,
    key: list[str],
    ci: float,
    threshold: float,
    pooled: bool,
) -> tuple[list[dict[str, object]], list[_Check]]:
    """ICC(A,1) with ``raters`` as raters over the cells every level shares, else over each pair's shared cells."""
    levels = sorted(cells[raters].astype(str).unique())
    label = f"{facet.replace('_', '-')} ICC(A,1)"
    if len(levels) < 2:
        reason = ONE_SESSION if raters == "session" else f"needs >= 2 templates, found {len(levels)}"
        text = f"{facet.replace('_', '-')} {reason}"
        return [figure_row(model, dim, facet, note=reason)], [_Check(Verdict.NOT_ESTIMABLE, text)]
    wide = cells.assign(**{raters: cells[raters].astype(str)}).pivot_table(
        index=key, columns=raters, values="sc", observed=True
    )
    groups = [levels] if len(wide.dropna()) >= _MIN_SHARED or len(levels) == 2 else list(combinations(levels, 2))
    rows, checks = [], []
    for group in groups:
        shared = wide[list(group)].dropna()
        measure = facet if len(group) == len(levels) else f"{facet} ({'~'.join(group)})"
        name = label if len(group) == len(levels) else f"{label} ({'~'.join(group)})"
        if len(shared) < _MIN_SHARED:
            note = (
                f"{len(shared)} cell{'' if len(shared) == 1 else 's'} shared by {' and '.join(group)}; needs >= "
                f"{_MIN_SHARED}"
            )
            rows.append(figure_row(model, dim, measure, note=note))
            checks.append(_Check(Verdict.NOT_ESTIMABLE, f"{name}: {note}"))
            continue
        long = shared.reset_index(drop=True).rename_axis("target").reset_index().melt("target", var_name="rater")
        out = icc(long, targets="target", raters="rater", ratings="value", ci=ci)
        r = out[out["form"] == "ICC(A,1)"].iloc[0]
        note = out.attrs.get("nan_reason", "") or (_POOLED_NOTE if pooled else ICC_SCOPE)
        rows.append(
            figure_row(
                model,
                dim,
                measure,
                r["icc"],
                r["ci_low"],
                r["ci_high"],
                IntervalKind.ICC_F,
                len(shared) * len(group),
                note,
            )
        )
        verdict = interval_verdict(r["ci_low"], r["ci_high"], threshold)
        if verdict is Verdict.NOT_ESTIMABLE:
            checks.append(_Check(verdict, f"{name}: {out.attrs.get('nan_reason') or 'interval not estimable'}"))
            continue
        text = (
            f"{name} {figure_text(r['icc'], r['ci_low'], r['ci_high'], missing='')} "
            f"{_relation(verdict, 'above', 'below')} {threshold:g}"
        )
        checks.append(
            _Check(
                verdict,
                text,
                f"unreliable across {raters.replace('template_id', 'forms')}s".replace("formss", "forms"),
                name,
                r["icc"],
                r["ci_low"],
                r["ci_high"],
            )
        )
    return rows, checks


def _forms(cells: pd.DataFrame, model: str, dim: str, ci: float, limit: float) -> tuple[list[dict], _Check]:
    """Each wording's SC (item-cluster Wilson interval), their heterogeneity and their pairwise shifts."""
    agreement = form_agreement(cells, forms="template_id", clusters="item_id", successes="k", trials="n", ci=ci)
    rows = [
        figure_row(
            model,
            dim,
            f"form_sc ({f.form})",
            f.estimate,
            f.ci_low,
            f.ci_high,
            IntervalKind.WILSON_DESIGN_EFFECT,
            f.n,
            f"{f.n_clusters} items",
        )
        for f in agreement.itertuples()
    ]
    a = agreement.attrs
    if len(agreement) < 2:  # the alternate-forms ICC's clause already says so
        return rows, _Check(Verdict.NOT_ESTIMABLE, "")
    test = f"Cochran's Q {a['q']:.1f} (df {a['df']}), p = {a['p_value']:.2g}; I2 = {a['i2']:.2f}"
    rows.append(
        figure_row(
            model,
            dim,
            "form_heterogeneity",
            a["tau"],
            interval="",
            n=int(agreement["n"].sum()),
            note=f"tau: between-form SD of SC (DerSimonian-Laird); {test}",
        )
    )
    shifts = form_shifts(cells, forms="template_id", clusters="item_id", successes="k", trials="n", ci=ci)
    rows += [
        figure_row(
            model,
            dim,
            f"form_shift ({s.form_a} - {s.form_b})",
            s.difference,
            s.ci_low,
            s.ci_high,
            IntervalKind.WALD_CLUSTER,
            s.n,
            f"{s.shared_clusters} items shared",
        )
        for s in shifts.itertuples()
    ]
    verdicts = [_shift_verdict(s.ci_low, s.ci_high, limit) for s in shifts.itertuples()]
    verdict = all_must_hold(verdicts)
    pick = [v is verdict for v in verdicts]
    largest = shifts[pick].iloc[int(np.argmax(shifts[pick]["difference"].abs().to_numpy()))]
    name = f"form shift {largest['form_a']} - {largest['form_b']}"
    fig = figure_text(largest["difference"], largest["ci_low"], largest["ci_high"], missing="not estimable")
    text = f"{name} {fig} {_relation(verdict, 'within', 'beyond')} +/-{limit:.2f} ({test})"
    return rows, _Check(
        verdict, text, FORMS_DISAGREE, name, largest["difference"], largest["ci_low"], largest["ci_high"]
    )


def _shift_verdict(low: float, high: float, limit: float) -> Verdict:
    """A shift wholly beyond +/-limit fails, one wholly within passes, else inconclusive."""
    if np.isnan(low) or np.isnan(high):
        return Verdict.NOT_ESTIMABLE
    if low > limit or high < -limit:
        return Verdict.NOT_SUPPORTED
    return Verdict.SUPPORTED if max(abs(low), abs(high)) < limit else Verdict.INCONCLUSIVE


def _position(rows: pd.DataFrame, model: str, dim: str, ci: float, limit: float) -> tuple[dict, _Check]:
    first, second = CANDIDATE_ORDERS
    listed = rows.assign(listed=rows["order"].map(candidate_order), consistent=rows["consistent"].astype(float))
    if set(listed["listed"]) != set(CANDIDATE_ORDERS):
        note = f"needs answers under both candidate orders ({first}-*, {second}-*)"
        return figure_row(model, dim, "position_bias", note=note), _Check(
            Verdict.NOT_ESTIMABLE, f"position bias {note}", decides=False
        )
    d = position_bias(listed, order="listed", outcome="consistent", reference=second, ci=ci).iloc[0]
    row = figure_row(
        model,
        dim,
        "position_bias",
        d["difference"],
        d["ci_low"],
        d["ci_high"],
        IntervalKind.NEWCOMBE,
        d["n"] + d["n_reference"],
    )
    verdict = _shift_verdict(d["ci_low"], d["ci_high"], limit)
    fig = figure_text(d["difference"], d["ci_low"], d["ci_high"], missing="not estimable")
    text = f"position bias {fig} {_relation(verdict, 'within', 'beyond')} +/-{limit:.2f}"
    return row, _Check(
        verdict, text, "position bias", "position bias", d["difference"], d["ci_low"], d["ci_high"], decides=False
    )


def _cell_verdict(model: str, dim: str, checks: list[_Check]) -> dict[str, object]:
    """A model x dimension's verdict: the deciding aspects must all hold, and a fail-only aspect can fail it."""
    verdict = all_must_hold(c.verdict for c in checks if c.decides or c.verdict is Verdict.NOT_SUPPORTED)
    deciding = [c for c in checks if c.decides or c.verdict is Verdict.NOT_SUPPORTED]
    decided = next((c for c in deciding if c.verdict is verdict), _Check(verdict, ""))
    finding = {Verdict.SUPPORTED: "reliable", Verdict.NOT_SUPPORTED: decided.finding}.get(verdict, verdict.value)
    reason = "; ".join(dict.fromkeys(c.text for c in checks if c.text))
    return dict(
        model=model,
        dimension=dim,
        verdict=verdict,
        finding=finding,
        measure=decided.measure,
        estimate=decided.estimate,
        ci_low=decided.ci_low,
        ci_high=decided.ci_high,
        reason=reason,
    )


@register_question("Q1", "Reliability")
def reliability(
    study: Study | pd.DataFrame,
    posterior: pd.DataFrame | None = None,
    config: AnalysisConfig | None = None,
    *,
    method: str = Method.IMPLICIT.value,
) -> QuestionResult:
    """Q1: test-retest and alternate-forms reliability of the SC, and position bias, per model x dimension.

    Parameters
    ----------
    study : Study or pandas.DataFrame
        The study (:class:`bias_validity.analyses.study.Study`) or its responses table.
    posterior : pandas.DataFrame, optional
        The fit's derived quantities; Q1 reads none (its figures are classical), so it is accepted and ignored.
    config : AnalysisConfig, optional
        ``ci`` and the thresholds ``icc`` (an ICC whose interval lies above it is acceptable, below it poor;
        default 0.5, the boundary of poor reliability in Koo & Li (2016) [1]_, :data:`ICC_POOR`) and
        ``shift_limit`` (a shift of the SC between two wordings, or between candidate orders, whose interval lies
        wholly beyond +/- this counts; one wholly within it does not; default 0.10, :data:`POSITION_LIMIT`, this
        toolkit's rule).
    method : str
        The sampled method whose reliability is asked about (``implicit`` by default; ``ablated`` or ``explicit``
        work the same way).

    Returns
    -------
    QuestionResult
        ``verdicts``: one row per model x dimension (:func:`bias_validity.analyses.result.verdict_table`), its
        finding ``reliable``, ``forms disagree`` (:data:`FORMS_DISAGREE`), ``unreliable across forms``,
        ``unreliable across sessions``, ``position bias``, ``inconclusive`` or ``not estimable``, the deciding
        figure and a reason listing every aspect. ``figures`` columns ``model``, ``dimension`` (a dimension, or
        ``all``: the model pooled over dimensions, shown and never deciding), ``measure`` (``test_retest`` and
        ``alternate_forms``, with `` (A~B)`` for an ICC over the cells one pair of levels shares; ``form_sc (T)``,
        ``form_heterogeneity``, ``form_shift (A - B)``, ``position_bias``), ``estimate``, ``ci_low``,
        ``ci_high``, ``interval``, ``n``, ``note`` (why a figure is NaN, or its scope). ``attrs``: ``ci``,
        ``method``, ``icc_form``, ``icc_scope`` (:data:`ICC_SCOPE`), ``icc_threshold``, ``shift_limit``.

    Notes
    -----
    Cells are item x template x order x session; a cell's SC is the share of consistent ``ok`` answers in it.
    Per model x dimension, from what the design has:

    - Test-retest: ICC(A,1) (absolute agreement, McGraw & Wong 1996 [2]_) with sessions as raters over the cells
      every session shares; with three or more sessions sharing fewer than three cells, one ICC per pair of
      sessions over the cells that pair shares. One session: :data:`ONE_SESSION`, and nothing else.
    - Alternate forms: the same with template wordings as raters over item x order x session cells. Forms that
      share few or no items still give form-by-form SCs with item-cluster Wilson intervals, Cochran's Q test of
      heterogeneity with the between-form SD tau, and every pair's SC shift
      (:func:`bias_validity.psychometrics.forms.form_agreement` and ``form_shifts``).
    - Position bias: SC with the group-A exemplar listed first (``ab-*``) minus listed second (``ba-*``), Newcombe
      (1998) interval (:func:`bias_validity.psychometrics.framing.position_bias`).

    Verdict per model x dimension: an ICC interval above ``icc_threshold`` passes, below it fails, spanning it is
    inconclusive; a form shift or position bias wholly beyond +/-``shift_limit`` fails, wholly within passes, else
    inconclusive. The ICCs decide and must all hold. The form shifts decide only where no alternate-forms ICC is
    estimable (ICC(A,1) already counts a mean shift between forms), and else can only fail the cell; position bias
    can only fail it (counterbalancing averages it out of the SC). A cell with neither an ICC nor a form shift is
    not estimable. The decisive ICCs are computed within dimension
    (:data:`ICC_SCOPE`); the ICCs pooled over dimensions mix between-dimension differences into the targets, so
    they rank dimensions and never decide. The study-level verdict is the conjunction of the cells; the summary
    words the cells per model and names the dimensions whose forms disagree.

    References
    ----------
    .. [1] Koo, T. K., & Li, M. Y. (2016). A guideline of selecting and reporting intraclass correlation
       coefficients for reliability research. Journal of Chiropractic Medicine 15, 155-163.
    .. [2] McGraw, K. O., & Wong, S. P. (1996). Forming inferences about some intraclass correlation coefficients.
       Psychological Methods 1, 30-46.

    Examples
    --------
    >>> from bias_validity.simulate import simulate_responses
    >>> res = reliability(simulate_responses(item_sd=6.0, reps=3, seed=0))
    >>> res.verdict.value
    'supported'
    >>> res.verdicts[["dimension", "finding"]].to_dict("list")
    {'dimension': ['age', 'gender_career', 'race'], 'finding': ['reliable', 'reliable', 'reliable']}
    >>> res.figures.query("dimension == 'age'")["measure"].tolist()[:3]
    ['test_retest', 'alternate_forms', 'form_sc (implicit-1)']
    """
    study, _, config = prepare(study, posterior, config, "reliability")
    ci, icc_threshold, shift_limit = config.ci, config.thresholds.icc, config.thresholds.shift_limit
    rows = study.answers(method)
    if rows.empty:
        return QuestionResult.answer(
            "Q1",
            Verdict.NOT_ESTIMABLE,
            f"No ok {method} answers: reliability cannot be estimated.",
            f"0 ok {method} answers in {len(study.responses)} rows.",
        )
    figures, cells_verdicts = [], []
    facets = (
        ("test_retest", "session", ["item_id", "template_id", "order"]),
        ("alternate_forms", "template_id", ["item_id", "order", "session"]),
    )
    for (model, dim), group in rows.groupby(["model", "dimension"], observed=True):
        cells = consistent_counts(group, _CELL_KEY)
        checks: list[_Check] = []
        icc_checks = {}
        for facet, raters, key in facets:
            found, icc_checks[facet] = _facet(cells, model, dim, facet, raters, key, ci, icc_threshold, False)
            figures += found
        spread, form_check = _forms(cells, model, dim, ci, shift_limit)
        if any(c.verdict is not Verdict.NOT_ESTIMABLE for c in icc_checks["alternate_forms"]):
            form_check = replace(form_check, decides=False)  # ICC(A,1) already counts the forms' mean shifts
        position, position_check = _position(group, model, dim, ci, shift_limit)
        figures += [*spread, position]
        checks = [*icc_checks["alternate_forms"], *icc_checks["test_retest"], form_check, position_check]
        cells_verdicts.append(_cell_verdict(model, dim, checks))
    for model, group in rows.groupby("model", observed=True):
        cells = consistent_counts(group, ["dimension", *_CELL_KEY])
        for facet, raters, key in facets:
            figures += _facet(
                cells, model, ALL_DIMENSIONS, facet, raters, ["dimension", *key], ci, icc_threshold, True
            )[0]
        figures.append(_position(group, model, ALL_DIMENSIONS, ci, shift_limit)[0])
    table = verdict_table(cells_verdicts)
    verdict = all_must_hold(Verdict(v) for v in table["verdict"])
    frame = figures_frame(
        figures,
        ci=ci,
        method=method,
        icc_form="ICC(A,1)",
        icc_scope=ICC_SCOPE,
        icc_threshold=icc_threshold,
        shift_limit=shift_limit,
    )
    disagree = table[table["finding"] == FORMS_DISAGREE]
    named = "; ".join(f"{', '.join(g['dimension'])} for {m}" for m, g in disagree.groupby("model", sort=False))
    sessions = rows["session"].nunique()
    summary = (
        f"By model and dimension: {describe_verdicts(table)} (ICC(A,1) {ICC_SCOPE}, threshold "
        f"{icc_threshold:g}, Koo & Li 2016; SC shifts between forms or candidate orders beyond +/-{shift_limit:.2f} "
        "fail)."
        + (f" Forms disagree in {named}." if named else "")
        + (f" Test-retest {ONE_SESSION}." if sessions < 2 else "")
    )
    evidence = (
        f"{len(rows)} ok {method} answers in {rows['model'].nunique()} model(s), {rows['dimension'].nunique()} "
        f"dimension(s), {sessions} session(s), {rows['template_id'].nunique()} template(s); ICC(A,1) with F-test "
        "intervals on cell SCs within each dimension, over the cells every session or form (else each pair) "
        "shares; form SCs with item-cluster Wilson intervals, Cochran's Q and pairwise shifts; position bias as "
        "the Newcombe difference of SC between candidate orders. ICCs pooled over dimensions are shown to rank "
        "dimensions and do not decide."
    )
    return QuestionResult.answer("Q1", verdict, summary, evidence, frame, table)
