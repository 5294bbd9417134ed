"""``bias-validity import``: load a responses table (CSV, JSONL or Parquet), inspect_ai logs or lm-eval sample logs
from another tool into a new store."""

from __future__ import annotations

import argparse
import textwrap

#: The kinds of input ``--from`` names.
SOURCES = ("table", "inspect", "lm-eval")
_PARAGRAPHS = (
    "Validate another tool's answers against the documented schema (bias_validity.probes.schema: response_id, "
    "model, dimension, method, template_id, item_id, order, session, rep, status, ...) and write them into a new "
    "SQLite store. --map THEIRS=OURS fills our column OURS from their column or log field THEIRS, --set "
    "COLUMN=VALUE gives a column one value for every row, and a missing response_id is derived from the design key. "
    "A missing column, a wrong type or an unknown status is reported in one line naming the row (table), sample "
    "(inspect) or line (lm-eval) and the field, and nothing is written.",
    "--from table (default): one responses table (.csv, .jsonl, .parquet) in the schema or --map'ped to it.",
    "--from inspect: inspect_ai logs (.eval or .json; pip install 'bias-validity[inspect]'), one row per sample x "
    "epoch. Fields: eval.model, eval.task, sample.id, sample.epoch, sample.target, metadata.<key>, score.<scorer>. "
    "Defaults: model = eval.model, template_id = eval.task, item_id = sample.id, order = '-', session = "
    "sample.epoch (each epoch a test-retest occasion for Q1), rep = 0. The scorer's value codes the answer: C "
    "consistent, I inconsistent (status ok), N no stance (status from the score metadata's 'status', else "
    "unparseable); a sample that errored has status error. A log with several scorers names the coding one with "
    "--map score.<scorer>=consistent. dimension and method come from --map or --set. A log that did not finish is "
    "refused unless --partial.",
    "--from lm-eval: lm_eval --log_samples files of CrowS-Pairs tasks (samples_crows_pairs_*.jsonl), one logprob "
    "row per document: consistent = pct_stereotype, score = log P(sent_more) - log P(sent_less) (stereotype minus "
    "anti-stereotype), dimension = doc.bias_type, template_id = the task, item_id = doc_id, model from the "
    "results_*.json beside the samples. Fields: task, doc_id, doc.<key>, target, filter, doc_hash, pct_stereotype, "
    "likelihood_diff, model_name.",
)
_DESCRIPTION = "\n\n".join(textwrap.fill(p, 100) for p in _PARAGRAPHS)


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "import",
        help="import a responses table, inspect_ai logs or lm-eval sample logs into a new store",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=_DESCRIPTION,
        epilog="Examples:\n"
        "  bias-validity import theirs.csv --map llm=model answer_status=status --set session=1 --out study.sqlite\n"
        "  bias-validity import logs/run.eval --from inspect --map metadata.dimension=dimension "
        "metadata.item_id=item_id --set method=implicit --out study.sqlite\n"
        "  bias-validity import out/*/samples_crows_pairs_english_*.jsonl --from lm-eval --out study.sqlite",
    )
    p.add_argument(
        "file", nargs="+", help="the responses table; or one or more inspect_ai logs or lm-eval samples files"
    )
    p.add_argument("--out", required=True, help="the new SQLite store to create (must not exist)")
    p.add_argument(
        "--from",
        dest="source",
        choices=SOURCES,
        default="table",
        help="what the files are: a responses table (default), inspect_ai logs or lm-eval sample logs",
    )
    p.add_argument(
        "--map",
        nargs="+",
        action="extend",
        default=[],
        metavar="THEIRS=OURS",
        help="fill the responses-table column OURS from the table's column or the log's field THEIRS, e.g. "
        "metadata.item_id=item_id (repeatable: the pairs add up)",
    )
    p.add_argument(
        "--set",
        nargs="+",
        action="extend",
        default=[],
        metavar="COLUMN=VALUE",
        help="give COLUMN the value VALUE in every row (e.g. session=1; repeatable)",
    )
    p.add_argument(
        "--partial",
        action="store_true",
        help="with --from inspect: import the samples of a log that did not finish (refused by default)",
    )
    p.set_defaults(func=run)


def _pairs(option: str, items: list[str]) -> dict[str, str]:
    """``["a=b", ...]`` as a dict; a malformed item is a usage error naming it."""
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key or (option == "--map" and not value):
            raise ValueError(f"{option} {item!r}: write it as {'THEIRS=OURS' if option == '--map' else 'COLUMN=VALUE'}")
        if key in out:
            raise ValueError(f"{option} names {key!r} twice")
        out[key] = value
    return out


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from bias_validity.probes.store import write_responses

    rename, constants = _pairs("--map", args.map), _pairs("--set", args.set)
    if args.partial and args.source != "inspect":
        raise ValueError("--partial reads an unfinished inspect_ai log: use it with --from inspect")
    if args.source == "table":
        from bias_validity.probes.sources import read_responses_table
        from bias_validity.probes.store import adapt_table

        if len(args.file) > 1:
            raise ValueError(f"--from table reads one table, got {len(args.file)} files")
        source = Path(args.file[0]).name
        table = adapt_table(read_responses_table(args.file[0]), rename=rename, constants=constants, source=source)
    elif args.source == "inspect":
        from bias_validity.probes.inspect_log import inspect_responses

        table = inspect_responses(args.file, rename=rename, constants=constants, partial=args.partial)
    else:
        from bias_validity.probes.lm_eval_samples import lm_eval_responses

        table = lm_eval_responses(args.file, rename=rename, constants=constants)
    source = ", ".join(Path(f).name for f in args.file)
    n = write_responses(table, args.out, source=source)
    print(f"imported {n} responses from {', '.join(args.file)} into {args.out}")
    return 0
