"""The fused cell kernels: their gradients against finite differences (any weighting of the cells, both PyTensor
backends), and a model built on them against the same model on PyTensor's graph: one log-density, one gradient, the
same forward draws."""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytensor
import pytensor.tensor as pt
import pytest
from pytensor.gradient import verify_grad
from pytensor.graph.traversal import io_toposort
from pytensor.link.numba.dispatch.basic import numba_funcify_and_cache_key
from scipy.special import expit

from bias_validity.psychometrics.bayes import cell_kernels, index_design, simulate_study
from bias_validity.psychometrics.bayes.cell_kernels import binomial_cells, cumulative_cells
from bias_validity.psychometrics.bayes.model import build_model

RNG = np.random.default_rng(4)
IDX = RNG.integers(0, 12, size=(30, 3))  # 30 cells, each the sum of 3 of 12 effects (repeats included)


@pytest.mark.parametrize("mode", ["FAST_RUN", "NUMBA"])
def test_binomial_cells_gradient_matches_finite_differences(mode):
    n = RNG.integers(1, 9, 30)
    k = RNG.binomial(n, 0.3)
    # verify_grad weighs the cells' log-densities at random: the gradient is checked for any weighting
    verify_grad(lambda theta: binomial_cells(theta, IDX, k, n)[0], [RNG.normal(0, 2, 12)], rng=RNG, mode=mode)


@pytest.mark.parametrize("mode", ["FAST_RUN", "NUMBA"])
def test_cumulative_cells_gradient_matches_finite_differences(mode):
    counts = np.stack([RNG.multinomial(m, np.full(5, 0.2)) for m in RNG.integers(1, 4, 30)])
    rows = RNG.integers(0, 2, 30)

    def logp(theta, cut, log_gaps):
        return cumulative_cells(theta, IDX, counts, cut, log_gaps, rows)[0]

    cut = np.array([[-2.0, -0.5, 0.4, 1.8], [-1.0, 0.0, 0.2, 3.0]])
    gaps = np.log(-np.expm1(cut[:, :-1] - cut[:, 1:]))  # free inputs here: the kernel reads them as given
    verify_grad(logp, [RNG.normal(0, 1, 12), cut, gaps], rng=RNG, mode=mode)


@pytest.mark.parametrize("kernel", ["binomial", "cumulative"])
def test_kernels_match_the_closed_forms_at_extreme_predictors(kernel):
    """Predictors from -800 to 800 against cutpoints from -750 to 750: where ``e^x`` overflows or underflows, or the
    cumulative kernel's product ``e^cut e^-eta`` or its powers leave their range, the kernels still give numpy's
    softplus (``logaddexp``) and scipy's logistic."""
    eta = np.array([-800.0, -40.0, -31.0, -5.0, -0.1, 0.0, 0.1, 5.0, 31.0, 40.0, 800.0])
    theta, idx = eta, np.arange(len(eta))[:, None]  # each cell's predictor is one effect
    if kernel == "binomial":
        n = np.full(len(eta), 7)
        k = np.arange(len(eta)) % 8
        logp, d_eta = cell_kernels._binomial_kernel(theta, idx, k, n)
        np.testing.assert_allclose(logp, k * eta - n * np.logaddexp(0.0, eta), rtol=1e-13, atol=1e-12)
        np.testing.assert_allclose(d_eta, k - n * expit(eta), rtol=1e-13, atol=1e-12)
        return
    # a third row of close cutpoints: at eta -8.5 each of 4 terms of 32 answers is a power near 1e118, and the
    # product passes 1e128 twice; a term of 100 answers there would be a power of 1e369
    cut = np.array([[-2.0, -0.5, 0.4, 1.8], [-750.0, -30.0, 30.0, 750.0], [0.0, 0.01, 0.02, 0.03]])
    gaps = np.log(-np.expm1(cut[:, :-1] - cut[:, 1:]))
    counts = np.tile([2, 1, 0, 3, 1], (2 * len(eta) + 2, 1))
    counts[:-2:2] = [40, 3, 0, 30, 9]  # terms of 43 and 39 answers: past the bound on powers
    counts[-2:] = [[16, 16, 16, 16, 16], [100, 0, 0, 0, 0]]
    rows = np.r_[np.repeat([0, 1], len(eta)), 2, 2]
    eta = np.r_[eta, eta, -8.5, -8.5]
    theta, idx = eta, np.arange(len(eta))[:, None]
    logp, d_eta, d_cut = cell_kernels._cumulative_kernel(theta, idx, counts, cut, gaps, rows)
    x = cut[rows] - eta[:, None]
    below, around = counts[:, :-1], counts[:, :-1] + counts[:, 1:]
    want = (below * x - around * np.logaddexp(0.0, x)).sum(axis=1) + (counts[:, 1:-1] * gaps[rows]).sum(axis=1)
    np.testing.assert_allclose(logp, want, rtol=1e-13, atol=1e-12)
    np.testing.assert_allclose(d_cut, below - around * expit(x), rtol=1e-13, atol=1e-12)
    np.testing.assert_allclose(d_eta, -d_cut.sum(axis=1), rtol=1e-13, atol=1e-12)


def test_cache_keys_change_with_the_kernels(monkeypatch):
    """PyTensor caches a compiled graph under its ops' keys, and the graph's numba function links the kernels in:
    each fused op's key carries the kernels' version, so an edited kernel is not served from an older graph."""
    theta, idx, k = pt.dvector(), pt.lmatrix(), pt.lvector()
    counts, cut, rows = pt.lmatrix(), pt.dmatrix(), pt.lvector()
    logp, d_eta, d_cut = cumulative_cells(theta, idx, counts, cut, cut, rows)
    nodes = [
        binomial_cells(theta, idx, k, k)[0].owner,
        logp.owner,
        cell_kernels.scatter_cells(d_eta, idx, theta).owner,
        cell_kernels.cumulative_cells_grad(d_eta, d_eta, d_cut, idx, counts, rows, theta, cut)[0].owner,
    ]
    keys = [numba_funcify_and_cache_key(node.op, node=node)[1] for node in nodes]
    monkeypatch.setattr(cell_kernels, "KERNELS_VERSION", cell_kernels.KERNELS_VERSION + 1)
    edited = [numba_funcify_and_cache_key(node.op, node=node)[1] for node in nodes]
    assert None not in keys and len(set(keys)) == 4
    assert all(a != b for a, b in zip(keys, edited, strict=True))


def test_second_derivatives_are_refused():
    theta = pt.dvector("theta")
    _, d_eta = binomial_cells(theta, IDX, np.ones(30, dtype=int), np.ones(30, dtype=int))
    with pytest.raises(NotImplementedError, match="no second derivatives"):
        pt.grad(d_eta.sum(), theta)


@pytest.fixture(scope="module")
def design():
    """Binary and Likert cells of several answers and of one, three units with their own deviations."""
    sim = simulate_study(units=3, traits=2, items=5, templates=3, orders=2, reps=4, unit_sd=0.5, seed=6)
    ordinal = sim["ordinal"].copy()
    # the cells of one template hold one answer each, at every level in turn (the ends included)
    cell = ordinal.groupby(["model", "template_id", "item_id", "order"]).ngroup()
    one = ordinal["template_id"] == "T2"
    ordinal.loc[one, "n"] = (ordinal["level"] == cell % 5 + 1)[one].astype(int)
    design = index_design(sim["binary"], ordinal=ordinal, unit_effects=True)
    answers = design.ordinal_counts.sum(axis=1)
    assert (answers == 1).any() and (answers > 1).any()
    return design


def test_fused_model_has_the_graph_models_log_density_and_gradient(design):
    fused, graph = build_model(design), build_model(design, fused=False)
    ops = {type(node.op).__name__ for node in io_toposort([], [fused.logp()])}
    assert {"BinomialCells", "CumulativeCells"} <= ops
    # the answers' terms (the priors' are one code path), through Python's implementations of the ops: no compiler
    # to wait for, and the kernels run as the numba-compiled functions they are
    mode = pytensor.compile.mode.Mode(linker="py", optimizer="fast_compile")
    f, g = (
        pytensor.function(
            m.value_vars,
            [lp := m.logp(vars=m.observed_RVs), *pt.grad(lp, m.value_vars, disconnected_inputs="ignore")],
            mode=mode,
        )
        for m in (fused, graph)
    )
    rng = np.random.default_rng(0)
    for _ in range(3):
        point = {k: v + rng.normal(0, 0.5, v.shape) for k, v in fused.initial_point().items()}
        got, want = f(*(point[v.name] for v in fused.value_vars)), g(*(point[v.name] for v in graph.value_vars))
        assert got[0] == pytest.approx(want[0], rel=1e-12)
        for a, b in zip(got[1:], want[1:], strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-9)


def test_fused_model_draws_answers_as_the_graph_model(design):
    """At the same parameters (one prior draw), the same seed gives the same answers."""
    fused, graph = build_model(design), build_model(design, fused=False)
    values = dict(zip([v.name for v in graph.free_RVs], pm.draw(graph.free_RVs, random_seed=1), strict=True))
    for name in ("y_binary", "y_likert"):
        a, b = (
            pm.draw(pytensor.clone_replace(m[name], {v: pt.constant(values[v.name]) for v in m.free_RVs}), 3, 5)
            for m in (fused, graph)
        )
        np.testing.assert_array_equal(a, b)
