"""``bias-validity compare``: posterior SC difference of two models per dimension and method."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "compare",
        help="posterior difference of two models' SCs per dimension and method, with HDI and P(A > B)",
        description="Fit the hierarchical model to the two models' answers and print, per dimension and method, "
        "SC(A) - SC(B) with its 94%% HDI and the posterior probability that A is more stereotypical. Exit status "
        "1 when the fit fails its diagnostics gate.",
        epilog="Example: bias-validity compare study.sqlite --models hf:SmolLM2 hf:gemma-3-270m --json",
    )
    p.add_argument("store", help="the SQLite store")
    p.add_argument("--models", nargs=2, required=True, metavar=("A", "B"), help="the two models to compare")
    p.add_argument("--json", action="store_true", help="print records and diagnostics as JSON")
    p.add_argument("--sampler", default="nutpie", choices=("nutpie", "pymc", "numpyro"), help="NUTS backend")
    p.add_argument("--seed", type=int, default=0, help="sampler seed (default 0)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import json

    from bias_validity.analyses.compare import compare_models
    from bias_validity.analyses.fit import fit_responses
    from bias_validity.probes.store import read_responses

    a, b = args.models
    responses = read_responses(args.store)
    known = sorted(set(responses["model"].astype(str)))
    for name in (a, b):
        if name not in known:
            raise ValueError(f"model {name!r} is not in {args.store}; models: {', '.join(known)}")
    fit = fit_responses(responses[responses["model"].isin([a, b])], sampler=args.sampler, seed=args.seed)
    table = compare_models(fit, a, b)
    diag = {k: fit.diagnostics[k] for k in ("max_rhat", "min_ess_bulk", "min_ess_tail", "divergences", "passed")}
    if args.json:
        out = {
            "a": a,
            "b": b,
            "hdi_prob": table.attrs["hdi_prob"],
            "comparisons": json.loads(table.to_json(orient="records")),
            "diagnostics": diag,
        }
        print(json.dumps(out, indent=1))
    else:
        print(f"SC({a}) - SC({b})")
        print(table.to_string(index=False, float_format=lambda x: f"{x:.3f}"))
        print("diagnostics: " + ", ".join(f"{k}={v}" for k, v in diag.items()))
    return 0 if diag["passed"] else 1
