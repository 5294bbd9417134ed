"""summary, fit, report and compare take a store or a responses table (.csv, .jsonl, .parquet) directly, and answer
any other file in one line saying what it is. Real files, the real sampler (tiny run)."""

from __future__ import annotations

import contextlib
import io
import json
import sqlite3

import pandas as pd
import pytest

from bias_validity.cli import main
from bias_validity.probes.store import write_responses
from bias_validity.psychometrics.bayes import simulate_study
from bias_validity.simulate import cells_to_responses, simulate_responses

WRITE = {
    ".csv": lambda t, p: t.to_csv(p, index=False),
    ".jsonl": lambda t, p: t.to_json(p, orient="records", lines=True),
    ".parquet": lambda t, p: t.to_parquet(p, index=False),
}


def _run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    """The same answers as a store and as each table format."""
    folder = tmp_path_factory.mktemp("sources")
    table = simulate_responses(dimensions=["age", "race"], n_items=4, refusal_rate=0.05, seed=3)
    write_responses(table, folder / "study.sqlite")
    for suffix, write in WRITE.items():
        write(table, folder / f"responses{suffix}")
    return folder


@pytest.mark.parametrize("suffix", list(WRITE))
def test_summary_of_a_table_equals_the_summary_of_its_store(study, suffix):
    code, from_table, err = _run(["summary", str(study / f"responses{suffix}"), "--json"])
    assert code == 0, err
    _, from_store, _ = _run(["summary", str(study / "study.sqlite"), "--json"])
    assert json.loads(from_table)["cells"] == json.loads(from_store)["cells"]
    assert len(json.loads(from_table)["cells"]) == 2 * 6  # 2 dimensions x 6 methods


@pytest.mark.parametrize("suffix", list(WRITE))
def test_report_of_a_table_writes_every_verdict_and_creates_no_store(study, suffix, tmp_path):
    out = tmp_path / "report.md"
    code, stdout, err = _run(["report", str(study / f"responses{suffix}"), "--out", str(out), "--no-fit"])
    assert code == 0, err
    assert [line.split(":")[0] for line in stdout.splitlines()[:6]] == [
        "Q1 Reliability",
        "Q2 Convergent validity",
        "Q3 Framing (ablation)",
        "Q4 Explicit-implicit gap",
        "Q5 Self-reflection",
        "Q6 Scaling and alignment",
    ]
    assert out.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["report.md"]
    assert f"responses{suffix}" in out.read_text(encoding="utf-8")  # provenance names the file


def test_fit_and_compare_take_a_table(tmp_path):
    sim = simulate_study(
        units=2, traits=1, items=3, templates=1, orders=1, reps=8, seed=5, ordinal_methods=(), score_methods=()
    )
    sim = {k: v.rename(columns={"unit": "model", "trait": "dimension"}) for k, v in sim.items()}
    table = cells_to_responses(sim)
    src = tmp_path / "responses.csv"
    table.to_csv(src, index=False)
    fit = tmp_path / "fit.nc"
    code, stdout, err = _run(
        [
            "fit",
            str(src),
            "--json",
            "--out",
            str(fit),
            "--draws",
            "30",
            "--tune",
            "100",
            "--chains",
            "2",
            "--max-draws",
            "0",
        ]
    )
    assert code == 1, err  # 30 draws cannot pass the ESS gate; the fit ran on the table
    quantities = pd.DataFrame(json.loads(stdout)["quantities"])
    assert set(quantities.loc[quantities["quantity"] == "sc", "model"]) == set(table["model"])
    a, b = sorted(table["model"].unique())
    code, stdout, err = _run(["compare", str(src), "--fit", str(fit), "--models", a, b, "--json"])
    assert code == 1, err  # the saved fit failed its gate, so its comparison does too
    assert json.loads(stdout)["comparisons"][0]["dimension"] == table["dimension"].iloc[0]
    # a table whose answers differ from the fit's is refused, as a store would be
    changed = tmp_path / "changed.csv"
    table.iloc[5:].to_csv(changed, index=False)
    code, _, err = _run(["compare", str(changed), "--fit", str(fit), "--models", a, b])
    assert code == 2 and "was fitted to other answers" in err


def _fit_file(path):
    import xarray as xr

    xr.Dataset({"x": ("draw", [0.1, 0.2])}).to_netcdf(path)
    return path


def _foreign_sqlite(path):
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE people (name TEXT)")
    return path


NOT_A_STORE = {
    "fit.nc": (_fit_file, "a netCDF file, such as a saved fit: pass it as --fit"),
    "report.html": (
        lambda p: p.write_text("<!DOCTYPE html>\n<html><body>report</body></html>"),
        "an HTML page, such as a rendered report",
    ),
    "models.csv": (
        lambda p: p.write_text("model,family,parameters,training_tokens,aligned\na,g,8B,15T,no\n"),
        "a models file",
    ),
    "summary.json": (
        lambda p: p.write_text(json.dumps({"store": "x", "cells": []})),
        "the JSON that bias-validity summary prints",
    ),
    "people.sqlite": (_foreign_sqlite, "a SQLite database without a responses table"),
    "empty.sqlite": (lambda p: p.write_bytes(b""), "an empty file"),
    "notes.txt": (lambda p: p.write_text("some notes\n"), "a text file"),
    "export": (lambda p: p.write_text("response_id,model\nx,m\n"), "a table without the .csv extension"),
}


@pytest.mark.parametrize("command", ["summary", "fit", "report", "compare"])
@pytest.mark.parametrize("name", list(NOT_A_STORE))
def test_another_file_is_answered_in_one_line_and_left_as_it_was(tmp_path, command, name):
    make, what = NOT_A_STORE[name]
    path = tmp_path / name
    make(path)
    before = path.read_bytes()
    argv = {
        "summary": [],
        "fit": [],
        "report": ["--out", str(tmp_path / "r.md"), "--no-fit"],
        "compare": ["--models", "a", "b"],
    }[command]
    code, stdout, err = _run([command, str(path), *argv])
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1, err
    assert lines[0].startswith(f"bias-validity {command}: error: {path}: not a ") and what in lines[0]
    assert path.read_bytes() == before  # nothing written into it (a foreign SQLite file stays foreign)
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]


def test_a_directory_and_a_missing_file_are_one_line(tmp_path):
    code, _, err = _run(["summary", str(tmp_path)])
    assert code == 2 and "a directory" in err and len(err.strip().splitlines()) == 1
    code, _, err = _run(["summary", str(tmp_path / "nothing.sqlite")])
    assert code == 2 and "no such store or responses table" in err


def test_a_table_with_a_wrong_value_names_its_row_and_field(study, tmp_path):
    bad = pd.read_csv(study / "responses.csv", dtype=str, keep_default_na=False)
    bad.loc[3, "status"] = "maybe"
    src = tmp_path / "bad.csv"
    bad.to_csv(src, index=False)
    code, _, err = _run(["summary", str(src)])
    assert code == 2 and "row 5, field 'status': 'maybe' is not one of" in err


def test_a_models_file_naming_none_of_the_models_is_refused_before_fitting(study, tmp_path):
    models = tmp_path / "models.csv"
    models.write_text("# sizes\nmodel,family,parameters,training_tokens,aligned\nllama-3-8b,llama-3,8B,15T,no\n")
    code, _, err = _run(
        ["report", str(study / "responses.csv"), "--out", str(tmp_path / "r.md"), "--models-file", str(models)]
    )
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "line 3 is 'llama-3-8b'" in err and "they are: sim:model" in err
