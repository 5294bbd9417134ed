"""Shared fixtures: each real model is loaded once per test session, by every test file of the project."""

from __future__ import annotations

import pytest

from probes.backends.glove import GloVeBackend, load_glove_backend
from probes.backends.hf import HFBackend, load_hf_backend


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
