"""The ``bias-validity`` command: a thin layer over the Python API.

Each subcommand lives in its own module here and exposes ``register(subparsers)``, which adds its parser and sets
``func``; heavy imports stay inside the functions so ``--help`` is instant. Exit codes: 0 complete, 1 failed or
incomplete, 2 usage error.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys

__all__ = ["main", "build_parser"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="bias-validity",
        description="Measure LLM bias and test whether the measurements are reliable and valid.",
        epilog="Example: bias-validity demo --out demo/",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        module.register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except (ValueError, FileNotFoundError) as exc:
        print(f"bias-validity {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted; what was collected is kept, run the same command again to resume", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
