"""Read inspect_ai evaluation logs (``.eval`` or ``.json``) as responses: one row per sample x epoch.

The logs are read with inspect_ai's own readers (:func:`inspect_ai.log.read_eval_log` for the header,
:func:`inspect_ai.log.read_eval_log_samples` for the samples), never unpacked here: the file layout changes between
inspect versions. inspect_ai is an optional dependency (``pip install 'bias-validity[inspect]'``).

Each row's fields, for ``--map``: ``eval.model``, ``eval.task``, ``sample.id``, ``sample.epoch``, ``sample.target``,
``metadata.<key>`` for every key of the sample's metadata, and ``score.<scorer>`` for each scorer's value. The
defaults: ``model`` is the log's model, ``template_id`` its task, ``item_id`` the sample id, ``order`` ``-``,
``session`` the epoch and ``rep`` 0: Q1's test-retest compares sessions, so each epoch is a measurement occasion
(``--map sample.epoch=rep --set session=1`` keeps epochs as repetitions of one session instead). ``status`` and
``consistent`` come from the scorer that codes the answers (see :func:`code_score`), ``raw_response`` from its
``Score.answer`` (else the model's completion), ``prompt`` is the sample's input as JSON chat messages,
``temperature`` and ``seed`` the log's generate config.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from bias_validity.probes.log_import import LogTable, responses_from_log
from bias_validity.probes.schema import Status

__all__ = ["INSTALL_HINT", "CONSISTENT_VALUES", "code_score", "read_inspect_logs", "inspect_responses"]

INSTALL_HINT = "reading inspect_ai logs needs inspect_ai: pip install 'bias-validity[inspect]'"
#: inspect's CORRECT and INCORRECT letters read as stereotype-consistent (1) and inconsistent (0); booleans and the
#: numbers 1 and 0 are read the same way.
CONSISTENT_VALUES: dict[str, int] = {"C": 1, "I": 0}
#: inspect's NOANSWER value: no stance was found in the answer.
_NO_ANSWER = "N"
_NOT_OK = {s.value for s in Status} - {Status.OK.value}
#: The fields of a sample read for each row; ``events`` and ``store`` can be large and are not needed.
_SKIPPED_FIELDS = {"events", "store"}


def code_score(value: object, metadata: Mapping[str, Any] | None, *, where: str) -> tuple[str, int | None]:
    """The ``status`` and ``consistent`` code of one inspect score value.

    ``C`` (CORRECT), ``True`` or 1 is a stereotype-consistent answer, ``I`` (INCORRECT), ``False`` or 0 an
    inconsistent one, both with status ``ok``. ``N`` (NOANSWER) takes no stance: its status is the score
    metadata's ``status`` where that names one (``refusal``, ``unparseable``, ``invalid_choice``, ``error``), else
    ``unparseable``. Any other value (``P``, 0.5, a word) is refused with ``where`` in the message.

    Examples
    --------
    >>> code_score("C", None, where="s"), code_score(0, None, where="s")
    (('ok', 1), ('ok', 0))
    >>> code_score("N", {"status": "refusal"}, where="s"), code_score("N", None, where="s")
    (('refusal', None), ('unparseable', None))
    >>> code_score("P", None, where="run.eval sample 2 epoch 1")
    Traceback (most recent call last):
    ...
    ValueError: run.eval sample 2 epoch 1: score 'P' is not C, I or N (nor 1, 0, true, false)
    """
    if isinstance(value, str) and value in CONSISTENT_VALUES:
        return Status.OK.value, CONSISTENT_VALUES[value]
    if isinstance(value, bool | int | float) and value in (0, 1):
        return Status.OK.value, int(value)
    if value == _NO_ANSWER:
        status = (metadata or {}).get("status")
        return (status if status in _NOT_OK else Status.UNPARSEABLE.value), None
    raise ValueError(f"{where}: score {value!r} is not C, I or N (nor 1, 0, true, false)")


def _inspect_log_module() -> Any:
    try:
        import inspect_ai.log as inspect_log
    except ImportError:
        raise ValueError(INSTALL_HINT) from None
    return inspect_log


def read_inspect_logs(paths: Sequence[str | Path], *, partial: bool = False, coded_by: str | None = None) -> LogTable:
    """Read inspect_ai logs into a :class:`~bias_validity.probes.log_import.LogTable`, one row per sample x epoch.

    Parameters
    ----------
    paths : sequence of str or Path
        ``.eval`` or ``.json`` logs.
    partial : bool
        Read a log that did not finish (status other than ``success``): the samples it holds. Without it such a
        log is refused.
    coded_by : str, optional
        The scorer whose values code ``status`` and ``consistent`` (:func:`code_score`); by default the only
        scorer of the log (a log with several must name one).

    Returns
    -------
    LogTable
        The fields listed in the module docstring and the default responses columns. A sample that ended in an
        error, or that the coding scorer did not score, has status ``error``; it is kept, never dropped.
    """
    inspect_log = _inspect_log_module()
    frames, defaults, origins = [], [], []
    names = ", ".join(Path(p).name for p in paths)
    for path in paths:
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"{path}: no such log")
        try:
            header = inspect_log.read_eval_log(str(path), header_only=True)
        except Exception as exc:  # inspect raises many kinds for a file that is not one of its logs
            raise ValueError(f"{path.name}: not an inspect_ai log ({_one_line(exc)})") from None
        if header.status != "success" and not partial:
            why = f": {_one_line(header.error.message)}" if header.error else ""
            raise ValueError(
                f"{path.name}: the evaluation did not finish (status {header.status!r}{why}); --partial imports "
                "the samples it holds"
            )
        samples = inspect_log.read_eval_log_samples(
            str(path), all_samples_required=not partial, exclude_fields=_SKIPPED_FIELDS
        )
        rows = _rows(path.name, header, samples, coded_by)
        frames.append(pd.DataFrame([r[0] for r in rows]))
        defaults.append(pd.DataFrame([r[1] for r in rows]))
        origins += [r[2] for r in rows]
    fields = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    ours = pd.concat(defaults, ignore_index=True) if defaults else pd.DataFrame()
    hints = {"status": "the log has no scorer to code the answers; --set status=ok keeps them without a stance"}
    return LogTable(fields, {c: ours[c] for c in ours.columns}, origins, names, hints)


def _rows(name: str, header: Any, samples: Iterable[Any], coded_by: str | None) -> list[tuple[dict, dict, str]]:
    """Each sample's fields, default responses columns and origin."""
    config = header.eval.model_generate_config
    scorers = [s.name for s in header.eval.scorers or []]
    coder = _coding_scorer(name, scorers, coded_by)
    settings = {k: v for k, v in config.model_dump(exclude_none=True).items() if k not in ("temperature", "seed")}
    rows = []
    for sample in samples:
        where = f"sample {sample.id} epoch {sample.epoch}"
        scores = sample.scores or {}
        fields = {
            "eval.model": header.eval.model,
            "eval.task": header.eval.task,
            "sample.id": str(sample.id),
            "sample.epoch": int(sample.epoch),
            "sample.target": _text(sample.target),
            **{f"metadata.{k}": _scalar(v) for k, v in (sample.metadata or {}).items()},
            **{f"score.{k}": _scalar(s.value) for k, s in scores.items()},
        }
        score = scores.get(coder) if coder else None
        if coder and score is None and scores:
            raise ValueError(f"{name} {where}: no score named {coder!r}; its scores: {', '.join(scores)}")
        coded: dict[str, object] = {}  # no scorer: nothing codes the answers, --set status gives them one
        if sample.error is not None or (coder and score is None):
            coded = {"status": Status.ERROR.value, "consistent": None}
        elif score is not None:
            status, consistent = code_score(score.value, score.metadata, where=f"{name} {where}, scorer {coder!r}")
            coded = {"status": status, "consistent": consistent}
        answer = score.answer if score is not None and score.answer is not None else _completion(sample)
        params = {"inspect_task": header.eval.task, "sample_id": sample.id, "epoch": sample.epoch, "scorer": coder}
        if sample.error is not None:
            params["inspect_error"] = _one_line(sample.error.message)
        ours = {
            "model": header.eval.model,
            "template_id": header.eval.task,
            "item_id": str(sample.id),
            "order": "-",
            "session": int(sample.epoch),
            "rep": 0,
            **coded,
            "raw_response": answer,
            "prompt": _prompt(sample.input),
            "temperature": config.temperature,
            "seed": config.seed,
            "params": json.dumps({**params, **settings}, sort_keys=True, default=str),
            "created_at": sample.completed_at or header.eval.created,
        }
        rows.append((fields, ours, f"{name} {where}"))
    return rows


def _coding_scorer(name: str, scorers: list[str], coded_by: str | None) -> str | None:
    """The scorer whose values code the answers: ``coded_by``, else the log's only scorer (None: no scorer)."""
    if coded_by is not None:
        if coded_by not in scorers:
            raise ValueError(
                f"{name}: --map score.{coded_by}=consistent: the log has no scorer {coded_by!r}; "
                f"its scorers: {', '.join(scorers) or 'none'}"
            )
        return coded_by
    if len(scorers) > 1:
        raise ValueError(
            f"{name}: the log has scorers {', '.join(scorers)}: name the one that codes stereotype-consistent "
            f"answers with --map score.{scorers[0]}=consistent"
        )
    return scorers[0] if scorers else None


def _prompt(value: object) -> str:
    """The sample's input as JSON chat messages (as collection stores a prompt)."""
    if isinstance(value, str):
        return json.dumps([{"role": "user", "content": value}])
    return json.dumps([{"role": m.role, "content": m.text} for m in value])


def _completion(sample: Any) -> str | None:
    output = getattr(sample, "output", None)
    return output.completion if output is not None and output.choices else None


def _text(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _scalar(value: object) -> object:
    """A metadata or score value as one cell: scalars as they are, anything else as JSON."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return json.dumps(value, default=str)


def _one_line(text: object) -> str:
    return " ".join(str(text).split())[:300]


def inspect_responses(
    paths: Sequence[str | Path],
    *,
    rename: Mapping[str, str] | None = None,
    constants: Mapping[str, str] | None = None,
    partial: bool = False,
) -> pd.DataFrame:
    """The validated responses table of inspect_ai logs, with ``--map`` (``rename``) and ``--set`` (``constants``).

    ``--map score.<scorer>=consistent`` names the scorer that codes the answers (C consistent, I inconsistent,
    N no stance; :func:`code_score`) when the log has several; the scorer's values then become ``status`` and
    ``consistent``. Every other pair renames a field of the log (module docstring) to a responses-table column.
    """
    rename = dict(rename or {})
    coders = [theirs for theirs, ours in rename.items() if ours == "consistent" and theirs.startswith("score.")]
    if len(coders) > 1:
        raise ValueError(f"--map names two scorers for consistent ({', '.join(coders)}); name one")
    coded_by = coders[0].removeprefix("score.") if coders else None
    for theirs in coders:
        del rename[theirs]
    log = read_inspect_logs(paths, partial=partial, coded_by=coded_by)
    return responses_from_log(log, rename=rename, constants=constants)
