"""``bias-validity demo``: the main job on the packaged local models, offline."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "demo",
        help="collect, fit and report a small study on the packaged local models (offline)",
        description="Collect a small study on SmolLM2-135M-Instruct (all methods), Gemma-3-270M base (logprob, "
        "embedding) and GloVe (embedding reference), fit the Bayesian model and write report.html and report.md. "
        "Rerunning resumes the same store.",
        epilog="Example: bias-validity demo --out demo/",
    )
    p.add_argument("--out", default="demo", help="output folder (default: demo)")
    p.add_argument("--items-per-dimension", type=int, default=2, help="items per dimension (default 2)")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from analyses.demo import run_demo

    result = run_demo(args.out, items_per_dimension=args.items_per_dimension, progress=not args.no_progress)
    for summary in result.collected:
        for method, reason in summary.skipped.items():
            print(f"skipped: {summary.model} {method}: {reason}")
    for q in result.report.questions:
        print(f"{q.question} {q.title}: {q.verdict.value}. {q.summary}")
    diagnostics = result.report.diagnostics or {}
    print(f"fit diagnostics: {'passed' if diagnostics.get('passed') else 'FAILED'} {diagnostics}")
    for path in result.files:
        print(f"wrote {path}")
    return 0 if result.complete else 1
