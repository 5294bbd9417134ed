"""The local transformers backend on the real packaged models (SmolLM2-135M-Instruct, Gemma-3-270M)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from bias_validity.probes.backends import load_backend
from bias_validity.probes.backends.base import Capability, GenerationRequest, Unsupported
from bias_validity.probes.backends.hf import load_hf_backend
from bias_validity.probes.backends.model_cache import converted_model_dir, model_dir_for

COLOUR = ({"role": "user", "content": "Name a colour."},)
ANIMAL = ({"role": "system", "content": "Answer briefly."}, {"role": "user", "content": "Which animal barks? Say why."})
SENTENCES = [
    "The cat sat on the mat.",
    "She went to the market to buy some bread.",
    "The children played in the park after school.",
    "He drinks a cup of coffee every morning.",
    "We watched a movie at the cinema last night.",
    "The doctor told him to rest for a week.",
    "It rained all day, so the game was cancelled.",
    "My brother lives in a small house near the river.",
    "The teacher wrote the answer on the board.",
    "They are planning a trip to the mountains in summer.",
]


def _request(messages, seed, temperature=1.0, max_new_tokens=6):
    return GenerationRequest(messages=messages, seed=seed, temperature=temperature, max_new_tokens=max_new_tokens)


def test_names_and_capabilities(smollm2, gemma):
    assert smollm2.name == "hf:SmolLM2-135M-Instruct-Q4_1"
    assert smollm2.capabilities == {
        Capability.CHAT,
        Capability.CHOICE_LOGPROBS,
        Capability.SEQUENCE_LOGPROBS,
        Capability.EMBEDDING,
    }
    assert gemma.name == "hf:gemma-3-270m-Q4_K_M"
    assert gemma.capabilities == {Capability.SEQUENCE_LOGPROBS, Capability.EMBEDDING}
    with pytest.raises(Unsupported, match="base model"):
        gemma.generate([_request(COLOUR, 0)])
    with pytest.raises(Unsupported, match="base model"):
        gemma.choice_logprobs([COLOUR], [["red", "blue"]])


def test_cache_written_and_reused(smollm2):
    directory = converted_model_dir("smollm2")
    assert directory == model_dir_for("smollm2") == smollm2.model_dir
    config = json.loads((directory / "config.json").read_text())
    assert config["architectures"] == ["LlamaForCausalLM"]
    assert "quantization_config" not in config
    again = load_backend("hf:smollm2")
    provenance = again.provenance
    assert provenance["source"] == "cache"
    assert provenance["gguf_sha256"] == smollm2.provenance["gguf_sha256"]
    assert len(provenance["gguf_sha256"]) == 64 and provenance["transformers"] and provenance["torch"]
    # the same weights: identical sentence scores from the reloaded copy
    assert again.sequence_logprobs(SENTENCES[:1]) == smollm2.sequence_logprobs(SENTENCES[:1])


def test_generation_is_reproducible_and_independent_of_the_batch(smollm2):
    greedy = [_request(COLOUR, 1, temperature=0), _request(COLOUR, 2, temperature=0)]
    batch = [_request(COLOUR, seed) for seed in range(4)] + [_request(ANIMAL, 7)] + greedy
    together = smollm2.generate(batch)
    assert all(c.error is None and c.text for c in together)
    alone = smollm2.generate([batch[2]])
    other_company = smollm2.generate([_request(ANIMAL, 99), batch[2], _request(ANIMAL, 3)])
    assert alone[0].text == together[2].text == other_company[1].text
    # different seeds at temperature 1 differ somewhere
    assert len({c.text for c in together[:4]}) > 1
    # greedy decoding ignores the seed
    assert together[5].text == together[6].text


def test_the_prefix_cache_changes_no_answer(smollm2):
    """A batch of implicit prompts shares its system line and worked example: run once from a key/value cache, then
    each prompt's rest from it, every answer is the one the uncached batch gives (sampled with each seed, greedy)."""
    from bias_validity.probes.backends.hf import _shared_prefix_length
    from bias_validity.probes.design import build_design
    from bias_validity.probes.stimuli import load_dimensions

    design = build_design(
        smollm2.name, load_dimensions(["gender_career"]), ["implicit"], sessions=1, reps=1, items_per_dimension=2
    )[:16]
    requests = [
        _request(q.messages, q.seed, temperature=0.0 if k % 4 == 0 else 0.7, max_new_tokens=12)
        for k, q in enumerate(design)
    ]
    prompts = sorted(smollm2._chat_ids(r.messages) for r in requests)
    assert _shared_prefix_length(prompts[:8]) > 0.6 * len(prompts[0])  # most of each prompt is shared
    try:
        smollm2.prefix_cache = False
        uncached = smollm2.generate(requests)
        smollm2.prefix_cache = True
        cached = smollm2.generate(requests)
    finally:
        smollm2.prefix_cache = True
    assert all(c.error is None for c in cached + uncached)
    assert [c.text for c in cached] == [c.text for c in uncached]
    assert len({c.text for c in cached}) > 1


def test_continuous_batching_changes_no_answer(smollm2):
    """Rows that leave the batch and its key/value cache once their answer ends, with waiting requests joining
    them, give the answers transformers' ``generate`` gives in fixed batches where every row runs until the
    longest ends: greedy, and sampled with each request's seed."""
    from bias_validity.probes.design import build_design
    from bias_validity.probes.stimuli import load_dimensions

    design = build_design(
        smollm2.name, load_dimensions(["gender_career"]), ["implicit", "explicit"], sessions=1, reps=1
    )
    chosen = design[:12] + design[-12:]  # choices and ratings: answers of different lengths end at different steps
    requests = [
        _request(q.messages, q.seed, temperature=0.0 if k % 3 == 0 else 0.9, max_new_tokens=24)
        for k, q in enumerate(chosen)
    ]
    places = smollm2.generation_places
    try:
        smollm2.generation_places = 6  # 24 requests through 6 places: most join a batch already decoding
        smollm2.continuous = False
        fixed = smollm2.generate(requests)
        smollm2.continuous = True
        continuous = smollm2.generate(requests)
    finally:
        smollm2.continuous, smollm2.generation_places = True, places
    assert all(c.error is None for c in fixed + continuous)
    assert [c.text for c in continuous] == [c.text for c in fixed]
    lengths = {len(smollm2.tokenizer(c.text)["input_ids"]) for c in continuous}
    assert max(lengths) - min(lengths) >= 3, lengths  # rows did finish at different steps


def test_a_failing_request_is_recorded_not_raised(smollm2):
    good = _request(COLOUR, 5, max_new_tokens=4)
    out = smollm2.generate([_request((), 1), good])
    assert out[0].text is None and "empty conversation" in out[0].error
    assert out[1].error is None and out[1].text == smollm2.generate([good])[0].text


def _direct_logprob(backend, context_ids, continuation_ids):
    """log P(continuation | context) from one unbatched, uncached forward pass over the whole sequence."""
    import torch

    ids = torch.tensor([context_ids + continuation_ids])
    with torch.no_grad():
        logits = backend.model(input_ids=ids).logits[0]
    return sum(
        torch.log_softmax(logits[len(context_ids) + k - 1], -1)[token].item()
        for k, token in enumerate(continuation_ids)
    )


def _chat_prompt_ids(backend, messages):
    tokenizer = backend.tokenizer
    prompt = tokenizer.apply_chat_template(list(messages), add_generation_prompt=True, tokenize=False)
    return tokenizer(prompt, add_special_tokens=False)["input_ids"]


def test_choice_logprobs_equal_a_direct_computation(smollm2):
    options = ["red", "The colour is blue."]
    scored = smollm2.choice_logprobs([COLOUR], [options])[0]
    prompt_ids = _chat_prompt_ids(smollm2, COLOUR)
    for option, value in zip(options, scored, strict=True):
        option_ids = smollm2.tokenizer(option, add_special_tokens=False)["input_ids"]
        assert value == pytest.approx(_direct_logprob(smollm2, prompt_ids, option_ids), abs=1e-4)
    # batching with prompts of other lengths changes nothing beyond float noise
    mixed = smollm2.choice_logprobs([ANIMAL, COLOUR], [["dog", "cat", "A dog barks."], options])
    np.testing.assert_allclose(mixed[1], scored, atol=1e-4)
    assert [len(m) for m in mixed] == [3, 2]


def test_shared_prompts_and_options_of_different_lengths_score_exactly(smollm2):
    """Prompts sharing a long prefix (run once from a shared cache) and options of 1 to 7 tokens, in one batch."""
    question = "Fill in the blank with one of these words: {}. Reply with only the word."
    prompts = [
        ({"role": "user", "content": question.format("ice, fire")},),
        ({"role": "user", "content": question.format("Ben, Julia")},),
        ({"role": "user", "content": question.format("Ben, Julia, Alexander")},),
    ]
    options = [["fire", "The answer is ice, I think."], ["Ben", "Julia, Ben"], ["Alexander", "Julia", ""]]
    tokenizer = smollm2.tokenizer
    lengths = [len(tokenizer(o, add_special_tokens=False)["input_ids"]) for opts in options for o in opts]
    assert min(lengths) == 0 and 1 in lengths and max(lengths) >= 7  # the cases this test is about
    prompt_ids = [_chat_prompt_ids(smollm2, p) for p in prompts]
    assert prompt_ids[0][:20] == prompt_ids[1][:20]  # a shared prefix to cache
    scored = smollm2.choice_logprobs(prompts, options)
    for ids, opts, values in zip(prompt_ids, options, scored, strict=True):
        for option, value in zip(opts, values, strict=True):
            option_ids = tokenizer(option, add_special_tokens=False)["input_ids"]
            assert value == pytest.approx(_direct_logprob(smollm2, ids, option_ids), abs=1e-4), option
    assert scored[2][2] == 0.0  # the empty answer has probability one
    # one prompt alone scores as in the batch
    np.testing.assert_allclose(smollm2.choice_logprobs(prompts[1:2], options[1:2])[0], scored[1], atol=1e-4)


@pytest.mark.parametrize("fixture", ["smollm2", "gemma"])  # Gemma-3 caches its sliding-window layers apart
def test_sequence_logprobs_equal_a_direct_computation(fixture, request):
    backend = request.getfixturevalue(fixture)
    texts = [SENTENCES[0], "Hello", SENTENCES[9]]
    scored = backend.sequence_logprobs(texts)
    for text, value in zip(texts, scored, strict=True):
        ids = backend.tokenizer(text, add_special_tokens=False)["input_ids"]
        assert value == pytest.approx(_direct_logprob(backend, backend._start, ids), abs=1e-4)


@pytest.mark.parametrize("fixture", ["smollm2", "gemma"])
def test_sentences_outscore_their_shuffled_words(fixture, request):
    backend = request.getfixturevalue(fixture)
    rng = np.random.default_rng(0)
    shuffled = [" ".join(rng.permutation(s.rstrip(".").split())) + "." for s in SENTENCES]
    scores = backend.sequence_logprobs(SENTENCES + shuffled)
    wins = sum(a > b for a, b in zip(scores[:10], scores[10:], strict=True))
    assert wins >= 9, (fixture, wins)
    # batch invariance: one sentence alone scores as in the batch
    assert backend.sequence_logprobs(SENTENCES[3:4])[0] == pytest.approx(scores[3], abs=1e-4)


@pytest.mark.parametrize("fixture, dim", [("smollm2", 576), ("gemma", 640)])
def test_embeddings_shape_and_batch_invariance(fixture, dim, request):
    backend = request.getfixturevalue(fixture)
    words = ["tulip", "daffodil", "cannon", "New York"]
    vectors = backend.embed_words(words)
    assert vectors.shape == (4, dim) and np.isfinite(vectors).all()
    # hidden states reach |x| ~ 100 (Gemma): compare relative to the largest entry
    np.testing.assert_allclose(backend.embed_words(words[2:3])[0], vectors[2], atol=1e-5 * np.abs(vectors).max())
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    assert unit[0] @ unit[1] > unit[0] @ unit[2]  # two flowers are closer than a flower and a weapon


def test_bad_arguments_are_one_line_value_errors(smollm2):
    with pytest.raises(ValueError, match="batch_size must be a positive integer"):
        load_hf_backend("smollm2", batch_size=0)
    with pytest.raises(ValueError, match="one list per prompt"):
        smollm2.choice_logprobs([COLOUR], [])


@pytest.mark.slow
def test_converted_copy_matches_the_gguf_load(smollm2):
    """The saved copy gives the logits of a direct GGUF load (slow: dequantises again, 20-45 s)."""
    import torch
    from transformers import AutoModelForCausalLM

    from bias_validity.probes.backends.packaged import gguf_path

    gguf = gguf_path("smollm2", assemble_dir=smollm2.model_dir.parent)
    direct = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32)
    ids = torch.tensor([smollm2.tokenizer(SENTENCES[0])["input_ids"]])
    with torch.no_grad():
        assert torch.equal(direct(input_ids=ids).logits, smollm2.model(input_ids=ids).logits)
