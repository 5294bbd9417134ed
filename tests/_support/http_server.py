"""Start ``transformers serve`` on a free loopback port with the packaged SmolLM2, wait until it answers, stop it;
:func:`serve_process` does the starting, waiting and stopping for any server command."""

from __future__ import annotations

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

__all__ = ["ServedModel", "free_port", "serve_model", "serve_process", "transformers_cli"]


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
def serve_model(
    log_dir: Path, *, extra_args: tuple[str, ...] = (), startup_timeout: float = 300.0
) -> Iterator[ServedModel]:
    """Serve the converted SmolLM2 directory with ``transformers serve`` (offline) until the block ends."""
    from bias_validity.probes.backends.model_cache import converted_model_dir

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
