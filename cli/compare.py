"""``bias-validity compare``: posterior SC difference of two models per dimension and method."""

from __future__ import annotations

import argparse

from bias_validity.cli._options import SOURCE_HELP, add_fit_arguments, add_run_argument, analysis_config, fit_config


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "compare",
        help="posterior difference of two models' SCs per dimension and method, with HDI and P(A > B)",
        description="Print, per dimension and method, SC(A) - SC(B) with its HDI and the posterior probability that "
        "A is more stereotypical. With --fit the saved fit is reused (no sampling; with a store, the fit must have "
        "been fitted to its answers); otherwise the two models' answers in the store are fitted. Exit status 1 "
        "when the fit fails its diagnostics gate.",
        epilog="Example: bias-validity compare --fit fit.nc --models hf:SmolLM2-135M-Instruct-Q4_1 "
        "hf:gemma-3-270m-Q4_K_M --json",
    )
    p.add_argument("store", nargs="?", help=f"{SOURCE_HELP} (optional with --fit)")
    p.add_argument("--fit", help="a saved fit (fit.nc from bias-validity fit --out) to reuse instead of sampling")
    p.add_argument("--models", nargs=2, required=True, metavar=("A", "B"), help="the two models to compare")
    p.add_argument("--json", action="store_true", help="print records and diagnostics as JSON")
    add_fit_arguments(p)
    add_run_argument(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import json

    from bias_validity.analyses.compare import compare_models
    from bias_validity.analyses.fit import check_fit_matches, fit_study
    from bias_validity.analyses.study import Study, read_study

    if not args.store and not args.fit:
        raise ValueError("give a store to fit, or --fit with a saved fit")
    a, b = args.models
    if args.fit:
        from bias_validity.psychometrics.bayes import load_fit

        fit = load_fit(args.fit)
        if args.store:
            check_fit_matches(fit, read_study(args.store, run=args.run), fit_name=args.fit, responses_name=args.store)
    else:
        study = read_study(args.store, run=args.run)
        for name in (a, b):
            if name not in study.models:
                raise ValueError(f"model {name!r} is not in {args.store}; models: {', '.join(study.models)}")
        pair = study.responses[study.responses["model"].astype(str).isin([a, b])]
        fit = fit_study(
            Study.from_responses(pair, source=study.source), config=fit_config(args), analysis=analysis_config(args)
        )
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
