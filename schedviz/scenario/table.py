"""``manage.py scenario --output table``: the steps' figures, then the timeline, one line each;
with several configurations, the figures side by side and where the runs part."""

from __future__ import annotations

from typing import Any

from schedviz.scenario.runner import ScenarioRun


def _columns(rows: list[list[str]]) -> str:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in rows
    )


def _percent(value: float) -> str:
    return f"{value * 100:.1f}%"


def _seconds(value: float) -> str:
    return f"{value:g}s"


def _share(figures: dict[str, Any], resource: str) -> str:
    entry = figures["resources"].get(resource)
    if entry is None:
        return "-"
    spread = entry["spread"]
    return f"{_percent(entry['utilisation'])} ({_percent(spread['min'])}-{_percent(spread['max'])})"


FIGURE_HEADER = ["STEP", "TIME", "NODES", "PODS", "PENDING", "UNSCHEDULABLE", "BOUND"]
FIGURE_HEADER += ["PREEMPTED", "CPU (NODES)", "MEMORY (NODES)"]


def _figure_row(figures: dict[str, Any]) -> list[str]:
    return [
        str(figures["step"]),
        _seconds(figures["time"]),
        str(figures["nodes"]),
        str(figures["pods"]),
        str(figures["pending"]),
        str(figures["unschedulable"]),
        str(figures["bindings"]),
        str(figures["preemptions"]),
        _share(figures, "cpu"),
        _share(figures, "memory"),
    ]


def describe_event(event: dict[str, Any]) -> str:
    """One timeline event in a line: what was done to what."""
    if "podScheduled" in event:
        bound = event["podScheduled"]
        pod = f"{bound['pod']['namespace']}/{bound['pod']['name']}"
        return f"podScheduled {pod} -> {bound['node']} (cycle {bound['cycle']})"
    if "done" in event:
        return "done"
    for verb in ("create", "patch", "delete"):
        body = event.get(verb)
        if body is None:
            continue
        result = body.get("result") or {}
        operation = body.get("operation") or {}
        kind = result.get("kind") or (operation.get("typeMeta") or {}).get("kind") or ""
        if not kind and "object" in operation:
            kind = operation["object"].get("kind", "")
        meta = result.get("metadata") or operation.get("objectMeta") or {}
        if not meta and "object" in operation:
            meta = operation["object"].get("metadata") or {}
        name = meta.get("name", "")
        if meta.get("namespace"):
            name = f"{meta['namespace']}/{name}"
        line = f"{verb} {kind} {name}"
        if verb == "delete" and body.get("preemption"):
            line += f" (preempted: {body['preemption']['message']})"
        elif verb == "delete" and body.get("disruption"):
            line += f" ({body['disruption']['reason']}: {body['disruption']['message']})"
        elif verb == "patch":
            line += f" {operation.get('patch', '')}"
        return line
    return ""


def render_run(run: ScenarioRun) -> str:
    lines = [f"phase: {run.phase}" + (f" ({run.message})" if run.message else ""), ""]
    lines.append(_columns([FIGURE_HEADER, *(_figure_row(f) for f in run.steps)]))
    lines.append("")
    rows = [["STEP", "TIME", "ID", "EVENT"]]
    for events in run.timeline.values():
        for event in events:
            step = f"{event['step']['major']}.{event['step']['minor']}"
            rows.append([step, _seconds(event["time"]), event["id"], describe_event(event)])
    lines.append(_columns(rows))
    return "\n".join(lines) + "\n"


def render_comparison(comparison: dict[str, Any]) -> str:
    names = [v["name"] for v in comparison["variants"]]
    lines = []
    for variant in comparison["variants"]:
        message = f" ({variant['message']})" if variant["message"] else ""
        lines.append(f"{variant['name']}: {variant['phase']}{message}")
    lines.append("")
    header = ["STEP"]
    for name in names:
        header += [f"{name}: PENDING", "BOUND", "PREEMPTED", "CPU"]
    rows = [header]
    for step in comparison["steps"]:
        row = [str(step["step"])]
        for name in names:
            figures = step["variants"].get(name)
            if figures is None:
                row += ["-", "-", "-", "-"]
                continue
            cpu = figures["resources"].get("cpu")
            row += [
                str(figures["pending"]),
                str(figures["bindings"]),
                str(figures["preemptions"]),
                _percent(cpu["utilisation"]) if cpu else "-",
            ]
        rows.append(row)
    lines.append(_columns(rows))
    lines.append("")
    first = comparison["firstDifference"]
    if first is None:
        lines.append("the placements are the same at every step")
    else:
        lines.append(f"placements first differ at step {first['step']}:")
        for pod in first["pods"]:
            where = ", ".join(f"{n}: {node or '(pending)'}" for n, node in pod["nodes"].items())
            lines.append(f"  {pod['pod']}: {where}")
    return "\n".join(lines) + "\n"
