"""Fit the joint hierarchical model of a study and return derived quantities with a diagnostics gate."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from bias_validity.psychometrics.bayes import _arviz
from bias_validity.psychometrics.bayes.derived import derived_draws, summarise
from bias_validity.psychometrics.bayes.design import DEFAULT_COLUMNS, Columns, Design, index_design
from bias_validity.psychometrics.bayes.diagnostics import diagnostics_gate
from bias_validity.psychometrics.bayes.model import build_model
from bias_validity.psychometrics.bayes.sampling import sample

__all__ = ["BayesFit", "fit_hierarchical"]

_SUMMARY_COLUMNS = ["mean", "hdi_low", "hdi_high", "p_direction"]


@dataclass
class BayesFit:
    """A fitted study: posterior, design, derived quantities and the diagnostics gate."""

    idata: object  #: ArviZ InferenceData (0.x) or DataTree (1.x); save with :meth:`save`
    design: Design
    quantities: pd.DataFrame  #: quantity, unit, trait, method, mean, hdi_low, hdi_high, p_direction
    quantity_diagnostics: pd.DataFrame  #: the same labels with rhat, ess_bulk, ess_tail
    diagnostics: dict[str, object]  #: max_rhat, min_ess_bulk, min_ess_tail, divergences, passed, failing
    sampler: str
    seconds: float  #: wall-clock time of compile plus sampling

    def save(self, path: str) -> str:
        """Write the posterior as ArviZ netCDF and return the path."""
        return str(_arviz.save_netcdf(self.idata, path))


def fit_hierarchical(
    binary: pd.DataFrame,
    *,
    ordinal: pd.DataFrame | None = None,
    scores: pd.DataFrame | None = None,
    columns: Columns = DEFAULT_COLUMNS,
    base_tuned: Sequence[tuple[str, str]] = (),
    sampler: str = "nutpie",
    draws: int = 1000,
    tune: int = 1000,
    chains: int = 4,
    hdi_prob: float = 0.94,
    seed: int = 0,
    max_draws: int | None = None,
) -> BayesFit:
    """Fit the hierarchical model and summarise every derived quantity with its HDI and probability of direction.

    Parameters
    ----------
    binary : DataFrame
        One row per design cell (``columns.cell``) with ``k`` consistent answers out of ``n`` valid ones.
    ordinal : DataFrame, optional
        Likert answers as counts: the cell columns plus ``level`` (1-5) and ``n``.
    scores : DataFrame, optional
        Deterministic continuous scores: the cell columns plus ``score``.
    columns : Columns
        Names of the unit, trait, method, item, template and order columns.
    base_tuned : sequence of (str, str)
        Pairs (base unit, tuned unit) to contrast.
    sampler : {"nutpie", "pymc", "numpyro"}
        NUTS backend; nutpie is the default (the comparison with PyMC is ``bench/fit.py --part samplers``).
    draws, tune, chains : int
        Posterior draws and warm-up iterations per chain, and the number of chains.
    hdi_prob : float, default 0.94
        Mass of the highest-density intervals.
    seed : int
        Random seed of the sampler.
    max_draws : int, optional
        When the gate fails on R-hat or ESS alone (no divergence), sample again with twice the draws, up to this
        many per chain; the last fit is returned and ``diagnostics["draws"]`` says how many it took. Divergences
        are never sampled away: they mean the posterior's geometry is wrong, not that the chains are short.

    Returns
    -------
    BayesFit
        ``quantities`` has columns ``quantity``, the unit/trait/method columns (``model``, ``dimension``,
        ``method`` by default), ``mean``, ``hdi_low``, ``hdi_high``, ``p_direction``; ``attrs`` holds ``hdi_prob``
        and the null values directions are judged against. ``diagnostics`` is the gate of
        :func:`bias_validity.psychometrics.bayes.diagnostics_gate`, plus ``draws`` (per chain, of the fit returned).

    Notes
    -----
    The model is :func:`bias_validity.psychometrics.bayes.build_model`; derived quantities are computed from the draws
    by :func:`bias_validity.psychometrics.bayes.derived_draws`: SC per unit x trait x method (design-averaged
    probability of a consistent or agreeing answer), explicit minus implicit, ablation drop ratio
    ``(SC_imp - SC_abl) / (SC_imp - 0.5)`` (share of the above-chance SC that the instruction removes; unstable
    when the implicit SC is near chance), reflection minus implicit, pairwise unit contrasts, tuned minus base and
    the item-effect correlations between methods. Calibration (90% intervals covering the truth in 85-95% of 100+
    simulated studies) is measured by ``bench/fit.py --part coverage``.

    References
    ----------
    .. [1] Vehtari, Gelman, Simpson, Carpenter, Buerkner (2021). Rank-normalization, folding, and localization: an
       improved R-hat for assessing convergence of MCMC. Bayesian Analysis 16(2):667-718.
    .. [2] Lewandowski, Kurowicka, Joe (2009). Generating random correlation matrices based on vines and extended
       onion method. Journal of Multivariate Analysis 100(9):1989-2001.

    Examples
    --------
    >>> from bias_validity.psychometrics.bayes import simulate_study
    >>> sim = simulate_study(units=1, traits=1, items=4, templates=1, orders=1, reps=20, seed=3)
    >>> fit = fit_hierarchical(sim["binary"], ordinal=sim["ordinal"], scores=sim["scores"], draws=300, tune=300,
    ...                        chains=2, seed=1)
    >>> sorted(fit.quantities["quantity"].unique())
    ['ablation_drop_ratio', 'gap_explicit_implicit', 'latent_correlation', 'sc']
    >>> sorted(fit.diagnostics)
    ['divergences', 'draws', 'failing', 'max_rhat', 'min_ess_bulk', 'min_ess_tail', 'passed']
    """
    if not 0 < hdi_prob < 1:
        raise ValueError(f"hdi_prob must lie strictly between 0 and 1; got {hdi_prob}")
    design = index_design(binary, ordinal=ordinal, scores=scores, columns=columns)
    known = set(design.binary_groups[columns.unit]) | set(design.ordinal_groups[columns.unit])
    unknown = sorted({u for pair in base_tuned for u in pair} - known)
    if unknown:
        raise ValueError(f"base_tuned names unknown unit(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    model = build_model(design)
    while True:
        run = sample(model, sampler=sampler, draws=draws, tune=tune, chains=chains, seed=seed)
        labels, draws_arr = derived_draws(run.idata, design, base_tuned=base_tuned)
        table = summarise(labels, draws_arr, hdi_prob=hdi_prob)
        gate = diagnostics_gate(table, divergences=_arviz.divergences(run.idata))
        gate["draws"] = draws
        if gate["passed"] or gate["divergences"] or max_draws is None or 2 * draws > max_draws:
            break
        draws *= 2
    label_cols = ["quantity", columns.unit, columns.trait, columns.method]
    quantities = table[[*label_cols, *_SUMMARY_COLUMNS]].copy()
    quantities.attrs = dict(table.attrs)
    return BayesFit(
        idata=run.idata,
        design=design,
        quantities=quantities,
        quantity_diagnostics=table[[*label_cols, "rhat", "ess_bulk", "ess_tail"]].copy(),
        diagnostics=gate,
        sampler=run.sampler,
        seconds=run.seconds,
    )
