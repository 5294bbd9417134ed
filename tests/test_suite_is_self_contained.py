"""The test suite reads only files inside the repository, and no test module imports another one (shared helpers live
in tests/_support)."""

from __future__ import annotations

import ast
from pathlib import Path, PurePosixPath

import pytest

TESTS = Path(__file__).resolve().parent
MODULES = sorted(p for p in TESTS.rglob("*.py") if "__pycache__" not in p.parts)


def _machine_paths(tree: ast.AST) -> list[str]:
    """Strings naming a path under a top-level folder of this machine (/work, /tmp, /usr ...): a fresh clone
    elsewhere may not have it. URL paths such as /v1/completions name no such folder."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("/"):
            parts = PurePosixPath(node.value.split()[0]).parts
            if len(parts) > 2 and Path(*parts[:2]).is_dir():  # parts[0] is the root
                found.append(node.value)
    return found


def _test_modules_imported(tree: ast.AST) -> list[str]:
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.append(node.module)
    return [n for n in names if n.split(".")[0].startswith("test_") or n.split(".")[0] == "tests"]


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(TESTS)))
def test_no_absolute_path_of_this_machine(path):
    assert _machine_paths(ast.parse(path.read_text())) == []


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(TESTS)))
def test_no_test_module_imports_another(path):
    assert _test_modules_imported(ast.parse(path.read_text())) == []


def test_the_checks_see_what_they_look_for(tmp_path):
    data = tmp_path / "data.json"
    tree = ast.parse(f'from test_other import helper\nDATA = "{data}"\nURL = "/v1/completions"\n')
    assert _machine_paths(tree) == [str(data)]
    assert _test_modules_imported(tree) == ["test_other"]
