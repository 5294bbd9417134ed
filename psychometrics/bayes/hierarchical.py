"""Fit the joint hierarchical model of a study and return derived quantities with a diagnostics gate.

Three steps, each public so a benchmark runs the very code a fit runs: :func:`summarise_fit` turns one posterior into
the table of derived quantities and the diagnostics gate; :func:`fit_to_gate` samples, summarises and retries until
the gate passes or :meth:`FitConfig.retry` says stop; :func:`fit_hierarchical` builds the design and the model,
runs :func:`fit_to_gate` and returns the :class:`BayesFit`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from bias_validity.psychometrics.bayes import _arviz
from bias_validity.psychometrics.bayes._pymc import pm
from bias_validity.psychometrics.bayes.config import FitConfig
from bias_validity.psychometrics.bayes.derived import derived_draws, summarise
from bias_validity.psychometrics.bayes.design import DEFAULT_COLUMNS, Columns, Design, index_design
from bias_validity.psychometrics.bayes.diagnostics import GATE, diagnostics_gate
from bias_validity.psychometrics.bayes.funnels import Neck, funnel_necks
from bias_validity.psychometrics.bayes.identification import IDENTIFICATION, identification, prior_draws
from bias_validity.psychometrics.bayes.model import build_model, shared_centring
from bias_validity.psychometrics.bayes.ppc import posterior_predictive_check
from bias_validity.psychometrics.bayes.result import BayesFit
from bias_validity.psychometrics.bayes.sampling import SampleRun, sample

__all__ = [
    "GatedFit",
    "prior_derived_draws",
    "summarise_fit",
    "fit_to_gate",
    "fit_hierarchical",
    "retry_reason",
    "quantity_label",
]

_SUMMARY_COLUMNS = ["mean", "hdi_low", "hdi_high", "p_direction", "estimable", "reason"]
_IDENTIFICATION_COLUMNS = ["contraction", "item_contrasts", "identified"]


def prior_derived_draws(
    model: pm.Model,
    design: Design,
    *,
    base_tuned: Sequence[tuple[str, str]] = (),
    reversed_order: Callable[[str], bool] | None = None,
    seed: int = 0,
) -> np.ndarray:
    """Draws ``(chain, draw, n)`` of every derived quantity under the model's prior: what identification compares
    the posterior against (:func:`bias_validity.psychometrics.bayes.identification.identification`)."""
    _, prior = derived_draws(
        prior_draws(model, seed=seed), design, base_tuned=base_tuned, reversed_order=reversed_order, seed=seed
    )
    return prior


def summarise_fit(
    idata: object,
    design: Design,
    *,
    prior: np.ndarray,
    base_tuned: Sequence[tuple[str, str]] = (),
    reversed_order: Callable[[str], bool] | None = None,
    config: FitConfig | None = None,
) -> tuple[pd.DataFrame, dict[str, object]]:
    """The post-sampling step of a fit: derived draws, identification, summary table, sampler diagnostics, gate.

    Parameters
    ----------
    idata : InferenceData
        The posterior of :func:`bias_validity.psychometrics.bayes.build_model` on ``design``.
    design : Design
        The design the model was built on.
    prior : ndarray
        The derived quantities' prior draws (:func:`prior_derived_draws`), for identification.
    base_tuned, reversed_order
        As for :func:`fit_hierarchical`.
    config : FitConfig, optional
        The settings the posterior was sampled under: its ``seed`` seeds the new-item draws, ``hdi_prob`` is the
        HDI mass and ``chance_margin`` the band that leaves a retained share not estimable; ``draws`` and
        ``target_accept`` are recorded in the gate.

    Returns
    -------
    table : DataFrame
        One row per derived quantity: labels, ``mean``, ``hdi_low``, ``hdi_high``, ``p_direction``, ``estimable``,
        ``reason``, ``rhat``, ``ess_bulk``, ``ess_tail``, ``contraction``, ``item_contrasts``, ``identified``
        (``attrs``: ``hdi_prob``, ``chance_margin``, ``null_values``).
    gate : dict
        :func:`bias_validity.psychometrics.bayes.diagnostics_gate` of the estimable quantities (a not-estimable
        one, an R over a near-zero denominator, is reported as such, not gated) with the sampler's divergences,
        E-BFMI and tree-depth share, plus ``draws`` and ``target_accept``.
    """
    config = FitConfig() if config is None else config
    labels, draws = derived_draws(idata, design, base_tuned=base_tuned, reversed_order=reversed_order, seed=config.seed)
    ident = identification(labels, draws, prior, design)
    table = summarise(labels, draws, hdi_prob=config.hdi_prob, chance_margin=config.chance_margin)
    table = table.assign(**{c: ident[c] for c in ident})
    sampler = {
        "divergences": _arviz.divergences(idata),
        "ebfmi": _arviz.ebfmi(idata),
        "max_depth_share": _arviz.max_depth_share(idata),
    }
    gate = diagnostics_gate(table[table["estimable"]], **sampler)
    gate["draws"], gate["target_accept"] = config.draws, config.target_accept
    return table, gate


@dataclass
class GatedFit:
    """What :func:`fit_to_gate` returns: the last attempt's posterior, table and gate, and what every attempt took."""

    run: SampleRun  #: the last attempt's posterior, sampler and sampling time
    model: pm.Model  #: the model of the last attempt (a retry may have redrawn some effects non-centred)
    table: pd.DataFrame  #: :func:`summarise_fit`'s table of the last attempt
    gate: dict[str, object]  #: :func:`summarise_fit`'s gate of the last attempt
    config: FitConfig  #: the settings of the last attempt
    #: per attempt: ``draws``, ``target_accept``, ``non_centred`` (the families a retry redrew so), ``passed``,
    #: ``divergences``, ``seconds`` (sampling, and compiling where the attempt's model is new to the process)
    attempts: list[dict[str, object]] = field(default_factory=list)

    @property
    def seconds(self) -> float:
        """Compile and sampling time of every attempt."""
        return float(sum(a["seconds"] for a in self.attempts))


def fit_to_gate(
    model: pm.Model,
    design: Design,
    config: FitConfig | None = None,
    *,
    base_tuned: Sequence[tuple[str, str]] = (),
    reversed_order: Callable[[str], bool] | None = None,
    prior: np.ndarray | None = None,
    run_sampler: Callable[[pm.Model, FitConfig], SampleRun] | None = None,
    rebuild: Callable[[frozenset[str]], pm.Model] | None = None,
) -> GatedFit:
    """Sample ``model``, summarise (:func:`summarise_fit`) and retry as :meth:`FitConfig.retry` says until the gate
    passes or no retry is left; the retry loop of every fit.

    Where divergences sit at the neck of a funnel of centred shared effects
    (:func:`~bias_validity.psychometrics.bayes.funnels.funnel_necks`) and ``rebuild`` is given (the same model with
    the named families drawn non-centred, as ``build_model(design, non_centred=...)``), the next attempt first
    redraws them so at the same settings; a smaller step is the remedy only for divergences elsewhere.

    ``prior`` (the derived prior draws, :func:`prior_derived_draws`) is drawn from ``model`` when omitted.
    ``run_sampler`` draws one posterior (:func:`bias_validity.psychometrics.bayes.sample` by default); a benchmark
    may pass one that times it or reuses a compiled model, never one that changes the post-sampling step.
    ``config.max_draws=None`` samples once.
    """
    config = FitConfig() if config is None else config
    run_sampler = sample if run_sampler is None else run_sampler
    if prior is None:
        prior = prior_derived_draws(
            model, design, base_tuned=base_tuned, reversed_order=reversed_order, seed=config.seed
        )
    attempts: list[dict[str, object]] = []
    non_centred: frozenset[str] = frozenset()
    while True:
        run = run_sampler(model, config)
        table, gate = summarise_fit(
            run.idata, design, prior=prior, base_tuned=base_tuned, reversed_order=reversed_order, config=config
        )
        attempts.append(
            {
                "draws": config.draws,
                "target_accept": config.target_accept,
                "non_centred": sorted(non_centred),
                "passed": gate["passed"],
                "divergences": gate["divergences"],
                "seconds": run.seconds,
            }
        )
        necks = _necks(run, design, non_centred) if rebuild and config.max_draws is not None else []
        retry = config if necks else config.retry(divergences=gate["divergences"])
        if gate["passed"] or retry is None:
            return GatedFit(run=run, model=model, table=table, gate=gate, config=config, attempts=attempts)
        if necks:
            non_centred |= {n.family for n in necks}
            model = rebuild(non_centred)
        if config.progress:
            print(_retry_line(table, gate, config, retry, necks), file=sys.stderr, flush=True)
        config = retry


_FAMILY_NAMES = {"tmpl": "template effects", "ords": "order effects"}


def _necks(run: SampleRun, design: Design, non_centred: frozenset[str]) -> list[Neck]:
    """The funnel necks (:func:`funnel_necks`) of the shared effect families the model still draws partly centred;
    none where nothing diverged."""
    if not _arviz.divergences(run.idata):
        return []
    centred = [f for f, w in shared_centring(design).items() if w.any() and f not in non_centred]
    return funnel_necks(run.idata, centred)


def _retry_line(
    table: pd.DataFrame, gate: dict[str, object], config: FitConfig, retry: FitConfig, necks: list[Neck]
) -> str:
    """What made the fit miss its gate and what the next attempt changes."""
    if not necks:
        return f"{retry_reason(table, gate)}: {_next_attempt(config, retry)}"
    where = "; ".join(n.describe() for n in necks)
    families = " and ".join(_FAMILY_NAMES[n.family] for n in necks)
    return (
        f"{gate['divergences']} divergent transitions at small {where}: retrying with the shared {families} non-centred"
    )


def retry_reason(table: pd.DataFrame, gate: dict[str, object]) -> str:
    """What made a fit miss its gate, with the figure: "12 divergent transitions", or the worst gated quantity
    ("R-hat 1.02 on gap_explicit_implicit[tuned-1b, race]", "bulk ESS 310 on sc[base-8b, age, implicit]").

    Examples
    --------
    >>> t = pd.DataFrame({"quantity": ["sc", "gap_explicit_implicit"], "model": ["m", "m"], "dimension": ["race"] * 2,
    ...                   "method": ["implicit", ""], "rhat": [1.001, 1.03], "ess_bulk": [900.0, 500.0],
    ...                   "ess_tail": [800.0, 700.0], "estimable": True, "identified": True})
    >>> retry_reason(t, {"divergences": 0})
    'R-hat 1.03 on gap_explicit_implicit[m, race]'
    """
    if gate.get("divergences"):
        return f"{gate['divergences']} divergent transitions"
    gated = table[table["estimable"] & table.get("identified", True)]
    for column, name, worst, bad in (
        ("rhat", "R-hat", gated["rhat"].idxmax, lambda v: v > GATE["max_rhat"]),
        ("ess_bulk", "bulk ESS", gated["ess_bulk"].idxmin, lambda v: v < GATE["min_ess_bulk"]),
        ("ess_tail", "tail ESS", gated["ess_tail"].idxmin, lambda v: v < GATE["min_ess_tail"]),
    ):
        if gated.empty or not bad(gated.at[worst(), column]):
            continue
        row = gated.loc[worst()]
        value = f"{row[column]:.2f}" if column == "rhat" else f"{row[column]:.0f}"
        return f"{name} {value} on {quantity_label(row)}"
    return "the diagnostics gate was missed (E-BFMI or tree depth)"


def quantity_label(row: pd.Series) -> str:
    """A row of :func:`summarise_fit`'s table named with where it applies (its unit, trait and method columns, the
    empty ones left out): "sc[base-8b, age, implicit]", "latent_correlation[explicit~implicit]".

    Examples
    --------
    >>> quantity_label(pd.Series({"quantity": "gap_explicit_implicit", "model": "m", "dimension": "race",
    ...                           "method": ""}))
    'gap_explicit_implicit[m, race]'
    """
    where = ", ".join(str(v) for v in row.iloc[1:4] if str(v) not in ("", "nan"))
    return f"{row['quantity']}[{where}]"


def _next_attempt(config: FitConfig, retry: FitConfig) -> str:
    if retry.target_accept != config.target_accept:
        return f"retrying at target acceptance {retry.target_accept:g}"
    return f"retrying with {retry.draws} draws"


def fit_hierarchical(
    binary: pd.DataFrame,
    *,
    ordinal: pd.DataFrame | None = None,
    scores: pd.DataFrame | None = None,
    columns: Columns = DEFAULT_COLUMNS,
    base_tuned: Sequence[tuple[str, str]] = (),
    reversed_order: Callable[[str], bool] | None = None,
    config: FitConfig | None = None,
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
    reversed_order : callable, optional
        Tells from an order label whether a Likert cell is a reversed statement (ratings already keyed towards the
        stereotype); enables the ``acquiescence`` quantity.
    config : FitConfig, optional
        Sampler, chains, warm-up, draws, step-size target, retry ceiling, HDI mass and seed; the defaults of
        :class:`FitConfig` when omitted. A fit that misses the gate is sampled again as :meth:`FitConfig.retry`
        says: after divergences with smaller steps (target acceptance 0.95, then 0.99), never with more draws,
        which would not remove them; otherwise with twice the draws, up to ``config.max_draws`` per chain. Where
        the divergences sit at small SDs of centred shared template or order effects (the neck of their funnel,
        :func:`~bias_validity.psychometrics.bayes.funnels.funnel_necks`), those effects are first redrawn
        non-centred at the same settings (:func:`fit_to_gate`). The last fit is returned; ``diagnostics["draws"]``
        and ``diagnostics["target_accept"]`` say what it took.

    Returns
    -------
    BayesFit
        ``quantities`` has columns ``quantity``, the unit/trait/method columns (``model``, ``dimension``,
        ``method`` by default), ``mean``, ``hdi_low``, ``hdi_high``, ``p_direction``, and what the data identify:
        ``contraction`` (1 - posterior variance / prior variance), ``item_contrasts`` (latent correlations) and
        ``identified`` (:func:`bias_validity.psychometrics.bayes.identification.identification`); ``attrs`` holds
        ``hdi_prob``, the null values directions are judged against and the ``identification`` thresholds.
        Quantities that are not identified are reported but left out of the gate. ``diagnostics`` is the gate of
        :func:`bias_validity.psychometrics.bayes.diagnostics_gate`, plus ``draws`` (per chain, of the fit returned);
        ``config`` the settings of the fit returned; ``seconds`` the wall time of every attempt; ``ppc`` each
        group's observed SC against its replicated distribution
        (:func:`bias_validity.psychometrics.bayes.ppc.posterior_predictive_check`).

    Notes
    -----
    The model is :func:`bias_validity.psychometrics.bayes.build_model`; derived quantities are computed from the draws
    by :func:`bias_validity.psychometrics.bayes.derived_draws`, each as declared in
    :data:`bias_validity.psychometrics.estimands.ESTIMANDS`: SC per unit x trait x method for these items
    (design-averaged probability of a consistent answer) and for a new item (item effect integrated out); from the
    new-item SCs, explicit minus implicit, the ablation retained share ``(SC_abl - 0.5) / (SC_imp - 0.5)`` (not
    estimable where the implicit SC is within the chance margin) and reflection minus implicit; pairwise unit
    contrasts and tuned minus base on these items; the item-effect correlations between methods.
    Calibration (90% intervals covering the truth in 85-95% of 100+
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
    >>> fit = fit_hierarchical(sim["binary"], ordinal=sim["ordinal"], scores=sim["scores"],
    ...                        config=FitConfig(draws=300, tune=300, chains=2, seed=1, max_draws=None))
    >>> sorted(fit.quantities["quantity"].unique())
    ['ablation_retained_share', 'gap_explicit_implicit', 'latent_correlation', 'sc', 'sc_new_item']
    >>> sorted(fit.diagnostics)  # doctest: +NORMALIZE_WHITESPACE
    ['divergences', 'draws', 'failing', 'gate', 'max_depth_share', 'max_rhat', 'min_ebfmi', 'min_ess_bulk',
     'min_ess_tail', 'not_identified', 'passed', 'target_accept']
    """
    config = FitConfig() if config is None else config
    design = index_design(binary, ordinal=ordinal, scores=scores, columns=columns, unit_effects=config.unit_effects)
    known = set(design.binary_groups[columns.unit]) | set(design.ordinal_groups[columns.unit])
    unknown = sorted({u for pair in base_tuned for u in pair} - known)
    if unknown:
        raise ValueError(f"base_tuned names unknown unit(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    model = build_model(design, fused=config.fused)
    gated = fit_to_gate(
        model,
        design,
        config,
        base_tuned=base_tuned,
        reversed_order=reversed_order,
        rebuild=lambda non_centred: build_model(design, non_centred=non_centred, fused=config.fused),
    )
    table, run = gated.table, gated.run
    label_cols = ["quantity", columns.unit, columns.trait, columns.method]
    quantities = table[[*label_cols, *_SUMMARY_COLUMNS, *_IDENTIFICATION_COLUMNS]].copy()
    quantities.attrs = {**table.attrs, "identification": dict(IDENTIFICATION)}
    return BayesFit(
        idata=run.idata,
        design=design,
        quantities=quantities,
        quantity_diagnostics=table[[*label_cols, "rhat", "ess_bulk", "ess_tail"]].copy(),
        diagnostics=gated.gate,
        config=gated.config,
        seconds=gated.seconds,
        ppc=posterior_predictive_check(gated.model, run.idata, design, seed=gated.config.seed),
    )
