"""How a hierarchical fit samples and summarises: one settings object whose defaults are declared here, once.

Light on purpose (no PyMC, no pandas): the command line reads its defaults to build ``--help``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from bias_validity.psychometrics.estimands import Thresholds

__all__ = ["SAMPLERS", "TARGET_ACCEPT_STEPS", "WARM_UP", "FitConfig"]

#: NUTS implementations a fit accepts; the first is the default (``bench/fit.py --part samplers`` compares them).
SAMPLERS: tuple[str, ...] = ("nutpie", "pymc", "numpyro")

#: Warm-up iterations per chain of each backend, where a fit does not set its own (:attr:`FitConfig.tune`): nutpie's
#: own default, 400 (its mass matrix is fitted to the gradients as well as the draws, minimising a Fisher divergence
#: [1]_, and settles sooner than Stan's windows); Stan's 1000 for the windowed adaptation of PyMC and numpyro. On the
#: paper-scale workload (``bench/fit.py``, seeds 1-3) nutpie sampled in 44-48 s after 400 against 59-61 s after 1000,
#: min ESS 1871-2274 against 1595-2276, 0 divergences either way.
#:
#: .. [1] Seyboldt, A., Carlson, E. L. & Carpenter, B. (2026). Preconditioning Hamiltonian Monte Carlo by minimizing
#:    Fisher divergence. arXiv:2603.18845.
WARM_UP: dict[str, int] = {"nutpie": 400, "pymc": 1000, "numpyro": 1000}

#: Target acceptance rates of NUTS's step-size adaptation: the first is the default, the others what a fit that
#: diverged is retried at. A divergence means the step is too coarse for the posterior's curvature somewhere; a
#: smaller step (a higher target) is the remedy of Stan's manual (``adapt_delta``), more draws are not.
TARGET_ACCEPT_STEPS: tuple[float, ...] = (0.8, 0.95, 0.99)


@dataclass(frozen=True)
class FitConfig:
    """Settings of one fit: NUTS backend, chains, warm-up and draws, step-size target, retries, HDI mass, chance
    margin and seed.

    The defaults are the toolkit's: 4 chains of 1000 draws after the backend's warm-up (:data:`WARM_UP`: 400 with
    nutpie) at a target acceptance of 0.8. A fit that misses the diagnostics gate is retried (:meth:`retry`): after
    divergences at the next target of :data:`TARGET_ACCEPT_STEPS` (0.95, then 0.99), otherwise on R-hat or ESS with
    twice the draws (up to 16000 per chain). The gate reads only identified quantities; the latent correlations of
    sparsely answered methods, which once needed 2000-16000 draws to reach ESS 400, are mostly prior on the demo store
    and labelled not identified, so 1000 draws suffice there. A target of 0.8 takes half the leapfrog steps of 0.95 (15
    against 31 per draw on the paper-scale workload, 0 divergences on the demo store's 5 seeds and there).

    Examples
    --------
    >>> FitConfig(draws=500).retry().draws
    1000
    >>> FitConfig(draws=16000).retry() is None
    True
    >>> after = FitConfig().retry(divergences=3)
    >>> after.target_accept, after.draws
    (0.95, 1000)
    >>> FitConfig(target_accept=0.99).retry(divergences=1) is None
    True
    >>> FitConfig(sampler="stan")
    Traceback (most recent call last):
    ...
    ValueError: unknown sampler 'stan'; valid samplers are nutpie, pymc, numpyro
    """

    sampler: str = SAMPLERS[0]
    chains: int = 4
    tune: int | None = None  #: warm-up iterations per chain; None: the backend's own (:data:`WARM_UP`)
    draws: int = 1000  #: posterior draws per chain
    max_draws: int | None = 16000  #: most draws per chain a retry may use; None fits once
    target_accept: float = TARGET_ACCEPT_STEPS[0]  #: NUTS's target acceptance rate (step-size adaptation)
    hdi_prob: float = 0.95  #: mass of the highest-density intervals (AnalysisConfig.ci's default)
    #: an implicit new-item SC whose HDI overlaps 0.5 +/- this margin leaves the retained share not estimable
    chance_margin: float = Thresholds.chance_margin
    seed: int = 0
    #: a line on stderr when sampling starts, every 30 s while it runs (nutpie: draws done, time left), and at the end
    progress: bool = False
    #: each unit (model) its own deviations from the shared item, template and order effects and its own Likert
    #: cutpoint spacing where several units answered a method (:func:`bias_validity.psychometrics.bayes.index_design`);
    #: False shares them across units (faster, but it cannot fit units that react differently to the same wording)
    unit_effects: bool = True

    def __post_init__(self) -> None:
        if self.sampler not in SAMPLERS:
            raise ValueError(f"unknown sampler {self.sampler!r}; valid samplers are {', '.join(SAMPLERS)}")
        if self.draws < 1 or self.chains < 1 or self.warm_up < 0:
            raise ValueError(
                f"draws and chains must be >= 1 and tune >= 0; got {self.draws}, {self.chains}, {self.tune}"
            )
        if self.max_draws is not None and self.max_draws < 1:
            raise ValueError(f"max_draws must be >= 1 or None (fit once); got {self.max_draws}")
        if not 0 < self.hdi_prob < 1:
            raise ValueError(f"hdi_prob must lie strictly between 0 and 1; got {self.hdi_prob}")
        if not 0 <= self.chance_margin <= 1:
            raise ValueError(f"chance_margin must be a number in [0, 1]; got {self.chance_margin}")
        if not 0 < self.target_accept < 1:
            raise ValueError(f"target_accept must lie strictly between 0 and 1; got {self.target_accept}")

    @property
    def warm_up(self) -> int:
        """Warm-up iterations per chain: :attr:`tune`, else the backend's own (:data:`WARM_UP`).

        >>> FitConfig().warm_up, FitConfig(sampler="pymc").warm_up, FitConfig(sampler="pymc", tune=200).warm_up
        (400, 1000, 200)
        """
        return WARM_UP[self.sampler] if self.tune is None else self.tune

    @property
    def fused(self) -> bool:
        """Whether the sampler's backend runs the model's fused cell kernels (``build_model(fused=...)``): numba
        (nutpie) and PyTensor's C backend (PyMC) do; JAX (numpyro) has no implementation of them."""
        return self.sampler != "numpyro"

    def retry(self, divergences: int = 0) -> FitConfig | None:
        """The settings of the next attempt after a fit that missed the gate, or None when there is none.

        After ``divergences`` the same draws at the next higher target of :data:`TARGET_ACCEPT_STEPS` (None past the
        last: a posterior that still diverges at 0.99 needs a better model, not more sampling); otherwise twice the
        draws (None past :attr:`max_draws`). ``max_draws=None`` fits once.
        """
        if self.max_draws is None:
            return None
        if divergences:
            higher = [t for t in TARGET_ACCEPT_STEPS if t > self.target_accept]
            return dataclasses.replace(self, target_accept=higher[0]) if higher else None
        if 2 * self.draws > self.max_draws:
            return None
        return dataclasses.replace(self, draws=2 * self.draws)

    def to_dict(self) -> dict[str, object]:
        """The settings as a plain dict (saved with every fit), with the warm-up the fit used.

        >>> FitConfig().to_dict()["tune"]
        400
        """
        return dataclasses.asdict(self) | {"tune": self.warm_up}
