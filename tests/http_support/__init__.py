"""Real HTTP parts for the OpenAI-compatible backend's tests: a ``transformers serve`` launcher and a fault proxy."""

from http_support.proxy import FaultProxy
from http_support.server import ServedModel, free_port, serve_model

__all__ = ["FaultProxy", "ServedModel", "free_port", "serve_model"]
