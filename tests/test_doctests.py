"""Every docstring example in the installed ``bias_validity`` package runs and prints what it shows.

The examples are collected by importing each module by its package name (``bias_validity.probes.schema``), so they
exercise the installed package, editable or not, never a copy of the folders imported by path.
"""

from __future__ import annotations

import doctest
import importlib
import io
import pkgutil

import pytest

import bias_validity


def _examples() -> list[doctest.DocTest]:
    names = ["bias_validity", *(m.name for m in pkgutil.walk_packages(bias_validity.__path__, "bias_validity."))]
    finder = doctest.DocTestFinder(exclude_empty=True)
    found = []
    for name in names:
        module = importlib.import_module(name)
        found += [t for t in finder.find(module, name) if t.examples]
    return sorted(found, key=lambda t: t.name)


EXAMPLES = _examples()


def test_examples_were_found_in_every_layer():
    layers = {t.name.split(".")[1] for t in EXAMPLES if t.name.count(".") >= 2}
    assert {"probes", "psychometrics", "analyses", "reports"} <= layers, layers


@pytest.mark.parametrize("example", EXAMPLES, ids=[t.name for t in EXAMPLES])
def test_docstring_example(example: doctest.DocTest):
    out = io.StringIO()
    runner = doctest.DocTestRunner(optionflags=0)
    result = runner.run(example, out=out.write, clear_globs=True)
    if result.failed:
        pytest.fail(f"{result.failed} of {result.attempted} examples failed:\n{out.getvalue()}", pytrace=False)
