"""Command-line options shared by several subcommands, their defaults read from the one place that declares them."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from bias_validity.psychometrics.bayes.config import SAMPLERS, FitConfig

if TYPE_CHECKING:
    from bias_validity.probes.store import Study

__all__ = ["add_fit_arguments", "fit_config", "add_run_argument", "read_run"]


def add_fit_arguments(p: argparse.ArgumentParser, *, seed_help: str = "sampler seed") -> None:
    """The sampler options of ``fit``, ``compare`` and ``report`` (defaults: :class:`FitConfig`)."""
    d = FitConfig()
    p.add_argument("--sampler", default=d.sampler, choices=SAMPLERS, help=f"NUTS backend (default {d.sampler})")
    p.add_argument("--draws", type=int, default=d.draws, help=f"draws per chain (default {d.draws})")
    p.add_argument("--tune", type=int, default=d.tune, help=f"warm-up per chain (default {d.tune})")
    p.add_argument("--max-draws", type=int, default=d.max_draws,
                   help=f"retry a fit that misses the gate on R-hat or ESS with twice the draws, up to this many "
                        f"(default {d.max_draws}; 0 fits once)")  # fmt: skip
    p.add_argument("--chains", type=int, default=d.chains, help=f"chains (default {d.chains})")
    p.add_argument("--seed", type=int, default=d.seed, help=f"{seed_help} (default {d.seed})")


def fit_config(args: argparse.Namespace) -> FitConfig:
    """The :class:`FitConfig` the parsed sampler options describe."""
    return FitConfig(sampler=args.sampler, draws=args.draws, tune=args.tune, chains=args.chains, seed=args.seed,
                     max_draws=args.max_draws or None)  # fmt: skip



def add_run_argument(p: argparse.ArgumentParser) -> None:
    """The ``--run`` option of the commands that analyse a store (``summary``, ``fit``, ``report``, ``compare``)."""
    p.add_argument("--run", type=int, metavar="N",
                   help="analyse run N of the store (default: its latest run; runs are never pooled)")  # fmt: skip


def read_run(store: str, run: int | None) -> Study:
    """Read one run of ``store`` for analysis; when the store holds several, say on stderr which one."""
    import sys

    from bias_validity.probes.store import read_study

    study = read_study(store, run=run)
    if study.run_note:
        print(f"{store}: {study.run_note}", file=sys.stderr)
    return study
