"""Trace export (JSON lines, kube-scheduler-simulator annotations) and import for review."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from schedviz.cluster import exports, lessons, selectors, services
from schedviz.cluster.models import Cluster, Cycle, Event, Node, Pod
from schedviz.kube.load import load_manifests
from schedviz.simulation.simulator import new_simulation

pytestmark = pytest.mark.django_db

DEMO = Path(exports.__file__).resolve().parent.parent / "demo" / "demo-cluster.yaml"

# web-2 preempts low-1 on node-a (the lesson asserts the details).
PREEMPTION = lessons.lesson_get("priority-and-preemption").manifests


@pytest.fixture(autouse=True)
def _no_runners(settings: Any) -> None:
    settings.SCHEDVIZ_START_RUNNERS = False


def scheduled_cluster(text: str, name: str = "demo", owner: User | None = None) -> Cluster:
    """A cluster holding the manifests, with the cycles the engine runs on them stored, the pods
    bound where the engine put them and its victims deleted (what a runner would have written)."""
    cluster = services.cluster_create(name=name, owner=owner)
    services.manifests_apply(cluster=cluster, text=text)
    simulation = new_simulation(load_manifests(text, "<test>"))
    simulation.run()
    services.cycles_create(cluster=cluster, traces=simulation.traces)
    bound = set(Pod.objects.filter(cluster=cluster).exclude(node_name="").values_list("name"))
    placements = simulation.placements()
    for row in Pod.objects.filter(cluster=cluster):
        if row.key not in placements:  # a preemption victim
            services.pod_delete(cluster=cluster, namespace=row.namespace, name=row.name)
    for key, node in placements.items():
        namespace, _, pod = key.partition("/")
        if node and (pod,) not in bound:
            services.pod_bind(cluster=cluster, namespace=namespace, name=pod, node_name=node)
    return cluster


def test_jsonl_export_is_a_header_then_one_documented_trace_per_line() -> None:
    cluster = scheduled_cluster(DEMO.read_text())
    text = "".join(exports.trace_export_jsonl(cluster=cluster))
    assert text.endswith("\n")
    lines = text.splitlines()
    header = json.loads(lines[0])
    assert header["schemaVersion"] == 1 and header["kind"] == "schedviz-trace"
    assert header["cluster"] == "demo" and header["exportedAt"].endswith("+00:00")
    assert {o["kind"] for o in header["objects"]} >= {"Node", "Pod", "PriorityClass"}
    traces = [json.loads(line) for line in lines[1:]]
    assert traces == selectors.cycle_traces_since(cluster=cluster, limit=10_000)
    assert [t["cycle"] for t in traces] == sorted(t["cycle"] for t in traces)


def test_jsonl_import_rebuilds_the_cluster_and_its_cycles_paused() -> None:
    original = scheduled_cluster(DEMO.read_text())
    text = "".join(exports.trace_export_jsonl(cluster=original))
    copy = exports.trace_import(name="review", owner=None, text=text)
    assert copy.clock_mode == Cluster.ClockMode.VIRTUAL
    assert copy.run_state == Cluster.RunState.PAUSED
    assert selectors.cycle_traces_since(cluster=copy, limit=10_000) == (
        selectors.cycle_traces_since(cluster=original, limit=10_000)
    )

    def placements(cluster: Cluster) -> list[tuple[str, str, str]]:
        return list(
            Pod.objects.filter(cluster=cluster).values_list("namespace", "name", "node_name")
        )

    assert placements(copy) == placements(original)
    assert (
        Node.objects.filter(cluster=copy).count() == Node.objects.filter(cluster=original).count()
    )
    assert Event.objects.filter(cluster=copy, reason="FailedScheduling").exists()
    preempted = exports.trace_import(
        name="preempted",
        owner=None,
        text="".join(exports.trace_export_jsonl(cluster=scheduled_cluster(PREEMPTION, "p"))),
    )
    assert Event.objects.get(cluster=preempted, reason="Preempted").object_name == "low-1"


def test_jsonl_import_without_objects_makes_the_named_nodes_and_pods() -> None:
    original = scheduled_cluster(DEMO.read_text())
    lines = "".join(exports.trace_export_jsonl(cluster=original)).splitlines(keepends=True)
    header = json.loads(lines[0])
    del header["objects"], header["schedulerConfiguration"]
    copy = exports.trace_import(
        name="bare", owner=None, text=json.dumps(header) + "\n" + "".join(lines[1:])
    )
    assert set(Node.objects.filter(cluster=copy).values_list("name", flat=True)) == {
        "node-a",
        "node-b",
        "node-c",
        "node-d",
        "gpu-1",
    }
    web = Pod.objects.get(cluster=copy, name="web-1")
    assert web.node_name == Pod.objects.get(cluster=original, name="web-1").node_name
    assert (
        Cycle.objects.filter(cluster=copy).count() == Cycle.objects.filter(cluster=original).count()
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("hello", "expected a schedviz trace"),
        ('{"kind": "schedviz-trace", "schemaVersion": 2}\n', "schemaVersion: Unsupported value"),
        ('{"kind": "schedviz-trace", "schemaVersion": 1}\nnot json\n', "line 2: not JSON"),
        ('{"kind": "schedviz-trace", "schemaVersion": 1}\n{"pod": "a/b"}\n', "line 2: cycle"),
    ],
)
def test_import_refuses_bad_input_and_writes_nothing(text: str, message: str) -> None:
    with pytest.raises(services.ServiceError) as raised:
        exports.trace_import(name="bad", owner=None, text=text)
    assert message in raised.value.errors[0]
    assert not Cluster.objects.filter(name="bad").exists()


def annotations_of(listing: dict[str, Any], name: str) -> dict[str, str]:
    (pod,) = [p for p in listing["items"] if p["metadata"]["name"] == name]
    annotations: dict[str, str] = pod["metadata"].get("annotations") or {}
    return annotations


def test_kss_export_annotates_each_pod_with_its_last_cycle_like_the_simulator() -> None:
    cluster = scheduled_cluster(DEMO.read_text())
    listing = exports.trace_export_kss(cluster=cluster)
    assert listing["apiVersion"] == "v1" and listing["kind"] == "List"
    kinds = [item["kind"] for item in listing["items"]]
    assert kinds == ["Node"] * 5 + ["Pod"] * (len(kinds) - 5)
    web = annotations_of(listing, "web-1")
    last = selectors.cycles_for_pod(cluster=cluster, namespace="default", name="web-1")[-1]
    assert web[exports.KSS_SELECTED_NODE] == last["node"]
    filter_result = json.loads(web[exports.KSS_FILTER])
    # The cordoned node: NodeUnschedulable runs first and rejects it with upstream's words.
    assert filter_result["node-d"] == {"NodeUnschedulable": "node(s) were unschedulable"}
    assert filter_result["gpu-1"]["TaintToleration"] == (
        "node(s) had untolerated taint {dedicated: gpu}"
    )
    assert set(filter_result["node-a"].values()) == {"passed"}
    scores = json.loads(web[exports.KSS_SCORE])
    final = json.loads(web[exports.KSS_FINALSCORE])
    node = last["node"]
    assert scores[node]["NodeResourcesFit"] == str(last["scores"][node]["NodeResourcesFit"]["raw"])
    assert final[node]["TaintToleration"] == str(
        last["scores"][node]["TaintToleration"]["weighted"]
    )
    assert json.loads(web[exports.KSS_BIND]) == {"DefaultBinder": "success"}
    assert json.loads(web[exports.KSS_PERMIT]) == {}
    history = json.loads(web[exports.KSS_RESULT_HISTORY])
    assert len(history) == last["attempt"]
    assert history[-1] == {k: v for k, v in web.items() if k != exports.KSS_RESULT_HISTORY}
    # Go's json.Marshal: sorted keys, no spaces.
    assert web[exports.KSS_FILTER] == json.dumps(
        filter_result, sort_keys=True, separators=(",", ":")
    )
    # db-0 was bound in its manifest: never tried, so no annotation, as in the simulator.
    assert annotations_of(listing, "db-0") == {}


def test_kss_export_marks_the_nominated_node_as_preemption_victim() -> None:
    cluster = scheduled_cluster(PREEMPTION, name="preempt")
    listing = exports.trace_export_kss(cluster=cluster)
    web = annotations_of(listing, "web-2")
    history = [json.loads(web[exports.KSS_RESULT_HISTORY])][0]
    first = history[0]
    assert json.loads(first[exports.KSS_POSTFILTER]) == {
        "node-a": {"DefaultPreemption": "preemption victim"}
    }
    assert json.loads(first[exports.KSS_FILTER]) == {
        "node-a": {
            "NodeName": "passed",
            "NodeResourcesFit": "Insufficient cpu",
            "NodeUnschedulable": "passed",
            "TaintToleration": "passed",
        }
    }
    assert first[exports.KSS_SELECTED_NODE] == ""


def test_kss_import_rebuilds_cycles_as_far_as_the_annotations_allow() -> None:
    cluster = scheduled_cluster(DEMO.read_text())
    listing = exports.trace_export_kss(cluster=cluster)
    copy = exports.trace_import(name="from-kss", owner=None, text=json.dumps(listing))
    original = selectors.cycles_for_pod(cluster=cluster, namespace="default", name="web-1")
    rebuilt = selectors.cycles_for_pod(cluster=copy, namespace="default", name="web-1")
    assert [c["attempt"] for c in rebuilt] == [c["attempt"] for c in original]
    assert [c["result"] for c in rebuilt] == [c["result"] for c in original]
    assert rebuilt[-1]["node"] == original[-1]["node"]
    assert rebuilt[-1]["totals"] == original[-1]["totals"]
    assert rebuilt[-1]["scores"] == original[-1]["scores"]
    assert {n: [e["plugin"] for e in entries] for n, entries in rebuilt[-1]["filter"].items()} == {
        n: [e["plugin"] for e in entries if not e.get("hypothetical")]
        for n, entries in original[-1]["filter"].items()
        if any(not e.get("stage") and not e.get("hypothetical") for e in entries)
    }
    assert Node.objects.filter(cluster=copy).count() == 5
    pod = Pod.objects.get(cluster=copy, name="web-1")
    assert not any(
        k.startswith(exports.KSS_PREFIX) for k in pod.manifest["metadata"].get("annotations", {})
    )
    again = exports.trace_export_kss(cluster=copy)
    assert (
        annotations_of(again, "web-1")[exports.KSS_SCORE]
        == (annotations_of(listing, "web-1")[exports.KSS_SCORE])
    )


def test_api_exports_jsonl_streamed_and_kss_and_keeps_yaml_default(client: Client) -> None:
    token = services.api_token_create(username="alice")
    auth = {"HTTP_AUTHORIZATION": f"Token {token.key}"}
    cluster = scheduled_cluster(DEMO.read_text(), owner=token.user)
    url = f"/api/clusters/{cluster.id}/export"
    as_yaml = client.get(url, **auth)
    assert as_yaml["Content-Type"] == "application/yaml"
    assert "kind: List" in b"".join(as_yaml).decode()
    streamed = client.get(url + "?format=jsonl", **auth)
    assert streamed.status_code == 200 and streamed.streaming
    assert streamed["Content-Type"] == "application/x-ndjson"
    body = b"".join(streamed).decode()
    assert json.loads(body.splitlines()[0])["kind"] == "schedviz-trace"
    kss = client.get(url + "?format=kss", **auth)
    kss_body = b"".join(kss)
    assert kss["Content-Type"] == "application/json"
    assert json.loads(kss_body) == exports.trace_export_kss(cluster=cluster)
    assert client.get(url + "?format=csv", **auth).status_code == 400

    imported = client.post(
        "/api/clusters/import", data=body, content_type="application/x-ndjson", **auth
    )
    assert imported.status_code == 201
    copy = Cluster.objects.get(id=imported.json()["id"])
    assert copy.owner == token.user and copy.name == "demo (2)"
    again = client.post(
        "/api/clusters/import?name=kss", data=kss_body, content_type="application/json", **auth
    )
    assert again.status_code == 201 and again.json()["name"] == "kss"
    bad = client.post("/api/clusters/import", data="nope", content_type="text/plain", **auth)
    assert bad.status_code == 400
    assert (
        client.post("/api/clusters/import", data=body, content_type="text/plain").status_code == 401
    )


def test_imported_cycles_render_on_the_cycle_page(client: Client) -> None:
    """Review means reading the imported cycles in the UI, rebuilt ones included."""
    cluster = scheduled_cluster(lessons.lesson_get("priority-and-preemption").manifests)
    jsonl = "".join(exports.trace_export_jsonl(cluster=cluster))
    kss = json.dumps(exports.trace_export_kss(cluster=cluster))
    for name, text in (("from-jsonl", jsonl), ("from-kss", kss)):
        copy = exports.trace_import(name=name, owner=None, text=text)
        assert not Pod.objects.filter(cluster=copy, name="low-1").exists()  # the victim
        numbers = Cycle.objects.filter(cluster=copy).values_list("number", flat=True)
        assert numbers
        for number in numbers:
            page = client.get(f"/clusters/{copy.id}/cycles/{number}/")
            assert page.status_code == 200, (name, number)


def kss_pod(name: str, annotations: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "default",
            "annotations": {exports.KSS_PREFIX + k: json.dumps(v) for k, v in annotations.items()},
        },
        "spec": {"nodeName": "node-b", "containers": [{"name": "c", "image": "i"}]},
    }


# As the simulator writes a cycle of a pod with no affinity or spreading: the PreFilter and
# PreScore plugins with nothing to do returned Skip, whose message is empty; two nodes tied.
SKIPS_AND_A_TIE = {
    "prefilter-result-status": {
        "NodeAffinity": "",
        "NodeResourcesFit": "success",
        "PodTopologySpread": "",
    },
    "prefilter-result": {},
    "filter-result": {
        "node-a": {"NodeName": "passed", "NodeResourcesFit": "passed"},
        "node-b": {"NodeName": "passed", "NodeResourcesFit": "passed"},
    },
    "prescore-result": {"NodeResourcesFit": "success", "PodTopologySpread": ""},
    "score-result": {"node-a": {"NodeResourcesFit": "50"}, "node-b": {"NodeResourcesFit": "50"}},
    "finalscore-result": {
        "node-a": {"NodeResourcesFit": "50"},
        "node-b": {"NodeResourcesFit": "50"},
    },
    "bind-result": {"DefaultBinder": "success"},
}


def test_kss_import_reads_skips_as_skips_ties_as_ties_and_the_nodes_allocatable() -> None:
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "node-b"},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
    }
    pod = kss_pod("web", SKIPS_AND_A_TIE)
    pod["metadata"]["annotations"][exports.KSS_SELECTED_NODE] = "node-b"
    listing = {"apiVersion": "v1", "kind": "List", "items": [node, pod]}
    copy = exports.trace_import(name="skips", owner=None, text=json.dumps(listing))
    (trace,) = selectors.cycles_for_pod(cluster=copy, namespace="default", name="web")
    codes = {(p["point"], p["plugin"]): p["code"] for p in trace["points"]}
    assert codes[("PreFilter", "NodeAffinity")] == "Skip"
    assert codes[("PreFilter", "PodTopologySpread")] == "Skip"
    assert codes[("PreFilter", "NodeResourcesFit")] == "Success"
    assert codes[("PreScore", "PodTopologySpread")] == "Skip"
    assert trace["skippedFilterPlugins"] == ["NodeAffinity", "PodTopologySpread"]
    assert trace["result"] == "Scheduled"
    assert trace["selected"] == {"node": "node-b", "tieSet": ["node-b", "node-a"]}
    # The Node the List holds keeps its allocatable; with nodes in the List none is made up.
    stored = Node.objects.get(cluster=copy, name="node-b")
    assert stored.manifest["status"]["allocatable"]["cpu"] == "4"
    assert Node.objects.filter(cluster=copy).count() == 1


def test_kss_export_lists_the_nodes_so_an_import_reads_their_allocatable() -> None:
    cluster = scheduled_cluster(DEMO.read_text())
    listing = exports.trace_export_kss(cluster=cluster)
    copy = exports.trace_import(name="from-kss", owner=None, text=json.dumps(listing))
    for name in ("node-a", "gpu-1"):
        original = Node.objects.get(cluster=cluster, name=name)
        assert Node.objects.get(cluster=copy, name=name).allocatable == original.allocatable
        assert original.allocatable
