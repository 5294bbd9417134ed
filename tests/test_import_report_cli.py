"""`bias-validity import` and `bias-validity report` end to end on real files (bias_validity.cli)."""

from __future__ import annotations

import html
import json

import pandas as pd
import pytest

from bias_validity.analyses.report import build_report
from bias_validity.analyses.result import Verdict
from bias_validity.analyses.study import Study
from bias_validity.cli import main
from bias_validity.probes.store import read_responses
from bias_validity.simulate import simulate_responses

INJECTED = "<script>document.title='pwned'</script>"


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    t = simulate_responses(dimensions=["age", "race"], n_items=6, refusal_rate=0.05, seed=0)
    t = t.copy()
    t.loc[t["status"] == "refusal", "raw_response"] = INJECTED
    return t


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".parquet"])
def test_import_round_trips_every_format(table, tmp_path, suffix, capsys):
    src = tmp_path / f"responses{suffix}"
    {
        ".csv": lambda p: table.to_csv(p, index=False),
        ".jsonl": lambda p: table.to_json(p, orient="records", lines=True),
        ".parquet": lambda p: table.to_parquet(p, index=False),
    }[suffix](src)
    store = tmp_path / "study.sqlite"
    assert main(["import", str(src), "--out", str(store)]) == 0
    back = read_responses(store)
    assert len(back) == len(table) and f"imported {len(table)} responses" in capsys.readouterr().out
    pd.testing.assert_series_equal(back["consistent"], table["consistent"], check_names=False)


@pytest.mark.parametrize(
    "content, message",
    [
        ('response_id,model\n"abc,def\n', "cannot be read as a .csv table"),
        ("", "cannot be read as a .csv table"),
        ("response_id,model,dimension\nx,m,age\n", "missing required column(s): method"),
    ],
)
def test_a_broken_csv_gives_one_line_error_exit_2_and_no_store(tmp_path, capsys, content, message):
    src = tmp_path / "broken.csv"
    src.write_text(content)
    store = tmp_path / "study.sqlite"
    assert main(["import", str(src), "--out", str(store)]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err
    assert list(tmp_path.iterdir()) == [src]  # no store, no partial file


def test_a_wrong_value_names_its_row_and_field(table, tmp_path, capsys):
    bad = table.copy()
    bad["status"] = bad["status"].astype(object)
    bad.loc[4, "status"] = "maybe"
    src = tmp_path / "bad.csv"
    bad.to_csv(src, index=False)
    assert main(["import", str(src), "--out", str(tmp_path / "s.sqlite")]) == 2
    assert "row 6, field 'status': 'maybe' is not one of" in capsys.readouterr().err
    assert not (tmp_path / "s.sqlite").exists()


@pytest.mark.parametrize("suffix", [".html", ".md"])
def test_report_without_fit_writes_every_verdict_and_escapes_model_text(table, tmp_path, suffix, capsys):
    src, store, out = tmp_path / "r.csv", tmp_path / "study.sqlite", tmp_path / f"report{suffix}"
    table.to_csv(src, index=False)
    assert main(["import", str(src), "--out", str(store)]) == 0
    assert main(["report", str(store), "--out", str(out), "--no-fit"]) == 0
    printed = capsys.readouterr().out
    text = out.read_text()
    for q in ("Q1", "Q2", "Q3", "Q4", "Q5", "Q6"):
        assert q in text and q in printed
    assert "models file" in text  # Q6 says what is missing
    if suffix == ".html":
        assert INJECTED not in text and html.escape(INJECTED) in text


def test_report_refuses_an_unknown_format(tmp_path, table, capsys):
    store = tmp_path / "study.sqlite"
    table.to_csv(tmp_path / "r.csv", index=False)
    main(["import", str(tmp_path / "r.csv"), "--out", str(store)])
    assert main(["report", str(store), "--out", str(tmp_path / "r.txt"), "--no-fit"]) == 2
    assert "unknown report format" in capsys.readouterr().err


def test_build_report_carries_examples_provenance_and_the_fit(table):
    cell = dict(quantity="gap_explicit_implicit", model="sim:model", method=None, mean=-0.4, p_direction=1.0)
    post = pd.DataFrame([{**cell, "dimension": d, "hdi_low": -0.5, "hdi_high": -0.3} for d in ("age", "race")])
    runs = [{"model": "sim:model", "seed": 11, "packages": {"torch": "x"}, "started_at": "2025-01-01T00:00:00"}]
    fit = type("Fit", (), {"quantities": post, "diagnostics": {"passed": True, "max_rhat": 1.0}})()
    rep = build_report(Study.from_responses(table, runs=runs), fit=fit)
    assert [q.question for q in rep.questions] == ["Q1", "Q2", "Q3", "Q4", "Q5", "Q6"]
    assert rep.questions[3].verdict is Verdict.SUPPORTED and "HDI" in set(rep.questions[3].figures["interval"])
    assert rep.provenance["seeds"] == [11] and rep.provenance["packages at collection"] == {"torch": "x"}
    assert INJECTED in set(rep.examples["raw_response"])  # kept raw: the renderer escapes
    assert {"refusal", "ok"} <= set(rep.examples["status"])
    assert rep.sc_table["refusal"].sum() == (table["status"] == "refusal").sum()
    json.dumps(rep.provenance)  # provenance is plain data


def test_build_report_refuses_an_empty_table():
    with pytest.raises(ValueError, match="holds no answers"):
        build_report(simulate_responses(seed=0).iloc[0:0])
