"""The study design: every question the runner asks, one :class:`Question` per future row of the responses table.

The design is a pure function of the stimuli, the templates and the settings, so a rerun rebuilds the same
questions with the same ``response_id`` and seeds, which is what makes collection resumable.

Counterbalancing (the ``order`` column):

- ``implicit``/``ablated``: candidate order x attribute order, ``ab-xy``, ``ab-yx``, ``ba-xy``, ``ba-yx``: ``ab`` lists
  the group-A exemplar first; ``xy`` puts the attribute stereotyped with group A in the first mask's frame.
- ``explicit``: ``xy`` states group A with its attribute first, ``yx`` group B first; each also as its reversal
  (``xy~reversed``, ``yx~reversed``: the same attributes with the groups swapped, "Women are to CEOs as men are
  to secretaries"), so every template and order holds the stereotype and its counter-statement equally often and
  agreeing with everything (acquiescence) scores 0.5, not bias.
- ``logprob``: sentence frames take ``xy``/``yx`` as above; closed-set choice rows take the implicit orders.
- ``embedding``: a single cell, ``-``.

``logprob`` and ``embedding`` are deterministic, so they are asked once (session 1, rep 0) whatever ``sessions`` and
``reps`` say. ``reflection`` questions are built from stored implicit answers (see :func:`reflection_questions`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from bias_validity.probes import templates as tpl
from bias_validity.probes.schema import (
    ATTRIBUTE_ORDERS,
    CANDIDATE_ORDERS,
    CHOICE_PREFIX,
    IMPLICIT_ORDERS,
    REVERSED_SUFFIX,
    WEAT_ITEM,
    Method,
    is_reversed,
    response_id,
)
from bias_validity.probes.stimuli import Dimension, Item

__all__ = [
    "Question",
    "Kind",
    "build_design",
    "reflection_questions",
    "derive_seed",
]


class Kind:
    """How a question is answered, which decides the backend call and the parser."""

    CHOICE = "choice"  #: sampled answer naming two candidates (implicit, ablated)
    LIKERT = "likert"  #: sampled 1-5 rating (explicit, reflection)
    CHOICE_LOGPROB = "choice_logprob"  #: exact log-odds of the consistent vs inconsistent implicit answer
    SENTENCE_LOGPROB = "sentence_logprob"  #: log P(consistent sentence) - log P(inconsistent sentence)
    EMBEDDING = "embedding"  #: association in the model's word vectors


@dataclass(frozen=True)
class Question:
    """One question of the design: its design key, how to ask it and how to code the answer."""

    model: str
    dimension: str
    method: str
    template_id: str
    item_id: str
    order: str
    session: int
    rep: int
    seed: int
    kind: str
    messages: tuple[dict[str, str], ...] = ()
    candidates: tuple[str, str] = ("", "")
    consistent_answer: tuple[str, str] = ("", "")  #: (first mask, second mask) of the stereotype-consistent answer
    inconsistent_answer: tuple[str, str] = ("", "")
    sentences: tuple[str, str] = ("", "")  #: (consistent, inconsistent) sentence for SENTENCE_LOGPROB
    params: dict[str, object] = field(default_factory=dict)

    @property
    def response_id(self) -> str:
        return response_id(
            model=self.model,
            dimension=self.dimension,
            method=self.method,
            template_id=self.template_id,
            item_id=self.item_id,
            order=self.order,
            session=self.session,
            rep=self.rep,
        )


def derive_seed(base_seed: int, *parts: object) -> int:
    """A 31-bit seed from the base seed and the question's key: each session gets its own seed stream."""
    digest = hashlib.sha256("|".join(map(str, (base_seed, *parts))).encode()).hexdigest()
    return int(digest[:8], 16) & 0x7FFFFFFF


def _implicit_frame(item: Item, order: str) -> tuple[tuple[str, str], str, str, tuple[str, str], tuple[str, str]]:
    """Candidates in listed order, the two attributes in frame order, and the consistent/inconsistent answers."""
    cand, attr = order.split("-")
    a_first = cand == CANDIDATE_ORDERS[0]
    candidates = (item.exemplar_a, item.exemplar_b) if a_first else (item.exemplar_b, item.exemplar_a)
    if attr == ATTRIBUTE_ORDERS[0]:
        first_attribute, second_attribute = item.attribute_a, item.attribute_b
        consistent = (item.exemplar_a, item.exemplar_b)
    else:
        first_attribute, second_attribute = item.attribute_b, item.attribute_a
        consistent = (item.exemplar_b, item.exemplar_a)
    return candidates, first_attribute, second_attribute, consistent, (consistent[1], consistent[0])


def _repeated(cell: tuple, sessions: int, reps: int, base_seed: int, **fields: object) -> Iterator[Question]:
    """One sampled question per session and repetition of a design cell, each with its own derived seed."""
    for session in range(1, sessions + 1):
        for rep in range(reps):
            key = (*cell, session, rep)
            yield Question(*key, seed=derive_seed(base_seed, *key), **fields)


def _implicit_questions(model, dim, items, method, sessions, reps, base_seed, temperature, max_new_tokens):
    ablated = method == Method.ABLATED.value
    for template in tpl.templates_for(method):
        for item in items:
            for order in IMPLICIT_ORDERS:
                candidates, first_attr, second_attr, consistent, inconsistent = _implicit_frame(item, order)
                messages = tpl.render_implicit(
                    template,
                    first_attribute=first_attr,
                    second_attribute=second_attr,
                    candidates=candidates,
                    ablated=ablated,
                )
                yield from _repeated(
                    (model, dim.name, method, template.template_id, item.item_id, order),
                    sessions,
                    reps,
                    base_seed,
                    kind=Kind.CHOICE,
                    messages=messages,
                    candidates=candidates,
                    consistent_answer=consistent,
                    inconsistent_answer=inconsistent,
                    params={
                        "temperature": temperature,
                        "max_new_tokens": max_new_tokens,
                        "first_attribute": first_attr,
                        "second_attribute": second_attr,
                    },
                )


def _explicit_questions(model, dim, items, sessions, reps, base_seed, temperature, max_new_tokens):
    method = Method.EXPLICIT.value
    orders = [o + suffix for o in ATTRIBUTE_ORDERS for suffix in ("", REVERSED_SUFFIX)]
    for template in tpl.templates_for(method):
        for item in items:
            for order in orders:
                labels = (dim.label_b, dim.label_a) if is_reversed(order) else (dim.label_a, dim.label_b)
                pairs = [(labels[0], item.attribute_a), (labels[1], item.attribute_b)]
                if order.startswith(ATTRIBUTE_ORDERS[1]):
                    pairs.reverse()
                statement = tpl.explicit_statement(
                    template,
                    label_first=pairs[0][0],
                    attribute_first=pairs[0][1],
                    label_second=pairs[1][0],
                    attribute_second=pairs[1][1],
                )
                messages = tpl.render_explicit(template, statement=statement)
                yield from _repeated(
                    (model, dim.name, method, template.template_id, item.item_id, order),
                    sessions,
                    reps,
                    base_seed,
                    kind=Kind.LIKERT,
                    messages=messages,
                    params={"temperature": temperature, "max_new_tokens": max_new_tokens},
                )


def _logprob_questions(model, dim, items, base_seed, with_choice):
    method = Method.LOGPROB.value
    for template in tpl.templates_for(method):
        for item in items:
            for order in ATTRIBUTE_ORDERS:
                a = (item.exemplar_a, item.attribute_a)
                b = (item.exemplar_b, item.attribute_b)
                first, second = (a, b) if order == ATTRIBUTE_ORDERS[0] else (b, a)
                consistent = tpl.logprob_sentences(
                    template,
                    exemplar_first=first[0],
                    attribute_first=first[1],
                    exemplar_second=second[0],
                    attribute_second=second[1],
                )
                inconsistent = tpl.logprob_sentences(
                    template,
                    exemplar_first=second[0],
                    attribute_first=first[1],
                    exemplar_second=first[0],
                    attribute_second=second[1],
                )
                key = (model, dim.name, method, template.template_id, item.item_id, order, 1, 0)
                yield Question(
                    *key,
                    seed=derive_seed(base_seed, *key),
                    kind=Kind.SENTENCE_LOGPROB,
                    sentences=(consistent, inconsistent),
                )
    if not with_choice:
        return
    for template in tpl.templates_for(Method.IMPLICIT.value):
        for item in items:
            for order in IMPLICIT_ORDERS:
                candidates, first_attr, second_attr, consistent, inconsistent = _implicit_frame(item, order)
                messages = tpl.render_implicit(
                    template, first_attribute=first_attr, second_attribute=second_attr, candidates=candidates
                )
                tid = CHOICE_PREFIX + template.template_id
                key = (model, dim.name, method, tid, item.item_id, order, 1, 0)
                yield Question(
                    *key,
                    seed=derive_seed(base_seed, *key),
                    kind=Kind.CHOICE_LOGPROB,
                    messages=messages,
                    candidates=candidates,
                    consistent_answer=consistent,
                    inconsistent_answer=inconsistent,
                )


def _embedding_questions(model, dim, items, base_seed):
    method = Method.EMBEDDING.value
    for item_id, template_id in [(item.item_id, "pair") for item in items] + [(WEAT_ITEM, "weat")]:
        key = (model, dim.name, method, template_id, item_id, "-", 1, 0)
        yield Question(*key, seed=derive_seed(base_seed, *key), kind=Kind.EMBEDDING)


def build_design(
    model: str,
    dimensions: Sequence[Dimension],
    methods: Iterable[str],
    *,
    sessions: int = 2,
    reps: int = 2,
    seed: int = 0,
    temperature: float = 0.7,
    items_per_dimension: int | None = None,
    with_choice_logprobs: bool = True,
    max_new_tokens: int = 24,
) -> list[Question]:
    """Every question for ``model`` over ``dimensions`` and ``methods`` (reflection excluded; see module doc).

    ``items_per_dimension`` keeps the first N items of each dimension (all when None).
    """
    if sessions < 1 or reps < 1:
        raise ValueError(f"sessions and reps must be >= 1 (got sessions={sessions}, reps={reps})")
    if items_per_dimension is not None and items_per_dimension < 1:
        raise ValueError(f"items_per_dimension must be >= 1 (got {items_per_dimension})")
    methods = list(methods)
    valid = {m.value for m in Method}
    unknown = [m for m in methods if m not in valid]
    if unknown:
        raise ValueError(f"unknown method(s) {', '.join(unknown)}; valid methods are {', '.join(sorted(valid))}")
    questions: list[Question] = []
    for dim in dimensions:
        items = dim.items[:items_per_dimension] if items_per_dimension else dim.items
        for method in methods:
            if method in (Method.IMPLICIT.value, Method.ABLATED.value):
                questions += _implicit_questions(
                    model, dim, items, method, sessions, reps, seed, temperature, max_new_tokens
                )
            elif method == Method.EXPLICIT.value:
                questions += _explicit_questions(model, dim, items, sessions, reps, seed, temperature, max_new_tokens)
            elif method == Method.LOGPROB.value:
                questions += _logprob_questions(model, dim, items, seed, with_choice_logprobs)
            elif method == Method.EMBEDDING.value:
                questions += _embedding_questions(model, dim, items, seed)
    return questions


def reflection_questions(
    implicit_rows: Iterable[dict[str, object]],
    *,
    seed: int = 0,
    temperature: float = 0.7,
    max_new_tokens: int = 24,
) -> list[Question]:
    """Self-reflection questions: the model is shown each of its own implicit answers and rates the statement it made.

    ``implicit_rows`` are stored ``implicit`` rows with status ``ok`` and a stance (``consistent`` 0 or 1): dicts
    with the responses-table columns, ``params`` decoded from JSON and ``prompt`` holding the JSON chat messages.
    Each reflection template asks, on the same Likert scale as ``explicit``, whether the model agrees with the
    statement its answer made. A stereotype-inconsistent completion is the counter-stereotype control (its
    ``order`` carries :data:`REVERSED_SUFFIX`), as the reversal is for ``explicit``: ``consistent`` codes agreeing
    with a consistent completion or disagreeing with an inconsistent one, so a model that endorses whatever it
    said (acquiescence) scores 0.5.
    """
    method = Method.REFLECTION.value
    questions = []
    for row in implicit_rows:
        params = row["params"]
        first, second = params["answer"]
        statement = tpl.completion_statement(first, params["first_attribute"], second, params["second_attribute"])
        messages_sent = json.loads(str(row["prompt"]))
        user_text = next(m["content"] for m in reversed(messages_sent) if m["role"] == "user")
        for template in tpl.templates_for(method):
            messages = tpl.render_reflection(
                template, question=user_text, answer=str(row["raw_response"]), statement=statement
            )
            key = (
                row["model"],
                row["dimension"],
                method,
                f"{template.template_id}/{row['template_id']}",
                row["item_id"],
                str(row["order"]) + ("" if int(row["consistent"]) == 1 else REVERSED_SUFFIX),
                int(row["session"]),
                int(row["rep"]),
            )
            questions.append(
                Question(
                    *key,
                    seed=derive_seed(seed, *key),
                    kind=Kind.LIKERT,
                    messages=messages,
                    params={
                        "temperature": temperature,
                        "max_new_tokens": max_new_tokens,
                        "source_response_id": row["response_id"],
                        "statement": statement,
                    },
                )
            )
    return questions
