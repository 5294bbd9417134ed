"""PyMC and PyTensor, imported once, without PyTensor's BLAS warning.

PyTensor warns, the first time it looks for a BLAS to link its C code against (``config.blas__ldflags``), that it
found none. The default sampler (nutpie) compiles the model with numba and does its own linear algebra, so the
warning says nothing about these fits. The lookup is made here, at import, with that one warning silenced, and
PyTensor keeps its answer; the user's own warning filters are left as they were.
"""

from __future__ import annotations

import warnings

with warnings.catch_warnings():
    warnings.filterwarnings("ignore", message="PyTensor could not link to a BLAS installation", category=UserWarning)
    import pymc as pm
    import pytensor
    import pytensor.tensor as pt

    pytensor.config.blas__ldflags  # noqa: B018 - computed once and kept: later compiles do not warn again

__all__ = ["pm", "pt"]
