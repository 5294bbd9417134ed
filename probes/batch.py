"""Batch out: the questions of a run not yet stored, written as OpenAI Batch API input lines.

Each line asks one chat question: ``custom_id`` is the ``response_id`` its answer gets in the store, ``body`` the
exact request the live ``openai:`` backend would send (:func:`bias_validity.probes.backends.openai_compat.chat_body`),
so the answers read back (:mod:`bias_validity.probes.batch_results`) are stored as the live path stores them. The run
spec is recorded and resolved as a live run's, so a run may be started by batch and completed live, or the reverse.

A batch serves the chat methods (implicit, ablated, explicit, reflection). The others are recorded as skipped with
the reason: prompt log-probabilities need ``/v1/completions`` with ``echo``, which the batch endpoints do not give,
and word vectors are read from a model's hidden states. Reflection questions are built from stored implicit answers,
so they are written by the next ``--batch-out`` after those answers are read back.

Files hold at most 50,000 lines and 200 MB each (the OpenAI Batch API's limits): ``requests.jsonl``, then
``requests-002.jsonl``, ``requests-003.jsonl`` ...
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bias_validity.probes.backends.base import Capability
from bias_validity.probes.backends.openai_compat import CHAT_PATH, chat_body, openai_identity
from bias_validity.probes.collect import (
    METHOD_NEEDS,
    check_design_arguments,
    generation_request,
    question_id,
    reflection_sources,
)
from bias_validity.probes.design import Question, build_design, reflection_questions
from bias_validity.probes.run_spec import build_run_spec, git_commit, resolve_run
from bias_validity.probes.schema import Method
from bias_validity.probes.stimuli import load_dimensions
from bias_validity.probes.store import ResponseStore

__all__ = [
    "BATCH_URL",
    "MAX_LINES",
    "MAX_BYTES",
    "BatchRequests",
    "write_batch_requests",
    "batch_file_names",
    "run_questions",
]

#: The ``url`` of every request line (the chat endpoint under the API root ``/v1``).
BATCH_URL = "/v1" + CHAT_PATH
#: Lines per requests file at most (the OpenAI Batch API's limit per batch).
MAX_LINES = 50_000
#: Bytes per requests file at most (the OpenAI Batch API's 200 MB limit per input file).
MAX_BYTES = 200_000_000

#: Why a batch cannot ask a method that does not need chat (recorded as the method's skip reason).
_NO_BATCH = {
    Capability.SEQUENCE_LOGPROBS: "prompt log-probabilities need /v1/completions with echo, which the OpenAI Batch "
    "API does not give; collect this method live from a server that does (openai: with --base-url, e.g. vLLM)",
    Capability.CHOICE_LOGPROBS: "exact answer log-probabilities need the server's tokenizer, which no batch exposes",
    Capability.EMBEDDING: "word vectors come from a model's hidden states, which a chat batch does not give",
}


@dataclass
class BatchRequests:
    """What one ``--batch-out`` wrote: the requests files with their line counts, the run, and what was left.

    ``pending`` = the lines written: the questions of the run not yet stored (failed answers included);
    ``already_stored`` questions were left out; ``skipped`` gives each method a batch cannot serve its reason and
    ``skipped_questions`` counts their questions; ``reflection_waiting`` counts implicit questions whose answers
    the reflection questions still wait for; ``stale`` lists requests files of the same name left from an earlier
    ``--batch-out`` (not rewritten now: do not submit them again).
    """

    model: str
    run: int
    files: list[tuple[Path, int]] = field(default_factory=list)
    already_stored: int = 0
    skipped: dict[str, str] = field(default_factory=dict)
    skipped_questions: Counter = field(default_factory=Counter)
    reflection_waiting: int = 0
    stale: list[Path] = field(default_factory=list)

    @property
    def pending(self) -> int:
        """Lines written over all files."""
        return sum(n for _, n in self.files)

    def lines(self) -> list[str]:
        """The report: lines per file, questions already stored, skipped by method with the reason."""
        skipped = sum(self.skipped_questions.values())
        out = [
            f"{self.model} (run {self.run}): {self.pending} questions to ask in {len(self.files)} file(s), "
            f"{self.already_stored} already stored, {skipped} skipped"
        ]
        out += [f"  wrote {path}: {n} lines" for path, n in self.files] or ["  nothing to ask: no file written"]
        out += [f"  {path} is left from an earlier --batch-out (not rewritten now)" for path in self.stale]
        for method, reason in self.skipped.items():
            left = self.skipped_questions.get(method, 0)
            out.append(f"  skipped {method}" + (f" ({left} questions)" if left else "") + f": {reason}")
        if self.reflection_waiting:
            out.append(
                f"  reflection: asked about stored implicit answers; {self.reflection_waiting} implicit questions "
                "are still to be answered: read the results back (--batch-in), then --batch-out again"
            )
        return out


def batch_file_names(out: str | Path, count: int) -> list[Path]:
    """The names of ``count`` requests files: ``out`` itself, then ``<stem>-002<suffix>``, ``<stem>-003<suffix>``...

    Examples
    --------
    >>> [p.name for p in batch_file_names("run/requests.jsonl", 3)]
    ['requests.jsonl', 'requests-002.jsonl', 'requests-003.jsonl']
    """
    out = Path(out)
    return [out if i == 1 else out.with_name(f"{out.stem}-{i:03d}{out.suffix}") for i in range(1, count + 1)]


def run_questions(
    db: ResponseStore,
    model: str,
    run: int,
    spec: Mapping[str, object],
    methods: Iterable[str],
) -> tuple[list[Question], int]:
    """The chat questions of ``model``'s design in ``run`` under ``spec`` (a run spec's settings and extent).

    Returns the questions of the chat ``methods`` other than reflection, then the reflection questions about the
    implicit answers stored now (when ``methods`` holds reflection), and the number of implicit questions whose
    answer is not stored yet (their reflection questions cannot be built before).
    """
    methods = list(methods)
    dims = load_dimensions(spec["dimensions"])
    design = build_design(
        model,
        dims,
        [m for m in methods if m != Method.REFLECTION.value],
        sessions=int(spec["sessions"]),
        reps=int(spec["reps"]),
        seed=int(spec["seed"]),
        temperature=float(spec["temperature"]),
        items_per_dimension=spec["items_per_dimension"],
        with_choice_logprobs=False,
        max_new_tokens=int(spec["max_new_tokens"]),
    )
    if Method.REFLECTION.value not in methods:
        return design, 0
    done = db.done_ids(run)
    waiting = sum(q.method == Method.IMPLICIT.value and question_id(q, run) not in done for q in design)
    reflection = reflection_questions(
        reflection_sources(db, model, run),
        seed=int(spec["seed"]),
        temperature=float(spec["temperature"]),
        max_new_tokens=int(spec["max_new_tokens"]),
    )
    return design + reflection, waiting


def write_batch_requests(
    store: ResponseStore | str | Path,
    out: str | Path,
    *,
    model: str,
    score_prefix: str = "",
    dimensions: Sequence[str] | None = None,
    methods: Sequence[str] | None = None,
    sessions: int = 2,
    reps: int = 2,
    seed: int = 0,
    temperature: float = 0.7,
    items_per_dimension: int | None = None,
    max_new_tokens: int = 24,
    run: int | None = None,
    max_lines: int = MAX_LINES,
    max_bytes: int = MAX_BYTES,
) -> BatchRequests:
    """Write every chat question of the design not yet stored as OpenAI Batch API request lines; record the run.

    Parameters
    ----------
    store : a :class:`ResponseStore` or the path of its SQLite file (created if missing).
    out : the first requests file; more are named by :func:`batch_file_names`. Files written are replaced.
    model : the served model's name (the ``model`` field of each request; the rows' model is ``openai:<model>``).
    score_prefix : recorded in the model's identity, as the live backend records it.
    dimensions, methods, sessions, reps, seed, temperature, items_per_dimension, max_new_tokens : the design and
        decoding settings, as for :func:`bias_validity.probes.collect.collect`.
    run : the run to resume or start (default: the store's latest run), resolved as a live run is
        (:func:`bias_validity.probes.run_spec.resolve_run`).
    max_lines, max_bytes : limits of one requests file (default: the OpenAI Batch API's).

    Returns
    -------
    BatchRequests

    Raises
    ------
    bias_validity.probes.run_spec.RunSpecMismatch
        The run was collected under other settings; nothing is written.
    ValueError
        A bad design argument or file limit.
    """
    if max_lines < 1 or max_bytes < 1:
        raise ValueError(f"max_lines and max_bytes must be >= 1 (got {max_lines}, {max_bytes})")
    dims, chosen = check_design_arguments(
        dimensions=dimensions,
        methods=methods,
        sessions=sessions,
        reps=reps,
        items_per_dimension=items_per_dimension,
        batch_size=1,
        max_new_tokens=max_new_tokens,
    )
    identity = openai_identity(model, score_prefix)
    name = str(identity["name"])
    own_store = not isinstance(store, ResponseStore)
    db = ResponseStore(store) if own_store else store
    try:
        spec = build_run_spec(
            identity=identity,
            provenance={"name": name, "model": model, "transport": "batch", "url": BATCH_URL},
            dimensions=dims,
            methods=chosen,
            sessions=sessions,
            reps=reps,
            seed=seed,
            temperature=temperature,
            max_new_tokens=max_new_tokens,
            items_per_dimension=items_per_dimension,
            git_commit=git_commit(),
        )
        target = resolve_run(db, name, spec, run)
        result = BatchRequests(model=name, run=target)
        db.record_run(target, name, spec)
        batchable = [m for m in chosen if METHOD_NEEDS[m] == Capability.CHAT]
        unasked = [m for m in chosen if m not in batchable]
        for method in unasked:
            result.skipped[method] = _NO_BATCH[METHOD_NEEDS[method]]
            db.record_skip(target, name, method, result.skipped[method])
        counted = build_design(
            name,
            dims,
            unasked,
            sessions=sessions,
            reps=reps,
            items_per_dimension=items_per_dimension,
            with_choice_logprobs=False,
        )
        result.skipped_questions.update(q.method for q in counted)
        questions, result.reflection_waiting = run_questions(db, name, target, spec, batchable)
        done = db.done_ids(target)
        pending = [q for q in questions if question_id(q, target) not in done]
        result.already_stored = len(questions) - len(pending)
        lines = (_request_line(q, target, model) for q in pending)
        result.files = _write_split(lines, out, max_lines=max_lines, max_bytes=max_bytes)
        index = len(result.files) + 1
        while (left := batch_file_names(out, index)[-1]).exists():
            result.stale.append(left)
            index += 1
    finally:
        if own_store:
            db.close()
    return result


def _request_line(q: Question, run: int, model: str) -> str:
    """One request line: the question's ``response_id`` in ``run`` and the body the live backend would send."""
    body = chat_body(model, generation_request(q))
    line = {"custom_id": question_id(q, run), "method": "POST", "url": BATCH_URL, "body": body}
    return json.dumps(line, ensure_ascii=False, separators=(",", ":"))


def _write_split(lines: Iterable[str], out: str | Path, *, max_lines: int, max_bytes: int) -> list[tuple[Path, int]]:
    """Write the lines into files of at most ``max_lines`` lines and ``max_bytes`` bytes; return each with its count.

    Each file is written beside its name and renamed into place, so a file is either whole or absent.
    """
    written: list[tuple[Path, int]] = []
    for index, chunk in enumerate(_chunks(lines, max_lines, max_bytes), start=1):
        path = batch_file_names(out, index)[-1]
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".partial")
        tmp.write_bytes(b"".join(chunk))
        os.replace(tmp, path)
        written.append((path, len(chunk)))
    return written


def _chunks(lines: Iterable[str], max_lines: int, max_bytes: int) -> Iterator[list[bytes]]:
    chunk: list[bytes] = []
    size = 0
    for line in lines:
        data = (line + "\n").encode()
        if len(data) > max_bytes:
            raise ValueError(f"a request line of {len(data)} bytes exceeds the file limit of {max_bytes} bytes")
        if chunk and (len(chunk) == max_lines or size + len(data) > max_bytes):
            yield chunk
            chunk, size = [], 0
        chunk.append(data)
        size += len(data)
    if chunk:
        yield chunk
