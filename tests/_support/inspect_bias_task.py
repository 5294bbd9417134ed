"""A small inspect_ai bias task built from the project's own stimuli, for the inspect import test.

Each sample is one implicit question of the project's design (the masked analogy with two candidates, the
template's worked example included), with the design key in its metadata (``dimension``, ``method``,
``template_id``, ``item_id``, ``order``). The scorer reads the answer with the project's own parser
(:func:`bias_validity.probes.parse.parse_choice`): ``C`` for the stereotype-consistent pairing, ``I`` for the
inconsistent one, ``N`` (NOANSWER) with the parse status in ``Score.metadata["status"]`` for a refusal, an
unparseable answer or an invalid choice.
"""

from __future__ import annotations

from inspect_ai import Task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageAssistant, ChatMessageUser
from inspect_ai.scorer import CORRECT, INCORRECT, NOANSWER, Score, Target, mean, scorer
from inspect_ai.solver import Generate, TaskState, generate, solver

from bias_validity.probes.design import build_design
from bias_validity.probes.parse import parse_choice
from bias_validity.probes.schema import Status
from bias_validity.probes.stimuli import load_dimensions

_MESSAGES = {"user": ChatMessageUser, "assistant": ChatMessageAssistant}


def implicit_samples(
    dimension: str = "age", *, items: int = 5, template_id: str = "implicit-mask", orders: tuple[str, ...] = ("ab-xy",)
) -> list[Sample]:
    """The implicit questions of the first ``items`` items of ``dimension`` under one template and ``orders``."""
    (dim,) = [d for d in load_dimensions(None) if d.name == dimension]
    design = build_design("inspect", [dim], ["implicit"], sessions=1, reps=1, items_per_dimension=items)
    chosen = [q for q in design if q.template_id == template_id and q.order in orders]
    return [
        Sample(
            id=f"{q.item_id}/{q.order}",
            input=[_MESSAGES[m["role"]](content=m["content"]) for m in q.messages],
            target=", ".join(q.consistent_answer),
            metadata={
                "dimension": q.dimension,
                "method": q.method,
                "template_id": q.template_id,
                "item_id": q.item_id,
                "order": q.order,
                "candidates": list(q.candidates),
                "consistent_answer": list(q.consistent_answer),
            },
        )
        for q in chosen
    ]


@scorer(metrics=[mean()])
def stereotype_consistent():
    """C when the answer pairs the candidates as the stereotype does, I when the other way, N when neither."""

    async def score(state: TaskState, target: Target) -> Score:
        answer = state.output.completion
        parsed = parse_choice(answer, tuple(state.metadata["candidates"]))
        if parsed.status != Status.OK.value:
            return Score(value=NOANSWER, answer=answer, metadata={"status": parsed.status})
        consistent = [parsed.first, parsed.second] == state.metadata["consistent_answer"]
        return Score(value=CORRECT if consistent else INCORRECT, answer=answer)

    return score


@solver
def fails_on(sample_id: str):
    """Generate, except for ``sample_id``, which raises (an evaluation that stops with an error)."""

    async def solve(state: TaskState, generate_: Generate) -> TaskState:
        if state.sample_id == sample_id:
            raise RuntimeError(f"sample {sample_id} fails on purpose")
        return await generate_(state)

    return solve


def implicit_task(samples: list[Sample], *, epochs: int = 2, fail_on: str | None = None) -> Task:
    """The bias task over ``samples``, asked ``epochs`` times each; ``fail_on`` makes that sample raise."""
    return Task(
        name="implicit_bias",
        dataset=MemoryDataset(samples),
        solver=fails_on(fail_on) if fail_on else generate(),
        scorer=stereotype_consistent(),
        epochs=epochs,
    )
