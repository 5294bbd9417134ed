"""The analysis object: one run's responses with every view of them computed once, and how to open one.

:class:`Study` is to the analyses what ``InferenceData`` is to ArviZ: the questions, the SC table, the fit and the
report read its views (answers by method, score rows, WEAT and closed-set rows, Likert ratings keyed towards the
stereotype, design cells, item scores, the SC and acquiescence tables, status counts) and never filter rows or
recode answers themselves. The Likert and consistency coding come from :mod:`bias_validity.probes.schema` only.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Hashable, Mapping
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
from bias_validity.psychometrics.clustered import ClusterInterval, cluster_counts, cluster_interval
from bias_validity.psychometrics.contrasts import mover_difference
from bias_validity.psychometrics.interval_kind import IntervalKind
from bias_validity.psychometrics.intervals import wilson_interval

if TYPE_CHECKING:
    from bias_validity.analyses.config import AnalysisConfig

__all__ = [
    "REQUIRED_COLUMNS",
    "LIKERT_METHODS",
    "DETERMINISTIC_METHODS",
    "STATEMENT",
    "REVERSAL",
    "NOT_BALANCED",
    "ONLY_REVERSALS",
    "MOVER_MEAN",
    "Study",
    "as_study",
    "read_study",
    "item_keys",
    "sc_counts",
    "sc_statistic",
    "sc_cluster_counts",
    "sc_interval",
    "sc_difference",
]

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
#: The two conditions of a Likert SC: a rating of a statement (of the stereotype; for ``reflection``, of the
#: model's own consistent completion) or of its reversal (``order`` ending in ``~reversed``; for ``reflection``, of
#: its own inconsistent completion). Every answer of another method counts as a statement.
STATEMENT, REVERSAL = "statement", "reversal"
#: What a Likert SC without reversed statements cannot say.
NOT_BALANCED = "no reversed statements: this SC is not corrected for acquiescence"
#: What a Likert SC of reversed statements only cannot say.
ONLY_REVERSALS = "reversed statements only: this SC is not corrected for acquiescence"
#: The interval of a balanced Likert SC among answers taken as independent (see :func:`sc_counts`).
MOVER_MEAN = f"{IntervalKind.MOVER}, mean of two Wilson intervals"
_SC_COLUMNS = ["k", "n", "sc", "k_statement", "n_statement", "k_reversal", "n_reversal", "balanced", "note"]


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


def item_keys(rows: pd.DataFrame) -> pd.Series:
    """Each row's item as ``"dimension/item_id"`` (the item id alone in a table without ``dimension``): an item is
    a (dimension, item id) pair, so an id asked under two dimensions is two items.

    Examples
    --------
    >>> item_keys(pd.DataFrame({"dimension": ["age", "race"], "item_id": ["item-01", "item-01"]})).tolist()
    ['age/item-01', 'race/item-01']
    """
    items = rows["item_id"].astype(str)
    return rows["dimension"].astype(str) + "/" + items if "dimension" in rows.columns else items


# --- the SC: one definition for every table and question -----------------------------------------------------------


def _sc_frame(rows: pd.DataFrame, outcome: str, arm: str | None = None, by: list[str] | None = None) -> pd.DataFrame:
    """Each answer's outcome, polarity (statement/reversal), whether it is a Likert rating, and its item cluster."""
    likert = (
        rows["method"].astype(str).isin(LIKERT_METHODS).to_numpy()
        if "method" in rows.columns
        else np.zeros(len(rows), dtype=bool)
    )
    flipped = rows["order"].map(is_reversed).to_numpy(dtype=bool) if len(rows) else np.zeros(0, dtype=bool)
    cluster = item_keys(rows)
    frame = pd.DataFrame(
        {
            "y": rows[outcome].astype(float).to_numpy(),
            "polarity": np.where(likert & flipped, REVERSAL, STATEMENT),
            "likert": likert,
            "cluster": cluster.to_numpy(),
            "arm": "" if arm is None else rows[arm].astype(str).to_numpy(),
        },
        index=rows.index,
    )
    groups = [frame["arm"], *(rows[b].astype(str).to_numpy() for b in by or [])]
    mixed = frame["likert"].groupby(groups).nunique() if len(frame) else pd.Series(dtype=int)
    if (mixed > 1).any():
        raise ValueError("sc: a group mixes Likert ratings with answers of another method; give one method per group")
    return frame


def sc_statistic(totals: Mapping[str, np.ndarray], arm: str = "") -> np.ndarray:
    """The SC from pooled counts keyed ``k:{arm}statement``, ``n:{arm}statement`` (and the same for ``reversal``).

    The equal-weight mean of the rate among statements and the rate among reversals, over the polarities present
    in ``totals`` (one polarity present: that rate). Vectorised over resamples, so it is the ``statistic`` of
    :func:`bias_validity.psychometrics.clustered.cluster_interval` with the counts of :func:`sc_cluster_counts`.

    Examples
    --------
    >>> t = {"k:statement": np.array(9.0), "n:statement": np.array(10.0),
    ...      "k:reversal": np.array(0.0), "n:reversal": np.array(2.0)}
    >>> float(sc_statistic(t)), float(sc_statistic({k: v for k, v in t.items() if "statement" in k}))
    (0.45, 0.9)
    """
    rates = [totals[f"k:{arm}{p}"] / totals[f"n:{arm}{p}"] for p in (STATEMENT, REVERSAL) if f"n:{arm}{p}" in totals]
    if not rates:
        raise ValueError(f"sc_statistic: no counts for {arm or 'the answers'}")
    return sum(rates) / len(rates)


def sc_cluster_counts(
    rows: pd.DataFrame, *, outcome: str = "consistent", arm: str | None = None
) -> dict[str, np.ndarray]:
    """Per item (``dimension``/``item_id``) and polarity (and ``arm``, when given): the counts the SC is built from.

    The input of :func:`bias_validity.psychometrics.clustered.cluster_interval` with :func:`sc_statistic`: keys
    ``k:{arm}statement``, ``n:{arm}statement``, ``k:{arm}reversal``, ``n:{arm}reversal`` for the conditions present
    (``arm`` is the value of the column ``arm`` followed by ``|``; none without it).
    """
    frame = _sc_frame(rows, outcome, arm)
    condition = (frame["arm"] + "|" if arm is not None else "") + frame["polarity"]
    return cluster_counts(frame.assign(condition=condition), cluster="cluster", condition="condition", outcome="y")


def sc_interval(rows: pd.DataFrame, config: AnalysisConfig, *, outcome: str = "consistent") -> ClusterInterval:
    """The SC of ``rows`` (one method) with its item-cluster bootstrap interval (:func:`sc_counts`'s statistic).

    Items are resampled with all their answers to both polarities (Davison & Hinkley 1997, sec. 3.8; Field &
    Welsh 2007); the statistic recomputed on each resample is :func:`sc_statistic`, so the interval is that of the
    equal-weight mean of the two rates, t-corrected for few items
    (:func:`bias_validity.psychometrics.clustered.cluster_interval`). Level, resamples and seed:
    ``config.bootstrap``.
    """
    return cluster_interval(sc_cluster_counts(rows, outcome=outcome), sc_statistic, **config.bootstrap)


def sc_difference(
    first: pd.DataFrame, second: pd.DataFrame, config: AnalysisConfig, *, outcome: str = "consistent"
) -> ClusterInterval:
    """SC(first) - SC(second) (each :func:`sc_statistic`) with the item-cluster bootstrap interval of the difference.

    Items are resampled with the answers of both sets (paired by item), so the interval of the contrast holds
    for the dimension's items; ``config.bootstrap`` gives its level, resamples and seed.
    """
    both = pd.concat([first.assign(_arm="1"), second.assign(_arm="2")])
    counts = sc_cluster_counts(both, outcome=outcome, arm="_arm")
    return cluster_interval(counts, lambda t: sc_statistic(t, "1|") - sc_statistic(t, "2|"), **config.bootstrap)


def sc_counts(
    rows: pd.DataFrame,
    by: list[str],
    *,
    outcome: str = "consistent",
    ci: float | None = None,
    config: AnalysisConfig | None = None,
) -> pd.DataFrame:
    """The SC per group of answers that take a side: the one definition every table and question reads.

    Parameters
    ----------
    rows : pandas.DataFrame
        Answers that take a side (e.g. :meth:`Study.answers`), with ``order``, ``item_id`` and ``outcome``; a
        group holds one kind of method: Likert ratings (``explicit``, ``reflection``) or not, never both.
    by : list of str
        The grouping columns.
    outcome : str
        The 0/1 stance (``consistent``), or a probability of the consistent answer (the closed-set series).
    ci : float, optional
        Adds ``ci_low``, ``ci_high`` and ``interval``: the interval of the SC with answers independent (for
        *these* items): Wilson (1927) for a single rate; for a balanced Likert SC the MOVER interval of the mean
        of the two rates from their Wilson intervals (Zou & Donner 2008; Newcombe 1998 for the difference),
        :data:`MOVER_MEAN`. NaN where the outcome is a probability rather than a count.
    config : AnalysisConfig, optional
        Adds ``n_items``, ``item_ci_low``, ``item_ci_high`` and ``item_note``: the item-cluster bootstrap of the
        same statistic (:func:`sc_interval`), items resampled with all their answers; level, resamples and seed
        from ``config.bootstrap``.

    Returns
    -------
    pandas.DataFrame
        ``by``, ``k`` and ``n`` (consistent and all side-taking answers, pooled), ``sc``, ``k_statement``,
        ``n_statement``, ``k_reversal``, ``n_reversal``, ``balanced`` and ``note``, then the interval columns asked
        for.

    Notes
    -----
    The SC (:data:`bias_validity.psychometrics.estimands.ESTIMANDS` ``["sc"]``): for answers other than Likert
    ratings (``implicit``, ``ablated``, the closed-set series) ``k / n``; for Likert ratings the equal-weight mean
    of P(agree | statement) and P(disagree | reversal) among ratings that take a side, so that a responder who
    agrees whatever is stated (acquiescence) scores 0.5 however often it sits on the midpoint of one polarity. A
    Likert group with one polarity only is never pooled silently: its SC is that one rate, ``balanced`` is False
    and ``note`` says so (:data:`NOT_BALANCED`, :data:`ONLY_REVERSALS`); ``balanced`` is True for groups of other
    methods, which have no agreement to balance.

    References
    ----------
    Zou, G. Y., & Donner, A. (2008). Construction of confidence limits about effect measures: a general approach.
    Statistics in Medicine 27, 1693-1702.

    Examples
    --------
    A responder consistent on 9 of 10 statements and 1 of 2 reversals it takes a side on (pooled share 10/12):

    >>> rows = pd.DataFrame({"method": ["explicit"] * 12, "item_id": ["i"] * 12,
    ...                      "order": ["xy"] * 10 + ["xy~reversed"] * 2, "consistent": [1] * 9 + [0, 0, 1]})
    >>> sc_counts(rows.assign(m="m"), ["m"])[["k", "n", "sc", "balanced"]].to_dict("records")
    [{'k': 10, 'n': 12, 'sc': 0.7, 'balanced': True}]
    >>> sc_counts(rows.head(10).assign(m="m"), ["m"])[["sc", "note"]].to_dict("records")
    [{'sc': 0.9, 'note': 'no reversed statements: this SC is not corrected for acquiescence'}]
    """
    frame = _sc_frame(rows, outcome, by=by)
    keys = rows[by].reset_index(drop=True)
    work = pd.concat([keys, frame.reset_index(drop=True)], axis=1)
    columns = [*by, *_SC_COLUMNS]
    if work.empty:
        out = pd.DataFrame(columns=columns)
        if ci is not None:
            out = out.assign(ci_low=[], ci_high=[], interval=[])
        if config is not None:
            out = out.assign(n_items=[], item_ci_low=[], item_ci_high=[], item_note=[])
        return out
    grouped = work.groupby(by, observed=True)
    out = grouped["y"].agg(k="sum", n="size")
    likert = grouped["likert"].any()
    per = work.groupby([*by, "polarity"], observed=True)["y"].agg(["sum", "size"]).unstack("polarity", fill_value=0)
    for p in (STATEMENT, REVERSAL):
        out[f"k_{p}"] = per[("sum", p)].reindex(out.index, fill_value=0) if ("sum", p) in per else 0.0
        out[f"n_{p}"] = per[("size", p)].reindex(out.index, fill_value=0) if ("size", p) in per else 0
    ns, nr = out["n_statement"].to_numpy(dtype=float), out["n_reversal"].to_numpy(dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        rs, rr = out["k_statement"].to_numpy(dtype=float) / ns, out["k_reversal"].to_numpy(dtype=float) / nr
    both = (ns > 0) & (nr > 0)
    out["sc"] = np.where(both, (rs + rr) / 2, np.where(ns > 0, rs, rr))
    out["balanced"] = both | ~likert.to_numpy()
    out["note"] = np.where(out["balanced"], "", np.where(ns > 0, NOT_BALANCED, ONLY_REVERSALS))
    integral = np.allclose(out[["k", "k_statement", "k_reversal"]].to_numpy(dtype=float) % 1, 0)
    for col in ("k", "k_statement", "k_reversal"):
        out[col] = out[col].round().astype(int) if integral else out[col].astype(float)
    for col in ("n", "n_statement", "n_reversal"):
        out[col] = out[col].astype(int)
    out = out.reset_index()[columns]
    if ci is not None:
        out = pd.concat([out, _sc_these_items(out, ci)], axis=1)
    if config is not None:
        found = [
            (item_keys(grp).nunique(), *sc_interval(grp, config, outcome=outcome))
            for _, grp in rows.groupby(by, observed=True)
        ]
        items, _, low, high, why = (list(col) for col in zip(*found, strict=True))
        out = out.assign(n_items=items, item_ci_low=low, item_ci_high=high, item_note=why)
    return out


def _sc_these_items(out: pd.DataFrame, ci: float) -> pd.DataFrame:
    """Wilson for one rate; the MOVER mean of the two Wilson intervals for a balanced Likert SC."""
    if not pd.api.types.is_integer_dtype(out["k"]):  # probabilities, not counts: no sampling interval
        return pd.DataFrame({"ci_low": np.nan, "ci_high": np.nan, "interval": ""}, index=out.index)
    bounds = {}
    for p in (STATEMENT, REVERSAL):
        n = out[f"n_{p}"].to_numpy()
        w = wilson_interval(out[f"k_{p}"].to_numpy(), np.maximum(n, 1), ci=ci)
        bounds[p] = [np.where(n > 0, w[c].to_numpy(dtype=float), np.nan) for c in ("estimate", "ci_low", "ci_high")]
    rows = []
    for i, two in enumerate((out["n_statement"] > 0) & (out["n_reversal"] > 0)):
        (ps, ls, us), (pr, lr, ur) = ([v[i] for v in bounds[p]] for p in (STATEMENT, REVERSAL))
        if two:
            # the sum p_s + p_r as the difference p_s - (-p_r), then halved
            _, low, high = mover_difference(ps, (ls, us), -pr, (-ur, -lr))
            rows.append((low / 2, high / 2, MOVER_MEAN))
        else:
            rows.append((ls, us, str(IntervalKind.WILSON)) if np.isfinite(ps) else (lr, ur, str(IntervalKind.WILSON)))
    return pd.DataFrame(rows, columns=["ci_low", "ci_high", "interval"], index=out.index)
