"""A real HTTP proxy on loopback that forwards to an upstream server and injects faults on a schedule.

Each POST takes the next action of the schedule (then ``default``): ``pass`` forwards; ``429:N`` answers 429 with
``Retry-After: N``; ``500`` answers a server error; ``reset`` aborts the connection with a TCP RST; ``slow:S``
waits S seconds, then forwards; ``malformed`` answers 200 with a truncated JSON body; ``401echo`` answers 401 with
the received ``Authorization`` header in the body (as careless servers do). GET requests always pass.
"""

from __future__ import annotations

import http.client
import socket
import struct
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

__all__ = ["FaultProxy", "Hit"]


@dataclass(frozen=True)
class Hit:
    """One POST the proxy saw: when, which path, what it did, and the Authorization header it carried."""

    at: float
    path: str
    action: str
    authorization: str | None


@dataclass
class FaultProxy:
    """Forward ``127.0.0.1:<port>`` to ``upstream`` (a ``.../v1`` URL) with faults; use as a context manager."""

    upstream: str
    schedule: list[str] = field(default_factory=list)
    default: str = "pass"
    hits: list[Hit] = field(default_factory=list)

    def __post_init__(self) -> None:
        parts = urlsplit(self.upstream)
        self._target = (parts.hostname, parts.port)
        self._lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:  # keep test output quiet
                pass

            def do_GET(self) -> None:
                self._forward(b"")

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length", 0)))
                action = proxy._take(self.path, self.headers.get("authorization"))
                kind, _, arg = action.partition(":")
                if kind == "pass":
                    self._forward(body)
                elif kind == "429":
                    self._reply(429, b'{"error": "rate limited"}', {"Retry-After": arg or "1"})
                elif kind == "500":
                    self._reply(500, b'{"error": "injected server error"}')
                elif kind == "reset":
                    self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    self.close_connection = True
                    self.connection.close()
                elif kind == "slow":
                    time.sleep(float(arg))
                    self._forward(body)
                elif kind == "malformed":
                    self._reply(200, b'{"id": "x", "choices": [{"message": {"content": "trunc')
                elif kind == "401echo":
                    auth = (self.headers.get("authorization") or "").encode()
                    self._reply(401, b'{"error": "invalid key ' + auth + b'"}')
                else:
                    raise ValueError(f"unknown fault action {action!r}")

            def _reply(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                try:
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True

            def _forward(self, body: bytes) -> None:
                conn = http.client.HTTPConnection(*proxy._target, timeout=600)
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
                conn.request(self.command, self.path, body=body or None, headers=headers)
                upstream = conn.getresponse()
                data = upstream.read()
                conn.close()
                self._reply(upstream.status, data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self._server.server_address[1]}{urlsplit(self.upstream).path}"

    def _take(self, path: str, authorization: str | None) -> str:
        with self._lock:
            n = len(self.hits)
            action = self.schedule[n] if n < len(self.schedule) else self.default
            self.hits.append(Hit(time.monotonic(), path, action, authorization))
            return action

    def actions(self) -> list[str]:
        """The action taken for each POST so far, in arrival order."""
        with self._lock:
            return [h.action for h in self.hits]

    def __enter__(self) -> FaultProxy:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
