"""Inline SVG charts rendered on the server (no script, no style attribute: classes and geometry only,
so the page's Content-Security-Policy needs no inline style or script)."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import Any

__all__ = ["bar_chart"]

WIDTH, HEIGHT, PAD = 560, 160, 28
GRID = 4
"""Horizontal gridlines (each labelled with its value) above the axis."""


def _fmt(value: float) -> str:
    if value >= 1_000_000:
        return f"{value / 1_000_000:.1f}M"
    if value >= 1000:
        return f"{value / 1000:.1f}k"
    return f"{value:.2f}" if value and value < 10 and value != int(value) else f"{value:.0f}"


def bar_chart(title: str, labels: Sequence[str], series: Sequence[tuple[str, Sequence[float | None]]],
              *, unit: str = "", maximum: float | None = None) -> str:
    """A grouped bar chart: one group per label, one bar per series (``None`` draws no bar). Each bar
    carries a ``<title>`` with its exact value; the chart has an accessible name."""
    top = maximum if maximum is not None else max([v for _, vals in series for v in vals if v is not None] or [0])
    top = top or 1.0
    groups = max(len(labels), 1)
    slot = (WIDTH - 2 * PAD) / groups
    bar = max(slot / (len(series) + 1), 1.0)
    parts: list[str] = [f'<svg class="chart" role="img" aria-label="{escape(title)}" viewBox="0 0 {WIDTH} {HEIGHT}" '
                        f'width="{WIDTH}" height="{HEIGHT}" xmlns="http://www.w3.org/2000/svg">',
                        f"<title>{escape(title)}</title>",
                        f'<line class="axis" x1="{PAD}" y1="{HEIGHT - PAD}" x2="{WIDTH - PAD}" y2="{HEIGHT - PAD}"/>']
    plot = HEIGHT - 2 * PAD
    for q in range(1, GRID + 1):  # gridlines with their values: a bar's height reads against them
        y = HEIGHT - PAD - plot * q / GRID
        parts.append(f'<line class="grid" x1="{PAD}" y1="{y:.1f}" x2="{WIDTH - PAD}" y2="{y:.1f}"/>'
                     f'<text class="tick" x="2" y="{y + 3:.1f}">{escape(_fmt(top * q / GRID))}</text>')
    parts.append(f'<text class="tick" x="{WIDTH - PAD + 2}" y="{PAD - 6}">{escape(unit.strip())}</text>')
    for i, label in enumerate(labels):
        x0 = PAD + i * slot
        for k, (name, values) in enumerate(series):
            value = values[i] if i < len(values) else None
            if value is None:
                continue
            h = max(plot * min(value / top, 1.0), 0.0)
            parts.append(f'<rect class="s{k}" x="{x0 + bar * (k + 0.5):.1f}" y="{HEIGHT - PAD - h:.1f}" '
                         f'width="{bar:.1f}" height="{h:.1f}"><title>{escape(label)} {escape(name)}: '
                         f"{escape(_fmt(value))}{escape(unit)}</title></rect>")
        if groups <= 14 or i % 3 == 0:
            parts.append(f'<text class="tick" x="{x0 + 2:.1f}" y="{HEIGHT - 8}">{escape(label[-5:])}</text>')
    legend_x = PAD
    for k, (name, _) in enumerate(series):
        parts.append(f'<rect class="s{k}" x="{legend_x}" y="4" width="10" height="10"/>'
                     f'<text class="tick" x="{legend_x + 14}" y="13">{escape(name)}</text>')
        legend_x += 14 + 8 * len(name) + 16
    parts.append("</svg>")
    return "".join(parts)


def series_values(rows: Sequence[dict[str, Any]], key: str) -> list[float | None]:
    """The ``key`` of every row, as floats (``None`` kept)."""
    return [None if r.get(key) is None else float(r[key]) for r in rows]
