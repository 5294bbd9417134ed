"""Collection is resumable: SIGKILL a real ``bias-validity collect`` process at several points, run the same
command again, and the final table equals the one an uninterrupted run produced (``created_at`` aside)."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

import numpy as np
import pandas as pd
import pytest

from bias_validity.probes.store import read_responses

ARGS = [
    "--model",
    "hf:smollm2",
    "--dimensions",
    "gender_career",
    "--items-per-dimension",
    "1",
    "--methods",
    "implicit",
    "explicit",
    "reflection",
    "logprob",
    "--sessions",
    "1",
    "--reps",
    "2",
    "--batch-size",
    "8",
    "--no-progress",
]


def _collect(out, *, kill_after_rows: int | None = None) -> int | None:
    """Run the CLI; with ``kill_after_rows`` SIGKILL it once the store holds at least that many rows."""
    cmd = [
        sys.executable,
        "-c",
        "import sys; from bias_validity.cli import main; sys.exit(main())",
        "collect",
        *ARGS,
        "--out",
        str(out),
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env={**os.environ})
    if kill_after_rows is None:
        output, _ = proc.communicate(timeout=900)
        assert proc.returncode == 0, output.decode()[-2000:]
        return None
    deadline = time.monotonic() + 900
    rows = 0
    while time.monotonic() < deadline and proc.poll() is None:
        rows = _rows(out)
        if rows >= kill_after_rows:
            proc.send_signal(signal.SIGKILL)
            break
        time.sleep(0.05)
    proc.wait(timeout=60)
    return rows


def _rows(path) -> int:
    if not path.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=1) as conn:
            return conn.execute("SELECT count(*) FROM responses").fetchone()[0]
    except sqlite3.OperationalError:  # table not created yet, or locked for an instant
        return 0


def _table(path):
    return read_responses(path).drop(columns=["created_at"]).sort_values("response_id").reset_index(drop=True)


def _assert_same_table(left: pd.DataFrame, right: pd.DataFrame) -> None:
    """Equal row for row; log-probabilities (``score`` and the numbers inside ``params``) to 1e-4, since a forward
    pass in another process may differ in the last float bits."""
    exact = [c for c in left.columns if c not in ("score", "params")]
    pd.testing.assert_frame_equal(left[exact], right[exact])
    np.testing.assert_allclose(left["score"].astype(float), right["score"].astype(float), atol=1e-4)
    for a, b in zip(left["params"], right["params"], strict=True):
        pa, pb = json.loads(a), json.loads(b)
        assert pa.keys() == pb.keys()
        for key in pa:
            if isinstance(pa[key], float):
                assert pa[key] == pytest.approx(pb[key], abs=1e-4), key
            else:
                assert pa[key] == pb[key], key


@pytest.fixture(scope="module")
def reference(tmp_path_factory, smollm2):  # smollm2: the converted model is cached before the subprocesses start
    out = tmp_path_factory.mktemp("ref") / "study.sqlite"
    _collect(out)
    return _table(out)


def test_uninterrupted_run_covers_the_design(reference):
    assert len(reference) > 40
    assert set(reference["method"]) == {"implicit", "explicit", "reflection", "logprob"}
    assert reference["response_id"].is_unique


# rows land a chunk (8) at a time, so the last kill point stays a chunk short of the 60-row design
@pytest.mark.parametrize("kill_fraction", [0.05, 0.45, 0.75])
def test_sigkill_then_rerun_equals_uninterrupted_run(reference, tmp_path, kill_fraction):
    out = tmp_path / "study.sqlite"
    target = max(1, int(kill_fraction * len(reference)))
    rows_at_kill = _collect(out, kill_after_rows=target)
    assert rows_at_kill is not None and rows_at_kill < len(reference), "the process finished before the kill"
    _collect(out)
    _assert_same_table(_table(out), reference)
