"""The model's count likelihoods against scipy's binomial and multinomial: the same log-density up to the
data-only constant, and forward draws with the right law, through PyTensor's graph and through the fused kernels
(the linear predictor gathered from two effect vectors, as the model gathers it)."""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytensor.tensor as pt
import pytest
from scipy import stats
from scipy.special import expit, gammaln

from bias_validity.psychometrics.bayes.likelihoods import binomial_logit, cumulative_logit_counts


def _gathered(eta: np.ndarray, fused: bool, seed: int = 9) -> tuple[pt.TensorVariable, np.ndarray] | None:
    """``eta`` split into two shuffled effect vectors and each cell's positions in them (None: the graph path)."""
    if not fused:
        return None
    rng = np.random.default_rng(seed)
    part = rng.normal(size=len(eta))
    order = rng.permutation(2 * len(eta))
    theta = np.empty(2 * len(eta))
    theta[order[: len(eta)]], theta[order[len(eta) :]] = part, eta - part
    return pt.as_tensor(theta), np.column_stack([order[: len(eta)], order[len(eta) :]])


def _cumulative_probs(cut: np.ndarray, eta: np.ndarray) -> np.ndarray:
    cdf = expit(cut[None, :] - eta[:, None])
    return np.diff(np.concatenate([np.zeros((len(eta), 1)), cdf, np.ones((len(eta), 1))], axis=1), axis=1)


@pytest.mark.parametrize("fused", [False, True], ids=["graph", "fused"])
def test_binomial_logit_is_the_binomial_log_density_less_its_coefficient(fused):
    rng = np.random.default_rng(0)
    n = rng.integers(1, 30, 50)
    eta_values = rng.normal(0, 3, (4, 50))  # includes |eta| up to about 9: the tails
    k = rng.binomial(n, 0.4)
    coefficient = gammaln(n + 1) - gammaln(k + 1) - gammaln(n - k + 1)
    for e in eta_values:
        with pm.Model() as model:
            binomial_logit("y", n, pt.as_tensor(e), observed=k, gathered=_gathered(e, fused))
        exact = stats.binom.logpmf(k, n, expit(e)) - coefficient
        np.testing.assert_allclose(model.logp(sum=False)[0].eval(), exact, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("fused", [False, True], ids=["graph", "fused"])
@pytest.mark.parametrize(
    "answers",
    [(1, 25), (1, 2), (2, 25)],
    ids=["one-and-many-answer-cells", "one-answer-cells", "many-answer-cells"],
)
def test_cumulative_logit_counts_are_the_multinomial_log_density_less_its_coefficient(answers, fused):
    rng = np.random.default_rng(1)
    cut = np.array([[-2.5, -0.4, 0.3, 3.0], [-1.0, -0.9, 0.8, 6.0]])  # two methods, one with a narrow gap
    method = rng.integers(0, 2, 40)
    eta = rng.normal(0, 2, 40)
    probs = (
        _cumulative_probs(cut[0], eta) * (method == 0)[:, None]
        + _cumulative_probs(cut[1], eta) * (method == 1)[:, None]
    )
    counts = np.stack([rng.multinomial(n, p) for n, p in zip(rng.integers(*answers, 40), probs, strict=True)])
    if answers == (1, 2):  # a cell of one answer at every level of both methods, the ends included
        counts[:10] = np.eye(5, dtype=int)[np.arange(10) % 5]
        method[:10] = np.arange(10) // 5
        probs[:10] = [_cumulative_probs(cut[m], eta[i : i + 1])[0] for i, m in enumerate(method[:10])]
    with pm.Model() as model:
        cumulative_logit_counts(
            "y", counts.sum(axis=1), pt.as_tensor(cut), method, pt.as_tensor(eta), counts, _gathered(eta, fused)
        )
    got = model.logp(sum=False)[0].eval()
    n = counts.sum(axis=1)
    coefficient = stats.multinomial.logpmf(counts, n, np.full((40, 5), 0.2)) - n * np.log(0.2)
    np.testing.assert_allclose(got, stats.multinomial.logpmf(counts, n, probs) - coefficient, rtol=1e-9)


@pytest.mark.parametrize("fused", [False, True], ids=["graph", "fused"])
def test_forward_draws_follow_the_binomial_and_cumulative_logit_laws(fused):
    cut, eta = np.array([[-1.0, 0.0, 0.5, 2.0]]), np.array([0.3, -1.5])
    n = np.array([200, 200])
    with pm.Model() as model:
        binomial_logit("k", n, pt.as_tensor(eta), np.zeros(2, dtype=int), _gathered(eta, fused))
        cumulative_logit_counts(
            "c",
            n,
            pt.as_tensor(cut),
            np.zeros(2, dtype=int),
            pt.as_tensor(eta),
            np.zeros((2, 5), dtype=int),
            _gathered(eta, fused),
        )
    k, c = pm.draw([model["k"], model["c"]], draws=400, random_seed=3)
    assert c.shape == (400, 2, 5) and (c.sum(axis=-1) == 200).all()
    # means within 4 standard errors of n p (400 draws)
    p_k = expit(eta)
    assert k.mean(axis=0) == pytest.approx(200 * p_k, abs=4 * np.sqrt(200 * p_k * (1 - p_k) / 400).max())
    p_c = _cumulative_probs(cut[0], eta)
    se = np.sqrt(200 * p_c * (1 - p_c) / 400)
    assert np.all(np.abs(c.mean(axis=0) - 200 * p_c) < 4 * se + 1e-9)
