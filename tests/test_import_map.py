"""`bias-validity import --map their=our --set column=value`: another tool's table, with its own column names and
without a constant column, imports without a hand-written converter; each mistake is one line naming it."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from bias_validity.cli import main
from bias_validity.probes.schema import is_reversed, response_id
from bias_validity.probes.store import read_responses
from bias_validity.simulate import simulate_responses

THEIRS = {"model": "llm", "method": "probe", "status": "outcome", "consistent": "stereotyped", "rep": "trial"}
MAP = [f"{theirs}={ours}" for ours, theirs in THEIRS.items()]


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    """A simulated study in a third-party layout: renamed columns, no session, no response_id, an extra column."""
    ours = simulate_responses(dimensions=["age", "race"], n_items=4, sessions=1, seed=3)
    theirs = ours.drop(columns=["response_id", "session"]).rename(columns=THEIRS)
    return theirs.assign(annotator="x")


def test_a_renamed_table_without_session_imports_and_is_analysed(table, tmp_path, capsys):
    src, store = tmp_path / "theirs.csv", tmp_path / "study.sqlite"
    table.to_csv(src, index=False)
    assert main(["import", str(src), "--map", *MAP, "--set", "session=1", "--out", str(store)]) == 0
    back = read_responses(store)
    assert len(back) == len(table) and set(back["session"]) == {1} and set(back["run"]) == {1}
    assert back["model"].tolist() == table["llm"].tolist()
    assert back["consistent"].tolist() == table["stereotyped"].astype("Int64").tolist()
    key = ["model", "dimension", "method", "template_id", "item_id", "order", "session", "rep"]
    derived = [response_id(**row) for row in back[key].to_dict("records")]
    assert back["response_id"].tolist() == derived  # the ids collection would give these answers
    capsys.readouterr()
    assert main(["summary", str(store), "--json"]) == 0
    cells = pd.DataFrame(json.loads(capsys.readouterr().out)["cells"])
    ok = back[(back["status"] == "ok") & back["consistent"].notna()].astype({"consistent": float})
    # the declared SC: the share consistent; for Likert ratings the mean of the statements' and reversals' shares
    polarity = ok["order"].map(is_reversed) & ok["method"].isin(["explicit", "reflection"])
    shares = ok.assign(polarity=polarity).groupby(["model", "dimension", "method", "polarity"])["consistent"].mean()
    expected = shares.groupby(["model", "dimension", "method"]).mean()
    got = cells.set_index(["model", "dimension", "method"])["sc"]
    assert len(got) == len(expected)
    for cell, sc in expected.items():
        assert got[tuple(map(str, cell))] == pytest.approx(sc, abs=1e-9)  # to_json keeps 10 digits


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--map", "name=model"], "theirs.csv: --map name=model: the table has no column 'name'"),
        (["--map", "llm=modell"], "theirs.csv: --map llm=modell: 'modell' is not a responses-table column"),
        (["--map", "llm"], "--map 'llm': write it as THEIRS=OURS"),
        (["--map", *MAP, "--set", "rep=0", "session=1"], "theirs.csv: --set rep=0: the table already has a column"),
        (["--map", *MAP, "--set", "sesion=1"], "theirs.csv: --set sesion=1: 'sesion' is not a responses-table column"),
        (["--map", *MAP], "no response_id column, and it cannot be derived without session (--map or --set them)"),
    ],
)
def test_each_mistake_is_one_line_and_nothing_is_written(table, tmp_path, capsys, options, message):
    src, store = tmp_path / "theirs.csv", tmp_path / "study.sqlite"
    table.to_csv(src, index=False)
    assert main(["import", str(src), *options, "--out", str(store)]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err
    assert not store.exists()


def test_repeated_map_and_set_flags_add_up(table, tmp_path):
    """``--map a=b --map c=d`` is ``--map a=b c=d``: each flag adds its pairs (the second used to replace the first)."""
    src, one, many = tmp_path / "theirs.csv", tmp_path / "one.sqlite", tmp_path / "many.sqlite"
    table.assign(batch="b1").to_csv(src, index=False)
    assert main(["import", str(src), "--map", *MAP, "--set", "session=2", "--out", str(one)]) == 0
    repeated = [arg for pair in MAP for arg in ("--map", pair)]
    assert main(["import", str(src), *repeated, "--set", "session=2", "--out", str(many)]) == 0
    assert read_responses(many).equals(read_responses(one))
    assert set(read_responses(many)["session"]) == {2}


def test_every_list_flag_of_every_command_accumulates():
    """No option that takes several values keeps only its last use: each one extends (or appends to) its list."""
    import argparse

    from bias_validity.cli import build_parser

    commands = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)).choices
    lists = [
        (name, action)
        for name, sub in commands.items()
        for action in sub._actions
        if action.option_strings and (action.nargs in ("+", "*") or isinstance(action, argparse._AppendAction))
    ]
    assert {(name, a.option_strings[0]) for name, a in lists} >= {("import", "--map"), ("collect", "--dimensions")}
    for name, action in lists:
        assert isinstance(action, (argparse._ExtendAction, argparse._AppendAction)), (name, action.option_strings)
