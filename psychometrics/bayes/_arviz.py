"""The one place that touches ArviZ's API, so ArviZ 0.x ``InferenceData`` and ArviZ 1.x ``DataTree`` both work.

Everything else in :mod:`bias_validity.psychometrics.bayes` passes plain numpy arrays shaped ``(chain, draw, ...)``
through the functions here.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np

__all__ = [
    "posterior_array",
    "divergences",
    "ebfmi",
    "max_depth_share",
    "prior_as_posterior",
    "prior_predictive_array",
    "summarise_draws",
    "posterior_attrs",
    "set_posterior_attrs",
    "save_netcdf",
    "load_netcdf",
    "posterior_names",
    "posterior_dataset",
    "set_posterior",
]

with warnings.catch_warnings():
    warnings.simplefilter("ignore", FutureWarning)
    import arviz as az


def _group(idata: object, name: str) -> object:
    """Return the ``posterior``/``sample_stats`` group of an InferenceData (0.x) or DataTree (1.x) as a Dataset."""
    group = idata[name] if hasattr(idata, "children") else getattr(idata, name)
    return group.to_dataset() if hasattr(group, "to_dataset") else group


def posterior_dataset(idata: object) -> object:
    """The posterior group as an xarray Dataset."""
    return _group(idata, "posterior")


def set_posterior(idata: object, posterior: object) -> None:
    """Replace the posterior group by the Dataset ``posterior``, in place."""
    if hasattr(idata, "children"):
        idata["posterior"] = posterior
    else:
        idata.posterior = posterior


def posterior_array(idata: object, var: str, draws: slice = slice(None)) -> np.ndarray:
    """Draws of one posterior variable as an array shaped ``(chain, draw, *shape)``, of each chain's ``draws``."""
    return np.asarray(_group(idata, "posterior")[var].isel(draw=draws).transpose("chain", "draw", ...).to_numpy())


def posterior_names(idata: object) -> set[str]:
    """Names of the posterior's variables."""
    return set(_group(idata, "posterior").data_vars)


def diverging(idata: object) -> np.ndarray:
    """Which transitions after warm-up diverged, shaped ``(chain, draw)``."""
    stats = _group(idata, "sample_stats")
    return np.asarray(stats["diverging"].transpose("chain", "draw").to_numpy(), dtype=bool)


def divergences(idata: object) -> int:
    """Number of divergent transitions after warm-up, over all chains."""
    return int(diverging(idata).sum())


def ebfmi(idata: object) -> np.ndarray:
    """Energy Bayesian fraction of missing information of each chain (Betancourt 2016), as ArviZ computes it."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.asarray(az.bfmi(idata), dtype=float)


#: The sample statistic that flags a transition stopped by the maximum tree depth, per NUTS backend.
_MAX_DEPTH_FLAGS = ("maxdepth_reached", "reached_max_treedepth")
_DEFAULT_MAX_DEPTH = 10  # numpyro reports the depth only; 10 is its default ceiling, as nutpie's and PyMC's


def max_depth_share(idata: object) -> float:
    """Share of transitions after warm-up that stopped at the maximum tree depth (over all chains)."""
    stats = _group(idata, "sample_stats")
    for name in _MAX_DEPTH_FLAGS:
        if name in stats:
            return float(np.asarray(stats[name]).mean())
    return float((np.asarray(stats["tree_depth"]) >= _DEFAULT_MAX_DEPTH).mean())


def prior_as_posterior(prior: object) -> object:
    """The ``prior`` group of a prior-predictive InferenceData as the ``posterior`` of a new one, so every function
    that reads posterior draws reads prior draws the same way."""
    group = _group(prior, "prior")
    return az.InferenceData(posterior=group)


def prior_predictive_array(prior: object, var: str) -> np.ndarray:
    """Draws of one simulated observed variable of a prior-predictive InferenceData, shaped ``(draw, *shape)``."""
    group = _group(prior, "prior_predictive")
    return np.asarray(group[var].transpose("chain", "draw", ...).to_numpy())[0]


def summarise_draws(draws: np.ndarray, *, hdi_prob: float) -> dict[str, np.ndarray]:
    """Mean, HDI bounds, R-hat and bulk/tail ESS of quantities shaped ``(chain, draw, n)``.

    Returns a dict of arrays of length ``n``: ``mean``, ``hdi_low``, ``hdi_high``, ``rhat``, ``ess_bulk``,
    ``ess_tail`` (rank-normalised split R-hat and ESS of Vehtari et al. 2021, as ArviZ computes them).
    """
    arr = np.asarray(draws, dtype=float)
    if arr.shape[-1] == 0:
        empty = np.empty(0)
        return dict.fromkeys(("mean", "hdi_low", "hdi_high", "rhat", "ess_bulk", "ess_tail"), empty)
    ds = az.convert_to_dataset({"q": arr})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        rhat = _values(az.rhat(ds))
        bulk = _values(az.ess(ds, method="bulk"))
        tail = _values(az.ess(ds, method="tail"))
        hdi = np.asarray(az.hdi(ds, hdi_prob=hdi_prob)["q"].to_numpy())
    return {
        "mean": arr.mean(axis=(0, 1)),
        "hdi_low": hdi[..., 0],
        "hdi_high": hdi[..., 1],
        "rhat": rhat,
        "ess_bulk": bulk,
        "ess_tail": tail,
    }


def _values(result: object) -> np.ndarray:
    data = result["q"] if hasattr(result, "data_vars") or hasattr(result, "children") else result
    return np.asarray(getattr(data, "to_numpy", lambda: data)(), dtype=float)


def posterior_attrs(idata: object) -> dict[str, object]:
    """The attributes of the posterior group (where fits store their derived quantities)."""
    group = idata["posterior"] if hasattr(idata, "children") else idata.posterior
    return dict(group.attrs)


def set_posterior_attrs(idata: object, **attrs: object) -> None:
    """Add string/number attributes to the posterior group, in place."""
    group = idata["posterior"] if hasattr(idata, "children") else idata.posterior
    group.attrs.update(attrs)


def save_netcdf(idata: object, path: str | Path, *, keep: tuple[str, ...] | None = None, max_draws: int = 0) -> Path:
    """Write the posterior to a compressed netCDF file and return its path.

    With ``keep``, only the posterior group's variables named there (those present) are written, as float32 and
    thinned evenly to at most ``max_draws`` draws over all chains (0: every draw); the group's attributes travel
    with it. Without it, every group is written as it is.
    """
    path = Path(path)
    if keep is not None:
        posterior = _group(idata, "posterior")
        names = [name for name in keep if name in posterior.data_vars]
        chains, draws = posterior.sizes["chain"], posterior.sizes["draw"]
        step = max(1, -(-chains * draws // max_draws)) if max_draws else 1
        slim = posterior[names].isel(draw=slice(None, None, step))
        slim = slim.assign({name: slim[name].astype("float32") for name in names if slim[name].dtype.kind == "f"})
        slim.attrs = dict(posterior.attrs)
        idata = az.InferenceData(posterior=slim) if not hasattr(idata, "children") else type(idata)({"posterior": slim})
    if hasattr(idata, "to_netcdf") and not hasattr(idata, "children"):
        idata.to_netcdf(str(path), compress=True)
    else:  # pragma: no cover - ArviZ 1.x DataTree
        encoding = {"/posterior": {name: {"zlib": True} for name in _group(idata, "posterior").data_vars}}
        idata.to_netcdf(path, encoding=encoding)
    return path


def load_netcdf(path: str | Path) -> object:
    """Read a posterior written by :func:`save_netcdf`."""
    return az.from_netcdf(str(path))
