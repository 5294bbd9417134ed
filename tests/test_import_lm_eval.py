"""`bias-validity import --from lm-eval`: a real `lm_eval --log_samples --limit 20` run of CrowS-Pairs (English)
against the packaged SmolLM2 (lm-eval's ``hf`` model on the converted model directory), its samples file imported
as ``logprob`` responses, then checked against the log itself and against lm-eval's own aggregate.

CrowS-Pairs cannot be downloaded here: the task is lm-eval's ``crows_pairs_english`` (its YAML included, so its
``utils.py`` computes ``pct_stereotype`` and ``likelihood_diff``) on the 26 rows of
``tests/data/crows_pairs_sample.jsonl`` (see ``crows_pairs_sample.md`` beside it).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from bias_validity.analyses.summary import sc_table
from bias_validity.cli import main
from bias_validity.probes.backends.model_cache import converted_model_dir
from bias_validity.probes.schema import response_id
from bias_validity.probes.store import read_responses

DATA = Path(__file__).parent / "data" / "crows_pairs_sample.jsonl"
TASK = "crows_pairs_english_sample"
LIMIT = 20
KEY = ["model", "dimension", "method", "template_id", "item_id", "order", "session", "rep"]


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> tuple[Path, Path]:
    """The samples file and the results file of one lm_eval run."""
    spec = importlib.util.find_spec("lm_eval")
    assert spec is not None, "lm-eval is not installed: pip install -e '.[test]'"
    original = Path(spec.origin).parent / "tasks" / "crows_pairs" / "crows_pairs_english.yaml"
    tasks = tmp_path_factory.mktemp("tasks")
    # lm-eval's own task, on the local sample instead of the hub's dataset (JSON is also YAML)
    override = {
        "include": str(original),
        "task": TASK,
        "tag": [],
        "dataset_path": "json",
        "dataset_name": None,
        "dataset_kwargs": {"data_files": {"test": str(DATA)}},
    }
    (tasks / f"{TASK}.yaml").write_text(json.dumps(override, indent=1))
    out = tmp_path_factory.mktemp("lm_eval")
    model = converted_model_dir("smollm2")
    cmd = [
        sys.executable,
        "-m",
        "lm_eval",
        "--model",
        "hf",
        "--model_args",
        f"pretrained={model},dtype=float32",
        "--device",
        "cpu",
        "--batch_size",
        "8",
        "--tasks",
        TASK,
        "--include_path",
        str(tasks),
        "--limit",
        str(LIMIT),
        "--log_samples",
        "--output_path",
        str(out),
    ]
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "HF_DATASETS_CACHE": str(out / "datasets"),
        "TOKENIZERS_PARALLELISM": "false",
    }
    done = subprocess.run(cmd, env=env, cwd=out, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    (samples,) = out.glob(f"*/samples_{TASK}_*.jsonl")
    (results,) = samples.parent.glob("results_*.json")
    return samples, results


@pytest.fixture(scope="module")
def imported(run, tmp_path_factory) -> Path:
    store = tmp_path_factory.mktemp("store") / "study.sqlite"
    assert main(["import", str(run[0]), "--from", "lm-eval", "--out", str(store)]) == 0
    return store


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_one_logprob_row_per_document_with_the_logs_values(run, imported):
    samples, _ = run
    log = _lines(samples)
    data = _lines(DATA)
    back = read_responses(imported)
    assert len(back) == len(log) == LIMIT
    assert set(back["method"]) == {"logprob"} and set(back["status"]) == {"ok"}
    assert set(back["model"]) == {f"hf:{converted_model_dir('smollm2').name}"}
    assert set(back["template_id"]) == {TASK} and set(back["session"]) == {1} and set(back["rep"]) == {0}
    assert back["item_id"].tolist() == [str(s["doc_id"]) for s in log]
    assert back["dimension"].tolist() == [d["bias_type"] for d in data[:LIMIT]]
    # the log-likelihoods lm-eval wrote as strings: sent_more (stereotype) first, sent_less second
    first = [float(s["filtered_resps"][0][0]) for s in log]
    second = [float(s["filtered_resps"][1][0]) for s in log]
    assert back["score"].tolist() == [a - b for a, b in zip(first, second, strict=True)]
    assert back["consistent"].tolist() == [int(s["pct_stereotype"]) for s in log]
    assert back["score"].abs().tolist() == pytest.approx([s["likelihood_diff"] for s in log], abs=1e-9)
    # the schema's direction: score = log P(consistent) - log P(inconsistent), consistent = score > 0
    assert ((back["score"] > 0).astype(int) == back["consistent"]).all()
    assert json.loads(back["prompt"].iloc[0]) == [data[0]["sent_more"], data[0]["sent_less"]]
    assert back["response_id"].tolist() == [response_id(**r) for r in back[KEY].to_dict("records")]


def test_the_sc_is_lm_evals_pct_stereotype(run, imported):
    """The study's SC per dimension is the share of pct_stereotype; over all documents, lm-eval's own aggregate."""
    samples, results = run
    reported = json.loads(results.read_text())["results"][TASK]
    back = read_responses(imported)
    assert back["consistent"].mean() == pytest.approx(reported["pct_stereotype,none"], abs=1e-12)
    assert back["score"].abs().mean() == pytest.approx(reported["likelihood_diff,none"], abs=1e-9)
    table = sc_table(back).set_index("dimension")
    log = pd.DataFrame({"bias_type": [s["doc"]["bias_type"] for s in _lines(samples)]})
    log["pct"] = [s["pct_stereotype"] for s in _lines(samples)]
    for dimension, share in log.groupby("bias_type")["pct"].mean().items():
        assert table.loc[dimension, "sc"] == pytest.approx(share, abs=1e-12)


def _rewrite(samples: Path, folder: Path, change) -> Path:
    """A copy of the samples file (results file beside it) with ``change`` applied to each record."""
    folder.mkdir()
    copy = folder / samples.name
    for results in samples.parent.glob("results_*.json"):
        (folder / results.name).write_text(results.read_text())
    copy.write_text("".join(json.dumps(change(i, r)) + "\n" for i, r in enumerate(_lines(samples))))
    return copy


def _as_written(index: int, record: dict) -> dict:
    """Log-likelihoods as numbers, as tuple text, or in ``resps`` only: every way a version writes them."""
    pairs = [[float(ll), greedy == "True"] for ll, greedy in record["filtered_resps"]]
    if index % 3 == 0:
        return {**record, "filtered_resps": pairs}
    if index % 3 == 1:
        return {**record, "filtered_resps": [f"({ll}, {greedy})" for ll, greedy in pairs]}
    return {k: v for k, v in record.items() if k != "filtered_resps"}


def test_log_likelihoods_are_read_however_they_are_written(run, imported, tmp_path):
    copy = _rewrite(run[0], tmp_path / "written", _as_written)
    store = tmp_path / "study.sqlite"
    assert main(["import", str(copy), "--from", "lm-eval", "--out", str(store)]) == 0
    assert read_responses(store)["score"].tolist() == read_responses(imported)["score"].tolist()


def test_a_non_finite_log_likelihood_is_kept_as_an_error(run, tmp_path):
    def broken(i, r):
        return {**r, "filtered_resps": [["nan", "False"], r["filtered_resps"][1]]} if i == 4 else r

    store = tmp_path / "study.sqlite"
    assert (
        main(["import", str(_rewrite(run[0], tmp_path / "nan", broken)), "--from", "lm-eval", "--out", str(store)]) == 0
    )
    back = read_responses(store)
    assert len(back) == LIMIT and back["status"].tolist().count("error") == 1
    assert back.loc[4, "status"] == "error" and pd.isna(back.loc[4, "consistent"]) and pd.isna(back.loc[4, "score"])


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda i, r: {**r, "filtered_resps": [["x", "False"], ["-1", "False"]]} if i == 2 else r,
            "line 3: field 'filtered_resps': 'x' is not a log-likelihood",
        ),
        (
            lambda i, r: {**r, "pct_stereotype": 1 - r["pct_stereotype"]} if i == 0 else r,
            "line 1: field 'pct_stereotype' is",
        ),
        (
            lambda i, r: {k: v for k, v in r.items() if k != "pct_stereotype"},
            "line 1: field 'pct_stereotype' is missing",
        ),
        (
            lambda i, r: {**r, "doc": {**r["doc"], "bias_type": None}} if i == 5 else r,
            "line 6: field 'dimension' is empty",
        ),
    ],
)
def test_bad_lines_are_one_line_naming_the_file_line_and_field(run, tmp_path, capsys, change, message):
    copy = _rewrite(run[0], tmp_path / "bad", change)
    store = tmp_path / "study.sqlite"
    assert main(["import", str(copy), "--from", "lm-eval", "--out", str(store)]) == 2
    err = capsys.readouterr().err.strip()
    assert f"{copy.name} {message}" in err and "\n" not in err
    assert not store.exists()


def test_without_its_results_file_the_model_is_set_by_hand(run, tmp_path, capsys):
    alone = tmp_path / "alone"
    alone.mkdir()
    copy = alone / run[0].name
    copy.write_text(run[0].read_text())
    store = tmp_path / "study.sqlite"
    assert main(["import", str(copy), "--from", "lm-eval", "--out", str(store)]) == 2
    assert "nothing gives model (lm-eval names it in the results_" in capsys.readouterr().err
    assert main(["import", str(copy), "--from", "lm-eval", "--set", "model=hf:smollm2", "--out", str(store)]) == 0
    assert set(read_responses(store)["model"]) == {"hf:smollm2"}
