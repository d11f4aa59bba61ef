"""The workload chart (``bertdrill stats --workload --chart FILE.svg``): an SVG drawn by hand, written through
the one atomic writer.

Bars: minutes per day at each desired retention (left scale). Line: knowledge per minute (right scale), its
best point ringed. Every figure is also printed as text on the chart, so nothing depends on colour alone.
The caller passes the words in the learner's language.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape

from bertdrill.adapters.export.files import write_atomic

WIDTH, HEIGHT = 720, 400
LEFT, RIGHT, TOP, BOTTOM = 70, 70, 90, 60  # margins around the plot


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


def workload_svg(rows: Sequence[ChartRow], words: ChartWords, best: float) -> str:
    """The chart as SVG text (``best``: the retention to ring)."""
    plot_width, plot_height = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    slot = plot_width / max(1, len(rows))
    top_minutes = max((row.minutes for row in rows), default=0) or 1
    top_value = max((row.per_minute for row in rows), default=0) or 1
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
             f'viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="12">',
             f'<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>',
             _text(WIDTH / 2, 24, words.title, size=16, anchor="middle", weight="bold"),
             _text(LEFT, 50, f"▮ {words.minutes}", fill="#4a78b5"),
             _text(WIDTH - RIGHT, 50, f"● {words.per_minute}", fill="#b5552e", anchor="end"),
             _text(WIDTH / 2, HEIGHT - 14, words.axis, anchor="middle"),
             f'<line x1="{LEFT}" y1="{TOP + plot_height}" x2="{WIDTH - RIGHT}" y2="{TOP + plot_height}" stroke="#333"/>']
    points = []
    for index, row in enumerate(rows):
        x = LEFT + slot * index + slot / 2
        bar = plot_height * row.minutes / top_minutes
        parts.append(f'<rect x="{x - slot * 0.3:.1f}" y="{TOP + plot_height - bar:.1f}" width="{slot * 0.6:.1f}" '
                     f'height="{bar:.1f}" fill="#4a78b5" fill-opacity="0.7"/>')
        parts.append(_text(x, TOP + plot_height - bar - 4, row.minutes_label, anchor="middle", fill="#24446e"))
        parts.append(_text(x, TOP + plot_height + 18, row.retention_label, anchor="middle"))
        y = TOP + plot_height * (1 - row.per_minute / top_value)
        points.append((x, y, row))
    parts.append('<polyline fill="none" stroke="#b5552e" stroke-width="2" points="'
                 + " ".join(f"{x:.1f},{y:.1f}" for x, y, _row in points) + '"/>')
    for x, y, row in points:
        parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="4" fill="#b5552e"/>')
        parts.append(_text(x + 6, y + 14, row.per_minute_label, fill="#7a351a"))
        if row.retention == best:
            parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="9" fill="none" stroke="#222" stroke-width="2"/>')
            parts.append(_text(x, y - 14, words.best, anchor="middle", weight="bold"))
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def write_chart(path: Path, svg: str) -> None:
    """Write the chart, whole or not at all (refusing a path that is not a regular file to replace)."""
    write_atomic(path, svg.encode("utf-8"), example="workload.svg")


def _text(x: float, y: float, content: str, *, size: int = 12, anchor: str = "start", fill: str = "#222",
          weight: str = "normal") -> str:
    return (f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" fill="{fill}" '
            f'font-weight="{weight}">{escape(content)}</text>')
