"""Local OpenAI-compatible servers for the packaged SmolLM2, on a free loopback port: ``transformers serve`` on the
converted model directory (:func:`serve_transformers`) and llama-cpp-python's server on the packaged GGUF with full
logits, so ``/v1/completions`` answers ``echo`` with prompt log-probabilities (:func:`serve_gguf`).
:func:`serve_process` starts any server command, waits until it answers and stops it when the block ends.

Both servers run from the running interpreter's environment (``transformers`` beside ``sys.executable``,
``sys.executable -m llama_cpp.server``), so an unactivated venv works. The test suite and ``bench/`` use them.
"""

from __future__ import annotations

import importlib.util
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from bias_validity.probes.backends.model_cache import cache_root, converted_model_dir
from bias_validity.probes.backends.packaged import gguf_path

__all__ = ["ServedModel", "free_port", "serve_gguf", "serve_process", "serve_transformers", "transformers_cli"]


@dataclass(frozen=True)
class ServedModel:
    """A running server: its API root (``.../v1``), the model name it expects, and its log file."""

    base_url: str
    model: str
    log: Path


def transformers_cli() -> Path:
    """The ``transformers`` command installed beside the running interpreter (so an unactivated venv works too)."""
    exe = Path(sys.executable).parent / "transformers"
    if not exe.is_file():
        raise FileNotFoundError(f"{exe} not found: pip install 'transformers[serving]' into {sys.prefix}")
    return exe


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def serve_transformers(
    log_dir: Path, *, extra_args: tuple[str, ...] = (), startup_timeout: float = 300.0
) -> Iterator[ServedModel]:
    """Serve the converted SmolLM2 directory with ``transformers serve`` (offline) until the block ends."""
    model_dir = str(converted_model_dir("smollm2"))
    port = free_port()
    log = log_dir / f"transformers-serve-{port}.log"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_VERBOSITY": "warning"}
    cmd = [
        str(transformers_cli()),
        "serve",
        model_dir,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--device",
        "cpu",
        *extra_args,
    ]
    with serve_process(cmd, ready_url=f"http://127.0.0.1:{port}/health", log=log, env=env, timeout=startup_timeout):
        yield ServedModel(base_url=f"http://127.0.0.1:{port}/v1", model=model_dir, log=log)


@contextmanager
def serve_process(
    cmd: list[str], *, ready_url: str, log: Path, env: dict[str, str] | None = None, timeout: float = 300.0
) -> Iterator[None]:
    """Run a server command (its output to ``log``) until the block ends, once ``ready_url`` answers 200."""
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    try:
        _wait_ready(ready_url, proc, log, timeout)
        yield
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def _wait_ready(url: str, proc: subprocess.Popen, log: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{Path(proc.args[0]).name} exited with {proc.returncode}: {log.read_text()[-2000:]}")
        try:
            if httpx.get(url, timeout=2.0).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.5)
    raise RuntimeError(f"the server did not answer {url} within {timeout}s: {log.read_text()[-2000:]}")


@contextmanager
def serve_gguf(log_dir: Path, *, alias: str = "smollm2", startup_timeout: float = 180.0) -> Iterator[ServedModel]:
    """Serve the packaged model ``alias`` as model ``alias`` until the block ends."""
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
