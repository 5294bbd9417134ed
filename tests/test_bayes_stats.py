"""Fast checks of the Bayesian layer's pure statistics: closed forms, the gate on real draws, metadata, errors."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from bias_validity.analyses.models_meta import base_tuned_pairs, llama_example, read_models_meta
from bias_validity.cli._options import fit_config
from bias_validity.psychometrics.bayes import FitConfig, diagnostics_gate, scaling_identifiability, summarise


def test_scaling_matches_the_two_predictor_closed_forms():
    rng = np.random.default_rng(4)
    p = np.exp(rng.normal(2, 1, 12))
    t = np.exp(0.5 * np.log(p) + rng.normal(0, 1, 12))
    out = scaling_identifiability(pd.DataFrame({"parameters": p, "training_tokens": t}))
    r = np.corrcoef(np.log(p), np.log(t))[0, 1]
    # with two predictors VIF = 1 / (1 - r^2) and corr(b1, b2) = -r (from (X'X)^-1)
    assert out["predictor_correlation"] == pytest.approx(r)
    assert out["vif"]["parameters"] == pytest.approx(1 / (1 - r**2))
    assert out["slope_correlation"] == pytest.approx(-r)
    # condition number of [1, z1, z2] (standardised): sqrt((1 + |r|) / (1 - |r|))
    assert out["condition_number"] == pytest.approx(np.sqrt((1 + abs(r)) / (1 - abs(r))))


def test_scaling_recovers_slopes_and_flags_collinear_designs():
    rng = np.random.default_rng(5)
    p, t = np.exp(rng.normal(0, 1, 40)), np.exp(rng.normal(0, 1, 40))
    y = 0.1 + 0.05 * np.log(p) - 0.02 * np.log(t) + rng.normal(0, 0.01, 40)
    out = scaling_identifiability(pd.DataFrame({"parameters": p, "training_tokens": t, "sc": y}), score="sc")
    assert not out["collinear"]
    assert out["slope_parameters"] == pytest.approx(0.05, abs=4 * out["se_parameters"])
    assert out["slope_tokens"] == pytest.approx(-0.02, abs=4 * out["se_tokens"])
    tied = pd.DataFrame({"parameters": p[:8], "training_tokens": 20 * p[:8] * np.exp(rng.normal(0, 0.05, 8))})
    assert scaling_identifiability(tied)["verdict"] == "size and data cannot be separated in this design"
    with pytest.raises(ValueError, match="positive"):
        scaling_identifiability(pd.DataFrame({"parameters": [0, 1, 2, 3], "training_tokens": [1, 2, 3, 4]}))


def test_llama_worked_example_is_confounded_by_generation():
    meta, found = llama_example()
    assert found["vif"]["parameters"] < 1.1  # size and tokens nearly orthogonal on paper ...
    assert found["confounded_with_family"]  # ... but tokens are constant within each generation
    assert found["verdict"] == "size and data cannot be separated in this design"
    assert sorted(meta["training_tokens"].unique()) == [2.0, 9.0, 15.0]


def _draws(shift: float, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    arr = rng.normal(0.7, 0.05, (4, 1000, 2))
    arr[0] += shift
    return arr


def test_gate_passes_mixed_chains_and_fails_stuck_ones():
    labels = pd.DataFrame(
        {"quantity": ["sc", "gap_explicit_implicit"], "model": "m", "dimension": "d", "method": ["implicit", ""]}
    )
    good = summarise(labels, _draws(0.0))
    gate = diagnostics_gate(good, divergences=0)
    assert gate["passed"] and gate["max_rhat"] < 1.01 and gate["min_ess_bulk"] > 2000
    assert not diagnostics_gate(good, divergences=3)["passed"]
    bad = diagnostics_gate(summarise(labels, _draws(0.1)), divergences=0)  # one chain 2 SD off: R-hat ~ 1.3
    assert not bad["passed"] and bad["max_rhat"] > 1.1 and bad["failing"] == 2


def test_summarise_hdi_and_direction():
    labels = pd.DataFrame(
        {"quantity": ["sc", "model_contrast"], "model": ["m", "a - b"], "dimension": "d", "method": "implicit"}
    )
    out = summarise(labels, _draws(0.0, seed=1), hdi_prob=0.94)
    # normal(0.7, 0.05): 94% HDI = 0.7 -/+ 1.881 * 0.05; P(> 0.5) and P(> 0) both ~ 1
    assert out["hdi_low"].iloc[0] == pytest.approx(0.7 - 1.881 * 0.05, abs=0.004)
    assert out["hdi_high"].iloc[0] == pytest.approx(0.7 + 1.881 * 0.05, abs=0.004)
    assert out["p_direction"].tolist() == [1.0, 1.0]
    centred = summarise(labels.iloc[:1], _draws(0.0, seed=2)[..., :1] - 0.2)  # N(0.5, 0.05) against the null 0.5
    assert centred["p_direction"].iloc[0] == pytest.approx(0.5, abs=0.02)


def test_models_file_validation(tmp_path):
    path = tmp_path / "models.csv"
    path.write_text("model,family,parameters,training_tokens,aligned\na,g,1,2,no\nb,g,1,2,yes\nc,h,3,2,maybe\n")
    with pytest.raises(ValueError, match="aligned"):
        read_models_meta(path)
    path.write_text("model,family,parameters,training_tokens,aligned\na,g,1,2,no\nb,g,1,2,yes\nc,g,3,2,yes\n")
    assert base_tuned_pairs(read_models_meta(path)) == [("a", "b")]
    with pytest.raises(ValueError, match="lacks column"):
        read_models_meta(_write(tmp_path / "bad.csv", "model,family\na,g\n"))


def _write(path, text):
    path.write_text(text)
    return path


def test_fit_settings_are_validated_before_any_sampling():
    with pytest.raises(ValueError, match="valid samplers are nutpie, pymc, numpyro"):
        FitConfig(sampler="stan")
    with pytest.raises(ValueError, match="hdi_prob must lie strictly between 0 and 1; got 1.5"):
        FitConfig(hdi_prob=1.5)
    with pytest.raises(ValueError, match="draws and chains must be >= 1"):
        FitConfig(draws=0)


def test_one_set_of_fit_defaults_serves_the_api_and_the_command_line():
    from bias_validity.cli import build_parser

    args = build_parser().parse_args(["fit", "study.sqlite"])
    assert fit_config(args) == FitConfig()


def test_warm_up_is_the_backends_own_unless_set():
    from bias_validity.cli import build_parser

    parse = build_parser().parse_args
    assert fit_config(parse(["fit", "s.sqlite"])).warm_up == 400  # nutpie's own default
    assert fit_config(parse(["fit", "s.sqlite", "--sampler", "pymc"])).warm_up == 1000  # Stan's windows
    assert fit_config(parse(["fit", "s.sqlite", "--sampler", "pymc", "--tune", "250"])).warm_up == 250
    saved = FitConfig(sampler="pymc").to_dict()
    assert saved["tune"] == 1000 and FitConfig(**saved).warm_up == 1000  # a saved fit names the warm-up it used
