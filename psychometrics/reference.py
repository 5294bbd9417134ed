"""Human reference figures: Project Implicit IAT effect sizes, and rank agreement of LLM effects with them."""

from __future__ import annotations

from importlib import resources

import pandas as pd

from bias_validity.psychometrics._checks import check_columns
from bias_validity.psychometrics.validity import rank_agreement

__all__ = ["HUMAN_IAT_SOURCE", "DIMENSION_TO_IAT", "human_iat_reference", "compare_to_human"]

HUMAN_IAT_SOURCE = (
    "Charlesworth, T. E. S., & Banaji, M. R. (2019). Patterns of implicit and explicit attitudes: I. Long-term "
    "change and stability from 2007 to 2016. Psychological Science 30(2), 174-192, Table 1."
)
#: The toolkit's stimulus dimensions that have a human IAT in the reference table (the others have none).
DIMENSION_TO_IAT = {"age": "age", "disability": "disability", "race": "race"}
_HUMAN_COLUMNS = ("implicit_D_mean", "implicit_cohen_d", "explicit_mean", "explicit_cohen_d", "r_implicit_explicit")


def human_iat_reference() -> pd.DataFrame:
    """Human IAT and explicit-attitude figures from Project Implicit (Charlesworth & Banaji 2019, Table 1).

    Returns
    -------
    pandas.DataFrame
        One row per IAT: ``source``, ``iat`` (sexuality, race, skin_tone, age, disability, body_weight_figures,
        body_weight_faces), ``n`` (sessions), ``implicit_D_mean``, ``implicit_D_sd``, ``implicit_cohen_d``
        (D mean / SD), ``explicit_mean``, ``explicit_sd``, ``explicit_cohen_d``, ``r_implicit_explicit``.
        ``attrs["source"]`` holds the citation.

    Notes
    -----
    Published figures shipped with the package (``psychometrics/data/human_iat_reference.csv``). Human D-scores
    are latency based; compare LLM figures with them by standardised effect size or rank order, never raw.

    References
    ----------
    .. [1] Charlesworth, T. E. S., & Banaji, M. R. (2019). Patterns of implicit and explicit attitudes: I.
       Long-term change and stability from 2007 to 2016. Psychological Science 30(2), 174-192.

    Examples
    --------
    >>> ref = human_iat_reference()
    >>> ref.loc[ref["iat"].isin(["race", "age"]), ["iat", "n", "implicit_cohen_d"]]
        iat        n  implicit_cohen_d
    1  race  1851445              0.71
    3   age   588230              1.12
    """
    with resources.files(__package__).joinpath("data/human_iat_reference.csv").open("r", encoding="utf-8") as f:
        table = pd.read_csv(f)
    table.attrs["source"] = HUMAN_IAT_SOURCE
    return table


def compare_to_human(
    data: pd.DataFrame,
    *,
    dimension: str,
    effect: str,
    human: str = "implicit_cohen_d",
    mapping: dict[str, str] | None = None,
    ci: float = 0.95,
    n_resamples: int = 2000,
    seed: int | None = None,
    bootstrap: bool = True,
) -> pd.DataFrame:
    """Rank-order agreement between per-dimension LLM effect sizes and the human IAT effect sizes.

    Parameters
    ----------
    data : pandas.DataFrame
        One row per dimension with the LLM's effect (e.g. one model's standardised SC effect or WEAT d).
    dimension : str
        Column of dimension names.
    effect : str
        Numeric column of the LLM effect sizes.
    human : str
        Human figure to compare with: one of ``implicit_cohen_d`` (default), ``implicit_D_mean``,
        ``explicit_mean``, ``explicit_cohen_d``, ``r_implicit_explicit``.
    mapping : dict, optional
        Dimension name -> reference ``iat`` name; default :data:`DIMENSION_TO_IAT`. Unmapped dimensions are left
        out and listed in ``attrs["unmatched"]``.
    ci, n_resamples, seed, bootstrap
        As in :func:`bias_validity.psychometrics.validity.rank_agreement` (``bootstrap=False``: the Fisher-z rows
        only, no resampling).

    Returns
    -------
    pandas.DataFrame
        The :func:`bias_validity.psychometrics.validity.rank_agreement` rows (``x``, ``y``, ``method``, ``n``, ``r``,
        ``p_value``, ``interval``, ``kind`` (the row's ``IntervalKind``), ``ci_low``, ``ci_high``; ``x`` =
        ``effect``, ``y`` = ``human``).
        ``attrs`` adds ``matched`` (dimension -> iat), ``unmatched`` and ``source``.

    Notes
    -----
    Spearman and Kendall rank correlations (scipy) with Fisher-z and bootstrap intervals. The shipped reference
    covers only three of the toolkit's dimensions (age, disability, race), so the default comparison has n = 3:
    the correlation is reported with its exact p-value (at best 1/3 two-sided) and NaN intervals; pass a
    ``mapping`` onto more IATs when the stimuli allow.

    References
    ----------
    .. [1] Charlesworth, T. E. S., & Banaji, M. R. (2019). Psychological Science 30(2), 174-192.

    Examples
    --------
    >>> llm = pd.DataFrame({"dimension": ["age", "disability", "race", "science"], "d": [0.9, 1.3, 0.4, 0.8]})
    >>> out = compare_to_human(llm, dimension="dimension", effect="d", seed=0)
    >>> out[["method", "n", "r"]].drop_duplicates(), out.attrs["unmatched"]
    (     method  n    r
    0  spearman  3  1.0
    2   kendall  3  1.0, ['science'])
    """
    if human not in _HUMAN_COLUMNS:
        raise ValueError(f"compare_to_human: human {human!r} not known; valid choices are {', '.join(_HUMAN_COLUMNS)}")
    check_columns(data, [dimension, effect], "compare_to_human")
    mapping = DIMENSION_TO_IAT if mapping is None else mapping
    reference = human_iat_reference().set_index("iat")[human]
    unknown = sorted(set(mapping.values()) - set(reference.index))
    if unknown:
        raise ValueError(
            f"compare_to_human: mapping names IATs {unknown} not in the reference: {list(reference.index)}"
        )
    if data[dimension].duplicated().any():
        raise ValueError(f"compare_to_human: one row per {dimension!r} expected; aggregate first")
    matched = {d: mapping[d] for d in data[dimension] if d in mapping}
    unmatched = [d for d in data[dimension] if d not in mapping]
    if len(matched) < 3:
        raise ValueError(
            f"compare_to_human: needs at least 3 dimensions with a human IAT, matched {sorted(matched)}; "
            f"known: {sorted(mapping)}"
        )
    merged = data[data[dimension].isin(list(matched))][[dimension, effect]].copy()
    merged[human] = merged[dimension].map(matched).map(reference).to_numpy()
    out = rank_agreement(
        merged, estimate=effect, reference=human, ci=ci, n_resamples=n_resamples, seed=seed, bootstrap=bootstrap
    )
    out.attrs.update(matched=matched, unmatched=unmatched, source=HUMAN_IAT_SOURCE)
    return out
