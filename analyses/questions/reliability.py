"""Q1: is the implicit measure reliable across sessions (test-retest), wordings (alternate forms) and order?

Reliability here is the stability of the SC the study reports, asked within each dimension: the SC must not move
between wordings or between sessions (every pairwise shift equivalent to zero within the shift limit, two one-sided
tests on item-cluster paired intervals), and must not be driven by where a candidate or an attribute is listed
(candidate order, attribute order and their interaction). The item-level ICCs are shown for what they are, the
reliability of item scores, and never decide; with three or more models a study-level ICC of the model x dimension
SCs says whether forms and sessions rank them alike, shown and not deciding.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np
import pandas as pd

from bias_validity.analyses.config import AnalysisConfig
from bias_validity.analyses.questions._common import (
    all_must_hold,
    consistent_counts,
    figure_row,
    figures_frame,
    prepare,
)
from bias_validity.analyses.registry import register_question
from bias_validity.analyses.result import (
    ALL_DIMENSIONS,
    ALL_MODELS,
    QuestionResult,
    Thresholds,
    Verdict,
    describe_verdicts,
    figure_text,
    verdict_table,
)
from bias_validity.analyses.study import Study, item_keys
from bias_validity.probes.schema import ATTRIBUTE_ORDERS, CANDIDATE_ORDERS, Method, candidate_order
from bias_validity.psychometrics.clustered import MIN_CLUSTERS
from bias_validity.psychometrics.forms import form_agreement, form_shifts
from bias_validity.psychometrics.interval_kind import IntervalKind
from bias_validity.psychometrics.reliability import icc

__all__ = [
    "ICC_POOR",
    "POSITION_LIMIT",
    "ICC_SCOPE",
    "ONE_SESSION",
    "FORMS_DISAGREE",
    "SESSIONS_DISAGREE",
    "POSITION_BIAS",
    "reliability",
    "shift_verdict",
]

#: Koo & Li (2016): an item-score ICC below 0.5 is poor reliability (the ``thresholds.icc`` the item-score ICCs
#: are read against in their clause; they do not decide).
ICC_POOR = Thresholds.icc
#: A shift of the SC by more than 0.10 between two wordings, two sessions or two orders counts (this toolkit's
#: rule; ``thresholds.shift_limit``).
POSITION_LIMIT = Thresholds.shift_limit
#: How the item-score ICCs are computed, as the report labels them.
ICC_SCOPE = "within dimension"
#: The whole test-retest answer of a design with one session.
ONE_SESSION = "needs >= 2 sessions"
#: The finding of a model x dimension whose wordings move the SC beyond the shift limit.
FORMS_DISAGREE = "forms disagree"
#: The finding of a model x dimension whose SC moves between sessions beyond the shift limit.
SESSIONS_DISAGREE = "sessions disagree"
#: The finding of a model x dimension whose SC moves with candidate or attribute order beyond the shift limit.
POSITION_BIAS = "position bias"
_ITEM_NOTE = (
    "item-score reliability (ICC(A,1) of order-averaged item SCs); Q2's disattenuation reads it, it does not decide "
    "the SC's stability"
)
_POOLED_NOTE = "pooled over dimensions: ranks dimensions and items, does not decide within-dimension reliability"
_STUDY_NOTE = (
    "study level: ICC(A,1) of the model x dimension SCs across {raters} (do they rank models alike?); shown, does "
    "not decide"
)
_MIN_SHARED = 3
_MIN_MODELS = 3
_CELL_KEY = ["item_id", "template_id", "order", "session"]
#: The order contrasts of the counterbalanced 2 x 2 design: (measure, label column, what it names).
_ORDER_CONTRASTS = (
    ("position_bias", "listed", "candidate order"),
    ("attribute_order_bias", "attribute", "attribute order"),
    ("position_interaction", "aligned", "candidate x attribute order"),
)


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


def _attribute_order(order: str) -> str:
    """The attribute-order part of an implicit ``order`` value (``ab-yx`` -> ``yx``; "" where there is none)."""
    parts = str(order).split("-", 1)
    return parts[1] if len(parts) == 2 else ""


def _with_order_labels(rows: pd.DataFrame) -> pd.DataFrame:
    """The answers with their candidate order (``listed``), attribute order and the interaction's two halves.

    ``aligned`` is ``aligned`` where group A's exemplar is listed first and its consistent attribute named first,
    or both second (``ab-xy``, ``ba-yx``): there a responder that puts the first-listed candidate in the first
    blank answers consistently, and in the ``crossed`` orders (``ab-yx``, ``ba-xy``) inconsistently.
    """
    listed = rows["order"].astype(str).map(candidate_order)
    attribute = rows["order"].astype(str).map(_attribute_order)
    first_a, first_x = listed == CANDIDATE_ORDERS[0], attribute == ATTRIBUTE_ORDERS[0]
    aligned = np.where(first_a == first_x, "aligned", "crossed")
    known = listed.isin(CANDIDATE_ORDERS) & attribute.isin(ATTRIBUTE_ORDERS)
    return rows.assign(
        listed=listed.where(listed.isin(CANDIDATE_ORDERS), ""),
        attribute=attribute.where(attribute.isin(ATTRIBUTE_ORDERS), ""),
        aligned=np.where(known, aligned, ""),
    )


def _icc_figures(
    cells: pd.DataFrame, model: str, dim: str, facet: str, raters: str, key: list[str], ci: float, note: str
) -> tuple[list[dict[str, object]], list[str]]:
    """ICC(A,1) with ``raters`` as raters over the targets every level shares, else over each pair's shared ones.

    Shown, never deciding: the figure rows and a clause each for the verdict's reason.
    """
    levels = sorted(cells[raters].astype(str).unique())
    label = f"item-score {facet.replace('_', '-')} ICC(A,1)"
    if len(levels) < 2:
        reason = ONE_SESSION if raters == "session" else f"needs >= 2 templates, found {len(levels)}"
        return [figure_row(model, dim, facet, note=reason)], []
    wide = cells.assign(**{raters: cells[raters].astype(str)}).pivot_table(
        index=key, columns=raters, values="sc", observed=True
    )
    groups = [levels] if len(wide.dropna()) >= _MIN_SHARED or len(levels) == 2 else list(combinations(levels, 2))
    rows, texts = [], []
    for group in groups:
        shared = wide[list(group)].dropna()
        measure = facet if len(group) == len(levels) else f"{facet} ({'~'.join(group)})"
        name = label if len(group) == len(levels) else f"{label} ({'~'.join(group)})"
        if len(shared) < _MIN_SHARED:
            why = (
                f"{len(shared)} cell{'' if len(shared) == 1 else 's'} shared by {' and '.join(group)}; needs >= "
                f"{_MIN_SHARED}"
            )
            rows.append(figure_row(model, dim, measure, note=why))
            texts.append(f"{name}: {why}")
            continue
        long = shared.reset_index(drop=True).rename_axis("target").reset_index().melt("target", var_name="rater")
        out = icc(long, targets="target", raters="rater", ratings="value", ci=ci)
        r = out[out["form"] == "ICC(A,1)"].iloc[0]
        nan_reason = out.attrs.get("nan_reason", "")
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
                nan_reason or note,
            )
        )
        fig = figure_text(r["icc"], r["ci_low"], r["ci_high"], missing=nan_reason or "not estimable")
        texts.append(f"{name} {fig} (shown, does not decide)")
    return rows, texts


def shift_verdict(low: float, high: float, limit: float) -> Verdict:
    """Two one-sided tests (Schuirmann 1987) on an interval at ``ci`` = 1 - 2 alpha, alpha = (1 - ci) / 2.

    Wholly within (-limit, +limit): both one-sided nulls (shift <= -limit, shift >= +limit) are rejected at alpha,
    equivalence (SUPPORTED). Wholly beyond +limit or below -limit: the one-sided (1 - alpha) bound lies beyond the
    limit (NOT_SUPPORTED). Otherwise INCONCLUSIVE; NaN bounds are NOT_ESTIMABLE.
    """
    if np.isnan(low) or np.isnan(high):
        return Verdict.NOT_ESTIMABLE
    if low > limit or high < -limit:
        return Verdict.NOT_SUPPORTED
    return Verdict.SUPPORTED if -limit < low and high < limit else Verdict.INCONCLUSIVE


def _shifts(
    counts: pd.DataFrame,
    model: str,
    dim: str,
    levels: str,
    measure: str,
    name: str,
    finding: str,
    ci: float,
    limit: float,
    decides: bool,
) -> tuple[list[dict[str, object]], _Check]:
    """Every pair of ``levels``' SC shift, its item-cluster paired interval and the pairs' joint verdict."""
    shifts = form_shifts(counts, forms=levels, clusters="item_id", successes="k", trials="n", ci=ci)
    rows = [
        figure_row(
            model,
            dim,
            f"{measure} ({s.form_a} - {s.form_b})",
            s.difference,
            s.ci_low,
            s.ci_high,
            IntervalKind.WALD_CLUSTER,
            s.n,
            s.nan_reason or f"{s.clusters} items, {s.shared_clusters} shared",
        )
        for s in shifts.itertuples()
    ]
    verdicts = [shift_verdict(s.ci_low, s.ci_high, limit) for s in shifts.itertuples()]
    verdict = all_must_hold(verdicts)
    if verdict is Verdict.NOT_ESTIMABLE:
        s = shifts.iloc[0]
        text = f"{name} {s['form_a']} - {s['form_b']} {s['difference']:.2f}: not estimable, {s['nan_reason']}"
        return rows, _Check(verdict, text, decides=decides)
    picked = shifts[[v is verdict for v in verdicts]]
    reach = np.maximum(picked["ci_low"].abs(), picked["ci_high"].abs()).to_numpy()
    if verdict is Verdict.NOT_SUPPORTED:  # the shift lying furthest beyond the limit
        reach = np.minimum(picked["ci_low"].abs(), picked["ci_high"].abs()).to_numpy()
    s = picked.iloc[int(np.argmax(reach))]
    label = f"{name} {s['form_a']} - {s['form_b']}"
    fig = figure_text(s["difference"], s["ci_low"], s["ci_high"], missing="not estimable")
    pairs = f" (largest of {len(shifts)} pairs)" if len(shifts) > 1 else ""
    text = f"{label} {fig} {_relation(verdict, 'within', 'beyond')} +/-{limit:.2f}{pairs}"
    return rows, _Check(verdict, text, finding, label, s["difference"], s["ci_low"], s["ci_high"], decides)


def _forms(cells: pd.DataFrame, model: str, dim: str, ci: float, limit: float) -> tuple[list[dict], _Check]:
    """Each wording's SC, their heterogeneity (shown) and their pairwise shifts (deciding)."""
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
    if len(agreement) < 2:
        text = f"form shift: needs >= 2 templates, found {len(agreement)}"
        return rows, _Check(Verdict.NOT_ESTIMABLE, text)
    test = f"Cochran's Q {a['q']:.1f} (df {a['df']}), p = {a['p_value']:.2g}; I2 = {a['i2']:.2f}"
    rows.append(
        figure_row(
            model,
            dim,
            "form_heterogeneity",
            a["tau"],
            a["tau_ci_low"],
            a["tau_ci_high"],
            "",  # a Q-profile interval: no IntervalKind names it yet
            int(agreement["n"].sum()),
            "tau: between-form SD of SC (Paule-Mandel) with its Q-profile interval (Viechtbauer 2007); descriptive, "
            f"does not decide; {test}",
        )
    )
    shift_rows, check = _shifts(
        cells, model, dim, "template_id", "form_shift", "form shift", FORMS_DISAGREE, ci, limit, True
    )
    return rows + shift_rows, check


def _sessions(cells: pd.DataFrame, model: str, dim: str, ci: float, limit: float) -> tuple[list[dict], _Check]:
    """Every pair of sessions' SC shift (the test-retest shift), deciding."""
    if cells["session"].nunique() < 2:
        return [figure_row(model, dim, "session_shift", note=ONE_SESSION)], _Check(
            Verdict.NOT_ESTIMABLE, f"test-retest {ONE_SESSION}"
        )
    counts = cells.assign(session=cells["session"].astype(str))
    return _shifts(counts, model, dim, "session", "session_shift", "session shift", SESSIONS_DISAGREE, ci, limit, True)


def _orders(rows: pd.DataFrame, model: str, dim: str, ci: float, limit: float) -> tuple[list[dict], list[_Check]]:
    """Candidate order, attribute order and their interaction: SC shifts that can only fail the cell, clustered by
    item (dimension x item id: answers pooled over dimensions keep an id asked under two dimensions apart)."""
    labelled = _with_order_labels(rows.assign(item_id=item_keys(rows)))
    figures, checks = [], []
    for measure, column, what in _ORDER_CONTRASTS:
        name = f"position bias ({what})" if measure != "position_bias" else "position bias"
        present = labelled[labelled[column] != ""]
        if present[column].nunique() < 2:
            note = f"needs answers under both {what}s"
            figures.append(figure_row(model, dim, measure, note=note))
            checks.append(_Check(Verdict.NOT_ESTIMABLE, f"{name} {note}", decides=False))
            continue
        counts = consistent_counts(present, ["item_id", column])
        found, check = _shifts(counts, model, dim, column, measure, name, POSITION_BIAS, ci, limit, False)
        figures += [{**f, "measure": measure} for f in found]  # one pair: the measure keeps its plain name
        checks.append(check)
    return figures, checks


def _cell_verdict(model: str, dim: str, checks: list[_Check]) -> dict[str, object]:
    """A model x dimension's verdict: the deciding aspects must all hold, and a fail-only aspect can fail it.

    The deciding figure is the one of the cell's verdict that lies nearest the limit (a pass) or furthest beyond
    it (a fail).
    """
    deciding = [c for c in checks if c.decides or c.verdict is Verdict.NOT_SUPPORTED]
    verdict = all_must_hold(c.verdict for c in deciding)
    same = [c for c in deciding if c.verdict is verdict and np.isfinite(c.ci_low)]
    if same:
        far = min if verdict is Verdict.NOT_SUPPORTED else max
        reach = [far(abs(c.ci_low), abs(c.ci_high)) for c in same]
        decided = same[int(np.argmax(reach))]
    else:
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


def _model_ranking(rows: pd.DataFrame, ci: float) -> list[dict[str, object]]:
    """With >= 3 models: ICC(A,1) of the model x dimension SCs with forms, then sessions, as raters (shown)."""
    if rows["model"].nunique() < _MIN_MODELS:
        return []
    figures = []
    for raters, what in (("template_id", "forms"), ("session", "sessions")):
        measure = f"model_sc_icc ({what})"
        sc = consistent_counts(rows.assign(**{raters: rows[raters].astype(str)}), ["model", "dimension", raters])
        wide = sc.pivot_table(index=["model", "dimension"], columns=raters, values="sc", observed=True)
        shared = wide.dropna()  # the targets every level rates, else the levels every target has
        if len(shared) < _MIN_SHARED:
            shared = wide.dropna(axis=1, thresh=len(wide)).dropna()
        if shared.shape[1] < 2 or len(shared) < _MIN_SHARED:
            note = (
                f"needs >= 2 {what} shared by >= {_MIN_SHARED} model x dimension SCs; found {shared.shape[1]} "
                f"shared by {len(shared)}"
            )
            figures.append(figure_row(ALL_MODELS, ALL_DIMENSIONS, measure, note=note))
            continue
        long = shared.reset_index(drop=True).rename_axis("target").reset_index().melt("target", var_name="rater")
        out = icc(long, targets="target", raters="rater", ratings="value", ci=ci)
        r = out[out["form"] == "ICC(A,1)"].iloc[0]
        figures.append(
            figure_row(
                ALL_MODELS,
                ALL_DIMENSIONS,
                measure,
                r["icc"],
                r["ci_low"],
                r["ci_high"],
                IntervalKind.ICC_F,
                shared.size,
                out.attrs.get("nan_reason", "") or _STUDY_NOTE.format(raters=what),
            )
        )
    return figures


@register_question("Q1", "Reliability")
def reliability(
    study: Study | pd.DataFrame,
    posterior: pd.DataFrame | None = None,
    config: AnalysisConfig | None = None,
    *,
    method: str = Method.IMPLICIT.value,
) -> QuestionResult:
    """Q1: is the SC stable across sessions (test-retest) and wordings (alternate forms), and free of order effects?

    Parameters
    ----------
    study : Study or pandas.DataFrame
        The study (:class:`bias_validity.analyses.study.Study`) or its responses table.
    posterior : pandas.DataFrame, optional
        The fit's derived quantities; Q1 reads none (its figures are classical), so it is accepted and ignored.
    config : AnalysisConfig, optional
        ``ci`` (the level of every interval, and so of the equivalence tests, see Notes), ``thresholds.shift_limit``
        (the equivalence limit of a shift of the SC; default 0.10, :data:`POSITION_LIMIT`, this toolkit's rule) and
        ``thresholds.icc`` (the line the item-score ICCs are read against in their clause; default 0.5, the
        boundary of poor reliability in Koo & Li (2016) [1]_, :data:`ICC_POOR`; it decides nothing).
    method : str
        The sampled method whose reliability is asked about (``implicit`` by default; ``ablated`` or ``explicit``
        work the same way).

    Returns
    -------
    QuestionResult
        ``verdicts``: one row per model x dimension (:func:`bias_validity.analyses.result.verdict_table`), its
        finding ``reliable``, ``forms disagree`` (:data:`FORMS_DISAGREE`), ``sessions disagree``
        (:data:`SESSIONS_DISAGREE`), ``position bias`` (:data:`POSITION_BIAS`), ``inconclusive`` or ``not
        estimable``, the deciding shift and its interval, and a reason listing every aspect. ``figures`` columns
        ``model``, ``dimension`` (a dimension, or ``all``: the model pooled over dimensions, shown and never
        deciding), ``measure``, ``estimate``, ``ci_low``, ``ci_high``, ``interval``, ``n``, ``note`` (why a figure
        is NaN, or what it is). Measures: ``test_retest`` and ``alternate_forms`` (item-score ICCs, `` (A~B)`` for
        one pair of levels), ``form_sc (T)``, ``form_heterogeneity``, ``form_shift (A - B)``,
        ``session_shift (1 - 2)``, ``position_bias`` (candidate order), ``attribute_order_bias``,
        ``position_interaction`` (candidate x attribute order) and, with three or more models, ``model_sc_icc
        (forms)`` and ``model_sc_icc (sessions)`` (model :data:`~bias_validity.analyses.result.ALL_MODELS`).
        ``attrs``: ``ci``, ``method``, ``icc_form``, ``icc_scope`` (:data:`ICC_SCOPE`), ``icc_threshold``,
        ``shift_limit``, ``equivalence_alpha``.

    Notes
    -----
    Cells are item x template x order x session; a cell's SC is the share of consistent ``ok`` answers in it.
    Per model x dimension:

    - Form shifts: for every pair of wordings, SC(A) - SC(B) over all their answers, with the item-cluster
      robust Wald interval that pairs the items both ask (Obuchowski 1998;
      :func:`bias_validity.psychometrics.forms.form_shifts`).
    - Session shifts (test-retest): the same for every pair of sessions. One session: :data:`ONE_SESSION`.
    - Order shifts: SC with group A's exemplar listed first (``ab-*``) minus listed second (``ba-*``); SC with
      group A's consistent attribute named first (``*-xy``) minus second (``*-yx``); and the interaction, SC in
      the aligned orders (``ab-xy``, ``ba-yx``) minus the crossed ones (``ab-yx``, ``ba-xy``), which is half the
      2 x 2 interaction contrast. A responder that puts the first-listed candidate in the first blank answers
      consistently exactly in the aligned orders: its SC is 0.5 under each candidate order, and only the
      interaction shows it. Same interval as the form shifts, items as clusters.
    - Every shift interval needs >= :data:`bias_validity.psychometrics.clustered.MIN_CLUSTERS` (5) items; with
      fewer it is NaN and the shift is not estimable ("2 items are too few for an item-cluster interval"), the
      floor Q3 and Q4 apply to their item-cluster intervals.

    Verdict: each shift is judged by two one-sided tests (Schuirmann 1987 [3]_) at alpha = (1 - ``ci``) / 2 per
    side, that is on its two-sided ``ci`` interval (the 1 - 2 alpha interval; 95% by default, each one-sided test
    at 2.5%): an interval wholly inside (-``shift_limit``, +``shift_limit``) is equivalence (passes); one whose
    one-sided 1 - alpha bound lies beyond the limit, i.e. the interval wholly above +``shift_limit`` or below
    -``shift_limit``, fails; otherwise inconclusive. The form and session shifts decide: every pair must be
    equivalent for ``reliable``, and any that fails gives ``forms disagree`` or ``sessions disagree``. The order
    shifts can only fail the cell (``position bias``; counterbalancing averages a modest order effect out of the
    SC, but a shift beyond the limit says the answers follow position, not content). A cell with no estimable form
    or session shift is not estimable. The deciding figure is the shift of the cell's verdict nearest the limit
    (a pass) or furthest beyond it (a fail).

    Shown, never deciding:

    - Item-score ICCs: ICC(A,1) (McGraw & Wong 1996 [2]_) of the order-averaged item SCs with sessions
      (``test_retest``) or wordings (``alternate_forms``) as raters, over the targets every level shares, else
      one per pair; computed :data:`ICC_SCOPE`. They are the reliability of item scores, which Q2's
      disattenuation needs; with items alike (restricted range) they are near zero however stable the SC, so they
      never decide its stability. Averaging over orders keeps an order heuristic out of the targets. Rows pooled
      over dimensions (``dimension`` ``all``) mix between-dimension differences into the targets and only rank.
    - Form SCs (item-cluster design-effect Wilson intervals), Cochran's Q and the Paule-Mandel between-form SD
      with its Q-profile interval (Viechtbauer 2007;
      :func:`bias_validity.psychometrics.forms.form_agreement`), descriptive.
    - With three or more models, the study-level ICC(A,1) of the model x dimension SCs across forms and across
      sessions: whether the measure ranks models the same way under every wording and occasion.

    The study-level verdict is the conjunction of the cells; the summary words the cells per model and names the
    dimensions whose forms disagree.

    References
    ----------
    .. [1] Koo, T. K., & Li, M. Y. (2016). A guideline of selecting and reporting intraclass correlation
       coefficients for reliability research. Journal of Chiropractic Medicine 15, 155-163.
    .. [2] McGraw, K. O., & Wong, S. P. (1996). Forming inferences about some intraclass correlation coefficients.
       Psychological Methods 1, 30-46.
    .. [3] Schuirmann, D. J. (1987). A comparison of the two one-sided tests procedure and the power approach for
       assessing the equivalence of average bioavailability. Journal of Pharmacokinetics and Biopharmaceutics 15,
       657-680.

    Examples
    --------
    >>> from bias_validity.simulate import simulate_responses
    >>> res = reliability(simulate_responses(item_sd=6.0, reps=10, seed=0))
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
        ("test_retest", "session", ["item_id", "template_id"]),
        ("alternate_forms", "template_id", ["item_id", "session"]),
    )
    item_key = ["item_id", "template_id", "session"]
    for (model, dim), group in rows.groupby(["model", "dimension"], observed=True):
        cells = consistent_counts(group, _CELL_KEY)
        items = cells.groupby(item_key, observed=True)["sc"].mean().reset_index()  # order-averaged item SCs
        icc_texts = []
        for facet, raters, key in facets:
            found, texts = _icc_figures(items, model, dim, facet, raters, key, ci, f"{ICC_SCOPE}; {_ITEM_NOTE}")
            figures += found
            icc_texts += texts
        form_rows, form_check = _forms(cells, model, dim, ci, shift_limit)
        session_rows, session_check = _sessions(cells, model, dim, ci, shift_limit)
        order_rows, order_checks = _orders(group, model, dim, ci, shift_limit)
        figures += [*form_rows, *session_rows, *order_rows]
        icc_check = _Check(Verdict.NOT_ESTIMABLE, "; ".join(icc_texts), decides=False)
        checks = [form_check, session_check, *order_checks, icc_check]
        cells_verdicts.append(_cell_verdict(model, dim, checks))
    for model, group in rows.groupby("model", observed=True):
        cells = consistent_counts(group, ["dimension", *_CELL_KEY])
        items = cells.groupby(["dimension", *item_key], observed=True)["sc"].mean().reset_index()
        for facet, raters, key in facets:
            figures += _icc_figures(items, model, ALL_DIMENSIONS, facet, raters, ["dimension", *key], ci, _POOLED_NOTE)[
                0
            ]
        figures += _orders(group, model, ALL_DIMENSIONS, ci, shift_limit)[0]
    figures += _model_ranking(rows, ci)
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
        equivalence_alpha=(1 - ci) / 2,
    )
    disagree = table[table["finding"] == FORMS_DISAGREE]
    named = "; ".join(f"{', '.join(g['dimension'])} for {m}" for m, g in disagree.groupby("model", sort=False))
    sessions = rows["session"].nunique()
    summary = (
        f"By model and dimension: {describe_verdicts(table)} (reliable: every SC shift between forms and between "
        f"sessions equivalent within +/-{shift_limit:.2f}, two one-sided tests on the {ci:.0%} item-cluster "
        f"intervals; an order shift beyond it is position bias; item-score ICC(A,1) shown against threshold "
        f"{icc_threshold:g}, Koo & Li 2016, not deciding)."
        + (f" Forms disagree in {named}." if named else "")
        + (f" Test-retest {ONE_SESSION}." if sessions < 2 else "")
    )
    evidence = (
        f"{len(rows)} ok {method} answers in {rows['model'].nunique()} model(s), {rows['dimension'].nunique()} "
        f"dimension(s), {sessions} session(s), {rows['template_id'].nunique()} template(s); pairwise SC shifts "
        "between forms, sessions, candidate orders, attribute orders and their interaction, each with an "
        f"item-cluster robust interval (>= {MIN_CLUSTERS} items, shared items paired), judged by two one-sided "
        "tests; item-score ICC(A,1) with F-test intervals on order-averaged item SCs within each dimension, form "
        "SCs with item-cluster Wilson intervals and Cochran's Q, shown and not deciding."
    )
    return QuestionResult.answer("Q1", verdict, summary, evidence, frame, table)
