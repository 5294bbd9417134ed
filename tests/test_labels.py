"""Labels that cross layers are written once: methods, statuses, special item and template ids, the counterbalancing
orders, question titles and the diagnostics gate come from their declarations, never from a string typed again."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import bias_validity
from bias_validity.analyses.registry import registered_questions
from bias_validity.probes.schema import (
    ATTRIBUTE_ORDERS,
    CANDIDATE_ORDERS,
    CHOICE_PREFIX,
    IMPLICIT_ORDERS,
    WEAT_ITEM,
    Method,
    Status,
)

ROOT = Path(bias_validity.__file__).parent
LABELS = {
    *(m.value for m in Method),
    *(s.value for s in Status),
    WEAT_ITEM,
    CHOICE_PREFIX,
    *IMPLICIT_ORDERS,
    *CANDIDATE_ORDERS,
    *ATTRIBUTE_ORDERS,
}
#: Question titles, each declared where its question registers itself.
TITLES = {q.title: q.ask.__module__ for q in registered_questions()}
#: Where each label is declared (and the generic statistics layer, whose defaults name no LLM method).
DECLARED = {"probes/schema.py", "analyses/result.py"}
GATE_WORDS = ("R-hat <=", "ESS >=", "ESS < ")


def _strings(path: Path) -> list[tuple[int, str]]:
    """String constants of a module that could be a label typed again.

    Left out: docstrings, the names in ``__all__``, dict keys (field names), constants declared in a class body
    (an enum-like vocabulary of its own, such as a backend's capabilities) and a function's own name (the ``where``
    of its error messages).
    """
    found: list[tuple[int, str]] = []

    def visit(node: ast.AST, function: str | None, skip: set[int]) -> None:
        body = getattr(node, "body", None)
        first = body[0] if isinstance(body, list) and body else None
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
            skip.add(id(first.value))
        if isinstance(node, ast.ClassDef):
            skip |= {id(s.value) for s in node.body if isinstance(s, ast.Assign) and isinstance(s.value, ast.Constant)}
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            return
        if isinstance(node, ast.Dict):
            skip |= {id(k) for k in node.keys if k is not None}
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            function = node.name
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            if node.value != function:
                found.append((node.lineno, node.value))
        for child in ast.iter_child_nodes(node):
            visit(child, function, skip)

    visit(ast.parse(path.read_text()), None, set())
    return found


def _modules() -> list[Path]:
    layers = ("probes", "analyses", "reports", "cli")
    return sorted(p for layer in layers for p in (ROOT / layer).rglob("*.py") if "__pycache__" not in p.parts)


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_label_is_typed_again(path):
    rel = str(path.relative_to(ROOT))
    if rel in DECLARED:
        return
    typed = [f"{rel}:{line} {value!r}" for line, value in _strings(path) if value in LABELS]
    assert typed == []


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_question_titles_are_typed_only_where_the_question_registers(path):
    rel = str(path.relative_to(ROOT))
    module = "bias_validity." + rel.removesuffix(".py").replace("/", ".")
    typed = [f"{rel}:{line} {value!r}" for line, value in _strings(path) if TITLES.get(value, module) != module]
    assert typed == []


def test_each_builtin_question_registers_its_title_once():
    found = {}
    for path in _modules():
        for _, value in _strings(path):
            if value in TITLES:
                found[value] = found.get(value, 0) + 1
    assert sorted(found.values()) == [1] * 6 and set(found) == set(TITLES)


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_gate_threshold_is_typed_again(path):
    typed = [f"{line} {value!r}" for line, value in _strings(path) if any(w in value for w in GATE_WORDS)]
    assert typed == []


def test_the_reader_skips_docstrings_and_names_and_sees_strings(tmp_path):
    module = tmp_path / "m.py"
    module.write_text(
        '"""implicit"""\n__all__ = ["ok"]\n\ndef ok():\n    """ok"""\n'
        '    return "ok", "error", {"error": 1}, f"{1} implicit"\n'
    )
    assert sorted(value for _, value in _strings(module)) == [" implicit", "error"]
