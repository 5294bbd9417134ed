"""Simulation-based calibration of the hierarchical model: truths drawn from its prior, ranks among posterior draws.

Used by the fast test (a small design that must fail when the prior is off) and by ``bench/calibration.py`` (the
demo-like sparse design and a paper-like one, hundreds of replications).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd
from scipy import stats

from bias_validity.psychometrics.bayes import _arviz
from bias_validity.psychometrics.bayes._pymc import pm
from bias_validity.psychometrics.bayes.config import FitConfig
from bias_validity.psychometrics.bayes.derived import derived_draws, summarise
from bias_validity.psychometrics.bayes.design import Design
from bias_validity.psychometrics.bayes.diagnostics import GATE, diagnostics_gate
from bias_validity.psychometrics.bayes.identification import identification
from bias_validity.psychometrics.bayes.model import build_model, shared_centring, unit_centring
from bias_validity.psychometrics.bayes.sampling import single_threaded_blas

__all__ = [
    "PARAMETER_FAMILIES",
    "SBCResult",
    "family_summary",
    "rank_uniformity",
    "sbc_quantities",
    "simulation_based_calibration",
]

_OBSERVED = {"y_binary": "k", "y_likert": "likert_counts", "y_score": "score_z"}
#: Scale parameters ranked beside the reported quantities (Modrak et al. 2023: the quantities the data inform least
#: are the ones a wrong prior shows in): the item SD of each method and the template SD.
PARAMETER_FAMILIES = {"item_sd": "chol_stds", "template_sd": "sigma_tmpl"}


@dataclass
class SBCResult:
    """Ranks of every replication's true quantities among its posterior draws, with the labels and gate verdicts."""

    labels: pd.DataFrame  #: quantity and unit/trait/method of each column of :attr:`ranks`
    ranks: np.ndarray  #: (replications, quantities) ranks in 0..:attr:`draws`
    draws: int  #: posterior draws each rank is counted among (after thinning)
    passed: np.ndarray  #: (replications,) whether each fit passed the diagnostics gate
    identified: np.ndarray  #: (replications, quantities) whether each quantity was identified in that fit
    seconds: float
    #: (replications,) NUTS's target acceptance of each kept fit: above the first where it was retried after
    #: divergences, as a fit is (:meth:`FitConfig.retry`)
    target_accept: np.ndarray | None = None
    #: per replication, the figures its gate read (:data:`GATE`'s keys: worst R-hat and ESS over the gated
    #: quantities, divergences, lowest E-BFMI, share at maximum tree depth), ``failing`` and the quantity families
    #: of the gated quantity with the highest R-hat (``rhat_family``) and the lowest bulk or tail ESS
    #: (``ess_family``): why a fit failed, where it did
    gates: list[dict[str, object]] = field(default_factory=list)

    def family_summary(self, *, bins: int = 10) -> dict[str, dict[str, float]]:
        """Per quantity family: rank-uniformity p-values, coverage of the central 50% and 90% intervals, ranks
        (:func:`family_summary`)."""
        return family_summary(self.labels, self.ranks, self.draws, bins=bins)


def _gate_record(gate: dict[str, object], gated: pd.DataFrame) -> dict[str, object]:
    """The gate's figures of one replication and the families of its worst-converged ``gated`` quantities."""
    ess = gated[["ess_bulk", "ess_tail"]].min(axis=1)
    return {
        **{key: gate[key] for key in GATE},
        "failing": gate["failing"],
        "rhat_family": gated["quantity"].loc[gated["rhat"].idxmax()] if gated["rhat"].notna().any() else "",
        "ess_family": gated["quantity"].loc[ess.idxmin()] if ess.notna().any() else "",
    }


def family_summary(
    labels: pd.DataFrame, ranks: np.ndarray, draws: int, *, bins: int = 10
) -> dict[str, dict[str, float]]:
    """Per quantity family of ``ranks`` (replications x quantities, labelled by ``labels["quantity"]``, each in
    ``0..draws``): rank-uniformity p-values, coverage of the central 50% and 90% intervals, ranks.

    ``p_uniform`` tests all the family's ranks at once, as if independent. The quantities of one replication
    share parameters (the gaps of three models share the items' effects: in a data-rich design their ranks
    correlate at about 0.9), so this test can reject a calibrated family. Two tests hold under any dependence
    within a replication, since replications are independent: ``p_uniform_per_quantity`` tests each quantity's
    ranks across replications and takes the smallest p-value times the family's number of quantities
    (Bonferroni), and ``p_uniform_one_per_replication`` tests one rank per replication (its ``r mod n``-th of
    the family's ``n`` quantities).
    Coverage is read off the ranks: the truth lies in the central ``q`` interval of the draws when its
    normalised rank ``r / draws`` lies within ``(1 - q) / 2`` of one half.
    """
    out = {}
    replication = np.arange(len(ranks))
    for family in dict.fromkeys(labels["quantity"]):
        columns = np.flatnonzero((labels["quantity"] == family).to_numpy())
        flat = ranks[:, columns].ravel()
        u = (flat + 0.5) / (draws + 1)
        one = ranks[replication, columns[replication % len(columns)]]
        out[family] = {
            "p_uniform": rank_uniformity(flat, draws, bins=bins),
            "p_uniform_per_quantity": min(
                1.0, len(columns) * min(rank_uniformity(ranks[:, c], draws, bins=bins) for c in columns)
            ),
            "p_uniform_one_per_replication": rank_uniformity(one, draws, bins=bins),
            "coverage_50": float(np.mean(np.abs(u - 0.5) <= 0.25)),
            "coverage_90": float(np.mean(np.abs(u - 0.5) <= 0.45)),
            "ranks": int(flat.size),
        }
    return out


def rank_uniformity(ranks: np.ndarray, draws: int, *, bins: int = 10) -> float:
    """p-value of Pearson's chi-square test that ranks in ``0..draws`` are uniform, over ``bins`` equal bins.

    The histogram test of Talts et al. (2018), section 4.1; ``draws + 1`` must be a multiple of ``bins`` so each bin
    holds the same number of possible ranks.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> rank_uniformity(rng.integers(0, 100, 2000), 99) > 0.01
    True
    >>> rank_uniformity(np.r_[np.zeros(100), np.full(100, 99), rng.integers(0, 100, 200)], 99) < 1e-6
    True
    """
    if (draws + 1) % bins:
        raise ValueError(f"{draws + 1} possible ranks do not split into {bins} equal bins")
    counts = np.bincount(np.asarray(ranks, dtype=int) * bins // (draws + 1), minlength=bins)
    return float(stats.chisquare(counts).pvalue)


def sbc_quantities(idata: object, design: Design, *, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    """Labels and draws ``(chain, draw, n)`` of what SBC ranks: every derived quantity
    (:func:`bias_validity.psychometrics.bayes.derived_draws`, its new-item draws seeded by ``seed``) and the scale
    parameters of :data:`PARAMETER_FAMILIES` (``method`` names the method of an item SD)."""
    labels, draws = derived_draws(idata, design, seed=seed)
    extra_labels, extra = [labels], [draws]
    cols = design.columns
    for family, var in PARAMETER_FAMILIES.items():
        values = _arviz.posterior_array(idata, var).reshape(*draws.shape[:2], -1)
        methods = design.methods if values.shape[-1] == len(design.methods) else [""] * values.shape[-1]
        extra_labels.append(pd.DataFrame({"quantity": family, cols.unit: "", cols.trait: "", cols.method: methods}))
        extra.append(values)
    return pd.concat(extra_labels, ignore_index=True), np.concatenate(extra, axis=-1)


def with_answers(design: Design, data: dict[str, np.ndarray]) -> Design:
    """The design with simulated answers in place of its own: binary successes ``k``, Likert ``likert_counts`` and
    standardised scores ``score_z`` (the names of :func:`build_model`'s data containers), each where given."""
    changes: dict[str, object] = {}
    if "k" in data:
        changes["binary"] = design.binary.assign(k=np.asarray(data["k"], dtype=int))
    if "likert_counts" in data:
        changes["ordinal_counts"] = np.asarray(data["likert_counts"], dtype=int)
    if "score_z" in data:
        changes["scores"] = design.scores.assign(z=np.asarray(data["score_z"], dtype=float))
    return replace(design, **changes)


def simulation_based_calibration(
    design: Design,
    *,
    replications: int,
    draws: int = 400,
    tune: int = 400,
    chains: int = 2,
    ranks_of: int = 99,
    seed: int = 0,
    generating_scale: float = 1.0,
    build: Callable[..., pm.Model] = build_model,
    progress: Callable[[int, SBCResult], None] | None = None,
) -> SBCResult:
    """Draw ``replications`` truths and data sets from the model's prior, fit each, rank the truths.

    Parameters
    ----------
    design : Design
        The design every replication shares (cells, trials per cell); the answers are simulated.
    replications : int
        Simulated studies.
    draws, tune, chains : int
        NUTS settings of each fit (nutpie).
    ranks_of : int
        Posterior draws each rank is counted among, evenly thinned from ``draws * chains`` (Talts et al.: thinning
        to about the effective sample size keeps autocorrelation from bending the histogram).
    seed : int
        Seed of the prior draws and of the fits.
    generating_scale : float
        ``prior_scale`` of the model that generates truths and data; the fitted model keeps 1. A value other than 1
        is a deliberately wrong prior, which the ranks must reveal.
    build : callable
        The model builder (:func:`bias_validity.psychometrics.bayes.build_model`).
    progress : callable, optional
        Called after each replication with its index and the result so far.

    Returns
    -------
    SBCResult

    Notes
    -----
    For each replication ``theta ~ p(theta)``, ``y ~ p(y | theta)`` and the rank of every derived quantity
    ``f(theta)`` among ``f(theta_post)`` of the posterior draws is uniform on ``0..ranks_of`` when the sampler
    computes the posterior of this model exactly [1]_ [2]_. The test quantities (:func:`sbc_quantities`) are
    every reported quantity, so every reported family is checked, and the item and template SDs, which a wrong
    prior scale moves most. Truths come
    from forward draws of the model itself (``pymc.sample_prior_predictive``), with the trial counts of the design.
    Each replication is fitted with the model built from its own answers, as a fit builds it, since their spread
    decides which deviations, wordings and orders are drawn centred
    (:func:`~bias_validity.psychometrics.bayes.model.unit_centring`,
    :func:`~bias_validity.psychometrics.bayes.model.shared_centring`); one compiled model serves every replication
    of the same centring (weights to one decimal). With the model of the design's own answers instead, a
    paper-like replication whose answers held large deviations took 199.9 leapfrog steps per draw and made 37
    divergences, against 68.0 and 8 with its own. A fit that diverged is sampled again at the next target acceptance,
    as :meth:`FitConfig.retry` retries a fit (:attr:`SBCResult.target_accept`), so the ranks calibrate
    what a fit reports; both attempts target the same posterior. Fits that fail the gate are counted
    (:attr:`SBCResult.passed`), never left out: dropping them would condition the ranks on the data.

    References
    ----------
    .. [1] Talts, S., Betancourt, M., Simpson, D., Vehtari, A. & Gelman, A. (2018). Validating Bayesian inference
       algorithms with simulation-based calibration. arXiv:1804.06788.
    .. [2] Modrák, M., Moon, A. H., Kim, S., Bürkner, P., Huurre, N., Faltejsková, K., Gelman, A. & Vehtari, A.
       (2023). Simulation-based calibration checking for Bayesian computation: the choice of test quantities shapes
       sensitivity. Bayesian Analysis.
    """
    import time

    import nutpie

    start = time.perf_counter()
    if (draws * chains) < ranks_of:
        raise ValueError(f"{draws * chains} posterior draws cannot be thinned to {ranks_of}")
    generator = build(design, prior_scale=generating_scale)
    with generator:
        sims = pm.sample_prior_predictive(draws=replications, random_seed=seed)
    truth_labels, truths = sbc_quantities(_arviz.prior_as_posterior(sims), design, seed=seed)
    truths = truths[0]  # (replications, quantities)
    observed = {
        name: np.asarray(_arviz.prior_predictive_array(sims, var))
        for var, name in _OBSERVED.items()
        if var in generator.named_vars
    }
    compiled: dict[bytes, object] = {}  # compiled models by the centring of the data they were built from
    pick = np.linspace(0, draws * chains - 1, ranks_of).round().astype(int)
    ranks = np.zeros((replications, len(truth_labels)), dtype=int)
    identified = np.zeros((replications, len(truth_labels)), dtype=bool)
    passed = np.zeros(replications, dtype=bool)
    target = np.zeros(replications)
    result = SBCResult(truth_labels, ranks, ranks_of, passed, identified, 0.0, target)
    for r in range(replications):
        data = {name: values[r].astype(values.dtype) for name, values in observed.items()}
        # a fit builds its model from its own answers, whose spread sets which effects are drawn centred
        own = with_answers(design, data)
        weights = [*unit_centring(own).values(), *shared_centring(own).values()]
        # to one decimal: partial weights vary continuously, and any weight gives the same posterior (only its
        # geometry differs), so replications within 0.05 of one another share a compiled model
        centring = np.round(np.concatenate([np.zeros(0), *weights]), 1).tobytes()
        if centring not in compiled:
            compiled[centring] = nutpie.compile_pymc_model(build(own))
        config: FitConfig | None = FitConfig(draws=draws, tune=tune, chains=chains, max_draws=draws)
        while config is not None:  # max_draws=draws: retried only at smaller steps, after divergences
            with single_threaded_blas():
                idata = nutpie.sample(
                    compiled[centring].with_data(**data),
                    draws=draws,
                    tune=tune,
                    chains=chains,
                    seed=seed + r,
                    target_accept=config.target_accept,
                    progress_bar=False,
                    save_warmup=False,
                )
            target[r] = config.target_accept
            divergences = _arviz.divergences(idata)
            config = config.retry(divergences=divergences) if divergences else None
        # the new-item SCs draw the items' mean (derived.cell_scores): a seed per replication, none the truths'
        # so the draws a truth is ranked among are independent of it and of the other replications' draws
        labels, post = sbc_quantities(idata, design, seed=seed + 1 + r)
        flat = post.reshape(-1, post.shape[-1])[pick]
        ranks[r] = (flat < truths[r]).sum(axis=0)
        ident = identification(labels, post, truths[None], design)
        identified[r] = ident["identified"].to_numpy()
        reported = (~labels["quantity"].isin(list(PARAMETER_FAMILIES))).to_numpy()
        table = summarise(labels[reported], post[..., reported]).join(ident[reported])
        gate = diagnostics_gate(
            table[table["estimable"]],
            divergences=divergences,
            ebfmi=_arviz.ebfmi(idata),
            max_depth_share=_arviz.max_depth_share(idata),
        )
        passed[r] = gate["passed"]
        result.gates.append(_gate_record(gate, table[table["estimable"] & table["identified"].astype(bool)]))
        result.seconds = time.perf_counter() - start
        if progress is not None:
            progress(r, result)
    return result
