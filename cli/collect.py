"""``bias-validity collect``: ask a model the study's questions and store every answer (resumable)."""

from __future__ import annotations

import argparse

EXAMPLE = "bias-validity collect --model hf:smollm2 --dimensions gender_career race --reps 2 --out study.sqlite"


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "collect",
        help="collect responses from a model into a store (resumable)",
        description="Ask a model the implicit, explicit, ablated, reflection, logprob and embedding questions and "
        "store every answer. Run the same command again to resume after an interruption.",
        epilog=f"Example: {EXAMPLE}",
    )
    add_collect_arguments(p)
    p.add_argument("--out", required=True, help="the SQLite store to write (created or resumed)")
    p.set_defaults(func=run)


def add_collect_arguments(p: argparse.ArgumentParser) -> None:
    """The design and backend options shared by ``collect`` and ``demo``."""
    p.add_argument("--model", action="append", help="model spec, repeatable: hf:smollm2, hf:gemma3-270m, "
                   "glove:6B-50d, openai:<name> (default hf:smollm2)")  # fmt: skip
    p.add_argument("--dimensions", nargs="+", help="stimulus dimensions (default: all six)")
    p.add_argument("--methods", nargs="+", help="methods (default: all the model can take)")
    p.add_argument("--sessions", type=int, default=2, help="measurement occasions for test-retest (default 2)")
    p.add_argument("--reps", type=int, default=2, help="repetitions per session (default 2)")
    p.add_argument("--items-per-dimension", type=int, help="use the first N items of each dimension")
    p.add_argument("--seed", type=int, default=0, help="base seed (default 0)")
    p.add_argument("--temperature", type=float, default=0.7, help="sampling temperature (default 0.7)")
    p.add_argument("--batch-size", type=int, default=16, help="questions per backend call (default 16)")
    p.add_argument("--base-url", action="append", help="OpenAI-compatible server URL, repeatable (openai: models)")
    p.add_argument("--api-key-env", default="OPENAI_API_KEY", help="environment variable holding the API key")
    p.add_argument("--concurrency", type=int, default=8, help="parallel HTTP requests (openai: models)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def backend_options(args: argparse.Namespace, spec: str) -> dict[str, object]:
    """Keyword options for ``load_backend`` from the command line, by backend prefix."""
    if spec.startswith("openai:"):
        if not args.base_url:
            raise ValueError(f"{spec} needs --base-url (the OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1)")
        return {"base_urls": args.base_url, "api_key_env": args.api_key_env, "concurrency": args.concurrency}
    if args.base_url:
        raise ValueError(f"--base-url applies to openai: models, not {spec}")
    return {}


def run(args: argparse.Namespace) -> int:
    from bias_validity.probes.backends import load_backend
    from bias_validity.probes.collect import collect

    incomplete = False
    for spec in args.model or ["hf:smollm2"]:
        backend = load_backend(spec, **backend_options(args, spec))
        try:
            summary = collect(
                backend,
                args.out,
                dimensions=args.dimensions,
                methods=args.methods,
                sessions=args.sessions,
                reps=args.reps,
                seed=args.seed,
                temperature=args.temperature,
                items_per_dimension=args.items_per_dimension,
                batch_size=args.batch_size,
                progress=not args.no_progress,
            )
        finally:
            backend.close()
        counts = ", ".join(f"{k} {v}" for k, v in sorted(summary.status_counts.items())) or "none new"
        print(f"{summary.model}: {summary.questions} questions, {summary.written} answers written ({counts}), "
              f"{summary.already_stored} already stored")  # fmt: skip
        for method, reason in summary.skipped.items():
            print(f"  skipped {method}: {reason}")
        if not summary.complete:
            print(f"  {summary.errors} answers failed; run the same command again to retry them")
            incomplete = True
    return 1 if incomplete else 0
