"""Retries for the HTTP backend: which failures are worth another try, how long to wait, and one request's loop.

Written by hand rather than with tenacity: the wait must honour the server's ``Retry-After`` header (seconds or an
HTTP date), each try may go to a different base URL, and the last failure must end as a one-line reason rather
than an exception; that is about thirty lines here and a custom wait, stop and callback class with tenacity.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import logging
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass

import httpx

__all__ = ["RetryPolicy", "backoff_delay", "parse_retry_after", "post_json"]

logger = logging.getLogger("bias_validity.probes.backends.openai_compat")

#: HTTP statuses worth another try: request timeout, conflict, rate limit and every server error.
_RETRY_STATUS = frozenset({408, 409, 429}) | frozenset(range(500, 600))


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to retry one request.

    ``max_retries`` tries after the first; the wait before retry ``k`` (0-based) is drawn uniformly from
    ``[0, min(backoff_max, backoff_base * 2**k)]`` ("full jitter"), or is the server's ``Retry-After`` when that is
    longer (capped at ``retry_after_max``).
    """

    max_retries: int = 6
    backoff_base: float = 0.5
    backoff_max: float = 30.0
    retry_after_max: float = 120.0


def backoff_delay(attempt: int, policy: RetryPolicy, retry_after: float | None, rng: random.Random) -> float:
    """Seconds to wait before retry number ``attempt`` (0-based).

    Parameters
    ----------
    attempt : int
        How many retries came before this one.
    policy : RetryPolicy
        The backoff settings.
    retry_after : float or None
        The server's ``Retry-After`` in seconds, if it sent one.
    rng : random.Random
        Source of the jitter.

    Returns
    -------
    float
        ``max(jitter, min(retry_after, policy.retry_after_max))`` where ``jitter`` is uniform on
        ``[0, min(backoff_max, backoff_base * 2**attempt)]``.

    Notes
    -----
    Full jitter (Brooker, 2015) spreads the retries of many clients that failed together, so they do not return
    as one wave; a server's ``Retry-After`` is a floor, never shortened.

    References
    ----------
    .. [1] M. Brooker, "Exponential Backoff And Jitter", AWS Architecture Blog, 2015.

    Examples
    --------
    >>> rng = random.Random(0)
    >>> 0 <= backoff_delay(3, RetryPolicy(backoff_base=0.5), None, rng) <= 4.0
    True
    >>> backoff_delay(0, RetryPolicy(backoff_base=0.5), 2.0, rng)
    2.0
    """
    cap = min(policy.backoff_max, policy.backoff_base * 2.0**attempt)
    jitter = rng.uniform(0.0, cap)
    if retry_after is None:
        return jitter
    return max(jitter, min(retry_after, policy.retry_after_max))


def parse_retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header: delay-seconds or an HTTP date (RFC 9110, section 10.2.3).

    Parameters
    ----------
    value : str or None
        The header value.
    now : float, optional
        The current Unix time (for dates); defaults to ``time.time()``.

    Returns
    -------
    float or None
        Seconds, never negative; ``None`` when the header is absent or unreadable.

    Examples
    --------
    >>> parse_retry_after("3")
    3.0
    >>> parse_retry_after("Wed, 21 Oct 2015 07:28:10 GMT", now=1445412480.0)
    10.0
    >>> parse_retry_after("soon") is None
    True
    """
    if value is None:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


async def post_json(
    client: httpx.AsyncClient,
    base_urls: Sequence[str],
    first: int,
    path: str,
    body: dict[str, object],
    policy: RetryPolicy,
    rng: random.Random,
) -> tuple[dict | None, str | None]:
    """POST ``body`` to ``path``, starting at ``base_urls[first]`` and moving to the next URL on each retry.

    Parameters
    ----------
    client : httpx.AsyncClient
        The shared client (its headers carry the credentials, its timeout is per try).
    base_urls : sequence of str
        The servers, each ending before ``/v1``-relative ``path``.
    first : int
        Index of the URL for the first try.
    path : str
        Endpoint path, e.g. ``"/chat/completions"``.
    body : dict
        The JSON request body.
    policy : RetryPolicy
        Retry settings.
    rng : random.Random
        Source of the jitter.

    Returns
    -------
    tuple
        ``(json, None)`` on success, ``(None, reason)`` when every try failed or the failure is not retryable
        (a 4xx other than 408/409/429). The reason is one line: the last failure and the number of tries.

    Examples
    --------
    >>> import asyncio
    >>> async def refused():
    ...     async with httpx.AsyncClient(timeout=2.0) as client:
    ...         return await post_json(client, ["http://127.0.0.1:9"], 0, "/x", {}, RetryPolicy(max_retries=0),
    ...                                random.Random(0))
    >>> data, reason = asyncio.run(refused())
    >>> data is None, reason.startswith("connection failed")
    (True, True)
    """
    reason = ""
    for attempt in range(policy.max_retries + 1):
        url = base_urls[(first + attempt) % len(base_urls)] + path
        retry_after = None
        try:
            response = await client.post(url, json=body)
        except httpx.TimeoutException as exc:
            reason = f"timed out after {client.timeout.read}s ({type(exc).__name__})"
        except httpx.TransportError as exc:
            reason = f"connection failed ({type(exc).__name__}: {_first_line(exc)})"
        else:
            if response.status_code == 200:
                try:
                    data = response.json()
                except (json.JSONDecodeError, UnicodeDecodeError):
                    data = None
                if isinstance(data, dict) and isinstance(data.get("choices"), list) and data["choices"]:
                    return data, None
                reason = "malformed response (not an OpenAI JSON body with choices)"
            else:
                reason = f"HTTP {response.status_code}: {_first_line(response.text)[:200]}"
                if response.status_code not in _RETRY_STATUS:
                    return None, f"{reason} (not retried)"
                retry_after = parse_retry_after(response.headers.get("retry-after"))
        if attempt == policy.max_retries:
            break
        delay = backoff_delay(attempt, policy, retry_after, rng)
        logger.info("retry %d/%d of %s in %.2fs: %s", attempt + 1, policy.max_retries, url, delay, reason)
        await asyncio.sleep(delay)
    return None, f"{reason} (after {policy.max_retries + 1} tries)"


def _first_line(obj: object) -> str:
    text = str(obj).strip()
    return text.splitlines()[0] if text else ""
