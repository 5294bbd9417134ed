"""How a hierarchical fit samples and summarises: one settings object whose defaults are declared here, once.

Light on purpose (no PyMC, no pandas): the command line reads its defaults to build ``--help``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

__all__ = ["SAMPLERS", "FitConfig"]

#: NUTS implementations a fit accepts; the first is the default (``bench/fit.py --part samplers`` compares them).
SAMPLERS: tuple[str, ...] = ("nutpie", "pymc", "numpyro")


@dataclass(frozen=True)
class FitConfig:
    """Settings of one fit: NUTS backend, chains, warm-up and draws, the retry ceiling, HDI mass and seed.

    The defaults are the toolkit's: 4 chains of 1000 draws after 1000 warm-up, retried with twice the draws (up to
    16000 per chain) when the diagnostics gate misses on R-hat or ESS alone. The gate reads only identified
    quantities; the latent correlations of sparsely answered methods, which once needed 2000-16000 draws to reach
    ESS 400, are mostly prior on the demo store and labelled not identified, so 1000 draws suffice there.

    Examples
    --------
    >>> FitConfig(draws=500).retry().draws
    1000
    >>> FitConfig(draws=16000).retry() is None
    True
    >>> FitConfig(sampler="stan")
    Traceback (most recent call last):
    ...
    ValueError: unknown sampler 'stan'; valid samplers are nutpie, pymc, numpyro
    """

    sampler: str = SAMPLERS[0]
    chains: int = 4
    tune: int = 1000  #: warm-up iterations per chain
    draws: int = 1000  #: posterior draws per chain
    max_draws: int | None = 16000  #: most draws per chain a retry may use; None fits once
    target_accept: float = 0.95
    hdi_prob: float = 0.94  #: mass of the highest-density intervals
    seed: int = 0
    progress: bool = False  #: a line on stderr when sampling starts, every 30 s while it runs, and when it ends

    def __post_init__(self) -> None:
        if self.sampler not in SAMPLERS:
            raise ValueError(f"unknown sampler {self.sampler!r}; valid samplers are {', '.join(SAMPLERS)}")
        if self.draws < 1 or self.chains < 1 or self.tune < 0:
            raise ValueError(f"draws and chains must be >= 1 and tune >= 0; got {self.draws}, {self.chains}, "
                             f"{self.tune}")  # fmt: skip
        if self.max_draws is not None and self.max_draws < 1:
            raise ValueError(f"max_draws must be >= 1 or None (fit once); got {self.max_draws}")
        if not 0 < self.hdi_prob < 1:
            raise ValueError(f"hdi_prob must lie strictly between 0 and 1; got {self.hdi_prob}")
        if not 0 < self.target_accept < 1:
            raise ValueError(f"target_accept must lie strictly between 0 and 1; got {self.target_accept}")

    def retry(self) -> FitConfig | None:
        """The same settings with twice the draws, or None when that would pass :attr:`max_draws`."""
        if self.max_draws is None or 2 * self.draws > self.max_draws:
            return None
        return dataclasses.replace(self, draws=2 * self.draws)

    def to_dict(self) -> dict[str, object]:
        """The settings as a plain dict (saved with every fit)."""
        return dataclasses.asdict(self)
