"""``bias-validity fit``: fit the hierarchical Bayesian model to a study store and apply the diagnostics gate."""

from __future__ import annotations

import argparse

from bias_validity.cli._options import (
    SOURCE_HELP,
    add_analysis_arguments,
    add_fit_arguments,
    add_run_argument,
    add_threshold_arguments,
    analysis_config,
    fit_config,
)
from bias_validity.psychometrics.bayes.diagnostics import describe_gate


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "fit",
        help="fit the hierarchical Bayesian model; exit 1 when the diagnostics gate fails",
        description="Fit the hierarchical Bayesian model (binomial, cumulative-logit and score parts with correlated "
        "item effects) and print the derived quantities (SC for these items and for a new item, explicit-implicit gap, "
        "ablation retained share, reflection minus implicit, model contrasts, base vs tuned, latent correlations) "
        "with their HDIs. Exit status 1 unless "
        f"the fit passes its diagnostics gate ({describe_gate()}).",
        epilog="Example: bias-validity fit study.sqlite --out fit.nc --json",
    )
    p.add_argument("store", help=SOURCE_HELP)
    p.add_argument("--out", help="write the fit (posterior, quantities, diagnostics, design) as ArviZ netCDF")
    p.add_argument("--json", action="store_true", help="print quantities and diagnostics as JSON")
    p.add_argument("--models-file", help="CSV/JSON of model metadata, for base-vs-tuned contrasts")
    p.add_argument("--quiet", action="store_true", help="no sampling progress lines on stderr")
    add_fit_arguments(p)
    add_analysis_arguments(p, ci="posterior", n_resamples=False, seed=False)
    add_threshold_arguments(p, names=("chance_margin",))
    add_run_argument(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import dataclasses
    import json
    import sys
    import time

    from bias_validity.analyses.fit import fit_study
    from bias_validity.analyses.study import read_study

    config = dataclasses.replace(fit_config(args), progress=not args.quiet)
    study = read_study(args.store, run=args.run, models_file=args.models_file)
    start = time.perf_counter()
    fit = fit_study(study, config=config, analysis=analysis_config(args))
    saved = fit.save(args.out) if args.out else None
    if not args.quiet:
        d = fit.diagnostics
        size = f", {saved} {saved.stat().st_size / 2**20:.1f} MB" if saved else ""
        print(
            f"fit in {time.perf_counter() - start:.0f} s: {fit.config.chains} chains x {d['draws']} draws, "
            f"min bulk ESS {d['min_ess_bulk']:.0f}, gate {'passed' if d['passed'] else 'FAILED'}{size}",
            file=sys.stderr,
        )
    keys = (
        "max_rhat",
        "min_ess_bulk",
        "min_ess_tail",
        "divergences",
        "min_ebfmi",
        "max_depth_share",
        "passed",
        "not_identified",
        "draws",
        "target_accept",
    )
    diag = {k: fit.diagnostics[k] for k in keys if k in fit.diagnostics}
    if args.json:
        records = json.loads(fit.quantities.to_json(orient="records"))
        print(json.dumps({"quantities": records, "diagnostics": diag}, indent=1))
    else:
        with_cols = [
            "quantity",
            "model",
            "dimension",
            "method",
            "mean",
            "hdi_low",
            "hdi_high",
            "p_direction",
            "contraction",
            "identified",
        ]
        print(fit.quantities[with_cols].to_string(index=False, float_format=lambda x: f"{x:.3f}"))
        print("diagnostics: " + ", ".join(f"{k}={v}" for k, v in diag.items()))
        if args.out:
            print(f"wrote {args.out}")
    if not diag["passed"]:
        print(
            f"the fit FAILED its diagnostics gate ({fit.diagnostics['gate']}) with {diag.get('draws')} draws per "
            f"chain at target acceptance {diag.get('target_accept')}",
            file=sys.stderr,
        )
        return 1
    return 0
