"""nutpie's compiled model with its two C callbacks cached on disk, so a model compiled before is not compiled again.

nutpie hands its Rust sampler two numba ``cfunc`` callbacks (the log-density with its gradient, and the expansion of
a draw into the stored values) and compiles them at every ``compile_pymc_model``, uncached: its wrappers read the
model's data through a tuple of the data arrays held as globals, and numba refuses to cache code holding "dynamic
globals". On the paper-scale workload that compile was 29-30 s of a 65-68 s fit to the gate (the graph's own numba
code comes from PyTensor's cache, but the callback links it in, optimises and generates it again). Here the same two
callbacks are written as source (as PyTensor writes its numba code), reading each data array only through nutpie's
table of pointers and shapes, and registered in PyTensor's numba cache under a key made of PyTensor's key of the
compiled graph (its constants included) and the callback's own source: numba then stores the machine code of the
whole callback and loads it the next time. Measured on the paper-scale model (2026-12-08, 2 cores): the whole compile
24.3 s with nutpie's callbacks, 25.3 s with these compiled and stored, 7.0 s with them loaded; the fit to the gate
42.7-51.9 s instead of 65.2-67.9 s; the log-density and gradient the same to the last bit, 0.525 ms either way.

No library does this: nutpie has no cacheable callback (its ``cache=True`` is refused by numba for the reason above),
so its two private builders of the raw callbacks are replaced, for the duration of one compile, by the ones here;
everything else (PyTensor's functions, initial points, the data table, ``with_data``) stays nutpie's. Where this
nutpie lacks those builders, or PyTensor gives the graph no cache key, nutpie's own compile runs.
"""

from __future__ import annotations

import hashlib
import threading
import unittest.mock
import warnings

import numpy as np

from bias_validity.psychometrics.bayes._pymc import pm

__all__ = ["compile_nutpie"]

#: nutpie's module-level builders are swapped during a compile: one compile at a time
_LOCK = threading.Lock()

#: The data are read before the try block: read inside it, numba's SSA reconstruction of the callback took 33 s.
_LOGP = """
def logp_callback(dim, x_, out_, logp_, user_data_):
    if dim != {n_dim}:
        return -1
    x = carray(x_, ({n_dim},))
    out = carray(out_, ({n_dim},))
    logp = carray(logp_, ())
    shared = carray(user_data_, (), record_dtype)["shared"]
{arrays}
    try:
        logp_value, grad = inner(x{args})
        logp[()] = logp_value
        out[...] = grad
        if not np.all(np.isfinite(out)):
            return 3
        if not np.isfinite(logp_value):
            return 4
    except Exception:
        return 1
    return 0
"""

_EXPAND = """
def expand_callback(dim, expanded, x_, out_, user_data_):
    if dim != {n_dim}:
        return -1
    if expanded != {n_expanded}:
        return -1
    x = carray(x_, ({n_dim},))
    out = carray(out_, ({n_expanded},))
    shared = carray(user_data_, (), record_dtype)["shared"]
{arrays}
    try:
        (values,) = inner(x{args})
        out[...] = values
    except Exception:
        return -2
    return 0
"""


def compile_nutpie(model: pm.Model, var_names: list[str]) -> object:
    """nutpie's compiled ``model`` (``nutpie.compile_pymc_model``, storing ``var_names``), its callbacks loaded from
    PyTensor's numba cache where this graph was compiled before and cached there otherwise."""
    import numba
    import nutpie
    from nutpie import compile_pymc

    builders = ("_make_c_logp_func", "_make_c_expand_func", "address_as_void_pointer")
    if not all(hasattr(compile_pymc, name) for name in builders):
        return nutpie.compile_pymc_model(model, var_names=var_names)
    own_logp, own_expand = compile_pymc._make_c_logp_func, compile_pymc._make_c_expand_func
    double_p = numba.types.CPointer(numba.types.double)
    # nutpie's signatures: (dim, x, gradient, logp, user data) and (dim, expanded, x, values, user data)
    logp_signature = numba.types.int64(numba.types.uint64, double_p, double_p, double_p, numba.types.voidptr)
    expand_signature = numba.types.int64(
        numba.types.uint64, numba.types.uint64, double_p, double_p, numba.types.voidptr
    )

    def logp(n_dim, logp_fn, user_data, shared_logp, shared_data):
        source = _source(_LOGP, {"n_dim": n_dim}, shared_logp, shared_data)
        made = _callback(source, "logp_callback", logp_fn, user_data, shared_logp, shared_data)
        if made is None:
            return own_logp(n_dim, logp_fn, user_data, shared_logp, shared_data)
        return made, logp_signature

    def expand(n_dim, n_expanded, expand_fn, user_data, shared_vars, shared_data):
        source = _source(_EXPAND, {"n_dim": n_dim, "n_expanded": n_expanded}, shared_vars, shared_data)
        made = _callback(source, "expand_callback", expand_fn, user_data, shared_vars, shared_data)
        if made is None:
            return own_expand(n_dim, n_expanded, expand_fn, user_data, shared_vars, shared_data)
        return made, expand_signature

    with _LOCK, unittest.mock.patch.multiple(compile_pymc, _make_c_logp_func=logp, _make_c_expand_func=expand):
        with warnings.catch_warnings():
            # nutpie's own callbacks, where they run, cannot be cached: numba says so once per compile
            warnings.filterwarnings("ignore", message="Cannot cache compiled function")
            return nutpie.compile_pymc_model(model, var_names=var_names, cache=True)


def _source(template: str, sizes: dict[str, int], names: list[str], shared_data: dict[str, np.ndarray]) -> str:
    """A callback's source: ``template`` with its sizes, each data array in ``names`` read through nutpie's table
    (``shared``: pointer and shape by name, dtype ``dtype{i}``) and passed on to the graph's function in order."""
    arrays = []
    for i, data_name in enumerate(names):
        shape = "".join(f"int(shared['shape'][{data_name!r}][{d}]), " for d in range(shared_data[data_name].ndim))
        pointer = f"address_as_void_pointer(shared['data'][{data_name!r}][()])"
        arrays.append(f"    a{i} = carray({pointer}, ({shape}), dtype{i})")
    return template.format(**sizes, arrays="\n".join(arrays), args="".join(f", a{i}" for i in range(len(names))))


def _callback(source, name, inner, user_data, names, shared_data):
    """The raw callback ``name`` defined by ``source``, calling ``inner`` (the graph's numba function), registered in
    PyTensor's numba cache under a key of ``inner``'s and the source's; None where PyTensor gave ``inner`` no key."""
    import numba
    import nutpie
    from nutpie.compile_pymc import address_as_void_pointer
    from pytensor.link.numba.cache import CACHED_SRC_FUNCTIONS, compile_numba_function_src

    inner_key = CACHED_SRC_FUNCTIONS.get(getattr(inner, "py_func", None))
    if inner_key is None:
        return None
    dtypes = {f"dtype{i}": shared_data[data_name].dtype for i, data_name in enumerate(names)}
    key_parts = (inner_key, source, str(user_data.dtype), [str(d) for d in dtypes.values()], nutpie.__version__)
    env = dtypes | {
        # numba rebuilds a cached function's environment by importing the module its globals name
        "__name__": __name__,
        "np": np,
        "carray": numba.carray,
        "address_as_void_pointer": address_as_void_pointer,
        "record_dtype": user_data.dtype,
        "inner": inner,
    }
    return compile_numba_function_src(source, name, env, cache_key=hashlib.sha256(repr(key_parts).encode()).hexdigest())
