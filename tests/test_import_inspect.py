"""`bias-validity import --from inspect`: a real inspect_ai evaluation of a small bias task (implicit questions from the
project's stimuli, scored C/I by the project's parser, 2 epochs) against llama-cpp-python's server serving the
packaged SmolLM2, through inspect's OpenAI-compatible provider; its log imported, then analysed by Q1, whose
test-retest compares the epochs (each epoch is a session)."""

from __future__ import annotations

import json
import subprocess
import sys

import pandas as pd
import pytest
from _support.inspect_bias_task import implicit_samples, implicit_task
from inspect_ai import eval as inspect_eval
from inspect_ai.log import read_eval_log, read_eval_log_samples, write_eval_log

from bias_validity.analyses.questions.reliability import reliability
from bias_validity.analyses.study import read_study
from bias_validity.cli import main
from bias_validity.probes.backends.local_server import serve_gguf
from bias_validity.probes.inspect_log import INSTALL_HINT, code_score
from bias_validity.probes.schema import response_id
from bias_validity.probes.store import read_responses

EPOCHS = 2
#: the design key from the samples' metadata (model, session and rep come from the log: model, epoch, 0)
MAP = [f"metadata.{c}={c}" for c in ("dimension", "method", "template_id", "item_id", "order")]
KEY = ["model", "dimension", "method", "template_id", "item_id", "order", "session", "rep"]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with serve_gguf(tmp_path_factory.mktemp("llama")) as served:
        yield served


def _evaluate(server, task, log_dir) -> str:
    """Run ``task`` against the server through inspect's OpenAI-compatible provider; the log's path."""
    with pytest.MonkeyPatch.context() as env:
        env.setenv("LLAMA_API_KEY", "unused")  # the provider wants a key; llama-cpp-python checks none
        (log,) = inspect_eval(
            task,
            model=f"openai-api/llama/{server.model}",
            model_base_url=server.base_url,
            log_dir=str(log_dir),
            log_format="eval",
            display="none",
            temperature=0.7,
            max_tokens=24,
            max_connections=2,
        )
    return log.location


@pytest.fixture(scope="module")
def samples():
    """Five age items in two orders (Q1's item-cluster interval needs five items)."""
    return implicit_samples("age", items=5, orders=("ab-xy", "ba-yx"))


@pytest.fixture(scope="module")
def finished(server, samples, tmp_path_factory) -> str:
    return _evaluate(server, implicit_task(samples, epochs=EPOCHS), tmp_path_factory.mktemp("logs"))


@pytest.fixture(scope="module")
def imported(finished, tmp_path_factory):
    store = tmp_path_factory.mktemp("store") / "study.sqlite"
    assert main(["import", finished, "--from", "inspect", "--map", *MAP, "--out", str(store)]) == 0
    return store


def _log_rows(path: str, *, partial: bool = False) -> pd.DataFrame:
    """What the log says of each sample x epoch, read with inspect's own reader."""
    rows = []
    for s in read_eval_log_samples(path, all_samples_required=not partial):
        score = (s.scores or {}).get("stereotype_consistent")
        status, consistent = ("error", None) if score is None else code_score(score.value, score.metadata, where="")
        rows.append(
            dict(
                item_id=s.metadata["item_id"],
                order=s.metadata["order"],
                session=s.epoch,
                status=status,
                consistent=consistent,
                raw_response=None if score is None else score.answer,
                value=None if score is None else score.value,
            )
        )
    return pd.DataFrame(rows).sort_values(["item_id", "order", "session"], ignore_index=True)


def test_one_row_per_sample_and_epoch_with_the_logs_scores(finished, imported, samples):
    header = read_eval_log(finished, header_only=True)
    assert header.status == "success"
    back = read_responses(imported).sort_values(["item_id", "order", "session"], ignore_index=True)
    log = _log_rows(finished)
    assert len(back) == len(samples) * EPOCHS == len(log) == 20
    assert set(back["session"]) == {1, 2} and set(back["rep"]) == {0}  # each epoch a test-retest occasion
    assert set(back["model"]) == {header.eval.model} == {"openai-api/llama/smollm2"}
    assert set(back["template_id"]) == {"implicit-mask"} and set(back["method"]) == {"implicit"}
    assert back["item_id"].tolist() == log["item_id"].tolist() and back["order"].tolist() == log["order"].tolist()
    assert back["status"].tolist() == log["status"].tolist()
    assert back["consistent"].astype(object).where(back["consistent"].notna(), None).tolist() == [
        None if pd.isna(c) else int(c) for c in log["consistent"]
    ]
    assert back["raw_response"].tolist() == log["raw_response"].tolist()
    assert set(log["value"]) <= {"C", "I", "N"} and log["value"].isin(["C", "I"]).any()
    assert (back["temperature"] == 0.7).all()
    prompt = json.loads(back["prompt"].iloc[0])
    assert [m["role"] for m in prompt] == ["user", "assistant", "user"] and "<mask>" in prompt[-1]["content"]
    assert back["response_id"].tolist() == [response_id(**r) for r in back[KEY].to_dict("records")]


def test_q1_reports_test_retest_across_the_epochs(imported):
    study = read_study(imported)
    figures = reliability(study).figures
    rows = study.responses
    ok = rows[(rows["status"] == "ok")].astype({"consistent": float})
    sc = ok.groupby("session")["consistent"].mean()
    (shift,) = figures[figures["measure"] == "session_shift (1 - 2)"].itertuples()
    assert shift.dimension == "age" and shift.n == len(ok)
    assert shift.estimate == pytest.approx(sc[1] - sc[2], abs=1e-12)
    # the interval pairs the items answered (ok) in both epochs; SmolLM2 often names a word not offered, so fewer
    # than Q1's five items may carry it, and the note says so
    items = ok.groupby("item_id")["session"].nunique()
    if len(items) >= 5:
        assert shift.note == f"{len(items)} items, {(items == 2).sum()} shared"
    else:
        assert shift.note.startswith(f"{len(items)} item")
    assert not (figures["note"] == "needs >= 2 sessions").any()


def test_a_json_log_imports_the_same_rows(finished, imported, tmp_path):
    """inspect writes the same log as .json; the import reads it through inspect's reader alike."""
    as_json = tmp_path / "run.json"
    write_eval_log(read_eval_log(finished), str(as_json), format="json")
    store = tmp_path / "from_json.sqlite"
    assert main(["import", str(as_json), "--from", "inspect", "--map", *MAP, "--out", str(store)]) == 0
    assert read_responses(store).drop(columns="created_at").equals(read_responses(imported).drop(columns="created_at"))


def test_an_unfinished_log_is_refused_unless_partial(server, samples, tmp_path, capsys):
    failing = samples[2].id
    path = _evaluate(server, implicit_task(samples[:4], epochs=1, fail_on=failing), tmp_path / "logs")
    assert read_eval_log(path, header_only=True).status == "error"
    store = tmp_path / "partial.sqlite"
    capsys.readouterr()
    assert main(["import", path, "--from", "inspect", "--map", *MAP, "--out", str(store)]) == 2
    err = capsys.readouterr().err.strip()
    assert "the evaluation did not finish (status 'error'" in err and "--partial" in err and "\n" not in err
    assert not store.exists()
    assert main(["import", path, "--from", "inspect", "--partial", "--map", *MAP, "--out", str(store)]) == 0
    back = read_responses(store)
    log = _log_rows(path, partial=True)
    assert len(back) == len(log) >= 1
    failed = back[back["item_id"] + "/" + back["order"] == failing]
    assert failed["status"].tolist() == ["error"] and failed["consistent"].isna().all()  # kept, not dropped
    assert json.loads(failed["params"].iloc[0])["inspect_error"].startswith("RuntimeError")


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (MAP[1:], "nothing gives dimension"),
        ([*MAP, "metadata.colour=score"], "--map metadata.colour=score: the log has no field 'metadata.colour'"),
        ([*MAP, "score.judge=consistent"], "--map score.judge=consistent: the log has no scorer 'judge'"),
        (MAP[:4], "have the same design key"),  # orders left out: the two orders of an item collide
    ],
)
def test_each_mistake_is_one_line_naming_the_log(finished, tmp_path, capsys, options, message):
    store = tmp_path / "study.sqlite"
    assert main(["import", finished, "--from", "inspect", "--map", *options, "--out", str(store)]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err and ".eval" in err
    assert not store.exists()


def test_without_inspect_ai_the_import_says_what_to_install(tmp_path):
    """inspect_ai is an optional extra: hidden from a fresh interpreter, the import fails in one line."""
    log = tmp_path / "run.eval"
    log.write_bytes(b"PK\x03\x04")
    code = (
        "import sys\n"
        "sys.modules['inspect_ai'] = None\n"  # import inspect_ai now raises ImportError
        "from bias_validity.cli import main\n"
        f"sys.exit(main(['import', {str(log)!r}, '--from', 'inspect', '--out', {str(tmp_path / 's.sqlite')!r}]))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 2
    assert done.stderr.strip() == f"bias-validity import: error: {INSTALL_HINT}"
    assert "pip install 'bias-validity[inspect]'" in INSTALL_HINT
