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

from bias_validity.psychometrics.bayes.config import SAMPLERS, TARGET_ACCEPT_STEPS, FitConfig
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
}


def add_fit_arguments(p: argparse.ArgumentParser, *, seed_help: str = "sampler seed") -> None:
    """The sampler options of ``fit``, ``compare`` and ``report`` (defaults: :class:`FitConfig`)."""
    d = FitConfig()
    p.add_argument("--sampler", default=d.sampler, choices=SAMPLERS, help=f"NUTS backend (default {d.sampler})")
    p.add_argument("--draws", type=int, default=d.draws, help=f"draws per chain (default {d.draws})")
    p.add_argument("--tune", type=int, default=d.tune, help=f"warm-up per chain (default {d.tune})")
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


def fit_config(args: argparse.Namespace) -> FitConfig:
    """The :class:`FitConfig` the parsed sampler options describe (its HDI mass and chance margin come from the
    analysis, :func:`analysis_config`, when the fit is made by :func:`bias_validity.analyses.fit.fit_study`)."""
    return FitConfig(
        sampler=args.sampler,
        draws=args.draws,
        tune=args.tune,
        chains=args.chains,
        seed=args.seed,
        max_draws=args.max_draws or None,
        target_accept=args.target_accept,
    )


# --- The analysis: interval level, HDI mass, resamples, seed and verdict thresholds. ---


@functools.cache
def analysis_defaults() -> dict[str, object]:
    """The defaults of :class:`bias_validity.analyses.config.AnalysisConfig`'s scalar fields, by name.

    Read from the class's source with :mod:`ast` when every default there is a literal, because importing the
    module loads pandas (through ``psychometrics._checks``) and ``--help`` must not; otherwise from the class.
    ``hdi_prob`` is :attr:`FitConfig.hdi_prob` and the thresholds are :class:`Thresholds`, both light.
    """
    from bias_validity.analyses.config import AnalysisConfig  # light: imports neither pandas nor PyMC

    found = {name: getattr(AnalysisConfig, name) for name in ("ci", "n_resamples", "seed")}
    return {**found, "hdi_prob": FitConfig.hdi_prob}


def add_analysis_arguments(
    p: argparse.ArgumentParser, *, ci: bool = True, hdi_prob: bool = True, n_resamples: bool = True, seed: bool = True
) -> None:
    """The analysis options a command takes: ``--ci``, ``--hdi-prob``, ``--n-resamples`` and ``--seed``
    (defaults: :class:`bias_validity.analyses.config.AnalysisConfig`). A command with the sampler options
    (:func:`add_fit_arguments`) has its ``--seed`` already, which seeds the bootstraps too."""
    d = analysis_defaults()
    group = p.add_argument_group("analysis")
    if ci:
        group.add_argument(
            "--ci",
            type=float,
            default=d["ci"],
            help=f"level of the classical intervals: Wilson, Newcombe, Fisher z, bootstraps (default {d['ci']:g})",
        )
    if hdi_prob:
        group.add_argument(
            "--hdi-prob",
            type=float,
            default=d["hdi_prob"],
            help=f"mass of the posterior highest-density intervals (default {d['hdi_prob']:g})",
        )
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
        hdi_prob=getattr(args, "hdi_prob", d["hdi_prob"]),
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
