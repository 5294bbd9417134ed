"""Q6: can size and training data be told apart, and does alignment move explicit and implicit SC differently?"""

from __future__ import annotations

import pandas as pd
from scipy import stats

from bias_validity.analyses.models_meta import META_COLUMNS
from bias_validity.analyses.questions._common import (
    check_posterior,
    check_responses,
    consistent_counts,
    figure_row,
    figures_frame,
    fmt,
    interval_verdict,
    ok_rows,
    posterior_rows,
)
from bias_validity.analyses.result import QuestionResult, Verdict
from bias_validity.probes.schema import Method
from bias_validity.psychometrics.bayes.scaling import COLLINEAR, scaling_identifiability
from bias_validity.psychometrics.intervals import newcombe_diff_interval

__all__ = ["scaling"]


def _alignment_rows(responses: pd.DataFrame, meta: pd.DataFrame, ci: float) -> list[dict[str, object]]:
    """Per aligned model and method: its SC minus the SC of the base model of its family and size (Newcombe)."""
    rows = []
    for method in (Method.EXPLICIT, Method.IMPLICIT):
        counts = consistent_counts(ok_rows(responses, method), ["model"]).set_index("model")
        for tuned in meta[meta["aligned"]].itertuples():
            base = meta[~meta["aligned"] & (meta["family"] == tuned.family) & (meta["parameters"] == tuned.parameters)]
            for b in base["model"]:
                if tuned.model not in counts.index or b not in counts.index:
                    continue
                t, r = counts.loc[tuned.model], counts.loc[b]
                d = newcombe_diff_interval(t["k"], t["n"], r["k"], r["n"], ci=ci).iloc[0]
                label, n = f"aligned_minus_base ({method})", t["n"] + r["n"]
                rows.append(figure_row(f"{tuned.model} - {b}", "all", label, d["difference"], d["ci_low"],
                                       d["ci_high"], "Newcombe", n, f"family {tuned.family}"))  # fmt: skip
    return rows


def scaling(
    responses: pd.DataFrame,
    *,
    models_meta: pd.DataFrame | None = None,
    posterior: pd.DataFrame | None = None,
    ci: float = 0.95,
) -> QuestionResult:
    """Q6: scaling identifiability (size versus training tokens) and the base-versus-aligned contrast.

    Parameters
    ----------
    responses : pandas.DataFrame
        The responses table (``bias_validity.probes.schema``).
    models_meta : pandas.DataFrame, optional
        One row per model: ``model``, ``family``, ``parameters``, ``training_tokens``, ``aligned`` (bool), as read
        from a models file. Without it the question is NOT_ESTIMABLE.
    posterior : pandas.DataFrame, optional
        The Bayesian fit's derived quantities; its ``base_vs_tuned`` rows are shown beside the classical contrast.
    ci : float
        Interval level of the slopes and contrasts.

    Returns
    -------
    QuestionResult
        ``figures`` columns ``model``, ``dimension`` (``all``), ``measure`` (``slope_log_parameters``,
        ``slope_log_tokens``: OLS slopes of the implicit SC with normal intervals; ``predictor_correlation``,
        ``vif``, ``condition_number``, ``slope_correlation``: design diagnostics without intervals;
        ``aligned_minus_base (explicit|implicit)``: Newcombe contrasts; ``base_vs_tuned``: posterior HDI),
        ``estimate``, ``ci_low``, ``ci_high``, ``interval``, ``n``, ``note``. ``attrs``: ``ci``, ``collinear``.

    Notes
    -----
    :func:`bias_validity.psychometrics.bayes.scaling.scaling_identifiability` regresses each model's implicit SC on log
    parameters and log training tokens and calls the design collinear past its :data:`COLLINEAR` limits (VIF 5,
    condition number 30, |slope correlation| 0.8; Belsley, Kuh & Welsch 1980) or with fewer than four distinct
    (size, data) points. Verdict: collinear -> NOT_SUPPORTED (size and data cannot be separated); else SUPPORTED.
    Alignment: each aligned model against the base model of the same family and size, explicit and implicit SC
    separately (Newcombe 1998 interval of the difference); reported, not part of the verdict.

    Examples
    --------
    >>> from bias_validity.analyses.questions.simulate import simulate_responses
    >>> scaling(simulate_responses(seed=0)).verdict.value
    'not estimable'
    """
    check_responses(responses, "scaling")
    posterior = check_posterior(posterior, "scaling")
    if models_meta is None:
        return QuestionResult.answer("Q6", Verdict.NOT_ESTIMABLE,
                              "Scaling and alignment cannot be assessed without model metadata.",
                              "Missing: a models file (--models-file) with one row per model giving family, "
                              "parameters, training_tokens and aligned (yes/no).")  # fmt: skip
    missing = [c for c in META_COLUMNS if c not in models_meta.columns]
    if missing:
        raise ValueError(f"scaling: models_meta lacks column(s) {', '.join(missing)}; needs {', '.join(META_COLUMNS)}")
    meta = models_meta.assign(aligned=models_meta["aligned"].astype(bool))
    sc = consistent_counts(ok_rows(responses, Method.IMPLICIT), ["model"])[["model", "sc"]]
    units = meta.merge(sc, on="model", how="left")
    scored = units["sc"].notna().all() and len(units) >= 3
    found = scaling_identifiability(units, parameters="parameters", tokens="training_tokens",
                                    score="sc" if scored else None, family="family")  # fmt: skip
    n = int(found["n"])
    rows = []
    if scored:
        for name in ("parameters", "tokens"):
            b, se = found[f"slope_{name}"], found[f"se_{name}"]
            z = stats.norm.ppf(0.5 + ci / 2)
            rows.append(figure_row("all", "all", f"slope_log_{name}", b, b - z * se, b + z * se, "normal (OLS SE)", n))
    for name in ("predictor_correlation", "condition_number", "slope_correlation"):
        rows.append(figure_row("all", "all", name, found[name], interval="", n=n, note="design diagnostic"))
    for name, value in found["vif"].items() if isinstance(found["vif"], dict) else []:
        rows.append(figure_row("all", "all", f"vif ({name})", value, n=n, note="design diagnostic"))
    rows += _alignment_rows(responses, meta, ci)
    rows += [
        figure_row(
            r.model,
            "all" if pd.isna(r.dimension) else r.dimension,
            "base_vs_tuned",
            r.mean,
            r.hdi_low,
            r.hdi_high,
            "HDI",
            note=str(r.method),
        )  # fmt: skip
        for r in posterior_rows(posterior, "base_vs_tuned").itertuples()
    ]
    collinear = bool(found["collinear"])
    frame = figures_frame(rows, ci=ci, collinear=collinear)
    verdict = Verdict.NOT_SUPPORTED if collinear else Verdict.SUPPORTED
    align = frame[frame["measure"].str.startswith("aligned_minus_base")]
    moved = sum(interval_verdict(r.ci_low, r.ci_high, 0.0) is not Verdict.INCONCLUSIVE for r in align.itertuples())
    summary = (
        f"{found['verdict']} (predictor correlation {fmt(found['predictor_correlation'])}, condition number "
        f"{fmt(found['condition_number'])}, {n} models)"
        + (
            f"; alignment moved the SC (interval excluding 0) in {moved} of {len(align)} contrasts."
            if len(align)
            else "."
        )
    )
    evidence = (
        f"Models file with {len(meta)} models; design diagnostics against the limits {COLLINEAR}; implicit SC of "
        f"{int(units['sc'].notna().sum())} models; alignment as Newcombe differences of SC."
    )
    return QuestionResult.answer("Q6", verdict, summary, evidence, frame)
