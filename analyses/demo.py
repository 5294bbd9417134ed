"""The main job on the embedded models: collect a small study, fit the Bayesian model, write the validity report."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["DemoStep", "DEMO_STEPS", "DemoResult", "run_demo"]


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
    collected: list = field(default_factory=list)
    report: object = None
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

    from analyses.fit import fit_responses
    from analyses.report import build_report
    from analyses.summary import sc_table
    from probes.backends import load_backend
    from probes.collect import collect
    from probes.store import read_study
    from reports import write_report

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
    study = read_study(result.store)
    summary_path = out / "summary.json"
    summary_path.write_text(json.dumps(json.loads(sc_table(study.responses).to_json(orient="records")), indent=2))
    fit = fit_responses(study.responses, seed=seed)
    fit_path = fit.save(out / "fit.nc")
    result.report = build_report(study.responses, fit=fit, skipped=study.skipped, runs=study.runs, seed=seed)
    result.files = [summary_path, fit_path]
    result.files += [write_report(result.report, out / name) for name in ("report.html", "report.md")]
    return result
