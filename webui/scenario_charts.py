"""The scenario page's charts, drawn on the server as inline SVG: no script, no CDN.

Each chart is a ``Chart`` of series over the major steps: a line (its points in the SVG's
coordinates), a band (a polygon from each step's low to high: a resource's spread over nodes),
or bars (one rectangle per step). The template only prints the coordinates; every label is
escaped by the template.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

WIDTH, HEIGHT = 480, 160
LEFT, RIGHT, TOP, BOTTOM = 40, 10, 10, 24


@dataclass(frozen=True)
class Series:
    label: str
    css: str  # the class that colours it (webui/scenario.css)
    kind: str  # "line", "band" or "bars"
    points: str = ""  # line: "x,y x,y"; band: a polygon's points
    bars: tuple[tuple[float, float, float, float, str], ...] = ()  # x, y, width, height, title


@dataclass(frozen=True)
class Chart:
    title: str
    unit: str
    top_label: str
    series: list[Series]
    ticks: list[tuple[float, str]] = field(default_factory=list)  # x, the step's label
    width: int = WIDTH
    height: int = HEIGHT

    @property
    def plot_bottom(self) -> int:
        return self.height - BOTTOM

    @property
    def plot_left(self) -> int:
        return LEFT


def _x(index: int, count: int) -> float:
    span = WIDTH - LEFT - RIGHT
    return round(LEFT + (span * index / (count - 1) if count > 1 else span / 2), 1)


def _y(value: float, top: float) -> float:
    span = HEIGHT - TOP - BOTTOM
    share = value / top if top else 0.0
    return round(HEIGHT - BOTTOM - span * share, 1)


def _line(values: Sequence[float], top: float) -> str:
    return " ".join(f"{_x(i, len(values))},{_y(v, top)}" for i, v in enumerate(values))


def _band(lows: Sequence[float], highs: Sequence[float], top: float) -> str:
    upper = [f"{_x(i, len(highs))},{_y(v, top)}" for i, v in enumerate(highs)]
    lower = [f"{_x(i, len(lows))},{_y(v, top)}" for i, v in reversed(list(enumerate(lows)))]
    return " ".join(upper + lower)


def _ticks(steps: Sequence[dict[str, Any]]) -> list[tuple[float, str]]:
    count = len(steps)
    every = max(1, count // 10)
    return [(_x(i, count), str(s["step"])) for i, s in enumerate(steps) if i % every == 0]


def _nice_top(value: float) -> float:
    return max(1.0, float(value))


def pending_chart(steps: Sequence[dict[str, Any]]) -> Chart:
    pending = [float(s["pending"]) for s in steps]
    unschedulable = [float(s["unschedulable"]) for s in steps]
    top = _nice_top(max(pending + unschedulable, default=0.0))
    return Chart(
        "Pending pods",
        "pods",
        f"{top:g}",
        [
            Series("pending", "series-pending", "line", _line(pending, top)),
            Series("unschedulable", "series-unschedulable", "line", _line(unschedulable, top)),
        ],
        _ticks(steps),
    )


def utilisation_chart(steps: Sequence[dict[str, Any]], resource: str) -> Chart | None:
    figures = [s["resources"].get(resource) for s in steps]
    if not any(figures):
        return None
    mean = [f["utilisation"] if f else 0.0 for f in figures]
    lows = [f["spread"]["min"] if f else 0.0 for f in figures]
    highs = [f["spread"]["max"] if f else 0.0 for f in figures]
    top = max(1.0, *highs)
    return Chart(
        f"{resource} requested / allocatable",
        "share",
        f"{top * 100:.0f}%",
        [
            Series(
                "spread over nodes (least to most)", "series-band", "band", _band(lows, highs, top)
            ),
            Series("cluster", f"series-{resource}", "line", _line(mean, top)),
        ],
        _ticks(steps),
    )


def preemption_chart(steps: Sequence[dict[str, Any]]) -> Chart:
    values = [float(s["preemptions"]) for s in steps]
    bindings = [float(s["bindings"]) for s in steps]
    top = _nice_top(max(values + bindings, default=0.0))
    count = len(steps)
    width = max(2.0, round((WIDTH - LEFT - RIGHT) / max(count, 1) / 3, 1))
    bars = tuple(
        (
            round(_x(i, count) - width / 2, 1),
            _y(v, top),
            width,
            round(HEIGHT - BOTTOM - _y(v, top), 1),
            f"step {s['step']}: {int(v)} preempted",
        )
        for i, (s, v) in enumerate(zip(steps, values, strict=True))
    )
    return Chart(
        "Preemptions and bindings",
        "per step",
        f"{top:g}",
        [
            Series("bindings", "series-bindings", "line", _line(bindings, top)),
            Series("preemptions", "series-preemptions", "bars", bars=bars),
        ],
        _ticks(steps),
    )


def charts(steps: Sequence[dict[str, Any]]) -> list[Chart]:
    if not steps:
        return []
    out = [pending_chart(steps)]
    for resource in ("cpu", "memory"):
        chart = utilisation_chart(steps, resource)
        if chart is not None:
            out.append(chart)
    out.append(preemption_chart(steps))
    return out
