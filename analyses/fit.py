"""Fit the hierarchical Bayesian model to a study: which answers enter how, and the result the reports use.

Every row set below is a view of the :class:`bias_validity.analyses.study.Study` (``ok``, ``likert``, ``scores``);
nothing is filtered or recoded here. Mapping (an explicit, documented choice):

- ``implicit`` and ``ablated`` (sampled two-way choices): ``consistent`` of ``ok`` rows, counted per design cell
  (model x dimension x method x template x item x order; sessions and repetitions pooled) -> binomial cells.
- ``explicit`` and ``reflection`` (Likert): the study's ``likert`` ratings counted per level of their ``keyed``
  column -> cumulative-logit cells: keyed towards the stereotype by ``probes.schema``'s ``keyed_likert`` (a
  reversed statement's rating is flipped; its ``order`` carries the reversal, so the order effect absorbs
  acquiescence). Their SC is the probability of a keyed rating of 4-5 among
  ratings that take a side (not 3), on the same probability scale as the binary SCs (``probes.schema``'s
  ``likert_consistent``). Rows with ``consistent`` but no ``likert`` (imported tables) enter as binomial cells.
- ``logprob`` and ``embedding`` (deterministic): the study's ``scores`` rows, averaged over sessions and repetitions
  and standardised within method x template, as Gaussian measurements of the same item effects (so they inform the
  latent correlation without pretending to be sampled answers); whole-set rows (``item_id`` ``WEAT``) are left out.
  Closed-set ``choice:`` log-odds are left out: they are the implicit prompt's own answer probabilities, so as a
  ``logprob`` measurement they would correlate the implicit measure with itself (the SC table shows them as the
  separate ``implicit_expected`` series). A method
  seen on fewer than two items gets no item effect (and a score method then drops out), so no latent correlation
  is reported for it. Deterministic methods get no ``sc`` row here: their raw shares are in the SC table.
- Non-``ok`` answers (refusal, unparseable, invalid_choice, error) are excluded from the likelihood: treating them
  as a stance would be wrong, so SCs are conditional on a valid answer; their rates per model and method are
  reported next to the posterior (:func:`bias_validity.analyses.summary.status_counts`).

The result is the one fit object of the toolkit, :class:`bias_validity.psychometrics.bayes.BayesFit`; a saved fit
is read back with :func:`bias_validity.psychometrics.bayes.load_fit` and checked against a store's answers with
:func:`check_fit_matches` before it is reused, and its HDI mass against the report's ``ci`` with
:func:`check_fit_level`.
"""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING

import pandas as pd

from bias_validity.analyses.study import Study, as_study
from bias_validity.probes.schema import Method, is_reversed

if TYPE_CHECKING:
    from bias_validity.analyses.config import AnalysisConfig
    from bias_validity.psychometrics.bayes import BayesFit, FitConfig

__all__ = [
    "BINARY_METHODS",
    "ORDINAL_METHODS",
    "SCORE_METHODS",
    "responses_to_cells",
    "fit_study",
    "check_fit_matches",
    "check_fit_level",
]

BINARY_METHODS: tuple[str, ...] = (Method.IMPLICIT.value, Method.ABLATED.value)
ORDINAL_METHODS: tuple[str, ...] = (Method.EXPLICIT.value, Method.REFLECTION.value)
SCORE_METHODS: tuple[str, ...] = (Method.LOGPROB.value, Method.EMBEDDING.value)
_CELL = ["model", "dimension", "method", "template_id", "item_id", "order"]


def responses_to_cells(study: Study | pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Split a study's answers into the model's binomial cells, Likert counts and continuous scores.

    Reads the study's views (:class:`bias_validity.analyses.study.Study`): ``ok`` for the two-way choices,
    ``likert`` for the ratings keyed towards the stereotype (its ``keyed`` column, coded by
    :mod:`bias_validity.probes.schema`) and ``scores`` for the deterministic scores (neither WEAT nor ``choice:``
    rows). :attr:`Study.cells` is this function's result, computed once.

    Parameters
    ----------
    study : Study or DataFrame
        The study, or a responses table (``bias_validity.probes.schema``) wrapped as one (:func:`as_study`).

    Returns
    -------
    dict of DataFrame
        ``binary`` (cell columns, ``k``, ``n``), ``ordinal`` (cell columns, ``level``, ``n``) and ``scores`` (cell
        columns, ``score``); cell columns are model, dimension, method, template_id, item_id, order.

    Examples
    --------
    >>> from bias_validity.probes.schema import validate_responses
    >>> rows = [dict(response_id=str(r), model="m", dimension="race", method="implicit", template_id="T1",
    ...              item_id="race-01", order="ab", session=0, rep=r, status="ok", consistent=r % 2) for r in range(3)]
    >>> cells = responses_to_cells(validate_responses(pd.DataFrame(rows)))
    >>> cells["binary"][["k", "n"]].iloc[0].tolist()
    [1, 3]
    """
    study = as_study(study)

    def labelled(rows: pd.DataFrame) -> pd.DataFrame:
        return rows.assign(**{c: rows[c].astype(str) for c in _CELL})

    ok = study.ok
    as_binary = ok["method"].isin(BINARY_METHODS) | (ok["method"].isin(ORDINAL_METHODS) & ok["likert"].isna())
    binary = labelled(ok[as_binary & ok["consistent"].notna()])
    binary = binary.assign(k=binary["consistent"].astype(int)).groupby(_CELL, as_index=False)["k"].agg(["sum", "size"])
    binary = binary.rename(columns={"sum": "k", "size": "n"})
    likert = labelled(study.likert)
    ordinal = likert.assign(level=likert["keyed"].astype(int)).groupby([*_CELL, "level"], as_index=False).size()
    ordinal = ordinal.rename(columns={"size": "n"})
    scored = labelled(study.scores)
    scores = scored.groupby(_CELL, as_index=False)["score"].mean()
    return {"binary": binary, "ordinal": ordinal, "scores": scores}


def fit_study(
    study: Study | pd.DataFrame,
    *,
    config: FitConfig | None = None,
    analysis: AnalysisConfig | None = None,
) -> BayesFit:
    """Fit the hierarchical model to a study and return derived quantities and the diagnostics gate.

    Parameters
    ----------
    study : Study or DataFrame
        The study (:func:`bias_validity.analyses.study.read_study`), or a responses table
        (``bias_validity.probes.schema``) wrapped as one. Its ``models_meta`` (the models file), where set, gives
        the ``base_vs_tuned`` contrasts: base/aligned pairs of one family and size whose models are both present.
    config : FitConfig, optional
        Sampler settings (:class:`bias_validity.psychometrics.bayes.FitConfig`; its defaults when omitted).
    analysis : AnalysisConfig, optional
        The analysis the fit serves: its ``ci`` (as the HDI mass) and ``thresholds.chance_margin`` replace the
        fit's own ``hdi_prob`` and ``chance_margin``, so the fit's intervals and its not-estimable retained shares
        follow the report's settings.

    Returns
    -------
    BayesFit
        ``quantities``: ``quantity``, ``model``, ``dimension``, ``method``, ``mean``, ``hdi_low``, ``hdi_high``,
        ``p_direction`` (``attrs``: ``hdi_prob``, ``chance_margin``, ``null_values``); ``diagnostics``; ``design``;
        ``config``.

    Notes
    -----
    The model and its calibration are described in :func:`bias_validity.psychometrics.bayes.fit_hierarchical`;
    the mapping of rows onto it in this module's docstring.
    """
    from bias_validity.analyses.models_meta import base_tuned_pairs
    from bias_validity.psychometrics.bayes import FitConfig, fit_hierarchical

    study = as_study(study)
    config = FitConfig() if config is None else config
    if analysis is not None:
        config = dataclasses.replace(config, hdi_prob=analysis.ci, chance_margin=analysis.thresholds.chance_margin)
    cells = study.cells
    if all(len(v) == 0 for v in cells.values()):
        raise ValueError("no ok answers with a stance or score to fit; check the status column of the responses")
    pairs = []
    if study.models_meta is not None:
        present = set(study.models)
        pairs = [p for p in base_tuned_pairs(study.models_meta) if set(p) <= present]
    return fit_hierarchical(
        cells["binary"],
        ordinal=cells["ordinal"],
        scores=cells["scores"],
        base_tuned=pairs,
        reversed_order=is_reversed,
        config=config,
    )


def check_fit_matches(fit: BayesFit, study: Study | pd.DataFrame, *, fit_name: str, responses_name: str) -> None:
    """Raise ValueError unless ``fit`` was fitted to exactly the cells ``study`` gives (:func:`responses_to_cells`).

    A saved fit is reused only for the answers it was fitted to: a store that gained, lost or changed answers
    since needs a new fit, or its report would mix figures from two different data sets.

    Examples
    --------
    >>> from bias_validity.psychometrics.bayes import BayesFit, index_design
    >>> rows = pd.DataFrame([dict(model="m", dimension="race", method="implicit", template_id="T1", item_id=item,
    ...                           order="ab-xy", session=0, status="ok", consistent=c, likert=None, score=None)
    ...                      for item in ("race-01", "race-02") for c in (1, 1, 0)])
    >>> cells = responses_to_cells(rows)
    >>> fit = BayesFit(idata=None, design=index_design(cells["binary"]), quantities=pd.DataFrame(),
    ...                quantity_diagnostics=pd.DataFrame(), diagnostics={})
    >>> check_fit_matches(fit, rows, fit_name="fit.nc", responses_name="db")  # the same answers: no error
    >>> check_fit_matches(fit, rows.iloc[1:], fit_name="fit.nc", responses_name="db")
    Traceback (most recent call last):
    ...
    ValueError: fit.nc was fitted to other answers than db (binary cells: 2 in the fit, 2 now, 2 differ); fit again
    """
    now = as_study(study).cells
    was = fit.design.cell_tables()
    for kind in ("binary", "ordinal", "scores"):
        fitted, current = _rows(was[kind]), _rows(now[kind])
        if fitted != current:
            raise ValueError(
                f"{fit_name} was fitted to other answers than {responses_name} ({kind} cells: "
                f"{len(fitted)} in the fit, {len(current)} now, {len(fitted ^ current)} differ); fit "
                "again"
            )


def check_fit_level(fit: BayesFit, ci: float, *, fit_name: str = "the fit") -> None:
    """Raise ValueError unless ``fit``'s HDIs are intervals at the level ``ci`` (within :func:`math.isclose`).

    One report shows every interval at one level, so a fit whose HDIs were computed at another mass (its
    ``quantities.attrs["hdi_prob"]``) is refused rather than shown beside classical intervals at ``ci``. A fit
    whose quantities record no HDI mass is taken as it is.

    Examples
    --------
    >>> from bias_validity.psychometrics.bayes import BayesFit
    >>> quantities = pd.DataFrame()
    >>> quantities.attrs["hdi_prob"] = 0.94
    >>> fit = BayesFit(idata=None, design=None, quantities=quantities, quantity_diagnostics=pd.DataFrame(),
    ...                diagnostics={})
    >>> check_fit_level(fit, 0.94, fit_name="fit.nc")  # the same level: no error
    >>> check_fit_level(fit, 0.95, fit_name="fit.nc")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: fit.nc: its HDIs are 94% intervals but the report's ci is 0.95; fit again with --ci 0.95 or report ...
    """
    level = getattr(fit, "quantities", pd.DataFrame()).attrs.get("hdi_prob")
    if level is None or math.isclose(float(level), float(ci)):
        return
    raise ValueError(
        f"{fit_name}: its HDIs are {float(level) * 100:g}% intervals but the report's ci is {ci:g}; fit again with "
        f"--ci {ci:g} or report with --ci {float(level):g}"
    )


def _rows(frame: pd.DataFrame) -> set[tuple]:
    """A cell table as a set of rows, labels as text and numbers to 9 significant digits (a saved fit's scores
    round-trip through JSON with 15)."""
    frame = frame.assign(**{c: frame[c].astype(str) for c in _CELL})
    return {
        tuple(float(f"{v:.9g}") if isinstance(v, float) else v for v in row)
        for row in frame.itertuples(index=False, name=None)
    }
