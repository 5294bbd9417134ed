"""Raw stereotype-consistency scores (SC) with Wilson intervals and status counts, per model x dimension x method."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.special import expit

from bias_validity.analyses.config import AnalysisConfig
from bias_validity.analyses.study import Study, as_study
from bias_validity.probes.schema import EXPECTED_IMPLICIT, Status
from bias_validity.psychometrics.clustered import MIN_CLUSTERS, cluster_counts, cluster_interval
from bias_validity.psychometrics.interval_kind import IntervalKind
from bias_validity.psychometrics.intervals import wilson_interval

__all__ = ["sc_table", "acquiescence_table", "status_counts", "STATUS_COLUMNS", "NOT_BALANCED"]

#: What a Likert SC without reversed statements cannot say.
NOT_BALANCED = "no reversed statements: this SC is not corrected for acquiescence"

STATUS_COLUMNS: tuple[str, ...] = tuple(s.value for s in Status)
_CELL = ["model", "dimension", "method"]


def sc_table(study: Study | pd.DataFrame, config: AnalysisConfig | None = None) -> pd.DataFrame:
    """Share of stereotype-consistent answers among ``ok`` answers, per model x dimension x method.

    Parameters
    ----------
    study : the study or its responses table (``bias_validity.probes.schema``).
    config : its ``ci`` (the interval level) and the item-cluster bootstrap's ``n_resamples`` and ``seed``.

    Returns
    -------
    pandas.DataFrame
        Columns ``model``, ``dimension``, ``method``, ``n`` (all answers), one count column per status (``ok``,
        ``refusal``, ``unparseable``, ``invalid_choice``, ``error``), ``k_consistent``, ``n_side`` (ok answers
        taking a side: a Likert midpoint takes none), ``sc``, ``ci_low``, ``ci_high`` (Wilson score interval: answers
        independent, so it holds for *these* items), ``n_items``, ``item_ci_low``, ``item_ci_high`` (item-cluster
        bootstrap, t-corrected: items resampled with all their answers, so it holds for the dimension's items;
        NaN below :data:`bias_validity.psychometrics.clustered.MIN_CLUSTERS` items). ``attrs``: ``ci``, ``method``
        and ``interval`` (:class:`~bias_validity.psychometrics.IntervalKind` of ``ci_low``/``ci_high``),
        ``item_interval`` (that of the item columns), ``n_resamples``, ``seed``. Non-``ok`` answers are counted,
        never coded as a stance. The ``embedding`` method's whole-set WEAT row is excluded (an effect size, not
        an answer). Closed-set ``choice:`` rows form the ``implicit_expected`` series: their ``sc`` is the mean
        probability of the consistent answer (no sampling noise, so no Wilson interval; the item interval still
        applies).

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
    ci = config.ci
    table = study.responses.assign(method=study.series)[~study.is_weat]
    counts = table.groupby([*_CELL, "status"]).size().unstack("status", fill_value=0).reindex(columns=STATUS_COLUMNS)
    counts = counts.fillna(0).astype(int)
    ok = table[(table["status"] == Status.OK.value)]
    expected = ok["method"] == EXPECTED_IMPLICIT
    # the expected series scores P(consistent answer) = logistic(log-odds); the others their 0/1 stance
    value = ok["consistent"].astype(float).where(~expected, expit(ok["score"].astype(float)))
    ok = ok.assign(value=value)[value.notna()]
    grouped = ok.groupby(_CELL)["value"]
    k = grouped.sum().reindex(counts.index, fill_value=0)
    n_side = grouped.size().reindex(counts.index, fill_value=0).astype(int)
    out = counts.reset_index()
    out.columns.name = None
    out.insert(3, "n", counts.sum(axis=1).to_numpy())
    out["k_consistent"] = k.round().astype(int).to_numpy()
    out["n_side"] = n_side.to_numpy()
    interval = wilson_interval(out["k_consistent"].to_numpy(), out["n_side"].to_numpy(), ci=ci)
    out["sc"] = (k / n_side.where(n_side > 0)).to_numpy(dtype=float)
    is_expected = (out["method"] == EXPECTED_IMPLICIT).to_numpy()
    out["ci_low"] = np.where(is_expected, np.nan, interval["ci_low"].to_numpy())
    out["ci_high"] = np.where(is_expected, np.nan, interval["ci_high"].to_numpy())
    items = {key: grp for key, grp in ok.groupby(_CELL)}
    bounds = []
    for key in map(tuple, out[_CELL].to_numpy()):
        grp = items.get(key)
        if grp is None:
            bounds.append((0, np.nan, np.nan))
            continue
        counts_i = cluster_counts(grp.assign(c="x"), cluster="item_id", condition="c", outcome="value")
        _, low, high, _ = cluster_interval(counts_i, lambda t: t["k:x"] / t["n:x"], **config.bootstrap)
        bounds.append((grp["item_id"].nunique(), low, high))
    out["n_items"], out["item_ci_low"], out["item_ci_high"] = (
        (list(col) for col in zip(*bounds, strict=True)) if bounds else ([], [], [])
    )
    out.attrs.update(
        ci=ci,
        method="wilson",
        item_interval=f"{IntervalKind.ITEM_CLUSTER_T} (>= {MIN_CLUSTERS} items)",
        interval=IntervalKind.WILSON,
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
