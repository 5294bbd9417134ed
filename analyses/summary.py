"""Raw stereotype-consistency scores (SC) with their intervals and status counts, per model x dimension x method."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.special import expit

from bias_validity.analyses.config import AnalysisConfig
from bias_validity.analyses.study import MOVER_MEAN, NOT_BALANCED, Study, as_study, sc_counts
from bias_validity.probes.schema import EXPECTED_IMPLICIT, Status
from bias_validity.psychometrics.clustered import MIN_CLUSTERS, cluster_counts, cluster_interval
from bias_validity.psychometrics.interval_kind import IntervalKind

__all__ = ["sc_table", "acquiescence_table", "status_counts", "STATUS_COLUMNS", "NOT_BALANCED"]

STATUS_COLUMNS: tuple[str, ...] = tuple(s.value for s in Status)
_CELL = ["model", "dimension", "method"]


def sc_table(study: Study | pd.DataFrame, config: AnalysisConfig | None = None) -> pd.DataFrame:
    """The SC among ``ok`` answers that take a side, per model x dimension x method (one definition:
    :func:`bias_validity.analyses.study.sc_counts`).

    Parameters
    ----------
    study : the study or its responses table (``bias_validity.probes.schema``).
    config : its ``ci`` (the interval level) and the item-cluster bootstrap's ``n_resamples`` and ``seed``.

    Returns
    -------
    pandas.DataFrame
        Columns ``model``, ``dimension``, ``method``, ``n`` (all answers), one count column per status (``ok``,
        ``refusal``, ``unparseable``, ``invalid_choice``, ``error``), ``k_consistent``, ``n_side`` (ok answers
        taking a side: a Likert midpoint takes none), ``sc``, ``ci_low``, ``ci_high`` (answers independent, so it
        holds for *these* items: Wilson score interval of ``k_consistent / n_side``; for a balanced Likert SC the
        MOVER interval of the mean of the two rates from their Wilson intervals, Zou & Donner 2008), ``n_items``,
        ``item_ci_low``, ``item_ci_high`` (item-cluster bootstrap of the same statistic, t-corrected: items
        resampled with all their answers, so it holds for the dimension's items; NaN below
        :data:`bias_validity.psychometrics.clustered.MIN_CLUSTERS` items), ``interval`` (the kind of
        ``ci_low``/``ci_high`` on that row), ``n_statement``, ``n_reversal`` (side-taking Likert ratings of
        statements and of reversals; every other answer counts as a statement), ``balanced`` (False for a Likert
        cell with one polarity only) and ``note`` (what such a cell's SC is not corrected for). ``attrs``: ``ci``,
        ``method`` and ``interval`` (:class:`~bias_validity.psychometrics.IntervalKind` of ``ci_low``/``ci_high``
        for single rates), ``likert_interval`` (that of balanced Likert rows), ``item_interval`` (that of the
        item columns), ``n_resamples``, ``seed``. Non-``ok`` answers are counted, never coded as a stance. The
        ``embedding`` method's whole-set WEAT row is excluded (an effect size, not an answer). Closed-set
        ``choice:`` rows form the ``implicit_expected`` series: their ``sc`` is the mean probability of the
        consistent answer (no sampling noise, so no Wilson interval; the item interval still applies).

    Notes
    -----
    The SC (:data:`bias_validity.psychometrics.estimands.ESTIMANDS` ``["sc"]``): ``k_consistent / n_side`` for
    answers other than Likert ratings; for ``explicit`` and ``reflection`` ratings the equal-weight mean of
    P(agree | statement) and P(disagree | reversal) among ratings that take a side, so acquiescence cancels
    whatever the share of midpoint answers in either polarity; ``k_consistent`` and ``n_side`` stay the pooled
    counts. A Likert cell with one polarity only has that one rate as its SC, ``balanced`` False and the note.

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"model": ["m"] * 3, "dimension": ["age"] * 3, "method": ["implicit"] * 3,
    ...                   "template_id": ["t"] * 3, "item_id": ["age-01"] * 3, "order": ["ab-xy"] * 3,
    ...                   "session": [1] * 3, "status": ["ok", "ok", "refusal"], "consistent": [1, 0, None]})
    >>> sc_table(t)[["ok", "refusal", "k_consistent", "sc"]].to_dict("records")
    [{'ok': 2, 'refusal': 1, 'k_consistent': 1, 'sc': 0.5}]
    """
    study, config = as_study(study), AnalysisConfig() if config is None else config
    key = ("sc_table", config.ci, config.n_resamples, config.seed)
    return study.cached(key, lambda: _sc_table(study, config))


def _sc_table(study: Study, config: AnalysisConfig) -> pd.DataFrame:
    table = study.responses.assign(method=study.series)[~study.is_weat]
    counts = table.groupby([*_CELL, "status"]).size().unstack("status", fill_value=0).reindex(columns=STATUS_COLUMNS)
    counts = counts.fillna(0).astype(int)
    ok = table[(table["status"] == Status.OK.value)]
    expected = ok["method"] == EXPECTED_IMPLICIT
    # the expected series scores P(consistent answer) = logistic(log-odds); the others their 0/1 stance
    value = ok["consistent"].astype(float).where(~expected, expit(ok["score"].astype(float)))
    ok = ok.assign(value=value)[value.notna()]
    sc = sc_counts(ok, _CELL, outcome="value", ci=config.ci, config=config).set_index(_CELL)
    sc = sc.reindex(counts.index)
    out = counts.reset_index()
    out.columns.name = None
    out.insert(3, "n", counts.sum(axis=1).to_numpy())
    out["k_consistent"] = sc["k"].fillna(0).astype(float).round().astype(int).to_numpy()
    out["n_side"] = sc["n"].fillna(0).astype(int).to_numpy()
    out["sc"] = sc["sc"].to_numpy(dtype=float)
    is_expected = (out["method"] == EXPECTED_IMPLICIT).to_numpy()
    out["ci_low"] = np.where(is_expected, np.nan, sc["ci_low"].to_numpy(dtype=float))
    out["ci_high"] = np.where(is_expected, np.nan, sc["ci_high"].to_numpy(dtype=float))
    out["n_items"] = sc["n_items"].fillna(0).astype(int).to_numpy()
    out["item_ci_low"] = sc["item_ci_low"].to_numpy(dtype=float)
    out["item_ci_high"] = sc["item_ci_high"].to_numpy(dtype=float)
    out["interval"] = np.where(is_expected, "", sc["interval"].astype(object).fillna("").to_numpy(dtype=object))
    for col in ("n_statement", "n_reversal"):
        out[col] = sc[col].fillna(0).astype(int).to_numpy()
    out["balanced"] = sc["balanced"].fillna(True).astype(bool).to_numpy()
    out["note"] = sc["note"].fillna("").to_numpy(dtype=object)
    out.attrs.update(
        ci=config.ci,
        method="wilson",
        item_interval=f"{IntervalKind.ITEM_CLUSTER_T} (>= {MIN_CLUSTERS} items)",
        interval=IntervalKind.WILSON,
        likert_interval=MOVER_MEAN,
        n_resamples=config.n_resamples,
        seed=config.seed,
    )
    return out


def acquiescence_table(study: Study | pd.DataFrame, config: AnalysisConfig | None = None) -> pd.DataFrame:
    """Acquiescence index per model x dimension x Likert method, where statements were asked with their reversal.

    Parameters
    ----------
    study : the study or its responses table (``bias_validity.probes.schema``).
    config : its ``ci`` (interval level), ``n_resamples`` and ``seed`` (the bootstrap's).

    Returns
    -------
    pandas.DataFrame
        Columns ``model``, ``dimension``, ``method``, ``agree_statement`` and ``agree_reversed`` (P(agree) among
        ratings that take a side), ``acquiescence`` (their mean: 0.5 when agreement follows the content, 1 for
        agreeing with everything), ``ci_low``, ``ci_high`` (answer bootstrap, t-corrected: answers resampled
        within polarity, an interval for these items), ``n``, ``balanced`` (both polarities asked) and ``note``. A
        Likert method asked without reversals gets a row with ``balanced`` False and the note that its SC is not
        corrected for acquiescence. Definition: :data:`bias_validity.psychometrics.estimands.ESTIMANDS`
        ``["acquiescence"]`` (the balanced-keying acquiescence index, e.g. Billiet & McClendon 2000).

    Examples
    --------
    >>> from bias_validity.simulate import simulate_responses
    >>> t = simulate_responses(dimensions=["age"], sc={"explicit": 0.5}, acquiescence=3.0, seed=0)
    >>> round(float(acquiescence_table(t)["acquiescence"].iloc[0]), 1)
    0.9
    """
    study, config = as_study(study), AnalysisConfig() if config is None else config
    key = ("acquiescence", config.ci, config.n_resamples, config.seed)
    return study.cached(key, lambda: _acquiescence_table(study, config))


def _acquiescence_table(study: Study, config: AnalysisConfig) -> pd.DataFrame:
    likert = study.likert[study.likert["side"]]
    rows = []
    for (model, dim, method), grp in likert.groupby(_CELL, observed=True):
        flipped = grp["reversed"].to_numpy(dtype=bool)
        agree = grp["agree"].to_numpy(dtype=float)
        row = dict(
            model=model, dimension=dim, method=method, n=len(grp), balanced=bool(flipped.any() and (~flipped).any())
        )
        if not row["balanced"]:
            rows.append(
                {
                    **row,
                    "agree_statement": agree[~flipped].mean() if (~flipped).any() else np.nan,
                    "agree_reversed": np.nan,
                    "acquiescence": np.nan,
                    "ci_low": np.nan,
                    "ci_high": np.nan,
                    "note": NOT_BALANCED,
                }
            )
            continue
        frame = pd.DataFrame({"c": np.arange(len(grp)).astype(str), "m": np.where(flipped, "r", "s"), "y": agree})
        counts = cluster_counts(frame, cluster="c", condition="m", outcome="y")
        est, low, high, why = cluster_interval(
            counts,
            lambda t: 0.5 * (t["k:s"] / t["n:s"] + t["k:r"] / t["n:r"]),
            **config.bootstrap,
            unit="answers",
        )
        rows.append(
            {
                **row,
                "agree_statement": agree[~flipped].mean(),
                "agree_reversed": agree[flipped].mean(),
                "acquiescence": est,
                "ci_low": low,
                "ci_high": high,
                "note": why,
            }
        )
    columns = [
        *_CELL,
        "agree_statement",
        "agree_reversed",
        "acquiescence",
        "ci_low",
        "ci_high",
        "n",
        "balanced",
        "note",
    ]
    out = pd.DataFrame(rows, columns=columns)
    out.attrs.update(
        ci=config.ci, interval=IntervalKind.ANSWER_BOOTSTRAP_T, n_resamples=config.n_resamples, seed=config.seed
    )
    return out


def status_counts(study: Study | pd.DataFrame) -> pd.DataFrame:
    """Answers per model x method x status: ``model``, ``method``, ``status``, ``n`` and ``rate`` (share of the
    model x method's answers).

    SCs are conditional on a valid (``ok``) answer; these rates say how many answers that condition set aside.

    Examples
    --------
    >>> df = pd.DataFrame({"model": ["m"] * 4, "method": ["implicit"] * 4, "status": ["ok", "ok", "ok", "refusal"]})
    >>> status_counts(df)[["status", "n", "rate"]].to_dict("records")
    [{'status': 'ok', 'n': 3, 'rate': 0.75}, {'status': 'refusal', 'n': 1, 'rate': 0.25}]
    """
    responses = study.responses if isinstance(study, Study) else study
    counts = responses.groupby(["model", "method", "status"]).size().rename("n").reset_index()
    counts["rate"] = counts["n"] / counts.groupby(["model", "method"])["n"].transform("sum")
    return counts
