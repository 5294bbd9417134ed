"""Reading a prompt's log-probabilities from an OpenAI-compatible ``/v1/completions`` answer with ``echo``.

Servers answer ``echo`` with ``logprobs`` in the legacy completions format, ``choices[0].logprobs`` holding
``tokens``, ``token_logprobs`` (one per echoed token, the first null), ``top_logprobs`` and ``text_offset``, in two
layouts:

- *aligned* (vLLM, SGLang, OpenAI): ``token_logprobs[i]`` is log P(token i | the tokens before it);
- *shifted* (llama-cpp-python 0.3, unless the prompt starts with the model's BOS token, which it drops):
  ``token_logprobs[i]`` comes from the distribution *after* token i, so it scores token i as its own successor
  (abetlen/llama-cpp-python#1983). No sum of those values is a sentence log-probability.

:func:`echo_layout` tells the two apart on a counting text, which any language model continues: in the aligned
layout each position's top token is mostly the token at that position, in the shifted one mostly the next token.
:func:`text_logprob` sums the log-probabilities of the tokens that spell a text within the echoed prompt (found by
their strings, else by their offsets), and refuses a text whose first token the server left unscored.

Written by hand: no client library reads echoed prompt log-probabilities (the ``openai`` client only types them).
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["COUNTING_TEXT", "echo_body", "text_span", "text_logprob", "echo_layout"]

#: The probe text of :func:`echo_layout`: predictable token by token for any language model.
COUNTING_TEXT = "1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12"


def echo_body(model: str, prompt: str, *, top: int = 0) -> dict[str, object]:
    """A ``/v1/completions`` request that echoes ``prompt`` with per-token log-probabilities (``top`` alternatives
    each) and generates one token greedily."""
    return {"model": model, "prompt": prompt, "max_tokens": 1, "temperature": 0.0, "echo": True, "logprobs": top}


def _legacy(data: dict) -> dict | None:
    choices = data.get("choices") if isinstance(data, dict) else None
    choice = choices[0] if isinstance(choices, list) and choices and isinstance(choices[0], dict) else {}
    lp = choice.get("logprobs")
    if not isinstance(lp, dict) or not isinstance(lp.get("tokens"), list):
        return None
    if not isinstance(lp.get("token_logprobs"), list) or len(lp["token_logprobs"]) != len(lp["tokens"]):
        return None
    return {**lp, "text": choice.get("text") if isinstance(choice.get("text"), str) else None}


def text_span(
    tokens: Sequence[str], text: str, *, offsets: Sequence[int] | None = None, echoed: str | None = None
) -> tuple[int, int] | None:
    """The echoed tokens ``[start, end)`` that spell ``text``, the last part of the prompt; None when not found.

    First by the tokens' strings: the last start from which the tokens read ``text`` exactly (special tokens of a
    prefix may be rendered as text or as nothing, and the generated token follows). Else by ``offsets`` into the
    ``echoed`` text (prompt and completion): the tokens from the offset where ``text`` starts to the one where it
    ends.

    Examples
    --------
    >>> text_span(["", "The", " cat", ".", " It"], "The cat.")
    (1, 4)
    >>> text_span(["<s>", "The", "cat", "."], "The cat.", offsets=[0, 3, 6, 10], echoed="<s>The cat. It")
    (1, 4)
    >>> text_span(["The", " dog"], "The cat.") is None
    True
    """
    for start in range(len(tokens) - 1, -1, -1):
        if "".join(tokens[start:]).startswith(text) and text.startswith(tokens[start]) and tokens[start]:
            read, end = "", start
            while len(read) < len(text):
                read, end = read + tokens[end], end + 1
            return (start, end) if read == text else None
    if offsets is None or echoed is None or len(offsets) != len(tokens):
        return None
    begin = echoed.rfind(text)
    if begin < 0 or begin not in offsets:
        return None
    start = list(offsets).index(begin)
    end = next((i for i in range(start, len(offsets)) if offsets[i] >= begin + len(text)), len(offsets))
    return start, end


def text_logprob(data: dict, text: str) -> float | None:
    """log P(text | what precedes it in the echoed prompt): the sum over the tokens spelling ``text``.

    None when the answer holds no echoed log-probabilities, no tokens spelling ``text``, or a token of it without a
    value (a text at the very start of the prompt has no value for its first token).
    """
    lp = _legacy(data)
    if lp is None:
        return None
    span = text_span(lp["tokens"], text, offsets=lp.get("text_offset"), echoed=lp["text"])
    if span is None:
        return None
    values = lp["token_logprobs"][span[0] : span[1]]
    if not values or not all(isinstance(v, int | float) for v in values):
        return None
    return float(sum(values))


def echo_layout(data: dict, text: str = COUNTING_TEXT) -> str:
    """How the echoed log-probabilities of ``text`` (asked with ``top`` >= 1) line up with the tokens.

    Returns
    -------
    str
        ``"aligned"`` or ``"shifted"`` (see the module docstring), by which one the top alternatives of the tokens
        spelling ``text`` agree with more often; ``"unchecked"`` when the answer has no ``top_logprobs``;
        ``"unreadable"`` when it holds no echoed log-probabilities spelling ``text``.

    Examples
    --------
    >>> tokens = ["1", ",", " 2", ",", " 3"]
    >>> aligned = [None, {",": -0.1}, {" 2": -0.2}, {",": -0.1}, {" 3": -0.1}]
    >>> shifted = [None, {" 2": -0.2}, {",": -0.1}, {" 3": -0.1}, {",": -0.3}]
    >>> body = lambda top: {"choices": [{"logprobs": {"tokens": tokens, "token_logprobs": [None, -1, -1, -1, -1],
    ...                                              "top_logprobs": top}}]}
    >>> echo_layout(body(aligned), "1, 2, 3"), echo_layout(body(shifted), "1, 2, 3")
    ('aligned', 'shifted')
    """
    lp = _legacy(data)
    span = None if lp is None else text_span(lp["tokens"], text, offsets=lp.get("text_offset"), echoed=lp["text"])
    if span is None:
        return "unreadable"
    tokens, top = lp["tokens"], lp.get("top_logprobs")
    if not isinstance(top, list) or len(top) != len(tokens):
        return "unchecked"
    best = [max(t, key=t.get) if isinstance(t, dict) and t else None for t in top]
    start, end = span
    aligned = sum(best[i] == tokens[i] for i in range(start, end))
    shifted = sum(best[i] == tokens[i + 1] for i in range(start, min(end, len(tokens) - 1)))
    return "shifted" if shifted > aligned else "aligned"
