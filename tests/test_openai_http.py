"""The OpenAI-compatible backend against a real ``transformers serve`` on loopback, directly and behind a real HTTP
proxy that injects 429 (Retry-After), 500, connection resets, slow responses, malformed JSON and a key-echoing 401.

One server (SmolLM2-135M-Instruct, converted from the packaged GGUF) serves the whole module. Requests ask for few
tokens so the module stays within about two minutes on 2 CPU cores.
"""

from __future__ import annotations

import logging
import os
import random
from pathlib import Path

import pytest
from _support.fault_proxy import FaultProxy

from bias_validity.probes.backends._http_retry import RetryPolicy, backoff_delay
from bias_validity.probes.backends.base import Capability, GenerationRequest, Unsupported
from bias_validity.probes.backends.local_server import free_port, serve_transformers
from bias_validity.probes.backends.openai_compat import load_openai_backend
from bias_validity.probes.schema import Status

KEY_ENV = "BV_TEST_OPENAI_KEY"
KEY = "sk-bv-test-9f3c2a71e5d84b06-do-not-leak"


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    with serve_transformers(tmp_path_factory.mktemp("serve")) as server:
        yield server


@pytest.fixture
def api_key(monkeypatch):
    monkeypatch.setenv(KEY_ENV, KEY)
    return KEY


def _requests(n: int, tokens: int = 3) -> list[GenerationRequest]:
    return [
        GenerationRequest(
            messages=({"role": "user", "content": f"Name a colour ({i})."},), seed=i, max_new_tokens=tokens
        )
        for i in range(n)
    ]


def _backend(urls, **options):
    options = {"probe": False, "backoff_base": 0.05, "api_key_env": KEY_ENV, **options}
    return load_openai_backend(options.pop("model"), base_urls=urls, **options)


def test_direct_generation_and_logprob_probe(served):
    backend = load_openai_backend(served.model, base_urls=[served.base_url])
    assert backend.capabilities == {Capability.CHAT}  # transformers serve ignores logprobs and echo
    assert backend.provenance["logprobs"] == {
        "probed": True,
        "sequence": False,
        "echo_layout": "unreadable",
        "chat_top_logprobs": False,
    }
    out = backend.generate(_requests(3))
    assert all(c.error is None and isinstance(c.text, str) and c.text.strip() for c in out), out
    with pytest.raises(Unsupported, match=r"server at http://127\.0\.0\.1:\d+/v1 returns no log-probabilities"):
        backend.sequence_logprobs(["The cat sat on the mat."])
    with pytest.raises(Unsupported, match="no exact answer log-probabilities"):
        backend.choice_logprobs([({"role": "user", "content": "a or b?"},)], [["a", "b"]])


def test_every_fault_is_retried_once_and_nothing_is_duplicated(served):
    faults = ["429:1", "500", "reset", "malformed", "slow:2"]
    with FaultProxy(served.base_url, schedule=list(faults)) as proxy:
        out = _backend([proxy.base_url], model=served.model, concurrency=4).generate(_requests(5))
    assert all(c.text is not None for c in out), out
    actions = proxy.actions()
    # four failing faults cost one extra try each; the slow answer and four forwards succeed: 5 + 4 hits in all
    assert sorted(actions) == sorted(faults + ["pass"] * 4)


def test_retry_after_is_a_floor_on_the_wait(served):
    with FaultProxy(served.base_url, schedule=["429:2"]) as proxy:
        out = _backend([proxy.base_url], model=served.model, backoff_base=0.01).generate(_requests(1))
    assert out[0].text is not None
    first, second = proxy.hits
    assert second.at - first.at >= 2.0  # the jittered backoff alone would wait at most 0.01 s


def test_timeout_is_retried(served):
    with FaultProxy(served.base_url, schedule=["slow:12"]) as proxy:
        out = _backend([proxy.base_url], model=served.model, timeout=8.0).generate(_requests(1))
    assert out[0].text is not None, out
    assert proxy.actions()[:2] == ["slow:12", "pass"]


def test_exhausted_retries_end_as_errors_and_a_rerun_completes_them(served):
    with FaultProxy(served.base_url, default="500") as proxy:
        backend = _backend([proxy.base_url], model=served.model, max_retries=2)
        first = backend.generate(_requests(3))
        assert [c.text for c in first] == [None] * 3
        assert all(c.error.startswith("HTTP 500") and c.error.endswith("(after 3 tries)") for c in first), first
        assert len(proxy.hits) == 9
        proxy.default = "pass"
        again = backend.generate(_requests(3))
    assert all(c.text is not None for c in again), again


def test_client_errors_are_not_retried_and_the_key_is_scrubbed(served, api_key):
    with FaultProxy(served.base_url, schedule=["401echo"]) as proxy:
        out = _backend([proxy.base_url], model=served.model).generate(_requests(1))
    assert [h.authorization for h in proxy.hits] == [f"Bearer {api_key}"]  # sent once, in the header
    assert out[0].text is None and out[0].error.startswith("HTTP 401") and "(not retried)" in out[0].error
    assert "Bearer ***" in out[0].error and api_key not in out[0].error


def test_connection_refused_ends_as_an_error():
    url = f"http://127.0.0.1:{free_port()}/v1"
    out = _backend([url], model="m", max_retries=1, backoff_base=0.01).generate(_requests(2))
    assert all(c.text is None and c.error.startswith("connection failed") for c in out), out


def test_load_is_spread_over_base_urls(served):
    with FaultProxy(served.base_url) as a, FaultProxy(served.base_url) as b:
        out = _backend([a.base_url, b.base_url], model=served.model).generate(_requests(4))
    assert all(c.text is not None for c in out)
    assert (len(a.hits), len(b.hits)) == (2, 2)


def test_full_jitter_backoff_bounds_and_mean():
    # full jitter: uniform on [0, min(cap, base * 2**k)], so the mean is half the bound (closed form)
    rng = random.Random(1)
    policy = RetryPolicy(backoff_base=0.5, backoff_max=3.0)
    for attempt, bound in [(0, 0.5), (2, 2.0), (5, 3.0)]:
        draws = [backoff_delay(attempt, policy, None, rng) for _ in range(4000)]
        assert 0.0 <= min(draws) and max(draws) <= bound
        assert abs(sum(draws) / len(draws) - bound / 2) < 0.03 * bound
    assert backoff_delay(0, policy, 500.0, rng) == policy.retry_after_max


def test_collect_end_to_end_through_faults_then_rerun_fills_gaps(served, api_key, tmp_path, capsys, caplog):
    """A small design through the proxy: the first run (no retries) leaves error rows, the rerun fills them; the
    key reaches the server in the header and nowhere else (store bytes, logs, stdout/stderr, errors, provenance)."""
    from bias_validity.probes.collect import collect  # the runner; imported here so the backend tests above stand alone
    from bias_validity.probes.store import ResponseStore, read_responses

    caplog.set_level(logging.DEBUG)
    store = tmp_path / "responses.sqlite"
    design = {
        "dimensions": ["gender_career"],
        "methods": ["implicit", "explicit", "logprob"],
        "sessions": 1,
        "reps": 1,
        "items_per_dimension": 1,
        "max_new_tokens": 8,
        "batch_size": 6,
    }
    faults = ["429:1", "500", "reset", "malformed", "401echo"]
    with FaultProxy(served.base_url, schedule=faults) as proxy:
        backend = _backend([proxy.base_url], model=served.model, max_retries=0, concurrency=4, timeout=600.0)
        first = collect(backend, store, progress=False, **design)
        table = read_responses(store)
        # nothing lost: every question asked is stored, as ok or error (the explicit statements with their
        # reversals); the 4 logprob questions this server cannot score are counted as skipped, never asked
        assert len(table) == 24 and first.questions == 24 + sum(first.skipped_questions.values()) == 28
        errors = table[table["status"] == Status.ERROR.value]
        assert len(errors) == len(faults) == first.errors
        assert "logprob" in first.skipped

        backend = _backend([proxy.base_url], model=served.model, max_retries=6, concurrency=4, timeout=600.0)
        second = collect(backend, store, progress=False, **design)
    final = read_responses(store)
    assert second.complete and second.errors == 0
    assert len(final) == 24 and final["response_id"].is_unique  # nothing duplicated
    assert set(final["response_id"]) == set(table["response_id"])
    assert (final["status"] != Status.ERROR.value).all()
    # every question is asked at least once and each fault costs one try; a retry under heavy load may add a hit
    assert len(proxy.hits) >= 24 + len(faults)
    assert {h.authorization for h in proxy.hits} == {f"Bearer {api_key}"}

    with ResponseStore(store) as db:
        provenance = repr(db.runs()) + repr(db.skipped().to_dict())
    captured = capsys.readouterr()
    haystacks = {
        "store file": Path(store).read_bytes().decode("latin-1"),
        "error reasons": " ".join(errors["params"].astype(str)),
        "run specs": provenance,
        "logs": caplog.text,
        "stdout": captured.out,
        "stderr": captured.err,
        "backend": repr(backend) + repr(backend.provenance) + repr(first) + repr(second),
    }
    assert [where for where, text in haystacks.items() if api_key in text] == []
    assert os.environ[KEY_ENV] == api_key
