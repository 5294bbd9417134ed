"""The design: counterbalanced cells, stable ids and seeds, and which answer is stereotype-consistent."""

from __future__ import annotations

from collections import Counter

import pytest

from bias_validity.probes.design import Kind, build_design
from bias_validity.probes.schema import IMPLICIT_ORDERS, REVERSED_SUFFIX, is_reversed
from bias_validity.probes.stimuli import load_dimension


@pytest.fixture(scope="module")
def design():
    dim = load_dimension("gender_career")
    return build_design(
        "hf:m", [dim], ["implicit", "explicit", "logprob", "embedding"], sessions=2, reps=3, items_per_dimension=2
    )


def test_sizes_follow_the_design(design):
    counts = Counter(q.method for q in design)
    # implicit: 3 templates x 2 items x 4 orders x 2 sessions x 3 reps; explicit: 3 x 2 x 2 orders x 2 polarities
    # (the statement and its reversal) x 2 x 3
    assert counts["implicit"] == 3 * 2 * 4 * 2 * 3
    assert counts["explicit"] == 3 * 2 * 2 * 2 * 2 * 3
    # logprob is deterministic (asked once): 2 sentence frames x 2 items x 2 orders + 3 choice x 2 items x 4 orders
    assert counts["logprob"] == 2 * 2 * 2 + 3 * 2 * 4
    assert counts["embedding"] == 2 + 1  # one row per item and the whole-set WEAT row
    assert len({q.response_id for q in design}) == len(design)


def test_rebuilding_gives_the_same_ids_and_seeds(design):
    again = build_design(
        "hf:m",
        [load_dimension("gender_career")],
        ["implicit", "explicit", "logprob", "embedding"],
        sessions=2,
        reps=3,
        items_per_dimension=2,
    )
    assert [(q.response_id, q.seed) for q in again] == [(q.response_id, q.seed) for q in design]
    seeds = [q.seed for q in design if q.method == "implicit"]
    assert len(set(seeds)) == len(seeds)  # every session and rep draws its own stream


def test_counterbalancing_and_consistent_answer():
    dim = load_dimension("gender_career")
    item = dim.items[0]
    qs = [
        q
        for q in build_design("hf:m", [dim], ["implicit"], sessions=1, reps=1, items_per_dimension=1)
        if q.template_id == "implicit-mask"
    ]
    by_order = {q.order: q for q in qs}
    assert set(by_order) == set(IMPLICIT_ORDERS)
    assert by_order["ab-xy"].candidates == (item.exemplar_a, item.exemplar_b)
    assert by_order["ba-xy"].candidates == (item.exemplar_b, item.exemplar_a)
    # xy: the first mask's attribute is group A's, so A's exemplar first is consistent
    assert by_order["ab-xy"].consistent_answer == (item.exemplar_a, item.exemplar_b)
    assert by_order["ab-yx"].consistent_answer == (item.exemplar_b, item.exemplar_a)
    assert by_order["ab-yx"].params["first_attribute"] == item.attribute_b
    assert all(q.kind == Kind.CHOICE for q in qs)


def test_bad_settings_are_refused():
    dim = load_dimension("age")
    with pytest.raises(ValueError, match="unknown method"):
        build_design("hf:m", [dim], ["telepathy"])
    with pytest.raises(ValueError, match="sessions and reps must be >= 1"):
        build_design("hf:m", [dim], ["implicit"], sessions=0)


def test_explicit_statements_are_balanced_by_their_reversal(design):
    """Every template x item x attribute order is asked as the stereotype and as its reversal (groups swapped), so
    a model agreeing with everything scores 0.5; the old design asked only stereotype statements."""
    explicit = [q for q in design if q.method == "explicit" and q.session == 1 and q.rep == 0]
    reversed_ = [q for q in explicit if is_reversed(q.order)]
    assert len(reversed_) * 2 == len(explicit)
    cells = Counter((q.template_id, q.item_id, q.order.removesuffix(REVERSED_SUFFIX)) for q in explicit)
    assert set(cells.values()) == {2}
    dim = load_dimension("gender_career")
    item = dim.items[0]
    plain = next(q for q in explicit if q.order == "xy" and q.item_id == item.item_id)
    flipped = next(
        q
        for q in explicit
        if q.order == "xy" + REVERSED_SUFFIX and q.template_id == plain.template_id and q.item_id == item.item_id
    )
    first_word = lambda q: q.messages[-1]["content"].split('"')[1].split()[0].lower()  # noqa: E731
    # the same attribute keeps its place; the group labels trade places
    assert (first_word(plain), first_word(flipped)) == (dim.label_a, dim.label_b)
