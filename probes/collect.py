"""The runner: builds the design, asks the backend, parses, and writes every answer to the store; resumable.

Questions are asked in fixed chunks of the design (the same chunks on every run), and a chunk is skipped only when
all its answers are stored, so a run killed at any point and started again ends with the same table as an
uninterrupted run (``created_at`` aside). Answers that failed (status ``error``) are asked again by the next run.
Methods a backend cannot take are recorded as skipped with the reason, never approximated; a method that turns out
unsupported mid-run is skipped from then on, and only its own questions are left unasked (and counted).

A run resumes only under the settings it was collected with (:mod:`bias_validity.probes.run_spec`); answers
collected under other settings go into a separate run (``run``), never mistaken for the ones asked now.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from bias_validity.probes import templates as tpl
from bias_validity.probes.backends.base import Backend, Capability, Completion, GenerationRequest, Unsupported
from bias_validity.probes.design import Kind, Question, build_design, reflection_questions
from bias_validity.probes.parse import parse_choice, parse_likert
from bias_validity.probes.run_spec import build_run_spec, git_commit, resolve_run
from bias_validity.probes.schema import (
    DESIGN_KEY,
    WEAT_ITEM,
    Method,
    Status,
    is_reversed,
    likert_consistent,
    response_id,
)
from bias_validity.probes.stimuli import Dimension, load_dimensions
from bias_validity.probes.store import ResponseStore
from bias_validity.probes.weat import pair_association, weat_effect_size

__all__ = [
    "collect",
    "check_design_arguments",
    "CollectSummary",
    "ALL_METHODS",
    "METHOD_NEEDS",
    "question_id",
    "generation_request",
    "answer_row",
    "stamp_row",
    "reflection_sources",
]

ALL_METHODS: tuple[str, ...] = tuple(m.value for m in Method)

#: what each method needs from a backend
METHOD_NEEDS: dict[str, str] = {
    Method.IMPLICIT.value: Capability.CHAT,
    Method.ABLATED.value: Capability.CHAT,
    Method.EXPLICIT.value: Capability.CHAT,
    Method.REFLECTION.value: Capability.CHAT,
    Method.LOGPROB.value: Capability.SEQUENCE_LOGPROBS,
    Method.EMBEDDING.value: Capability.EMBEDDING,
}


@dataclass
class CollectSummary:
    """What one ``collect`` run did with the questions of its design.

    ``questions`` = ``already_stored`` + ``asked`` + the questions of skipped methods (``skipped_questions``, by
    method; reflection questions, built from implicit answers, are counted only when asked); ``written`` answers
    were stored now, with ``status_counts``; ``skipped`` gives each skipped method's reason.
    """

    model: str
    run: int = 1
    questions: int = 0
    asked: int = 0
    written: int = 0
    already_stored: int = 0
    skipped: dict[str, str] = field(default_factory=dict)
    skipped_questions: Counter = field(default_factory=Counter)
    status_counts: Counter = field(default_factory=Counter)

    @property
    def errors(self) -> int:
        """Answers left with status ``error`` (asked again by the next run)."""
        return self.status_counts.get(Status.ERROR.value, 0)

    @property
    def complete(self) -> bool:
        """True when every question asked is stored without error."""
        return self.errors == 0

    def lines(self) -> list[str]:
        """The end-of-run report: questions asked, stored, skipped by method with the reason, left with errors."""
        counts = ", ".join(f"{k} {v}" for k, v in sorted(self.status_counts.items()))
        skipped = sum(self.skipped_questions.values())
        out = [
            f"{self.model} (run {self.run}): {self.questions} questions: {self.already_stored} already stored, "
            f"{self.asked} asked, {self.written} stored now"
            + (f" ({counts})" if counts else "")
            + f", {skipped} skipped, {self.errors} left with errors"
        ]
        for method, reason in self.skipped.items():
            left = self.skipped_questions.get(method, 0)
            out.append(f"  skipped {method}" + (f" ({left} questions)" if left else "") + f": {reason}")
        if self.errors:
            out.append(f"  {self.errors} answers failed; run the same command again to retry them")
        return out


def check_design_arguments(
    *,
    dimensions: Sequence[str] | None,
    methods: Sequence[str] | None,
    sessions: int,
    reps: int,
    items_per_dimension: int | None,
    batch_size: int,
    max_new_tokens: int,
) -> tuple[list[Dimension], list[str]]:
    """Check what can be checked without a model and return the dimensions and methods to collect.

    Raises ``ValueError`` naming the first bad argument: an unknown dimension or method, or a count below 1.
    """
    chosen = list(methods or ALL_METHODS)
    unknown = [m for m in chosen if m not in ALL_METHODS]
    if unknown:
        raise ValueError(f"unknown method(s) {', '.join(unknown)}; valid methods are {', '.join(ALL_METHODS)}")
    counts = {
        "sessions": sessions,
        "reps": reps,
        "items_per_dimension": items_per_dimension,
        "batch_size": batch_size,
        "max_new_tokens": max_new_tokens,
    }
    for name, value in counts.items():
        if value is not None and (not isinstance(value, int) or value < 1):
            raise ValueError(f"{name} must be an integer >= 1 (got {value!r})")
    return load_dimensions(dimensions), chosen


def collect(
    backend: Backend,
    store: ResponseStore | str | Path,
    *,
    dimensions: Sequence[str] | None = None,
    methods: Sequence[str] | None = None,
    sessions: int = 2,
    reps: int = 2,
    seed: int = 0,
    temperature: float = 0.7,
    items_per_dimension: int | None = None,
    batch_size: int = 192,
    max_new_tokens: int = 24,
    run: int | None = None,
    progress: bool = True,
) -> CollectSummary:
    """Ask ``backend`` every question of the design and store the answers; resume what an earlier run left.

    Parameters
    ----------
    backend : the model to ask (see ``bias_validity.probes.backends.load_backend``).
    store : a :class:`ResponseStore` or the path of its SQLite file.
    dimensions, methods : subsets of the stimulus dimensions and methods (all when None).
    sessions, reps : measurement occasions (test-retest) and repetitions within each, for sampled methods.
    seed : base seed; every question gets its own seed derived from it and its design key.
    temperature, max_new_tokens : decoding settings for sampled methods.
    items_per_dimension : keep the first N items of each dimension.
    batch_size : questions per backend call (and per store transaction).
    run : the run to resume or start (an existing run, or the next number for a new one); by default the store's
        latest run. Resuming needs the run's settings (:func:`bias_validity.probes.run_spec.resolve_run`).

    Returns
    -------
    CollectSummary

    Raises
    ------
    bias_validity.probes.run_spec.RunSpecMismatch
        The run was collected under other settings; nothing is asked or written.
    """
    dims, methods = check_design_arguments(
        dimensions=dimensions,
        methods=methods,
        sessions=sessions,
        reps=reps,
        items_per_dimension=items_per_dimension,
        batch_size=batch_size,
        max_new_tokens=max_new_tokens,
    )
    own_store = not isinstance(store, ResponseStore)
    db = ResponseStore(store) if own_store else store
    try:
        spec = build_run_spec(
            identity=backend.identity,
            provenance=backend.provenance,
            dimensions=dims,
            methods=methods,
            sessions=sessions,
            reps=reps,
            seed=seed,
            temperature=temperature,
            max_new_tokens=max_new_tokens,
            items_per_dimension=items_per_dimension,
            git_commit=git_commit(),
        )
        target = resolve_run(db, backend.name, spec, run)
        summary = CollectSummary(model=backend.name, run=target)
        db.record_run(target, backend.name, spec)
        runnable = []
        for method in methods:
            if METHOD_NEEDS[method] in backend.capabilities:
                runnable.append(method)
            else:
                _skip(db, summary, method, _missing_reason(backend, method))

        def design_of(chosen: list[str]) -> list[Question]:
            return build_design(
                backend.name,
                dims,
                [m for m in chosen if m != Method.REFLECTION.value],
                sessions=sessions,
                reps=reps,
                seed=seed,
                temperature=temperature,
                items_per_dimension=items_per_dimension,
                with_choice_logprobs=Capability.CHOICE_LOGPROBS in backend.capabilities,
                max_new_tokens=max_new_tokens,
            )

        unasked = design_of([m for m in methods if m not in runnable])  # counted, never asked
        summary.questions += len(unasked)
        summary.skipped_questions.update(q.method for q in unasked)
        design = design_of(runnable)
        bar = _progress(len(design), backend.name, progress)
        _ask_all(backend, db, design, dims, batch_size, summary, bar)
        if Method.REFLECTION.value in runnable and Method.REFLECTION.value not in summary.skipped:
            sources = reflection_sources(db, backend.name, target)
            reflection = reflection_questions(
                sources, seed=seed, temperature=temperature, max_new_tokens=max_new_tokens
            )
            bar.total += len(reflection)
            bar.refresh()
            _ask_all(backend, db, reflection, dims, batch_size, summary, bar)
        bar.close()
    finally:
        if own_store:
            db.close()
    return summary


def _missing_reason(backend: Backend, method: str) -> str:
    """The backend's own word on why it lacks what ``method`` needs (its ``Unsupported`` message), if it has one."""
    need = METHOD_NEEDS[method]
    probe = {
        Capability.CHAT: lambda: backend.generate([]),
        Capability.SEQUENCE_LOGPROBS: lambda: backend.sequence_logprobs([]),
        Capability.EMBEDDING: lambda: backend.embed_words([]),
    }[need]
    try:
        probe()
    except Unsupported as exc:
        return str(exc)
    except Exception:  # the probe is only for the message; any other failure falls back to the generic one
        pass
    return f"{backend.name} lacks '{need}' (needed by {method})"


def _skip(db: ResponseStore, summary: CollectSummary, method: str, reason: str) -> None:
    summary.skipped[method] = reason
    db.record_skip(summary.run, summary.model, method, reason)


def question_id(q: Question, run: int) -> str:
    """The ``response_id`` of question ``q``'s answer in ``run``."""
    return response_id(run=run, **{k: getattr(q, k) for k in (*DESIGN_KEY, "rep")})


def _ask_all(backend, db, questions, dims, batch_size, summary, bar) -> None:
    """Ask the questions chunk by chunk; a method that turns out unsupported is skipped, the others are asked."""
    run = summary.run
    done = db.done_ids(run)
    summary.questions += len(questions)
    by_dim = {d.name: d for d in dims}
    answerers: dict[str, Callable] = {
        Kind.CHOICE: _answer_generated,
        Kind.LIKERT: _answer_generated,
        Kind.CHOICE_LOGPROB: _answer_choice_logprob,
        Kind.SENTENCE_LOGPROB: _answer_sentence_logprob,
        Kind.EMBEDDING: _answer_embedding,
    }
    for start in range(0, len(questions), batch_size):
        chunk = questions[start : start + batch_size]
        new = [question_id(q, run) not in done for q in chunk]
        summary.already_stored += new.count(False)
        if any(new):  # the whole chunk is asked again, so a resumed run asks the same batches as an unbroken one
            groups: dict[str, list[tuple[Question, bool]]] = {}
            for q, is_new in zip(chunk, new, strict=True):
                groups.setdefault(q.kind, []).append((q, is_new))
            rows = []
            for kind, group in groups.items():
                rows += _ask_group(backend, db, answerers[kind], group, by_dim, summary)
            rows = [r for r in (stamp_row(row, run) for row in rows) if r["response_id"] not in done]
            summary.written += db.write(rows)
            summary.status_counts.update(r["status"] for r in rows)
        bar.update(len(chunk))


def _ask_group(backend, db, answerer, group, by_dim, summary) -> list[dict]:  # noqa: ANN001
    """Answer one kind's questions of a chunk: ``group`` pairs each with whether its answer is new to the store.

    Questions of a skipped method are counted and left; when the backend raises ``Unsupported``, every method of
    the group is skipped with its reason from then on; any other failure becomes error rows, asked again later.
    """
    live = [q for q, _ in group if q.method not in summary.skipped]
    if live:
        try:
            answered = answerer(backend, live, by_dim)
        except Unsupported as exc:  # every method of the group needs what the backend turned out to lack
            for method in dict.fromkeys(q.method for q in live):
                _skip(db, summary, method, str(exc))
            live, answered = [], []
        except Exception as exc:
            answered = [_row(q, Status.ERROR, params={"error": f"{type(exc).__name__}: {exc}"}) for q in live]
    else:
        answered = []
    summary.skipped_questions.update(q.method for q, is_new in group if is_new and q.method in summary.skipped)
    summary.asked += sum(is_new for q, is_new in group if q.method not in summary.skipped)
    return answered


def stamp_row(row: dict, run: int) -> dict:
    """The answer row with its run and the ``response_id`` of its design key in that run."""
    return {**row, "run": run, "response_id": response_id(run=run, **{k: row[k] for k in (*DESIGN_KEY, "rep")})}


def _row(q: Question, status: Status, *, consistent=None, likert=None, score=None, prompt=None, raw=None, params=None):
    """One answer's row, without its run and ``response_id`` (:func:`stamp_row` adds them)."""
    merged = {**q.params, **(params or {})}
    return {
        "model": q.model,
        "dimension": q.dimension,
        "method": q.method,
        "template_id": q.template_id,
        "item_id": q.item_id,
        "order": q.order,
        "session": q.session,
        "rep": q.rep,
        "seed": q.seed,
        "temperature": merged.get("temperature"),
        "params": json.dumps(merged, sort_keys=True, default=str),
        "prompt": prompt if prompt is not None else (json.dumps(list(q.messages)) if q.messages else None),
        "raw_response": raw,
        "status": status.value,
        "consistent": consistent if status == Status.OK else None,
        "likert": likert if status == Status.OK else None,
        "score": score,
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }


def generation_request(q: Question) -> GenerationRequest:
    """The chat request that asks question ``q`` (its messages, seed and decoding settings)."""
    return GenerationRequest(
        messages=q.messages,
        seed=q.seed,
        temperature=float(q.params["temperature"]),
        max_new_tokens=int(q.params["max_new_tokens"]),
    )


def answer_row(q: Question, done: Completion) -> dict:
    """The row stored for the completion of chat question ``q``: parsed as a choice (implicit, ablated) or a 1-5
    rating (explicit, reflection), or status ``error`` with the reason when no text came back; without its run and
    ``response_id`` (:func:`stamp_row` adds them)."""
    if done.text is None:
        row = _row(q, Status.ERROR, params={"error": done.error})
    elif q.kind == Kind.CHOICE:
        parsed = parse_choice(done.text, q.candidates)
        answer = (parsed.first, parsed.second)
        consistent = int(answer == q.consistent_answer)
        extra = {"answer": list(answer)} if parsed.status == Status.OK.value else {}
        row = _row(q, Status(parsed.status), consistent=consistent, raw=done.text, params=extra)
    else:
        parsed = parse_likert(done.text)
        consistent = likert_consistent(parsed.value, is_reversed(q.order))
        row = _row(q, Status(parsed.status), consistent=consistent, likert=parsed.value, raw=done.text)
    return row


def _answer_generated(backend: Backend, group: list[Question], _dims) -> list[dict]:
    completions: list[Completion] = backend.generate([generation_request(q) for q in group])
    return [answer_row(q, done) for q, done in zip(group, completions, strict=True)]


def _answer_choice_logprob(backend: Backend, group: list[Question], _dims) -> list[dict]:
    options = [[tpl.implicit_answer(*q.consistent_answer), tpl.implicit_answer(*q.inconsistent_answer)] for q in group]
    scores = backend.choice_logprobs([q.messages for q in group], options)
    rows = []
    for q, opts, (lp_c, lp_i) in zip(group, options, scores, strict=True):
        diff = lp_c - lp_i
        params = {"options": opts, "logprob_consistent": lp_c, "logprob_inconsistent": lp_i}
        params["p_consistent"] = 1.0 / (1.0 + math.exp(-diff))
        rows.append(_row(q, Status.OK, consistent=int(diff > 0), score=diff, params=params))
    return rows


def _answer_sentence_logprob(backend: Backend, group: list[Question], _dims) -> list[dict]:
    texts = [s for q in group for s in q.sentences]
    logprobs = backend.sequence_logprobs(texts)
    rows = []
    for i, q in enumerate(group):
        lp_c, lp_i = logprobs[2 * i], logprobs[2 * i + 1]
        diff = lp_c - lp_i
        params = {"logprob_consistent": lp_c, "logprob_inconsistent": lp_i}
        rows.append(
            _row(
                q, Status.OK, consistent=int(diff > 0), score=diff, prompt=json.dumps(list(q.sentences)), params=params
            )
        )
    return rows


def _answer_embedding(backend: Backend, group: list[Question], dims: dict[str, Dimension]) -> list[dict]:
    rows = []
    for dim_name in dict.fromkeys(q.dimension for q in group):
        dim = dims[dim_name]
        words = list(dict.fromkeys(dim.exemplars_a + dim.exemplars_b + dim.attributes_a + dim.attributes_b))
        vectors = dict(zip(words, np.asarray(backend.embed_words(words), dtype=float), strict=True))
        items = {item.item_id: item for item in dim.items}
        for q in (q for q in group if q.dimension == dim_name):
            if q.item_id == WEAT_ITEM:
                sets = [dim.exemplars_a, dim.exemplars_b, dim.attributes_a, dim.attributes_b]
                arrays = [np.array([vectors[w] for w in s]) for s in sets]
                missing = [w for s in sets for w in s if np.isnan(vectors[w]).any()]
                kept = [a[~np.isnan(a).any(axis=1)] for a in arrays]
                if min(len(a) for a in kept) < 2:
                    rows.append(_row(q, Status.UNPARSEABLE, params={"out_of_vocabulary": missing}))
                    continue
                d = float(weat_effect_size(*kept))
                rows.append(_row(q, Status.OK, consistent=int(d > 0), score=d, params={"out_of_vocabulary": missing}))
                continue
            item = items[q.item_id]
            words4 = (item.exemplar_a, item.exemplar_b, item.attribute_a, item.attribute_b)
            missing = [w for w in words4 if np.isnan(vectors[w]).any()]
            if missing:
                rows.append(_row(q, Status.UNPARSEABLE, params={"out_of_vocabulary": missing}))
                continue
            s = float(pair_association(*(vectors[w] for w in words4)))
            rows.append(_row(q, Status.OK, consistent=int(s > 0), score=s))
    return rows


def reflection_sources(db: ResponseStore, model: str, run: int) -> list[dict]:
    table = db.read(run)
    mask = (
        (table["model"] == model)
        & (table["method"] == Method.IMPLICIT.value)
        & (table["status"] == Status.OK.value)
        & table["consistent"].notna()
    )
    rows = table[mask].astype(object).where(table[mask].notna(), None).to_dict("records")
    for row in rows:
        row["params"] = json.loads(row["params"])
    return sorted(rows, key=lambda r: r["response_id"])


def _progress(total: int, model: str, enabled: bool):
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=f"collect {model}", unit="q", disable=not enabled, dynamic_ncols=True)
