"""The one fit object: posterior, design, derived quantities, diagnostics and settings; saved and loaded whole.

A saved fit (ArviZ netCDF) carries everything the reports and model comparisons need, the design included, so a
later command reads it instead of sampling again.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from bias_validity.psychometrics.bayes import _arviz
from bias_validity.psychometrics.bayes.config import FitConfig
from bias_validity.psychometrics.bayes.design import Columns, Design, index_design
from bias_validity.psychometrics.bayes.identification import DERIVED_FROM

__all__ = ["FIT_FORMAT", "BayesFit", "load_fit"]

#: Version of what :meth:`BayesFit.save` writes beside the posterior; :func:`load_fit` reads this version only.
FIT_FORMAT = 3
#: Most posterior draws (over all chains) a saved fit keeps; its tables were computed from every draw.
SAVED_DRAWS = 1000
_PREFIX = "bias_validity_"
_TABLES = ("quantities", "quantity_diagnostics", "ppc")


@dataclass
class BayesFit:
    """A fitted study: posterior, design, derived quantities, the diagnostics gate and the settings that made it."""

    idata: object  #: ArviZ InferenceData (0.x) or DataTree (1.x)
    design: Design  #: the indexed cells the model was fitted to (the posterior's coordinates)
    #: quantity, the unit/trait/method columns, mean, hdi_low, hdi_high, p_direction; attrs: hdi_prob, null_values
    quantities: pd.DataFrame
    quantity_diagnostics: pd.DataFrame  #: the same labels with rhat, ess_bulk, ess_tail
    #: max_rhat, min_ess_bulk, min_ess_tail, divergences, passed, failing, draws (per chain, of this fit)
    diagnostics: dict[str, object]
    config: FitConfig = field(default_factory=FitConfig)  #: the settings of the last (returned) attempt
    seconds: float = float("nan")  #: wall-clock time of compile plus sampling, every attempt included
    #: posterior predictive check per group (:func:`bias_validity.psychometrics.bayes.ppc.posterior_predictive_check`)
    ppc: pd.DataFrame = field(default_factory=pd.DataFrame)

    @property
    def sampler(self) -> str:
        """The NUTS backend that drew the posterior."""
        return self.config.sampler

    def save(self, path: str | Path) -> Path:
        """Write the fit as ArviZ netCDF: its quantities, diagnostics, predictive check, settings and design in the
        posterior's attributes, in full; of the posterior itself the variables derived quantities are computed from
        (:data:`~bias_validity.psychometrics.bayes.identification.DERIVED_FROM`), thinned evenly to at most
        :data:`SAVED_DRAWS` draws and stored as float32, compressed (what ``compare`` recomputes SCs from; the
        report reads the saved tables). A study of 25,000 answers and 838 items thus saves in tens of megabytes,
        not hundreds. :func:`load_fit` reads it back. Returns the path."""
        tables = {
            name: getattr(self, name).to_json(orient="table", index=False, double_precision=15) for name in _TABLES
        }
        cells = {
            name: frame.to_json(orient="table", index=False, double_precision=15)
            for name, frame in self.design.cell_tables().items()
        }
        _arviz.set_posterior_attrs(
            self.idata,
            **{f"{_PREFIX}{name}": text for name, text in tables.items()},
            **{
                f"{_PREFIX}format": FIT_FORMAT,
                f"{_PREFIX}quantities_attrs": json.dumps(self.quantities.attrs),
                f"{_PREFIX}diagnostics": json.dumps(self.diagnostics),
                f"{_PREFIX}config": json.dumps(self.config.to_dict()),
                f"{_PREFIX}seconds": float(self.seconds),
                f"{_PREFIX}design": json.dumps(
                    {"columns": self.design.columns.to_dict(), "levels": self.design.levels, "cells": cells}
                ),
            },
        )
        return _arviz.save_netcdf(self.idata, path, keep=DERIVED_FROM, max_draws=SAVED_DRAWS)


def load_fit(path: str | Path) -> BayesFit:
    """Read a fit written by :meth:`BayesFit.save` (``bias-validity fit --out``), its design rebuilt from its cells.

    Parameters
    ----------
    path : str or Path
        The netCDF file.

    Returns
    -------
    BayesFit
        The posterior (``idata``), the design indexed again from the saved cell tables (so its labels and integer
        indices are those the posterior was drawn on), ``quantities`` and ``quantity_diagnostics`` as they were,
        ``diagnostics``, ``config`` and ``seconds``.

    Notes
    -----
    The posterior is stored in ArviZ's netCDF layout [1]_; the toolkit's tables travel as JSON (pandas' ``table``
    orient, 15 significant digits) in the attributes of its ``posterior`` group, with a format version
    (:data:`FIT_FORMAT`). A file without them, or of another version, is refused with a one-line ValueError
    naming it.

    References
    ----------
    .. [1] Kumar, R., Carroll, C., Hartikainen, A. & Martin, O. (2019). ArviZ a unified library for exploratory
       analysis of Bayesian models in Python. Journal of Open Source Software 4(33), 1143.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from bias_validity.psychometrics.bayes import fit_hierarchical, simulate_study
    >>> sim = simulate_study(units=1, traits=1, items=3, templates=1, orders=1, reps=10, seed=3, ordinal_methods=(),
    ...                      score_methods=())
    >>> fit = fit_hierarchical(sim["binary"], config=FitConfig(draws=100, tune=100, chains=2, max_draws=None))
    >>> loaded = load_fit(fit.save(pathlib.Path(tempfile.mkdtemp()) / "fit.nc"))
    >>> loaded.design.items, loaded.config == fit.config
    (['t0-00', 't0-01', 't0-02'], True)
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file")
    try:
        idata = _arviz.load_netcdf(path)
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path}: not a netCDF posterior ({' '.join(str(exc).split())})") from None
    attrs = _arviz.posterior_attrs(idata)
    version = attrs.get(f"{_PREFIX}format")
    if version is None:
        raise ValueError(f"{path}: not a fit written by bias-validity fit (no quantities or design stored with it)")
    if int(version) != FIT_FORMAT:
        raise ValueError(f"{path}: fit format {version}, this toolkit reads {FIT_FORMAT}; fit the study again")
    tables = {name: pd.read_json(io.StringIO(attrs[f"{_PREFIX}{name}"]), orient="table") for name in _TABLES}
    tables["quantities"].attrs = json.loads(attrs[f"{_PREFIX}quantities_attrs"])
    stored = json.loads(attrs[f"{_PREFIX}design"])
    cells = {name: pd.read_json(io.StringIO(text), orient="table") for name, text in stored["cells"].items()}
    config = FitConfig(**json.loads(attrs[f"{_PREFIX}config"]))
    design = index_design(
        cells["binary"],
        ordinal=cells["ordinal"],
        scores=cells["scores"],
        columns=Columns(**stored["columns"]),
        levels=stored["levels"],
        unit_effects=config.unit_effects,
    )
    return BayesFit(
        idata=idata,
        design=design,
        quantities=tables["quantities"],
        quantity_diagnostics=tables["quantity_diagnostics"],
        diagnostics=json.loads(attrs[f"{_PREFIX}diagnostics"]),
        config=config,
        seconds=float(attrs[f"{_PREFIX}seconds"]),
        ppc=tables["ppc"],
    )
