"""Result objects the analyses return and the reports render."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

import pandas as pd

from bias_validity.psychometrics.estimands import ESTIMANDS, Quantity, Thresholds

__all__ = ["QUESTIONS", "ESTIMANDS", "Quantity", "Thresholds", "Verdict", "QuestionResult", "ValidityReport"]

#: The six reviewer questions by number, with the title every result, summary and report gives them.
QUESTIONS: dict[str, str] = {
    "Q1": "Reliability",
    "Q2": "Convergent validity",
    "Q3": "Framing (ablation)",
    "Q4": "Explicit-implicit gap",
    "Q5": "Self-reflection",
    "Q6": "Scaling and alignment",
}


class Verdict(StrEnum):
    """The outcome of one reviewer question, as shown in the verdict table."""

    SUPPORTED = "supported"  #: the evidence answers the question favourably (e.g. reliable, convergent)
    NOT_SUPPORTED = "not supported"  #: the evidence answers it unfavourably
    INCONCLUSIVE = "inconclusive"  #: estimable, but the interval spans the decision threshold
    NOT_ESTIMABLE = "not estimable"  #: the data cannot answer it; ``evidence`` says what is missing


@dataclass
class QuestionResult:
    """One reviewer question answered: figures with intervals, a one-sentence verdict, and its evidence.

    ``figures`` is tidy: one row per estimate, with at least ``estimate``, ``ci_low``, ``ci_high`` and the labels
    it belongs to (``model``, ``dimension``, ``method`` ... as relevant); ``figures.attrs`` holds interval settings.
    """

    question: str  #: "Q1" ... "Q6"
    title: str
    verdict: Verdict
    summary: str  #: one sentence, with the key number and its interval
    evidence: str  #: which data, how many answers, which test
    figures: pd.DataFrame = field(default_factory=pd.DataFrame)

    @classmethod
    def answer(
        cls, question: str, verdict: Verdict, summary: str, evidence: str, figures: pd.DataFrame | None = None
    ) -> QuestionResult:
        """The result of question ``question`` (``"Q1"`` ... ``"Q6"``), titled from :data:`QUESTIONS`.

        Examples
        --------
        >>> QuestionResult.answer("Q4", Verdict.INCONCLUSIVE, "Gap 0.1 [-0.1, 0.3].", "40 answers.").title
        'Explicit-implicit gap'
        """
        if question not in QUESTIONS:
            raise ValueError(f"unknown question {question!r}; valid questions are {', '.join(QUESTIONS)}")
        return cls(question, QUESTIONS[question], verdict, summary, evidence,
                   pd.DataFrame() if figures is None else figures)  # fmt: skip


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
