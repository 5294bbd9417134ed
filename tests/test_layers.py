"""Dependencies point one way: probes and psychometrics at the bottom, analyses above, reports above, cli on top.

Read from the source of the installed package (every ``import``, at module level or inside a function).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import bias_validity

ROOT = Path(bias_validity.__file__).parent
OLD_TOP_LEVEL = {"probes", "psychometrics", "analyses", "reports", "cli", "simulate"}
#: What each layer may import from the package, as module prefixes (the root package itself is open to all).
ALLOWED: dict[str, tuple[str, ...]] = {
    "probes": ("probes",),
    "psychometrics": ("psychometrics",),
    "analyses": ("analyses", "probes", "psychometrics"),
    "reports": ("reports", "analyses.result", "probes.schema"),
    "cli": ("cli", "pipeline", "analyses", "reports", "probes", "psychometrics", "simulate"),
    "simulate": ("simulate", "probes", "psychometrics"),
}


def _imports(path: Path, root: Path = ROOT) -> list[tuple[int, str]]:
    """Absolute names of every module ``path`` imports, relative imports resolved against its package."""
    package = ".".join(path.relative_to(root.parent).with_suffix("").parts[:-1])
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{parent}.{base}" if base else parent
            found.append((node.lineno, base))
    return found


def _layer_files(layer: str) -> list[Path]:
    return sorted(p for p in (ROOT / layer).rglob("*.py") if "__pycache__" not in p.parts)


@pytest.mark.parametrize("layer", list(ALLOWED))
def test_layer_imports_only_what_lies_below_it(layer):
    wrong = []
    for path in _layer_files(layer):
        for line, name in _imports(path):
            top = name.split(".")[0]
            if top in OLD_TOP_LEVEL:
                wrong.append(f"{path.relative_to(ROOT)}:{line} imports {name} as a top-level name")
            if top != "bias_validity" or name == "bias_validity":
                continue
            inner = name.removeprefix("bias_validity.")
            if not any(inner == a or inner.startswith(a + ".") for a in ALLOWED[layer]):
                wrong.append(f"{path.relative_to(ROOT)}:{line} imports {name}")
    assert wrong == []


def test_the_check_sees_a_forbidden_import(tmp_path):
    """The import reader resolves relative and function-level imports (so the layer test cannot pass vacuously)."""
    module = ROOT / "analyses" / "questions" / "gap.py"
    names = {n for _, n in _imports(module)}
    assert "bias_validity.analyses.result" in names and "bias_validity.psychometrics.contrasts" in names
    fake = tmp_path / "bias_validity" / "analyses" / "x.py"
    fake.parent.mkdir(parents=True)
    fake.write_text("def f():\n    from ..reports import write_report\n")
    assert _imports(fake, root=tmp_path / "bias_validity") == [(2, "bias_validity.reports")]
