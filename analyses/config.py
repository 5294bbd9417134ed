"""The settings of an analysis, as one object: interval levels, resamples, seed and verdict thresholds."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from bias_validity.psychometrics.estimands import Thresholds

__all__ = ["AnalysisConfig"]


@dataclass(frozen=True)
class AnalysisConfig:
    """Everything a report's figures depend on besides the data and the fit; recorded in its provenance.

    Every question, the SC table, the acquiescence table and the fit's summary read their settings from here, so
    one report never shows two intervals for one number.

    Attributes
    ----------
    ci : float
        Level of every interval: the classical ones (Wilson, Newcombe, Fisher z, the item-cluster bootstraps) and
        the posterior highest-density intervals (a fit made for this analysis has ``hdi_prob`` = ``ci``).
    n_resamples : int
        Resamples of every bootstrap (>= 100).
    seed : int
        Seed of every bootstrap.
    thresholds : Thresholds
        The verdict thresholds (:class:`bias_validity.psychometrics.estimands.Thresholds`).

    Examples
    --------
    >>> AnalysisConfig().to_dict()["thresholds"]["gap_rope"]
    0.05
    >>> AnalysisConfig(n_resamples=10)
    Traceback (most recent call last):
    ...
    ValueError: n_resamples must be an integer >= 100, got 10
    """

    ci: float = 0.95
    n_resamples: int = 2000
    seed: int = 0
    thresholds: Thresholds = field(default_factory=Thresholds)

    def __post_init__(self) -> None:
        if isinstance(self.ci, bool) or not isinstance(self.ci, int | float) or not 0 < self.ci < 1:
            raise ValueError(f"ci must be a number strictly between 0 and 1 (e.g. 0.95), got {self.ci!r}")
        if isinstance(self.n_resamples, bool) or not isinstance(self.n_resamples, int) or self.n_resamples < 100:
            raise ValueError(f"n_resamples must be an integer >= 100, got {self.n_resamples!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int):
            raise ValueError(f"seed must be an integer, got {self.seed!r}")
        if not isinstance(self.thresholds, Thresholds):
            raise ValueError(f"thresholds must be a Thresholds, got {type(self.thresholds).__name__}")

    @property
    def bootstrap(self) -> dict[str, object]:
        """The keyword options every bootstrap takes: ``ci``, ``n_resamples``, ``seed``."""
        return {"ci": self.ci, "n_resamples": self.n_resamples, "seed": self.seed}

    def to_dict(self) -> dict[str, object]:
        """The settings by name, as the report's provenance records them."""
        return asdict(self)
