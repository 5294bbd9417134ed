"""Run NUTS on a model with a selectable backend: nutpie (default), PyMC or numpyro; bench/fit.py compares them."""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import os
import sys
import threading
import time
import weakref
from dataclasses import dataclass

from threadpoolctl import threadpool_limits

from bias_validity.psychometrics.bayes import _arviz
from bias_validity.psychometrics.bayes._pymc import pm
from bias_validity.psychometrics.bayes.config import FitConfig
from bias_validity.psychometrics.bayes.nutpie_callbacks import compile_nutpie

__all__ = ["SampleRun", "sample", "single_threaded_blas"]

_REQUIRES = {"nutpie": "nutpie", "pymc": "pymc", "numpyro": "numpyro"}


@dataclass
class SampleRun:
    """A posterior with its sampler settings and wall-clock time (sampling, and compiling where the process had not
    compiled the model yet)."""

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

    The sampler stores only the free variables; the deterministics are computed from their draws afterwards
    (``pymc.compute_deterministics``). nutpie holds its trace in memory at several times its size while it samples:
    on the 25,000-answer real-shaped study the deterministics (each model's item effects among them) doubled the
    values stored per draw; without them its fit peaked at 2.76 GB instead of 4.05 GB and took 264 s instead of 298 s.
    With nutpie a model is compiled once per process (:func:`_nutpie_compiled`), so a retry samples it again without
    compiling it again.

    Raises ValueError when the chosen backend is not installed.
    """
    sampler = config.sampler
    if importlib.util.find_spec(_REQUIRES[sampler]) is None:
        raise ValueError(f"sampler {sampler!r} needs the package {_REQUIRES[sampler]!r}: pip install {sampler}")
    start = time.perf_counter()
    nutpie_types = _nutpie_progress_types() if config.progress and sampler == "nutpie" else None
    draws_progress = nutpie_types is not None
    if not config.progress:
        report = contextlib.nullcontext()
    elif draws_progress:
        report = _nutpie_progress(config, start, *nutpie_types)
    else:
        report = _heartbeat(config, start)
    logging.getLogger("pymc").setLevel(logging.ERROR)
    settings = {
        "draws": config.draws,
        "tune": config.warm_up,
        "chains": config.chains,
        "cores": min(config.chains, os.cpu_count() or 1),
        "target_accept": config.target_accept,
    }
    if sampler == "nutpie":
        import nutpie

        with report, single_threaded_blas():
            idata = nutpie.sample(
                _nutpie_compiled(model),
                **settings,
                seed=config.seed,
                progress_bar=draws_progress,
                save_warmup=False,  # nutpie keeps the warm-up draws by default, doubling the trace held in memory
            )
    else:
        in_process = sampler != "pymc"
        # PyMC's own sampler runs chains in processes and divides BLAS threads among them itself (blas_cores="auto")
        with model, report, single_threaded_blas() if in_process else contextlib.nullcontext():
            idata = pm.sample(
                **settings,
                random_seed=config.seed,
                nuts_sampler=sampler,
                progressbar=False,
                compute_convergence_checks=False,
                blas_cores=None if in_process else "auto",
                var_names=[v.name for v in model.free_RVs],
            )
    if model.deterministics:
        posterior = pm.compute_deterministics(
            _arviz.posterior_dataset(idata), model=model, merge_dataset=True, progressbar=False
        )
        _arviz.set_posterior(idata, posterior)
    return SampleRun(idata=idata, sampler=sampler, seconds=time.perf_counter() - start)


#: nutpie's compiled log-density of each model sampled in this process, dropped with the model
_COMPILED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _nutpie_compiled(model: pm.Model) -> object:
    """nutpie's compiled ``model`` (its free variables stored), compiled on the first call for this model only,
    holding the model's data as they are now.

    A retry (twice the draws, a smaller step) samples the same log-density, and compiling it is most of a small fit:
    on the paper-scale workload 24-34 s against 63-71 s of sampling; on the demo store about 35 s against 6 s, so its
    retried seed took 83.8 s when the retry compiled again and 49.0 s now. nutpie's callbacks come from a disk cache
    where the same graph was compiled before (:func:`.nutpie_callbacks.compile_nutpie`).
    The compiled model keeps a copy of the data it was compiled with, so the model's current ``pm.Data`` values are
    swapped in (``with_data``) at every call.
    """
    compiled = _COMPILED.get(model)
    if compiled is None:
        compiled = compile_nutpie(model, [v.name for v in model.free_RVs])
        _COMPILED[model] = compiled
    data = {v.name: v.get_value() for v in model.data_vars if v.name in compiled.shared_data}
    return compiled.with_data(**data)


_HEARTBEAT_S = 30.0


def _what(config: FitConfig) -> str:
    return f"{config.chains} chains x ({config.warm_up} warm-up + {config.draws} draws), {config.sampler}"


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


@contextlib.contextmanager
def _heartbeat(config: FitConfig, start: float):
    """Print to stderr what is sampled, then the elapsed time every 30 s until sampling ends, then the total.

    For samplers that report no progress here (numpyro through PyMC, PyMC's own with its bar off): a fit run from a
    script or a batch job would otherwise print nothing for minutes; a background thread keeps one line per beat.
    """
    what = _what(config)
    _say(f"sampling {what}")
    done = threading.Event()

    def beat() -> None:
        while not done.wait(_HEARTBEAT_S):
            _say(f"sampling {what}: {time.perf_counter() - start:.0f} s")

    thread = threading.Thread(target=beat, daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()
        _say(f"sampled {what} in {time.perf_counter() - start:.0f} s")


#: What nutpie's progress renderer (a minijinja template, as its notebook display uses) hands back: draws done and
#: due over all chains, then each chain's divergences.
_NUTPIE_TEMPLATE = (
    "{{ total_finished_draws }}|{{ total_draws }}|{% for chain in chains %}{{ chain.divergences }} {% endfor %}"
)


def _nutpie_progress_types() -> tuple[object, object] | None:
    """nutpie's sampling module and its progress class, or None where this nutpie lacks the template callback."""
    if importlib.util.find_spec("nutpie") is None:
        return None
    import nutpie  # noqa: F401  (loads nutpie.sample)

    module = sys.modules.get("nutpie.sample")
    kinds = getattr(getattr(module, "_lib", None), "ProgressType", None)
    if kinds is None or not all(hasattr(kinds, k) for k in ("none", "indicatif", "template_callback")):
        return None
    return module, kinds


@contextlib.contextmanager
def _nutpie_progress(config: FitConfig, start: float, module: object, kinds: object):
    """Print to stderr what is sampled, then every 30 s the draws done, the time so far, an estimate of the time left
    (at the rate so far) and the divergences so far, then the total.

    nutpie renders its progress through a template callback only in notebooks and draws a terminal bar elsewhere (none
    when stderr is not a terminal, as in a batch job). Its progress class is swapped, for this call only, for one whose
    terminal choice is the template callback, so a script, a terminal and a log file all get the same plain lines.
    ``module`` and ``kinds`` are :func:`_nutpie_progress_types`'.
    """
    what = _what(config)
    _say(f"sampling {what}")

    began: list[float] = []  # when sampling itself began (compiling comes first): nutpie's first call, at 0 draws

    def line(rendered: str) -> None:
        done, total, divergent = rendered.split("|")
        done, total = int(done), int(total)
        now = time.perf_counter()
        if not began:
            began.append(now)
        if 0 < done < total:
            left = (now - began[0]) * (total - done) / done
            divergences = sum(int(x) for x in divergent.split())
            _say(
                f"sampling {what}: {done}/{total} draws, {now - start:.0f} s so far, about {left:.0f} s left, "
                f"{divergences} divergent"
            )

    class _TemplateProgress:
        none = staticmethod(kinds.none)

        @staticmethod
        def indicatif(rate: int) -> object:
            return kinds.template_callback(int(_HEARTBEAT_S * 1000), _NUTPIE_TEMPLATE, config.chains, line)

    module._lib.ProgressType = _TemplateProgress
    try:
        yield
    finally:
        module._lib.ProgressType = kinds
        _say(f"sampled {what} in {time.perf_counter() - start:.0f} s")
