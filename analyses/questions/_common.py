"""Shared plumbing of the reviewer questions: their inputs, cell SCs, interval verdicts, the figures' shape."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from bias_validity.analyses.config import AnalysisConfig
from bias_validity.analyses.result import Verdict
from bias_validity.analyses.study import Study, as_study, sc_counts
from bias_validity.psychometrics.interval_kind import IntervalKind

__all__: list[str] = []

#: Columns of every question's ``figures`` table (the estimate's labels first, then the interval).
FIGURE_COLUMNS = ["model", "dimension", "measure", "estimate", "ci_low", "ci_high", "interval", "n", "note"]
POSTERIOR_COLUMNS = ("quantity", "model", "dimension", "method", "mean", "hdi_low", "hdi_high", "p_direction")


def check_posterior(posterior: object, where: str) -> pd.DataFrame | None:
    """Accept None or the derived-quantities table of the Bayesian fit."""
    if posterior is None:
        return None
    if not isinstance(posterior, pd.DataFrame):
        raise ValueError(f"{where}: posterior must be the fit's derived-quantities DataFrame or None")
    missing = [c for c in POSTERIOR_COLUMNS if c not in posterior.columns]
    if missing:
        raise ValueError(f"{where}: the posterior table lacks column(s) {', '.join(missing)}")
    return posterior


def prepare(
    study: Study | pd.DataFrame, posterior: pd.DataFrame | None, config: AnalysisConfig | None, where: str
) -> tuple[Study, pd.DataFrame | None, AnalysisConfig]:
    """A question's three inputs checked: the study (a table is wrapped), the posterior table or None, the config."""
    return as_study(study), check_posterior(posterior, where), AnalysisConfig() if config is None else config


def consistent_counts(rows: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Per group: ``k`` consistent answers, ``n`` answers and ``sc``, the SC of :func:`sc_counts`.

    ``sc`` is ``k / n`` for answers other than Likert ratings and, for Likert ratings, the equal-weight mean of
    P(agree | statement) and P(disagree | reversal) (one polarity only: that rate); ``k`` and ``n`` stay the
    pooled counts. The full table, with the polarity counts, ``balanced`` and ``note``, is :func:`sc_counts`.
    """
    return sc_counts(rows, by)[[*by, "k", "n", "sc"]]


def figure_row(
    model: str,
    dimension: str,
    measure: str,
    estimate: float = np.nan,
    ci_low: float = np.nan,
    ci_high: float = np.nan,
    interval: IntervalKind | str = "",
    n: int = 0,
    note: str = "",
) -> dict[str, object]:
    """One row of a question's ``figures`` table (see ``FIGURE_COLUMNS``)."""
    return dict(
        model=model,
        dimension=dimension,
        measure=measure,
        estimate=float(estimate),
        ci_low=float(ci_low),
        ci_high=float(ci_high),
        interval=str(interval),
        n=int(n),
        note=note,
    )


#: Below this a figure is floating-point noise around zero.
_ROUNDING = 1e-12


def figures_frame(rows: Iterable[dict[str, object]], **attrs: object) -> pd.DataFrame:
    """The rows as a ``figures`` table with the fixed columns and the interval settings in ``attrs``.

    Estimates and bounds within 1e-12 of zero are zero: that is the rounding of a difference of two equal shares
    (e.g. -1.1e-16), and a report must print it as 0.00.
    """
    frame = pd.DataFrame(list(rows), columns=FIGURE_COLUMNS)
    frame["n"] = frame["n"].astype(int)
    for column in ("estimate", "ci_low", "ci_high"):
        values = frame[column].astype(float)
        frame[column] = values.mask(values.abs() < _ROUNDING, 0.0)
    frame.attrs.update(attrs)
    return frame


def interval_verdict(low: float, high: float, threshold: float, *, above_is_supported: bool = True) -> Verdict:
    """SUPPORTED / NOT_SUPPORTED when the interval lies wholly on one side of ``threshold``, else INCONCLUSIVE."""
    if np.isnan(low) or np.isnan(high):
        return Verdict.NOT_ESTIMABLE
    if low > threshold:
        return Verdict.SUPPORTED if above_is_supported else Verdict.NOT_SUPPORTED
    if high < threshold:
        return Verdict.NOT_SUPPORTED if above_is_supported else Verdict.SUPPORTED
    return Verdict.INCONCLUSIVE


def combine_verdicts(verdicts: Iterable[Verdict]) -> Verdict:
    """Estimable verdicts that agree -> that verdict; disagreement -> INCONCLUSIVE; none -> NOT_ESTIMABLE."""
    found = {v for v in verdicts if v is not Verdict.NOT_ESTIMABLE}
    if not found:
        return Verdict.NOT_ESTIMABLE
    return found.pop() if len(found) == 1 else Verdict.INCONCLUSIVE


def all_must_hold(verdicts: Iterable[Verdict]) -> Verdict:
    """A conjunction: any NOT_SUPPORTED -> NOT_SUPPORTED; all SUPPORTED -> SUPPORTED; else as combine_verdicts."""
    found = list(verdicts)
    if Verdict.NOT_SUPPORTED in found:
        return Verdict.NOT_SUPPORTED
    return combine_verdicts(found)


def posterior_rows(posterior: pd.DataFrame | None, quantity: str) -> pd.DataFrame:
    """The posterior's rows for one derived quantity (empty when there is no posterior)."""
    if posterior is None:
        return pd.DataFrame(columns=list(POSTERIOR_COLUMNS))
    return posterior[posterior["quantity"] == quantity]
