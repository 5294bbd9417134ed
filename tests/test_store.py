"""The responses-table schema and the SQLite store: validation messages, no duplicates, error rows replaced."""

from __future__ import annotations

import sqlite3

import pandas as pd
import pytest

from bias_validity.probes.schema import SCHEMA_VERSION, response_id, validate_responses
from bias_validity.probes.store import ResponseStore, export_responses, read_responses, read_table_file, write_responses


def _row(rep: int = 0, status: str = "ok", consistent: int | None = 1, **over) -> dict:
    key = dict(
        model="hf:m",
        dimension="age",
        method="implicit",
        template_id="t1",
        item_id="age-01",
        order="ab-xy",
        session=1,
        rep=rep,
    )
    row = {
        **key,
        "response_id": response_id(**key),
        "status": status,
        "consistent": consistent,
        "raw_response": "Tiffany, Ethel",
        "prompt": "[]",
        "seed": 7,
        "temperature": 0.7,
    }
    row.update(over)
    return row


def test_response_id_is_stable_and_depends_on_every_key_field():
    base = _row()
    again = response_id(**{k: base[k] for k in base if k not in ("response_id",)})
    assert again == base["response_id"]
    assert response_id(**{**base, "session": 2}) != base["response_id"]
    assert response_id(**{**base, "rep": 1}) != base["response_id"]
    with pytest.raises(ValueError, match="missing: rep"):
        response_id(**{k: v for k, v in base.items() if k != "rep"})


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.drop(columns=["status"]), r"missing required column\(s\): status"),
        (lambda d: d.assign(status=["ok", "maybe"]), r"row 3, field 'status': 'maybe' is not one of"),
        (lambda d: d.assign(session=["1", "two"]), r"row 3, field 'session': 'two' is not a number"),
        (lambda d: d.assign(rep=[0, 1.5]), r"row 3, field 'rep': 1.5 is not an integer"),
        (lambda d: d.assign(model=["hf:m", None]), r"row 3, field 'model': required value is empty"),
        (lambda d: d.assign(status=["ok", "refusal"]), r"row 3, field 'status': a non-ok answer carries a stance"),
        (lambda d: d.assign(likert=[3, 9]), r"row 3, field 'likert': must be 1-5"),
        (lambda d: d.assign(response_id=["x", "x"]), r"row 3, field 'response_id': duplicated id"),
    ],
)
def test_validation_names_row_and_field(change, message):
    table = pd.DataFrame([_row(0), _row(1)])
    with pytest.raises(ValueError, match=message):
        validate_responses(change(table), source="in.csv")


def test_store_never_duplicates_and_replaces_only_error_rows(tmp_path):
    path = tmp_path / "s.sqlite"
    with ResponseStore(path) as store:
        assert store.write([_row(0), _row(1, status="error", consistent=None)]) == 2
        # the ok row is kept as it was; the error row is replaced by its retry
        assert store.write([_row(0, consistent=0), _row(1, consistent=0)]) == 1
        assert store.done_ids() == {_row(0)["response_id"], _row(1)["response_id"]}
        table = store.read()
    assert len(table) == 2
    assert table.set_index("rep")["consistent"].to_dict() == {0: 1, 1: 0}
    assert table["status"].tolist() == ["ok", "ok"]


def test_import_is_all_or_nothing_and_export_round_trips(tmp_path):
    bad = pd.DataFrame([_row(0), _row(1, status="unknown")])
    target = tmp_path / "study.sqlite"
    with pytest.raises(ValueError, match="row 3, field 'status'"):
        write_responses(bad, target, source="bad.csv")
    assert not target.exists()
    assert list(tmp_path.iterdir()) == []
    good = pd.DataFrame([_row(0), _row(1, status="refusal", consistent=None)])
    assert write_responses(good, target) == 2
    for ext in ("csv", "jsonl", "parquet"):
        out = tmp_path / f"r.{ext}"
        export_responses(target, out)
        back = validate_responses(read_table_file(out))
        pd.testing.assert_frame_equal(back, read_responses(target))
    with sqlite3.connect(target) as conn:
        assert conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone() == (str(SCHEMA_VERSION),)
