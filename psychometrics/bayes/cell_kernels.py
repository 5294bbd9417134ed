"""Fused log-densities of the model's count cells: one pass gathers each cell's linear predictor from the effects and
evaluates its log-density and partial derivatives, one more scatters the gradient back onto the effects.

PyTensor builds a cell's linear predictor from one gather per effect family, its gradient from one scatter per family,
and a softplus and its derivative (the logistic) in separate elementwise passes, each with its own array. On the
25,000-answer real-shaped study the gradient took 1.59 ms, of which the priors 0.06 ms: the cells' likelihood is the
whole cost of a leapfrog step. No library offers this kernel (PyTensor's own ops are the per-family gathers above), so
it is written here with numba, which PyTensor's numba backend (nutpie's) inlines and PyTensor's C backend (PyMC's
sampler) calls from :meth:`Op.perform`. JAX backends (numpyro) have no implementation: the model keeps PyTensor's
graph for them (``build_model(fused=False)``), and a test checks both give the same log-density and gradient.

The log-densities are :mod:`bias_validity.psychometrics.bayes.likelihoods`' closed forms; each softplus
``log(1 + e^x)`` and its derivative come from one exponential and one logarithm, and all of a Likert cell's from one
of each (:func:`_cumulative_kernel`): on arrays of the paper-scale workload's shape (5,184 cells of each kind) this
took the binomial kernel from 0.120 to 0.098 ms and the cumulative one from 0.387 to 0.254 ms at 20 answers per
cell, 0.231 to 0.184 ms at one, 0.387 to 0.311 ms at 200.
"""

from __future__ import annotations

import hashlib
import math
from pathlib import Path

import numba
import numpy as np
from pytensor.gradient import DisconnectedType, disconnected_type
from pytensor.graph.basic import Apply
from pytensor.graph.op import Op
from pytensor.link.numba.dispatch.basic import register_funcify_default_op_cache_key

from bias_validity.psychometrics.bayes._pymc import pt

__all__ = ["binomial_cells", "cumulative_cells", "scatter_cells"]


@numba.njit(cache=True)
def _softplus_logistic(x: float) -> tuple[float, float]:
    """``log(1 + e^x)`` and ``1 / (1 + e^-x)``, stable for either sign of ``x``, from one exponential.

    ``log(1 + e)`` rather than ``log1p(e)``, which took twice as long here: with ``e <= 1`` both are within an ulp of
    1 (2.2e-16) of the softplus, and a log-density sums softplus terms as they are (a softplus below that bound is
    lost against the terms beside it either way). The logistic, the gradient's part, keeps its relative accuracy.
    """
    e = math.exp(-abs(x))
    logistic = 1.0 / (1.0 + e) if x >= 0.0 else e / (1.0 + e)
    return max(x, 0.0) + math.log(1.0 + e), logistic


@numba.njit(cache=True)
def _gather(theta: np.ndarray, idx: np.ndarray, c: int) -> float:
    eta = 0.0
    for j in range(idx.shape[1]):
        eta += theta[idx[c, j]]
    return eta


@numba.njit(cache=True)
def _binomial_kernel(theta: np.ndarray, idx: np.ndarray, k: np.ndarray, n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per cell ``k eta - n log(1 + e^eta)`` and its derivative in ``eta``, ``k - n logistic(eta)``."""
    cells = idx.shape[0]
    logp, d_eta = np.empty(cells), np.empty(cells)
    for c in range(cells):
        eta = _gather(theta, idx, c)
        softplus, logistic = _softplus_logistic(eta)
        logp[c] = k[c] * eta - n[c] * softplus
        d_eta[c] = k[c] - n[c] * logistic
    return logp, d_eta


@numba.njit(cache=True)
def _cumulative_kernel(
    theta: np.ndarray, idx: np.ndarray, counts: np.ndarray, cut: np.ndarray, log_gaps: np.ndarray, rows: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per cell ``sum_j [n_j x_j - (n_j + n_{j+1}) s_j] + sum_{middle j} n_j log_gaps_{r,j-1}`` with
    ``x_j = cut_{r,j} - eta`` and ``s_j = log(1 + e^{x_j})``, its derivative in ``eta`` and in each cutpoint of its
    row. Terms without answers on either side are skipped, so a cell of one answer costs two softplus at most.

    A cell of at most 32 answers per term costs one exponential and one logarithm however many cutpoints it spans:
    ``e^{x_j} = e^{cut_j} e^{-eta}`` (the cutpoints' exponentials once per call), and the softplus terms
    ``(n_j + n_{j+1}) log(1 + e^{x_j})`` are the logarithm of one product of integer powers. A term of over 32
    answers, or whose ``e^{x_j}`` passes ``1e4``, takes its own logarithm instead, so each power is at most ``1e128``;
    the product is logged and restarted once past ``1e128``, so it stays below ``1e256``. Where ``e^{x_j}`` leaves
    ``[1e-13, 1e13]`` (where the product of two exponentials could over- or underflow: NaN fails the test too) the
    term is :func:`_softplus_logistic` of ``x_j`` itself. Each form carries the rounding of ``1 + e^{x_j}``
    ``n_j + n_{j+1}`` times (a few ulp of the cell's log-density)."""
    cells, levels = counts.shape
    logp, d_eta, d_cut = np.empty(cells), np.empty(cells), np.empty((cells, levels - 1))
    e_cut = np.exp(cut)
    for c in range(cells):
        eta, r = _gather(theta, idx, c), rows[c]
        e_eta = math.exp(-eta)
        total, derivative, product = 0.0, 0.0, 1.0
        for j in range(levels - 1):
            below, around = counts[c, j], counts[c, j] + counts[c, j + 1]
            if around == 0:
                d_cut[c, j] = 0.0
                continue
            x = cut[r, j] - eta
            e = e_cut[r, j] * e_eta
            if 1e-13 < e < 1e4 and around <= 32:
                if product > 1e128:
                    total -= math.log(product)
                    product = 1.0
                one_plus = 1.0 + e
                product *= one_plus**around
                total += below * x
                logistic = e / one_plus
            elif 1e-13 < e < 1e13:
                total += below * x - around * math.log(1.0 + e)
                logistic = e / (1.0 + e)
            else:
                softplus, logistic = _softplus_logistic(x)
                total += below * x - around * softplus
            d_cut[c, j] = below - around * logistic
            derivative -= d_cut[c, j]
        total -= math.log(product)
        for j in range(1, levels - 1):
            total += counts[c, j] * log_gaps[r, j - 1]
        logp[c], d_eta[c] = total, derivative
    return logp, d_eta, d_cut


@numba.njit(cache=True)
def _scatter_kernel(weights: np.ndarray, idx: np.ndarray, size: int) -> np.ndarray:
    """``out[idx[c, j]] += weights[c]`` over all cells and columns: the gradient of a gathered sum."""
    out = np.zeros(size)
    for c in range(idx.shape[0]):
        w = weights[c]
        for j in range(idx.shape[1]):
            out[idx[c, j]] += w
    return out


def _first_order_only(output_grads: list) -> None:
    """The derivative outputs have no derivative here: NUTS needs the gradient, not the Hessian."""
    if any(not isinstance(g.type, DisconnectedType) for g in output_grads[1:]):
        raise NotImplementedError("the cells' derivative outputs are not differentiable (no second derivatives)")


class BinomialCells(Op):
    """Inputs ``theta`` (the effects, concatenated), ``idx`` (cells x parts: each cell's linear predictor is the sum
    of ``theta`` at its row), ``k``, ``n``; outputs each cell's log-density and its derivative in the predictor."""

    __props__ = ()

    def make_node(self, theta, idx, k, n) -> Apply:
        inputs = [pt.as_tensor_variable(v) for v in (theta, idx, k, n)]
        return Apply(self, inputs, [pt.dvector(), pt.dvector()])

    def perform(self, node, inputs, outputs) -> None:
        for out, value in zip(outputs, _binomial_kernel(*inputs), strict=True):
            out[0] = value

    def grad(self, inputs, output_grads):
        _first_order_only(output_grads)
        theta, idx, _, _ = inputs
        _, d_eta = self(*inputs)
        return [scatter_cells(output_grads[0] * d_eta, idx, theta), *(disconnected_type() for _ in range(3))]

    def connection_pattern(self, node) -> list[list[bool]]:
        return [[True, True], [False, False], [False, False], [False, False]]


class CumulativeCells(Op):
    """Inputs ``theta``, ``idx`` (as :class:`BinomialCells`), ``counts`` (cells x levels), ``cut`` (rows x
    (levels - 1)), ``log_gaps`` (rows x (levels - 2), ``log(1 - e^{cut_{r,j} - cut_{r,j+1}})``) and ``rows`` (each
    cell's row); outputs each cell's log-density and its derivatives in the predictor and in its row's cutpoints."""

    __props__ = ()

    def make_node(self, theta, idx, counts, cut, log_gaps, rows) -> Apply:
        inputs = [pt.as_tensor_variable(v) for v in (theta, idx, counts, cut, log_gaps, rows)]
        return Apply(self, inputs, [pt.dvector(), pt.dvector(), pt.dmatrix()])

    def perform(self, node, inputs, outputs) -> None:
        for out, value in zip(outputs, _cumulative_kernel(*inputs), strict=True):
            out[0] = value

    def grad(self, inputs, output_grads):
        _first_order_only(output_grads)
        theta, idx, counts, cut, log_gaps, rows = inputs
        _, d_eta, d_cut = self(*inputs)
        g_theta, g_cut, g_gaps = cumulative_cells_grad(output_grads[0], d_eta, d_cut, idx, counts, rows, theta, cut)
        return [g_theta, disconnected_type(), disconnected_type(), g_cut, g_gaps, disconnected_type()]

    def connection_pattern(self, node) -> list[list[bool]]:
        data = [False] * 3
        return [[True] * 3, data, data, [True] * 3, [True] * 3, data]


@numba.njit(cache=True)
def _cumulative_grad_kernel(
    g: np.ndarray,
    d_eta: np.ndarray,
    d_cut: np.ndarray,
    idx: np.ndarray,
    counts: np.ndarray,
    rows: np.ndarray,
    size: int,
    cut_rows: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:class:`CumulativeCells`' gradient, weighted by ``g``, in the effects, the cutpoints and the log gaps."""
    levels = counts.shape[1]
    g_cut, g_gaps = np.zeros((cut_rows, levels - 1)), np.zeros((cut_rows, levels - 2))
    for c in range(idx.shape[0]):
        w, r = g[c], rows[c]
        for j in range(levels - 1):
            g_cut[r, j] += w * d_cut[c, j]
        for j in range(1, levels - 1):
            g_gaps[r, j - 1] += w * counts[c, j]
    return _scatter_kernel(g * d_eta, idx, size), g_cut, g_gaps


class CumulativeCellsGrad(Op):
    """Inputs ``g`` (the weight of each cell's log-density), :class:`CumulativeCells`' derivative outputs and
    ``idx``, ``counts``, ``rows``, and ``theta`` and ``cut`` for their shapes; outputs the weighted gradient in
    ``theta``, ``cut`` and ``log_gaps``, in one pass over the cells."""

    __props__ = ()

    def make_node(self, g, d_eta, d_cut, idx, counts, rows, theta, cut) -> Apply:
        inputs = [pt.as_tensor_variable(v) for v in (g, d_eta, d_cut, idx, counts, rows, theta, cut)]
        return Apply(self, inputs, [pt.dvector(), pt.dmatrix(), pt.dmatrix()])

    def perform(self, node, inputs, outputs) -> None:
        *cells, theta, cut = inputs
        for out, value in zip(outputs, _cumulative_grad_kernel(*cells, theta.shape[0], cut.shape[0]), strict=True):
            out[0] = value


class ScatterCells(Op):
    """``out = zeros_like(like); out[idx[c, j]] += weights[c]``: the gradient of :class:`BinomialCells`' gathered
    sums in the effects (:class:`CumulativeCellsGrad` scatters its own with the same kernel)."""

    __props__ = ()

    def make_node(self, weights, idx, like) -> Apply:
        inputs = [pt.as_tensor_variable(v) for v in (weights, idx, like)]
        return Apply(self, inputs, [pt.dvector()])

    def perform(self, node, inputs, outputs) -> None:
        weights, idx, like = inputs
        outputs[0][0] = _scatter_kernel(weights, idx, like.shape[0])


binomial_cells, cumulative_cells, scatter_cells = BinomialCells(), CumulativeCells(), ScatterCells()
cumulative_cells_grad = CumulativeCellsGrad()

#: The kernels' version in PyTensor's cache key of a graph holding these ops: a hash of this file. PyTensor keys an op
#: by its type and props only, and the numba function it caches for a graph links the kernels in, so without it a
#: graph compiled before an edit of the kernels (an upgrade of the toolkit) would keep running the old ones.
KERNELS_VERSION = int.from_bytes(hashlib.sha256(Path(__file__).read_bytes()).digest()[:6], "little")


@register_funcify_default_op_cache_key(BinomialCells)
def _numba_binomial(op, node=None, **kwargs):
    return _binomial_kernel, KERNELS_VERSION


@register_funcify_default_op_cache_key(CumulativeCells)
def _numba_cumulative(op, node=None, **kwargs):
    return _cumulative_kernel, KERNELS_VERSION


@register_funcify_default_op_cache_key(ScatterCells)
def _numba_scatter(op, node=None, **kwargs):
    @numba.njit
    def scatter(weights: np.ndarray, idx: np.ndarray, like: np.ndarray) -> np.ndarray:
        return _scatter_kernel(weights, idx, like.shape[0])

    return scatter, KERNELS_VERSION


@register_funcify_default_op_cache_key(CumulativeCellsGrad)
def _numba_cumulative_grad(op, node=None, **kwargs):
    @numba.njit
    def cumulative_grad(g, d_eta, d_cut, idx, counts, rows, theta, cut):
        return _cumulative_grad_kernel(g, d_eta, d_cut, idx, counts, rows, theta.shape[0], cut.shape[0])

    return cumulative_grad, KERNELS_VERSION
