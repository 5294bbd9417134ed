"""Run NUTS on a model with a selectable backend: nutpie (default), PyMC or numpyro; bench/fit.py compares them."""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import os
import sys
import threading
import time
from dataclasses import dataclass

from threadpoolctl import threadpool_limits

from bias_validity.psychometrics.bayes._pymc import pm
from bias_validity.psychometrics.bayes.config import FitConfig

__all__ = ["SampleRun", "sample", "single_threaded_blas"]

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


def sample(model: pm.Model, config: FitConfig) -> SampleRun:
    """Draw from ``model`` with the NUTS backend, chains, warm-up, draws and seed of ``config``.

    Raises ValueError when the chosen backend is not installed.
    """
    sampler = config.sampler
    if importlib.util.find_spec(_REQUIRES[sampler]) is None:
        raise ValueError(f"sampler {sampler!r} needs the package {_REQUIRES[sampler]!r}: pip install {sampler}")
    start = time.perf_counter()
    heartbeat = _heartbeat(config, start) if config.progress else contextlib.nullcontext()
    logging.getLogger("pymc").setLevel(logging.ERROR)
    in_process = sampler != "pymc"
    # PyMC's own sampler runs chains in processes and divides BLAS threads among them itself (blas_cores="auto")
    with model, heartbeat, single_threaded_blas() if in_process else contextlib.nullcontext():
        idata = pm.sample(
            draws=config.draws,
            tune=config.tune,
            chains=config.chains,
            cores=min(config.chains, os.cpu_count() or 1),
            target_accept=config.target_accept,
            random_seed=config.seed,
            nuts_sampler=sampler,
            progressbar=False,
            compute_convergence_checks=False,
            blas_cores=None if in_process else "auto",
        )
    return SampleRun(idata=idata, sampler=sampler, seconds=time.perf_counter() - start)


_HEARTBEAT_S = 30.0


@contextlib.contextmanager
def _heartbeat(config: FitConfig, start: float):
    """Print to stderr what is sampled, then the elapsed time every 30 s until sampling ends, then the total.

    nutpie's own progress bar draws only on a terminal (and numpyro's through PyMC not at all), so a fit run from a
    script or a batch job would otherwise print nothing for minutes; a background thread keeps one line per beat.
    """
    what = f"{config.chains} chains x ({config.tune} warm-up + {config.draws} draws), {config.sampler}"
    print(f"sampling {what}", file=sys.stderr, flush=True)
    done = threading.Event()

    def beat() -> None:
        while not done.wait(_HEARTBEAT_S):
            print(f"sampling {what}: {time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)

    thread = threading.Thread(target=beat, daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()
        print(f"sampled {what} in {time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)
