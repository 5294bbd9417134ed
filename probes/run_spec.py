"""The run spec: what one collection run was asked under, and the rule that decides whether a rerun may resume it.

A store's answers are reused only under the settings they were collected with. The spec records the model's
identity (its weights file hash or revision, per model), the settings that change answers
(:data:`~bias_validity.probes.schema.RUN_SETTINGS`: toolkit version, template and stimulus digests, base seed,
temperature, token limit) and the extent asked (:data:`~bias_validity.probes.schema.RUN_EXTENT`: dimensions,
methods, sessions, repetitions, items). A rerun resumes a run when the answer-changing fields agree; the extent may
grow. Otherwise it stops before asking anything and names each differing field with both values: answers collected
under other settings are never silently taken for the ones asked now (the trap of a cache key that leaves out the
decoding settings).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import subprocess
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path

from bias_validity import __version__, package_versions
from bias_validity.probes import templates as tpl
from bias_validity.probes.schema import FIRST_RUN, RUN_SETTINGS, Method
from bias_validity.probes.stimuli import Dimension
from bias_validity.probes.store import ResponseStore

__all__ = [
    "RunSpecMismatch",
    "MODEL_IDENTITY",
    "build_run_spec",
    "spec_differences",
    "resolve_run",
    "git_commit",
]

#: The run-spec field holding the model's identity (backend, name, weights hash or revision), compared per model.
MODEL_IDENTITY = "model_identity"
#: Settings compared key by key on the keys both specs hold: a run extended to a new dimension keeps its old ones.
_EXTENSIBLE = frozenset({"stimuli"})


class RunSpecMismatch(ValueError):
    """A rerun's spec differs from the stored run's in fields that change answers; the message names each one."""


def _digest(payload: object) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()[:16]


def templates_digest() -> str:
    """Digest of every prompt wording (each method's templates) and the prompt constants of the templates module."""
    methods = [m.value for m in Method if m != Method.EMBEDDING]
    templates = {m: [dataclasses.asdict(t) for t in tpl.templates_for(m)] for m in methods}
    constants = {k: v for k, v in vars(tpl).items() if k.isupper() and isinstance(v, str | tuple)}
    return _digest({"templates": templates, "constants": constants})


def stimuli_digests(dimensions: Sequence[Dimension]) -> dict[str, str]:
    """One digest per dimension of its stimulus file's content (labels, exemplars, attributes, items)."""
    return {d.name: _digest(dataclasses.asdict(d)) for d in dimensions}


def git_commit() -> str | None:
    """The toolkit's git commit, when it runs from a git checkout (None otherwise)."""
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=Path(__file__).parent, capture_output=True, text=True, timeout=5
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def build_run_spec(
    *,
    identity: Mapping[str, object],
    provenance: Mapping[str, object],
    dimensions: Sequence[Dimension],
    methods: Sequence[str],
    sessions: int,
    reps: int,
    seed: int,
    temperature: float,
    max_new_tokens: int,
    items_per_dimension: int | None,
    git_commit: str | None = None,
) -> dict[str, object]:
    """The spec of one collection: identity and answer-changing settings, the extent asked, and provenance."""
    return {
        MODEL_IDENTITY: dict(identity),
        "toolkit_version": __version__,
        "templates": templates_digest(),
        "stimuli": stimuli_digests(dimensions),
        "seed": seed,
        "temperature": temperature,
        "max_new_tokens": max_new_tokens,
        "dimensions": [d.name for d in dimensions],
        "methods": list(methods),
        "sessions": sessions,
        "reps": reps,
        "items_per_dimension": items_per_dimension,
        "started_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "git_commit": git_commit,
        "backend": dict(provenance),
        "packages": package_versions(),
    }


def spec_differences(stored: Mapping[str, object], now: Mapping[str, object], fields: Sequence[str]) -> list[str]:
    """One line per answer-changing field whose value differs: ``field: <stored> in the store, <now> now``.

    Mapping fields are compared key by key (``model_identity.gguf_sha256: ...``); a field the stored spec lacks
    (a store written before it was recorded) differs, since nothing says the answers were collected under it.

    Examples
    --------
    >>> spec_differences({"seed": 0, "temperature": 0.7}, {"seed": 0, "temperature": 1.0}, ["seed", "temperature"])
    ['temperature: 0.7 in the store, 1.0 now']
    >>> spec_differences({"model_identity": {"sha": "a"}}, {"model_identity": {"sha": "b"}}, ["model_identity"])
    ['model_identity.sha: "a" in the store, "b" now']
    """
    lines = []
    for name in fields:
        old, new = stored.get(name, _MISSING), now.get(name, _MISSING)
        if isinstance(new, Mapping) and (isinstance(old, Mapping) or old is _MISSING):
            recorded = old if isinstance(old, Mapping) else {}
            keys = recorded.keys() & new.keys() if name in _EXTENSIBLE and recorded else recorded.keys() | new.keys()
            pairs = [(f"{name}.{k}", recorded.get(k, _MISSING), new.get(k, _MISSING)) for k in sorted(keys)]
        else:
            pairs = [(name, old, new)]
        lines += [f"{field}: {_show(a)} in the store, {_show(b)} now" for field, a, b in pairs if a != b]
    return lines


class _Missing:
    def __repr__(self) -> str:
        return "not recorded"


_MISSING = _Missing()


def _show(value: object) -> str:
    return repr(value) if value is _MISSING else json.dumps(value, sort_keys=True, default=str)


def resolve_run(store: ResponseStore, model: str, spec: Mapping[str, object], run: int | None = None) -> int:
    """The run that ``model``'s answers under ``spec`` go into, or :class:`RunSpecMismatch` before anything is asked.

    Parameters
    ----------
    store : ResponseStore
        The store collected into.
    model : str
        The ``model`` column value of the backend.
    spec : mapping
        This collection's spec (:func:`build_run_spec`).
    run : int, optional
        The run to resume or start: an existing run, or the next number (a new run). By default the latest run
        (the first for an empty store).

    Returns
    -------
    int
        The run, when ``spec`` agrees with it: with ``model``'s stored spec on every answer-changing setting and
        on the model's identity, or, for a model new to the run, with the run's settings. The extent
        (:data:`~bias_validity.probes.schema.RUN_EXTENT`) may differ: that extends the run.

    Raises
    ------
    RunSpecMismatch
        A first line naming the store, run and model, then one line per differing field with both values.
    ValueError
        ``run`` is neither in the store nor the next new run; or the run holds answers of ``model`` without a run
        spec (imported), which could not be told apart from the ones asked now.
    """
    held = store.run_ids()
    latest = max(held, default=0)
    target = (latest or FIRST_RUN) if run is None else int(run)
    if target not in held and target != latest + 1:
        raise ValueError(f"{store.path}: no run {target} to resume, and a new run would be run {latest + 1}")
    collected = [s for s in store.runs(target) if "imported_from" not in s]
    mine = [s for s in collected if s.get("model") == model]
    if mine:
        stored, fields, whose = mine[0], (MODEL_IDENTITY, *RUN_SETTINGS), f"{model}'s answers"
    elif collected:
        stored, fields, whose = collected[0], RUN_SETTINGS, f"the answers of {collected[0].get('model')}"
    elif model in store.models_in_run(target):
        raise ValueError(
            f"{store.path}: run {target} holds answers of {model} imported without a run spec; add "
            "--new-run to collect into a separate run"
        )
    else:
        return target
    differences = spec_differences(stored, spec, fields)
    if differences:
        raise RunSpecMismatch(
            f"{store.path}: run {target} holds {whose} collected under other settings; rerun with the same "
            "settings to resume it, --run N to resume another run, or --new-run to collect a separate run:\n  "
            + "\n  ".join(differences)
        )
    return target
