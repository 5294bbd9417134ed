"""Fit the hierarchical Bayesian model to a responses table: which rows enter how, and the result the reports use.

Mapping (an explicit, documented choice):

- ``implicit`` and ``ablated`` (sampled two-way choices): ``consistent`` of ``ok`` rows, counted per design cell
  (model x dimension x method x template x item x order; sessions and repetitions pooled) -> binomial cells.
- ``explicit`` and ``reflection`` (Likert): ``likert`` of ``ok`` rows counted per level -> cumulative-logit cells,
  keyed towards the stereotype: a reversed statement's rating ``r`` enters as ``6 - r`` (its ``order`` carries the
  reversal, so the order effect absorbs acquiescence). Their SC is the probability of a keyed rating of 4-5 among
  ratings that take a side (not 3), on the same probability scale as the binary SCs (``probes.schema``'s
  ``likert_consistent``). Rows with ``consistent`` but no ``likert`` (imported tables) enter as binomial cells.
- ``logprob`` and ``embedding`` (deterministic): ``score`` of ``ok`` rows, averaged over sessions and repetitions
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
:func:`check_fit_matches` before it is reused.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from bias_validity.probes.schema import CHOICE_PREFIX, WEAT_ITEM, Method, Status, is_reversed

if TYPE_CHECKING:
    from bias_validity.psychometrics.bayes import BayesFit, FitConfig

__all__ = [
    "BINARY_METHODS",
    "ORDINAL_METHODS",
    "SCORE_METHODS",
    "responses_to_cells",
    "fit_responses",
    "check_fit_matches",
]

BINARY_METHODS: tuple[str, ...] = (Method.IMPLICIT.value, Method.ABLATED.value)
ORDINAL_METHODS: tuple[str, ...] = (Method.EXPLICIT.value, Method.REFLECTION.value)
SCORE_METHODS: tuple[str, ...] = (Method.LOGPROB.value, Method.EMBEDDING.value)
_CELL = ["model", "dimension", "method", "template_id", "item_id", "order"]


def responses_to_cells(responses: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Split a responses table into the model's binomial cells, Likert counts and continuous scores.

    Parameters
    ----------
    responses : DataFrame
        The responses table (``bias_validity.probes.schema``).

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
    missing = [c for c in (*_CELL, "status", "consistent", "likert", "score") if c not in responses.columns]
    if missing:
        raise ValueError(f"responses lack column(s) {', '.join(missing)}; validate with probes.schema first")
    ok = responses[responses["status"] == Status.OK.value]
    ok = ok.assign(**{c: ok[c].astype(str) for c in _CELL})
    likert = ok[ok["method"].isin(ORDINAL_METHODS) & ok["likert"].notna()]
    keyed = likert["likert"].astype(int).where(~likert["order"].map(is_reversed), 6 - likert["likert"].astype(int))
    likert = likert.assign(likert=keyed)
    as_binary = ok["method"].isin(BINARY_METHODS) | (ok["method"].isin(ORDINAL_METHODS) & ok["likert"].isna())
    binary = ok[as_binary & ok["consistent"].notna()]
    binary = binary.assign(k=binary["consistent"].astype(int)).groupby(_CELL, as_index=False)["k"].agg(["sum", "size"])
    binary = binary.rename(columns={"sum": "k", "size": "n"})
    ordinal = likert.assign(level=likert["likert"].astype(int)).groupby([*_CELL, "level"], as_index=False).size()
    ordinal = ordinal.rename(columns={"size": "n"})
    scored = ok[ok["method"].isin(SCORE_METHODS) & ok["score"].notna() & (ok["item_id"] != WEAT_ITEM)]
    scored = scored[~scored["template_id"].str.startswith(CHOICE_PREFIX)]
    scores = scored.assign(score=scored["score"].astype(float)).groupby(_CELL, as_index=False)["score"].mean()
    return {"binary": binary, "ordinal": ordinal, "scores": scores}


def fit_responses(
    responses: pd.DataFrame, *, models_meta: pd.DataFrame | None = None, config: FitConfig | None = None
) -> BayesFit:
    """Fit the hierarchical model to a responses table and return derived quantities and the diagnostics gate.

    Parameters
    ----------
    responses : DataFrame
        The responses table (``bias_validity.probes.schema``), e.g. ``bias_validity.probes.store.read_responses``.
    models_meta : DataFrame, optional
        Model metadata (:func:`bias_validity.analyses.models_meta.read_models_meta`); its base/aligned pairs of one
        family and size give the ``base_vs_tuned`` contrasts.
    config : FitConfig, optional
        Sampler settings (:class:`bias_validity.psychometrics.bayes.FitConfig`; its defaults when omitted).

    Returns
    -------
    BayesFit
        ``quantities``: ``quantity``, ``model``, ``dimension``, ``method``, ``mean``, ``hdi_low``, ``hdi_high``,
        ``p_direction`` (``attrs``: ``hdi_prob``, ``null_values``); ``diagnostics``; ``design``; ``config``.

    Notes
    -----
    The model and its calibration are described in :func:`bias_validity.psychometrics.bayes.fit_hierarchical`;
    the mapping of rows onto it in this module's docstring.
    """
    from bias_validity.analyses.models_meta import base_tuned_pairs
    from bias_validity.psychometrics.bayes import fit_hierarchical

    cells = responses_to_cells(responses)
    if all(len(v) == 0 for v in cells.values()):
        raise ValueError("no ok answers with a stance or score to fit; check the status column of the responses")
    pairs = []
    if models_meta is not None:
        present = set(responses["model"].astype(str))
        pairs = [p for p in base_tuned_pairs(models_meta) if set(p) <= present]
    return fit_hierarchical(
        cells["binary"],
        ordinal=cells["ordinal"],
        scores=cells["scores"],
        base_tuned=pairs,
        reversed_order=is_reversed,
        config=config,
    )


def check_fit_matches(fit: BayesFit, responses: pd.DataFrame, *, fit_name: str, responses_name: str) -> None:
    """Raise ValueError unless ``fit`` was fitted to exactly the cells ``responses`` give (:func:`responses_to_cells`).

    A saved fit is reused only for the answers it was fitted to: a store that gained, lost or changed answers
    since needs a new fit, or its report would mix figures from two different data sets.

    Examples
    --------
    >>> from bias_validity.psychometrics.bayes import BayesFit, index_design
    >>> rows = pd.DataFrame([dict(model="m", dimension="race", method="implicit", template_id="T1", item_id=item,
    ...                           order="ab-xy", status="ok", consistent=c, likert=None, score=None)
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
    now = responses_to_cells(responses)
    was = fit.design.cell_tables()
    for kind in ("binary", "ordinal", "scores"):
        fitted, current = _rows(was[kind]), _rows(now[kind])
        if fitted != current:
            raise ValueError(
                f"{fit_name} was fitted to other answers than {responses_name} ({kind} cells: "
                f"{len(fitted)} in the fit, {len(current)} now, {len(fitted ^ current)} differ); fit "
                "again"
            )


def _rows(frame: pd.DataFrame) -> set[tuple]:
    """A cell table as a set of rows, labels as text and numbers to 9 significant digits (a saved fit's scores
    round-trip through JSON with 15)."""
    frame = frame.assign(**{c: frame[c].astype(str) for c in _CELL})
    return {
        tuple(float(f"{v:.9g}") if isinstance(v, float) else v for v in row)
        for row in frame.itertuples(index=False, name=None)
    }
