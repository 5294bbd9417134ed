"""The stimulus dimensions: group labels, exemplars, attributes and the items built from them.

Each dimension is one JSON file in this folder (``age``, ``disability``, ``gender_career``, ``gender_occupation``,
``race``, ``science``), built from published stimuli with its provenance in the ``source`` field. Users can write
their own file in the same format and load it with :func:`load_stimulus_file`.

File format (all fields required)::

    {"name": "gender_career", "source": "where the words come from",
     "label_a": "men", "label_b": "women",            # plural noun phrases for explicit statements
     "exemplars_a": ["John", ...], "exemplars_b": ["Amy", ...],   # the words the implicit choice offers
     "attributes_a": ["management", ...], "attributes_b": ["family", ...],
     "items": [{"item_id": "gender_career-01", "exemplar_a": "John", "exemplar_b": "Amy",
                "attribute_a": "management", "attribute_b": "family"}, ...]}

Group A is the group the stereotype associates with ``attributes_a``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

__all__ = ["DIMENSIONS", "MIN_ITEMS", "Item", "Dimension", "load_dimension", "load_dimensions", "load_stimulus_file"]

#: The packaged dimensions, in report order.
DIMENSIONS: tuple[str, ...] = ("age", "disability", "gender_career", "gender_occupation", "race", "science")

#: The fewest items a stimulus file may have (item effects need several items to be estimable).
MIN_ITEMS = 8

_TEXT_FIELDS = ("name", "source", "label_a", "label_b")
_LIST_FIELDS = ("exemplars_a", "exemplars_b", "attributes_a", "attributes_b")
_ITEM_WORDS = {
    "exemplar_a": "exemplars_a",
    "exemplar_b": "exemplars_b",
    "attribute_a": "attributes_a",
    "attribute_b": "attributes_b",
}


@dataclass(frozen=True)
class Item:
    """One stimulus item: an exemplar of each group and an attribute stereotypic for each group."""

    item_id: str
    exemplar_a: str
    exemplar_b: str
    attribute_a: str
    attribute_b: str


@dataclass(frozen=True)
class Dimension:
    """One stimulus dimension, as loaded and validated from its JSON file."""

    name: str
    source: str
    label_a: str
    label_b: str
    exemplars_a: tuple[str, ...]
    exemplars_b: tuple[str, ...]
    attributes_a: tuple[str, ...]
    attributes_b: tuple[str, ...]
    items: tuple[Item, ...]


def load_stimulus_file(path: str | Path) -> Dimension:
    """Load and validate one stimulus file in the packaged format.

    Parameters
    ----------
    path : str or Path
        A JSON file with the fields described in the module docstring.

    Returns
    -------
    Dimension
        ``name``, ``source``, ``label_a``, ``label_b``, the four word lists as tuples and ``items`` as a tuple of
        :class:`Item` in file order.

    Raises
    ------
    ValueError
        One line naming the file and the field: unreadable JSON, a missing field or one of the wrong type, an empty
        or duplicated word-list entry, a word in both exemplar lists or both attribute lists, an item word not in its
        list, a duplicated ``item_id``, or fewer than ``MIN_ITEMS`` items.

    Examples
    --------
    >>> import json, os, tempfile
    >>> dim = load_dimension("age")
    >>> with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
    ...     json.dump({"name": "mine", "source": "me", "label_a": dim.label_a, "label_b": dim.label_b,
    ...                "exemplars_a": list(dim.exemplars_a), "exemplars_b": list(dim.exemplars_b),
    ...                "attributes_a": list(dim.attributes_a), "attributes_b": list(dim.attributes_b),
    ...                "items": [vars(i) for i in dim.items]}, f)
    >>> load_stimulus_file(f.name).items == dim.items
    True
    >>> os.remove(f.name)
    """
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: cannot read a JSON stimulus file ({type(exc).__name__}: {exc})") from None
    return _parse(data, str(path))


def load_dimension(name: str) -> Dimension:
    """Load one packaged stimulus dimension by name.

    Parameters
    ----------
    name : str
        One of :data:`DIMENSIONS`.

    Returns
    -------
    Dimension
        The validated dimension (see :func:`load_stimulus_file`).

    Examples
    --------
    >>> dim = load_dimension("gender_career")
    >>> dim.label_a, dim.label_b, dim.items[0].item_id
    ('men', 'women', 'gender_career-01')
    """
    if name not in DIMENSIONS:
        raise ValueError(f"unknown dimension {name!r}; valid dimensions: {', '.join(DIMENSIONS)}")
    resource = resources.files(__name__).joinpath(f"{name}.json")
    data = json.loads(resource.read_text(encoding="utf-8"))
    return _parse(data, f"{name}.json")


def load_dimensions(names: Sequence[str] | None = None) -> list[Dimension]:
    """Load several packaged dimensions: ``None`` gives all six in :data:`DIMENSIONS` order.

    Parameters
    ----------
    names : sequence of str, optional
        Dimension names, each one of :data:`DIMENSIONS`; the result follows this order.

    Returns
    -------
    list of Dimension

    Examples
    --------
    >>> [d.name for d in load_dimensions()]
    ['age', 'disability', 'gender_career', 'gender_occupation', 'race', 'science']
    """
    if isinstance(names, str):
        raise ValueError(f"names must be a sequence of dimension names, not the string {names!r}")
    return [load_dimension(n) for n in (DIMENSIONS if names is None else names)]


def _parse(data: object, where: str) -> Dimension:
    if not isinstance(data, dict):
        raise ValueError(f"{where}: the file must hold a JSON object with the fields {', '.join(_all_fields())}")
    for key in _all_fields():
        if key not in data:
            raise ValueError(f"{where}: missing field '{key}'")
    for key in _TEXT_FIELDS:
        if not isinstance(data[key], str) or not data[key].strip():
            raise ValueError(f"{where}: field '{key}' must be a non-empty string")
    words = {key: _word_list(data[key], where, key) for key in _LIST_FIELDS}
    for a, b in (("exemplars_a", "exemplars_b"), ("attributes_a", "attributes_b")):
        shared = sorted(set(words[a]) & set(words[b]))
        if shared:
            raise ValueError(f"{where}: field '{b}': {shared[0]!r} is also in '{a}'")
    items = _items(data["items"], words, where)
    return Dimension(
        name=data["name"],
        source=data["source"],
        label_a=data["label_a"],
        label_b=data["label_b"],
        exemplars_a=words["exemplars_a"],
        exemplars_b=words["exemplars_b"],
        attributes_a=words["attributes_a"],
        attributes_b=words["attributes_b"],
        items=items,
    )


def _all_fields() -> tuple[str, ...]:
    return (*_TEXT_FIELDS, *_LIST_FIELDS, "items")


def _word_list(value: object, where: str, key: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not value:
        raise ValueError(f"{where}: field '{key}' must be a non-empty list of words")
    seen: set[str] = set()
    for i, word in enumerate(value):
        if not isinstance(word, str) or not word.strip():
            raise ValueError(f"{where}: field '{key}', entry {i + 1}: empty or not a string")
        if word in seen:
            raise ValueError(f"{where}: field '{key}': {word!r} is duplicated")
        seen.add(word)
    return tuple(value)


def _items(value: object, words: dict[str, tuple[str, ...]], where: str) -> tuple[Item, ...]:
    if not isinstance(value, list) or len(value) < MIN_ITEMS:
        n = len(value) if isinstance(value, list) else 0
        raise ValueError(f"{where}: field 'items' must list at least {MIN_ITEMS} items, found {n}")
    items: list[Item] = []
    ids: set[str] = set()
    for i, raw in enumerate(value):
        if not isinstance(raw, dict):
            raise ValueError(f"{where}: field 'items', item {i + 1}: must be an object")
        for key in ("item_id", *_ITEM_WORDS):
            if not isinstance(raw.get(key), str) or not raw[key].strip():
                raise ValueError(f"{where}: field 'items', item {i + 1}: missing or empty '{key}'")
        for key, list_key in _ITEM_WORDS.items():
            if raw[key] not in words[list_key]:
                raise ValueError(
                    f"{where}: field 'items', item {raw['item_id']!r}: {key} {raw[key]!r} is not in '{list_key}'"
                )
        if raw["item_id"] in ids:
            raise ValueError(f"{where}: field 'items': item_id {raw['item_id']!r} is duplicated")
        ids.add(raw["item_id"])
        items.append(Item(**{k: raw[k] for k in ("item_id", *_ITEM_WORDS)}))
    return tuple(items)
