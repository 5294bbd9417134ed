"""The distribution owns one import name, ``bias_validity``, in editable and regular installs alike.

The repository's folders (probes/, psychometrics/, analyses/, simulate/, reports/, cli/) are its subpackages, mapped
by setuptools' ``package-dir``; none of their generic names may become importable at top level. The wheel is typed
(``py.typed``); the sdist ships the package and no tests (MANIFEST.in prunes them).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from importlib import metadata
from pathlib import Path

import pytest

import bias_validity

REPO = Path(__file__).resolve().parents[1]
LAYERS = ("probes", "psychometrics", "analyses", "simulate", "reports", "cli")
#: What a build reads from the repository root besides the layer folders.
BUILD_FILES = ("pyproject.toml", "README.md", "MANIFEST.in", "__init__.py", "py.typed")


def _python(code: str, *, cwd: Path, path: Path | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if path is not None:
        env["PYTHONPATH"] = str(path)
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_installed_distribution_declares_one_top_level_name():
    dist = metadata.distribution("bias-validity")
    assert dist.read_text("top_level.txt").split() == ["bias_validity"]
    owners = {name for name, dists in metadata.packages_distributions().items() if "bias-validity" in dists}
    assert owners == {"bias_validity"}
    assert dist.entry_points.select(group="console_scripts")["bias-validity"].value == "bias_validity.cli:main"


def test_the_tests_see_no_layer_folder_as_a_top_level_name():
    """Run from the repository root, the folders would shadow the installed package (conftest.py keeps them out)."""
    import importlib.util

    assert {n: importlib.util.find_spec(n) for n in LAYERS} == dict.fromkeys(LAYERS)


def test_layer_folders_are_subpackages_and_not_top_level_names(tmp_path):
    """Outside the repository (no folder of it on sys.path) only bias_validity resolves to this project."""
    code = (
        "import importlib.util, json, bias_validity.probes\n"
        f"print(json.dumps({{n: getattr(importlib.util.find_spec(n), 'origin', None) for n in {list(LAYERS)!r}}}))\n"
        "print(bias_validity.probes.__file__)"
    )
    run = _python(code, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    specs, probes_file = run.stdout.splitlines()
    root = Path(bias_validity.__file__).parent
    leaked = {n: o for n, o in json.loads(specs).items() if o is not None and Path(o).is_relative_to(root)}
    assert leaked == {}
    assert Path(probes_file) == root / "probes" / "__init__.py"


@pytest.fixture(scope="module")
def source(tmp_path_factory) -> Path:
    """A copy of what a build reads, tests included, so the sdist shows what it keeps out (nothing is written into
    the repository)."""
    src = tmp_path_factory.mktemp("src") / "bias-validity"
    keep = {*BUILD_FILES, *LAYERS, "tests"}
    shutil.copytree(
        REPO,
        src,
        ignore=lambda d, names: [n for n in names if (Path(d) == REPO and n not in keep) or n == "__pycache__"],
    )
    return src


@pytest.fixture(scope="module")
def wheel(source, tmp_path_factory) -> Path:
    """A regular wheel built from a copy of the sources."""
    src = source
    out = tmp_path_factory.mktemp("wheel")
    cmd = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), str(src)]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    (path,) = out.glob("bias_validity-*.whl")
    return path


def test_wheel_holds_only_bias_validity_with_every_module_and_data_file(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"bias_validity"}
    shipped = {n.removeprefix("bias_validity/") for n in names if n.startswith("bias_validity/")}
    sources = {
        str(p.relative_to(REPO))
        for layer in LAYERS
        for p in (REPO / layer).rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }
    assert sources - shipped == set()  # every module, stimulus file, reference table and stylesheet
    assert {"__init__.py", "py.typed"} <= shipped


@pytest.fixture(scope="module")
def sdist(source, tmp_path_factory) -> list[str]:
    """The names in an sdist built from the copy, relative to its top folder."""
    import tarfile

    out = tmp_path_factory.mktemp("sdist")
    code = f"from setuptools import build_meta; print(build_meta.build_sdist({str(out)!r}))"
    run = subprocess.run([sys.executable, "-c", code], cwd=source, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    (path,) = out.glob("bias_validity-*.tar.gz")
    with tarfile.open(path) as archive:
        return [name.partition("/")[2] for name in archive.getnames()]


def test_sdist_ships_the_package_and_no_tests(sdist, wheel):
    assert not [n for n in sdist if n == "tests" or n.startswith("tests/")]  # a half suite would not run
    assert {"pyproject.toml", "README.md", "PKG-INFO", "py.typed"} <= set(sdist)
    in_wheel = {
        n.removeprefix("bias_validity/") for n in zipfile.ZipFile(wheel).namelist() if n.startswith("bias_validity/")
    }
    assert in_wheel - set(sdist) == set()  # the sdist builds the same wheel: every module and data file is in it


def test_regular_install_imports_and_runs_outside_the_repository(wheel, tmp_path):
    target = tmp_path / "site"
    cmd = [sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target), str(wheel)]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    code = (  # every packaged data file is read through the package's own name
        "import bias_validity as bv\n"
        "from bias_validity.analyses.models_meta import llama_example\n"
        "from bias_validity.simulate import simulate_responses\n"
        "from bias_validity.analyses.report import build_report\n"
        "from bias_validity.cli import build_parser\n"
        "from bias_validity.probes.stimuli import load_dimensions\n"
        "from bias_validity.psychometrics import human_iat_reference\n"
        "from bias_validity.reports import render_html\n"
        "build_parser()\n"
        "print(bv.__file__)\n"
        "print(len(load_dimensions()), len(human_iat_reference()), len(llama_example()))\n"
        "print(len(render_html(build_report(simulate_responses(seed=0)))))\n"
    )
    run = _python(code, cwd=tmp_path, path=target)
    assert run.returncode == 0, run.stderr
    where, sizes, page = run.stdout.splitlines()
    assert Path(where).is_relative_to(target)
    assert all(int(n) > 0 for n in sizes.split()) and int(page) > 10_000


def test_readme_test_command_is_what_ci_runs():
    """The README's second command installs what the tests need and runs them; CI calls exactly it."""
    block = (REPO / "README.md").read_text().split("```")[1].strip().splitlines()
    assert len(block) == 2 and block[1] == "scripts/test"
    assert "scripts/test" in (REPO / ".ci" / "run").read_text().splitlines()
    assert (REPO / "scripts" / "test").stat().st_mode & 0o111  # executable
