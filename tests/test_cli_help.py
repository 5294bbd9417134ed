"""``--help`` is instant: building the parser imports none of the heavy libraries, and PyTensor's BLAS warning never
reaches the user."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from bias_validity.cli import build_parser
from bias_validity.psychometrics.bayes import FitConfig
from bias_validity.psychometrics.bayes.diagnostics import describe_gate

HEAVY = ("pandas", "torch", "pymc", "pytensor", "arviz", "matplotlib", "transformers", "scipy")
COMMANDS = sorted(next(a for a in build_parser()._actions if a.dest == "command").choices)


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("argv", [[], *([c] for c in COMMANDS)], ids=["bias-validity", *COMMANDS])
def test_help_imports_no_heavy_library(argv):
    code = (
        "import sys, json\n"
        "from bias_validity.cli import main\n"
        "try:\n"
        f"    main({argv!r} + ['--help'])\n"
        "except SystemExit as exc:\n"
        "    assert exc.code == 0, exc.code\n"
        f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))\n"
    )
    run = _run(code)
    assert run.returncode == 0, run.stderr
    *help_text, loaded = run.stdout.splitlines()
    assert json.loads(loaded) == []
    assert help_text[0].startswith("usage: bias-validity") and "Example" in "\n".join(help_text)


def test_fit_help_states_the_defaults_and_the_gate_it_applies():
    text = " ".join(build_parser()._subparsers._group_actions[0].choices["fit"].format_help().split())
    assert f"draws per chain (default {FitConfig().draws})" in text and describe_gate() in text


def test_pytensor_blas_warning_is_not_shown():
    """PyTensor warns where it first looks for a BLAS (at C compilation); on this machine it finds none."""
    run = _run("from bias_validity.psychometrics.bayes import sample\nimport pytensor\npytensor.config.blas__ldflags")
    assert run.returncode == 0, run.stderr
    assert "BLAS" not in run.stderr


def test_the_check_sees_a_heavy_import():
    run = _run(f"import sys, bias_validity.analyses.fit; print([m for m in {HEAVY!r} if m in sys.modules])")
    assert "pandas" in run.stdout


def _flags(command: str) -> set[str]:
    sub = build_parser()._subparsers._group_actions[0].choices[command]
    return {flag for action in sub._actions for flag in action.option_strings}


def test_each_command_takes_the_analysis_flags_it_uses():
    analysis = {"--ci", "--n-resamples", "--seed"}
    assert analysis | {"--gap-rope", "--chance-margin"} <= _flags("report")
    assert analysis & _flags("summary") == {"--ci", "--n-resamples", "--seed"}
    assert {"--ci", "--chance-margin", "--seed"} <= _flags("fit") and "--n-resamples" not in _flags("fit")
    assert not any("hdi" in flag for command in ("report", "fit", "summary") for flag in _flags(command))


def test_analysis_flags_default_to_the_analysis_config_and_build_it():
    from bias_validity.analyses.config import AnalysisConfig
    from bias_validity.cli._options import analysis_config, analysis_defaults, fit_config
    from bias_validity.psychometrics.estimands import Thresholds

    defaults = AnalysisConfig()
    assert analysis_defaults() == {k: getattr(defaults, k) for k in ("ci", "n_resamples", "seed")}
    parser = build_parser()
    for argv in (["report", "s.sqlite", "--out", "r.md"], ["summary", "s.sqlite"], ["fit", "s.sqlite"]):
        assert analysis_config(parser.parse_args(argv)) == defaults, argv
    argv = ["report", "s.sqlite", "--out", "r.md", "--ci", "0.9", "--n-resamples", "500"]
    args = parser.parse_args([*argv, "--seed", "3", "--chance-margin", "0.1"])
    expected = AnalysisConfig(ci=0.9, n_resamples=500, seed=3, thresholds=Thresholds(chance_margin=0.1))
    assert analysis_config(args) == expected and fit_config(args).seed == 3  # one seed: bootstraps and sampler
