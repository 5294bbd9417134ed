"""Shared fixtures: each real model is loaded once per test session, by every test file of the project.

The repository root holds the package's folders under their generic names (probes/, psychometrics/ ...). Run from
there, ``python -m pytest`` puts the root on ``sys.path``, where ``import psychometrics`` would find the folder and
hide a reference to a top-level name that the installed package does not have. So the root is taken off the path
here, before any test runs, and the interpreters the tests start get ``PYTHONSAFEPATH``: every test sees only the
installed ``bias_validity``.

PyMC models are compiled into a PyTensor cache of the session's own, made empty here before PyTensor is imported
(this process and the ones it starts): the sampler's results depend on whether its compiled code comes from the
cache or is compiled afresh. The recovery study of test_bayes_model.py gave 0 divergences compiled afresh and 1
with the code of an earlier run cached in ~/.pytensor, the same seed and data, so a test session is kept
independent of what ran before it on the machine.
"""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

from bias_validity.probes.backends.glove import GloVeBackend, load_glove_backend
from bias_validity.probes.backends.hf import HFBackend, load_hf_backend

_REPO = Path(__file__).resolve().parents[1]
sys.path[:] = [p for p in sys.path if Path(p or os.curdir).resolve() != _REPO]
os.environ["PYTHONSAFEPATH"] = "1"

_COMPILEDIR = tempfile.mkdtemp(prefix="bias-validity-pytensor-")
_FLAGS = [os.environ.get("PYTENSOR_FLAGS"), f"base_compiledir={_COMPILEDIR}"]
os.environ["PYTENSOR_FLAGS"] = ",".join(f for f in _FLAGS if f)
# registered before PyTensor is imported, so it runs after PyTensor's own exit handler has closed the cache
atexit.register(shutil.rmtree, _COMPILEDIR, ignore_errors=True)


@pytest.fixture(scope="session")
def smollm2() -> HFBackend:
    """SmolLM2-135M-Instruct (Q4_1), converted once into the user's cache and reused."""
    backend = load_hf_backend("smollm2")
    yield backend
    backend.close()


@pytest.fixture(scope="session")
def gemma() -> HFBackend:
    """Gemma-3-270M base (Q4_K_M): sequence log-probabilities and embeddings only."""
    backend = load_hf_backend("gemma3-270m")
    yield backend
    backend.close()


@pytest.fixture(scope="session")
def glove() -> GloVeBackend:
    """GloVe 6B 50d word vectors."""
    return load_glove_backend("6B-50d")
