"""The psychometrics package surface: public names and docstring sections (its independence: test_layers.py)."""

import inspect

import pytest

from bias_validity import psychometrics


def test_psychometric_functions_are_importable_from_the_package():
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
