"""A person-readable summary of a run: one line per cycle, then where every pod is."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from schedviz.kube.objects import Pod
from schedviz.scheduler.trace import CycleTrace


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [len(h) for h in headers]
    for row in rows:
        widths = [max(w, len(cell)) for w, cell in zip(widths, row, strict=True)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(
            cell.ljust(width) for cell, width in zip(cells, widths, strict=True)
        ).rstrip()

    return [line(headers), line(["-" * w for w in widths]), *(line(r) for r in rows)]


def render_table(traces: Iterable[CycleTrace], pods: Sequence[Pod]) -> str:
    """The table of a run's cycles and pods. ``traces`` is read once, a trace at a time: an
    encoded log decodes each as it comes (a 5000-node run's traces decoded at once hold
    gigabytes), and only the rows' strings are kept."""
    cycle_rows: list[list[str]] = []
    messages: list[tuple[int, str]] = []
    for t in traces:
        cycle_rows.append(
            [
                str(t.cycle),
                f"{t.time:g}s",
                t.pod,
                str(t.attempt),
                t.result,
                t.selected_node or "-",
                f"{t.feasible_nodes}/{t.evaluated_nodes}/{len(t.all_nodes)}",
                ", ".join(f"{n}={total}" for n, total in _top(t)) or "-",
            ]
        )
        if t.result != "Scheduled" and t.message:
            messages.append((t.cycle, t.message))
    lines = ["Cycles (feasible/evaluated/total nodes; top scores)", ""]
    lines += _table(["#", "time", "pod", "try", "result", "node", "nodes", "scores"], cycle_rows)
    if messages:
        lines += ["", "Messages", ""]
        lines += [f"{cycle}: {message}" for cycle, message in messages]
    pod_rows = [
        [pod.key, pod.node_name or "<pending>", pod.nominated_node_name or "-"]
        for pod in sorted(pods, key=lambda p: p.key)
    ]
    lines += ["", "Pods", ""]
    lines += _table(["pod", "node", "nominated"], pod_rows)
    return "\n".join(lines) + "\n"


def _top(trace: CycleTrace, count: int = 3) -> list[tuple[str, int]]:
    ranked = sorted(zip(trace.score_nodes, trace.totals, strict=True), key=lambda x: -x[1])
    return ranked[:count]
