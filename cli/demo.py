"""``bias-validity demo``: the main job on the packaged local models, offline: collect, fit and report a small study."""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bias_validity.analyses.result import ValidityReport
    from bias_validity.probes.collect import CollectSummary

__all__ = ["DemoStep", "DEMO_STEPS", "DemoResult", "run_demo", "register"]


@dataclass(frozen=True)
class DemoStep:
    """One model of the demo and the part of the design it takes."""

    model: str
    methods: tuple[str, ...] | None  #: None = every method the model can take


#: Every model is asked every method: SmolLM2 (instruction-tuned) takes them all; Gemma-3-270M is a base model and
#: GloVe a word-vector model, so the methods they cannot take are recorded as skipped with the reason (Gemma takes
#: logprob and embedding, GloVe embedding: the external reference for WEAT).
DEMO_STEPS: tuple[DemoStep, ...] = (
    DemoStep("hf:smollm2", None),
    DemoStep("hf:gemma3-270m", None),
    DemoStep("glove:6B-50d", None),
)


@dataclass
class DemoResult:
    """What the demo produced: the store, per-model collection summaries, the report and the files written."""

    store: Path
    collected: list[CollectSummary] = field(default_factory=list)
    report: ValidityReport | None = None
    files: list[Path] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        """Every answer collected without error and the fit passed its diagnostics gate."""
        passed = self.report is None or not self.report.diagnostics or self.report.diagnostics.get("passed", True)
        return all(s.complete for s in self.collected) and bool(passed)


def run_demo(
    out: str | Path = "demo",
    *,
    dimensions: list[str] | None = None,
    items_per_dimension: int = 2,
    sessions: int = 2,
    reps: int = 1,
    seed: int = 0,
    progress: bool = True,
) -> DemoResult:
    """Collect the demo study into ``out/study.sqlite`` (resuming if it exists), fit it, and write the reports.

    ``dimensions`` defaults to all six. Writes ``out/summary.json`` (raw SC with Wilson intervals),
    ``out/fit.nc`` (the posterior), ``out/report.html`` and ``out/report.md``.
    """
    import json

    from bias_validity.analyses.config import AnalysisConfig
    from bias_validity.analyses.fit import fit_study
    from bias_validity.analyses.study import read_study
    from bias_validity.pipeline import report_study
    from bias_validity.probes.backends import load_backend
    from bias_validity.probes.collect import collect
    from bias_validity.psychometrics.bayes import FitConfig

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    result = DemoResult(store=out / "study.sqlite")
    for step in DEMO_STEPS:
        backend = load_backend(step.model)
        try:
            result.collected.append(
                collect(
                    backend,
                    result.store,
                    dimensions=dimensions,
                    methods=step.methods,
                    sessions=sessions,
                    reps=reps,
                    seed=seed,
                    items_per_dimension=items_per_dimension,
                    progress=progress,
                )
            )
        finally:
            backend.close()
    study, config = read_study(result.store), AnalysisConfig(seed=seed)
    summary_path = out / "summary.json"
    summary_path.write_text(json.dumps(json.loads(study.sc_table(config).to_json(orient="records")), indent=2))
    fit = fit_study(study, config=FitConfig(seed=seed), analysis=config)
    fit_path = fit.save(out / "fit.nc")
    reports = [out / "report.html", out / "report.md"]
    result.report = report_study(study, fit, config=config, out=reports)
    result.files = [summary_path, fit_path, *reports]
    return result


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
