"""The design: every annotator uses every method on different items, every item gets every method, and method
order follows a Williams design (each method once per period, each ordered pair of methods adjacent equally often)."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from annotation.method_study.design import design_build, design_problems, williams_square


@pytest.mark.parametrize("m", [2, 3, 4, 5, 6])
def test_williams_square_is_latin_and_balanced_for_carry_over(m):
    rows = williams_square(m)
    assert len(rows) == (m if m % 2 == 0 else 2 * m)
    for row in rows:
        assert sorted(row) == list(range(m))
    for period in range(m):
        counts = Counter(row[period] for row in rows)
        assert set(counts.values()) == {len(rows) // m}
    successions = Counter((row[p], row[p + 1]) for row in rows for p in range(m - 1))
    assert len(successions) == m * (m - 1)
    assert len(set(successions.values())) == 1


@settings(max_examples=60, deadline=None)
@given(
    m=st.integers(2, 4),
    n=st.integers(2, 13),
    items=st.integers(2, 60),
    block=st.integers(1, 30),
    seed=st.integers(0, 1000),
)
def test_every_feasible_design_covers_every_item_under_every_method(m, n, items, block, seed):
    item_ids = list(range(100, 100 + items))
    if design_problems(n_methods=m, n_annotators=n, n_items=items, block_size=block):
        with pytest.raises(ValueError):
            design_build(n_methods=m, n_annotators=n, item_ids=item_ids, block_size=block, seed=seed)
        return
    cells = design_build(n_methods=m, n_annotators=n, item_ids=item_ids, block_size=block, seed=seed)
    assert {(c.item, c.method) for c in cells} == {(i, t) for i in item_ids for t in range(m)}
    for annotator in range(n):
        mine = sorted((c for c in cells if c.annotator == annotator), key=lambda c: c.sequence)
        assert [c.sequence for c in mine] == list(range(len(mine)))
        assert len({c.item for c in mine}) == len(mine), "an annotator never sees an item twice"
        assert {c.method for c in mine} == set(range(m))
        # One block per method, blocks contiguous and in the Williams row's order.
        blocks = [c.block for c in mine]
        assert blocks == sorted(blocks)
        order = [next(c.method for c in mine if c.block == b) for b in range(m)]
        assert order == williams_square(m)[annotator % len(williams_square(m))]


def test_infeasible_numbers_say_what_to_change():
    assert "at least 3 annotators" in " ".join(design_problems(n_methods=3, n_annotators=2, n_items=40, block_size=20))
    assert "at least 14" in " ".join(design_problems(n_methods=3, n_annotators=3, n_items=40, block_size=5))
    assert "at most 13" in " ".join(design_problems(n_methods=3, n_annotators=3, n_items=40, block_size=20))
    assert design_problems(n_methods=3, n_annotators=3, n_items=40, block_size=14) == []
