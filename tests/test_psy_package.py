"""The psychometrics package surface: public names, docstring sections, and independence from the LLM layers."""

import ast
import inspect
from pathlib import Path

import pytest

from bias_validity import psychometrics

PACKAGE = Path(psychometrics.__file__).parent
MODULES = ["intervals", "bootstrap", "reliability", "agreement", "validity", "mtmm", "framing", "reference"]


def test_issue_names_are_importable_from_the_package():
    for name in [
        "wilson_interval",
        "icc",
        "split_half",
        "spearman_brown",
        "cronbach_alpha",
        "krippendorff_alpha",
        "disattenuate",
        "mtmm",
    ]:
        assert callable(getattr(psychometrics, name))
    assert sorted(psychometrics.__all__) == sorted(set(psychometrics.__all__))


@pytest.mark.parametrize("module", MODULES)
def test_no_import_of_llm_layers(module):
    tree = ast.parse((PACKAGE / f"{module}.py").read_text())
    imported = [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module]
    imported += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    assert not [m for m in imported if m.split(".")[0] in {"probes", "analyses", "reports"}]


@pytest.mark.parametrize("name", [n for n in psychometrics.__all__ if inspect.isfunction(getattr(psychometrics, n))])
def test_public_functions_document_method_reference_and_example(name):
    function = getattr(psychometrics, name)
    doc = inspect.getdoc(function)
    sections = ["Returns", "Notes", "References", "Examples"]
    if inspect.signature(function).parameters:
        sections.append("Parameters")
    for section in sections:
        assert f"\n{section}\n" in doc, f"{name} lacks {section}"
    assert ">>> " in doc
