"""Q6 on designs real families have: equal training tokens within a family, half of the models
aligned, models files written with units ("8B", "1.5T") or with names that differ from the store's."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from _support.studies import DIMENSIONS, MODELS, llama3_meta, llama3_study

from bias_validity.analyses.questions import scaling
from bias_validity.analyses.result import Verdict
from bias_validity.analyses.study import as_study
from bias_validity.simulate import simulate_responses


@pytest.fixture(scope="module")
def q6():
    return scaling(as_study(llama3_study(), models_meta=llama3_meta()))


def test_equal_tokens_give_the_size_slope_and_name_the_token_slope_not_identified(q6):
    fig = q6.figures.set_index("measure")
    size = fig.loc["slope_log_parameters"]
    truth = (0.75 - 0.60) / np.log(70 / 8)  # implicit SC per log unit of parameters
    assert size["ci_low"] < truth < size["ci_high"] and size["ci_low"] > 0
    tokens = fig.loc["slope_log_tokens"]
    assert np.isnan(tokens["estimate"]) and tokens["note"].startswith("not identified: training_tokens take one value")
    assert "training-data slope not identified" in q6.summary and "nan" not in q6.summary.lower()
    assert q6.verdict is Verdict.NOT_SUPPORTED  # size and data cannot be separated: only one of them varies


def test_base_versus_tuned_is_reported_per_tuned_model_and_dimension(q6):
    from bias_validity.analyses.questions.scaling import ALIGNMENT_SHIFT

    table = q6.verdicts
    assert sorted(table["model"].unique()) == ["hf:llama-3-70b-instruct", "hf:llama-3-8b-instruct"]
    assert len(table) == 2 * len(DIMENSIONS)
    assert (table["verdict"] == Verdict.SUPPORTED.value).all()
    assert table["finding"].str.startswith("explicit down, implicit ").all()
    # the implicit shift is truly 0: its 95% interval misses it in about 1 of 20 contrasts
    assert (table["finding"] == "explicit down, implicit no credible change").sum() >= 4
    assert (table["measure"] == ALIGNMENT_SHIFT).all()
    # explicit moves by 0.2 - 0.6 and implicit by 0: their difference is -0.4
    assert ((table["ci_low"] < -0.4) & (-0.4 < table["ci_high"])).sum() >= 5
    assert re.search(r"explicit down, implicit no credible change in [1-3]/3 dimensions", q6.summary)


def test_the_report_does_not_crash_on_equal_tokens():
    from bias_validity.analyses.report import build_report

    report = build_report(as_study(llama3_study(), models_meta=llama3_meta()))
    q6 = next(q for q in report.questions if q.question == "Q6")
    assert q6.verdict is not Verdict.NOT_ESTIMABLE and "slope_log_parameters" in set(q6.figures["measure"])


def test_models_file_names_without_backend_prefix_are_matched():
    short = {m: m.removeprefix("hf:").upper() for m in MODELS}  # "LLAMA-3-8B" for "hf:llama-3-8b"
    res = scaling(as_study(llama3_study(), models_meta=llama3_meta(short)))
    assert len(res.verdicts) == 2 * len(DIMENSIONS)


def test_a_models_file_naming_no_model_of_the_store_is_refused_in_one_line():
    from bias_validity.analyses.models_meta import match_models

    with pytest.raises(ValueError, match=r"^models file: no row's field 'model' matches .*row 1 is 'gpt-2'") as err:
        match_models(llama3_meta({m: f"gpt-{i + 2}" for i, m in enumerate(MODELS)}), list(MODELS))
    assert "\n" not in str(err.value)


def test_tokens_constant_within_families_give_the_within_family_size_slope():
    # two families, tokens differ between them (2T, 15T) and never within: the token slope is the family difference
    meta = pd.DataFrame(
        {
            "model": ["a", "b", "c", "d", "e", "f"],
            "family": ["l2", "l2", "l2", "l3", "l3", "l3"],
            "parameters": [7e9, 13e9, 70e9, 1e9, 8e9, 70e9],
            "training_tokens": [2e12] * 3 + [15e12] * 3,
            "aligned": [False] * 6,
        }
    )
    logp = np.log(meta["parameters"])
    sc = 0.4 + 0.05 * (logp - logp.mean()) + np.where(meta["family"] == "l3", 0.1, 0.0)
    parts = [
        simulate_responses(models=[m], dimensions=["age"], sc={"implicit": s}, item_sd=0.0, reps=40, seed=i)
        for i, (m, s) in enumerate(zip(meta["model"], sc, strict=True))
    ]
    res = scaling(as_study(pd.concat(parts, ignore_index=True), models_meta=meta))
    fig = res.figures.set_index("measure")
    assert fig.loc["slope_log_parameters", "ci_low"] < 0.05 < fig.loc["slope_log_parameters", "ci_high"]
    assert "family fixed effects" in fig.loc["slope_log_parameters", "note"]
    assert "vary only between the 2 families" in fig.loc["slope_log_tokens", "note"]


@pytest.mark.parametrize(
    "written, value", [("8B", 8e9), ("70e9", 70e9), ("1.5T", 1.5e12), ("135m", 135e6), ("405", 405.0)]
)
def test_models_file_counts_are_read_with_their_units(tmp_path, written, value):
    from bias_validity.analyses.models_meta import read_models_meta

    path = tmp_path / "models.csv"
    path.write_text(f"model,family,parameters,training_tokens,aligned\na,g,{written},{written},no\n")
    meta = read_models_meta(path)
    assert meta["parameters"].iloc[0] == value and meta["training_tokens"].iloc[0] == value


@pytest.mark.parametrize(
    "rows, message",
    [
        ("a,g,8B,15T,no\nb,g,70,15T,yes\n", r"line 4 \(model 'b'\), field 'parameters': '70' has no unit while"),
        ("a,g,8 bn,15T,no\n", r"line 3 \(model 'a'\), field 'parameters': cannot read '8 bn' as a count"),
        ("a,g,8B,0,no\n", r"line 3 \(model 'a'\), field 'training_tokens': '0' is not positive"),
        ("a,g,8B,15T,maybe\n", r"line 3 \(model 'a'\), field 'aligned': 'maybe'"),
        ("a,g,8B,15T,no\na,g,8B,15T,yes\n", r"line 4 \(model 'a'\), field 'model': listed twice"),
    ],
)
def test_a_bad_models_file_row_is_refused_with_its_line_and_field(tmp_path, rows, message):
    from bias_validity.analyses.models_meta import read_models_meta

    path = tmp_path / "models.csv"
    path.write_text("# sizes as published\nmodel,family,parameters,training_tokens,aligned\n" + rows)
    with pytest.raises(ValueError, match=rf"^{path}: {message}") as err:
        read_models_meta(path)
    assert "\n" not in str(err.value)
