"""``bias-validity report``: the validity report (HTML or Markdown) of a study store."""

from __future__ import annotations

import argparse

from bias_validity.cli._options import (
    SOURCE_HELP,
    add_fit_arguments,
    add_run_argument,
    fit_config,
    open_study,
    read_models_file,
)
from bias_validity.cli._thresholds import add_threshold_arguments, thresholds_from


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "report",
        help="write the validity report (HTML, Markdown, JSON or CSV, by extension)",
        description="Answer the six reviewer questions (reliability, convergent validity, framing, explicit-implicit "
        "gap, self-reflection, scaling) on a study store or responses table and write a self-contained HTML report, "
        "its Markdown twin, or the report as JSON or CSV data. Fits the Bayesian model unless --fit gives a saved "
        "posterior or --no-fit is set. Exit status 1 when the fit fails its diagnostics gate (the report is still "
        "written, with a FAILED banner).",
        epilog="Example: bias-validity report study.sqlite --out report.html --models-file models.csv",
    )
    p.add_argument("store", help=SOURCE_HELP)
    p.add_argument(
        "--out",
        required=True,
        help="output file: .html or .md, or .json / .csv for the report as data (per-model verdict rows included)",
    )
    group = p.add_mutually_exclusive_group()
    group.add_argument(
        "--fit",
        help="a saved fit (fit.nc from bias-validity fit --out) of this store's answers, "
        "reused instead of sampling again",
    )
    group.add_argument("--no-fit", action="store_true", help="report without the Bayesian model (classical intervals)")
    add_threshold_arguments(p)
    p.add_argument("--models-file", help="CSV of model metadata (family, parameters, training tokens, aligned) for Q6")
    add_fit_arguments(p, seed_help="seed of the bootstraps and the sampler")
    add_run_argument(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from bias_validity.analyses.report import build_report
    from bias_validity.reports import REPORT_SUFFIXES, write_report

    if Path(args.out).suffix.lower() not in REPORT_SUFFIXES:
        raise ValueError(f"{args.out}: unknown report format; use one of {', '.join(REPORT_SUFFIXES)}")
    study = open_study(args.store, args.run)
    limits = thresholds_from(args)
    responses = study.responses
    models_meta = read_models_file(args.models_file, responses)
    fit = None
    if args.fit:
        from bias_validity.analyses.fit import check_fit_matches
        from bias_validity.psychometrics.bayes import load_fit

        fit = load_fit(args.fit)
        check_fit_matches(fit, responses, fit_name=args.fit, responses_name=args.store)
    elif not args.no_fit:
        from bias_validity.analyses.fit import fit_responses

        fit = fit_responses(responses, models_meta=models_meta, config=fit_config(args))
    report = build_report(
        responses,
        fit=fit,
        models_meta=models_meta,
        skipped=study.skipped,
        runs=study.runs,
        thresholds=limits,
        seed=args.seed,
    )
    path = write_report(report, args.out)
    for q in report.questions:
        print(f"{q.question} {q.title}: {q.verdict.value}")
    print(f"wrote {path}")
    if report.diagnostics is not None and report.diagnostics.get("passed") is False:
        print("the Bayesian fit FAILED its diagnostics gate; see the report's diagnostics section")
        return 1
    return 0
