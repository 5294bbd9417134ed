"""A method that turns out unsupported mid-run is skipped with its reason, and every question of every other method
is still asked and stored, also those in a chunk that starts with a question of the skipped method.

The backend is the tiny random Llama checkpoint (tests/_support/tiny_model.py) behind a wrapper whose sentence
scoring raises the backend protocol's ``Unsupported`` from its second call on, as a server that stops returning
log-probabilities would: a fault no real part produces on demand.
"""

from __future__ import annotations

import pytest
from _support.tiny_model import make_tiny_model

from bias_validity.probes.backends.base import Backend, Unsupported
from bias_validity.probes.backends.hf import load_hf_backend
from bias_validity.probes.collect import collect
from bias_validity.probes.design import build_design
from bias_validity.probes.stimuli import load_dimensions
from bias_validity.probes.store import ResponseStore, read_responses

REASON = "server at http://127.0.0.1:9/v1 stopped returning log-probabilities"
DESIGN = {
    "dimensions": ["gender_career", "race"],
    "methods": ["logprob", "embedding", "explicit"],
    "sessions": 1,
    "reps": 1,
    "items_per_dimension": 2,
    "max_new_tokens": 4,
}
BATCH = 5


class _LosesSentenceScores(Backend):
    """The wrapped backend, except that sentence scoring is unsupported after its first call."""

    def __init__(self, inner: Backend) -> None:
        self.inner, self.name, self.capabilities, self.calls = inner, inner.name, inner.capabilities, 0

    @property
    def identity(self) -> dict[str, object]:
        return self.inner.identity

    def generate(self, requests):  # noqa: ANN001, ANN201
        return self.inner.generate(requests)

    def choice_logprobs(self, prompts, options):  # noqa: ANN001, ANN201
        return self.inner.choice_logprobs(prompts, options)

    def embed_words(self, words):  # noqa: ANN001, ANN201
        return self.inner.embed_words(words)

    def sequence_logprobs(self, texts):  # noqa: ANN001, ANN201
        self.calls += 1
        if self.calls > 1:
            raise Unsupported(REASON)
        return self.inner.sequence_logprobs(texts)


@pytest.fixture(scope="module")
def backend(tmp_path_factory):
    return _LosesSentenceScores(load_hf_backend(str(make_tiny_model(tmp_path_factory.mktemp("m") / "tiny-llama"))))


def test_a_method_skipped_mid_run_drops_no_other_question(backend, tmp_path):
    design = build_design(
        backend.name,
        load_dimensions(DESIGN["dimensions"]),
        DESIGN["methods"],
        sessions=1,
        reps=1,
        items_per_dimension=2,
        max_new_tokens=4,
    )
    chunks = [design[i : i + BATCH] for i in range(0, len(design), BATCH)]
    straddling = [c for c in chunks if c[0].method == "logprob" and {q.method for q in c} - {"logprob"}]
    assert straddling, "the design must put other methods' questions in chunks that start with a logprob question"

    store = tmp_path / "study.sqlite"
    summary = collect(backend, store, batch_size=BATCH, progress=False, **DESIGN)
    rows = read_responses(store)
    for method in ("embedding", "explicit"):  # every question of every other method is stored
        expected = {q.response_id for q in design if q.method == method}
        assert set(rows.loc[rows["method"] == method, "response_id"]) == expected, method
    with ResponseStore(store) as db:
        assert db.skipped().query("method == 'logprob'")["reason"].tolist() == [REASON]
    logprob = [q for q in design if q.method == "logprob"]
    assert set(rows.loc[rows["method"] == "logprob", "response_id"]) == {q.response_id for q in logprob[:BATCH]}

    # the summary accounts for every question: stored before, asked now, or left by the skipped method
    assert summary.skipped == {"logprob": REASON}
    assert summary.skipped_questions == {"logprob": len(logprob) - BATCH}
    assert summary.questions == len(design) == summary.already_stored + summary.asked + len(logprob) - BATCH
    assert summary.written == len(rows) == summary.asked and summary.errors == 0
    assert f"  skipped logprob ({len(logprob) - BATCH} questions): {REASON}" in summary.lines()

    again = collect(backend, store, batch_size=BATCH, progress=False, **DESIGN)  # a rerun asks nothing stored
    assert again.already_stored == len(rows) and again.written == 0


def test_methods_a_base_model_lacks_are_counted_with_their_reason(gemma, tmp_path):
    """Gemma-3-270M base has no chat template: its implicit and explicit questions are counted as skipped, never
    asked, and the summary says why."""
    summary = collect(
        gemma,
        tmp_path / "study.sqlite",
        dimensions=["gender_career"],
        items_per_dimension=1,
        methods=["implicit", "explicit", "embedding"],
        sessions=1,
        reps=1,
        progress=False,
    )
    # implicit: 3 wordings x 4 orders; explicit: 3 wordings x 2 orders x (the statement, its reversal)
    assert summary.skipped_questions == {"implicit": 12, "explicit": 12}
    assert (summary.questions, summary.asked, summary.written) == (26, 2, 2)  # embedding: the pair and WEAT
    assert set(summary.skipped) == {"implicit", "explicit"}
    assert all("base model without a chat template" in reason for reason in summary.skipped.values())
    header, *rest = summary.lines()
    assert header.endswith(
        "26 questions: 0 already stored, 2 asked, 2 stored now (ok 2), 24 skipped, 0 left with errors"
    )
    assert any(line.startswith("  skipped implicit (12 questions): ") for line in rest)
