"""Reading echoed prompt log-probabilities in the layouts servers send them (the real llama-cpp-python server's in
tests/test_llama_server.py; vLLM's and SGLang's, which need a GPU, as answers written to their formats here)."""

from __future__ import annotations

import pytest

from bias_validity.probes.backends._echo_logprobs import COUNTING_TEXT, echo_layout, text_logprob, text_span


def _answer(tokens, values, top=None, offsets=None, text=None) -> dict:
    logprobs = {"tokens": tokens, "token_logprobs": values, "top_logprobs": top, "text_offset": offsets}
    return {"choices": [{"text": text if text is not None else "".join(tokens), "logprobs": logprobs}]}


def test_vllm_layout_with_a_bos_token_scores_the_whole_text():
    """vLLM (vllm/entrypoints/openai/serving_completion.py): the prompt as the tokenizer encodes it, BOS included,
    decoded token strings, the first value null, one generated token at the end."""
    answer = _answer(
        ["<s>", "The", " cat", " sat", ".", " It"], [None, -3.0, -5.5, -4.0, -1.25, -0.5], offsets=[0, 3, 6, 10, 14, 15]
    )
    assert text_span(["<s>", "The", " cat", " sat", ".", " It"], "The cat sat.") == (1, 5)
    assert text_logprob(answer, "The cat sat.") == -3.0 - 5.5 - 4.0 - 1.25


def test_sglang_layout_with_pieces_that_do_not_spell_the_text_is_read_by_offsets():
    """Token strings decoded one by one lose SentencePiece's leading spaces; the offsets still place them."""
    echoed = "<s>The cat sat. It"
    answer = _answer(
        ["<s>", "The", "cat", "sat", ".", "It"],
        [None, -3.0, -5.5, -4.0, -1.25, -0.5],
        offsets=[0, 3, 6, 10, 14, 16],
        text=echoed,
    )
    assert text_logprob(answer, "The cat sat.") == -3.0 - 5.5 - 4.0 - 1.25


def test_a_text_whose_first_token_has_no_value_is_not_scored():
    """Without a token before it, the text's first token has no log-probability: the sum would leave it out."""
    answer = _answer(["The", " cat", "."], [None, -5.5, -1.0])
    assert text_logprob(answer, "The cat.") is None
    assert text_logprob(_answer(["", "The", " cat", "."], [None, -2.0, -5.5, -1.0]), "The cat.") == -8.5


@pytest.mark.parametrize(
    "answer", [{"choices": [{"text": "x"}]}, {"choices": [{"logprobs": {"tokens": ["a"]}}]}, {"choices": []}, {}]
)
def test_an_answer_without_echoed_log_probabilities_reads_as_none(answer):
    assert text_logprob(answer, "a") is None
    assert echo_layout(answer, "a") == "unreadable"


def test_the_layout_is_told_by_which_token_each_position_predicts():
    """Counting: aligned, each position's top alternative is its own token; shifted, the next one."""
    tokens = ["", "1", ",", " 2", ",", " 3", ",", " 4"]
    aligned = [None, {"1": -1.0}, {",": -0.1}, {" 2": -0.2}, {",": -0.1}, {" 3": -0.1}, {",": -0.1}, {" 4": -0.1}]
    shifted = [None, {",": -0.5}, {" 2": -0.3}, {",": -0.1}, {" 3": -0.1}, {",": -0.1}, {" 4": -0.1}, {",": -0.2}]
    values = [None, -1.0, -0.1, -0.2, -0.1, -0.1, -0.1, -0.1]
    assert echo_layout(_answer(tokens, values, aligned), "1, 2, 3, 4") == "aligned"
    assert echo_layout(_answer(tokens, values, shifted), "1, 2, 3, 4") == "shifted"
    assert echo_layout(_answer(tokens, values), "1, 2, 3, 4") == "unchecked"
    assert COUNTING_TEXT.startswith("1, 2, 3, 4, ")
