"""Shared fixtures: each real model is loaded once per test session, by every test file of the project.

The repository root holds the package's folders under their generic names (probes/, psychometrics/ ...). Run from
there, ``python -m pytest`` puts the root on ``sys.path``, where ``import psychometrics`` would find the folder and
hide a reference to a top-level name that the installed package does not have. So the root is taken off the path
here, before any test runs, and the interpreters the tests start get ``PYTHONSAFEPATH``: every test sees only the
installed ``bias_validity``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from bias_validity.probes.backends.glove import GloVeBackend, load_glove_backend
from bias_validity.probes.backends.hf import HFBackend, load_hf_backend

_REPO = Path(__file__).resolve().parents[1]
sys.path[:] = [p for p in sys.path if Path(p or os.curdir).resolve() != _REPO]
os.environ["PYTHONSAFEPATH"] = "1"


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
