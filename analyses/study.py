"""The analysis object: one run's responses with every view of them computed once, and how to open one.

:class:`Study` is to the analyses what ``InferenceData`` is to ArviZ: the questions, the SC table, the fit and the
report read its views (answers by method, score rows, WEAT and closed-set rows, Likert ratings keyed towards the
stereotype, design cells, item scores, the SC and acquiescence tables, status counts) and never filter rows or
recode answers themselves. The Likert and consistency coding come from :mod:`bias_validity.probes.schema` only.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import numpy as np
import pandas as pd

from bias_validity.probes.schema import (
    CHOICE_PREFIX,
    EXPECTED_IMPLICIT,
    WEAT_ITEM,
    Method,
    Status,
    agrees,
    is_reversed,
    keyed_likert,
    takes_side,
    validate_responses,
)

if TYPE_CHECKING:
    from bias_validity.analyses.config import AnalysisConfig

__all__ = ["REQUIRED_COLUMNS", "LIKERT_METHODS", "DETERMINISTIC_METHODS", "Study", "as_study", "read_study"]

#: Columns every analysis reads; ``likert`` and ``score`` are added (empty) where a table lacks them.
REQUIRED_COLUMNS: tuple[str, ...] = (
    "model",
    "dimension",
    "method",
    "template_id",
    "item_id",
    "order",
    "session",
    "status",
    "consistent",
)
#: Methods answered on the 5-point agreement scale.
LIKERT_METHODS: tuple[str, ...] = (Method.EXPLICIT.value, Method.REFLECTION.value)
#: Methods that give a deterministic score per item rather than sampled answers.
DETERMINISTIC_METHODS: tuple[str, ...] = (Method.LOGPROB.value, Method.EMBEDDING.value)
_OPTIONAL = ("likert", "score")
_T = TypeVar("_T")


def _empty_skipped() -> pd.DataFrame:
    return pd.DataFrame(columns=["model", "method", "reason"])


@dataclass(eq=False)
class Study:
    """One run's responses, what was skipped, how it was collected, and every view of the answers, cached.

    Build one with :func:`read_study` (a store or a responses table file), :func:`as_study` or
    :meth:`from_responses` (a table in memory). Views are computed on first use and kept: a report reads each once.

    Attributes
    ----------
    responses : pandas.DataFrame
        The responses table (``bias_validity.probes.schema``).
    skipped : pandas.DataFrame
        Methods skipped per model (``model``, ``method``, ``reason``).
    runs : list of dict
        The run specs the answers were collected under (or one record naming the imported file).
    run, run_ids : the run analysed and the runs its store holds.
    models_meta : pandas.DataFrame, optional
        One row per model (``model``, ``family``, ``parameters``, ``training_tokens``, ``aligned``), for Q6 and the
        base-versus-tuned contrasts.
    source : str
        Where the answers came from, for messages.
    """

    responses: pd.DataFrame
    skipped: pd.DataFrame = field(default_factory=_empty_skipped)
    runs: list[dict[str, object]] = field(default_factory=list)
    run: int | None = None
    run_ids: tuple[int, ...] = ()
    models_meta: pd.DataFrame | None = None
    source: str = "responses"
    _cache: dict[Hashable, object] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.responses, pd.DataFrame):
            got = type(self.responses).__name__
            raise ValueError(f"{self.source}: expected the responses table as a pandas DataFrame, got {got}")
        missing = [c for c in REQUIRED_COLUMNS if c not in self.responses.columns]
        if missing:
            raise ValueError(f"{self.source}: the responses table lacks column(s) {', '.join(missing)}")
        absent = {c: pd.Series(np.nan, index=self.responses.index, dtype=float) for c in _OPTIONAL}
        absent = {c: v for c, v in absent.items() if c not in self.responses.columns}
        if absent:
            self.responses = self.responses.assign(**absent)

    @classmethod
    def from_responses(
        cls,
        responses: pd.DataFrame,
        *,
        models_meta: pd.DataFrame | None = None,
        skipped: pd.DataFrame | None = None,
        runs: list[dict[str, object]] | None = None,
        source: str = "responses",
    ) -> Study:
        """A study of a responses table held in memory (checked for the columns the analyses read)."""
        return cls(
            responses,
            _empty_skipped() if skipped is None else skipped,
            list(runs or []),
            models_meta=models_meta,
            source=source,
        )

    def with_models_meta(self, models_meta: pd.DataFrame | None) -> Study:
        """The same answers with another models file (views are computed afresh)."""
        return replace(self, models_meta=models_meta)

    def cached(self, key: Hashable, compute: Callable[[], _T]) -> _T:
        """The view ``key``, computed by ``compute`` on first use and kept for the study's lifetime."""
        if key not in self._cache:
            self._cache[key] = compute()
        return self._cache[key]  # type: ignore[return-value]

    @property
    def run_note(self) -> str | None:
        """One line saying which run is analysed, when the store holds several (None otherwise)."""
        if len(self.run_ids) < 2:
            return None
        latest = " (the latest)" if self.run == max(self.run_ids) else ""
        held = ", ".join(map(str, self.run_ids))
        return f"the store holds runs {held}: analysing run {self.run}{latest}; --run N analyses another"

    # --- views of the rows -------------------------------------------------------------------------------------

    @cached_property
    def models(self) -> list[str]:
        """The models of the study, sorted."""
        return sorted(self.responses["model"].astype(str).unique())

    @cached_property
    def ok(self) -> pd.DataFrame:
        """The ``ok`` answers (every method)."""
        return self.responses[self.responses["status"] == Status.OK.value]

    def answers(self, method: str) -> pd.DataFrame:
        """The ``ok`` answers of one method that take a stance (``consistent`` not null)."""
        return self.cached(("answers", str(method)), lambda: self._answers(str(method)))

    def _answers(self, method: str) -> pd.DataFrame:
        rows = self.ok[self.ok["method"] == method]
        return rows[rows["consistent"].notna()]

    @cached_property
    def is_choice(self) -> pd.Series:
        """Rows that are closed-set ``choice:`` log-odds of the implicit prompt's answers (a ``logprob`` template)."""
        template = self.responses["template_id"].astype(str)
        return (self.responses["method"] == Method.LOGPROB.value) & template.str.startswith(CHOICE_PREFIX)

    @cached_property
    def is_weat(self) -> pd.Series:
        """Rows that are whole-set WEAT effect sizes (``item_id`` ``WEAT``), not answers to an item."""
        return self.responses["item_id"] == WEAT_ITEM

    @cached_property
    def weat(self) -> pd.DataFrame:
        """The whole-set WEAT rows with a score (``model``, ``dimension``, ``score`` as float)."""
        rows = self.responses[self.is_weat & self.responses["score"].notna()]
        return rows.assign(score=rows["score"].astype(float))

    @cached_property
    def scores(self) -> pd.DataFrame:
        """``ok`` rows of the deterministic methods with a per-item score: neither WEAT nor closed-set rows."""
        ok = self.responses["status"] == Status.OK.value
        rows = self.responses[
            ok
            & self.responses["method"].isin(DETERMINISTIC_METHODS)
            & self.responses["score"].notna()
            & ~self.is_weat
            & ~self.is_choice
        ]
        return rows.assign(score=rows["score"].astype(float))

    @cached_property
    def series(self) -> pd.Series:
        """The method column with the closed-set ``choice:`` rows as their own series (``implicit_expected``), so
        they are never averaged into the ``logprob`` sentence measure."""
        return self.responses["method"].astype(str).where(~self.is_choice, EXPECTED_IMPLICIT)

    @cached_property
    def likert(self) -> pd.DataFrame:
        """``ok`` ratings of the Likert methods, with ``reversed`` (a reversed statement), ``side`` (takes a side),
        ``agree`` (above the midpoint) and ``keyed`` (the rating keyed towards the stereotype) from the schema."""
        rows = self.ok[self.ok["method"].isin(LIKERT_METHODS) & self.ok["likert"].notna()]
        rating = rows["likert"].astype(int).to_numpy()
        flipped = rows["order"].map(is_reversed).to_numpy(dtype=bool)
        return rows.assign(
            likert=rating,
            reversed=flipped,
            side=takes_side(rating),
            agree=agrees(rating),
            keyed=keyed_likert(rating, flipped),
        )

    # --- derived views -----------------------------------------------------------------------------------------

    @cached_property
    def cells(self) -> dict[str, pd.DataFrame]:
        """The design cells the Bayesian model is fitted to (:func:`bias_validity.analyses.fit.responses_to_cells`)."""
        from bias_validity.analyses.fit import responses_to_cells

        return responses_to_cells(self)

    @cached_property
    def item_scores(self) -> pd.DataFrame:
        """Per model x dimension x method x item, the mean score over answers: the implicit SC (share of consistent
        ``ok`` answers) and the deterministic methods' scores (``logprob``, ``embedding``; whole-set WEAT rows and
        closed-set ``choice:`` rows excluded). Columns ``model``, ``dimension``, ``method``, ``item_id``,
        ``score``."""
        implicit = self.answers(Method.IMPLICIT.value)
        implicit = implicit.assign(score=implicit["consistent"].astype(float))
        keys = ["model", "dimension", "method", "item_id"]
        both = pd.concat([implicit[[*keys, "score"]], self.scores[[*keys, "score"]]])
        return both.groupby(keys, observed=True)["score"].mean().reset_index()

    @cached_property
    def status_counts(self) -> pd.DataFrame:
        """Answers per model x method x status (:func:`bias_validity.analyses.summary.status_counts`)."""
        from bias_validity.analyses.summary import status_counts

        return status_counts(self)

    def sc_table(self, config: AnalysisConfig | None = None) -> pd.DataFrame:
        """The raw SC table (:func:`bias_validity.analyses.summary.sc_table`) under ``config``."""
        from bias_validity.analyses.summary import sc_table

        return sc_table(self, config)

    def acquiescence(self, config: AnalysisConfig | None = None) -> pd.DataFrame:
        """The acquiescence table (:func:`bias_validity.analyses.summary.acquiescence_table`) under ``config``."""
        from bias_validity.analyses.summary import acquiescence_table

        return acquiescence_table(self, config)


def as_study(data: Study | pd.DataFrame, *, models_meta: pd.DataFrame | None = None) -> Study:
    """``data`` as a :class:`Study`: a study as it is (with ``models_meta`` set when given), a table wrapped.

    Examples
    --------
    >>> from bias_validity.simulate import simulate_responses
    >>> study = as_study(simulate_responses(dimensions=["age"], n_items=3, seed=0))
    >>> study.item_scores.groupby("method").size().to_dict()
    {'embedding': 3, 'implicit': 3, 'logprob': 3}
    >>> as_study(study) is study
    True
    """
    if isinstance(data, Study):
        return data if models_meta is None else data.with_models_meta(models_meta)
    if isinstance(data, pd.DataFrame):
        return Study.from_responses(data, models_meta=models_meta)
    raise ValueError(f"expected a Study or a responses table (a pandas DataFrame), got {type(data).__name__}")


def read_study(
    path: str | Path, *, run: int | None = None, models_file: str | Path | None = None, quiet: bool = False
) -> Study:
    """Open the study a store or a responses table file holds.

    Parameters
    ----------
    path : str or Path
        A store (from ``bias-validity collect`` or ``import``), read one run at a time, or a ``.csv``, ``.jsonl`` or
        ``.parquet`` responses table, validated as ``import`` validates it (one line naming the row and field of the
        first problem) and held in memory with no skipped methods and one run record naming the file.
    run : int, optional
        The run of a store to analyse; by default its latest. Runs are never pooled.
    models_file : str or Path, optional
        A models file (CSV or JSON: ``model``, ``family``, ``parameters``, ``training_tokens``, ``aligned``), matched
        to the study's model names (:func:`bias_validity.analyses.models_meta.match_models`).
    quiet : bool
        Say nothing on stderr; otherwise a store holding several runs says which one is analysed.

    Returns
    -------
    Study

    Notes
    -----
    Anything that is neither a store nor a table is refused in one line that says what the file is and what to
    give instead; nothing is written, so a file that is not a store never becomes one.
    """
    from bias_validity.analyses.models_meta import META_COLUMNS, match_models, read_models_meta
    from bias_validity.probes.sources import describe_file, is_table_file, read_responses_table
    from bias_validity.probes.store import read_run

    file = Path(path)
    if not file.exists():
        raise FileNotFoundError(f"{path}: no such store or responses table")
    if is_table_file(file):
        raw = read_responses_table(file)
        if set(META_COLUMNS) <= set(raw.columns) and "response_id" not in raw.columns:
            raise ValueError(
                f"{path}: not a responses table: a models file (columns {', '.join(META_COLUMNS)}); pass it with "
                "--models-file beside the store or responses table"
            )
        table = validate_responses(raw, source=str(path))
        record = {"imported_from": str(path), "rows": len(table), "held": "in memory"}
        study = Study.from_responses(table, runs=[record], source=str(path))
    else:
        what = describe_file(file)
        if what:
            raise ValueError(f"{path}: not a store or a responses table: {what}")
        stored = read_run(file, run=run)
        study = Study(stored.responses, stored.skipped, stored.runs, stored.run, stored.run_ids, source=str(path))
        if study.run_note and not quiet:
            print(f"{path}: {study.run_note}", file=sys.stderr)
    if models_file:
        meta = match_models(read_models_meta(models_file), study.responses["model"].astype(str).unique())
        study = study.with_models_meta(meta)
    return study
