"""The runner: builds the design, asks the backend, parses, and writes every answer to the store; resumable.

Questions are asked in fixed chunks of the design (the same chunks on every run), and a chunk is skipped only when
all its answers are stored, so a run killed at any point and started again ends with the same table as an
uninterrupted run (``created_at`` aside). Answers that failed (status ``error``) are asked again by the next run.
Methods a backend cannot take are recorded as skipped with the reason, never approximated.
"""

from __future__ import annotations

import json
import math
import subprocess
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from bias_validity import package_versions
from bias_validity.probes import templates as tpl
from bias_validity.probes.backends.base import Backend, Capability, Completion, GenerationRequest, Unsupported
from bias_validity.probes.design import Kind, Question, build_design, reflection_questions
from bias_validity.probes.parse import parse_choice, parse_likert
from bias_validity.probes.schema import WEAT_ITEM, Method, Status, is_reversed, likert_consistent
from bias_validity.probes.stimuli import Dimension, load_dimensions
from bias_validity.probes.store import ResponseStore
from bias_validity.probes.weat import pair_association, weat_effect_size

__all__ = ["collect", "CollectSummary", "ALL_METHODS"]

ALL_METHODS: tuple[str, ...] = tuple(m.value for m in Method)

#: what each method needs from a backend
_NEEDS: dict[str, str] = {
    Method.IMPLICIT.value: Capability.CHAT,
    Method.ABLATED.value: Capability.CHAT,
    Method.EXPLICIT.value: Capability.CHAT,
    Method.REFLECTION.value: Capability.CHAT,
    Method.LOGPROB.value: Capability.SEQUENCE_LOGPROBS,
    Method.EMBEDDING.value: Capability.EMBEDDING,
}


@dataclass
class CollectSummary:
    """What one ``collect`` run did: questions in the design, answers written now, methods skipped and why."""

    model: str
    questions: int = 0
    written: int = 0
    already_stored: int = 0
    skipped: dict[str, str] = field(default_factory=dict)
    status_counts: Counter = field(default_factory=Counter)

    @property
    def errors(self) -> int:
        return self.status_counts.get(Status.ERROR.value, 0)

    @property
    def complete(self) -> bool:
        """True when every answer in the design is stored without error."""
        return self.errors == 0


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
    batch_size: int = 16,
    max_new_tokens: int = 24,
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

    Returns
    -------
    CollectSummary
    """
    methods = list(methods or ALL_METHODS)
    unknown = [m for m in methods if m not in ALL_METHODS]
    if unknown:
        raise ValueError(f"unknown method(s) {', '.join(unknown)}; valid methods are {', '.join(ALL_METHODS)}")
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1 (got {batch_size})")
    dims = load_dimensions(dimensions)
    own_store = not isinstance(store, ResponseStore)
    db = ResponseStore(store) if own_store else store
    summary = CollectSummary(model=backend.name)
    try:
        runnable = []
        for method in methods:
            if _NEEDS[method] in backend.capabilities:
                runnable.append(method)
            else:
                _skip(db, summary, method, _missing_reason(backend, method))
        db.record_run(
            _run_spec(backend, dims, runnable, sessions, reps, seed, temperature, items_per_dimension, max_new_tokens)
        )
        design = build_design(
            backend.name,
            dims,
            [m for m in runnable if m != Method.REFLECTION.value],
            sessions=sessions,
            reps=reps,
            seed=seed,
            temperature=temperature,
            items_per_dimension=items_per_dimension,
            with_choice_logprobs=Capability.CHOICE_LOGPROBS in backend.capabilities,
            max_new_tokens=max_new_tokens,
        )
        bar = _progress(len(design), backend.name, progress)
        _ask_all(backend, db, design, dims, batch_size, summary, bar)
        if Method.REFLECTION.value in runnable and Method.REFLECTION.value not in summary.skipped:
            sources = _reflection_sources(db, backend.name)
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
    need = _NEEDS[method]
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
    db.record_skip(summary.model, method, reason)


def _ask_all(backend, db, questions, dims, batch_size, summary, bar) -> None:
    done = db.done_ids()
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
        if chunk[0].method in summary.skipped:
            bar.update(len(chunk))
            continue
        stored = sum(q.response_id in done for q in chunk)
        if stored == len(chunk):
            summary.already_stored += stored
            bar.update(len(chunk))
            continue
        groups: dict[str, list[Question]] = {}
        for q in chunk:
            groups.setdefault(q.kind, []).append(q)
        rows = []
        for kind, group in groups.items():
            try:
                rows += answerers[kind](backend, group, by_dim)
            except Unsupported as exc:
                _skip(db, summary, group[0].method, str(exc))
            except Exception as exc:  # a failed call becomes error rows, and a rerun asks again
                rows += [_row(q, Status.ERROR, params={"error": f"{type(exc).__name__}: {exc}"}) for q in group]
        rows = [r for r in rows if r["response_id"] not in done]
        summary.already_stored += stored
        summary.written += db.write(rows)
        summary.status_counts.update(r["status"] for r in rows)
        bar.update(len(chunk))


def _row(q: Question, status: Status, *, consistent=None, likert=None, score=None, prompt=None, raw=None, params=None):
    merged = {**q.params, **(params or {})}
    return {
        "response_id": q.response_id,
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


def _answer_generated(backend: Backend, group: list[Question], _dims) -> list[dict]:
    requests = [
        GenerationRequest(
            messages=q.messages,
            seed=q.seed,
            temperature=float(q.params["temperature"]),
            max_new_tokens=int(q.params["max_new_tokens"]),
        )
        for q in group
    ]
    completions: list[Completion] = backend.generate(requests)
    rows = []
    for q, done in zip(group, completions, strict=True):
        if done.text is None:
            rows.append(_row(q, Status.ERROR, params={"error": done.error}))
        elif q.kind == Kind.CHOICE:
            parsed = parse_choice(done.text, q.candidates)
            answer = (parsed.first, parsed.second)
            consistent = int(answer == q.consistent_answer)
            extra = {"answer": list(answer)} if parsed.status == Status.OK.value else {}
            rows.append(_row(q, Status(parsed.status), consistent=consistent, raw=done.text, params=extra))
        else:
            parsed = parse_likert(done.text)
            consistent = likert_consistent(parsed.value, is_reversed(q.order))
            rows.append(_row(q, Status(parsed.status), consistent=consistent, likert=parsed.value, raw=done.text))
    return rows


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


def _reflection_sources(db: ResponseStore, model: str) -> list[dict]:
    table = db.read()
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


def _run_spec(backend, dims, methods, sessions, reps, seed, temperature, items_per_dimension, max_new_tokens):
    return {
        "started_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "git_commit": _git_commit(),
        "backend": backend.provenance,
        "model": backend.name,
        "dimensions": [d.name for d in dims],
        "methods": methods,
        "sessions": sessions,
        "reps": reps,
        "seed": seed,
        "temperature": temperature,
        "max_new_tokens": max_new_tokens,
        "items_per_dimension": items_per_dimension,
        "packages": package_versions(),
    }


def _git_commit() -> str | None:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=Path(__file__).parent, capture_output=True, text=True, timeout=5
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def _progress(total: int, model: str, enabled: bool):
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=f"collect {model}", unit="q", disable=not enabled, dynamic_ncols=True)
