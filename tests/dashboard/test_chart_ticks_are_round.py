"""Chart axes tick at round values, counts tick at whole numbers, and one day of data names its date once."""

import math
import re

from hypothesis import given
from hypothesis import strategies as st

from aggregation.figures import svg

AGREEMENT = svg.Series(name="alpha", points=[(0.0, -0.013), (1.0, 0.41), (2.0, 0.62)])


def _y_ticks(markup: str) -> list[str]:
    return re.findall(r'<text class="chart-tick"[^>]*text-anchor="end">(-?[0-9][0-9.,]*)</text>', markup)


def test_agreement_from_slightly_below_zero_ticks_at_quarters():
    markup = svg.line_chart(series=[AGREEMENT], title="Agreement over time", low=-0.013, x_labels=["d1", "d2", "d3"])
    assert _y_ticks(markup)[:6] == ["-0.25", "0", "0.25", "0.5", "0.75", "1"]


def test_histogram_counts_tick_at_whole_numbers():
    markup = svg.histogram(edges=[0, 0.5, 1], counts=[7, 3], title="π")
    ticks = _y_ticks(markup)
    assert ticks == ["0", "2", "4", "6", "8", "10"]


@given(low=st.floats(-5, 5), span=st.floats(0.01, 50))
def test_every_tick_is_a_round_multiple_of_its_step(low, span):
    markup = svg.line_chart(
        series=[svg.Series(name="s", points=[(0.0, low), (1.0, low + span)])], title="t", low=low, high=low + span
    )
    values = [float(v.replace(",", "")) for v in _y_ticks(markup)]
    assert len(values) >= 2
    step = values[1] - values[0]
    mantissa = step / 10 ** math.floor(math.log10(step))
    assert min(abs(mantissa - m) for m in (1, 2, 2.5, 5, 10)) < 0.02


def test_one_day_of_data_names_its_date_once():
    markup = svg.line_chart(
        series=[svg.Series(name="alpha", points=[(0.0, 0.4), (1.0, 0.5)])],
        title="Agreement over time",
        x_labels=["2026-11-30", "2026-11-30"],
    )
    assert markup.count("2026-11-30") == 1
