"""Where a fit's divergences sit: at the neck of a funnel of centred effects, whose remedy is to draw them non-centred.

A hierarchical effect drawn centred, ``theta ~ Normal(0, sigma)``, makes a funnel with its SD: where ``sigma`` is
small the effects must be small too, and a step size tuned to the wide part diverges in the neck. Divergent
transitions that concentrate at a family's smallest SD values locate it (Betancourt & Girolami 2015, sec. 4); a
smaller step (a higher target acceptance) only narrows it, while the non-centred form ``theta = sigma z`` removes it.
The model chooses each family's form from the information its answers carry (:func:`~bias_validity.psychometrics.
bayes.model.build_model`), which cannot foresee how far the SD's posterior reaches towards zero where it rests on a
handful of contrasts; this module reads that from the fit.

References
----------
.. [1] Betancourt, M. & Girolami, M. (2015). Hamiltonian Monte Carlo for hierarchical models. In Current Trends in
   Bayesian Methodology with Applications, 79-101. CRC Press.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

import numpy as np

from bias_validity.psychometrics.bayes import _arviz

__all__ = ["FUNNEL_SDS", "NECK_QUANTILE", "Neck", "funnel_necks"]

#: The SD of each effect family a fit may redraw non-centred: the shared template and order effects, whose SD rests
#: on a few contrasts per method (a method has a handful of wordings and orders).
FUNNEL_SDS: dict[str, str] = {"tmpl": "sigma_tmpl", "ords": "sigma_ord"}
#: Divergences sit at a family's neck when the median of its SD over the divergent draws lies below this quantile of
#: its SD over all draws.
NECK_QUANTILE = 0.1


@dataclass(frozen=True)
class Neck:
    """A family whose divergences sit where its SD is small: the SD's median over the divergent and over all draws."""

    family: str
    sd: str
    at_divergences: float
    overall: float

    def describe(self) -> str:
        """Where the divergences sit, for a retry message: "sigma_ord (median 0.019 at the divergences, 0.225 over all
        draws)"."""
        return f"{self.sd} (median {self.at_divergences:.3g} at the divergences, {self.overall:.3g} over all draws)"


def funnel_necks(idata: object, families: Collection[str]) -> list[Neck]:
    """The families among ``families`` (keys of :data:`FUNNEL_SDS`) whose divergent transitions sit at the neck of
    their funnel: the median of their SD over the divergent draws lies below its :data:`NECK_QUANTILE` quantile over
    all draws. Empty where nothing diverged.

    Examples
    --------
    >>> import arviz as az
    >>> sd = np.exp(np.random.default_rng(0).normal(-1.5, 0.6, (2, 500)))
    >>> idata = az.from_dict(posterior={"sigma_ord": sd, "sigma_tmpl": sd[:, ::-1]},
    ...                      sample_stats={"diverging": sd < 0.06})
    >>> [n.family for n in funnel_necks(idata, ["tmpl", "ords"])]
    ['ords']
    """
    divergent = _arviz.diverging(idata)
    if not divergent.any():
        return []
    names = _arviz.posterior_names(idata)
    out = []
    for family in families:
        sd = FUNNEL_SDS[family]
        if sd not in names:
            continue
        draws = _arviz.posterior_array(idata, sd)
        at, low = float(np.median(draws[divergent])), float(np.quantile(draws, NECK_QUANTILE))
        if at < low:
            out.append(Neck(family, sd, at, float(np.median(draws))))
    return out
