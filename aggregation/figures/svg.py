"""Tiny server-side SVG charts for the dashboard: histogram, interval (forest) plot, bar chart, line chart.

Pure Python, no Django import. Every function returns one ``<svg>`` string with a ``<title>`` and ``<desc>`` for
screen readers, ``role="img"`` and ``aria-labelledby``; every piece of caller text is escaped. Sizes are in
viewBox units, so the page's CSS scales the chart to its column. Colours come from CSS classes (``chart-*``) so the
charts follow the stylesheet.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape
from typing import TypeGuard

_ids = itertools.count(1)

WIDTH = 480
PAD_LEFT = 44
PAD_RIGHT = 12
PAD_TOP = 10
PAD_BOTTOM = 34
#: The charts' text size, also set on the root so a downloaded SVG (without the stylesheet) lays out as on the page.
FONT_SIZE = 12
#: Width of a character as a share of the font size: generous for a proportional sans-serif, so text laid out by
#: this estimate stays inside the view box.
CHAR_WIDTH = 0.62
#: Widest row-label column of an interval plot; the plot keeps the rest.
MAX_LABEL_WIDTH = 250


def text_width(text: str, font_size: float = FONT_SIZE + 0.5) -> float:
    """An upper estimate of the drawn width of ``text`` (row labels are 12.5 px in the stylesheet)."""
    return len(text) * font_size * CHAR_WIDTH


def _num(x: float) -> str:
    """Coordinates with two decimals at most: short markup, stable output for tests."""
    text = f"{x:.2f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _label(value: float) -> str:
    if value == 0:
        return "0"
    magnitude = abs(value)
    if magnitude >= 1000:
        return f"{value:,.0f}"
    if magnitude >= 10 or float(value).is_integer():
        return f"{value:.0f}"
    return f"{value:.2g}" if magnitude < 0.1 else f"{value:.2f}".rstrip("0").rstrip(".")


def _finite(x: float | None) -> TypeGuard[float]:
    return x is not None and isinstance(x, int | float) and math.isfinite(x)


def _open(title: str, desc: str, height: int, css_class: str) -> tuple[str, str]:
    uid = f"chart{next(_ids)}"
    head = (
        f'<svg class="chart {escape(css_class)}" viewBox="0 0 {WIDTH} {height}" font-size="{FONT_SIZE}" role="img" '
        f'aria-labelledby="{uid}-t {uid}-d" xmlns="http://www.w3.org/2000/svg" preserveAspectRatio="xMidYMid meet">'
        f'<title id="{uid}-t">{escape(title)}</title><desc id="{uid}-d">{escape(desc)}</desc>'
    )
    return head, "</svg>"


def _empty(title: str, message: str, height: int = 120) -> str:
    head, tail = _open(title, message, height, "chart-empty")
    return (
        f'{head}<text class="chart-note" x="{WIDTH / 2}" y="{height / 2}" text-anchor="middle">'
        f"{escape(message)}</text>{tail}"
    )


def _nice_max(value: float) -> float:
    """The smallest 1, 2 or 5 × 10^k at or above ``value``, so the axis ends on a round figure."""
    if value <= 0:
        return 1.0
    exponent = math.floor(math.log10(value))
    for step in (1, 2, 5, 10):
        candidate = step * 10**exponent
        if candidate >= value - 1e-12:
            return float(candidate)
    return float(10 ** (exponent + 1))


def _nice_step(span: float, *, intervals: int = 5, whole: bool = False) -> float:
    """The smallest 1, 2, 2.5 or 5 × 10^k giving at most ``intervals`` steps over ``span`` (whole: 1, 2, 5 and ≥ 1,
    for counts), so ticks fall on round values (−0.013 … 1 gave ticks at −0.013, 0.24, 0.49)."""
    if span <= 0:
        return 1.0
    raw = span / intervals
    exponent = math.floor(math.log10(raw))
    for mantissa in (1, 2, 5, 10) if whole else (1, 2, 2.5, 5, 10):
        step = mantissa * 10.0**exponent
        if step >= raw - 1e-12:
            return max(step, 1.0) if whole else step
    return 10.0 ** (exponent + 1)


def _round_range(low: float, high: float) -> tuple[float, float]:
    """``low`` and ``high`` widened to the nearest round ticks."""
    step = _nice_step(high - low)
    return math.floor(low / step + 1e-9) * step, math.ceil(high / step - 1e-9) * step


def _y_axis(*, top: float, bottom: float, low: float, high: float, whole: bool = False) -> str:
    parts = []
    step = _nice_step(high - low, whole=whole)
    first, last = math.ceil(low / step - 1e-9), math.floor(high / step + 1e-9)
    # Enough decimals for the step (0.25 needs two, 0.025 three), and no more.
    decimals = max(
        0,
        -math.floor(math.log10(step) + 1e-9) + (1 if round(step / 10 ** math.floor(math.log10(step)), 6) == 2.5 else 0),
    )
    for k in range(first, last + 1):
        value = round(k * step, decimals) + 0.0  # no "-0"
        y = bottom - (bottom - top) * (value - low) / ((high - low) or 1.0)
        tick = f"{value:,.{decimals}f}".rstrip("0").rstrip(".") if decimals else f"{value:,.0f}"
        parts.append(
            f'<line class="chart-grid" x1="{PAD_LEFT}" x2="{WIDTH - PAD_RIGHT}" y1="{_num(y)}" y2="{_num(y)}"/>'
            f'<text class="chart-tick" x="{PAD_LEFT - 6}" y="{_num(y + 4)}" text-anchor="end">{escape(tick)}'
            "</text>"
        )
    return "".join(parts)


def histogram(
    *, edges: Sequence[float], counts: Sequence[int], title: str, x_label: str = "", height: int = 200
) -> str:
    """Bars from ``edges[i]`` to ``edges[i+1]`` with height proportional to ``counts[i]``."""
    if len(edges) != len(counts) + 1 or not counts:
        return _empty(title, "No data yet.")
    total = sum(counts)
    if total == 0:
        return _empty(title, "No values yet.")
    top, bottom = PAD_TOP, height - PAD_BOTTOM
    y_max = _nice_max(max(counts))
    x0, x1 = float(edges[0]), float(edges[-1])
    span = (x1 - x0) or 1.0
    plot_width = WIDTH - PAD_LEFT - PAD_RIGHT

    def x(value: float) -> float:
        return PAD_LEFT + (value - x0) / span * plot_width

    desc = (
        f"{total} values in {len(counts)} bins from {_label(x0)} to {_label(x1)}; the tallest bin holds {max(counts)}."
    )
    head, tail = _open(title, desc, height, "chart-histogram")
    parts = [head, _y_axis(top=top, bottom=bottom, low=0, high=y_max, whole=True)]
    for low, high, count in zip(edges[:-1], edges[1:], counts, strict=True):
        bar_height = (bottom - top) * count / y_max
        left, right = x(float(low)), x(float(high))
        parts.append(
            f'<rect class="chart-bar" x="{_num(left + 0.5)}" y="{_num(bottom - bar_height)}" '
            f'width="{_num(max(right - left - 1, 0.5))}" height="{_num(bar_height)}">'
            f"<title>{escape(_label(float(low)))}–{escape(_label(float(high)))}: {count}</title></rect>"
        )
    for value in (x0, (x0 + x1) / 2, x1):
        parts.append(
            f'<text class="chart-tick" x="{_num(x(value))}" y="{bottom + 14}" text-anchor="middle">'
            f"{escape(_label(value))}</text>"
        )
    if x_label:
        parts.append(
            f'<text class="chart-axis-label" x="{_num(PAD_LEFT + plot_width / 2)}" y="{height - 4}" '
            f'text-anchor="middle">{escape(x_label)}</text>'
        )
    parts.append(tail)
    return "".join(parts)


@dataclass(frozen=True)
class Interval:
    label: str
    value: float | None
    low: float | None = None
    high: float | None = None
    note: str = ""


def interval_plot(
    *,
    rows: Sequence[Interval],
    title: str,
    low: float = 0.0,
    high: float = 1.0,
    reference: float | None = None,
    row_height: int = 30,
    x_label: str = "",
    y_label: str = "",
) -> str:
    """A forest plot: one row per figure, a dot at the value and whiskers to its interval.

    Rows without a value are listed with "not computed" so the reader sees what is missing. ``x_label`` names the
    value axis with its unit, ``y_label`` what the rows are (both drawn as ``chart-axis-label``). An interval that
    runs past the axis is cut at the edge with an arrowhead there (``chart-cut``, its title gives the true end).
    """
    if not rows:
        return _empty(title, "No figures yet.")
    label_width = int(min(MAX_LABEL_WIDTH, max(170, max(text_width(r.label) for r in rows) + 16)))
    left, right = label_width, WIDTH - PAD_RIGHT - 8
    top = PAD_TOP + (18 if y_label else 0)
    height = top + row_height * len(rows) + 26 + (18 if x_label else 0)
    span = (high - low) or 1.0

    def x(value: float) -> float:
        clipped = min(max(value, low), high)
        return left + (clipped - low) / span * (right - left)

    described = [
        f"{row.label}: {_label(row.value)}"
        + (f" ({_label(row.low)} to {_label(row.high)})" if _finite(row.low) and _finite(row.high) else "")
        if _finite(row.value)
        else f"{row.label}: not computed"
        for row in rows
    ]
    head, tail = _open(title, "; ".join(described) + ".", height, "chart-forest")
    parts = [head]
    axis_bottom = top + row_height * len(rows)
    step = 0.25 if span > 0.6 else 0.1
    ticks = [k * step for k in range(math.ceil(low / step - 1e-9), math.floor(high / step + 1e-9) + 1)]
    for value in ticks:
        parts.append(
            f'<line class="chart-grid" x1="{_num(x(value))}" x2="{_num(x(value))}" y1="{top}" y2="{axis_bottom}"/>'
            f'<text class="chart-tick" x="{_num(x(value))}" y="{axis_bottom + 16}" text-anchor="middle">'
            f"{escape(_label(value))}</text>"
        )
    if reference is not None and low <= reference <= high:
        parts.append(
            f'<line class="chart-reference" x1="{_num(x(reference))}" x2="{_num(x(reference))}" '
            f'y1="{top}" y2="{axis_bottom}"/>'
        )
    for index, row in enumerate(rows):
        y = top + row_height * index + row_height / 2
        label = row.label
        while len(label) > 1 and text_width(label) > label_width - 14:
            label = label[:-2] + "…"  # never past the view box's left edge; the full label is in the title
        parts.append(
            f'<text class="chart-row-label" x="{label_width - 10}" y="{_num(y + 4)}" text-anchor="end">'
            f"{escape(label)}<title>{escape(row.label)}</title></text>"
        )
        if not _finite(row.value):
            parts.append(
                f'<text class="chart-note" x="{left + 4}" y="{_num(y + 4)}">{escape(row.note or "not computed yet")}'
                "</text>"
            )
            continue
        if _finite(row.low) and _finite(row.high):
            x_low, x_high = x(row.low), x(row.high)
            parts.append(
                f'<line class="chart-whisker" x1="{_num(x_low)}" x2="{_num(x_high)}" y1="{_num(y)}" y2="{_num(y)}"/>'
                f'<line class="chart-whisker" x1="{_num(x_low)}" x2="{_num(x_low)}" y1="{_num(y - 5)}" '
                f'y2="{_num(y + 5)}"/>'
                f'<line class="chart-whisker" x1="{_num(x_high)}" x2="{_num(x_high)}" y1="{_num(y - 5)}" '
                f'y2="{_num(y + 5)}"/>'
            )
            for end, edge, sign in ((row.low, low, -1), (row.high, high, 1)):
                if (end - edge) * sign > 1e-12:
                    arrow_x = x(edge)
                    parts.append(
                        f'<path class="chart-cut" d="M{_num(arrow_x)},{_num(y)} l{_num(-7 * sign)},-5 v10 z">'
                        f"<title>The interval runs on to {escape(_label(end))}, past the axis.</title></path>"
                    )
        tip = f"{row.label}: {_label(row.value)}"
        if _finite(row.low) and _finite(row.high):
            tip += f" (95 % interval {_label(row.low)} to {_label(row.high)})"
        if row.note:
            tip += f", {row.note}"
        parts.append(
            f'<circle class="chart-dot" cx="{_num(x(row.value))}" cy="{_num(y)}" r="5"><title>{escape(tip)}</title>'
            "</circle>"
        )
    parts.append(_axis_labels(x_label=x_label, y_label=y_label, x_centre=(left + right) / 2, bottom=height - 4))
    parts.append(tail)
    return "".join(parts)


def _axis_labels(*, x_label: str, y_label: str, x_centre: float, bottom: float) -> str:
    """The x axis's name under the ticks and the y axis's above the plot, left-aligned (horizontal, so it reads
    without tilting the head and its extent is easy to keep inside the view box)."""
    parts = []
    if x_label:
        half = text_width(x_label, FONT_SIZE) / 2
        x_centre = min(max(x_centre, half + 4), WIDTH - half - 4)  # centred under the plot while it fits
        parts.append(
            f'<text class="chart-axis-label chart-x-label" x="{_num(x_centre)}" y="{_num(bottom)}" '
            f'text-anchor="middle">{escape(x_label)}</text>'
        )
    if y_label:
        parts.append(f'<text class="chart-axis-label chart-y-label" x="4" y="{PAD_TOP + 6}">{escape(y_label)}</text>')
    return "".join(parts)


def bar_chart(
    *,
    labels: Sequence[str],
    values: Sequence[float | None],
    title: str,
    maximum: float | None = None,
    value_format: str = "{:.2f}",
    row_height: int = 26,
) -> str:
    """Horizontal bars, one per label, length proportional to the value (missing values say so)."""
    if not labels:
        return _empty(title, "Nothing to show yet.")
    finite = [v for v in values if _finite(v)]
    scale = maximum if maximum is not None else (_nice_max(max(finite)) if finite else 1.0)
    scale = scale or 1.0
    label_width = 150
    left, right = label_width, WIDTH - PAD_RIGHT - 56
    top = PAD_TOP
    height = top + row_height * len(labels) + 8
    described = [
        f"{label}: {value_format.format(value)}" if _finite(value) else f"{label}: none"
        for label, value in zip(labels, values, strict=True)
    ]
    head, tail = _open(title, "; ".join(described) + ".", height, "chart-bars")
    parts = [head]
    for index, (label, value) in enumerate(zip(labels, values, strict=True)):
        y = top + row_height * index
        parts.append(
            f'<text class="chart-row-label" x="{label_width - 8}" y="{_num(y + row_height / 2 + 4)}" '
            f'text-anchor="end">{escape(label)}</text>'
            f'<rect class="chart-track" x="{left}" y="{_num(y + 4)}" width="{right - left}" '
            f'height="{row_height - 8}" rx="3"/>'
        )
        if not _finite(value):
            parts.append(
                f'<text class="chart-note" x="{left + 6}" y="{_num(y + row_height / 2 + 4)}">not computed yet</text>'
            )
            continue
        length = (right - left) * min(max(value, 0.0), scale) / scale
        text = value_format.format(value)
        parts.append(
            f'<rect class="chart-bar" x="{left}" y="{_num(y + 4)}" width="{_num(length)}" '
            f'height="{row_height - 8}" rx="3"><title>{escape(label)}: {escape(text)}</title></rect>'
            f'<text class="chart-value" x="{_num(left + length + 6)}" y="{_num(y + row_height / 2 + 4)}">'
            f"{escape(text)}</text>"
        )
    parts.append(tail)
    return "".join(parts)


@dataclass(frozen=True)
class Series:
    name: str
    points: Sequence[tuple[float, float | None]]


def line_chart(
    *,
    series: Sequence[Series],
    title: str,
    x_labels: Sequence[str] = (),
    low: float = 0.0,
    high: float = 1.0,
    height: int = 220,
    x_label: str = "",
    y_label: str = "",
) -> str:
    """Lines over a shared x axis (points are (x, y); y None breaks the line). ``x_labels`` mark first and last x;
    ``x_label`` and ``y_label`` name the axes with their units."""
    drawn = [s for s in series if any(_finite(y) for _, y in s.points)]
    if not drawn:
        return _empty(title, "Not enough labels over time yet.")
    low, high = _round_range(low, high)
    xs = [x for s in drawn for x, y in s.points if _finite(y)]
    x0, x1 = min(xs), max(xs)
    x_span = (x1 - x0) or 1.0
    y_span = (high - low) or 1.0
    height += (18 if x_label else 0) + (18 if y_label else 0)
    top, bottom = PAD_TOP + (18 if y_label else 0), height - PAD_BOTTOM - 14 - (18 if x_label else 0)
    plot_width = WIDTH - PAD_LEFT - PAD_RIGHT

    def px(value: float) -> float:
        return PAD_LEFT + (value - x0) / x_span * plot_width if x1 > x0 else PAD_LEFT + plot_width / 2

    def py(value: float) -> float:
        return bottom - (min(max(value, low), high) - low) / y_span * (bottom - top)

    desc = "; ".join(
        f"{s.name}: {len([p for p in s.points if _finite(p[1])])} points, last "
        f"{_label(next(y for _, y in reversed(s.points) if _finite(y)))}"
        for s in drawn
    )
    head, tail = _open(title, desc + ".", height, "chart-lines")
    parts = [head, _y_axis(top=top, bottom=bottom, low=low, high=high)]
    for index, s in enumerate(drawn):
        segments: list[list[tuple[float, float]]] = [[]]
        for x, y in s.points:
            if _finite(y):
                segments[-1].append((px(x), py(y)))
            elif segments[-1]:
                segments.append([])
        for segment in segments:
            if len(segment) >= 2:
                points = " ".join(f"{_num(a)},{_num(b)}" for a, b in segment)
                parts.append(f'<polyline class="chart-line chart-series-{index % 4}" points="{points}"/>')
            for a, b in segment:
                parts.append(
                    f'<circle class="chart-point chart-series-{index % 4}" cx="{_num(a)}" cy="{_num(b)}" r="2.5"/>'
                )
        legend_x = PAD_LEFT + index * 150
        parts.append(
            f'<rect class="chart-series-{index % 4} chart-swatch" x="{legend_x}" y="{height - 14}" width="10" '
            f'height="10" rx="2"/>'
            f'<text class="chart-legend" x="{legend_x + 14}" y="{height - 5}">{escape(s.name)}</text>'
        )
    if x_labels and x_labels[0] == x_labels[-1]:
        # One day of data: its date once, under the points.
        parts.append(
            f'<text class="chart-tick" x="{_num(px(x0))}" y="{bottom + 14}" text-anchor="middle">'
            f"{escape(x_labels[0])}</text>"
        )
    elif x_labels:
        parts.append(
            f'<text class="chart-tick" x="{PAD_LEFT}" y="{bottom + 14}">{escape(x_labels[0])}</text>'
            f'<text class="chart-tick" x="{WIDTH - PAD_RIGHT}" y="{bottom + 14}" text-anchor="end">'
            f"{escape(x_labels[-1])}</text>"
        )
    if x_label:
        parts.append(_axis_labels(x_label=x_label, y_label="", x_centre=PAD_LEFT + plot_width / 2, bottom=bottom + 30))
    parts.append(_axis_labels(x_label="", y_label=y_label, x_centre=0, bottom=0))
    parts.append(tail)
    return "".join(parts)
