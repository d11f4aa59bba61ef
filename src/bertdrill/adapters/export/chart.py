"""Every chart bertdrill draws, as SVG text drawn by hand: the workload chart ``bertdrill stats --workload
--chart FILE.svg`` writes, and the charts of the web pages (a learner's stats, the teacher's dashboard).

Colours are never written into a shape: each shape has a class (``chart-bar``, ``heat-3``, ``series-2`` ...) and
text is ``currentColor``, so one drawing reads in the page's light and dark themes (the page's style sheet,
``web/static/app.css``, colours the classes). A chart written to a file carries the same rules in a ``<style>``
of its own (:data:`STANDALONE_STYLE`, light and dark by the viewer's preference); a page cannot take that
element, its Content-Security-Policy forbids inline style. Every figure is also printed as text, or named
in a shape's ``<title>``, so nothing depends on colour alone; series differ by marker shape as well.

The caller passes the words in the learner's language, and the numbers already formatted.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

from bertdrill.adapters.export.files import Input, Replace, check_writable, write_atomic
from bertdrill.adapters.export.marks import Mark, seal
from bertdrill.core import i18n
from bertdrill.core.languages import written_count, written_percent
from bertdrill.core.stats import Heatmap

WIDTH, HEIGHT = 720, 400
LEFT, RIGHT, TOP, BOTTOM = 70, 70, 90, 60  # margins around the workload plot

STANDALONE_STYLE = """
.chart { color: #1d1f21; } .chart-bg { fill: #ffffff; } .chart-muted { fill: #5b6167; }
.chart-axis, .chart-grid { stroke: #9aa0a6; } .chart-grid { stroke-dasharray: 3 3; }
.chart-bar { fill: #1d5fbf; fill-opacity: .75; } .chart-bar.today, .chart-bar.chart-alt { fill: #d9822b; }
.chart-line { stroke: #b5552e; fill: none; stroke-width: 2; } .chart-point { fill: #b5552e; }
.chart-best { stroke: currentColor; fill: none; stroke-width: 2; } .chart-target { stroke: #b3261e; stroke-width: 2; }
.heat-0 { fill: #e6e8eb; } .heat-1 { fill: #b7d3f5; } .heat-2 { fill: #6ea8ff; } .heat-3 { fill: #1d5fbf; }
.heat-4 { fill: #0b3a80; }
.series-1 { stroke: #1d5fbf; fill: #1d5fbf; } .series-2 { stroke: #d9822b; fill: #d9822b; }
.series-3 { stroke: #1b7a3a; fill: #1b7a3a; } polyline.series-1, polyline.series-2, polyline.series-3 { fill: none; }
@media (prefers-color-scheme: dark) {
  .chart { color: #e7e9ec; } .chart-bg { fill: #1e2125; } .chart-muted { fill: #a3a9b0; }
  .chart-bar { fill: #6ea8ff; } .chart-bar.today, .chart-bar.chart-alt { fill: #ffb366; }
  .chart-line { stroke: #ffb366; } .chart-point { fill: #ffb366; } .chart-target { stroke: #ff8a80; }
  .heat-0 { fill: #2a2e33; } .heat-1 { fill: #1f3b66; } .heat-2 { fill: #2f63b0; } .heat-3 { fill: #6ea8ff; }
  .heat-4 { fill: #c4dcff; }
  .series-1 { stroke: #6ea8ff; fill: #6ea8ff; } .series-2 { stroke: #ffb366; fill: #ffb366; }
  .series-3 { stroke: #5fd08a; fill: #5fd08a; }
}
"""


class Svg:
    """One drawing under construction: its size, its title (for screen readers), the shapes added so far."""

    def __init__(self, width: float, height: float, title: str, *, standalone: bool = False, wide: bool = False):
        self.width, self.height = width, height
        kind = "chart chart-wide" if wide else "chart"  # wide: the page may draw it larger than its own size
        self.parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="{kind}" width="{width:g}" height="{height:g}" '
                      f'viewBox="0 0 {width:g} {height:g}" role="img" font-family="sans-serif" font-size="12">',
                      f"<title>{escape(title)}</title>"]
        if standalone:
            self.parts.append(f"<style>{STANDALONE_STYLE}</style>")
        self.parts.append(f'<rect class="chart-bg" width="{width:g}" height="{height:g}"/>')

    def text(self, x: float, y: float, content: str, *, size: int = 12, anchor: str = "start",
             weight: str = "normal", kind: str = "") -> None:
        css = f' class="{kind}"' if kind else ""
        self.parts.append(f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" '
                          f'fill="currentColor" font-weight="{weight}"{css}>{escape(content)}</text>')

    def rect(self, x: float, y: float, width: float, height: float, kind: str, tip: str | None = None) -> None:
        shape = (f'<rect class="{kind}" x="{x:.1f}" y="{y:.1f}" width="{max(0.0, width):.1f}" '
                 f'height="{max(0.0, height):.1f}"')
        self.parts.append(f"{shape}><title>{escape(tip)}</title></rect>" if tip else f"{shape}/>")

    def line(self, x1: float, y1: float, x2: float, y2: float, kind: str) -> None:
        self.parts.append(f'<line class="{kind}" x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}"/>')

    def polyline(self, points: Sequence[tuple[float, float]], kind: str) -> None:
        if len(points) > 1:
            self.parts.append(f'<polyline class="{kind}" fill="none" stroke-width="2" points="'
                              + " ".join(f"{x:.1f},{y:.1f}" for x, y in points) + '"/>')

    def marker(self, x: float, y: float, shape: int, kind: str, tip: str | None = None, radius: float = 4) -> None:
        """A point: a circle, a square or a triangle (``shape`` 0, 1, 2), so series differ by more than colour."""
        tip_part = f"<title>{escape(tip)}</title>" if tip else ""
        match shape % 3:
            case 0:
                self.parts.append(f'<circle class="{kind}" cx="{x:.1f}" cy="{y:.1f}" r="{radius:g}">{tip_part}</circle>')
            case 1:
                self.parts.append(f'<rect class="{kind}" x="{x - radius:.1f}" y="{y - radius:.1f}" '
                                  f'width="{2 * radius:g}" height="{2 * radius:g}">{tip_part}</rect>')
            case _:
                points = f"{x:.1f},{y - radius * 1.2:.1f} {x - radius * 1.1:.1f},{y + radius:.1f} {x + radius * 1.1:.1f},{y + radius:.1f}"
                self.parts.append(f'<polygon class="{kind}" points="{points}">{tip_part}</polygon>')

    def raw(self, element: str) -> None:
        self.parts.append(element)

    def done(self) -> str:
        return "\n".join([*self.parts, "</svg>"]) + "\n"


# --------------------------------------------------------------------------- the workload chart


@dataclass(frozen=True)
class ChartRow:
    """One retention's figures, already formatted for its labels."""

    retention: float
    minutes: float  # per day
    per_minute: float  # knowledge per minute
    retention_label: str
    minutes_label: str
    per_minute_label: str


@dataclass(frozen=True)
class ChartWords:
    title: str
    minutes: str  # the bars' legend: minutes per day
    per_minute: str  # the line's legend: knowledge per minute
    best: str  # the best point's label
    axis: str  # under the retentions: "desired retention"


def workload_svg(rows: Sequence[ChartRow], words: ChartWords, best: float, *, standalone: bool = True,
                 width: int = WIDTH, height: int = HEIGHT) -> str:
    """Bars: minutes per day at each desired retention (left scale); line: knowledge per minute (right scale),
    its best point ringed (``best``: that retention)."""
    left, right = (LEFT, RIGHT) if width >= WIDTH else (16, 16)
    plot_width, plot_height = width - left - right, height - TOP - BOTTOM
    slot = plot_width / max(1, len(rows))
    top_minutes = max((row.minutes for row in rows), default=0) or 1
    top_value = max((row.per_minute for row in rows), default=0) or 1
    svg = Svg(width, height, words.title, standalone=standalone)
    svg.text(width / 2, 24, words.title, size=16, anchor="middle", weight="bold")
    svg.text(left, 50, f"▮ {words.minutes}")
    svg.text(width - right, 68 if width < WIDTH else 50, f"● {words.per_minute}", anchor="end")
    svg.text(width / 2, height - 14, words.axis, anchor="middle")
    svg.line(left, TOP + plot_height, width - right, TOP + plot_height, "chart-axis")
    points = []
    for index, row in enumerate(rows):
        x = left + slot * index + slot / 2
        bar = plot_height * row.minutes / top_minutes
        svg.rect(x - slot * 0.3, TOP + plot_height - bar, slot * 0.6, bar, "chart-bar")
        svg.text(x, TOP + plot_height - bar - 4, row.minutes_label, anchor="middle")
        svg.text(x, TOP + plot_height + 18, row.retention_label, anchor="middle")
        points.append((x, TOP + plot_height * (1 - row.per_minute / top_value), row))
    svg.polyline([(x, y) for x, y, _row in points], "chart-line")
    for x, y, row in points:
        svg.marker(x, y, 0, "chart-point")
        svg.text(x + 6, y + 14, row.per_minute_label, kind="chart-muted")
        if row.retention == best:
            svg.marker(x, y, 0, "chart-best", radius=9)
            svg.text(x, y - 14, words.best, anchor="middle", weight="bold")
    return svg.done()


def check_chart_target(path: Path, *, force: bool = False, inputs: Iterable[Input] = ()) -> None:
    """Refuse, before the work, a chart file :func:`write_chart` would refuse."""
    check_writable(path, replace=Replace.forced(force), example="workload.svg", inputs=inputs, option="--chart")


def write_chart(path: Path, svg: str, *, force: bool = False, inputs: Iterable[Input] = ()) -> None:
    """Write the chart with its mark, whole or not at all: never over a path that is not a regular file to
    replace, one of ``inputs``, or a file bertdrill did not write (unless ``force``)."""
    write_atomic(path, seal(Mark.SVG, svg.encode("utf-8")), replace=Replace.forced(force), example="workload.svg",
                 inputs=inputs, option="--chart")


# --------------------------------------------------------------------------- the pages' charts


CELL, GAP = 12, 2  # a heatmap day and the space between days


def heatmap_svg(heat: Heatmap, title: str, weekdays: Sequence[str], tips: Sequence[str], legend: Sequence[str]) -> str:
    """The heatmap as the terminal draws it, a column per week and a row per weekday, one class per level
    (``heat-0`` to ``heat-4``); ``tips``: each drawn day's words (its date and answers), day by day from
    ``heat.first``; ``legend``: each level's words, as :meth:`Heatmap.legend` orders them."""
    label, step = 30, CELL + GAP
    width, height = label + heat.weeks * step + 4, 18 + 7 * step + 30
    svg = Svg(width, height, title, wide=True)
    for column, name in heat.months():
        svg.text(label + column * step, 12, name, size=10, kind="chart-muted")
    for weekday, name in enumerate(weekdays):
        if weekday % 2 == 0:  # every other row named, as a calendar's heatmap is, so the labels do not crowd
            svg.text(0, 18 + weekday * step + CELL - 2, name, size=10, kind="chart-muted")
    for weekday, row in enumerate(heat.grid()):
        for week, level in enumerate(row):
            if level is None:
                continue
            offset = (week * 7 + weekday)
            svg.rect(label + week * step, 18 + weekday * step, CELL, CELL, f"heat-{level}",
                     tips[offset] if offset < len(tips) else None)
    x: float = label
    for (level, _low, _high), words in zip(heat.legend(), legend):
        svg.rect(x, height - 22, CELL, CELL, f"heat-{level}")
        svg.text(x + CELL + 4, height - 12, words, size=10, kind="chart-muted")
        x += CELL + 10 + 6.5 * len(words)
    return svg.done()


def heatmap_days(heat: Heatmap) -> list[date]:
    """The days :func:`heatmap_svg` draws, in the order its ``tips`` follow."""
    return [heat.first + timedelta(days=offset) for offset in range(heat.days)]


@dataclass(frozen=True)
class Bar:
    """One bar of a bar chart: its label under it (two short lines at most), its value and that value in words."""

    label: str
    value: float
    shown: str  # the value as printed above the bar
    tip: str  # the whole figure in words, for a pointer or a screen reader
    under: str = ""  # a second line under the label
    marked: bool = False  # drawn in the second colour (today, the best...)


def bars_svg(bars: Sequence[Bar], title: str, *, width: int = 400, height: int = 190) -> str:
    """Vertical bars (a forecast, answers per day), each with its value above it and its label under it; labels
    are thinned out when the bars are too narrow for every one."""
    left, right, top, bottom = 6, 6, 18, 36
    plot_width, plot_height = width - left - right, height - top - bottom
    slot = plot_width / max(1, len(bars))
    highest = max((bar.value for bar in bars), default=0) or 1
    every = max(1, round(28 / slot))  # a label every this many bars: about 28 px apart at least
    svg = Svg(width, height, title)
    svg.line(left, top + plot_height, width - right, top + plot_height, "chart-axis")
    for index, bar in enumerate(bars):
        x = left + slot * index
        tall = plot_height * bar.value / highest
        svg.rect(x + slot * 0.15, top + plot_height - tall, slot * 0.7, tall,
                 "chart-bar chart-alt" if bar.marked else "chart-bar", bar.tip)
        if bar.value and (slot >= 16 or bar.marked):  # narrow bars: only the marked one's figure (today's)
            svg.text(x + slot / 2, top + plot_height - tall - 3, bar.shown, size=11, anchor="middle")
        crowding = index + 1 < len(bars) and bars[index + 1].marked  # the marked bar's label always shows
        if bar.marked or bar.under or (index % every == 0 and not crowding):
            svg.text(x + slot / 2, top + plot_height + 13, bar.label, size=11, anchor="middle", kind="chart-muted")
            if bar.under:
                svg.text(x + slot / 2, top + plot_height + 26, bar.under, size=9, anchor="middle", kind="chart-muted")
    return svg.done()


@dataclass(frozen=True)
class Share:
    """One horizontal bar of shares (0 to 1): a retention, a rate; None draws no bar and says so."""

    label: str
    share: float | None
    shown: str  # the share in words beside the bar ("57 %, 4 of 7")


def shares_svg(rows: Sequence[Share], title: str, *, target: float | None = None, target_words: str = "",
               width: int = 400) -> str:
    """Horizontal bars from 0 % to 100 %, one per row, each labelled and with its figure beside it; ``target``
    draws a line across them all."""
    label, row_height, top = min(130, width // 4), 26, 20
    height = top + row_height * len(rows) + 24
    room = max((len(row.shown) for row in rows), default=0) * 6.3 + 10  # the figures beside the bars, at 11 px
    bar_width = max(width / 4, width - label - room)
    svg = Svg(width, height, title)
    for tick in (0, 0.5, 1):
        x = label + bar_width * tick
        svg.line(x, top - 4, x, top + row_height * len(rows), "chart-grid")
        svg.text(x, top - 8, _percent(tick), size=10, anchor="middle", kind="chart-muted")
    for index, row in enumerate(rows):
        y = top + index * row_height
        svg.text(label - 6, y + 17, _cut(row.label, label // 7), anchor="end")
        if row.share is not None:
            svg.rect(label, y + 5, bar_width * min(1.0, max(0.0, row.share)), row_height - 10, "chart-bar",
                     f"{row.label}: {row.shown}")
        svg.text(label + bar_width + 6, y + 17, row.shown, size=11)
    if target is not None:
        x = label + bar_width * target
        svg.line(x, top - 2, x, top + row_height * len(rows) + 2, "chart-target")
        svg.text(min(x, width - 40), height - 6, target_words, size=11, anchor="middle")
    return svg.done()


@dataclass(frozen=True)
class Series:
    """One scheduler's calibration: (predicted, observed, reviews) per band of predictions (bands of fewer than
    :data:`THIN_BAND` reviews are not drawn: their recall is mostly chance)."""

    name: str
    points: Sequence[tuple[float, float, int]]


THIN_BAND = 10


def calibration_svg(series: Sequence[Series], title: str, predicted: str, observed: str, *, size: int = 320) -> str:
    """Observed recall against predicted, one line per scheduler (a different marker each), the diagonal
    being a perfect prediction; a point's ``<title>`` gives its figures."""
    left, bottom, top, right = 40, 40, 16, 12
    plot = size - left - right
    height = top + plot + bottom + 18 * len(series)
    svg = Svg(size, height, title)

    def at(p: float, q: float) -> tuple[float, float]:
        return left + plot * p, top + plot * (1 - q)

    for tick in (0, 0.5, 1):
        x, y = at(tick, tick)
        svg.line(x, top, x, top + plot, "chart-grid")
        svg.line(left, y, left + plot, y, "chart-grid")
        svg.text(x, top + plot + 14, _percent(tick), size=10, anchor="middle", kind="chart-muted")
        svg.text(left - 4, y + 4, _percent(tick), size=10, anchor="end", kind="chart-muted")
    svg.line(*at(0, 0), *at(1, 1), "chart-axis")
    svg.text(left + plot / 2, top + plot + 30, predicted, size=11, anchor="middle")
    svg.raw(f'<text x="12" y="{top + plot / 2:.1f}" font-size="11" text-anchor="middle" fill="currentColor" '
            f'transform={quoteattr(f"rotate(-90 12 {top + plot / 2:.1f})")}>{escape(observed)}</text>')
    for index, each in enumerate(series):
        kind = f"series-{index % 3 + 1}"
        drawn = [(p, q, count) for p, q, count in each.points if count >= THIN_BAND]
        points = [at(p, q) for p, q, _count in drawn]
        svg.polyline(points, kind)
        for (x, y), (p, q, count) in zip(points, drawn):
            svg.marker(x, y, index, kind, f"{each.name}: {_percent(p)} → {_percent(q)} "
                                          f"({written_count(count, i18n.language())})")
        legend_y = top + plot + bottom + 18 * index + 4
        svg.marker(left + 4, legend_y - 4, index, kind)
        svg.text(left + 14, legend_y, each.name, size=11)
    return svg.done()


def _percent(share: float) -> str:
    """An axis's or a point's share, written the reader's way (50% in English, %50 in Turkish)."""
    return written_percent(share, 0, i18n.language())


def _cut(text: str, most: int) -> str:
    return text if len(text) <= most else text[:max(1, most - 1)] + "…"
