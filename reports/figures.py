"""Report figures drawn with matplotlib's object API (Agg canvas, no pyplot state) and encoded as PNG bytes.

The figures only draw what they are given: interval rows already estimated by ``analyses`` and matrices already
computed by ``psychometrics``. Nothing here computes a statistic.
"""

from __future__ import annotations

import io
from collections.abc import Sequence

import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

__all__ = ["INTERVAL_COLUMNS", "PPC_COLUMNS", "interval_plot", "ppc_plot", "heatmap", "figure_png"]

#: Columns :func:`interval_plot` reads: row label, colour group, point estimate and interval ends.
INTERVAL_COLUMNS: tuple[str, ...] = ("label", "group", "estimate", "low", "high")

#: Columns :func:`ppc_plot` reads: row label, panel (method), observed value, replicated interval, outside flag.
PPC_COLUMNS: tuple[str, ...] = ("label", "group", "observed", "low", "high", "outside")

_PALETTE = ("#1f4e79", "#b85c00", "#2e7d32", "#7b1fa2", "#8d6e63", "#00838f", "#c62828", "#546e7a")
_ROW_INCHES = 0.24


def interval_plot(
    data: pd.DataFrame,
    *,
    title: str,
    xlabel: str,
    reference_lines: Sequence[float] = (),
) -> Figure:
    """Draw a forest plot: one row per estimate with its interval, coloured by group.

    Parameters
    ----------
    data : pandas.DataFrame
        One row per estimate with the columns in :data:`INTERVAL_COLUMNS`: ``label`` (the row's text, drawn from
        top to bottom in the given order), ``group`` (colour key, e.g. the method), ``estimate``, ``low``, ``high``.
        Rows whose interval ends are missing are drawn as a point without a bar.
    title : str
        Figure title.
    xlabel : str
        Axis label; say which estimate and which interval (e.g. "SC, posterior mean with 95% HDI").
    reference_lines : sequence of float
        Vertical dashed lines, e.g. 0.5 for "no association".

    Returns
    -------
    matplotlib.figure.Figure
        A figure on an Agg canvas, ``0.24`` inch tall per row plus margins; its single axis holds one error-bar
        container per group, in order of first appearance.

    Notes
    -----
    Text is drawn as plain text: ``$`` in labels is escaped so a model name cannot trigger mathtext parsing.

    Examples
    --------
    >>> rows = pd.DataFrame({"label": ["m1 · race", "m2 · race"], "group": ["implicit", "implicit"],
    ...                      "estimate": [0.7, 0.55], "low": [0.6, 0.45], "high": [0.8, 0.65]})
    >>> fig = interval_plot(rows, title="SC", xlabel="SC", reference_lines=[0.5])
    >>> [t.get_text() for t in fig.axes[0].get_yticklabels()]
    ['m1 · race', 'm2 · race']
    """
    missing = [c for c in INTERVAL_COLUMNS if c not in data.columns]
    if missing:
        raise ValueError(
            f"interval_plot: data lacks column(s) {', '.join(missing)}; needs {', '.join(INTERVAL_COLUMNS)}"
        )
    if data.empty:
        raise ValueError("interval_plot: data has no rows; pass at least one estimate")
    n = len(data)
    fig = Figure(figsize=(8.0, 1.1 + _ROW_INCHES * n), layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ypos = pd.Series(range(n - 1, -1, -1), index=data.index, dtype=float)
    for i, (group, rows) in enumerate(data.groupby("group", sort=False)):
        est = rows["estimate"].astype(float).to_numpy()
        low = (est - rows["low"].astype(float)).clip(lower=0).fillna(0).to_numpy()
        high = (rows["high"].astype(float) - est).clip(lower=0).fillna(0).to_numpy()
        ax.errorbar(
            est,
            ypos[rows.index].to_numpy(),
            xerr=[low, high],
            fmt="o",
            ms=4,
            capsize=2,
            lw=1.2,
            color=_PALETTE[i % len(_PALETTE)],
            label=_plain(group),
        )
    for x in reference_lines:
        ax.axvline(x, color="#888888", lw=0.8, ls="--", zorder=0)
    ax.set_yticks(ypos.to_numpy(), [_plain(v) for v in data["label"]], fontsize=8)
    ax.set_ylim(-0.7, n - 0.3)
    ax.set_xlabel(_plain(xlabel), fontsize=9)
    ax.set_title(_plain(title), fontsize=10, loc="left")
    ax.grid(axis="x", color="#e0e0e0", lw=0.6)
    ax.tick_params(axis="x", labelsize=8)
    if data["group"].nunique() > 1:
        ax.legend(fontsize=8, frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return fig


def ppc_plot(data: pd.DataFrame, *, title: str, xlabel: str) -> Figure:
    """Draw a posterior predictive check: per row a replicated interval (grey bar) and the observed value (point).

    Parameters
    ----------
    data : pandas.DataFrame
        One row per checked group with the columns in :data:`PPC_COLUMNS`: ``label``, ``group`` (one panel per
        group, e.g. per method, in order of first appearance), ``observed``, ``low``, ``high`` (the replicated
        interval) and ``outside`` (drawn as a filled red point; inside ones as hollow dark points).
    title : str
        Figure title.
    xlabel : str
        Axis label of every panel.

    Returns
    -------
    matplotlib.figure.Figure
        A figure on an Agg canvas with one axis per group, stacked, each row 0.24 inch tall.

    Examples
    --------
    >>> rows = pd.DataFrame({"label": ["m · race", "m · age"], "group": ["implicit", "implicit"],
    ...                      "observed": [0.7, 0.2], "low": [0.6, 0.4], "high": [0.8, 0.6],
    ...                      "outside": [False, True]})
    >>> fig = ppc_plot(rows, title="PPC", xlabel="SC")
    >>> len(fig.axes), [t.get_text() for t in fig.axes[0].get_yticklabels()]
    (1, ['m · race', 'm · age'])
    """
    missing = [c for c in PPC_COLUMNS if c not in data.columns]
    if missing:
        raise ValueError(f"ppc_plot: data lacks column(s) {', '.join(missing)}; needs {', '.join(PPC_COLUMNS)}")
    if data.empty:
        raise ValueError("ppc_plot: data has no rows; pass at least one checked group")
    panels = list(data.groupby("group", sort=False))
    heights = [0.6 + _ROW_INCHES * len(rows) for _, rows in panels]
    fig = Figure(figsize=(8.0, 0.6 + sum(heights)), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(len(panels), 1, squeeze=False, height_ratios=heights)[:, 0]
    for ax, (group, rows) in zip(axes, panels, strict=True):
        y = list(range(len(rows) - 1, -1, -1))
        low, high = rows["low"].astype(float).to_numpy(), rows["high"].astype(float).to_numpy()
        ax.hlines(y, low, high, color="#b0b0b0", lw=4)
        out = rows["outside"].astype(bool).to_numpy()
        obs = rows["observed"].astype(float).to_numpy()
        yy = pd.Series(y, dtype=float).to_numpy()
        ax.plot(obs[~out], yy[~out], "o", ms=4, mfc="white", mec=_PALETTE[0], label="inside")
        ax.plot(obs[out], yy[out], "o", ms=5, color=_PALETTE[6], label="outside")
        ax.set_yticks(y, [_plain(v) for v in rows["label"]], fontsize=7)
        ax.set_ylim(-0.7, len(rows) - 0.3)
        ax.set_title(_plain(group), fontsize=9, loc="left")
        ax.set_xlim(-0.02, 1.02)
        ax.grid(axis="x", color="#e0e0e0", lw=0.6)
        ax.tick_params(axis="x", labelsize=8)
    axes[-1].set_xlabel(_plain(xlabel), fontsize=9)
    fig.suptitle(_plain(title), fontsize=10, x=0.01, ha="left")
    return fig


def heatmap(matrix: pd.DataFrame, *, title: str, vmin: float = -1.0, vmax: float = 1.0) -> Figure:
    """Draw a labelled heatmap of a numeric matrix, each cell annotated with its value.

    Parameters
    ----------
    matrix : pandas.DataFrame
        Numeric values; the index labels the rows and the columns label the columns (e.g. an MTMM correlation
        matrix with "method · trait" labels). Missing cells stay blank.
    title : str
        Figure title.
    vmin, vmax : float
        Colour scale limits (correlations by default).

    Returns
    -------
    matplotlib.figure.Figure
        A figure on an Agg canvas with one image axis and a colour bar.

    Examples
    --------
    >>> m = pd.DataFrame([[1.0, 0.4], [0.4, 1.0]], index=["a", "b"], columns=["a", "b"])
    >>> fig = heatmap(m, title="r")
    >>> fig.axes[0].images[0].get_array().shape
    (2, 2)
    """
    if matrix.empty:
        raise ValueError("heatmap: matrix has no cells; pass a non-empty numeric DataFrame")
    values = matrix.apply(pd.to_numeric, errors="coerce").astype(float).to_numpy()
    nrow, ncol = values.shape
    side = max(3.5, 0.45 * max(nrow, ncol) + 2.0)
    fig = Figure(figsize=(side + 1.0, side), layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    image = ax.imshow(values, cmap="RdBu_r", vmin=vmin, vmax=vmax)
    ax.set_xticks(range(ncol), [_plain(c) for c in matrix.columns], rotation=60, ha="right", fontsize=7)
    ax.set_yticks(range(nrow), [_plain(r) for r in matrix.index], fontsize=7)
    for (r, c), v in pd.DataFrame(values).stack().dropna().items():
        ax.text(c, r, f"{v:.2f}", ha="center", va="center", fontsize=6, color="white" if abs(v) > 0.6 else "black")
    ax.set_title(_plain(title), fontsize=10, loc="left")
    fig.colorbar(image, ax=ax, shrink=0.7)
    return fig


def figure_png(fig: Figure, *, dpi: int = 110) -> bytes:
    """Encode a figure as PNG bytes.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure to encode.
    dpi : int
        Resolution in dots per inch.

    Returns
    -------
    bytes
        The PNG file's bytes (starting with the PNG signature).

    Examples
    --------
    >>> figure_png(heatmap(pd.DataFrame([[0.5]]), title="x"))[:8]
    b'\\x89PNG\\r\\n\\x1a\\n'
    """
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, facecolor="white")
    return buffer.getvalue()


def _plain(value: object) -> str:
    return str(value).replace("$", r"\$")
