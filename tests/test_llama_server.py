"""The OpenAI-compatible backend against a real server that returns log-probabilities: llama-cpp-python's server on
loopback, serving the packaged SmolLM2 GGUF with full logits, started once for the module.

llama-cpp-python 0.3 echoes prompt log-probabilities shifted by one token (each token scored by the distribution
after it) unless the prompt starts with the model's BOS token, which it drops (abetlen/llama-cpp-python#1983).
SmolLM2's GGUF names ``<|im_start|>`` as BOS and adds none, so sentences are scored after ``PREFIX``: its BOS, then
its document separator ``<|endoftext|>``; the local backend scores the same sentences after the same prefix.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from _support.fault_proxy import FaultProxy

from bias_validity.cli import main
from bias_validity.probes.backends.base import Capability, Unsupported
from bias_validity.probes.backends.hf import load_hf_backend
from bias_validity.probes.backends.local_server import serve_gguf
from bias_validity.probes.backends.openai_compat import load_openai_backend
from bias_validity.probes.collect import collect
from bias_validity.probes.design import Kind, build_design
from bias_validity.probes.stimuli import load_dimensions
from bias_validity.probes.store import read_responses

PREFIX = "<|im_start|><|endoftext|>"
#: nats per sentence between the server (llama.cpp's Q4_1 kernels, activations quantised to 8 bits) and the local
#: backend (the same weights dequantised to float32): measured 1.15 at most, 0.44 on average, over the 96 logprob
#: sentences of all six dimensions' first two items (the test scores the first item's 48: the server sorts the whole
#: vocabulary in Python for every echoed token)
TOLERANCE = 1.5


@pytest.fixture(scope="module")
def llama(tmp_path_factory):
    with serve_gguf(tmp_path_factory.mktemp("llama")) as server:
        yield server


@pytest.fixture(scope="module")
def scored(llama):
    """The server's backend with the BOS-first score prefix."""
    return load_openai_backend(llama.model, base_urls=[llama.base_url], score_prefix=PREFIX, timeout=300.0)


def test_a_shifted_echo_is_detected_and_not_used(llama):
    backend = load_openai_backend(llama.model, base_urls=[llama.base_url])
    assert backend.provenance["logprobs"] == {
        "probed": True,
        "sequence": False,
        "echo_layout": "shifted",
        "chat_top_logprobs": True,
    }
    assert Capability.SEQUENCE_LOGPROBS not in backend.capabilities
    with pytest.raises(Unsupported, match=r"echoes prompt log-probabilities shifted by one token"):
        backend.sequence_logprobs(["The cat sat on the mat."])


def test_a_bos_first_prefix_lines_the_echo_up(scored):
    assert scored.provenance["logprobs"]["echo_layout"] == "aligned"
    assert Capability.SEQUENCE_LOGPROBS in scored.capabilities
    assert scored.identity == {"name": "openai:smollm2", "score_prefix": PREFIX}


def test_sentence_logprobs_agree_with_the_local_backend(scored):
    local = load_hf_backend("smollm2", score_prefix=PREFIX)
    design = build_design(
        local.name,
        load_dimensions(None),
        ["logprob"],
        sessions=1,
        reps=1,
        items_per_dimension=1,
        with_choice_logprobs=False,
    )
    texts = [s for q in design if q.kind == Kind.SENTENCE_LOGPROB for s in q.sentences]
    http, here = np.array(scored.sequence_logprobs(texts)), np.array(local.sequence_logprobs(texts))
    gap = np.abs(http - here)
    assert len(texts) == 48 and gap.max() < TOLERANCE and gap.mean() < 0.6, (gap.max(), gap.mean())
    assert np.all(here < 0) and np.all(http < 0)
    # the logprob method's score, log P(consistent) - log P(inconsistent): within the same tolerance (measured 1.15
    # at most), so its sign agrees on every item whose local score is farther from 0 than that
    d_http, d_here = http[0::2] - http[1::2], here[0::2] - here[1::2]
    assert np.abs(d_http - d_here).max() < TOLERANCE
    clear = np.abs(d_here) > TOLERANCE
    assert clear.sum() >= 12 and np.all(np.sign(d_http[clear]) == np.sign(d_here[clear]))
    assert np.corrcoef(d_http, d_here)[0, 1] > 0.95


def test_the_logprob_method_runs_end_to_end_over_http(scored, tmp_path):
    store = tmp_path / "study.sqlite"
    summary = collect(
        scored, store, dimensions=["gender_career"], methods=["logprob"], items_per_dimension=2, progress=False
    )
    rows = read_responses(store)
    assert summary.complete and summary.skipped == {} and summary.written == len(rows) == 8
    assert set(rows["status"]) == {"ok"} and rows["template_id"].str.startswith("choice:").sum() == 0
    params = [json.loads(p) for p in rows["params"]]
    expected = [p["logprob_consistent"] - p["logprob_inconsistent"] for p in params]
    np.testing.assert_allclose(rows["score"].astype(float), expected)
    assert (rows["consistent"] == (rows["score"] > 0).astype(int)).all()
    again = scored.sequence_logprobs([json.loads(rows.loc[0, "prompt"])[0]])[0]
    assert again == pytest.approx(params[0]["logprob_consistent"], abs=1e-4)  # the server is deterministic


def test_chat_top_logprobs_are_found_but_closed_set_scoring_stays_unsupported(scored):
    """The server gives chat ``top_logprobs``, but only for the first tokens of the answer it generated: no exact
    probability of a given multi-token answer, so closed-set scoring is not claimed over HTTP."""
    assert scored.provenance["logprobs"]["chat_top_logprobs"] is True
    assert Capability.CHOICE_LOGPROBS not in scored.capabilities
    with pytest.raises(Unsupported, match="no exact answer log-probabilities over the chat API"):
        scored.choice_logprobs([({"role": "user", "content": "a or b?"},)], [["a", "b"]])


def test_collect_prints_what_it_did_and_exits_1_when_answers_failed(llama, tmp_path, capsys):
    """Behind a proxy that lets the start-up probe through, then rejects every request (401, not retried)."""
    store = tmp_path / "study.sqlite"
    args = [
        "collect",
        "--model",
        f"openai:{llama.model}",
        "--dimensions",
        "gender_career",
        "--items-per-dimension",
        "1",
        "--methods",
        "explicit",
        "logprob",
        "--sessions",
        "1",
        "--reps",
        "1",
        "--score-prefix",
        PREFIX,
        "--no-progress",
        "--out",
        str(store),
    ]
    with FaultProxy(llama.base_url, schedule=["pass", "pass"], default="401echo") as proxy:
        assert main([*args, "--base-url", proxy.base_url]) == 1
    out = capsys.readouterr().out
    assert (
        "openai:smollm2 (run 1): 16 questions: 0 already stored, 16 asked, 16 stored now (error 16), 0 skipped, "
        "16 left with errors" in out
    )
    assert "16 answers failed; run the same command again to retry them" in out
    assert len(read_responses(store)) == 16  # 12 explicit (the statements and their reversals) + 4 logprob
    assert main([*args, "--base-url", llama.base_url]) == 0  # the rerun asks the failed ones again
    assert "0 already stored, 16 asked, 16 stored now" in capsys.readouterr().out
    rows = read_responses(store)
    assert len(rows) == 16 and "error" not in set(rows["status"])
