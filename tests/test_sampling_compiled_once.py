"""nutpie compiles a model once per process: a retry samples it again, with the model's data as they are then."""

import numpy as np
import pytest

from bias_validity.psychometrics.bayes import FitConfig, sampling
from bias_validity.psychometrics.bayes._pymc import pm


def _normal_mean(values: np.ndarray) -> pm.Model:
    """``y ~ Normal(mu, 1)`` with a flat-ish prior on ``mu``: the posterior mean of ``mu`` is about mean(y)."""
    with pm.Model() as model:
        y = pm.Data("y", values)
        mu = pm.Normal("mu", 0.0, 10.0)
        pm.Normal("obs", mu, 1.0, observed=y)
    return model


def _posterior_mean(model: pm.Model, seed: int) -> float:
    run = sampling.sample(model, FitConfig(chains=2, tune=200, draws=300, seed=seed))
    return float(run.idata.posterior["mu"].mean())


def test_a_model_is_compiled_once_and_sampled_again(monkeypatch):
    import nutpie

    compiles = []
    compile_model = nutpie.compile_pymc_model

    def counted(model, **kwargs):
        compiles.append(model)
        return compile_model(model, **kwargs)

    monkeypatch.setattr(nutpie, "compile_pymc_model", counted)
    model = _normal_mean(np.linspace(-1.0, 1.0, 50) + 2.0)
    first, again = _posterior_mean(model, 1), _posterior_mean(model, 2)
    assert compiles == [model]
    # the same data twice: both near their mean 2 (posterior SD 1/sqrt(50) = 0.14; MC error about 0.01)
    assert first == pytest.approx(2.0, abs=0.1) and again == pytest.approx(2.0, abs=0.1)
    other = _normal_mean(np.linspace(-1.0, 1.0, 50))
    assert _posterior_mean(other, 1) == pytest.approx(0.0, abs=0.1)
    assert compiles == [model, other]


def test_data_set_after_compiling_are_the_data_sampled():
    model = _normal_mean(np.linspace(-1.0, 1.0, 50))
    assert _posterior_mean(model, 1) == pytest.approx(0.0, abs=0.1)
    with model:
        pm.set_data({"y": np.linspace(-1.0, 1.0, 50) + 5.0})
    assert _posterior_mean(model, 1) == pytest.approx(5.0, abs=0.1)
