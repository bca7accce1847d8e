"""A suggestion's rationale names the responses by stored number (the baseline, and the LLM whose prompt numbers
them from 1); each annotator reads it with their own display letters, so a response has one name on their page."""

from __future__ import annotations

from annotation.judgment import rationale_for_viewer

SWAPPED = {1: "A", 0: "B"}  # this annotator sees stored position 1 first


def test_single_and_listed_numbers_are_renamed():
    text = "Response 2 is the longest (900 characters against 400). Responses 1 and 2 both cite sources."
    assert rationale_for_viewer(text, SWAPPED) == (
        "Response A is the longest (900 characters against 400). Responses B and A both cite sources."
    )


def test_lower_case_and_lists_with_commas_or_or():
    assert rationale_for_viewer("response 1, 2 or 3", {0: "C", 1: "A", 2: "B"}) == "response C, A or B"


def test_numbers_that_name_no_response_and_other_numbers_stay():
    text = "Response 5 is not there; 2 of the 3 claims in Response 1 hold."
    assert rationale_for_viewer(text, SWAPPED) == "Response 5 is not there; 2 of the 3 claims in Response B hold."
