"""nutpie's callbacks from PyTensor's numba cache compute what nutpie's own compute, and load where compiled before."""

import ctypes

import numpy as np
import pytest

from bias_validity.psychometrics.bayes._pymc import pm
from bias_validity.psychometrics.bayes.nutpie_callbacks import compile_nutpie

nutpie = pytest.importorskip("nutpie")


def _grouped(y: np.ndarray, group: np.ndarray) -> pm.Model:
    """Group means with partial pooling: ``y`` as ``pm.Data`` (read through nutpie's table), ``group`` a constant
    index baked into the graph (part of PyTensor's key), a transformed scale and a deterministic (expanded)."""
    with pm.Model() as model:
        data = pm.Data("y", y)
        mu = pm.Normal("mu", 0.0, 5.0)
        tau = pm.HalfNormal("tau", 1.0)
        z = pm.Normal("z", 0.0, 1.0, shape=int(group.max()) + 1)
        pm.Deterministic("theta", mu + tau * z)
        pm.Normal("obs", mu + tau * z[group], 1.0, observed=data)
    return model


def _evaluate(compiled, x: np.ndarray) -> tuple[int, float, np.ndarray, int, np.ndarray]:
    """The return codes and outputs of the compiled log-density callback and expansion callback at ``x``."""
    as_double = ctypes.POINTER(ctypes.c_double)
    user_data = ctypes.c_void_p(compiled.user_data.ctypes.data)
    grad, logp, values = np.zeros(compiled.n_dim), np.zeros(()), np.zeros(compiled.n_expanded)
    pointers = [a.ctypes.data_as(as_double) for a in (x, grad, logp, values)]
    logp_code = compiled.compiled_logp_func.ctypes(compiled.n_dim, *pointers[:3], user_data)
    expand_code = compiled.compiled_expand_func.ctypes(
        compiled.n_dim, compiled.n_expanded, pointers[0], pointers[3], user_data
    )
    return logp_code, float(logp), grad, expand_code, values


def _cache_hits(compiled) -> int:
    """How many of the two callbacks numba loaded from its cache rather than compiled."""
    return compiled.compiled_logp_func.cache_hits + compiled.compiled_expand_func.cache_hits


def _same_as_nutpies(model: pm.Model, cached, rng: np.random.Generator, data: dict | None = None) -> None:
    names = [v.name for v in model.free_RVs]
    own = nutpie.compile_pymc_model(model, var_names=names)
    if data:
        own, cached = own.with_data(**data), cached.with_data(**data)
    assert cached.n_dim == own.n_dim and cached.n_expanded == own.n_expanded
    for _ in range(3):
        x = rng.normal(0.0, 1.0, own.n_dim)
        mine, theirs = _evaluate(cached, x), _evaluate(own, x)
        assert mine[0] == theirs[0] == 0 and mine[3] == theirs[3] == 0
        assert mine[1] == theirs[1]
        np.testing.assert_array_equal(mine[2], theirs[2])
        np.testing.assert_array_equal(mine[4], theirs[4])


def test_cached_callbacks_compute_what_nutpies_own_compute_and_load_when_compiled_before():
    rng = np.random.default_rng(7)
    group = np.repeat(np.arange(4), 6)
    y = rng.normal(1.0, 1.0, group.size)
    first = _grouped(y, group)
    compiled = compile_nutpie(first, [v.name for v in first.free_RVs])
    assert compiled.compiled_logp_func._pyfunc.__name__ == "logp_callback"
    assert _cache_hits(compiled) == 0
    _same_as_nutpies(first, compiled, rng)
    # new data in the table: the callbacks read them through their pointers, not from the compile
    _same_as_nutpies(first, compiled, rng, data={"y": y + 3.0})

    # a model of the same graph built again loads both callbacks from the cache and computes the same
    again = _grouped(y, group)
    loaded = compile_nutpie(again, [v.name for v in again.free_RVs])
    assert _cache_hits(loaded) == 2
    _same_as_nutpies(again, loaded, rng)

    # another constant index is another log-density graph: compiled anew, not the first one's loaded; the expansion
    # (theta from mu, tau and z) does not read the index, so it is the same graph and loads
    other = _grouped(y, np.tile(np.arange(4), 6))
    recompiled = compile_nutpie(other, [v.name for v in other.free_RVs])
    assert recompiled.compiled_logp_func.cache_hits == 0 and recompiled.compiled_expand_func.cache_hits == 1
    _same_as_nutpies(other, recompiled, rng)


def test_a_point_outside_the_support_is_reported_as_nutpie_reports_it():
    model = _grouped(np.zeros(8), np.repeat(np.arange(2), 4))
    compiled = compile_nutpie(model, [v.name for v in model.free_RVs])
    x = np.full(compiled.n_dim, np.inf)
    own = nutpie.compile_pymc_model(model, var_names=[v.name for v in model.free_RVs])
    assert _evaluate(compiled, x)[0] == _evaluate(own, x)[0] != 0
