"""Throughput of the OpenAI-compatible backend at concurrency 1 versus 8 against a real local server.

Starts ``transformers serve`` on loopback with the packaged SmolLM2 (once with its default sequential generation,
once with ``--continuous-batching``), sends the same chat requests at concurrency 1 and 8, and prints one JSON
object on the last line: wall-clock seconds and the speed-up ratio (concurrency-1 time / concurrency-8 time) per
server mode. A sequential server caps the ratio near 1 (it generates one request at a time); batching on the
server is what lets concurrency pay.

Usage: python bench/http_throughput.py [--requests 16] [--tokens 16]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from bias_validity.probes.backends.base import GenerationRequest
from bias_validity.probes.backends.local_server import serve_transformers
from bias_validity.probes.backends.openai_compat import load_openai_backend


def _timed(base_url: str, model: str, concurrency: int, requests: list[GenerationRequest]) -> float:
    backend = load_openai_backend(model, base_urls=[base_url], concurrency=concurrency, timeout=600.0, probe=False)
    start = time.perf_counter()
    out = backend.generate(requests)
    elapsed = time.perf_counter() - start
    failed = [c.error for c in out if c.text is None]
    if failed:
        raise SystemExit(f"{len(failed)} requests failed at concurrency {concurrency}: {failed[0]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=16)
    parser.add_argument("--tokens", type=int, default=16)
    args = parser.parse_args()
    requests = [
        GenerationRequest(
            messages=({"role": "user", "content": f"Write one sentence about the number {i}."},),
            seed=i,
            max_new_tokens=args.tokens,
        )
        for i in range(args.requests)
    ]
    result: dict[str, object] = {"requests": args.requests, "max_new_tokens": args.tokens}
    with tempfile.TemporaryDirectory() as logs:
        for mode, extra in (("sequential", ()), ("continuous_batching", ("--continuous-batching",))):
            with serve_transformers(Path(logs), extra_args=extra) as server:
                _timed(server.base_url, server.model, 1, requests[:2])  # warm-up: first-request compilation
                c1 = _timed(server.base_url, server.model, 1, requests)
                c8 = _timed(server.base_url, server.model, 8, requests)
            result[mode] = {"c1_s": round(c1, 2), "c8_s": round(c8, 2), "ratio_c8_vs_c1": round(c1 / c8, 2)}
    print(json.dumps(result))


if __name__ == "__main__":
    main()
