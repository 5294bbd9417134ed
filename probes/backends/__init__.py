"""Backends: a registry from a model spec (``hf:smollm2``, ``openai:<name>``) to a :class:`Backend`.

Each backend imports lazily, so a missing optional dependency fails with "install X for backend Y" only when used.
"""

from __future__ import annotations

import importlib

from bias_validity.probes.backends.base import Backend, Capability, Completion, GenerationRequest, Unsupported

__all__ = ["Backend", "Capability", "Completion", "GenerationRequest", "Unsupported", "BACKENDS", "load_backend"]

#: prefix -> (module, factory function). The factory takes the part after the prefix and keyword options.
BACKENDS: dict[str, tuple[str, str]] = {
    "hf": ("bias_validity.probes.backends.hf", "load_hf_backend"),
    "glove": ("bias_validity.probes.backends.glove", "load_glove_backend"),
    "openai": ("bias_validity.probes.backends.openai_compat", "load_openai_backend"),
}


def load_backend(spec: str, **options: object) -> Backend:
    """Build the backend named by ``spec`` (``prefix:name``); ``options`` go to the backend's factory."""
    prefix, sep, name = spec.partition(":")
    if not sep or not name or prefix not in BACKENDS:
        raise ValueError(
            f"model spec {spec!r} is not understood: use one of "
            + ", ".join(f"{p}:<name>" for p in BACKENDS)
        )
    module_name, factory = BACKENDS[prefix]
    module = importlib.import_module(module_name)
    return getattr(module, factory)(name, **options)
