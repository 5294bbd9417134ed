"""The OpenAI-compatible HTTP backend: vLLM, SGLang, llama.cpp, ``transformers serve``, OpenAI and the like.

Requests run concurrently (at most ``concurrency`` in flight, one ``httpx.AsyncClient``), spread round-robin over
one or more base URLs; each failed try (429, 5xx, connection reset, timeout, malformed body) is retried with
jittered exponential backoff that honours ``Retry-After``, on the next base URL. Every request ends either as
text or as ``Completion(None, error=reason)``, which the runner stores with status ``error`` and asks again on a
rerun. The API key is read from an environment variable, sent only in the ``Authorization`` header, and scrubbed
from every reason, name and provenance record.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import os
import random
import threading
from collections.abc import Coroutine, Sequence
from urllib.parse import urlsplit

import httpx

from bias_validity.probes.backends._echo_logprobs import COUNTING_TEXT, echo_body, echo_layout, text_logprob
from bias_validity.probes.backends._http_retry import RetryPolicy, post_json
from bias_validity.probes.backends.base import Backend, Capability, Completion, GenerationRequest, Unsupported

__all__ = [
    "OpenAICompatBackend",
    "load_openai_backend",
    "identify_openai",
    "openai_identity",
    "CHAT_PATH",
    "chat_body",
    "chat_completion",
]

#: The chat endpoint, relative to the API root (``.../v1``).
CHAT_PATH = "/chat/completions"

logger = logging.getLogger(__name__)


class OpenAICompatBackend(Backend):
    """A model behind an OpenAI-compatible HTTP API. Build it with :func:`load_openai_backend`.

    ``capabilities`` is always CHAT; SEQUENCE_LOGPROBS is added only when the start-up probe found that the
    server's ``/v1/completions`` returns per-token log-probabilities of an echoed prompt, lined up with the tokens
    they score, for every token of the scored text (see :mod:`bias_validity.probes.backends._echo_logprobs`).
    Each sentence is scored after ``score_prefix``, the context it is conditioned on (by default none: then the
    server must itself start the prompt with a token, as vLLM does for a model whose tokenizer adds BOS).
    CHOICE_LOGPROBS is never claimed: the exact log-probability of a multi-token answer after a chat prompt needs
    the server's chat template and tokenizer, which the API does not expose; the chat API's ``top_logprobs`` (which
    the probe records) score only the first token of the answer the server generated, an approximation.
    """

    def __init__(
        self,
        model: str,
        *,
        base_urls: Sequence[str],
        api_key: str | None,
        api_key_env: str,
        concurrency: int,
        timeout: float,
        policy: RetryPolicy,
        score_prefix: str = "",
        seed: int = 0,
    ) -> None:
        self.model = model
        self.score_prefix = score_prefix
        self.base_urls = [u.rstrip("/") for u in base_urls]
        self.concurrency = concurrency
        self.timeout = timeout
        self.policy = policy
        self._api_key_env = api_key_env
        self._secret = api_key or None
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._rng = random.Random(seed)
        self._next = 0
        # the model, not the server, names the rows: a study resumes when the deployment moves to other URLs
        self.name = f"openai:{model}"
        self.capabilities = frozenset({Capability.CHAT})
        self._logprobs: dict[str, object] = {
            "probed": False,
            "sequence": False,
            "echo_layout": None,
            "chat_top_logprobs": False,
        }

    def __repr__(self) -> str:
        return f"OpenAICompatBackend({self.name!r}, base_urls={[_public_url(u) for u in self.base_urls]})"

    @property
    def provenance(self) -> dict[str, object]:
        """Name, model, base URLs (without credentials), key variable name, retry settings, log-prob finding."""
        return {
            "name": self.name,
            "model": self.model,
            "base_urls": [_public_url(u) for u in self.base_urls],
            "api_key_env": self._api_key_env,
            "api_key_set": self._secret is not None,
            "concurrency": self.concurrency,
            "timeout_s": self.timeout,
            "max_retries": self.policy.max_retries,
            "score_prefix": self.score_prefix,
            "logprobs": dict(self._logprobs),
        }

    @property
    def identity(self) -> dict[str, object]:
        """The served model's name, and the score prefix when one is set (:func:`identify_openai`)."""
        return openai_identity(self.model, self.score_prefix)

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Completion]:
        """Answer each chat request; a request that fails every try comes back as ``Completion(None, error)``."""
        bodies = [chat_body(self.model, r) for r in requests]
        results = _run(self._post_all(CHAT_PATH, bodies))
        out = []
        for data, reason in results:
            done = chat_completion(data) if data is not None else Completion(None, error=reason)
            out.append(done if done.text is not None else Completion(None, error=self._scrub(done.error)))
        return out

    def sequence_logprobs(self, texts: Sequence[str]) -> list[float]:
        """log P(text | score_prefix) summed over the text's tokens, from ``/v1/completions`` with ``echo``."""
        if not self._logprobs["sequence"]:
            raise Unsupported(self._no_logprobs_reason())
        bodies = [echo_body(self.model, self.score_prefix + t) for t in texts]
        out = []
        for text, (data, reason) in zip(texts, _run(self._post_all("/completions", bodies)), strict=True):
            total = text_logprob(data, text) if data is not None else None
            if total is None:
                raise RuntimeError(self._scrub(reason or "server returned no prompt log-probabilities"))
            out.append(total)
        return out

    def choice_logprobs(
        self, prompts: Sequence[tuple[dict[str, str], ...]], options: Sequence[Sequence[str]]
    ) -> list[list[float]]:
        """Not available over HTTP: see the class docstring."""
        raise Unsupported(
            f"server at {_public_url(self.base_urls[0])} gives no exact answer log-probabilities over the chat API"
        )

    def probe(self) -> dict[str, object]:
        """Ask the first server once whether it returns log-probabilities; set ``capabilities`` from the answer."""
        chat_body = {
            "model": self.model,
            "messages": [{"role": "user", "content": "Hello"}],
            "max_tokens": 1,
            "temperature": 0.0,
            "logprobs": True,
            "top_logprobs": 2,
        }
        [(chat, chat_reason)], [(echo, _)] = _run(
            self._post_all(CHAT_PATH, [chat_body], pinned=True),
            self._post_all(
                "/completions", [echo_body(self.model, self.score_prefix + COUNTING_TEXT, top=1)], pinned=True
            ),
        )
        if chat is None and chat_reason and chat_reason.endswith("(not retried)"):  # a server strict about fields
            chat, chat_reason = _run(self._post_all(CHAT_PATH, [_plain(chat_body)], pinned=True))[0]
        if chat is None:
            raise ValueError(
                f"server at {_public_url(self.base_urls[0])} did not answer a chat request: {self._scrub(chat_reason)}"
            )
        top = (
            (chat["choices"][0].get("logprobs") or {}).get("content") if isinstance(chat["choices"][0], dict) else None
        )
        layout = echo_layout(echo) if echo is not None else "unreadable"
        scored = echo is not None and text_logprob(echo, COUNTING_TEXT) is not None
        sequence = layout in ("aligned", "unchecked") and scored
        self._logprobs = {"probed": True, "sequence": sequence, "echo_layout": layout, "chat_top_logprobs": bool(top)}
        if sequence:
            self.capabilities = self.capabilities | {Capability.SEQUENCE_LOGPROBS}
        logger.info("%s: log-probabilities %s", self.name, self._logprobs)
        return dict(self._logprobs)

    async def _post_all(
        self, path: str, bodies: list[dict[str, object]], *, pinned: bool = False
    ) -> list[tuple[dict | None, str | None]]:
        limits = httpx.Limits(max_connections=self.concurrency, max_keepalive_connections=self.concurrency)
        semaphore = asyncio.Semaphore(self.concurrency)
        async with httpx.AsyncClient(headers=self._headers, timeout=self.timeout, limits=limits) as client:

            async def one(body: dict[str, object], first: int) -> tuple[dict | None, str | None]:
                async with semaphore:
                    urls = self.base_urls[:1] if pinned else self.base_urls
                    return await post_json(client, urls, first, path, body, self.policy, self._rng)

            starts = [(self._next + i) % len(self.base_urls) for i in range(len(bodies))]
            self._next = (self._next + len(bodies)) % len(self.base_urls)
            return list(await asyncio.gather(*(one(b, s) for b, s in zip(bodies, starts, strict=True))))

    def _scrub(self, reason: str | None) -> str:
        reason = reason or "unknown error"
        return reason.replace(self._secret, "***") if self._secret else reason

    def _no_logprobs_reason(self) -> str:
        server = f"server at {_public_url(self.base_urls[0])}"
        if not self._logprobs["probed"]:
            return f"{server} was not probed for log-probabilities"
        if self._logprobs["echo_layout"] == "unreadable":
            return f"{server} returns no log-probabilities for the tokens of an echoed prompt"
        if self._logprobs["echo_layout"] == "shifted":
            return (
                f"{server} echoes prompt log-probabilities shifted by one token (each token scored by the "
                "distribution after it, as llama-cpp-python does unless the prompt starts with the model's BOS "
                "token): set the score prefix to begin with the model's BOS token"
            )
        return (
            f"{server} gives the first token of an echoed prompt no log-probability: set the score prefix to "
            "the model's start token (e.g. <|endoftext|>)"
        )


def load_openai_backend(
    name: str,
    *,
    base_urls: Sequence[str],
    api_key_env: str = "OPENAI_API_KEY",
    concurrency: int = 8,
    timeout: float = 60.0,
    max_retries: int = 6,
    backoff_base: float = 0.5,
    backoff_max: float = 30.0,
    score_prefix: str = "",
    probe: bool = True,
) -> OpenAICompatBackend:
    """Connect to a model served over an OpenAI-compatible HTTP API.

    Parameters
    ----------
    name : str
        The model name the server expects in the ``model`` field (``openai:<name>`` on the command line).
    base_urls : sequence of str
        One or more API roots including ``/v1`` (e.g. ``http://127.0.0.1:8000/v1``); requests are spread over
        them round-robin, and a retry moves to the next one.
    api_key_env : str, default "OPENAI_API_KEY"
        Environment variable holding the API key; sent as ``Authorization: Bearer``. Unset or empty: no header
        (local servers need none).
    concurrency : int, default 8
        Requests in flight at once, over all base URLs.
    timeout : float, default 60.0
        Seconds allowed for each try of each request.
    max_retries : int, default 6
        Tries after the first for a request that failed with 408, 409, 429, 5xx, a connection error, a timeout or
        a malformed body.
    backoff_base, backoff_max : float, default 0.5 and 30.0
        Full-jitter backoff: retry ``k`` waits ``uniform(0, min(backoff_max, backoff_base * 2**k))`` seconds, or
        the server's ``Retry-After`` when longer.
    score_prefix : str, default ""
        Text sent before every sentence the logprob method scores: the context it is conditioned on (its own
        tokens are not summed). For llama-cpp-python it must begin with the model's BOS token, or the echoed
        log-probabilities are shifted (the probe detects that and leaves the method unsupported), e.g.
        ``"<|im_start|><|endoftext|>"`` for SmolLM2.
    probe : bool, default True
        Ask the first server at start-up (one chat request, one echoed completion) whether it answers and whether
        it returns log-probabilities. Without the probe the backend claims CHAT only.

    Returns
    -------
    OpenAICompatBackend
        ``name`` is ``openai:<name>@<host:port of the first base URL>``; ``provenance`` holds ``name``, ``model``,
        ``base_urls`` (credentials removed), ``api_key_env`` (the variable's name, never its value),
        ``api_key_set``, ``concurrency``, ``timeout_s``, ``max_retries`` and ``logprobs`` (``probed``,
        ``sequence``: prompt log-probabilities via ``echo``, ``chat_top_logprobs``: ``top_logprobs`` on chat
        answers).

    Notes
    -----
    Validated against ``transformers serve`` 5.24 on loopback (which ignores ``logprobs``, ``echo`` and, unless
    the model's generation config samples, ``temperature``), directly and behind a proxy that injects 429 with
    ``Retry-After``, 500, connection resets, slow responses and malformed JSON (``tests/test_openai_*.py``).

    Examples
    --------
    >>> load_openai_backend("m", base_urls=[])
    Traceback (most recent call last):
    ...
    ValueError: base_urls is empty: give at least one server, e.g. http://127.0.0.1:8000/v1
    >>> backend = load_openai_backend("m", base_urls=["http://127.0.0.1:8000/v1"], probe=False)
    >>> backend.name, sorted(backend.capabilities)
    ('openai:m', ['chat'])
    """
    _check_options(base_urls, concurrency, timeout, max_retries, backoff_base, backoff_max)
    backend = OpenAICompatBackend(
        name,
        base_urls=base_urls,
        api_key=os.environ.get(api_key_env) or None,
        api_key_env=api_key_env,
        concurrency=concurrency,
        timeout=timeout,
        policy=RetryPolicy(max_retries=max_retries, backoff_base=backoff_base, backoff_max=backoff_max),
        score_prefix=score_prefix,
    )
    if probe:
        backend.probe()
    return backend


def identify_openai(name: str, **options: object) -> dict[str, object]:
    """Check the options of :func:`load_openai_backend` without contacting a server; return the model's identity.

    The API gives no weights hash or revision, so the served model's name is its identity (``openai:<name>``),
    with the score prefix when one is set (it changes the logprob scores); a deployment that moves to other URLs
    keeps it. Raises ``ValueError`` for options :func:`load_openai_backend` would refuse.

    Examples
    --------
    >>> identify_openai("m", base_urls=["http://127.0.0.1:8000/v1"])
    {'name': 'openai:m'}
    >>> identify_openai("m", base_urls=["127.0.0.1:8000"])
    Traceback (most recent call last):
    ...
    ValueError: base URL '<invalid URL>' is not an http(s) URL, e.g. http://127.0.0.1:8000/v1
    """
    bound = inspect.signature(load_openai_backend).bind(name, **options)
    bound.apply_defaults()
    settings = dict(bound.arguments)
    _check_options(**{k: settings[k] for k in inspect.signature(_check_options).parameters})
    return openai_identity(name, str(settings["score_prefix"]))


def _check_options(
    base_urls: Sequence[str],
    concurrency: int,
    timeout: float,
    max_retries: int,
    backoff_base: float,
    backoff_max: float,
) -> None:
    if not base_urls:
        raise ValueError("base_urls is empty: give at least one server, e.g. http://127.0.0.1:8000/v1")
    for url in base_urls:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"base URL {_public_url(url)!r} is not an http(s) URL, e.g. http://127.0.0.1:8000/v1")
    for label, value, low in (("concurrency", concurrency, 1), ("max_retries", max_retries, 0)):
        if not isinstance(value, int) or value < low:
            raise ValueError(f"{label} must be an integer >= {low} (got {value!r})")
    for label, value in (("timeout", timeout), ("backoff_base", backoff_base), ("backoff_max", backoff_max)):
        if not value > 0:
            raise ValueError(f"{label} must be > 0 seconds (got {value!r})")


def openai_identity(model: str, score_prefix: str = "") -> dict[str, object]:
    """The identity of served model ``model`` (:func:`identify_openai`), known from its name alone: no server needed.

    Examples
    --------
    >>> openai_identity("m", "<s>")
    {'name': 'openai:m', 'score_prefix': '<s>'}
    """
    return {"name": f"openai:{model}", **({"score_prefix": score_prefix} if score_prefix else {})}


def _run(*coros: Coroutine) -> list:
    """Run coroutines to completion from sync code, also when the caller already runs an event loop (Jupyter)."""

    async def both() -> list:
        return list(await asyncio.gather(*coros))

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        results = asyncio.run(both())
    else:
        box: list = []
        worker = threading.Thread(target=lambda: box.append(asyncio.run(both())))
        worker.start()
        worker.join()
        results = box[0]
    return results[0] if len(coros) == 1 else results


def _plain(body: dict[str, object]) -> dict[str, object]:
    return {k: v for k, v in body.items() if k not in ("logprobs", "top_logprobs")}


def chat_body(model: str, request: GenerationRequest) -> dict[str, object]:
    """The JSON body of the chat request that asks ``request`` of served model ``model`` (as the backend sends it,
    and as a batch line carries it).

    Examples
    --------
    >>> chat_body("m", GenerationRequest(messages=({"role": "user", "content": "Hi"},), seed=3, temperature=0.0,
    ...                                  max_new_tokens=5))
    {'model': 'm', 'messages': [{'role': 'user', 'content': 'Hi'}], 'max_tokens': 5, 'temperature': 0.0, 'seed': 3}
    """
    return {
        "model": model,
        "messages": [dict(m) for m in request.messages],
        "max_tokens": request.max_new_tokens,
        "temperature": request.temperature,
        "seed": request.seed,
    }


def chat_completion(data: object) -> Completion:
    """The answer text of a chat completion body (``choices[0].message.content``), or an error naming what is missing.

    Examples
    --------
    >>> chat_completion({"choices": [{"message": {"role": "assistant", "content": "Amy, John"}}]})
    Completion(text='Amy, John', error=None)
    >>> chat_completion({"choices": []}).error
    'malformed response (no choices[0].message.content)'
    """
    choices = data.get("choices") if isinstance(data, dict) else None
    choice = choices[0] if isinstance(choices, list) and choices else None
    message = choice.get("message") if isinstance(choice, dict) else None
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return Completion(content)
    return Completion(None, error="malformed response (no choices[0].message.content)")


def _host(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.hostname}:{parts.port}" if parts.port else str(parts.hostname)


def _public_url(url: str) -> str:
    """The URL without user, password, query or fragment (where credentials sometimes hide)."""
    parts = urlsplit(url)
    netloc = _host(url) if parts.hostname else parts.netloc
    return f"{parts.scheme}://{netloc}{parts.path}" if parts.scheme else "<invalid URL>"
