"""``bias-validity plan``: the design each question needs to decide, from a pilot or from stated assumptions."""

from __future__ import annotations

import argparse
import re
from dataclasses import fields

from bias_validity.cli._options import (
    SOURCE_HELP,
    add_analysis_arguments,
    add_run_argument,
    add_threshold_arguments,
    analysis_config,
)
from bias_validity.psychometrics.planning import CHECK_REPLICATIONS, Assumptions, PlanTargets

__all__ = ["register", "run"]

_TARGET_HELP = {
    "half_width": "half-width of the SC and gap intervals to plan for",
    "power": "chance the planned design decides a question when the truth is as estimated",
    "icc_width": "full width of the item-score ICC intervals (shown, not deciding)",
    "max_reps": "most repetitions per session searched",
    "max_items": "items per dimension before new stimuli are needed (default: the dimension's packaged items)",
}
_ASSUMPTION_HELP = {
    "item_sd": "SD of the items' logit effects",
    "template_sd": "SD of the wordings' logit effects (their shifts move the SC between wordings: Q1)",
    "item_template_sd": "SD of the item x wording logit effects",
    "item_session_sd": "SD of the item x session logit effects",
    "item_corr": "correlation of an item's effects between methods",
    "score_corr": "correlation of the implicit item effects with logprob and embedding scores (Q2)",
    "wordings": "wordings per sampled method",
    "sessions": "sessions (test-retest needs 2)",
    "dimensions": "dimensions asked",
    "models": "models asked",
}


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "plan",
        help="the design (items, repetitions, sessions) each question needs to decide, and what it costs",
        description="Plan a study that decides: from a pilot store or responses table, or from stated assumptions "
        "(--sc ...), the items per dimension, repetitions and sessions each question needs for an SC or gap "
        "interval of the target half-width or to decide with the target power, the answers that adds, and with "
        "--check the achieved half-width and share of decided replications over studies drawn at that design.",
        epilog="Example: bias-validity plan study.sqlite --check --json   or   bias-validity plan --sc implicit=0.7 "
        "--sc explicit=0.4 --item-sd 1.0 --template-sd 0.5",
    )
    p.add_argument("store", nargs="?", help=f"the pilot: {SOURCE_HELP} (or give --sc instead)")
    p.add_argument("--json", action="store_true", help="print the plan as JSON records")
    p.add_argument("--check", action="store_true", help="check each row by simulation through the estimators")
    p.add_argument(
        "--check-replications",
        type=int,
        default=CHECK_REPLICATIONS,
        help=f"studies drawn per row by --check (default {CHECK_REPLICATIONS})",
    )
    targets = p.add_argument_group("targets")
    for f in fields(PlanTargets):
        default = "" if f.default is None else f" (default {f.default:g})"
        kind = int if f.name.startswith("max_") else float
        targets.add_argument(_flag(f.name), type=kind, default=f.default, help=f"{_TARGET_HELP[f.name]}{default}")
    stated = p.add_argument_group("stated assumptions (instead of a pilot)")
    stated.add_argument(
        "--sc",
        action="append",
        metavar="METHOD=SC",
        help="SC of an average item per method, e.g. implicit=0.7 (repeat for ablated, explicit, reflection)",
    )
    for f in fields(Assumptions):
        if f.name == "sc":
            continue
        kind = int if f.name in ("wordings", "sessions", "dimensions", "models") else float
        default = "none" if f.default is None else f"{f.default:g}"
        stated.add_argument(
            _flag(f.name), type=kind, default=f.default, help=f"{_ASSUMPTION_HELP[f.name]} (default {default})"
        )
    cost = p.add_argument_group("cost")
    cost.add_argument("--seconds-per-answer", type=float, help="seconds one answer takes: adds hours")
    cost.add_argument("--price-per-1k-tokens", type=float, help="price of 1,000 tokens: adds cost")
    cost.add_argument(
        "--tokens-per-answer",
        type=float,
        help="tokens of one prompt and answer (default: the pilot's text at 4 characters per token)",
    )
    add_threshold_arguments(p, ("shift_limit", "gap_rope", "retained_share", "chance_margin", "convergent_r"))
    add_analysis_arguments(p, ci="classical")
    add_run_argument(p)
    p.set_defaults(func=run)


#: One ``--sc`` value: a method name, "=", a decimal number.
_METHOD_SC = re.compile(r"\s*([^=\s]+)\s*=\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*")


def _sc(values: list[str]) -> dict[str, float]:
    out = {}
    for text in values:
        found = _METHOD_SC.fullmatch(text)
        if found is None:
            raise ValueError(f"--sc takes METHOD=SC (e.g. implicit=0.7), got {text!r}")
        out[found.group(1)] = float(found.group(2))
    return out


def run(args: argparse.Namespace) -> int:
    import json

    import pandas as pd

    from bias_validity.analyses.plan import plan, plan_summary
    from bias_validity.analyses.study import read_study

    if (args.store is None) == (args.sc is None):
        raise ValueError("give a pilot store or responses table, or --sc METHOD=SC assumptions, not both")
    target = PlanTargets(**{f.name: getattr(args, f.name) for f in fields(PlanTargets)})
    if args.sc is not None:
        names = [f.name for f in fields(Assumptions) if f.name != "sc"]
        source = Assumptions(sc=_sc(args.sc), **{n: getattr(args, n) for n in names})
    else:
        source = read_study(args.store, run=args.run)
    table = plan(
        source,
        target,
        config=analysis_config(args),
        check=args.check,
        check_replications=args.check_replications,
        seconds_per_answer=args.seconds_per_answer,
        price_per_1k_tokens=args.price_per_1k_tokens,
        tokens_per_answer=args.tokens_per_answer,
    )
    if args.json:
        payload = {
            "source": table.attrs["source"],
            "ci": table.attrs["ci"],
            "targets": table.attrs["targets"],
            "thresholds": table.attrs["thresholds"],
            "rows": json.loads(table.to_json(orient="records")),
        }
        print(json.dumps(payload, indent=2))
        return 0
    if table.empty:
        print("nothing to plan: no model x dimension has ok implicit answers on two or more items")
        return 0
    with pd.option_context("display.width", 160, "display.max_colwidth", 60):
        print(plan_summary(table).to_string(index=False))
        shown = [c for c in table.columns if c not in ("basis", "note", "would_decide")]
        print()
        print(table[shown].to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    return 0
