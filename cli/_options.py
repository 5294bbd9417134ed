"""Command-line options shared by several subcommands, their defaults read from the one place that declares them.

The sampler flags build a :class:`FitConfig` (:func:`fit_config`); the interval, resampling, seed and threshold
flags build an :class:`bias_validity.analyses.config.AnalysisConfig` (:func:`analysis_config`), in one place for
every command. Building the parser imports neither pandas nor PyMC, so ``--help`` stays instant.
"""

from __future__ import annotations

import argparse
import functools
from dataclasses import fields
from typing import TYPE_CHECKING

from bias_validity.psychometrics.bayes.config import SAMPLERS, TARGET_ACCEPT_STEPS, WARM_UP, FitConfig
from bias_validity.psychometrics.estimands import Thresholds

if TYPE_CHECKING:
    from bias_validity.analyses.config import AnalysisConfig

__all__ = [
    "SOURCE_HELP",
    "add_fit_arguments",
    "fit_config",
    "add_analysis_arguments",
    "add_threshold_arguments",
    "analysis_config",
    "analysis_defaults",
    "add_run_argument",
]

#: Help of the positional input of the commands that analyse a study.
SOURCE_HELP = "the SQLite store, or a responses table (.csv, .jsonl or .parquet) analysed directly"

_THRESHOLD_HELP = {
    "icc": "ICC below which reliability is poor (Koo & Li 2016)",
    "convergent_r": "correlation an interval must not lie wholly below for convergence (Cohen 1988)",
    "gap_rope": "half-width of the region of practical equivalence around a zero gap (Kruschke 2018)",
    "retained_share": "retained share R below which the score more than halves under the instruction",
    "chance_margin": "an implicit SC whose interval overlaps 0.5 +/- this margin leaves R not estimable",
    "shift_limit": "an SC shift from candidate order or between wordings wholly beyond +/- this is unreliable",
    "ppc_outside": "a method's posterior decides only where at most this share of its groups fail the predictive check",
}


def add_fit_arguments(p: argparse.ArgumentParser, *, seed_help: str = "sampler seed") -> None:
    """The sampler options of ``fit``, ``compare`` and ``report`` (defaults: :class:`FitConfig`)."""
    d = FitConfig()
    p.add_argument("--sampler", default=d.sampler, choices=SAMPLERS, help=f"NUTS backend (default {d.sampler})")
    p.add_argument("--draws", type=int, default=d.draws, help=f"draws per chain (default {d.draws})")
    p.add_argument(
        "--tune",
        type=int,
        default=None,
        help=f"warm-up per chain (default: the sampler's own, {', '.join(f'{s} {n}' for s, n in WARM_UP.items())})",
    )
    p.add_argument(
        "--max-draws",
        type=int,
        default=d.max_draws,
        help=f"retry a fit that misses the gate on R-hat or ESS with twice the draws, up to this many "
        f"(default {d.max_draws}; 0 fits once, with no retry after divergences either)",
    )
    p.add_argument("--chains", type=int, default=d.chains, help=f"chains (default {d.chains})")
    p.add_argument(
        "--target-accept",
        type=float,
        default=d.target_accept,
        help=f"NUTS's target acceptance rate; a fit that diverges is retried at the next of "
        f"{', '.join(map(str, TARGET_ACCEPT_STEPS))} (default {d.target_accept})",
    )
    p.add_argument("--seed", type=int, default=d.seed, help=f"{seed_help} (default {d.seed})")
    p.add_argument(
        "--shared-only",
        action="store_true",
        help="share the item, wording and order effects and the Likert cutpoints across models (faster; by default "
        "each model that answered a method another model answered gets its own deviations, partially pooled)",
    )


def fit_config(args: argparse.Namespace) -> FitConfig:
    """The :class:`FitConfig` the parsed sampler options describe (its HDI mass, the analysis's ``ci``, and its
    chance margin come from the analysis, :func:`analysis_config`, when the fit is made by
    :func:`bias_validity.analyses.fit.fit_study`)."""
    return FitConfig(
        sampler=args.sampler,
        draws=args.draws,
        tune=args.tune,
        chains=args.chains,
        seed=args.seed,
        max_draws=args.max_draws or None,
        target_accept=args.target_accept,
        unit_effects=not args.shared_only,
    )


# --- The analysis: interval level (classical intervals and HDIs), resamples, seed and verdict thresholds. ---


@functools.cache
def analysis_defaults() -> dict[str, object]:
    """The defaults of :class:`bias_validity.analyses.config.AnalysisConfig`'s scalar fields, by name.

    Read from the class, whose module imports neither pandas nor PyMC, so ``--help`` stays light; so is
    :class:`Thresholds`. ``ci`` is also the mass of the posterior HDIs.
    """
    from bias_validity.analyses.config import AnalysisConfig  # light: imports neither pandas nor PyMC

    return {name: getattr(AnalysisConfig, name) for name in ("ci", "n_resamples", "seed")}


#: What ``--ci`` sets, by the intervals a command shows (:func:`add_analysis_arguments`).
_CI_HELP = {
    "classical": "level of the classical intervals: Wilson, Newcombe, Fisher z, bootstraps",
    "posterior": "mass of the posterior highest-density intervals; report the saved fit at the same --ci",
    "both": "level of every interval: the classical ones (Wilson, Newcombe, Fisher z, bootstraps) and the "
    "posterior highest-density intervals",
}


def add_analysis_arguments(
    p: argparse.ArgumentParser, *, ci: str | None = "both", n_resamples: bool = True, seed: bool = True
) -> None:
    """The analysis options a command takes: ``--ci``, ``--n-resamples`` and ``--seed`` (defaults:
    :class:`bias_validity.analyses.config.AnalysisConfig`). ``ci`` names the intervals the command shows, which
    ``--ci`` sets (``"classical"``, ``"posterior"`` or ``"both"``; None: no ``--ci``). A command with the sampler
    options (:func:`add_fit_arguments`) has its ``--seed`` already, which seeds the bootstraps too."""
    d = analysis_defaults()
    group = p.add_argument_group("analysis")
    if ci is not None:
        if ci not in _CI_HELP:
            raise ValueError(f"ci must be one of {', '.join(_CI_HELP)} or None, got {ci!r}")
        group.add_argument("--ci", type=float, default=d["ci"], help=f"{_CI_HELP[ci]} (default {d['ci']:g})")
    if n_resamples:
        group.add_argument(
            "--n-resamples",
            type=int,
            default=d["n_resamples"],
            help=f"resamples of every bootstrap, at least 100 (default {d['n_resamples']})",
        )
    if seed:
        group.add_argument("--seed", type=int, default=d["seed"], help=f"seed of the bootstraps (default {d['seed']})")


def add_threshold_arguments(p: argparse.ArgumentParser, names: tuple[str, ...] | None = None) -> None:
    """One ``--<name>`` flag per field of :class:`Thresholds` (e.g. ``--gap-rope 0.1``), or per field in ``names``."""
    group = p.add_argument_group("verdict thresholds")
    for f in fields(Thresholds):
        if names is not None and f.name not in names:
            continue
        group.add_argument(
            "--" + f.name.replace("_", "-"),
            type=float,
            default=f.default,
            dest=f"threshold_{f.name}",
            help=f"{_THRESHOLD_HELP[f.name]} (default {f.default:g})",
        )


def thresholds_from(args: argparse.Namespace) -> Thresholds:
    """The :class:`Thresholds` the parsed flags describe, defaults for those a command lacks (a one-line error for a
    value outside [0, 1])."""
    values = {f.name: getattr(args, f"threshold_{f.name}", f.default) for f in fields(Thresholds)}
    return Thresholds(**values)


def analysis_config(args: argparse.Namespace) -> AnalysisConfig:
    """The :class:`bias_validity.analyses.config.AnalysisConfig` the parsed flags describe: every command builds its
    analysis settings here, with the class's defaults for the flags it lacks."""
    from bias_validity.analyses.config import AnalysisConfig

    d = analysis_defaults()
    return AnalysisConfig(
        ci=getattr(args, "ci", d["ci"]),
        n_resamples=getattr(args, "n_resamples", d["n_resamples"]),
        seed=getattr(args, "seed", d["seed"]),
        thresholds=thresholds_from(args),
    )


def add_run_argument(p: argparse.ArgumentParser) -> None:
    """The ``--run`` option of the commands that analyse a store (``summary``, ``fit``, ``report``, ``compare``)."""
    p.add_argument(
        "--run",
        type=int,
        metavar="N",
        help="analyse run N of the store (default: its latest run; runs are never pooled)",
    )
