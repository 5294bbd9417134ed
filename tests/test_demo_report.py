"""The demo end to end on the real packaged models (small design), and its report in headless Chromium."""

from __future__ import annotations

import json

import pytest
from _support.browser import check_report_in_browser

from bias_validity.analyses.study import read_study
from bias_validity.cli import main
from bias_validity.cli.demo import run_demo
from bias_validity.probes.schema import EXPECTED_IMPLICIT, response_id
from bias_validity.probes.store import ResponseStore

INJECTED = "<script>document.title='pwned'</script><img src=x onerror=\"document.body.dataset.pwned=1\">"


@pytest.fixture(scope="module")
def demo(tmp_path_factory, smollm2, gemma):  # the fixtures make sure both converted models are cached
    out = tmp_path_factory.mktemp("demo")
    result = run_demo(out, dimensions=["gender_career", "race"], items_per_dimension=2, progress=False)
    return out, result


def test_demo_writes_store_summary_fit_and_reports(demo):
    out, result = demo
    assert {p.name for p in result.files} == {"summary.json", "fit.nc", "report.html", "report.md"}
    study = read_study(out / "study.sqlite")
    models = set(study.responses["model"])
    assert models == {"hf:SmolLM2-135M-Instruct-Q4_1", "hf:gemma-3-270m-Q4_K_M", "glove:6B-50d"}
    gemma_methods = set(study.responses.loc[study.responses["model"] == "hf:gemma-3-270m-Q4_K_M", "method"])
    assert gemma_methods == {"logprob", "embedding"}
    skipped = study.skipped.groupby("model")["method"].apply(set).to_dict()
    assert skipped["hf:gemma-3-270m-Q4_K_M"] == {"implicit", "ablated", "explicit", "reflection"}
    assert skipped["glove:6B-50d"] == {"implicit", "ablated", "explicit", "reflection", "logprob"}
    assert study.skipped["reason"].str.len().min() > 20
    cells = json.loads((out / "summary.json").read_text())
    smol = {(c["dimension"], c["method"]) for c in cells if c["model"].startswith("hf:SmolLM2")}
    methods = {"implicit", "ablated", "explicit", "reflection", "logprob", EXPECTED_IMPLICIT, "embedding"}
    assert smol == {(d, m) for d in ("gender_career", "race") for m in methods}
    assert [q.question for q in result.report.questions] == ["Q1", "Q2", "Q3", "Q4", "Q5", "Q6"]
    markdown = (out / "report.md").read_text()
    assert "Q4" in markdown and "hf:SmolLM2-135M-Instruct-Q4_1" in markdown


def test_rerun_resumes_without_asking_again(demo, tmp_path):
    out, first = demo
    before = read_study(out / "study.sqlite").responses
    again = run_demo(out, dimensions=["gender_career", "race"], items_per_dimension=2, progress=False)
    assert sum(s.written for s in again.collected) == 0
    after = read_study(out / "study.sqlite").responses
    assert after["response_id"].tolist() == before["response_id"].tolist()


def test_report_with_injected_answer_renders_safely_in_chromium(demo, tmp_path):
    out, result = demo
    # the only refusal of its model x method, so the report's examples are sure to show it
    key = dict(
        model="hf:SmolLM2-135M-Instruct-Q4_1",
        dimension="race",
        method="embedding",
        template_id="injected",
        item_id="race-01",
        order="-",
        session=1,
        rep=0,
    )
    with ResponseStore(out / "study.sqlite") as store:
        store.write([{**key, "response_id": response_id(**key), "status": "refusal", "raw_response": INJECTED}])
    html = tmp_path / "report.html"
    # a refusal is no answer the fit reads, so the saved fit still matches; the exit status is its gate's
    expected = 0 if result.report.diagnostics["passed"] else 1
    assert main(["report", str(out / "study.sqlite"), "--fit", str(out / "fit.nc"), "--out", str(html)]) == expected
    check = check_report_in_browser(html, tmp_path / "chromium", min_images=3)
    assert [row[0].split()[0] for row in check.verdict_rows] == ["Q1", "Q2", "Q3", "Q4", "Q5", "Q6"]
    assert INJECTED in [td.all_text() for td in check.dom.iter("td")]
