"""The top-level Python API: ``bv.read_study``, ``bv.fit``, ``bv.report_study`` and the rest, imported on first use."""

from __future__ import annotations

import json
import subprocess
import sys

import pandas as pd
import pytest

import bias_validity as bv
from bias_validity.probes.store import export_responses, write_responses

NAMES = {
    "read_study": "bias_validity.analyses.study",
    "as_study": "bias_validity.analyses.study",
    "Study": "bias_validity.analyses.study",
    "fit": "bias_validity.analyses.fit",
    "report_study": "bias_validity.pipeline",
    "build_report": "bias_validity.analyses.report",
    "write_report": "bias_validity.reports",
    "simulate_responses": "bias_validity.simulate",
    "AnalysisConfig": "bias_validity.analyses.config",
    "FitConfig": "bias_validity.psychometrics.bayes.config",
}


@pytest.fixture(scope="module")
def sources(tmp_path_factory):
    """One simulated study as a store and as the CSV table ``export`` writes from it."""
    folder = tmp_path_factory.mktemp("api")
    table = bv.simulate_responses(dimensions=["age", "race"], n_items=4, refusal_rate=0.05, seed=2)
    write_responses(table, folder / "study.sqlite")
    export_responses(folder / "study.sqlite", folder / "study.csv")
    return folder


@pytest.mark.parametrize("name", sorted(NAMES))
def test_every_public_name_is_listed_and_comes_from_its_module(name):
    assert name in bv.__all__ and name in dir(bv)
    value = getattr(bv, name)
    assert value.__module__.startswith(NAMES[name])
    assert getattr(sys.modules[NAMES[name]], value.__name__) is value


def test_fit_is_the_fit_of_a_study():
    from bias_validity.analyses.fit import fit_study

    assert bv.fit is fit_study


def test_import_is_instant_and_an_unknown_name_is_an_attribute_error():
    code = (
        "import sys, json, bias_validity as bv\n"
        "print(json.dumps([m for m in ('pandas', 'numpy', 'pymc', 'scipy') if m in sys.modules]))\n"
        "print(callable(bv.read_study), 'pandas' in sys.modules)\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    loaded, after = run.stdout.splitlines()
    assert json.loads(loaded) == [] and after == "True True"
    with pytest.raises(AttributeError):
        bv.no_such_name  # noqa: B018


def test_a_store_and_its_exported_table_open_as_the_same_study(sources):
    store, table = bv.read_study(sources / "study.sqlite"), bv.read_study(sources / "study.csv")
    assert isinstance(store, bv.Study) and isinstance(table, bv.Study)
    shared = sorted(set(store.responses.columns) & set(table.responses.columns))
    assert {"response_id", "model", "method", "status", "consistent", "likert", "score"} <= set(shared)

    def rows(study: bv.Study) -> pd.DataFrame:
        frame = study.responses[shared].sort_values("response_id").reset_index(drop=True)
        return frame.astype(object).where(frame.notna(), None)

    pd.testing.assert_frame_equal(rows(store), rows(table), check_dtype=False)
    assert store.models == table.models and len(store.ok) == len(table.ok)


def test_report_study_of_a_table_answers_the_six_questions(sources, tmp_path):
    report = bv.report_study(bv.read_study(sources / "study.csv"), out=tmp_path / "report.md")
    assert [q.question for q in report.questions] == ["Q1", "Q2", "Q3", "Q4", "Q5", "Q6"]
    assert report.posterior is None and (tmp_path / "report.md").stat().st_size > 0
    assert isinstance(bv.as_study(bv.simulate_responses(dimensions=["age"], seed=0)), bv.Study)
    assert bv.AnalysisConfig().ci == bv.FitConfig().hdi_prob
