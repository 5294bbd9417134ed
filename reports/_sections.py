"""The report's content as format-neutral blocks, shared by the HTML and the Markdown renderer.

Selecting, sorting and reshaping only: every number shown was computed by ``analyses``.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass

import pandas as pd

from bias_validity.analyses.result import ESTIMANDS, Quantity, ValidityReport, Verdict
from bias_validity.probes.schema import Status
from bias_validity.reports import figures

__all__ = [
    "Table",
    "Image",
    "Text",
    "Unavailable",
    "Banner",
    "MatrixCell",
    "Matrix",
    "Section",
    "build_sections",
    "summary",
    "failure_banner",
    "format_cell",
]

_SC_COLUMNS = ("model", "dimension", "method", "sc", "ci_low", "ci_high")
_MAIN_QUANTITIES = tuple(q.value for q in (Quantity.SC, Quantity.GAP, Quantity.RETAINED_SHARE))
_EXAMPLE_CHARS = 1200


@dataclass(frozen=True)
class Table:
    data: pd.DataFrame
    caption: str = ""
    collapsed: bool = False  #: HTML shows it folded under its caption (the data behind a figure)


@dataclass(frozen=True)
class Image:
    title: str
    png: bytes | None  #: None when figures were not drawn (Markdown)
    alt: str


@dataclass(frozen=True)
class Text:
    text: str


@dataclass(frozen=True)
class Unavailable:
    reason: str


@dataclass(frozen=True)
class Banner:
    text: str


@dataclass(frozen=True)
class MatrixCell:
    verdict: str  #: a ``Verdict`` value (the HTML colours the cell by it)
    finding: str
    figure: str  #: the deciding figure with its interval, "" when none decided
    reason: str


@dataclass(frozen=True)
class Matrix:
    """Verdicts as a grid: one row per model, one column per dimension; a missing cell was not asked."""

    key: str  #: the question, e.g. "Q1"
    caption: str
    rows: tuple[str, ...]
    columns: tuple[str, ...]
    cells: dict[tuple[str, str], MatrixCell]

    def grid(self) -> list[tuple[str, list[MatrixCell | None]]]:
        """Each row's label with its cells in column order (None where the model was not asked)."""
        return [(row, [self.cells.get((row, col)) for col in self.columns]) for row in self.rows]


@dataclass(frozen=True)
class Section:
    key: str
    title: str
    blocks: tuple[Table | Image | Text | Unavailable | Banner | Matrix, ...]


def build_sections(report: ValidityReport, *, draw: bool) -> list[Section]:
    """The report's sections in display order; ``draw=False`` skips matplotlib (figures referenced by title)."""
    from bias_validity.reports import _per_model  # imported here: it builds on this module's blocks

    return [
        Section("verdicts", "Verdicts", _verdicts(report)),
        Section("per-model", "Verdicts per model and dimension", _per_model.matrix_blocks(report)),
        Section(
            "sc", "Stereotypical score by model, dimension and method", (*_forest(report, draw), *_acquiescence(report))
        ),
        Section("gap", _title(report, "Q4"), _gap(report, draw)),
        Section("reliability", _title(report, "Q1"), _per_model.reliability_blocks(report)),
        Section("mtmm", "Multitrait-multimethod matrix", _mtmm(report, draw)),
        Section("ablation", f"Framing: {ESTIMANDS[Quantity.RETAINED_SHARE].label}", _ablation(report, draw)),
        Section("scaling", _title(report, "Q6"), _per_model.scaling_blocks(report)),
        *_planning(report),
        Section("contrasts", "Further posterior quantities", _contrasts(report)),
        Section("status", "Answer status and refusal counts", _status(report)),
        Section("diagnostics", "Sampler diagnostics", _diagnostics(report)),
        Section("ppc", "Posterior predictive check", _ppc(report, draw)),
        Section("provenance", "Provenance", _provenance(report)),
        Section("examples", "Example answers", _examples(report)),
        Section("questions", "Figures per question", _questions(report)),
        *_extra(report),
    ]


def _title(report: ValidityReport, question: str) -> str:
    """The title the report's answer to ``question`` carries (the number itself when the report lacks it)."""
    return next((q.title for q in report.questions if q.question == question), question)


def summary(report: ValidityReport) -> str:
    """One paragraph: what was measured, how the verdicts came out, whether the Bayesian fit passed."""
    counts = Counter(q.verdict for q in report.questions)
    verdicts = ", ".join(f"{counts[v]} {v.value}" for v in Verdict if counts[v]) or "no verdicts"
    models = _levels(report, "model")
    dims = _levels(report, "dimension")
    methods = _levels(report, "method")
    scope = (
        f"{len(models)} model(s) ({', '.join(models)}), {len(dims)} dimension(s) and "
        f"{len(methods)} method(s) ({', '.join(methods)})"
        if models
        else "no scored answers"
    )
    diag = report.diagnostics
    if diag is None:
        fit = "No Bayesian fit is included; intervals are frequentist (Wilson)."
    elif diag.get("passed") is False:
        fit = "The Bayesian fit FAILED its diagnostics gate: treat its intervals as unreliable."
    else:
        fit = "The Bayesian fit passed its diagnostics gate."
    return f"This report answers {len(report.questions)} reviewer question(s) on {scope}. Verdicts: {verdicts}. {fit}"


def format_cell(value: object) -> str:
    """A table cell as plain text (renderers escape it): floats to three decimals (one from 100 up), blanks as '-'."""
    if value is None or value is pd.NA or value is pd.NaT:
        return "-"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if value != value:  # NaN
            return "-"
        if abs(value) >= 100:
            return f"{value:.1f}"
        if 0 < abs(value) < 0.001:
            return f"{value:.2g}"
        return f"{value:.3f}"
    if hasattr(value, "item") and not isinstance(value, str):  # numpy scalar
        return format_cell(value.item())
    if isinstance(value, dict | list | tuple):
        return json.dumps(value, default=str)
    return str(value)


def _verdicts(report: ValidityReport) -> tuple:
    if not report.questions:
        return (Unavailable("the report holds no reviewer questions"),)
    table = pd.DataFrame(
        [
            {
                "question": f"{q.question} {q.title}",
                "verdict": q.verdict.value,
                "summary": q.summary,
                "evidence": q.evidence,
            }
            for q in report.questions
        ]
    )
    return (Table(table),)


def _posterior(report: ValidityReport, quantity: str) -> pd.DataFrame:
    post = report.posterior
    if post is None or post.empty or "quantity" not in post.columns:
        return pd.DataFrame()
    return post[post["quantity"] == quantity]


def _interval_note(frame: pd.DataFrame) -> str:
    settings = ", ".join(f"{k}={v}" for k, v in frame.attrs.items() if not isinstance(v, dict | list | pd.DataFrame))
    return f" ({settings})" if settings else ""


def _labelled(frame: pd.DataFrame, label_cols: list[str], group: str, est: str, low: str, high: str) -> pd.DataFrame:
    cols = [c for c in label_cols if c in frame.columns]
    rows = frame.sort_values(cols, kind="stable")
    labels = rows[cols].astype("string").fillna("").agg(" · ".join, axis=1) if cols else rows.index.astype(str)
    return pd.DataFrame(
        {
            "label": list(labels),
            "group": list(rows[group].astype("string").fillna("")) if group in rows.columns else "estimate",
            "estimate": pd.to_numeric(rows[est], errors="coerce").to_numpy(dtype=float, na_value=float("nan")),
            "low": pd.to_numeric(rows[low], errors="coerce").to_numpy(dtype=float, na_value=float("nan")),
            "high": pd.to_numeric(rows[high], errors="coerce").to_numpy(dtype=float, na_value=float("nan")),
        }
    )


def _figure_blocks(
    source: pd.DataFrame, plot: pd.DataFrame, *, title: str, xlabel: str, refs: tuple[float, ...], draw: bool
) -> tuple:
    png = (
        figures.figure_png(figures.interval_plot(plot, title=title, xlabel=xlabel, reference_lines=refs))
        if draw
        else None
    )
    return (
        Image(title, png, f"{title}; {xlabel}; {len(plot)} rows, data in the table below"),
        Table(source.reset_index(drop=True), caption=f"Data: {title}", collapsed=True),
    )


def _from_question(report: ValidityReport, question: str) -> pd.DataFrame:
    for q in report.questions:
        if q.question == question and {"estimate", "ci_low", "ci_high"} <= set(q.figures.columns) and len(q.figures):
            return q.figures
    return pd.DataFrame()


def _forest(report: ValidityReport, draw: bool) -> tuple:
    post = _posterior(report, "sc")
    title = "Stereotypical score (SC) per model x dimension x method"
    if len(post):
        plot = _labelled(post, ["dimension", "method", "model"], "method", "mean", "hdi_low", "hdi_high")
        xlabel = f"SC: posterior mean with HDI{_interval_note(post)}"
        note = Text("Intervals are Bayesian highest-density intervals (HDI) from the hierarchical model.")
        return (note, *_figure_blocks(post, plot, title=title, xlabel=xlabel, refs=(0.5,), draw=draw))
    sc = report.sc_table
    missing = [c for c in _SC_COLUMNS if c not in sc.columns]
    if sc.empty or missing:
        why = "the SC table is empty" if sc.empty else f"the SC table lacks column(s) {', '.join(missing)}"
        return (Unavailable(f"{why}, and there is no posterior"),)
    plot = _labelled(sc, ["dimension", "method", "model"], "method", "sc", "ci_low", "ci_high")
    xlabel = f"SC: raw share with Wilson interval{_interval_note(sc)}"
    note = Text("No posterior is available: intervals are frequentist Wilson score intervals on the raw SC.")
    return (note, *_figure_blocks(sc, plot, title=title, xlabel=xlabel, refs=(0.5,), draw=draw))


def _acquiescence(report: ValidityReport) -> tuple:
    table = report.extra_tables.get("acquiescence")
    if table is None or table.empty:
        return ()
    index = ESTIMANDS[Quantity.ACQUIESCENCE]
    caption = f"{index.label} of the Likert methods: {index.formula}; {index.direction}{_interval_note(table)}"
    return (Table(table.reset_index(drop=True), caption=caption),)


def _gap(report: ValidityReport, draw: bool) -> tuple:
    title = "Explicit minus implicit SC per model x dimension"
    post = _posterior(report, "gap_explicit_implicit")
    if len(post):
        plot = _labelled(post, ["dimension", "model"], "model", "mean", "hdi_low", "hdi_high")
        xlabel = f"Gap: posterior mean with HDI{_interval_note(post)}"
        return _figure_blocks(post, plot, title=title, xlabel=xlabel, refs=(0.0,), draw=draw)
    q4 = _from_question(report, "Q4")
    if len(q4):
        plot = _labelled(q4, ["dimension", "model"], "model", "estimate", "ci_low", "ci_high")
        xlabel = f"Gap: estimate with frequentist interval (Q4){_interval_note(q4)}"
        return _figure_blocks(q4, plot, title=title, xlabel=xlabel, refs=(0.0,), draw=draw)
    return (Unavailable("no gap_explicit_implicit in the posterior and no Q4 figures"),)


def _ablation(report: ValidityReport, draw: bool) -> tuple:
    share = ESTIMANDS[Quantity.RETAINED_SHARE]
    title = f"{share.label}: {share.formula}"
    q3 = _from_question(report, "Q3")
    if not len(q3):
        return (Unavailable(f"no Q3 figures ({share.name.value})"),)
    threshold = q3.attrs.get("threshold", 0.5)
    note = Text(
        f"{share.direction}. {share.rule}. Bootstrap (items resampled) and posterior (HDI, from the "
        f"new-item SCs) rows estimate the same R; the reference line at {threshold:g} is the verdict's."
    )
    estimable = q3[q3["ci_low"].notna() & q3["ci_high"].notna()]
    missing = q3[~q3.index.isin(estimable.index)]
    blocks: list = [note]
    if len(missing):
        lines = [f"{r.model} · {r.dimension} · {r.interval}: {r.note}" for r in missing.itertuples()]
        blocks.append(Text("Not estimable, so not drawn: " + "; ".join(lines)))
    if not len(estimable):
        return (*blocks, Table(q3.reset_index(drop=True), caption=f"Data: {title}", collapsed=True))
    plot = _labelled(estimable, ["dimension", "model", "interval"], "interval", "estimate", "ci_low", "ci_high")
    xlabel = f"R: estimate with interval{_interval_note(q3)}"
    return (*blocks, *_figure_blocks(q3, plot, title=title, xlabel=xlabel, refs=(threshold, 1.0), draw=draw))


def _mtmm(report: ValidityReport, draw: bool) -> tuple:
    table = report.extra_tables.get("mtmm")
    if table is None or table.empty:
        return (
            Unavailable("no multitrait-multimethod matrix in this report (Campbell-Fiske needs at least 5 models)"),
        )
    blocks: list = []
    numeric = table.select_dtypes("number")
    if numeric.shape[1] == table.shape[1] and numeric.shape[0] == numeric.shape[1]:
        title = "Multitrait-multimethod correlations"
        png = figures.figure_png(figures.heatmap(numeric, title=title)) if draw else None
        blocks.append(Image(title, png, f"{title}: heatmap of a {len(numeric)} x {len(numeric)} matrix"))
        table = table.reset_index(names="")
    blocks.append(Table(table, caption="MTMM matrix"))
    checks = report.extra_tables.get("mtmm_checks")
    if checks is not None and len(checks):
        blocks.append(Table(checks, caption="Campbell-Fiske comparisons"))
    return tuple(blocks)


#: Columns of the Planning section's per-cell table, in order.
_PLAN_COLUMNS = (
    "question",
    "quantity",
    "model",
    "dimension",
    "target",
    "assumed",
    "threshold",
    "items",
    "reps",
    "sessions",
    "more_answers",
    "planned_half_width",
    "planned_power",
    "would_decide",
    "basis",
    "note",
)


def _planning(report: ValidityReport) -> list[Section]:
    """The Planning section: the design each question needs to decide, planned from this study's own estimates
    (the ``plan`` extra table). A report without a plan (none built from answers, or nothing to plan) has none."""
    cells, summary_table = report.extra_tables.get("plan"), report.extra_tables.get("plan_summary")
    if cells is None or cells.empty:
        return []
    targets = cells.attrs.get("targets", {})
    power, half = targets.get("power"), targets.get("half_width")
    aims = f" (SC and gap half-width {half:g}, {power:.0%} power)" if power is not None and half is not None else ""
    note = Text(
        f"What would decide each question{aims}, planned forward from this study's estimates: the SC, the "
        "between-item, item x wording and item x session variances and the binomial variance of one answer, per "
        "model x dimension x method. Items per dimension and repetitions are searched for the fewest answers, "
        "preferring designs within the packaged items; wordings stay the study's. Interval widths are closed forms "
        "(the item-cluster variance with Kish's design effect, Fisher z for correlations, Fieller for the retained "
        "share, Bonett 2002 for ICCs); the chance of deciding is the noncentral-t power, refined by simulating the "
        "intervals over the model's items where item SCs are skewed or the decision is joint (Q1's pairs, Q3's "
        "estimable R). The figures hold if the truth is as estimated; with few items the estimates are rough. "
        "bias-validity plan STORE --check checks each row by simulation through the questions' own estimators. "
        "Each inconclusive or not-estimable cell above ends its reason with its row's design."
    )
    blocks = [note]
    if summary_table is not None and len(summary_table):
        caption = "Per question: the design of the most demanding cell a design decides; more answers summed over cells"
        blocks.append(Table(summary_table.reset_index(drop=True), caption=caption))
    shown = cells[[c for c in _PLAN_COLUMNS if c in cells.columns]].reset_index(drop=True)
    blocks.append(Table(shown, caption="Per model x dimension: the planned design and its figures", collapsed=True))
    return [Section("planning", "Planning: the design that would decide", tuple(blocks))]


def _contrasts(report: ValidityReport) -> tuple:
    post = report.posterior
    if post is None or post.empty or "quantity" not in post.columns:
        return (Unavailable("no posterior (no Bayesian fit in this report)"),)
    rest = post[~post["quantity"].isin(_MAIN_QUANTITIES)]
    if rest.empty:
        return (Unavailable("the posterior holds no quantities beyond SC, gap and retained share"),)
    return (Table(rest.reset_index(drop=True), caption=f"Posterior means with HDI{_interval_note(post)}"),)


def _status(report: ValidityReport) -> tuple:
    counts = report.status_counts
    need = {"model", "method", "status", "n"}
    if counts.empty or not need <= set(counts.columns):
        return (Unavailable("no status counts (columns model, method, status, n)"),)
    wide = counts.pivot_table(index=["model", "method"], columns="status", values="n", aggfunc="sum", fill_value=0)
    order = [s.value for s in Status]
    wide = wide[[c for c in order if c in wide.columns] + [c for c in wide.columns if c not in order]]
    wide["total"] = wide.sum(axis=1)
    wide.columns.name = None
    return (Table(wide.reset_index(), caption="Answers per status; non-ok answers are kept, never coded as a stance"),)


def _diagnostics(report: ValidityReport) -> tuple:
    diag = report.diagnostics
    if diag is None:
        return (Unavailable("no Bayesian fit in this report"),)
    table = pd.DataFrame({"diagnostic": list(diag), "value": [format_cell(v) for v in diag.values()]})
    banner = failure_banner(report)
    return (banner, Table(table)) if banner else (Table(table),)


def _ppc(report: ValidityReport, draw: bool) -> tuple:
    ppc, shares = report.extra_tables.get("ppc"), report.extra_tables.get("ppc_share_outside")
    if ppc is None or ppc.empty or shares is None:
        return (Unavailable("no posterior predictive check (no Bayesian fit in this report)"),)
    outside = ", ".join(f"{r.method} {r.share_outside:.0%}" for r in shares.itertuples())
    note = Text(
        "Each group's observed SC (share of consistent or agreeing answers) against the SCs of answers "
        f"replicated from the posterior, one group per model x dimension x method x template: share of groups "
        f"outside their 90% interval per method: {outside}. A calibrated model leaves about 10% outside, fewer "
        "when groups hold few answers."
    )
    limit = report.provenance.get("thresholds", {}).get("ppc_outside")
    if limit is not None:
        note = Text(
            f"{note.text} A method with more than {limit:.0%} of its groups outside does not let its posterior "
            "decide: the classical interval decides its cells, and their reasons say so."
        )
    parts = [c for c in ("model", "dimension", "template_id") if c in ppc]
    plot = ppc.assign(
        label=ppc[parts].astype(str).agg(" · ".join, axis=1),
        group=ppc["method"],
        low=ppc["replicated_low"],
        high=ppc["replicated_high"],
    )
    title = "Posterior predictive check per method"
    blocks: list = [note]
    if draw:
        png = figures.figure_png(figures.ppc_plot(plot, title=title, xlabel="observed SC and replicated 90% interval"))
        blocks.append(Image(title, png, f"{title}: {len(ppc)} groups, observed against replicated"))
    blocks.append(Table(ppc, caption="Observed and replicated SC per group", collapsed=True))
    return tuple(blocks)


def failure_banner(report: ValidityReport) -> Banner | None:
    """The FAILED banner when the Bayesian fit did not pass its diagnostics gate, else None."""
    if report.diagnostics is None or report.diagnostics.get("passed") is not False:
        return None
    gate = report.diagnostics.get("gate")
    rule = f" ({gate})" if gate else ""
    return Banner(
        f"FAILED: the Bayesian fit did not pass its diagnostics gate{rule}. Its intervals are not to be trusted."
    )


def _provenance(report: ValidityReport) -> tuple:
    if not report.provenance:
        return (Unavailable("no provenance recorded"),)
    rows = [{"field": k, "value": format_cell(v)} for k, v in report.provenance.items()]
    return (Table(pd.DataFrame(rows)),)


def _examples(report: ValidityReport) -> tuple:
    ex = report.examples
    if ex.empty:
        return (Unavailable("no example answers in this report"),)
    shown = ex.copy()
    for col in ("prompt", "raw_response"):
        if col in shown.columns:
            text = shown[col].astype("string")
            long = text.str.len() > _EXAMPLE_CHARS
            shown[col] = text.where(~long, text.str.slice(0, _EXAMPLE_CHARS) + " [... truncated]")
    return (Text("Raw model text, shown verbatim (escaped)."), Table(shown.reset_index(drop=True)))


def _questions(report: ValidityReport) -> tuple:
    blocks = [
        Table(q.figures.reset_index(drop=True), caption=f"{q.question} {q.title}{_interval_note(q.figures)}")
        for q in report.questions
        if len(q.figures)
    ]
    return tuple(blocks) or (Unavailable("no question carries figures"),)


def _extra(report: ValidityReport) -> list[Section]:
    shown = {"reliability", "mtmm", "mtmm_checks", "acquiescence", "ppc", "ppc_share_outside", "plan", "plan_summary"}
    return [
        Section(f"extra-{i}", f"Table: {name}", (Table(table) if len(table) else Unavailable("empty table"),))
        for i, (name, table) in enumerate(report.extra_tables.items())
        if name not in shown
    ]


def _levels(report: ValidityReport, column: str) -> list[str]:
    frame = report.sc_table
    if column not in frame.columns:
        return []
    return sorted(str(v) for v in frame[column].dropna().unique())
