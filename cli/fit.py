"""``bias-validity fit``: fit the hierarchical Bayesian model to a study store and apply the diagnostics gate."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:
    from bias_validity.analyses.fit import DEFAULT_DRAWS, DEFAULT_MAX_DRAWS, DEFAULT_TUNE

    p = subparsers.add_parser(
        "fit",
        help="fit the hierarchical Bayesian model; exit 1 when the diagnostics gate fails",
        description="Fit the hierarchical Bayesian model (binomial, cumulative-logit and score parts with correlated "
        "item effects) and print the derived quantities (SC, explicit-implicit gap, ablation drop ratio, reflection "
        "minus implicit, model contrasts, base vs tuned, latent correlations) with 94%% HDIs. Exit status 1 when "
        "R-hat > 1.01, ESS < 400 or any divergence.",
        epilog="Example: bias-validity fit study.sqlite --out fit.nc --json",
    )
    p.add_argument("store", help="the SQLite store")
    p.add_argument("--out", help="write the posterior as ArviZ netCDF (e.g. fit.nc)")
    p.add_argument("--json", action="store_true", help="print quantities and diagnostics as JSON")
    p.add_argument("--models-file", help="CSV/JSON of model metadata, for base-vs-tuned contrasts")
    p.add_argument("--sampler", default="nutpie", choices=("nutpie", "pymc", "numpyro"), help="NUTS backend")
    p.add_argument("--draws", type=int, default=DEFAULT_DRAWS, help=f"draws per chain (default {DEFAULT_DRAWS})")
    p.add_argument("--tune", type=int, default=DEFAULT_TUNE, help=f"warm-up per chain (default {DEFAULT_TUNE})")
    p.add_argument("--max-draws", type=int, default=DEFAULT_MAX_DRAWS,
                   help=f"retry a fit that misses the gate on R-hat or ESS with twice the draws, up to this many "
                        f"(default {DEFAULT_MAX_DRAWS}; 0 fits once)")  # fmt: skip
    p.add_argument("--chains", type=int, default=4, help="chains (default 4)")
    p.add_argument("--seed", type=int, default=0, help="sampler seed (default 0)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import json

    from bias_validity.analyses.fit import fit_responses
    from bias_validity.probes.store import read_responses

    responses = read_responses(args.store)
    meta = None
    if args.models_file:
        from bias_validity.analyses.models_meta import read_models_meta

        meta = read_models_meta(args.models_file)
    fit = fit_responses(responses, models_meta=meta, sampler=args.sampler, draws=args.draws, tune=args.tune,
                        chains=args.chains, seed=args.seed, max_draws=args.max_draws or None)  # fmt: skip
    if args.out:
        fit.save(args.out)
    keys = ("max_rhat", "min_ess_bulk", "min_ess_tail", "divergences", "passed", "draws")
    diag = {k: fit.diagnostics[k] for k in keys if k in fit.diagnostics}
    if args.json:
        records = json.loads(fit.quantities.to_json(orient="records"))
        print(json.dumps({"quantities": records, "diagnostics": diag}, indent=1))
    else:
        with_cols = ["quantity", "model", "dimension", "method", "mean", "hdi_low", "hdi_high", "p_direction"]
        print(fit.quantities[with_cols].to_string(index=False, float_format=lambda x: f"{x:.3f}"))
        print("diagnostics: " + ", ".join(f"{k}={v}" for k, v in diag.items()))
        if args.out:
            print(f"wrote {args.out}")
    if not diag["passed"]:
        import sys

        print(f"the fit FAILED its diagnostics gate (R-hat <= 1.01, ESS >= 400, no divergences) with "
              f"{diag.get('draws')} draws per chain", file=sys.stderr)  # fmt: skip
        return 1
    return 0
