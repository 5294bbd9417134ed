"""Index the design cells of a study for the hierarchical model: which group, item, template and order each cell is.

Generic: the column names are passed in a :class:`Columns` record, so nothing here knows about LLMs.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from bias_validity.psychometrics.bayes.config import FitConfig

__all__ = ["Columns", "DEFAULT_COLUMNS", "Design", "index_design", "item_labels"]


@dataclass(frozen=True)
class Columns:
    """Names of the labelling columns in the cell tables handed to the model."""

    unit: str = "model"  #: who is measured (e.g. an LLM)
    trait: str = "dimension"  #: what is measured (e.g. a bias dimension)
    method: str = "method"  #: how it is measured
    item: str = "item_id"  #: the stimulus; its effect is shared across units and correlated across methods
    template: str = "template_id"  #: wording of the prompt (random effect within method)
    order: str = "order"  #: counterbalancing cell (position-bias effect within method)

    @property
    def group(self) -> list[str]:
        """Columns that define one reported score: unit x trait x method."""
        return [self.unit, self.trait, self.method]

    @property
    def cell(self) -> list[str]:
        """Columns that define one design cell."""
        return [*self.group, self.template, self.item, self.order]

    def to_dict(self) -> dict[str, str]:
        """The column names by role (``Columns(**d)`` rebuilds the record)."""
        return dataclasses.asdict(self)


#: The responses-table names: model, dimension, method, item_id, template_id, order.
DEFAULT_COLUMNS = Columns()


@dataclass
class Design:
    """Integer indices of every cell, plus the labels they point at (the posterior's coordinates)."""

    columns: Columns
    methods: list[str]  #: all methods, in the order of the item-effect correlation matrix
    #: item labels (:func:`item_labels`), sorted: an item is a (trait, item) pair, so an id asked under two traits
    #: is two items
    items: list[str]
    templates: list[str]  #: "method|template" labels
    orders: list[str]  #: "method|order" labels
    binary: pd.DataFrame  #: cells with k, n and integer columns g, i, k_m, t, o
    binary_groups: pd.DataFrame  #: unit, trait, method of each binary group g
    ordinal: pd.DataFrame  #: cells with the count matrix in ``counts`` and the same index columns
    ordinal_groups: pd.DataFrame
    ordinal_counts: np.ndarray  #: (cells, levels) counts
    ordinal_methods: list[str]
    scores: pd.DataFrame  #: one row per score with z (standardised within method x template) and indices
    score_groups: pd.DataFrame
    binary_methods: list[str] = field(default_factory=list)
    score_methods: list[str] = field(default_factory=list)
    units: list[str] = field(default_factory=list)  #: the units (models), sorted
    #: "unit|method|template", "unit|method|order" and "unit|method|item" labels of the pairs the binary and ordinal
    #: cells hold (cell columns ``ut``, ``uo``, ``ui``): each unit's own deviations from the shared effects
    unit_templates: list[str] = field(default_factory=list)
    unit_orders: list[str] = field(default_factory=list)
    unit_items: list[str] = field(default_factory=list)
    #: "unit|method" of each ordinal unit x method (cell column ``c_um``): each has its own Likert cutpoints
    unit_ordinal: list[str] = field(default_factory=list)
    #: binary and ordinal methods answered by at least two units: only their cells carry unit deviations (the
    #: others' ``ut``, ``uo``, ``ui`` point one past the labels, a deviation of zero)
    unit_methods: list[str] = field(default_factory=list)

    @property
    def levels(self) -> int:
        """Number of ordinal answer levels (columns of :attr:`ordinal_counts`)."""
        return int(self.ordinal_counts.shape[1])

    def cell_tables(self) -> dict[str, pd.DataFrame]:
        """The tables this design indexes, in the form :func:`index_design` takes them (so it rebuilds the design).

        ``binary``: cell columns, ``k``, ``n``; ``ordinal``: cell columns, ``level``, ``n`` (one row per observed
        level); ``scores``: cell columns, ``score``.
        """
        cell = self.columns.cell
        level_cols = [f"level_{j}" for j in range(1, self.levels + 1)]
        ordinal = self.ordinal[cell].assign(**dict(zip(level_cols, self.ordinal_counts.T, strict=True)))
        ordinal = ordinal.melt(id_vars=cell, value_vars=level_cols, var_name="level", value_name="n")
        ordinal = ordinal[ordinal["n"] > 0].assign(level=lambda f: f["level"].str.removeprefix("level_").astype(int))
        return {
            "binary": self.binary[[*cell, "k", "n"]].reset_index(drop=True),
            "ordinal": ordinal.sort_values([*cell, "level"]).reset_index(drop=True),
            "scores": self.scores[[*cell, "score"]].reset_index(drop=True),
        }

    def item_traits(self) -> list[str]:
        """The trait each item (in :attr:`items` order) belongs to."""
        trait: dict[int, str] = {}
        for frame in (self.binary, self.ordinal, self.scores):
            trait.update(zip(frame["i"].astype(int), frame[self.columns.trait].astype(str), strict=True))
        return [trait[j] for j in range(len(self.items))]

    def item_mask(self) -> np.ndarray:
        """1.0 for each method (in :attr:`methods` order) observed on at least two items, else 0.0: only those
        methods get item effects, and only their correlations are reported."""
        seen: dict[str, set[int]] = {name: set() for name in self.methods}
        for frame in (self.binary, self.ordinal, self.scores):
            for method, item in zip(frame[self.columns.method], frame["i"].astype(int), strict=True):
                seen[method].add(item)
        return np.array([float(len(seen[name]) > 1) for name in self.methods])


def item_labels(cells: pd.DataFrame, columns: Columns = DEFAULT_COLUMNS, *, composite: bool | None = None) -> pd.Series:
    """The item label of each cell: an item is a (trait, item) pair, labelled by its item id where every id belongs
    to one trait, else by ``"trait/item"`` (so an id asked under two traits names two items).

    ``composite`` forces one labelling or the other (the default: whether some id recurs across traits in ``cells``).

    Examples
    --------
    >>> cells = pd.DataFrame({"dimension": ["age", "race", "race"], "item_id": ["a1", "r1", "r2"]})
    >>> item_labels(cells).tolist()
    ['a1', 'r1', 'r2']
    >>> item_labels(cells.assign(item_id=["i1", "i1", "i2"])).tolist()
    ['age/i1', 'race/i1', 'race/i2']
    """
    trait, item = cells[columns.trait].astype(str), cells[columns.item].astype(str)
    if composite is None:
        composite = _ids_recur(cells, columns)
    return trait + "/" + item if composite else item


def _ids_recur(cells: pd.DataFrame, columns: Columns) -> bool:
    """Whether some item id of ``cells`` is asked under more than one trait."""
    pairs = cells[[columns.trait, columns.item]].astype(str).drop_duplicates()
    return bool(pairs[columns.item].duplicated().any())


def index_design(
    binary: pd.DataFrame,
    *,
    ordinal: pd.DataFrame | None = None,
    scores: pd.DataFrame | None = None,
    columns: Columns = DEFAULT_COLUMNS,
    levels: int = 5,
    unit_effects: bool = FitConfig.unit_effects,
) -> Design:
    """Attach integer indices to the binary cells, the ordinal cells and the continuous scores of a study.

    ``binary`` has the cell columns plus ``k`` (consistent answers) and ``n`` (valid answers); ``ordinal`` has the
    cell columns plus ``level`` (1..``levels``) and ``n``; ``scores`` has the cell columns plus ``score``. An item
    is a (trait, item) pair: an id asked under two traits is two items, each with its own effects and trait
    (labels: :func:`item_labels`). With ``unit_effects`` (by default :attr:`FitConfig.unit_effects`), the binary and
    ordinal methods that at least two units answered (:attr:`Design.unit_methods`) get each unit's own template,
    order and item labels, for the model's unit deviations; without it there are none (the units share them).
    """
    cols = columns
    ordinal = _empty(cols, ("level", "n")) if ordinal is None else ordinal
    scores = _empty(cols, ("score",)) if scores is None else scores
    for name, frame, extra in (
        ("binary", binary, ("k", "n")),
        ("ordinal", ordinal, ("level", "n")),
        ("scores", scores, ("score",)),
    ):
        missing = [c for c in (*cols.cell, *extra) if c not in frame.columns]
        if missing:
            raise ValueError(f"{name} table lacks column(s) {', '.join(missing)}; it needs {', '.join(cols.cell)}")
    if len(binary) + len(ordinal) + len(scores) == 0:
        raise ValueError("no data: the binary, ordinal and score tables are all empty")
    ord_wide = _ordinal_wide(ordinal, cols, levels)
    all_cells = pd.concat([binary[cols.cell], ord_wide[cols.cell], scores[cols.cell]], ignore_index=True)
    methods = sorted(all_cells[cols.method].astype(str).unique())
    composite = _ids_recur(all_cells, cols)  # one labelling for every table of the design
    items = sorted(set(item_labels(all_cells, cols, composite=composite)))
    tm = pd.concat([binary, ord_wide])[[cols.method, cols.template]].astype(str)
    om = pd.concat([binary, ord_wide])[[cols.method, cols.order]].astype(str)
    templates = sorted(set(tm[cols.method] + "|" + tm[cols.template]))
    orders = sorted(set(om[cols.method] + "|" + om[cols.order]))
    units = sorted(all_cells[cols.unit].astype(str).unique())
    answered = pd.concat([binary, ord_wide])[cols.cell].astype(str)
    # a unit deviates from a shared effect only where a second unit answered the same method
    shared_by = answered.groupby(cols.method)[cols.unit].nunique()
    unit_methods = sorted(shared_by.index[shared_by > 1]) if unit_effects else []
    answered = answered[answered[cols.method].isin(unit_methods)]
    answered_item = item_labels(answered, cols, composite=composite)
    by_unit = answered[cols.unit] + "|" + answered[cols.method] + "|"
    unit_templates = sorted(set(by_unit + answered[cols.template]))
    unit_orders = sorted(set(by_unit + answered[cols.order]))
    unit_items = sorted(set(by_unit + answered_item))

    def attach(frame: pd.DataFrame, with_effects: bool) -> tuple[pd.DataFrame, pd.DataFrame]:
        out = frame.reset_index(drop=True).copy()
        for c in cols.cell:
            out[c] = out[c].astype(str)
        groups = out[cols.group].drop_duplicates().sort_values(cols.group).reset_index(drop=True)
        key = dict(zip(map(tuple, groups.to_numpy()), range(len(groups)), strict=True))
        out["g"] = [key[tuple(r)] for r in out[cols.group].to_numpy()]
        out["i"] = item_labels(out, cols, composite=composite).map({v: j for j, v in enumerate(items)}).astype(int)
        out["k_m"] = out[cols.method].map({v: j for j, v in enumerate(methods)}).astype(int)
        if with_effects:
            out["t"] = (out[cols.method] + "|" + out[cols.template]).map({v: j for j, v in enumerate(templates)})
            out["o"] = (out[cols.method] + "|" + out[cols.order]).map({v: j for j, v in enumerate(orders)})
            prefix = out[cols.unit] + "|" + out[cols.method] + "|"
            item = item_labels(out, cols, composite=composite)
            for column, labels, part in (
                ("ut", unit_templates, out[cols.template]),
                ("uo", unit_orders, out[cols.order]),
                ("ui", unit_items, item),
            ):
                # a cell of a method no second unit answered points past the labels: its deviation is zero
                out[column] = (prefix + part).map({v: j for j, v in enumerate(labels)}).fillna(len(labels)).astype(int)
        return out, groups

    b, b_groups = attach(binary, True)
    o, o_groups = attach(ord_wide, True)
    s, s_groups = attach(scores, False)
    if len(s):
        s["z"] = s.groupby([cols.method, cols.template])["score"].transform(_standardise).astype(float)
    ord_methods = sorted(o[cols.method].unique())
    unit_ordinal = sorted(set(o[cols.unit] + "|" + o[cols.method])) if len(o) else []
    if len(o):
        o["c_m"] = o[cols.method].map({v: j for j, v in enumerate(ord_methods)}).astype(int)
        o["c_um"] = (o[cols.unit] + "|" + o[cols.method]).map({v: j for j, v in enumerate(unit_ordinal)}).astype(int)
    counts = o[[f"level_{j}" for j in range(1, levels + 1)]].to_numpy(dtype=int) if len(o) else np.zeros((0, levels))
    return Design(
        columns=cols,
        methods=methods,
        items=items,
        templates=templates,
        orders=orders,
        binary=b,
        binary_groups=b_groups,
        ordinal=o,
        ordinal_groups=o_groups,
        ordinal_counts=counts,
        ordinal_methods=ord_methods,
        scores=s,
        score_groups=s_groups,
        binary_methods=sorted(b[cols.method].unique()),
        score_methods=sorted(s[cols.method].unique()),
        units=units,
        unit_templates=unit_templates,
        unit_orders=unit_orders,
        unit_items=unit_items,
        unit_ordinal=unit_ordinal,
        unit_methods=unit_methods,
    )


def _empty(cols: Columns, extra: tuple[str, ...]) -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype="object") for c in (*cols.cell, *extra)})


def _standardise(x: pd.Series) -> pd.Series:
    x = x.astype(float)
    sd = x.std(ddof=0)
    return (x - x.mean()) / (sd if sd > 0 else 1.0)


def _ordinal_wide(ordinal: pd.DataFrame, cols: Columns, levels: int) -> pd.DataFrame:
    if len(ordinal) == 0:
        return pd.DataFrame(columns=[*cols.cell, *(f"level_{j}" for j in range(1, levels + 1))])
    lv = pd.to_numeric(ordinal["level"]).astype(int)
    if ((lv < 1) | (lv > levels)).any():
        raise ValueError(f"ordinal level outside 1..{levels}: {sorted(set(lv[(lv < 1) | (lv > levels)]))}")
    frame = ordinal.assign(level=lv.map(lambda j: f"level_{j}"))
    wide = frame.pivot_table(index=cols.cell, columns="level", values="n", aggfunc="sum", fill_value=0)
    wide = wide.reindex(columns=[f"level_{j}" for j in range(1, levels + 1)], fill_value=0)
    return wide.reset_index()
