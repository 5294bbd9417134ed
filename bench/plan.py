"""Does a plan deliver what it promises? Planned against achieved half-widths and decided shares, by simulation.

Each scenario states a truth (:class:`bias_validity.psychometrics.planning.Assumptions`), plans the design each
question needs (:func:`bias_validity.analyses.plan.plan`) and draws ``--replications`` studies at every planned
design, running the questions' own estimators on them (``plan(..., check=True)``):

- ``few_items``: a strong implicit SC and little item spread, half-width 0.10: designs of a handful of items;
- ``many_items``: a wide item spread, half-width 0.05: designs of 50 to 150 items;
- ``strong_templates``: wordings that shift the SC (template SD 0.6 on the logit scale) and items that react to
  them differently (item x wording SD 0.6);
- ``pilot``: a pilot drawn by ``simulate_responses`` (3 dimensions x 8 items, 2 sessions), the plan made from its
  estimates and checked against them, as ``bias-validity plan STORE --check`` does.

A row passes when its planned half-width is within 15% of the mean achieved one and, for a deciding row, when at
least 75% of the replications decide: every planned design has 80% power at the truth it was planned for, so the
truth clears each threshold by the planned margin. The last line is one JSON object: per scenario and row the
planned and achieved half-width, their ratio, the planned power and the decided share, and whether all passed.

Usage: python bench/plan.py [--replications 400] [--scenarios few_items many_items ...] [--seed 0]
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

from bias_validity.analyses.config import AnalysisConfig
from bias_validity.analyses.plan import plan
from bias_validity.psychometrics.planning import Assumptions, PlanTargets
from bias_validity.simulate import simulate_responses

#: Planned half-widths must lie within this share of the achieved ones (the issue's criterion).
HALF_WIDTH_TOLERANCE = 0.15
#: Deciding rows must decide in at least this share of replications (nominal power 0.8).
DECIDE_FLOOR = 0.75
_SC = {"implicit": 0.75, "ablated": 0.55, "explicit": 0.45, "reflection": 0.35}
SCENARIOS = {
    "few_items": (Assumptions(sc=_SC, item_sd=0.4, score_corr=0.7), PlanTargets(half_width=0.10)),
    "many_items": (Assumptions(sc=_SC, item_sd=1.5, score_corr=0.6), PlanTargets(half_width=0.05)),
    "strong_templates": (
        Assumptions(sc=_SC, item_sd=0.8, template_sd=0.6, item_template_sd=0.6, score_corr=0.6),
        PlanTargets(half_width=0.05),
    ),
    "pilot": (None, PlanTargets(half_width=0.08)),
}


def _source(name: str, seed: int):
    assumptions, _ = SCENARIOS[name]
    if assumptions is not None:
        return assumptions
    return simulate_responses(dimensions=["age", "race", "gender_career"], n_items=8, item_sd=1.0, seed=seed)


def run_scenario(name: str, replications: int, seed: int) -> dict[str, object]:
    """Plan and check one scenario: its rows with planned and achieved figures, and whether each passes."""
    _, targets = SCENARIOS[name]
    config = AnalysisConfig(n_resamples=1000, seed=seed)
    start = time.perf_counter()
    table = plan(_source(name, seed), targets, config=config, check=True, check_replications=replications)
    rows = []
    for r in table.itertuples():
        if np.isnan(r.achieved_half_width) or not r.check_replications:
            continue  # shown-only figures the check does not run (item-score ICCs)
        ratio = r.planned_half_width / r.achieved_half_width
        deciding = str(r.target).startswith("decide")
        passed = abs(ratio - 1) <= HALF_WIDTH_TOLERANCE and (not deciding or r.decide_share >= DECIDE_FLOOR)
        rows.append(
            dict(
                question=r.question,
                quantity=r.quantity,
                dimension=r.dimension,
                target=r.target,
                items=int(r.items),
                reps=int(r.reps),
                planned_half_width=round(float(r.planned_half_width), 4),
                achieved_half_width=round(float(r.achieved_half_width), 4),
                ratio=round(float(ratio), 3),
                planned_power=None if np.isnan(r.planned_power) else round(float(r.planned_power), 3),
                decide_share=None if np.isnan(r.decide_share) else round(float(r.decide_share), 3),
                passed=bool(passed),
            )
        )
        print(f"{name}: {rows[-1]}", file=sys.stderr, flush=True)
    return dict(seconds=round(time.perf_counter() - start, 1), rows=rows, passed=all(r["passed"] for r in rows))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--replications",
        type=int,
        default=400,
        help="studies drawn per planned row (default 400: the decided share's SE is 0.02 at 80%%, so the 75%% floor "
        "sits 2.5 SE below the planned power)",
    )
    parser.add_argument("--scenarios", nargs="+", default=list(SCENARIOS), choices=list(SCENARIOS))
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    results = {name: run_scenario(name, args.replications, args.seed) for name in args.scenarios}
    summary = {
        "replications": args.replications,
        "half_width_tolerance": HALF_WIDTH_TOLERANCE,
        "decide_floor": DECIDE_FLOOR,
        "scenarios": results,
        "passed": all(r["passed"] for r in results.values()),
    }
    print(json.dumps(summary))
    return 0 if summary["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
