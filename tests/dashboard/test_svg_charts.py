"""aggregation.figures.svg: bars proportional to their values, caller text escaped, accessible titles."""

import re

from aggregation.figures import svg


def _bar_lengths(markup: str, attribute: str) -> list[float]:
    return [float(v) for v in re.findall(rf'<rect class="chart-bar"[^>]*\b{attribute}="([0-9.]+)"', markup)]


def test_histogram_bar_heights_are_proportional_to_counts():
    markup = svg.histogram(edges=[0, 0.25, 0.5, 0.75, 1], counts=[1, 2, 4, 0], title="π")
    heights = _bar_lengths(markup, "height")
    assert len(heights) == 4
    assert heights[1] == 2 * heights[0]
    assert heights[2] == 4 * heights[0]
    assert heights[3] == 0


def test_bar_chart_lengths_are_proportional_to_values():
    markup = svg.bar_chart(labels=["a", "b", "c"], values=[0.1, 0.2, 0.4], title="Weights", maximum=1.0)
    widths = _bar_lengths(markup, "width")
    assert widths[1] == 2 * widths[0]
    assert widths[2] == 4 * widths[0]


def test_bar_chart_marks_missing_values_instead_of_drawing_zero():
    markup = svg.bar_chart(labels=["a", "b"], values=[0.5, None], title="Weights")
    assert len(_bar_lengths(markup, "width")) == 1
    assert "not computed yet" in markup


def test_labels_and_titles_are_escaped():
    evil = '<script>alert("x")</script> & co'
    for markup in (
        svg.bar_chart(labels=[evil], values=[0.3], title=evil),
        svg.histogram(edges=[0, 1], counts=[3], title=evil, x_label=evil),
        svg.interval_plot(rows=[svg.Interval(label=evil, value=0.5, low=0.4, high=0.6)], title=evil),
        svg.line_chart(series=[svg.Series(name=evil, points=[(0, 0.2), (1, 0.4)])], title=evil, x_labels=[evil]),
    ):
        assert "<script>" not in markup
        assert "&lt;script&gt;" in markup
        assert "&amp; co" in markup


def test_every_chart_has_an_accessible_title_and_description():
    markup = svg.histogram(edges=[0, 0.5, 1], counts=[2, 3], title="Hesitation for safety")
    assert 'role="img"' in markup
    title_id, desc_id = re.search(r'aria-labelledby="([^" ]+) ([^"]+)"', markup).groups()
    assert f'<title id="{title_id}">Hesitation for safety</title>' in markup
    assert f'<desc id="{desc_id}">5 values in 2 bins' in markup


def test_interval_plot_draws_whiskers_at_the_interval_and_names_missing_figures():
    markup = svg.interval_plot(
        rows=[svg.Interval(label="α", value=0.5, low=0.25, high=0.75), svg.Interval(label="IFS", value=None)],
        title="Agreement",
        low=0.0,
        high=1.0,
    )
    dot = float(re.search(r'<circle class="chart-dot" cx="([0-9.]+)"', markup).group(1))
    x1, x2 = (float(v) for v in re.search(r'class="chart-whisker" x1="([0-9.]+)" x2="([0-9.]+)"', markup).groups())
    assert x1 < dot < x2
    assert abs((dot - x1) - (x2 - dot)) < 0.01  # symmetric interval, symmetric whiskers
    assert "IFS: not computed" in markup


def test_line_chart_breaks_at_missing_points():
    markup = svg.line_chart(
        series=[svg.Series(name="α", points=[(0, 0.1), (1, 0.2), (2, None), (3, 0.4), (4, 0.5)])], title="Over time"
    )
    assert markup.count("<polyline") == 2


def test_empty_inputs_say_so():
    assert "No values yet." in svg.histogram(edges=[0, 1], counts=[0], title="π")
    assert "Nothing to show yet." in svg.bar_chart(labels=[], values=[], title="w")
    assert "Not enough labels over time yet." in svg.line_chart(series=[], title="t")
