"""The main job on the embedded models: collect a small study, then summarise it (fit and report as they land)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["DemoStep", "DEMO_STEPS", "run_demo"]


@dataclass(frozen=True)
class DemoStep:
    """One model of the demo and the part of the design it takes."""

    model: str
    methods: tuple[str, ...] | None  #: None = every method the model can take


#: SmolLM2 (instruction-tuned) takes every method; Gemma-3-270M is a base model (logprob, embedding); GloVe is the
#: external word-vector reference for WEAT.
DEMO_STEPS: tuple[DemoStep, ...] = (
    DemoStep("hf:smollm2", None),
    DemoStep("hf:gemma3-270m", ("logprob", "embedding")),
    DemoStep("glove:6B-50d", ("embedding",)),
)


def run_demo(
    out: str | Path = "demo",
    *,
    items_per_dimension: int = 4,
    sessions: int = 2,
    reps: int = 1,
    seed: int = 0,
    progress: bool = True,
) -> dict[str, object]:
    """Collect the demo study into ``out/study.sqlite`` (resuming if it exists) and write ``out/summary.json``.

    Returns a dict with the store path, the per-model collection summaries and the output files.
    """
    import json

    from analyses.summary import sc_table
    from probes.backends import load_backend
    from probes.collect import collect
    from probes.store import read_responses

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    store = out / "study.sqlite"
    collected = []
    for step in DEMO_STEPS:
        backend = load_backend(step.model)
        try:
            summary = collect(
                backend,
                store,
                methods=step.methods,
                sessions=sessions,
                reps=reps,
                seed=seed,
                items_per_dimension=items_per_dimension,
                progress=progress,
            )
        finally:
            backend.close()
        collected.append(summary)
    table = sc_table(read_responses(store))
    summary_path = out / "summary.json"
    summary_path.write_text(json.dumps(json.loads(table.to_json(orient="records")), indent=2))
    return {"store": store, "collected": collected, "files": [summary_path], "sc_table": table}
