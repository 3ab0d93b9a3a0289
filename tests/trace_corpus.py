"""The clusters whose traces the trace writers are checked over
(tests/scheduler/test_trace_codec.py, tests/cluster/test_kss_text.py): every fidelity case,
every lesson, the demo."""

from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
FIDELITY_CASES = sorted((ROOT / "tests" / "fidelity" / "cases").glob("*/*.yaml"))
LESSONS = sorted((ROOT / "schedviz" / "lessons").glob("*/manifests.yaml"))
DEMO = ROOT / "schedviz" / "demo" / "demo-cluster.yaml"


def corpus_manifests(path: Path) -> str:
    """The file's manifests; a fidelity case's first document (its FidelityCase header) cut."""
    text = path.read_text()
    header = next(yaml.safe_load_all(text), None)
    if not (isinstance(header, dict) and header.get("kind") == "FidelityCase"):
        return text
    starts = [
        event.start_mark.index
        for event in yaml.parse(text)
        if isinstance(event, yaml.DocumentStartEvent) and event.start_mark is not None
    ]
    return text[starts[1] :]
