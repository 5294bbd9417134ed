"""Result objects the analyses return and the reports render."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum

import numpy as np
import pandas as pd

from bias_validity.psychometrics.errors import NotEstimable
from bias_validity.psychometrics.estimands import ESTIMANDS, Quantity, Thresholds

__all__ = [
    "NotEstimable",
    "ESTIMANDS",
    "Quantity",
    "Thresholds",
    "Verdict",
    "VERDICT_COLUMNS",
    "ALL_DIMENSIONS",
    "ALL_MODELS",
    "verdict_table",
    "describe_verdicts",
    "figure_text",
    "QuestionResult",
    "ValidityReport",
]


class Verdict(StrEnum):
    """The outcome of one reviewer question, as shown in the verdict table."""

    SUPPORTED = "supported"  #: the evidence answers the question favourably (e.g. reliable, convergent)
    NOT_SUPPORTED = "not supported"  #: the evidence answers it unfavourably
    INCONCLUSIVE = "inconclusive"  #: estimable, but the interval spans the decision threshold
    NOT_ESTIMABLE = "not estimable"  #: the data cannot answer it; ``evidence`` says what is missing


#: Columns of a question's per-model verdict table (:func:`verdict_table`), in order.
VERDICT_COLUMNS: tuple[str, ...] = (
    "model",
    "dimension",
    "verdict",
    "finding",
    "measure",
    "estimate",
    "ci_low",
    "ci_high",
    "reason",
)
#: The ``dimension`` of a verdict row (or figure) that holds for a model over all its dimensions.
ALL_DIMENSIONS = "all"
#: The ``model`` of a verdict row estimated over every model at once (e.g. the fit's latent correlations).
ALL_MODELS = "all models"


def verdict_table(rows: Iterable[Mapping[str, object]]) -> pd.DataFrame:
    """A question's verdicts at the level it is asked: one row per model (x dimension), validated.

    Parameters
    ----------
    rows : iterable of mapping
        Each with ``model``, ``dimension`` (a dimension, or :data:`ALL_DIMENSIONS` when the question is asked per
        model), ``verdict`` (a :class:`Verdict` or its value), ``reason`` (non-empty: what decided, or what is
        missing) and optionally ``finding`` (a few words naming what the cell shows, e.g. "forms disagree";
        defaults to the verdict's value), ``measure`` (the deciding figure's name), ``estimate``, ``ci_low``,
        ``ci_high`` (that figure and its interval; NaN where none decided).

    Returns
    -------
    pandas.DataFrame
        Columns :data:`VERDICT_COLUMNS`; ``verdict`` holds the values of :class:`Verdict`.

    Examples
    --------
    >>> t = verdict_table([dict(model="a", dimension="age", verdict=Verdict.SUPPORTED, finding="reliable",
    ...                         measure="ICC(A,1)", estimate=0.8, ci_low=0.7, ci_high=0.9, reason="ICC above 0.5")])
    >>> t[["model", "verdict", "finding"]].to_dict("records")
    [{'model': 'a', 'verdict': 'supported', 'finding': 'reliable'}]
    >>> verdict_table([dict(model="a", dimension="age", verdict="supported", reason="")])
    Traceback (most recent call last):
    ...
    ValueError: verdict row 0 (a, age): reason is empty; every verdict says what decided it or what is missing
    """
    out = []
    for i, row in enumerate(rows):
        where = f"verdict row {i} ({row.get('model')}, {row.get('dimension')})"
        missing = [c for c in ("model", "dimension", "verdict", "reason") if c not in row]
        if missing:
            raise ValueError(f"{where}: lacks {', '.join(missing)}")
        verdict = Verdict(row["verdict"]).value
        reason = str(row["reason"]).strip()
        if not reason:
            raise ValueError(f"{where}: reason is empty; every verdict says what decided it or what is missing")
        out.append(
            dict(
                model=str(row["model"]),
                dimension=str(row["dimension"]),
                verdict=verdict,
                finding=str(row.get("finding") or verdict),
                measure=str(row.get("measure") or ""),
                estimate=float(row.get("estimate", np.nan)),
                ci_low=float(row.get("ci_low", np.nan)),
                ci_high=float(row.get("ci_high", np.nan)),
                reason=reason,
            )
        )
    return pd.DataFrame(out, columns=list(VERDICT_COLUMNS))


def describe_verdicts(table: pd.DataFrame) -> str:
    """The study-level line worded from a verdict table: each model's findings counted over its dimensions.

    Findings are counted per model, most frequent first; every finding after the first names its dimensions.
    Rows for :data:`ALL_DIMENSIONS` give the model's finding alone.

    Examples
    --------
    >>> rows = [dict(model=m, dimension=d, verdict=v, finding=f, reason="r") for m, d, v, f in [
    ...     ("A", "age", "supported", "reliable"), ("A", "race", "not supported", "forms disagree"),
    ...     ("A", "science", "supported", "reliable"), ("B", "age", "not estimable", "not estimable"),
    ...     ("C", "all", "inconclusive", "no credible shift")]]
    >>> print(describe_verdicts(verdict_table(rows)).replace("; ", ";\\n"))
    reliable in 2/3 dimensions, forms disagree in 1/3 dimensions (race) for A;
    not estimable in 1/1 dimension for B;
    no credible shift for C
    """
    parts = []
    for model, rows in table.groupby("model", sort=False):
        if (rows["dimension"] == ALL_DIMENSIONS).all():
            parts.append(f"{', '.join(dict.fromkeys(rows['finding']))} for {model}")
            continue
        rows = rows[rows["dimension"] != ALL_DIMENSIONS]
        n = len(rows)
        counted = []
        for j, (finding, k) in enumerate(rows["finding"].value_counts(sort=True).items()):
            dims = f" ({', '.join(rows.loc[rows['finding'] == finding, 'dimension'])})" if j else ""
            counted.append(f"{finding} in {k}/{n} dimension{'s' if n > 1 else ''}{dims}")
        parts.append(f"{', '.join(counted)} for {model}")
    return "; ".join(parts)


def figure_text(estimate: float, low: float = np.nan, high: float = np.nan, *, missing: str) -> str:
    """A figure with its interval for a sentence, ``"0.72 [0.55, 0.84]"``; ``missing`` (its reason) when NaN.

    Summary sentences use this so that no sentence ever prints NaN: a figure the data cannot give is replaced by
    the reason it is missing.

    Examples
    --------
    >>> figure_text(0.7234, 0.55, 0.841, missing="not estimable")
    '0.72 [0.55, 0.84]'
    >>> figure_text(0.5, missing="x")
    '0.50'
    >>> figure_text(-0.001, -0.2, 0.2, missing="x")
    '0.00 [-0.20, 0.20]'
    >>> figure_text(float("nan"), missing="needs >= 2 sessions")
    'needs >= 2 sessions'
    """
    if estimate is None or not np.isfinite(estimate):
        return missing

    def two(value: float) -> str:
        return f"{value:.2f}".replace("-0.00", "0.00")

    if low is None or high is None or not (np.isfinite(low) and np.isfinite(high)):
        return two(estimate)
    return f"{two(estimate)} [{two(low)}, {two(high)}]"


@dataclass
class QuestionResult:
    """One reviewer question answered: figures with intervals, a one-sentence verdict, and its evidence.

    ``figures`` is tidy: one row per estimate, with at least ``estimate``, ``ci_low``, ``ci_high`` and the labels
    it belongs to (``model``, ``dimension``, ``method`` ... as relevant); ``figures.attrs`` holds interval settings.
    ``verdicts`` (:func:`verdict_table`) gives the verdict at the level the question is asked, per model (x
    dimension), each with its deciding figure and reason; ``verdict`` is the study-level summary of it.
    """

    question: str  #: "Q1" ... "Q6"
    title: str
    verdict: Verdict
    summary: str  #: one sentence, with the key number and its interval
    evidence: str  #: which data, how many answers, which test
    figures: pd.DataFrame = field(default_factory=pd.DataFrame)
    verdicts: pd.DataFrame = field(default_factory=lambda: verdict_table([]))

    @classmethod
    def answer(
        cls,
        question: str,
        verdict: Verdict,
        summary: str,
        evidence: str,
        figures: pd.DataFrame | None = None,
        verdicts: pd.DataFrame | None = None,
    ) -> QuestionResult:
        """The result of question ``question`` (``"Q1"`` ... ``"Q6"``), titled from the question registry.

        Examples
        --------
        >>> QuestionResult.answer("Q4", Verdict.INCONCLUSIVE, "Gap 0.1 [-0.1, 0.3].", "40 answers.").title
        'Explicit-implicit gap'
        """
        from bias_validity.analyses.registry import question_title

        return cls(
            question,
            question_title(question),
            verdict,
            summary,
            evidence,
            pd.DataFrame() if figures is None else figures,
            verdict_table([]) if verdicts is None else verdicts,
        )


@dataclass
class ValidityReport:
    """Everything a report shows, computed once by ``analyses`` and only rendered by ``reports``.

    ``posterior`` rows use the ``quantity`` names of :class:`Quantity` (declared with their formulas in
    :data:`ESTIMANDS`): ``sc`` and ``sc_new_item`` (per model x dimension x method), ``gap_explicit_implicit``,
    ``ablation_retained_share``, ``reflection_minus_implicit`` (method column empty), ``model_contrast`` (model =
    "A - B"), ``base_vs_tuned``, ``latent_correlation`` (method = "implicit~logprob").
    """

    questions: list[QuestionResult]
    sc_table: pd.DataFrame  #: raw SC per model x dimension x method with Wilson interval and status counts
    status_counts: pd.DataFrame  #: model, method, status, n, rate
    #: derived quantities: quantity, model, dimension, method, mean, hdi_low, hdi_high, p_direction
    posterior: pd.DataFrame | None = None
    diagnostics: dict[str, object] | None = None  #: max_rhat, min_ess_bulk, min_ess_tail, divergences, passed
    provenance: dict[str, object] = field(default_factory=dict)  #: models, design, seeds, package versions
    extra_tables: dict[str, pd.DataFrame] = field(default_factory=dict)  #: e.g. "reliability", "mtmm"
    #: sample raw answers worth reading (refusals, unparseable, each method's first answers): model, method,
    #: status, prompt, raw_response. Model text: renderers must escape it.
    examples: pd.DataFrame = field(default_factory=pd.DataFrame)
