"""Stimulus files: every packaged dimension loads and is sound; every bad file fails with one line naming the field."""

from __future__ import annotations

import copy
import json

import pytest

from bias_validity.probes.stimuli import (
    DIMENSIONS,
    MIN_ITEMS,
    Dimension,
    load_dimension,
    load_dimensions,
    load_stimulus_file,
)

LABELS = {
    "age": ("young people", "old people"),
    "disability": ("people without disabilities", "people with disabilities"),
    "gender_career": ("men", "women"),
    "gender_occupation": ("men", "women"),
    "race": ("white people", "Black people"),
    "science": ("men", "women"),
}


def test_dimensions_are_the_six():
    assert DIMENSIONS == ("age", "disability", "gender_career", "gender_occupation", "race", "science")


@pytest.mark.parametrize("name", DIMENSIONS)
def test_packaged_dimension_is_sound(name):
    dim = load_dimension(name)
    assert isinstance(dim, Dimension)
    assert dim.name == name
    assert len(dim.items) >= MIN_ITEMS
    assert dim.source.strip() and dim.label_a != dim.label_b
    # plural noun phrases for "<label> are to ..." statements; group A is the one attributes_a is stereotypic for
    assert (dim.label_a, dim.label_b) == LABELS[name]
    ids = [i.item_id for i in dim.items]
    assert ids == [f"{name}-{k:02d}" for k in range(1, len(ids) + 1)]
    combos = {(i.exemplar_a, i.exemplar_b, i.attribute_a, i.attribute_b) for i in dim.items}
    assert len(combos) == len(dim.items)
    for item in dim.items:
        assert item.exemplar_a in dim.exemplars_a and item.exemplar_b in dim.exemplars_b
        assert item.attribute_a in dim.attributes_a and item.attribute_b in dim.attributes_b
    # no word belongs to both groups, and no exemplar doubles as an attribute
    exemplars = set(dim.exemplars_a) | set(dim.exemplars_b)
    assert not set(dim.exemplars_a) & set(dim.exemplars_b)
    assert not exemplars & (set(dim.attributes_a) | set(dim.attributes_b))


def test_known_stimuli_come_from_their_sources():
    # Caliskan et al. 2017 WEAT 6 names; BLS male-/female-dominated occupations
    occ = load_dimension("gender_occupation")
    assert occ.exemplars_a[0] == "John" and occ.exemplars_b[0] == "Amy"
    assert "carpenter" in occ.attributes_a and "nurse" in occ.attributes_b
    # WEAT 10 young/old names; Project Implicit disability words; WEAT 5 names
    assert "Tiffany" in load_dimension("age").exemplars_a and "Ethel" in load_dimension("age").exemplars_b
    assert "wheelchair" in load_dimension("disability").exemplars_b
    race = load_dimension("race")
    assert "Darnell" in race.exemplars_b and "Brad" in race.exemplars_a
    science = load_dimension("science")
    assert "physics" in science.attributes_a and "arts" in science.attributes_b


def test_load_dimensions_order_and_subset():
    assert [d.name for d in load_dimensions()] == list(DIMENSIONS)
    assert [d.name for d in load_dimensions(["race", "age"])] == ["race", "age"]


def test_unknown_dimension_lists_valid_ones():
    with pytest.raises(ValueError, match=r"unknown dimension 'gender'; valid dimensions: age, disability"):
        load_dimension("gender")
    with pytest.raises(ValueError, match="not the string"):
        load_dimensions("age")


def _good() -> dict:
    dim = load_dimension("gender_career")
    return {
        "name": "custom",
        "source": "test",
        "label_a": dim.label_a,
        "label_b": dim.label_b,
        "exemplars_a": list(dim.exemplars_a),
        "exemplars_b": list(dim.exemplars_b),
        "attributes_a": list(dim.attributes_a),
        "attributes_b": list(dim.attributes_b),
        "items": [vars(i).copy() for i in dim.items],
    }


def test_user_file_round_trips(tmp_path):
    path = tmp_path / "custom.json"
    path.write_text(json.dumps(_good()))
    dim = load_stimulus_file(path)
    assert dim.name == "custom" and dim.items == load_dimension("gender_career").items


def _drop(d, key):
    del d[key]


def _set(key, value):
    def edit(d):
        d[key] = value

    return edit


def _item(index, key, value):
    def edit(d):
        d["items"][index][key] = value

    return edit


BAD_CASES = {
    "missing_label": (lambda d: _drop(d, "label_b"), r"missing field 'label_b'"),
    "missing_items": (lambda d: _drop(d, "items"), r"missing field 'items'"),
    "empty_source": (_set("source", " "), r"field 'source' must be a non-empty string"),
    "empty_list": (_set("exemplars_a", []), r"field 'exemplars_a' must be a non-empty list"),
    "empty_entry": (_set("attributes_b", ["home", ""]), r"field 'attributes_b', entry 2: empty"),
    "duplicated_entry": (_set("exemplars_b", ["Julia", "Anna", "Julia"]), r"field 'exemplars_b': 'Julia' is dup"),
    "word_in_both_groups": (_set("exemplars_b", ["Julia", "John"]), r"field 'exemplars_b': 'John' is also in"),
    "item_word_not_in_list": (_item(2, "attribute_a", "golf"), r"item 'gender_career-03': attribute_a 'golf' is not"),
    "item_field_missing": (lambda d: _drop(d["items"][0], "exemplar_b"), r"item 1: missing or empty 'exemplar_b'"),
    "duplicated_item_id": (_item(1, "item_id", "gender_career-01"), r"item_id 'gender_career-01' is duplicated"),
    "too_few_items": (lambda d: d.update(items=d["items"][:7]), r"at least 8 items, found 7"),
}


@pytest.mark.parametrize("case", sorted(BAD_CASES))
def test_bad_file_gives_one_line_naming_file_and_field(tmp_path, case):
    edit, message = BAD_CASES[case]
    data = copy.deepcopy(_good())
    edit(data)
    path = tmp_path / f"{case}.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match=message) as info:
        load_stimulus_file(path)
    text = str(info.value)
    assert "\n" not in text
    assert text.startswith(str(path) + ": ")
    assert "field '" in text


def test_unreadable_json_names_the_file(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text("{not json")
    with pytest.raises(ValueError, match=r"broken.json: cannot read a JSON stimulus file \(JSONDecodeError"):
        load_stimulus_file(path)
    with pytest.raises(ValueError, match=r"missing.json: cannot read"):
        load_stimulus_file(tmp_path / "missing.json")
