"""Backends: a registry from a model spec (``hf:smollm2``, ``openai:<name>``) to a :class:`Backend`.

Each backend imports lazily, so a missing optional dependency fails with "install X for backend Y" only when used.
"""

from __future__ import annotations

import importlib

from bias_validity.probes.backends.base import Backend, Capability, Completion, GenerationRequest, Unsupported

__all__ = [
    "Backend",
    "Capability",
    "Completion",
    "GenerationRequest",
    "Unsupported",
    "BACKENDS",
    "load_backend",
    "identify_backend",
]

#: prefix -> (module, factory function, identity function). Both take the part after the prefix and keyword
#: options; the identity function checks them and names the model without loading it or contacting a server.
BACKENDS: dict[str, tuple[str, str, str]] = {
    "hf": ("bias_validity.probes.backends.hf", "load_hf_backend", "identify_hf"),
    "glove": ("bias_validity.probes.backends.glove", "load_glove_backend", "identify_glove"),
    "openai": ("bias_validity.probes.backends.openai_compat", "load_openai_backend", "identify_openai"),
}


def _resolve(spec: str) -> tuple[object, str]:
    prefix, sep, name = spec.partition(":")
    if not sep or not name or prefix not in BACKENDS:
        raise ValueError(
            f"model spec {spec!r} is not understood: use one of " + ", ".join(f"{p}:<name>" for p in BACKENDS)
        )
    return importlib.import_module(BACKENDS[prefix][0]), name


def load_backend(spec: str, **options: object) -> Backend:
    """Build the backend named by ``spec`` (``prefix:name``); ``options`` go to the backend's factory."""
    module, name = _resolve(spec)
    return getattr(module, BACKENDS[spec.partition(":")[0]][1])(name, **options)


def identify_backend(spec: str, **options: object) -> dict[str, object]:
    """The identity of the model ``spec`` names (``name``: its ``model`` column value, and its weights' hash where
    known), found without loading it or contacting its server; raises ``ValueError`` for a spec or options that
    :func:`load_backend` would refuse."""
    module, name = _resolve(spec)
    return getattr(module, BACKENDS[spec.partition(":")[0]][2])(name, **options)
