"""Run NUTS on a model with a selectable backend: nutpie (default), PyMC or numpyro; bench/fit.py compares them."""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import os
import time
from dataclasses import dataclass

import pymc as pm
from threadpoolctl import threadpool_limits

__all__ = ["SAMPLERS", "SampleRun", "sample", "single_threaded_blas"]

#: NUTS implementations that :func:`sample` accepts; the first is the default.
SAMPLERS: tuple[str, ...] = ("nutpie", "pymc", "numpyro")
_REQUIRES = {"nutpie": "nutpie", "pymc": "pymc", "numpyro": "numpyro"}


@dataclass
class SampleRun:
    """A posterior with its sampler settings and wall-clock time (compile plus sampling)."""

    idata: object
    sampler: str
    seconds: float


def single_threaded_blas() -> contextlib.AbstractContextManager:
    """Limit BLAS to one thread while chains run as threads of this process (nutpie, numpyro).

    With BLAS's own threads on top of one thread per chain the cores are oversubscribed: on 2 cores, 2 parallel
    nutpie chains took 4.2x longer per gradient than with one BLAS thread each (threadpoolctl sets the limit).
    """
    return threadpool_limits(limits=1, user_api="blas")


def sample(
    model: pm.Model,
    *,
    sampler: str = "nutpie",
    draws: int = 1000,
    tune: int = 1000,
    chains: int = 4,
    target_accept: float = 0.95,
    seed: int = 0,
) -> SampleRun:
    """Draw from ``model`` with the chosen NUTS backend; raise ValueError for an unknown or missing one."""
    if sampler not in SAMPLERS:
        raise ValueError(f"unknown sampler {sampler!r}; valid samplers are {', '.join(SAMPLERS)}")
    if importlib.util.find_spec(_REQUIRES[sampler]) is None:
        raise ValueError(f"sampler {sampler!r} needs the package {_REQUIRES[sampler]!r}: pip install {sampler}")
    if draws < 1 or tune < 0 or chains < 1:
        raise ValueError(f"draws and chains must be >= 1 and tune >= 0; got {draws}, {chains}, {tune}")
    start = time.perf_counter()
    logging.getLogger("pymc").setLevel(logging.ERROR)
    in_process = sampler != "pymc"
    # PyMC's own sampler runs chains in processes and divides BLAS threads among them itself (blas_cores="auto")
    with model, single_threaded_blas() if in_process else contextlib.nullcontext():
        idata = pm.sample(
            draws=draws,
            tune=tune,
            chains=chains,
            cores=min(chains, os.cpu_count() or 1),
            target_accept=target_accept,
            random_seed=seed,
            nuts_sampler=sampler,
            progressbar=False,
            compute_convergence_checks=False,
            blas_cores=None if in_process else "auto",
        )
    return SampleRun(idata=idata, sampler=sampler, seconds=time.perf_counter() - start)
