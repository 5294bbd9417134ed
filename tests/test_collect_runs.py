"""A store's run resumes only under the settings it was collected with; other settings stop ``collect`` before it
asks anything (one line per differing field, exit 2), or go into a separate run with ``--new-run``; a study is
extended (more reps, sessions, items, dimensions, methods) within its run; analyses read one run.

The model is a tiny random Llama checkpoint with SmolLM2's tokenizer (tests/_support/tiny_model.py): a real
transformers directory that answers a design in a second.
"""

from __future__ import annotations

import json
import shutil
import sqlite3

import pandas as pd
import pytest
from _support.tiny_model import make_tiny_model, perturb_weights

import bias_validity
from bias_validity.cli import main
from bias_validity.probes.schema import response_id
from bias_validity.probes.store import ResponseStore, read_run

# the default token limit: the same commands run on the toolkit from before the run spec (and --max-new-tokens)
DESIGN = [
    "--dimensions",
    "gender_career",
    "--items-per-dimension",
    "1",
    "--methods",
    "implicit",
    "logprob",
    "embedding",
    "--sessions",
    "1",
    "--reps",
    "1",
    "--batch-size",
    "16",
    "--no-progress",
]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return make_tiny_model(tmp_path_factory.mktemp("model") / "tiny-llama")


@pytest.fixture(scope="module")
def collected(tmp_path_factory, tiny):
    out = tmp_path_factory.mktemp("collected") / "study.sqlite"
    assert main(["collect", "--model", f"hf:{tiny}", *DESIGN, "--out", str(out)]) == 0
    return out


@pytest.fixture
def study(collected, tmp_path):
    """A copy of the one-run store, for a test to rerun into."""
    return shutil.copy(collected, tmp_path / "study.sqlite")


def _collect(tiny, out, *extra: str) -> int:
    return main(["collect", "--model", f"hf:{tiny}", *DESIGN, *extra, "--out", str(out)])


def _rows(path) -> pd.DataFrame:
    """Every row of every run, as stored (created_at included), in id order."""
    with ResponseStore(path) as store:
        return store.read().sort_values("response_id").reset_index(drop=True)


def _spec_entries(path) -> int:
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT count(*) FROM runs").fetchone()[0]


def test_same_settings_resume_and_ask_nothing(tiny, study, capsys):
    before = _rows(study)
    assert len(before) == 30 and set(before["run"]) == {1}  # implicit 12, logprob 4 + 12 closed-set, embedding 2
    assert _collect(tiny, study) == 0
    out = capsys.readouterr().out
    assert f"{len(before)} already stored, 0 asked, 0 stored now" in out
    pd.testing.assert_frame_equal(_rows(study), before)


@pytest.mark.parametrize(
    ("option", "line"),
    [
        (["--seed", "1"], "seed: 0 in the store, 1 now"),
        (["--temperature", "1.0"], "temperature: 0.7 in the store, 1.0 now"),
        (["--max-new-tokens", "5"], "max_new_tokens: 24 in the store, 5 now"),
    ],
    ids=["seed", "temperature", "max_new_tokens"],
)
def test_a_changed_decoding_setting_stops_before_asking(tiny, study, capsys, option, line):
    before, entries = _rows(study), _spec_entries(study)
    assert _collect(tiny, study, *option) == 2
    err = capsys.readouterr().err
    assert "run 1 holds hf:tiny-llama's answers collected under other settings" in err
    assert f"\n  {line}\n" in err + "\n" and err.count("\n  ") == 1  # that field, and only that one
    pd.testing.assert_frame_equal(_rows(study), before)
    assert _spec_entries(study) == entries  # nothing recorded either


@pytest.mark.parametrize("field", ["toolkit_version", "templates", "stimuli"])
def test_a_store_built_by_other_prompts_is_not_resumed(tiny, study, capsys, field):
    """The stored spec edited as a store of another toolkit version, template set or stimulus file would hold."""
    from bias_validity.probes.run_spec import templates_digest

    old = {"toolkit_version": "0.0.1", "templates": "0123456789abcdef", "stimuli": {"gender_career": "fedcba"}}[field]
    with sqlite3.connect(study) as conn:
        spec = json.loads(conn.execute("SELECT spec FROM runs").fetchone()[0])
        now = spec[field]
        spec[field] = old
        conn.execute("UPDATE runs SET spec = ?", (json.dumps(spec),))
    assert now == {"toolkit_version": bias_validity.__version__, "templates": templates_digest()}.get(field, now)
    before = _rows(study)
    assert _collect(tiny, study) == 2
    err = capsys.readouterr().err
    if field == "stimuli":
        assert f'stimuli.gender_career: "fedcba" in the store, "{now["gender_career"]}" now' in err
    else:
        assert f'{field}: "{old}" in the store, "{now}" now' in err
    pd.testing.assert_frame_equal(_rows(study), before)


def test_other_weights_under_the_same_name_are_not_resumed(tiny, tmp_path, capsys):
    """A model directory saved again with other weights (as a re-quantised file would be) keeps its name."""
    model = shutil.copytree(tiny, tmp_path / "copy" / "tiny-llama")
    out = tmp_path / "study.sqlite"
    assert _collect(model, out) == 0
    before = _rows(out)
    perturb_weights(model)
    capsys.readouterr()
    assert _collect(model, out) == 2
    lines = [line.strip() for line in capsys.readouterr().err.splitlines()[1:]]
    assert len(lines) == 1 and lines[0].startswith("model_identity.weights_sha256: ")
    assert lines[0].endswith(" now") and " in the store, " in lines[0]
    pd.testing.assert_frame_equal(_rows(out), before)


def test_extending_the_study_resumes_the_same_run(tiny, study, capsys):
    before = _rows(study)
    extended = [
        "--dimensions",
        "gender_career",
        "race",
        "--items-per-dimension",
        "2",
        "--methods",
        "implicit",
        "logprob",
        "embedding",
        "explicit",
        "--sessions",
        "2",
        "--reps",
        "2",
        "--batch-size",
        "64",
        "--no-progress",
    ]
    assert main(["collect", "--model", f"hf:{tiny}", *extended, "--out", str(study)]) == 0
    assert f"{len(before)} already stored" in capsys.readouterr().out
    after = _rows(study)
    assert set(after["run"]) == {1}
    kept = after[after["response_id"].isin(before["response_id"])].reset_index(drop=True)
    pd.testing.assert_frame_equal(kept, before)  # nothing already stored is changed, created_at included
    grown = after.groupby("method")["response_id"].count()
    assert grown["implicit"] == 2 * 2 * 2 * 2 * (before["method"] == "implicit").sum()  # dims, items, sessions, reps
    assert set(grown.index) == {"implicit", "explicit", "logprob", "embedding"}


def test_a_new_run_keeps_both_and_analyses_read_one(tiny, study, capsys):
    before = _rows(study)
    assert _collect(tiny, study, "--temperature", "1.0", "--new-run") == 0
    rows = _rows(study)
    first, second = rows[rows["run"] == 1].reset_index(drop=True), rows[rows["run"] == 2]
    pd.testing.assert_frame_equal(first, before)
    assert len(second) == len(before) and set(second["temperature"].dropna()) == {1.0}
    assert set(second["response_id"]).isdisjoint(before["response_id"])
    # each answer of run 2 has the id of its design key in run 2
    key = ["model", "dimension", "method", "template_id", "item_id", "order", "session", "rep"]
    assert all(r["response_id"] == response_id(run=2, **{k: r[k] for k in key}) for _, r in second.iterrows())

    capsys.readouterr()
    assert main(["summary", str(study), "--json"]) == 0
    captured = capsys.readouterr()
    latest = json.loads(captured.out)
    assert (latest["run"], latest["runs"]) == (2, [1, 2])
    assert "holds runs 1, 2: analysing run 2 (the latest); --run N analyses another" in captured.err
    assert main(["summary", str(study), "--json", "--run", "1"]) == 0
    assert json.loads(capsys.readouterr().out)["run"] == 1
    assert sum(c["n"] for c in latest["cells"]) <= len(second)
    assert main(["summary", str(study), "--run", "3"]) == 2
    assert "holds no run 3; its runs are 1, 2" in capsys.readouterr().err

    # a plain rerun resumes the latest run under its settings; run 1's settings need --run 1
    assert _collect(tiny, study, "--temperature", "1.0") == 0
    assert "(run 2)" in capsys.readouterr().out
    assert _collect(tiny, study) == 2
    assert "temperature: 1.0 in the store, 0.7 now" in capsys.readouterr().err
    assert _collect(tiny, study, "--run", "1") == 0
    assert f"(run 1): {len(before)} questions: {len(before)} already stored" in capsys.readouterr().out
    study_1 = read_run(study, run=1)
    assert study_1.run == 1 and len(study_1.responses) == len(before)
    assert {s["run"] for s in study_1.runs} == {1}


_SCHEMA_1 = [
    "CREATE TABLE responses (response_id TEXT PRIMARY KEY, model TEXT, dimension TEXT, method TEXT, template_id TEXT, "
    'item_id TEXT, "order" TEXT, session INTEGER, rep INTEGER, seed INTEGER, temperature REAL, params TEXT, '
    "prompt TEXT, raw_response TEXT, status TEXT, consistent INTEGER, likert INTEGER, score REAL, created_at TEXT)",
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)",
    "CREATE TABLE runs (run_id INTEGER PRIMARY KEY AUTOINCREMENT, spec TEXT NOT NULL)",
    "CREATE TABLE skipped (model TEXT, method TEXT, reason TEXT, PRIMARY KEY (model, method))",
    "INSERT INTO meta VALUES ('schema_version', '1')",
]


def test_a_schema_1_store_becomes_run_1_unchanged_and_is_not_resumed_blindly(tiny, tmp_path, capsys):
    key = dict(
        model="hf:tiny-llama",
        dimension="gender_career",
        method="implicit",
        template_id="implicit-mask",
        item_id="gender_career-01",
        order="ab-xy",
        session=1,
        rep=0,
    )
    old_id = response_id(**key)
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as conn:
        for statement in _SCHEMA_1:
            conn.execute(statement)
        conn.execute(
            'INSERT INTO responses (response_id, model, dimension, method, template_id, item_id, "order", '
            "session, rep, status, consistent, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'ok', 1, "
            "'then')",
            (old_id, *key.values()),
        )
        old_spec = {"model": "hf:tiny-llama", "seed": 0, "temperature": 0.7, "max_new_tokens": 24}
        conn.execute("INSERT INTO runs (spec) VALUES (?)", (json.dumps(old_spec),))
        conn.execute("INSERT INTO skipped VALUES ('hf:tiny-llama', 'reflection', 'a reason')")
    study = read_run(path)
    assert study.run == 1 and study.responses["response_id"].tolist() == [old_id]
    assert study.responses.loc[0, "created_at"] == "then" and study.responses.loc[0, "run"] == 1
    skipped = [{"model": "hf:tiny-llama", "method": "reflection", "reason": "a reason"}]
    assert study.skipped.to_dict("records") == skipped
    assert [(s["run"], s["model"], s["seed"]) for s in study.runs] == [(1, "hf:tiny-llama", 0)]
    assert _collect(tiny, path) == 2  # the old spec does not say which templates, stimuli or version asked
    err = capsys.readouterr().err
    assert "templates: not recorded in the store" in err and "model_identity.weights_sha256: not recorded" in err
