"""The one exception that marks a data condition rather than a bug."""

from __future__ import annotations

__all__ = ["NotEstimable"]


class NotEstimable(ValueError):
    """The data cannot give this figure: too few items, no shared cells, no answers of a method.

    Raised for data conditions only, with a one-line reason naming what is missing; the report turns it into a
    "not estimable" cell with that reason. Every other exception is a bug and surfaces.

    Examples
    --------
    >>> raise NotEstimable("2 items are too few for an item-cluster interval")
    Traceback (most recent call last):
    ...
    bias_validity.psychometrics.errors.NotEstimable: 2 items are too few for an item-cluster interval
    """
