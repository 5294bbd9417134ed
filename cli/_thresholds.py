"""The verdict-threshold flags of ``report``, their defaults read from :class:`Thresholds`, the one declaration."""

from __future__ import annotations

import argparse
from dataclasses import fields

from bias_validity.psychometrics.estimands import Thresholds

__all__ = ["add_threshold_arguments", "thresholds_from"]

_HELP = {
    "icc": "ICC below which reliability is poor (Koo & Li 2016)",
    "convergent_r": "correlation an interval must not lie wholly below for convergence (Cohen 1988)",
    "gap_rope": "half-width of the region of practical equivalence around a zero gap (Kruschke 2018)",
    "retained_share": "retained share R below which the score more than halves under the instruction",
    "chance_margin": "an implicit SC whose interval overlaps 0.5 +/- this margin leaves R not estimable",
    "shift_limit": "an SC shift from candidate order or between wordings wholly beyond +/- this is unreliable",
}


def add_threshold_arguments(p: argparse.ArgumentParser) -> None:
    """One ``--<name>`` flag per field of :class:`Thresholds` (e.g. ``--gap-rope 0.1``)."""
    group = p.add_argument_group("verdict thresholds")
    for f in fields(Thresholds):
        flag = "--" + f.name.replace("_", "-")
        group.add_argument(
            flag,
            type=float,
            default=f.default,
            dest=f"threshold_{f.name}",
            help=f"{_HELP[f.name]} (default {f.default:g})",
        )


def thresholds_from(args: argparse.Namespace) -> Thresholds:
    """The :class:`Thresholds` the parsed flags describe (a one-line error for a value outside [0, 1])."""
    return Thresholds(**{f.name: getattr(args, f"threshold_{f.name}") for f in fields(Thresholds)})
