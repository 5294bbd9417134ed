"""Random responses tables and models files (hypothesis strategies), and the check that a report built from them
holds: it never raises, every verdict has a reason, and no summary sentence or reason prints NaN. Shared by
tests/test_property_reports.py (bounded examples) and bench/property_reports.py (a longer run)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
from hypothesis import strategies as st

from bias_validity.analyses.models_meta import match_models, read_models_meta
from bias_validity.analyses.report import build_report
from bias_validity.analyses.result import VERDICT_COLUMNS, Verdict
from bias_validity.probes.schema import (
    ATTRIBUTE_ORDERS,
    CHOICE_PREFIX,
    IMPLICIT_ORDERS,
    WEAT_ITEM,
    Method,
    Status,
    response_id,
    validate_responses,
)
from bias_validity.reports import render_csv, render_html, render_json, render_markdown

__all__ = ["MODEL_NAMES", "responses_tables", "models_files", "check_report"]

MODEL_NAMES = ("hf:base-8b", "hf:base-8b-instruct", "openai:big-70b@127.0.0.1:8000", "hf:big-70b-instruct", "glove:x")
_DIMENSIONS = ("age", "race", "science", "gender_career")
_SAMPLED = (Method.IMPLICIT.value, Method.ABLATED.value)
_LIKERT = (Method.EXPLICIT.value, Method.REFLECTION.value)
_SCORED = (Method.LOGPROB.value, Method.EMBEDDING.value)
_NOT_OK = tuple(s.value for s in Status if s is not Status.OK)
#: Sentences (and verdict reasons) that must never print a missing figure as NaN.
_NO_NAN = ("Q1", "Q2", "Q3", "Q4", "Q5", "Q6")


@st.composite
def responses_tables(draw: st.DrawFn) -> pd.DataFrame:
    """A validated responses table: random models, methods, dimensions, templates, items, orders and sessions,
    random statuses and missing cells (down to one item or one model), answers from random shares."""
    models = draw(st.lists(st.sampled_from(MODEL_NAMES), min_size=1, max_size=4, unique=True))
    methods = draw(st.lists(st.sampled_from([m.value for m in Method]), min_size=1, max_size=6, unique=True))
    dims = draw(st.lists(st.sampled_from(_DIMENSIONS), min_size=1, max_size=3, unique=True))
    n_items = draw(st.integers(1, 4))
    n_templates = draw(st.integers(1, 3))
    sessions = draw(st.integers(1, 2))
    reps = draw(st.integers(1, 3))
    orders = draw(st.lists(st.sampled_from(IMPLICIT_ORDERS), min_size=1, max_size=4, unique=True))
    not_ok = draw(st.sampled_from([0.0, 0.1, 0.5, 1.0]))
    missing = draw(st.sampled_from([0.0, 0.3, 0.7]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    rows = []
    for model in models:
        for method in methods:
            share = rng.uniform(0, 1)
            for dim in dims:
                items = [f"{dim}-{i + 1:02d}" for i in range(n_items)]
                if method == Method.EMBEDDING.value and rng.random() < 0.5:
                    items.append(WEAT_ITEM)
                templates = [f"{method}-{t + 1}" for t in range(1 if method in _SCORED else n_templates)]
                if method == Method.LOGPROB.value and rng.random() < 0.5:
                    templates.append(f"{CHOICE_PREFIX}{Method.IMPLICIT.value}-1")
                cell_orders = orders if method in _SAMPLED else list(ATTRIBUTE_ORDERS)
                for template in templates:
                    for item in items:
                        for order in cell_orders:
                            if rng.random() < missing:
                                continue
                            for session in range(1, sessions + 1):
                                for rep in range(reps):
                                    rows.append(
                                        _answer(
                                            rng, model, dim, method, template, item, order, session, rep, share, not_ok
                                        )
                                    )
    if not rows:  # every cell dropped: keep one answer, so the table is never empty
        rows.append(
            _answer(rng, models[0], dims[0], methods[0], f"{methods[0]}-1", f"{dims[0]}-01", orders[0], 1, 0, 0.5, 0.0)
        )
    return validate_responses(pd.DataFrame(rows), source="random table")


def _answer(rng, model, dim, method, template, item, order, session, rep, share, not_ok) -> dict[str, object]:
    key = dict(
        model=model, dimension=dim, method=method, template_id=template, item_id=item, order=order, session=session
    )
    row: dict[str, object] = {**key, "rep": rep, "response_id": response_id(**key, rep=rep)}
    if rng.random() < not_ok:
        return {**row, "status": _NOT_OK[rng.integers(len(_NOT_OK))], "raw_response": "<b>no</b> | `x`"}
    consistent = int(rng.random() < share)
    row.update(status=Status.OK.value, consistent=consistent, raw_response="ok")
    if method in _LIKERT:
        row["likert"] = int(rng.integers(4, 6)) if consistent else int(rng.integers(1, 4))
    if method in _SCORED:
        row["score"] = float(rng.normal(0.5 if consistent else -0.5, 1.0))
        row["consistent"] = None if item == WEAT_ITEM else int(row["score"] > 0)
    return row


@st.composite
def models_files(draw: st.DrawFn) -> str | None:
    """A models file's CSV text (or None: no models file): random rows naming the table's models or others,
    parameters and tokens written bare or with unit suffixes, one or two families, random alignment."""
    if draw(st.booleans()):
        return None
    names = draw(
        st.lists(
            st.sampled_from([*MODEL_NAMES, "BASE-8B", "big-70b", "gpt-2"]),
            min_size=1,
            max_size=5,
            unique_by=lambda n: n.split(":", 1)[-1].split("@")[0].lower(),
        )
    )
    suffixed = draw(st.booleans())
    sizes = ["8B", "70B", "1.5T", "135M"] if suffixed else ["8", "70", "1500", "0.135"]
    tokens = ["15T", "2T"] if suffixed else ["15", "2"]
    lines = ["# random models file", "model,family,parameters,training_tokens,aligned"]
    for name in names:
        lines.append(
            ",".join(
                [
                    name,
                    draw(st.sampled_from(["llama-3", "llama-2"])),
                    draw(st.sampled_from(sizes)),
                    draw(st.sampled_from(tokens)),
                    draw(st.sampled_from(["yes", "no"])),
                ]
            )
        )
    return "\n".join(lines) + "\n"


def check_report(table: pd.DataFrame, models_file: str | None) -> list[str]:
    """Build and render the report; the problems found (an empty list when the report holds). Raises nothing the
    report itself does not raise, so a crash shows as the exception it is."""
    meta = None
    problems: list[str] = []
    if models_file is not None:
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "models.csv"
            path.write_text(models_file)
            meta = read_models_meta(path)
        try:
            match_models(meta, table["model"].astype(str).unique())
        except ValueError as exc:  # the documented refusal: one line naming the row and field
            if "\n" in str(exc) or "field 'model'" not in str(exc):
                problems.append(f"models file refused without naming the row and field: {exc}")
    report = build_report(table, models_meta=meta, seed=0)
    for q in report.questions:
        if not q.summary.strip() or not q.evidence.strip():
            problems.append(f"{q.question}: empty summary or evidence")
        if q.question in _NO_NAN and "nan" in q.summary.lower().replace("nan-", ""):
            problems.append(f"{q.question} summary prints NaN: {q.summary}")
        if list(q.verdicts.columns) != list(VERDICT_COLUMNS):
            problems.append(f"{q.question}: verdict table columns {list(q.verdicts.columns)}")
        for row in q.verdicts.itertuples():
            if not str(row.reason).strip():
                problems.append(f"{q.question} {row.model} {row.dimension}: verdict without a reason")
            if row.verdict not in {v.value for v in Verdict}:
                problems.append(f"{q.question}: unknown verdict {row.verdict!r}")
            if q.question in _NO_NAN and "nan" in str(row.reason).lower():
                problems.append(f"{q.question} {row.model} {row.dimension}: reason prints NaN: {row.reason}")
    markdown = render_markdown(report)
    if "## Verdicts per model and dimension" not in markdown:
        problems.append("the Markdown report lacks the per-model section")
    doc = json.loads(render_json(report))
    if [q["question"] for q in doc["questions"]] != [q.question for q in report.questions]:
        problems.append("the JSON report lost a question")
    csv_rows = render_csv(report).splitlines()
    expected = sum(max(len(q.verdicts), 1) for q in report.questions)
    if len(csv_rows) - 1 != expected:
        problems.append(f"the CSV holds {len(csv_rows) - 1} verdict rows, expected {expected}")
    if len(table) < 400:  # figures cost a second: the HTML of the smaller tables is rendered too
        render_html(report)
    return problems
