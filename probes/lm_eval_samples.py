"""Read lm-evaluation-harness sample logs of CrowS-Pairs-style tasks as ``logprob`` responses: one row per document.

``lm_eval --log_samples`` writes ``samples_<task>_<timestamp>.jsonl`` beside ``results_<timestamp>.json``. A
CrowS-Pairs document (Nangia et al. 2020) is a pair of sentences, ``sent_more`` (the more stereotypical) first and
``sent_less`` second; lm-eval scores both with the model's log-likelihood and records ``pct_stereotype`` (1 when
the first is the more likely) and ``likelihood_diff`` (the absolute difference). Here:

- ``consistent`` is ``pct_stereotype``; ``score`` is log P(first) - log P(second), stereotype minus
  anti-stereotype: the ``logprob`` method's declared direction (``score`` > 0 is a stereotype-consistent
  preference, :data:`bias_validity.probes.schema.COLUMNS`). Both are checked against each other and against
  ``likelihood_diff`` on every line.
- The log-likelihoods are read from ``filtered_resps`` (else ``resps``), which lm-eval writes as strings
  (``[["-78.19", "False"], ...]``); numbers, strings and tuple text (``"(-78.19, False)"``) are all read.
- ``dimension`` is ``doc.bias_type``, ``method`` ``logprob``, ``template_id`` the task, ``item_id`` the
  ``doc_id``, ``order`` ``-``, session 1, rep 0, and ``model`` lm-eval's model type and name from the results file
  (``hf:SmolLM2-...``; a local path is shortened to its last part). A log-likelihood that is not finite gives
  status ``error``; the row is kept.

Fields for ``--map``: ``task``, ``doc_id``, ``doc.<key>`` for every key of the document, ``target``, ``filter``,
``doc_hash``, ``pct_stereotype``, ``likelihood_diff``, ``model_name``. No lm_eval import is needed: the logs are
JSON lines.
"""

from __future__ import annotations

import ast
import json
import math
import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd

from bias_validity.probes.log_import import LogTable, responses_from_log
from bias_validity.probes.schema import Method, Status

__all__ = ["loglikelihood", "read_lm_eval_samples", "lm_eval_responses"]

_SAMPLES_NAME = re.compile(r"^samples_(?P<task>.+)_(?P<stamp>\d{4}-\d{2}-\d{2}T[\d\-.]+)\.jsonl$")
#: relative and absolute tolerance of the check ``|score| == likelihood_diff`` (both come from the same floats)
_TOLERANCE = 1e-6


def loglikelihood(value: object) -> float:
    """The log-likelihood of one lm-eval response, however it was written.

    lm-eval writes a ``loglikelihood`` response as ``(logprob, is_greedy)``, in ``resps`` nested once more, and
    in JSON as strings: ``["-78.19", "False"]``, ``[["-78.19", "False"]]``, ``"(-78.19, False)"`` or plain numbers.
    The first number found is returned; anything else raises ``ValueError``.

    Examples
    --------
    >>> loglikelihood(["-78.5", "False"]), loglikelihood([["-1.25", "True"]]), loglikelihood("(-3.0, False)")
    (-78.5, -1.25, -3.0)
    >>> loglikelihood(-2), loglikelihood("-inf")
    (-2.0, -inf)
    >>> loglikelihood(["abc"])
    Traceback (most recent call last):
    ...
    ValueError: 'abc' is not a log-likelihood
    """
    if isinstance(value, list | tuple) and value:
        return loglikelihood(value[0])
    if isinstance(value, bool) or value is None:
        raise ValueError(f"{value!r} is not a log-likelihood")
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        text = value.strip()
        try:
            return float(text)
        except ValueError:
            pass
        if text[:1] in "([":
            try:
                return loglikelihood(ast.literal_eval(text))
            except (ValueError, SyntaxError):
                pass
    raise ValueError(f"{value!r} is not a log-likelihood")


def _results_for(path: Path) -> dict[str, Any]:
    """The ``results_<timestamp>.json`` lm-eval wrote with a samples file ({} when it is not beside it)."""
    found = _SAMPLES_NAME.match(path.name)
    if not found:
        return {}
    results = path.with_name(f"results_{found['stamp']}.json")
    try:
        return json.loads(results.read_text(encoding="utf-8")) if results.is_file() else {}
    except ValueError:
        return {}


def _model(results: Mapping[str, Any]) -> str | None:
    """``<lm-eval model type>:<model name>`` from a results file; a local path is shortened to its last part."""
    name = str(results.get("model_name") or "")
    if not name:
        return None
    if name.startswith(("/", ".", "~")):
        name = Path(name).name
    kind = (results.get("config") or {}).get("model")
    return f"{kind}:{name}" if kind else name


def read_lm_eval_samples(paths: Sequence[str | Path]) -> LogTable:
    """Read lm-eval ``samples_*.jsonl`` files into a :class:`~bias_validity.probes.log_import.LogTable`.

    Parameters
    ----------
    paths : sequence of str or Path
        Sample logs of a two-choice log-likelihood task whose first choice is the stereotype (CrowS-Pairs).

    Returns
    -------
    LogTable
        One row per line (document); the fields and defaults of the module docstring. A line that is not JSON,
        lacks ``pct_stereotype`` or two log-likelihoods, or whose ``pct_stereotype`` or ``likelihood_diff``
        disagrees with its log-likelihoods raises ``ValueError`` naming the file, the line and the field.
    """
    fields, ours, origins = [], [], []
    for path in map(Path, paths):
        if not path.is_file():
            raise FileNotFoundError(f"{path}: no such file")
        found = _SAMPLES_NAME.match(path.name)
        task = found["task"] if found else path.stem.removeprefix("samples_")
        results = _results_for(path)
        model = _model(results)
        created = results.get("date")
        created_at = datetime.fromtimestamp(float(created), UTC).isoformat() if created else None
        with path.open(encoding="utf-8") as lines:
            for number, line in enumerate(lines, start=1):
                if not line.strip():
                    continue
                where = f"{path.name} line {number}"
                try:
                    record = json.loads(line)
                except ValueError as exc:
                    raise ValueError(f"{where}: not JSON ({exc})") from None
                if not isinstance(record, dict):
                    raise ValueError(f"{where}: not a JSON object")
                row, default = _line(record, where, task)
                fields.append({**row, "model_name": results.get("model_name")})
                ours.append({**default, "model": model, "created_at": created_at})
                origins.append(where)
    table = pd.DataFrame(ours)
    # no results file (model) or no bias_type in any document (dimension): --map or --set gives the column
    defaults = {c: table[c] for c in table.columns if not table[c].isna().all()}
    names = ", ".join(Path(p).name for p in paths)
    hints = {
        "model": "lm-eval names it in the results_<timestamp>.json it writes beside the samples file",
        "dimension": "a document without bias_type",
    }
    return LogTable(pd.DataFrame(fields), defaults, origins, names, hints)


def _line(record: dict[str, Any], where: str, task: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """One document's fields and default responses columns."""
    doc = record.get("doc") if isinstance(record.get("doc"), dict) else {}
    if "pct_stereotype" not in record:
        raise ValueError(
            f"{where}: field 'pct_stereotype' is missing: this reads CrowS-Pairs-style samples (lm_eval "
            "--log_samples of crows_pairs_*)"
        )
    resps = record.get("filtered_resps", record.get("resps"))
    field = "filtered_resps" if "filtered_resps" in record else "resps"
    if not isinstance(resps, list) or len(resps) != 2:
        raise ValueError(f"{where}: field {field!r}: expected two log-likelihoods (one per sentence), got {resps!r}")
    try:
        first, second = (loglikelihood(r) for r in resps)
    except ValueError as exc:
        raise ValueError(f"{where}: field {field!r}: {exc}") from None
    try:
        stereotype = float(record["pct_stereotype"])
    except (TypeError, ValueError):
        raise ValueError(f"{where}: field 'pct_stereotype': {record['pct_stereotype']!r} is not 0 or 1") from None
    if stereotype not in (0.0, 1.0):
        raise ValueError(f"{where}: field 'pct_stereotype': {record['pct_stereotype']!r} is not 0 or 1")
    score = first - second
    status = Status.OK.value if math.isfinite(score) else Status.ERROR.value
    if status == Status.OK.value:
        if int(stereotype) != int(score > 0):
            raise ValueError(
                f"{where}: field 'pct_stereotype' is {stereotype:g} but the log-likelihoods differ by {score:+.6g}: "
                "the first choice is not the stereotype sentence"
            )
        stated = record.get("likelihood_diff")
        if stated is not None and not math.isclose(abs(score), float(stated), rel_tol=_TOLERANCE, abs_tol=_TOLERANCE):
            raise ValueError(f"{where}: field 'likelihood_diff' is {stated} but the log-likelihoods differ by {score}")
    args = record.get("arguments")
    pairs = list(args.values()) if isinstance(args, dict) else args if isinstance(args, list) else []
    sentences = [_joined(p) for p in pairs]
    fields = {
        "task": task,
        "doc_id": record.get("doc_id"),
        **{f"doc.{k}": _scalar(v) for k, v in doc.items()},
        "target": _scalar(record.get("target")),
        "filter": record.get("filter"),
        "doc_hash": record.get("doc_hash"),
        "pct_stereotype": record["pct_stereotype"],
        "likelihood_diff": record.get("likelihood_diff"),
    }
    ok = status == Status.OK.value
    default = {
        "dimension": doc.get("bias_type"),
        "method": Method.LOGPROB.value,
        "template_id": task,
        "item_id": None if record.get("doc_id") is None else str(record["doc_id"]),
        "order": "-",
        "session": 1,
        "rep": 0,
        "status": status,
        "consistent": int(stereotype) if ok else None,
        "score": score if ok else None,
        "prompt": json.dumps(sentences) if sentences else None,
        "raw_response": json.dumps(resps),
        "params": json.dumps(
            {"logprob_consistent": first, "logprob_inconsistent": second, "doc_hash": record.get("doc_hash")}
        ),
    }
    return fields, default


def _joined(pair: object) -> str:
    """A request's context and continuation as one text (``{"arg_0": ctx, "arg_1": cont}`` or ``[ctx, cont]``)."""
    parts = list(pair.values()) if isinstance(pair, dict) else list(pair) if isinstance(pair, list) else [pair]
    return "".join(str(p) for p in parts[:2])


def _scalar(value: object) -> object:
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return json.dumps(value, default=str)


def lm_eval_responses(
    paths: Sequence[str | Path],
    *,
    rename: Mapping[str, str] | None = None,
    constants: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """The validated responses table of lm-eval sample logs, with ``--map`` (``rename``) and ``--set``
    (``constants``) over the defaults of the module docstring."""
    return responses_from_log(read_lm_eval_samples(paths), rename=rename, constants=constants)
