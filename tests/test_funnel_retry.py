"""A fit whose divergences sit at the neck of a funnel of centred shared effects redraws them non-centred.

Real PyMC + nutpie on a small 6-unit study whose shared order effects the model draws centred. Divergences at
``sigma_ord``'s smallest values cannot be made on demand by a fast fit (the 4-model real-shaped study of 6,000
answers makes them, in minutes: ``bench/fit.py --part real-coverage``), so the first attempt's real posterior has
its divergence flags set at the draws where ``sigma_ord`` is smallest (or, as the control, largest), and the second
attempt's cleared so the retry loop ends there.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pymc as pm
import pytest
from scipy import stats

from bias_validity.psychometrics.bayes import FitConfig, fit_to_gate, index_design, sample, simulate_study
from bias_validity.psychometrics.bayes.funnels import funnel_necks
from bias_validity.psychometrics.bayes.model import build_model, shared_centring


@pytest.fixture(scope="module")
def design():
    sim = simulate_study(
        units=6, traits=2, items=6, templates=2, orders=2, reps=25, seed=1, ordinal_methods=(), score_methods=()
    )
    return index_design(sim["binary"], unit_effects=True)


def test_the_study_draws_its_shared_order_effects_centred(design):
    # six units that answer alike pin their shared order effects (information 375 per contrast), which stand clear
    # of that noise (contrasts -0.47 and 0.65); its wordings' contrasts (0.04 or less) do not, so they are non-centred
    assert {k: w.tolist() for k, w in shared_centring(design).items()} == {"tmpl": [0.0, 0.0], "ords": [1.0, 1.0]}


def test_shared_effects_told_non_centred_keep_their_prior(design):
    """Told to draw the order effects non-centred, the model's contrasts are standard normal (centred: Normal(0,
    sigma_ord), sigma_ord ~ HalfNormal(0.5), SD 0.5) and the order effects keep their law."""
    draws = {}
    for non_centred in ((), ("ords",)):
        model = build_model(design, non_centred=non_centred)
        draws[non_centred] = pm.draw([model["z_ords"], model["ords"]], draws=4000, random_seed=1)
    (z_centred, ords_centred), (z_non, ords_non) = draws[()], draws[("ords",)]
    assert z_centred.std() == pytest.approx(0.5, rel=0.1)
    assert z_non.std() == pytest.approx(1.0, rel=0.1)
    for j in range(ords_non.shape[1]):
        assert stats.ks_2samp(ords_centred[:, j], ords_non[:, j]).pvalue > 0.001


@pytest.mark.parametrize(("where", "redrawn"), [("smallest", True), ("largest", False)])
def test_divergences_at_the_neck_redraw_the_shared_effects_non_centred(design, capsys, where, redrawn):
    calls = []

    def run(model, config):
        out = sample(model, config)
        # the first attempt diverges where sigma_ord is smallest (largest), the next not at all, so the loop ends there
        sd = out.idata.posterior["sigma_ord"].values
        order = np.argsort(sd, axis=None)
        flagged = np.zeros(sd.size, dtype=bool)
        if not calls:
            flagged[order[:8] if where == "smallest" else order[-8:]] = True
        out.idata.sample_stats["diverging"].values[...] = flagged.reshape(sd.shape)
        if not calls:
            assert [n.family for n in funnel_necks(out.idata, ["tmpl", "ords"])] == (["ords"] if redrawn else [])
        calls.append((model, config))
        return out

    config = FitConfig(draws=100, tune=100, seed=3, max_draws=100, progress=True)
    model = build_model(design)
    gated = fit_to_gate(model, design, config, run_sampler=run, rebuild=lambda nc: build_model(design, non_centred=nc))
    assert len(gated.attempts) == 2  # the second passed its gate, or had no retry left (its draws at max_draws)
    first, second = gated.attempts
    assert first["divergences"] == 8 and first["non_centred"] == []
    err = capsys.readouterr().err
    if redrawn:
        # the same settings, the order effects non-centred; the last model is the one the posterior is of
        assert second["non_centred"] == ["ords"] and second["target_accept"] == first["target_accept"]
        assert calls[1][0] is gated.model and gated.model is not model
        assert pm.draw(gated.model["z_ords"], draws=2000, random_seed=2).std() == pytest.approx(1.0, rel=0.1)
        assert "8 divergent transitions at small sigma_ord (median " in err
        assert "retrying with the shared order effects non-centred" in err
    else:  # divergences elsewhere: a smaller step, the same model
        assert second["non_centred"] == [] and second["target_accept"] == 0.95
        assert calls[1][0] is model
        assert "8 divergent transitions: retrying at target acceptance 0.95" in err
    assert dataclasses.replace(calls[1][1], target_accept=config.target_accept) == config
