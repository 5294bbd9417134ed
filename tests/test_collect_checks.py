"""``collect`` checks what it can without a model before it loads one or contacts a server: dimensions, methods,
counts, options and the store's run spec. Proof that nothing was loaded: the model cache stays empty (the first
load of ``hf:smollm2`` converts its GGUF into it), and a server behind a proxy sees no request."""

from __future__ import annotations

import pytest
from _support.fault_proxy import FaultProxy
from _support.tiny_model import make_tiny_model

from bias_validity.cli import main


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """Made before a test empties the cache (it borrows SmolLM2's tokenizer from the cache)."""
    return make_tiny_model(tmp_path_factory.mktemp("model") / "tiny-llama")


@pytest.fixture
def empty_cache(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setenv("BIAS_VALIDITY_CACHE", str(cache))
    return cache


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--dimensions", "foo"], "unknown dimension 'foo'"),
        (["--methods", "implicit", "bar"], "unknown method(s) bar"),
        (["--sessions", "0"], "sessions must be an integer >= 1 (got 0)"),
        (["--reps", "0"], "reps must be an integer >= 1 (got 0)"),
        (["--items-per-dimension", "0"], "items_per_dimension must be an integer >= 1 (got 0)"),
        (["--batch-size", "0"], "batch_size must be an integer >= 1 (got 0)"),
        (["--max-new-tokens", "0"], "max_new_tokens must be an integer >= 1 (got 0)"),
        (["--run", "3"], "no such store, so no run 3 to resume"),
        (["--base-url", "http://127.0.0.1:9/v1"], "--base-url applies to openai: models, not hf:smollm2"),
        (["--model", "glove:6B-50d", "--score-prefix", "x"], "--score-prefix applies to hf: and openai: models"),
    ],
)
def test_a_bad_argument_fails_before_the_model_loads(empty_cache, tmp_path, capsys, args, message):
    out = tmp_path / "study.sqlite"
    assert main(["collect", "--model", "hf:smollm2", *args, "--no-progress", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err
    assert not empty_cache.exists() and not out.exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--dimensions", "foo"], "unknown dimension 'foo'"),
        (["--concurrency", "0"], "concurrency must be an integer >= 1 (got 0)"),
    ],
)
def test_a_bad_argument_fails_before_the_server_is_asked(tmp_path, capsys, args, message):
    with FaultProxy("http://127.0.0.1:9/v1") as proxy:
        argv = ["collect", "--model", "openai:m", "--base-url", proxy.base_url, *args, "--out", str(tmp_path / "s")]
        assert main(argv) == 2
    assert message in capsys.readouterr().err and proxy.hits == []


def test_the_store_run_spec_is_checked_before_the_model_loads(tiny, empty_cache, tmp_path, capsys):
    out = tmp_path / "study.sqlite"
    design = [
        "--dimensions",
        "gender_career",
        "--items-per-dimension",
        "1",
        "--methods",
        "embedding",
        "--no-progress",
        "--out",
        str(out),
    ]
    assert main(["collect", "--model", f"hf:{tiny}", *design]) == 0
    capsys.readouterr()
    assert main(["collect", "--model", "hf:smollm2", "--temperature", "1.0", *design]) == 2
    err = capsys.readouterr().err
    assert "run 1 holds the answers of hf:tiny-llama collected under other settings" in err
    assert "temperature: 0.7 in the store, 1.0 now" in err
    assert not empty_cache.exists()
