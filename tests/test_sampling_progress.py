"""Sampling progress on stderr: draws done, nutpie's estimate of the time left and the divergences, as plain lines."""

import re
import sys

from bias_validity.psychometrics.bayes import FitConfig, sampling
from bias_validity.psychometrics.bayes._pymc import pm


def _model(size: int = 200) -> pm.Model:
    """A normal of ``size`` dimensions: at 2000 and 8000 draws, over a second of sampling (beats every 0.05 s)."""
    with pm.Model() as model:
        pm.Normal("x", 0.0, 1.0, shape=size)
    return model


def test_nutpie_progress_lines_give_draws_done_time_left_and_divergences(monkeypatch, capsys):
    monkeypatch.setattr(sampling, "_HEARTBEAT_S", 0.05)
    config = FitConfig(chains=2, tune=300, draws=8000, seed=3, progress=True)
    run = sampling.sample(_model(2000), config)
    err = capsys.readouterr().err.splitlines()
    what = "2 chains x (300 warm-up + 8000 draws), nutpie"
    assert err[0] == f"sampling {what}"
    assert re.fullmatch(rf"sampled {re.escape(what)} in \d+ s", err[-1])
    beat = rf"sampling {re.escape(what)}: (\d+)/16600 draws, \d+ s so far, about \d+ s left, (\d+) divergent"
    beats = [re.fullmatch(beat, x) for x in err[1:-1]]
    assert beats and all(beats), err
    done = [int(b.group(1)) for b in beats]
    assert done == sorted(done) and 0 < done[0] and done[-1] < 16600
    assert run.idata.posterior["x"].shape == (2, 8000, 2000)
    # nutpie's own progress class is back after the call
    assert sys.modules["nutpie.sample"]._lib.ProgressType.__name__ == "ProgressType"


def test_samplers_without_draws_progress_keep_the_elapsed_time_line(capsys):
    config = FitConfig(chains=1, tune=50, draws=50, seed=3, progress=True, sampler="pymc")
    sampling.sample(_model(), config)
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "sampling 1 chains x (50 warm-up + 50 draws), pymc"
    assert err[-1].startswith("sampled 1 chains x (50 warm-up + 50 draws), pymc in ")
    assert not any("draws, " in x and "left" in x for x in err)


def test_no_progress_prints_nothing(capsys):
    sampling.sample(_model(), FitConfig(chains=1, tune=50, draws=50, seed=3))
    assert capsys.readouterr().err == ""
