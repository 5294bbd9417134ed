"""Fit the hierarchical Bayesian model to a responses table: which rows enter how, and the result the reports use.

Mapping (an explicit, documented choice):

- ``implicit`` and ``ablated`` (sampled two-way choices): ``consistent`` of ``ok`` rows, counted per design cell
  (model x dimension x method x template x item x order; sessions and repetitions pooled) -> binomial cells.
- ``explicit`` and ``reflection`` (Likert): ``likert`` of ``ok`` rows counted per level -> cumulative-logit cells;
  their SC is P(likert >= 4) on the same probability scale. Rows with ``consistent`` but no ``likert`` (imported
  tables) enter as binomial cells instead.
- ``logprob`` and ``embedding`` (deterministic): ``score`` of ``ok`` rows, averaged over sessions and repetitions
  and standardised within method x template, as Gaussian measurements of the same item effects (so they inform the
  latent correlation without pretending to be sampled answers); whole-set rows (``item_id`` ``WEAT``) are left out.
  Closed-set ``choice:`` log-odds are kept under ``logprob``, standardised within their own template. A method
  seen on fewer than two items gets no item effect (and a score method then drops out), so no latent correlation
  is reported for it. Deterministic methods get no ``sc`` row here: their raw shares are in the SC table.
- Non-``ok`` answers (refusal, unparseable, invalid_choice, error) are excluded from the likelihood: treating them
  as a stance would be wrong, so SCs are conditional on a valid answer; their rates per model and method are
  reported in ``status_rates`` next to the posterior.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from bias_validity.probes.schema import Method, Status

__all__ = ["BINARY_METHODS", "ORDINAL_METHODS", "SCORE_METHODS", "StudyFit", "responses_to_cells", "status_rates",
           "fit_responses", "load_fit"]  # fmt: skip

BINARY_METHODS: tuple[str, ...] = (Method.IMPLICIT.value, Method.ABLATED.value)
ORDINAL_METHODS: tuple[str, ...] = (Method.EXPLICIT.value, Method.REFLECTION.value)
SCORE_METHODS: tuple[str, ...] = (Method.LOGPROB.value, Method.EMBEDDING.value)
#: Draws and warm-up per chain of :func:`fit_responses` and ``bias-validity fit``, and the most draws a fit that
#: misses the gate on R-hat or ESS alone is retried with (doubling): on the demo store the latent correlations of
#: the sparsely answered methods need 2000-16000 draws to reach ESS 400, depending on the seed.
DEFAULT_DRAWS, DEFAULT_TUNE, DEFAULT_MAX_DRAWS = 4000, 2000, 16000
_CELL = ["model", "dimension", "method", "template_id", "item_id", "order"]
_WHOLE_SET = "WEAT"


@dataclass
class StudyFit:
    """The Bayesian fit of a study, as :func:`bias_validity.analyses.report.build_report` and the CLI consume it."""

    quantities: pd.DataFrame  #: quantity, model, dimension, method, mean, hdi_low, hdi_high, p_direction
    diagnostics: dict[str, object]  #: max_rhat, min_ess_bulk, min_ess_tail, divergences, passed, failing
    status_rates: pd.DataFrame  #: model, method, status, n, rate
    idata: object | None = None  #: the posterior (ArviZ); None when loaded without it
    design: object | None = None  #: the indexed design (psychometrics.bayes.Design); None when loaded from a file
    sampler: str = ""
    seconds: float = float("nan")

    def save(self, path: str | Path) -> Path:
        """Write the posterior as ArviZ netCDF, with quantities and diagnostics in its attributes."""
        from bias_validity.psychometrics.bayes._arviz import save_netcdf

        if self.idata is None:
            raise ValueError("this fit has no posterior to save")
        _attach(self.idata, self)
        return save_netcdf(self.idata, path)


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
    as_binary = ok["method"].isin(BINARY_METHODS) | (ok["method"].isin(ORDINAL_METHODS) & ok["likert"].isna())
    binary = ok[as_binary & ok["consistent"].notna()]
    binary = binary.assign(k=binary["consistent"].astype(int)).groupby(_CELL, as_index=False)["k"].agg(["sum", "size"])
    binary = binary.rename(columns={"sum": "k", "size": "n"})
    ordinal = likert.assign(level=likert["likert"].astype(int)).groupby([*_CELL, "level"], as_index=False).size()
    ordinal = ordinal.rename(columns={"size": "n"})
    scored = ok[ok["method"].isin(SCORE_METHODS) & ok["score"].notna() & (ok["item_id"] != _WHOLE_SET)]
    scores = scored.assign(score=scored["score"].astype(float)).groupby(_CELL, as_index=False)["score"].mean()
    return {"binary": binary, "ordinal": ordinal, "scores": scores}


def status_rates(responses: pd.DataFrame) -> pd.DataFrame:
    """Share of each status per model and method: ``model``, ``method``, ``status``, ``n``, ``rate``.

    Examples
    --------
    >>> df = pd.DataFrame({"model": ["m"] * 4, "method": ["implicit"] * 4, "status": ["ok", "ok", "ok", "refusal"]})
    >>> status_rates(df)["rate"].tolist()
    [0.75, 0.25]
    """
    counts = responses.groupby(["model", "method", "status"], as_index=False).size().rename(columns={"size": "n"})
    counts["rate"] = counts["n"] / counts.groupby(["model", "method"])["n"].transform("sum")
    return counts.reset_index(drop=True)


def fit_responses(
    responses: pd.DataFrame,
    *,
    models_meta: pd.DataFrame | None = None,
    sampler: str = "nutpie",
    draws: int = DEFAULT_DRAWS,
    tune: int = DEFAULT_TUNE,
    chains: int = 4,
    hdi_prob: float = 0.94,
    seed: int = 0,
    max_draws: int | None = DEFAULT_MAX_DRAWS,
) -> StudyFit:
    """Fit the hierarchical model to a responses table and return derived quantities and the diagnostics gate.

    Parameters
    ----------
    responses : DataFrame
        The responses table (``bias_validity.probes.schema``), e.g. ``bias_validity.probes.store.read_responses(path)``.
    models_meta : DataFrame, optional
        Model metadata (:func:`bias_validity.analyses.models_meta.read_models_meta`); its base/aligned pairs of one
        family and size give the ``base_vs_tuned`` contrasts.
    sampler : {"nutpie", "pymc", "numpyro"}
        NUTS backend.
    draws, tune, chains : int
        Draws and warm-up per chain, and chains.
    hdi_prob : float, default 0.94
        HDI mass.
    seed : int
        Sampler seed.
    max_draws : int, optional
        Retry a fit that misses the gate on R-hat or ESS alone with twice the draws, up to this many per chain
        (:func:`bias_validity.psychometrics.bayes.fit_hierarchical`); None fits once.

    Returns
    -------
    StudyFit
        ``quantities``: ``quantity``, ``model``, ``dimension``, ``method``, ``mean``, ``hdi_low``, ``hdi_high``,
        ``p_direction`` (``attrs``: ``hdi_prob``, ``null_values``); ``diagnostics``; ``status_rates``.

    Notes
    -----
    The model and its calibration are described in :func:`bias_validity.psychometrics.bayes.fit_hierarchical`; the
    mapping of rows onto it in this module's docstring.
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
    fit = fit_hierarchical(
        cells["binary"],
        ordinal=cells["ordinal"],
        scores=cells["scores"],
        base_tuned=pairs,
        sampler=sampler,
        draws=draws,
        tune=tune,
        chains=chains,
        hdi_prob=hdi_prob,
        seed=seed,
        max_draws=max_draws,
    )
    return StudyFit(
        fit.quantities, fit.diagnostics, status_rates(responses), fit.idata, fit.design, fit.sampler, fit.seconds
    )


def load_fit(path: str | Path, responses: pd.DataFrame | None = None) -> StudyFit:
    """Read a fit saved by :meth:`StudyFit.save` (``bias-validity fit --out``); ``responses`` refreshes the rates."""
    import json

    from bias_validity.psychometrics.bayes._arviz import load_netcdf, posterior_attrs

    idata = load_netcdf(path)
    attrs = posterior_attrs(idata)
    if "bias_validity_quantities" not in attrs:
        raise ValueError(f"{path}: not a posterior written by bias-validity fit (no derived quantities stored)")
    quantities = pd.read_json(_io(attrs["bias_validity_quantities"]), orient="table")
    quantities.attrs = json.loads(attrs["bias_validity_quantities_attrs"])
    diagnostics = json.loads(attrs["bias_validity_diagnostics"])
    rates = status_rates(responses) if responses is not None else pd.read_json(_io(attrs["bias_validity_status"]),
                                                                               orient="table")  # fmt: skip
    return StudyFit(quantities, diagnostics, rates, idata, None, str(attrs.get("bias_validity_sampler", "")))


def _io(text: str) -> object:
    import io

    return io.StringIO(text)


def _attach(idata: object, fit: StudyFit) -> None:
    import json

    from bias_validity.psychometrics.bayes._arviz import set_posterior_attrs

    set_posterior_attrs(
        idata,
        bias_validity_quantities=fit.quantities.to_json(orient="table", index=False),
        bias_validity_quantities_attrs=json.dumps(fit.quantities.attrs),
        bias_validity_diagnostics=json.dumps(fit.diagnostics),
        bias_validity_status=fit.status_rates.to_json(orient="table", index=False),
        bias_validity_sampler=fit.sampler,
    )
