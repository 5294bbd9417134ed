"""``bias-validity collect``: ask a model the study's questions and store every answer (resumable)."""

from __future__ import annotations

import argparse

EXAMPLE = "bias-validity collect --model hf:smollm2 --dimensions gender_career race --reps 2 --out study.sqlite"
BATCH_EXAMPLE = (
    "bias-validity collect --model openai:gpt-4o-mini --batch-out requests.jsonl --out study.sqlite; then, with the "
    "batch's output file: bias-validity collect --batch-in results.jsonl --out study.sqlite"
)


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "collect",
        help="collect responses from a model into a store (resumable)",
        description="Ask a model the implicit, explicit, ablated, reflection, logprob and embedding questions and "
        "store every answer. Run the same command again to resume after an interruption, or to extend the study "
        "(more reps, sessions, dimensions, items or methods). A store's run resumes only under the settings it was "
        "collected with (model file, seed, temperature, token limit, templates, stimuli, toolkit version): "
        "otherwise collect stops before asking, names each differing field and exits 2; --new-run collects into "
        "the same store as a separate run. Everything is checked before a model is loaded. Prints how many "
        "questions were asked, stored, skipped (by method, with the reason) and left with errors; exit status 1 "
        "when answers were left with errors. --batch-out writes the questions as OpenAI Batch API requests instead of "
        "asking, and --batch-in stores the batch's answers (the same rows the live path stores).",
        epilog=f"Example: {EXAMPLE}. Batch example: {BATCH_EXAMPLE}",
    )
    add_collect_arguments(p)
    p.add_argument("--out", required=True, help="the SQLite store to write (created or resumed)")
    batch = p.add_mutually_exclusive_group()
    batch.add_argument(
        "--batch-out",
        metavar="FILE",
        help="write the questions not yet stored as OpenAI Batch API input lines instead of asking (one "
        "--model openai:NAME; no --base-url): FILE, then FILE-002, FILE-003 ... before the extension, at most "
        "50,000 lines and 200 MB each; files written are replaced. The run spec is recorded as for a live run; "
        "methods a batch cannot serve (logprob, embedding) are recorded as skipped. Reflection questions follow "
        "the implicit answers: --batch-out again after --batch-in",
    )
    batch.add_argument(
        "--batch-in",
        metavar="FILE",
        action="append",
        help="store the answers of an OpenAI Batch API (or vLLM run-batch) output file, joined on custom_id and "
        "parsed as live answers; repeatable. The model and design come from the store's run (--run N, default the "
        "latest). Reading the same file again adds nothing; a failed answer is replaced by a later one. A "
        "malformed line or a custom_id outside the run stops it before anything is written. Exit status 1 while "
        "questions of the run are left unanswered or failed",
    )
    group = p.add_mutually_exclusive_group()
    group.add_argument(
        "--new-run", action="store_true", help="collect into a new run of the store (other settings than its runs')"
    )
    group.add_argument("--run", type=int, metavar="N", help="resume run N of the store (default: its latest run)")
    p.set_defaults(func=run)


def add_collect_arguments(p: argparse.ArgumentParser) -> None:
    """The design and backend options shared by ``collect`` and ``demo``."""
    p.add_argument(
        "--model",
        action="append",
        help="model spec, repeatable: hf:smollm2, hf:gemma3-270m, glove:6B-50d, openai:<name> (default hf:smollm2)",
    )
    p.add_argument(
        "--dimensions", nargs="+", action="extend", help="stimulus dimensions, repeatable (default: all six)"
    )
    p.add_argument(
        "--methods", nargs="+", action="extend", help="methods, repeatable (default: all the model can take)"
    )
    p.add_argument("--sessions", type=int, default=2, help="measurement occasions for test-retest (default 2)")
    p.add_argument("--reps", type=int, default=2, help="repetitions per session (default 2)")
    p.add_argument("--items-per-dimension", type=int, help="use the first N items of each dimension")
    p.add_argument("--seed", type=int, default=0, help="base seed (default 0)")
    p.add_argument("--temperature", type=float, default=0.7, help="sampling temperature (default 0.7)")
    p.add_argument("--max-new-tokens", type=int, default=24, help="tokens generated per answer at most (default 24)")
    p.add_argument(
        "--batch-size",
        type=int,
        default=192,
        help="questions per backend call and per store transaction (default 192; a local model decodes 48 "
        "of them at a time, the others joining as answers end)",
    )
    p.add_argument("--base-url", action="append", help="OpenAI-compatible server URL, repeatable (openai: models)")
    p.add_argument("--api-key-env", default="OPENAI_API_KEY", help="environment variable holding the API key")
    p.add_argument("--concurrency", type=int, default=8, help="parallel HTTP requests (openai: models)")
    p.add_argument(
        "--score-prefix",
        help="context the logprob sentences are scored in, as text (hf: and openai: "
        "models; default: the model's start token locally, none over HTTP). A llama-cpp-python server "
        "needs it to begin with the model's BOS token: '<|im_start|><|endoftext|>' for SmolLM2",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def backend_options(args: argparse.Namespace, spec: str) -> dict[str, object]:
    """Keyword options for ``load_backend`` from the command line, by backend prefix."""
    prefix = {} if args.score_prefix is None else {"score_prefix": args.score_prefix}
    if spec.startswith("openai:"):
        if not args.base_url:
            raise ValueError(f"{spec} needs --base-url (the OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1)")
        return {"base_urls": args.base_url, "api_key_env": args.api_key_env, "concurrency": args.concurrency, **prefix}
    if args.base_url:
        raise ValueError(f"--base-url applies to openai: models, not {spec}")
    if prefix and not spec.startswith("hf:"):
        raise ValueError(f"--score-prefix applies to hf: and openai: models, not {spec}")
    return prefix


def _design(args: argparse.Namespace) -> dict[str, object]:
    return {
        "dimensions": args.dimensions,
        "methods": args.methods,
        "sessions": args.sessions,
        "reps": args.reps,
        "items_per_dimension": args.items_per_dimension,
        "batch_size": args.batch_size,
        "max_new_tokens": args.max_new_tokens,
    }


def _target_run(args: argparse.Namespace, specs: list[str]) -> int | None:
    """The run to collect into, checked against the store for every model before any model is loaded."""
    from pathlib import Path

    from bias_validity.probes.backends import identify_backend
    from bias_validity.probes.collect import check_design_arguments
    from bias_validity.probes.run_spec import build_run_spec, resolve_run
    from bias_validity.probes.store import ResponseStore

    dims, methods = check_design_arguments(**_design(args))
    identities = [identify_backend(spec, **backend_options(args, spec)) for spec in specs]
    if not Path(args.out).exists():
        if args.run not in (None, 1):
            raise ValueError(f"{args.out}: no such store, so no run {args.run} to resume")
        return None
    with ResponseStore(args.out) as store:
        run = max(store.run_ids(), default=0) + 1 if args.new_run else args.run
        for identity in identities:
            spec = build_run_spec(
                identity=identity,
                provenance={},
                dimensions=dims,
                methods=methods,
                sessions=args.sessions,
                reps=args.reps,
                seed=args.seed,
                temperature=args.temperature,
                max_new_tokens=args.max_new_tokens,
                items_per_dimension=args.items_per_dimension,
            )
            resolve_run(store, str(identity["name"]), spec, run)
    return run


def _batch_out(args: argparse.Namespace) -> int:
    """Write the design's pending questions as batch request lines (``--batch-out``)."""
    from bias_validity.probes.batch import write_batch_requests

    specs = args.model or []
    if len(specs) != 1 or not specs[0].startswith("openai:") or not specs[0].partition(":")[2]:
        raise ValueError("--batch-out writes OpenAI Batch API requests for one model: give one --model openai:NAME")
    if args.base_url:
        raise ValueError("--batch-out asks no server: drop --base-url (the batch service runs the requests)")
    design = {k: v for k, v in _design(args).items() if k != "batch_size"}
    written = write_batch_requests(
        args.out,
        args.batch_out,
        model=specs[0].partition(":")[2],
        score_prefix=args.score_prefix or "",
        **design,
        seed=args.seed,
        temperature=args.temperature,
        run=_requested_run(args),
    )
    print("\n".join(written.lines()))
    return 0


def _batch_in(args: argparse.Namespace) -> int:
    """Store the answers of batch output files (``--batch-in``); exit 1 while questions of the run are left."""
    from bias_validity.probes.batch_results import read_batch_results

    if args.model:
        raise ValueError("--batch-in reads the model and design from the store's run: drop --model")
    if args.new_run:
        raise ValueError("--batch-in completes a run of the store: use --run N, not --new-run")
    summary = read_batch_results(args.out, args.batch_in, run=args.run)
    print("\n".join(summary.lines()))
    return 0 if summary.complete else 1


def _requested_run(args: argparse.Namespace) -> int | None:
    """The run named by --run, the next run for --new-run, or None (the store's latest)."""
    from pathlib import Path

    from bias_validity.probes.store import ResponseStore

    if not args.new_run or not Path(args.out).exists():
        return args.run
    with ResponseStore(args.out) as store:
        return max(store.run_ids(), default=0) + 1


def run(args: argparse.Namespace) -> int:
    if args.batch_in:
        return _batch_in(args)
    if args.batch_out:
        return _batch_out(args)
    from bias_validity.probes.backends import load_backend
    from bias_validity.probes.collect import collect

    specs = args.model or ["hf:smollm2"]
    target = _target_run(args, specs)
    incomplete = False
    for spec in specs:
        backend = load_backend(spec, **backend_options(args, spec))
        try:
            summary = collect(
                backend,
                args.out,
                **_design(args),
                seed=args.seed,
                temperature=args.temperature,
                run=target,
                progress=not args.no_progress,
            )
        finally:
            backend.close()
        target = summary.run  # every model of one command goes into the same run
        print("\n".join(summary.lines()))
        incomplete = incomplete or not summary.complete
    return 1 if incomplete else 0
