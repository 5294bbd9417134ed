"""``bias-validity report``: the validity report (HTML or Markdown) of a study store."""

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
        help="a saved fit (fit.nc from bias-validity fit --out) of this store's answers, fitted at the same --ci, "
        "reused instead of sampling again",
    )
    group.add_argument("--no-fit", action="store_true", help="report without the Bayesian model (classical intervals)")
    add_threshold_arguments(p)
    p.add_argument("--models-file", help="CSV of model metadata (family, parameters, training tokens, aligned) for Q6")
    add_fit_arguments(p, seed_help="seed of the bootstraps and the sampler")
    add_analysis_arguments(p, seed=False)
    add_run_argument(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from bias_validity.analyses.study import read_study
    from bias_validity.pipeline import report_study
    from bias_validity.reports import REPORT_SUFFIXES

    if Path(args.out).suffix.lower() not in REPORT_SUFFIXES:  # a usage error before any fitting
        raise ValueError(f"{args.out}: unknown report format; use one of {', '.join(REPORT_SUFFIXES)}")
    study = read_study(args.store, run=args.run, models_file=args.models_file)
    fit = None if args.no_fit else args.fit or fit_config(args)
    report = report_study(study, fit, config=analysis_config(args), out=args.out)
    for q in report.questions:
        print(f"{q.question} {q.title}: {q.verdict.value}")
    print(f"wrote {args.out}")
    if report.diagnostics is not None and report.diagnostics.get("passed") is False:
        print("the Bayesian fit FAILED its diagnostics gate; see the report's diagnostics section")
        return 1
    return 0
