"""kube-scheduler-simulator's annotations written from the decoded trace
(schedviz/cluster/kss_text.py): byte for byte what the definition, ``kss_annotations`` of the
documented JSON, gives, for the scheduler's own traces (their node names made hard to escape as
well), any trace at all, and the streamed export of whole clusters, imported ones included."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_exports import DEMO, PREEMPTION, scheduled_cluster
from trace_corpus import FIDELITY_CASES, LESSONS, ROOT, corpus_manifests

from schedviz.cluster import exports, kss_text, lessons
from schedviz.kube.load import load_manifests
from schedviz.outoftree.registry import new_registry
from schedviz.scheduler import trace_codec
from schedviz.scheduler.framework.interface import Code, Status
from schedviz.scheduler.trace import (
    RESULT_WAITING,
    CycleTrace,
    PointRecord,
)
from schedviz.simulation.simulator import new_simulation

SIMULATED = [*FIDELITY_CASES, *LESSONS, DEMO]

# Characters json.Marshal escapes and json.dumps does not, quotes, a backslash, a control
# character, non-ASCII (one outside the BMP).
HARD = '&<>"\\\u2028\u2029\x00\u00e9\U0001f600'

# Two gangs' members wait at Permit (Coscheduling) for a third that never fits.
GANG = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint: {enabled: [{name: Coscheduling}]}
    queueSort: {enabled: [{name: Coscheduling}], disabled: [{name: "*"}]}
  pluginConfig: [{name: Coscheduling, args: {permitWaitingTimeSeconds: 10}}]
---
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {name: gang}
spec: {minMember: 3}
---
apiVersion: v1
kind: Node
metadata: {name: node-a}
status: {capacity: {cpu: "2", memory: 4Gi, pods: "110"}}
""" + "".join(
    f"""---
apiVersion: v1
kind: Pod
metadata: {{name: worker-{i}, labels: {{scheduling.x-k8s.io/pod-group: gang}}}}
spec:
  containers: [{{name: c, image: busybox, resources: {{requests: {{cpu: "1"}}}}}}]
"""
    for i in range(1, 4)
)


def _renamed(trace: CycleTrace, rename: Callable[[str], str]) -> CycleTrace:
    """The trace with every node name it holds renamed."""

    def name(node: str) -> str:
        return rename(node) if node else node

    def keyed(results: dict[str, Any]) -> dict[str, Any]:
        return {name(node): value for node, value in results.items()}

    narrowed = trace.pre_filter_nodes
    return dataclasses.replace(
        trace,
        all_nodes=tuple(map(name, trace.all_nodes)),
        pre_filter_nodes=None if narrowed is None else frozenset(map(name, narrowed)),
        nominated_node_tried=name(trace.nominated_node_tried),
        filter_results=keyed(trace.filter_results),
        filter_columns=None,
        unevaluated_filter_results=keyed(trace.unevaluated_filter_results),
        extender_results=keyed(trace.extender_results),
        score_nodes=list(map(name, trace.score_nodes)),
        selected_node=name(trace.selected_node),
        tie_set=list(map(name, trace.tie_set)),
        nominated_node=name(trace.nominated_node),
    )


def _assert_written_as_the_definition(trace: CycleTrace) -> None:
    assert kss_text.annotation_texts(trace) == kss_text.kss_annotations(trace.to_json())
    stored = trace_codec.decode(trace_codec.encode(trace), trace.all_nodes)
    assert kss_text.annotation_texts(stored) == kss_text.kss_annotations(stored.to_json())


@pytest.mark.parametrize("path", SIMULATED, ids=[str(p.relative_to(ROOT)) for p in SIMULATED])
def test_every_simulated_trace_is_annotated_as_its_json_is_even_with_hard_node_names(
    path: Path,
) -> None:
    simulation = new_simulation(load_manifests(corpus_manifests(path), lenient_names=True), seed=1)
    simulation.run(max_cycles=200)
    assert simulation.traces
    for trace in simulation.traces:
        _assert_written_as_the_definition(trace)
        _assert_written_as_the_definition(_renamed(trace, lambda node: HARD + node + HARD))


def test_cycles_waiting_at_permit_are_annotated_as_their_json_is() -> None:
    simulation = new_simulation(load_manifests(GANG), registry=new_registry())
    simulation.run(max_cycles=30)
    codes = {p.code for t in simulation.traces for p in t.points if p.point == "Permit"}
    assert Code.Wait in codes
    for trace in simulation.traces:
        _assert_written_as_the_definition(trace)
    waiting = dataclasses.replace(simulation.traces[0], result=RESULT_WAITING)
    _assert_written_as_the_definition(waiting)


def _rejected_everywhere(nominated: str, post_filter: Code) -> CycleTrace:
    """Two nodes a filter rejected, one of them named "", after a PostFilter plugin ran."""
    fit = Status(Code.Unschedulable, ("Insufficient cpu",), "NodeResourcesFit")
    return CycleTrace(
        cycle=1,
        pod="default/p",
        profile="default-scheduler",
        attempt=1,
        time=0.0,
        wall_time=0.0,
        all_nodes=("", "n&1"),
        filter_plugins=("NodeName", "NodeResourcesFit"),
        filter_results={"": (1, fit), "n&1": (1, fit)},
        nominated_node=nominated,
        points=[
            PointRecord("PostFilter", "DefaultPreemption", post_filter),
            PointRecord("PostFilter", "Other", Code.Unschedulable, ("no",)),
        ],
    )


@pytest.mark.parametrize(
    "trace",
    [
        _rejected_everywhere("n&1", Code.Success),
        _rejected_everywhere("n&1", Code.Unschedulable),
        _rejected_everywhere("", Code.Success),
    ],
    ids=["nominated", "not-nominated", "no-nominated-node-and-a-node-named-empty"],
)
def test_the_nominated_node_alone_is_a_preemption_victim(trace: CycleTrace) -> None:
    _assert_written_as_the_definition(trace)


# --------------------------------------------------------------------------------- property

POINTS = ("PreFilter", "Filter", "PostFilter", "PreScore", "Score", "Reserve", "Permit")
POINTS += ("PreBind", "Bind")
_names = st.text(alphabet="ab-" + HARD, max_size=4)
_plugins = st.sampled_from(["NodeName", "NodeResourcesFit", "TaintToleration", "A&B", "<P>", ""])
_reasons = st.sampled_from(
    [
        "Insufficient cpu",
        f"node(s) had untolerated taint {{k: {HARD}}}",
        "node(s) didn't satisfy plugin NodeAffinity",
        "node(s) didn't satisfy plugin(s) [NodeAffinity A&B]",
        "passed",
        "",
        HARD,
    ]
)
_statuses = st.builds(
    Status,
    code=st.sampled_from(Code),
    reasons=st.lists(_reasons, max_size=2).map(tuple),
    plugin=_plugins,
)
_points = st.builds(
    PointRecord,
    point=st.sampled_from(POINTS),
    plugin=_plugins,
    code=st.sampled_from(Code),
    reasons=st.lists(_reasons, max_size=2).map(tuple),
)
_scores = st.integers(min_value=-(2**63), max_value=2**63 - 1)


@st.composite
def _traces(draw: st.DrawFn) -> CycleTrace:
    """Traces whose every part the annotations read varies: names and words to escape, plugins
    named twice, nodes outside the order, rejections that pass."""
    nodes = tuple(draw(st.lists(_names, unique=True, max_size=6)))
    node_names = st.sampled_from(nodes) | _names if nodes else _names
    filter_plugins = tuple(draw(st.lists(_plugins, max_size=4)))
    outcomes = st.tuples(st.integers(0, len(filter_plugins) + 1), st.none() | _statuses)
    score_nodes = draw(st.lists(node_names, max_size=5))
    score_plugins = draw(st.lists(st.tuples(_plugins, st.integers(0, 100)), max_size=3))
    column = st.lists(_scores, min_size=len(score_nodes), max_size=len(score_nodes))
    return CycleTrace(
        cycle=1,
        pod="default/p",
        profile="default-scheduler",
        attempt=1,
        time=0.0,
        wall_time=0.0,
        all_nodes=nodes,
        pre_filter_nodes=draw(st.none() | st.frozensets(node_names, max_size=4)),
        pre_filter_status=draw(st.none() | _statuses),
        filter_plugins=filter_plugins,
        filter_results=draw(st.dictionaries(node_names, outcomes, max_size=8)),
        unevaluated_filter_results=draw(st.dictionaries(node_names, outcomes, max_size=3)),
        extender_results=draw(st.dictionaries(node_names, _statuses, max_size=2)),
        score_nodes=score_nodes,
        score_plugins=score_plugins,
        raw_scores=[draw(column) for _ in score_plugins],
        normalized_scores=[draw(column) for _ in score_plugins],
        totals=draw(column),
        selected_node=draw(st.just("") | node_names),
        nominated_node=draw(st.just("") | node_names),
        points=draw(st.lists(_points, max_size=8)),
    )


@settings(max_examples=300, deadline=None)
@given(_traces())
def test_any_trace_is_annotated_as_its_json_is(trace: CycleTrace) -> None:
    _assert_written_as_the_definition(trace)


_json: st.SearchStrategy[Any] = st.recursive(
    st.none() | st.booleans() | _scores | st.floats(allow_nan=False) | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=6,
)
_annotations = st.dictionaries(
    st.sampled_from([exports.KSS_FILTER, exports.KSS_RESULT_HISTORY, "a", HARD]) | _names,
    st.text(max_size=4),
    max_size=3,
)
_manifests_of_pods = st.fixed_dictionaries(
    {},
    optional={
        "apiVersion": st.just("v1"),
        "metadata": st.fixed_dictionaries(
            {"name": _names}, optional={"annotations": _annotations, "labels": _json}
        ),
        "spec": _json,
        "kind": st.just("Pod"),
    },
)


def _assert_pod_written_as_listed(manifest: dict[str, Any], traces: list[CycleTrace]) -> None:
    """From the decoded traces and from their JSON (an imported cluster's cycles)."""
    documents = [trace.to_json() for trace in traces]
    listed = json.dumps(exports._kss_pod(manifest, documents), separators=(",", ":"))
    for sources in (traces, documents):
        history = [kss_text.annotation_forms(source) for source in sources]
        assert kss_text.pod_text(manifest, history) == listed


@settings(max_examples=200, deadline=None)
@given(_manifests_of_pods, st.lists(_traces(), max_size=3))
def test_a_pod_is_written_as_the_listed_pod_is(
    manifest: dict[str, Any], traces: list[CycleTrace]
) -> None:
    _assert_pod_written_as_listed(manifest, traces)


def test_a_pod_holding_the_text_that_stands_in_for_annotations_is_written_as_listed() -> None:
    marker = "\x00kss\x00"
    trace = _rejected_everywhere("n&1", Code.Success)
    for own in (
        {"a": marker},
        {'"' + exports.KSS_FILTER: marker},
        {'x"' + exports.KSS_RESULT_HISTORY: marker, exports.KSS_BIND: marker},
    ):
        manifest = {"metadata": {"name": "p", "annotations": own}, "spec": {"x": marker}}
        _assert_pod_written_as_listed(manifest, [trace, trace])


def test_the_texts_kept_for_pieces_are_dropped_at_their_bound(monkeypatch: Any) -> None:
    monkeypatch.setattr(kss_text._Form, "LIMIT", 3)
    manifest = {"metadata": {"name": "p"}}
    for trace in [_rejected_everywhere("n&1", Code.Success), _rejected_everywhere("", Code.Wait)]:
        _assert_pod_written_as_listed(manifest, [trace, _renamed(trace, lambda n: n + HARD)])
    assert len(kss_text._VALUE) <= 3


# ------------------------------------------------------------------------------- the export


def _listed(cluster: Any) -> str:
    return json.dumps(exports.trace_export_kss(cluster=cluster), separators=(",", ":"))


@pytest.mark.django_db
def test_the_streamed_export_is_the_listed_export_byte_for_byte(settings: Any) -> None:
    settings.SCHEDVIZ_START_RUNNERS = False
    # A pod that carries annotations of its own, a kss key among them, and text to escape (what
    # YAML reads: no NUL, no character outside the BMP).
    text = '&<>"\\\u2028\u2029\u00e9'
    annotated = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "annotated",
            "annotations": {"z": text, exports.KSS_SELECTED_NODE: "x", "a": text},
        },
        "spec": {"containers": [{"name": "c", "image": "busybox"}]},
    }
    manifests = [
        DEMO.read_text() + "\n---\n" + json.dumps(annotated),
        PREEMPTION,
        lessons.lesson_get("several-profiles").manifests,
        lessons.lesson_get("node-affinity").manifests,
    ]
    clusters = [scheduled_cluster(text, name=f"c{i}") for i, text in enumerate(manifests)]
    listed = exports.trace_export_kss(cluster=clusters[0])
    pod = next(p for p in listed["items"] if p["metadata"]["name"] == "annotated")
    assert list(pod["metadata"]["annotations"])[:2] == ["z", exports.KSS_SELECTED_NODE]
    # Imported clusters keep their cycles as the documented JSON, not as trace_codec bodies.
    kss = exports.trace_export_kss(cluster=clusters[1])
    jsonl = "".join(exports.trace_export_jsonl(cluster=clusters[0]))
    clusters.append(exports.trace_import(name="from-kss", owner=None, text=json.dumps(kss)))
    clusters.append(exports.trace_import(name="from-jsonl", owner=None, text=jsonl))
    for cluster in clusters:
        assert "".join(exports.trace_export_kss_text(cluster=cluster)) == _listed(cluster)
