"""Every SVG of the method-study report, as downloaded: a <title>, named axes, and no text that runs outside the view
box (width estimated as characters × font size × 0.6, a generous average for a sans-serif); an interval cut at the
plot's edge carries a visible mark."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from django.test import Client

from aggregation.designs.report import PLOTS
from aggregation.figures import svg
from tests.method_study.test_report_shows_per_method_figures import _label_all

NS = "{http://www.w3.org/2000/svg}"
CHAR_WIDTH = 0.6
#: Font sizes of the stylesheet by class (the page); the root's font-size attribute otherwise (a downloaded file).
CLASS_FONT_SIZE = {"chart-row-label": 12.5}


def text_outside_view_box(document: str) -> list[str]:
    root = ET.fromstring(document)
    _, _, width, height = (float(v) for v in root.attrib["viewBox"].split())
    root_size = float(root.attrib.get("font-size", 16))
    outside = []
    for text in root.iter(f"{NS}text"):
        content = text.text or ""
        size = max(root_size, CLASS_FONT_SIZE.get(text.attrib.get("class", "").split(" ")[0], 0))
        x, y = float(text.attrib["x"]), float(text.attrib["y"])
        extent = len(content) * size * CHAR_WIDTH
        anchor = text.attrib.get("text-anchor", "start")
        start = x - extent if anchor == "end" else x - extent / 2 if anchor == "middle" else x
        if start < 0 or start + extent > width or y - size < 0 or y > height:
            outside.append(
                f"{content!r} spans {start:.0f}..{start + extent:.0f} at y {y:.0f} (view box {width}×{height})"
            )
    return outside


def _check_svg(document: str) -> ET.Element:
    root = ET.fromstring(document)
    title = root.find(f"{NS}title")
    assert title is not None, "no <title>"
    assert (title.text or "").strip(), "an empty <title>"
    assert text_outside_view_box(document) == []
    if "chart-empty" not in root.attrib["class"]:
        classes = [t.attrib.get("class", "") for t in root.iter(f"{NS}text")]
        assert any("chart-x-label" in c for c in classes), "no x axis label"
        assert any("chart-y-label" in c for c in classes), "no y axis label"
    return root


def test_every_report_svg_has_a_title_axes_and_keeps_its_text_inside(study):
    project, lead, people = study
    _label_all(project, people)
    client = Client()
    client.force_login(lead)
    drawn = 0
    for name in PLOTS:
        response = client.get(f"/projects/{project.pk}/method-study/report/{name}.svg")
        assert response.status_code == 200, name
        root = _check_svg(response.content.decode())
        drawn += "chart-empty" not in root.attrib["class"]
    assert drawn >= len(PLOTS) - 1  # all but self-consistency (no repeats in this study) have data
    page = client.get(f"/projects/{project.pk}/method-study/report/").content.decode()
    assert "ikert − binary" not in page or "likert − binary" in page


def test_the_longest_paired_label_fits_and_a_cut_interval_is_marked():
    rows = [
        svg.Interval(label="likert − binary: consistency", value=0.1, low=-0.8, high=0.9),
        svg.Interval(label="ifs − likert: pairwise", value=0.0, low=-0.2, high=0.2),
    ]
    document = svg.interval_plot(
        rows=rows, title="Paired", low=-0.5, high=0.5, reference=0.0, x_label="difference", y_label="methods"
    )
    root = _check_svg(document)
    labels = [t.text for t in root.iter(f"{NS}text") if t.attrib.get("class") == "chart-row-label"]
    assert labels[0] == "likert − binary: consistency"  # whole, not clipped
    cuts = [p for p in root.iter(f"{NS}path") if p.attrib.get("class") == "chart-cut"]
    assert len(cuts) == 2  # both ends of the first interval, none for the second
    assert {c.find(f"{NS}title").text for c in cuts} == {
        "The interval runs on to -0.8, past the axis.",
        "The interval runs on to 0.9, past the axis.",
    }


@pytest.mark.parametrize("length", [10, 40, 90])
def test_a_label_too_long_for_any_column_is_shortened_not_clipped(length):
    document = svg.interval_plot(
        rows=[svg.Interval(label="x" * length, value=0.5)], title="t", x_label="a", y_label="b"
    )
    _check_svg(document)
