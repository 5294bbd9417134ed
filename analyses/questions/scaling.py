"""Q6: can size and training data be told apart, and does alignment move explicit and implicit SC differently?"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from bias_validity.analyses.config import AnalysisConfig
from bias_validity.analyses.models_meta import META_COLUMNS, base_tuned_pairs, match_models
from bias_validity.analyses.questions._common import (
    consistent_counts,
    figure_row,
    figures_frame,
    posterior_rows,
    prepare,
)
from bias_validity.analyses.registry import register_question
from bias_validity.analyses.result import (
    ALL_DIMENSIONS,
    QuestionResult,
    Verdict,
    describe_verdicts,
    figure_text,
    verdict_table,
)
from bias_validity.analyses.study import Study, sc_counts
from bias_validity.probes.schema import Method
from bias_validity.psychometrics.bayes.scaling import COLLINEAR, scaling_identifiability
from bias_validity.psychometrics.contrasts import mover_difference
from bias_validity.psychometrics.interval_kind import IntervalKind

__all__ = ["ALIGNMENT_SHIFT", "scaling"]

#: The measure of Q6's per-model verdicts: the tuned-minus-base shift of the explicit SC minus that of the implicit.
ALIGNMENT_SHIFT = "alignment shift, explicit minus implicit"
#: The two predictors, keyed as ``scaling_identifiability`` keys them, with the words the summary uses.
_PREDICTORS = (("parameters", "size"), ("tokens", "training-data"))
_METHODS = (Method.EXPLICIT.value, Method.IMPLICIT.value)


def _direction(low: float, high: float) -> str:
    return "up" if low > 0 else "down" if high < 0 else "no credible change"


def _slope_rows(found: dict[str, object], ci: float) -> list[dict[str, object]]:
    """The two slopes with t intervals, or the reason each has none."""
    rows, n = [], int(found["n"])
    adjusted = ", ".join(found.get("adjusted_for") or [])
    for key, _ in _PREDICTORS:
        measure = f"slope_log_{key}"
        if not found["identified"][key]:
            rows.append(
                figure_row(
                    ALL_DIMENSIONS, ALL_DIMENSIONS, measure, n=n, note=f"not identified: {found['why_not'][key]}"
                )
            )
        elif "slope_parameters" not in found:
            rows.append(
                figure_row(
                    ALL_DIMENSIONS,
                    ALL_DIMENSIONS,
                    measure,
                    n=n,
                    note="no implicit SC for at least two models of the file",
                )
            )
        elif found.get("fit_note"):
            rows.append(figure_row(ALL_DIMENSIONS, ALL_DIMENSIONS, measure, n=n, note=str(found["fit_note"])))
        else:
            b, se = found[f"slope_{key}"], found[f"se_{key}"]
            half = stats.t.ppf(0.5 + ci / 2, found["df_resid"]) * se
            note = "; ".join(
                filter(
                    None,
                    [
                        f"adjusted for {adjusted}" if adjusted else "",
                        "collinear with the other slope"
                        if found["collinear"] and all(found["identified"].values())
                        else "",
                    ],
                )
            )
            rows.append(
                figure_row(
                    ALL_DIMENSIONS,
                    ALL_DIMENSIONS,
                    measure,
                    b,
                    b - half,
                    b + half,
                    f"{IntervalKind.OLS_T} ({found['df_resid']} df)",
                    n,
                    note,
                )
            )
    return rows


def _diagnostic_rows(found: dict[str, object]) -> list[dict[str, object]]:
    n, rows = int(found["n"]), []
    values = {name: found[name] for name in ("predictor_correlation", "condition_number", "slope_correlation")}
    values.update({f"vif ({name})": v for name, v in found["vif"].items()})
    for name, value in values.items():
        finite = np.isfinite(value)
        rows.append(
            figure_row(
                ALL_DIMENSIONS,
                ALL_DIMENSIONS,
                name,
                value if finite else np.nan,
                n=n,
                note="design diagnostic" if finite else "not computed: a predictor does not vary",
            )
        )
    return rows


def _alignment(study: Study, meta: pd.DataFrame, ci: float) -> tuple[list[dict], list[dict]]:
    """Per base/tuned pair and dimension: each method's tuned-minus-base SC (Newcombe) and their difference."""
    counts = {m: sc_counts(study.answers(m), ["model", "dimension"], ci=ci) for m in _METHODS}
    pooled = {m: sc_counts(study.answers(m), ["model"], ci=ci).assign(dimension=ALL_DIMENSIONS) for m in _METHODS}
    pairs = base_tuned_pairs(meta)
    tuned_bases = pd.Series([t for _, t in pairs]).value_counts()
    family = meta.set_index("model")["family"]
    figures, verdicts = [], []
    for base, tuned in pairs:
        label = tuned if tuned_bases[tuned] == 1 else f"{tuned} vs {base}"
        asked = [c.loc[c["model"].isin([base, tuned]), "dimension"].astype(str) for c in counts.values()]
        dims = sorted(set().union(*asked))
        for dim in [*dims, ALL_DIMENSIONS]:
            shifts = {}
            for method in _METHODS:
                table = pooled[method] if dim == ALL_DIMENSIONS else counts[method]
                cell = table[table["dimension"].astype(str) == dim].set_index("model")
                if tuned not in cell.index or base not in cell.index:
                    continue
                t, b = cell.loc[tuned], cell.loc[base]
                # Newcombe's interval as the MOVER difference of the two SCs' intervals (sc_counts)
                shifts[method] = mover_difference(
                    t["sc"], (t["ci_low"], t["ci_high"]), b["sc"], (b["ci_low"], b["ci_high"])
                )
                figures.append(
                    figure_row(
                        f"{tuned} - {base}",
                        dim,
                        f"aligned_minus_base ({method})",
                        *shifts[method],
                        IntervalKind.NEWCOMBE,
                        t["n"] + b["n"],
                        f"family {family[tuned]}",
                    )
                )
            if dim == ALL_DIMENSIONS:
                continue
            verdicts.append(_alignment_verdict(label, base, dim, shifts))
            if len(shifts) == 2:
                (e, el, eh), (i, il, ih) = shifts[Method.EXPLICIT.value], shifts[Method.IMPLICIT.value]
                figures.append(
                    figure_row(
                        f"{tuned} - {base}",
                        dim,
                        "explicit_minus_implicit_shift",
                        *mover_difference(e, (el, eh), i, (il, ih)),
                        IntervalKind.MOVER,
                    )
                )
    return figures, verdicts


def _alignment_verdict(label: str, base: str, dim: str, shifts: dict[str, tuple[float, float, float]]) -> dict:
    """One tuned model x dimension: does alignment move the explicit SC differently from the implicit?"""
    if len(shifts) < 2:
        lacking = " and ".join(m for m in _METHODS if m not in shifts)
        return dict(
            model=label,
            dimension=dim,
            verdict=Verdict.NOT_ESTIMABLE,
            reason=f"no ok {lacking} answers from both the tuned model and its base ({base}) here",
        )
    (e, el, eh), (i, il, ih) = shifts[Method.EXPLICIT.value], shifts[Method.IMPLICIT.value]
    d, low, high = mover_difference(e, (el, eh), i, (il, ih))
    moved = low > 0 or high < 0
    return dict(
        model=label,
        dimension=dim,
        verdict=Verdict.SUPPORTED if moved else Verdict.INCONCLUSIVE,
        finding=f"explicit {_direction(el, eh)}, implicit {_direction(il, ih)}",
        measure=ALIGNMENT_SHIFT,
        estimate=d,
        ci_low=low,
        ci_high=high,
        reason=f"tuned minus base ({base}): explicit {figure_text(e, el, eh, missing='-')}, implicit "
        f"{figure_text(i, il, ih, missing='-')}; their difference {figure_text(d, low, high, missing='-')} "
        f"{'excludes' if moved else 'includes'} 0 (Newcombe intervals, MOVER difference)",
    )


def _slope_text(rows: list[dict[str, object]]) -> str:
    """'size slope 0.04 [0.01, 0.08]; training-data slope not identified: ...' from the two slope rows."""
    return "; ".join(
        f"{what} slope {figure_text(r['estimate'], r['ci_low'], r['ci_high'], missing=str(r['note']))}"
        for (_, what), r in zip(_PREDICTORS, rows, strict=True)
    )


@register_question("Q6", "Scaling and alignment")
def scaling(
    study: Study | pd.DataFrame,
    posterior: pd.DataFrame | None = None,
    config: AnalysisConfig | None = None,
) -> QuestionResult:
    """Q6: scaling identifiability (size versus training tokens) and the base-versus-aligned contrast.

    Parameters
    ----------
    study : Study or pandas.DataFrame
        The study (:class:`bias_validity.analyses.study.Study`) or its responses table. Its ``models_meta``: one
        row per model, ``model``, ``family``, ``parameters``, ``training_tokens``, ``aligned`` (bool), as read from
        a models file (:func:`bias_validity.analyses.models_meta.read_models_meta`); its names are matched to the
        responses' by :func:`~bias_validity.analyses.models_meta.match_models`. Without it the question is
        NOT_ESTIMABLE.
    posterior : pandas.DataFrame, optional
        The Bayesian fit's derived quantities; its ``base_vs_tuned`` rows are shown beside the classical contrast.
    config : AnalysisConfig, optional
        Its ``ci`` is the interval level of the slopes and contrasts.

    Returns
    -------
    QuestionResult
        ``verdicts``: one row per aligned model x dimension whose base (same family and size) is in the responses:
        SUPPORTED when alignment moves the explicit SC credibly differently from the implicit (the interval of
        their difference, :data:`ALIGNMENT_SHIFT`, excludes 0), INCONCLUSIVE when it includes 0; the finding
        names each method's direction. ``figures`` columns ``model``, ``dimension``, ``measure``
        (``slope_log_parameters``, ``slope_log_tokens``: slopes of the implicit SC with t intervals, or NaN with
        the reason the slope is not identified; ``predictor_correlation``, ``vif (...)``, ``condition_number``,
        ``slope_correlation``: design diagnostics without intervals; ``aligned_minus_base (explicit|implicit)``:
        Newcombe contrasts per dimension and pooled (``all``); ``explicit_minus_implicit_shift``: their MOVER
        difference; ``base_vs_tuned``: posterior HDI), ``estimate``, ``ci_low``, ``ci_high``, ``interval``, ``n``,
        ``note``. ``attrs``: ``ci``, ``collinear``, ``identified``.

    Notes
    -----
    :func:`bias_validity.psychometrics.bayes.scaling.scaling_identifiability` regresses each model's implicit SC on
    log parameters and log training tokens, adjusted for alignment where it varies, and calls the design
    collinear past its :data:`COLLINEAR` limits (VIF 5, Kutner et al. 2005; |slope correlation| 0.8) or with fewer
    than four distinct (size, data) points; the condition number (Belsley, Kuh & Welsch 1980) is shown, not
    checked: for two centred predictors it is sqrt((1 + |r|) / (1 - |r|)), and its limit of 30 would fire only
    past |r| = 0.9978, long after the VIF. A predictor that takes one value, or
    varies only between families, has no slope of its own: it is named as not identified, with the reason, and
    the other slope is estimated alone (within families where the one left out differs between them). Verdict:
    collinear -> NOT_SUPPORTED (size and data cannot be separated); else SUPPORTED; fewer than two models of the
    file in the responses -> NOT_ESTIMABLE. Alignment: each aligned model against the base model of the same
    family and size, explicit and implicit SC separately (Newcombe 1998), per dimension; per model x dimension
    verdicts, not part of the study-level verdict.

    Examples
    --------
    >>> from bias_validity.simulate import simulate_responses
    >>> scaling(simulate_responses(seed=0)).verdict.value
    'not estimable'
    """
    study, posterior, config = prepare(study, posterior, config, "scaling")
    models_meta, ci = study.models_meta, config.ci
    if models_meta is None:
        return QuestionResult.answer(
            "Q6",
            Verdict.NOT_ESTIMABLE,
            "Scaling and alignment cannot be assessed without model metadata.",
            "Missing: a models file (--models-file) with one row per model giving family, "
            "parameters, training_tokens and aligned (yes/no).",
        )
    missing = [c for c in META_COLUMNS if c not in models_meta.columns]
    if missing:
        raise ValueError(f"scaling: models_meta lacks column(s) {', '.join(missing)}; needs {', '.join(META_COLUMNS)}")
    meta = match_models(models_meta, study.models)
    unmatched = meta.attrs.get("unmatched", [])
    meta = meta[~meta["model"].isin(unmatched)].assign(aligned=lambda m: m["aligned"].astype(bool))
    sc = consistent_counts(study.answers(Method.IMPLICIT), ["model"])[["model", "sc"]]
    units = meta.merge(sc, on="model", how="left")
    scored = units.dropna(subset=["sc"])
    fit_on = scored if len(scored) >= 2 else units
    found = scaling_identifiability(
        fit_on.assign(aligned=fit_on["aligned"].astype(float)),
        parameters="parameters",
        tokens="training_tokens",
        score="sc" if len(scored) >= 2 else None,
        family="family",
        covariates=["aligned"],
    )
    slopes = _slope_rows(found, ci)
    rows = [*slopes, *_diagnostic_rows(found)]
    align_rows, align_verdicts = _alignment(study, meta, ci)
    rows += align_rows
    rows += [
        figure_row(
            r.model,
            ALL_DIMENSIONS if pd.isna(r.dimension) else r.dimension,
            "base_vs_tuned",
            r.mean,
            r.hdi_low,
            r.hdi_high,
            IntervalKind.HDI,
            note=str(r.method),
        )
        for r in posterior_rows(posterior, "base_vs_tuned").itertuples()
    ]
    collinear = bool(found["collinear"])
    frame = figures_frame(rows, ci=ci, collinear=collinear, identified=found["identified"])
    table = verdict_table(align_verdicts)
    if len(units) < 2:
        verdict = Verdict.NOT_ESTIMABLE
        design = f"{len(units)} model of the models file is in the responses: scaling needs several"
    else:
        verdict = Verdict.NOT_SUPPORTED if collinear else Verdict.SUPPORTED
        design = f"{found['verdict']} ({found['reason']}); {_slope_text(slopes)}"
    alignment = (
        f"Alignment (tuned minus base, explicit against implicit): {describe_verdicts(table)}."
        if len(table)
        else "No aligned model has its base (same family and size) in the responses."
    )
    summary = f"{design[:1].upper()}{design[1:]}. {alignment}"
    skipped = f"; {len(unmatched)} row(s) match no model of the responses ({', '.join(unmatched)})" if unmatched else ""
    evidence = (
        f"Models file with {len(models_meta)} rows, {len(meta)} matching the responses{skipped}; design diagnostics "
        f"against the limits {COLLINEAR}; implicit SC of {len(scored)} models; alignment as Newcombe differences "
        "of SC per dimension and their MOVER difference."
    )
    return QuestionResult.answer("Q6", verdict, summary, evidence, frame, table)
