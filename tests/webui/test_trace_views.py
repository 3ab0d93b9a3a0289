"""The pages that explain a decision: cycle trace, pod detail, profiles.

Test data comes from the engine itself: manifests applied through the services, then the runner
in virtual time, so every trace is one the scheduler really wrote.
"""

from __future__ import annotations

import importlib
import re
from typing import Any

import pytest
import yaml
from django.test import Client
from django.urls import reverse

from schedviz.cluster import selectors, services
from schedviz.cluster.models import Cluster, Cycle, Profile
from schedviz.outoftree.registry import new_registry
from webui.templatetags.trace_tags import OUT_OF_TREE_SOURCES, PLUGIN_SOURCES, plugin_module
from webui.trace_tables import PAGE_SIZE
from worker.runner import run_cluster

pytestmark = pytest.mark.django_db(transaction=True)

# Preemption, a PreFilter that narrows the nodes, a PreFilter that rejects the pod outright.
SCENARIO = """
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: v1
kind: Node
metadata: {name: node-0, labels: {kubernetes.io/hostname: node-0}}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "110"},
         capacity: {cpu: "2", memory: 4Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: node-1, labels: {kubernetes.io/hostname: node-1}}
status: {allocatable: {cpu: "1", memory: 4Gi, pods: "110"},
         capacity: {cpu: "1", memory: 4Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: low, namespace: default}
spec:
  nodeName: node-0
  containers: [{name: c, image: busybox, resources: {requests: {cpu: "1500m"}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: pinned, namespace: default}
spec:
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchFields: [{key: metadata.name, operator: In, values: [node-1]}]
  containers: [{name: c, image: busybox, resources: {requests: {cpu: "100m"}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: claims, namespace: default}
spec:
  volumes: [{name: v, persistentVolumeClaim: {claimName: missing}}]
  containers: [{name: c, image: busybox}]
---
apiVersion: v1
kind: Pod
metadata: {name: urgent, namespace: default}
spec:
  priorityClassName: high
  containers: [{name: c, image: busybox, resources: {requests: {cpu: "2"}}}]
"""

NODE = """
apiVersion: v1
kind: Node
metadata: {name: %(name)s, labels: {kubernetes.io/hostname: %(name)s}}
status: {allocatable: {cpu: "%(cpu)s", memory: 8Gi, pods: "110"},
         capacity: {cpu: "%(cpu)s", memory: 8Gi, pods: "110"}}
"""

POD = """
apiVersion: v1
kind: Pod
metadata: {name: %(name)s, namespace: default}
spec:
  containers: [{name: c, image: busybox, resources: {requests: {cpu: "%(cpu)s"}}}]
"""

HOSTILE = "<script>alert(1)</script>"
# Names go into URLs, where a slash has no place.
HOSTILE_NAME = "<img src=x onerror=alert(1)>"


@pytest.fixture(autouse=True)
def _no_background_runners(settings: Any) -> None:
    settings.SCHEDVIZ_START_RUNNERS = False
    settings.SCHEDVIZ_RUNNER_IDLE_SECONDS = 0


def scheduled_cluster(text: str, name: str = "c") -> Cluster:
    """A virtual-clock cluster with the manifests applied and scheduled until idle."""
    cluster = services.cluster_create(name=name, clock_mode=Cluster.ClockMode.VIRTUAL, seed=7)
    services.manifests_apply(cluster=cluster, text=text)
    run_cluster(cluster.pk)
    return cluster


def wide_cluster(nodes: int, *, small: int = 0, name: str = "wide") -> Cluster:
    """``nodes`` nodes, the first ``small`` of them too small for the one pod to schedule."""
    documents = [
        NODE % {"name": f"n-{i:04d}", "cpu": "100m" if i < small else "4"} for i in range(nodes)
    ]
    documents.append(POD % {"name": "web", "cpu": "1"})
    return scheduled_cluster("\n---\n".join(documents), name=name)


def cycle_number(cluster: Cluster, pod: str, attempt: int = 1) -> int:
    namespace, name = pod.split("/")
    row = Cycle.objects.get(
        cluster=cluster, pod_namespace=namespace, pod_name=name, attempt=attempt
    )
    return row.number


def cycle_url(cluster: Cluster, number: int) -> str:
    return reverse("webui:cycle", args=[cluster.pk, number])


def text_of(html: str) -> str:
    """The page's text with tags dropped and whitespace collapsed."""
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


@pytest.fixture
def scenario() -> Cluster:
    return scheduled_cluster(SCENARIO)


# ---------------------------------------------------------------------------------------------
# The cycle page


def test_a_failed_cycle_shows_the_whole_message_and_every_node_verdict(
    client: Client, scenario: Cluster
) -> None:
    number = cycle_number(scenario, "default/urgent")
    trace = selectors.cycle_get(cluster=scenario, number=number)
    response = client.get(cycle_url(scenario, number))
    assert response.status_code == 200
    html = response.content.decode()
    assert trace["message"].startswith("0/2 nodes are available")
    assert trace["message"] in html
    body = text_of(html)
    assert "rejected by NodeResourcesFit: Insufficient cpu" in body
    assert "✗ Insufficient cpu Unschedulable" in body
    # Preemption: the victim, the nominated node and the criterion that chose it.
    assert "Preemption" in body and "only candidate" in body
    victim = reverse("webui:pod", args=[scenario.pk, "default", "low"])
    assert f'href="{victim}"' in html


def test_the_extension_points_link_to_upstream_and_name_the_python_module(
    client: Client, scenario: Cluster
) -> None:
    html = client.get(cycle_url(scenario, cycle_number(scenario, "default/urgent"))).content
    page = html.decode()
    assert (
        "https://github.com/kubernetes/kubernetes/blob/v1.34.0/pkg/scheduler/framework/plugins/"
        "noderesources/fit.go" in page
    )
    assert "schedviz/scheduler/framework/plugins/noderesources/fit.py" in page
    assert "pkg/scheduler/framework/runtime/framework.go" in page
    assert "PostFilter" in page and "DefaultPreemption" in page


def test_nodes_cut_by_prefilter_are_marked(client: Client, scenario: Cluster) -> None:
    html = client.get(cycle_url(scenario, cycle_number(scenario, "default/pinned"))).content
    body = text_of(html.decode())
    assert "PreFilter narrowed the cycle to 1 node(s)" in body
    assert "rejected at PreFilter: node(s) didn&#x27;t satisfy plugin(s) [NodeAffinity]" in body
    assert "not run (PreFilter)" in body


def test_a_pod_rejected_at_prefilter_shows_it_for_every_node(
    client: Client, scenario: Cluster
) -> None:
    html = client.get(cycle_url(scenario, cycle_number(scenario, "default/claims"))).content
    body = text_of(html.decode())
    reason = "rejected at PreFilter (VolumeRestrictions): persistentvolumeclaim &quot;missing&quot;"
    assert body.count(reason) == 2
    assert "2 cut by PreFilter" in body


def test_the_score_table_highlights_the_chosen_node_and_sorts_on_the_server(
    client: Client,
) -> None:
    cluster = wide_cluster(6, small=2)
    number = cycle_number(cluster, "default/web")
    trace = selectors.cycle_get(cluster=cluster, number=number)
    chosen = trace["selected"]["node"]
    html = client.get(cycle_url(cluster, number)).content.decode()
    assert re.search(
        rf'<tr class="chosen">\s*<th scope="row" class="sticky-col"><a [^>]*><bdi>{chosen}', html
    )
    by_name = client.get(cycle_url(cluster, number), {"sort": "node"}).content.decode()
    scores = by_name[by_name.index('id="scores"') :]
    order = re.findall(r'<th scope="row" class="sticky-col"><a [^>]*><bdi>(n-\d+)', scores)
    assert order == sorted(trace["scores"]) and len(order) == 4
    reverse_order = client.get(cycle_url(cluster, number), {"sort": "-node"}).content.decode()
    scores = reverse_order[reverse_order.index('id="scores"') :]
    assert (
        re.findall(r'<th scope="row" class="sticky-col"><a [^>]*><bdi>(n-\d+)', scores)
        == order[::-1]
    )
    # Every column header is a real link with the htmx request beside it.
    assert 'href="?sort=-NodeResourcesFit.raw#scores"' in html
    assert 'hx-get="?sort=-NodeResourcesFit.raw"' in html


def test_an_htmx_sort_answers_with_the_score_table_alone(client: Client) -> None:
    cluster = wide_cluster(4)
    number = cycle_number(cluster, "default/web")
    response = client.get(
        cycle_url(cluster, number),
        {"sort": "total"},
        headers={"HX-Request": "true", "HX-Target": "scores"},
    )
    html = response.content.decode()
    assert html.lstrip().startswith('<section id="scores"')
    assert "Extension points" not in html


def test_an_unknown_sort_falls_back_to_the_total(client: Client) -> None:
    cluster = wide_cluster(3)
    number = cycle_number(cluster, "default/web")
    response = client.get(cycle_url(cluster, number), {"sort": "nonsense"})
    assert response.status_code == 200


def test_a_large_cycle_pages_the_matrix_rejected_nodes_first(client: Client) -> None:
    cluster = wide_cluster(500, small=3)
    number = cycle_number(cluster, "default/web")
    trace = selectors.cycle_get(cluster=cluster, number=number)
    assert trace["notEvaluated"], "percentageOfNodesToScore should leave nodes unevaluated"
    with_queries = Client()
    html = with_queries.get(cycle_url(cluster, number)).content.decode()
    matrix = html[html.index('id="filter-matrix"') : html.index('id="scores"')]
    rows = re.findall(r'<tr class="row-([a-z-]+)', matrix)
    assert len(rows) == PAGE_SIZE
    assert rows[:3] == ["rejected"] * 3 and rows[3] == "feasible"
    assert f"nodes 1\N{EN DASH}{PAGE_SIZE} of 500" in matrix
    pages = 500 // PAGE_SIZE
    last = with_queries.get(cycle_url(cluster, number), {"fpage": pages}).content.decode()
    matrix = last[last.index('id="filter-matrix"') : last.index('id="scores"')]
    assert f"nodes {500 - PAGE_SIZE + 1}\N{EN DASH}500 of 500" in matrix
    assert "row-not-evaluated" in matrix or "row-hypothetical" in matrix
    # Only the nodes rejected for one reason.
    only = with_queries.get(cycle_url(cluster, number), {"reason": "Insufficient cpu"})
    matrix = only.content.decode()
    matrix = matrix[matrix.index('id="filter-matrix"') : matrix.index('id="scores"')]
    assert re.findall(r'<tr class="row-([a-z-]+)', matrix) == ["rejected"] * 3


def test_a_large_cycle_renders_with_a_fixed_number_of_queries(
    client: Client, django_assert_max_num_queries: Any
) -> None:
    cluster = wide_cluster(500)
    number = cycle_number(cluster, "default/web")
    with django_assert_max_num_queries(6):
        assert client.get(cycle_url(cluster, number)).status_code == 200


def test_hypothetical_filter_results_are_shown_greyed(client: Client) -> None:
    cluster = services.cluster_create(name="h")
    trace = _handmade_trace(
        filter={
            "a": [{"plugin": "NodeResourcesFit", "code": "Success"}],
            "b": [
                {
                    "plugin": "NodeResourcesFit",
                    "code": "Unschedulable",
                    "reasons": ["Insufficient cpu"],
                    "hypothetical": True,
                }
            ],
        },
        notEvaluated=["b"],
    )
    services.cycles_create(cluster=cluster, traces=[trace])
    body = text_of(client.get(cycle_url(cluster, 1)).content.decode())
    assert (
        "not evaluated by the scheduler; filters would say: rejected by NodeResourcesFit: "
        "Insufficient cpu" in body
    )


def test_a_missing_cycle_or_cluster_is_not_found(client: Client) -> None:
    cluster = services.cluster_create(name="empty")
    assert client.get(cycle_url(cluster, 1)).status_code == 404
    assert client.get(reverse("webui:cycle", args=[cluster.pk + 1, 1])).status_code == 404


def test_hostile_names_render_as_text(client: Client) -> None:
    cluster = services.cluster_create(name=HOSTILE)
    trace = _handmade_trace(
        pod=f"ns/{HOSTILE_NAME}",
        filter={
            HOSTILE_NAME: [{"plugin": HOSTILE, "code": "Unschedulable", "reasons": [HOSTILE]}],
            "ok": [{"plugin": HOSTILE, "code": "Success"}],
        },
        scores={"ok": {HOSTILE: {"raw": 1, "normalized": 2, "weight": 1, "weighted": 2}}},
        totals={"ok": 2},
        selected={"node": "ok", "tieSet": ["ok"]},
        points=[{"point": "Filter", "plugin": HOSTILE, "code": "Success", "durationMs": 0.1}],
        message=HOSTILE,
        queue={"activeQ": [{"pod": f"ns/{HOSTILE_NAME}", "attempts": HOSTILE}]},
        preemption={
            "nominatedNode": HOSTILE,
            "victims": [f"ns/{HOSTILE_NAME}"],
            "candidates": [{"node": HOSTILE, "victims": [HOSTILE], "numPDBViolations": 0}],
            "criterion": HOSTILE,
            "nodeStatuses": {HOSTILE: HOSTILE},
        },
        events=[{"type": "Warning", "reason": HOSTILE, "object": HOSTILE, "message": HOSTILE}],
        profile=HOSTILE,
        extenders=[
            {
                "extender": HOSTILE,
                "verb": "filter",
                "request": {"pod": HOSTILE, "nodeNames": [HOSTILE], "sent": "NodeNames"},
                "response": {"nodeNames": [], "failedNodes": {HOSTILE: HOSTILE}},
                "error": HOSTILE,
                "durationMs": 1.0,
            }
        ],
    )
    services.cycles_create(cluster=cluster, traces=[trace])
    for url in (
        cycle_url(cluster, 1),
        reverse("webui:pod", args=[cluster.pk, "ns", HOSTILE_NAME]),
        cycle_url(cluster, 1) + "?sort=" + HOSTILE + "&reason=" + HOSTILE,
    ):
        response = client.get(url)
        assert response.status_code == 200, url
        html = response.content.decode()
        assert "<script>alert" not in html and "<img src=x" not in html, url
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html, url


def _handmade_trace(**fields: Any) -> dict[str, Any]:
    trace: dict[str, Any] = {
        "cycle": 1,
        "pod": "default/p",
        "profile": "default-scheduler",
        "attempt": 1,
        "time": 0.0,
        "wallTime": 0.0,
        "result": "Scheduled",
        "node": "a",
        "message": "Successfully assigned default/p to a",
        "feasibleNodes": 1,
        "evaluatedNodes": 1,
        "totalNodes": 2,
        "startIndex": 0,
        "nominatedNodeTried": None,
        "preFilter": {"nodes": None, "status": None},
        "skippedFilterPlugins": [],
        "filter": {},
        "notEvaluated": [],
        "scores": {},
        "totals": {},
        "selected": {"node": "a", "tieSet": ["a"]},
        "points": [],
        "queue": {},
        "nominatedNode": None,
        "preemption": None,
        "events": [],
    }
    trace.update(fields)
    return trace


# ---------------------------------------------------------------------------------------------
# Upstream sources


def test_every_registered_plugin_links_to_the_file_its_module_says_it_mirrors() -> None:
    for name, factory in new_registry().items():
        source = PLUGIN_SOURCES.get(name) or OUT_OF_TREE_SOURCES[name]
        doc = importlib.import_module(factory.__module__).__doc__ or ""
        assert source in " ".join(doc.split()), (name, source)
        assert plugin_module(name) == factory.__module__.replace(".", "/") + ".py"


# ---------------------------------------------------------------------------------------------
# The pod page


def test_the_pod_page_shows_status_manifest_attempts_and_events(
    client: Client, scenario: Cluster
) -> None:
    response = client.get(reverse("webui:pod", args=[scenario.pk, "default", "urgent"]))
    assert response.status_code == 200
    html = response.content.decode()
    body = text_of(html)
    assert "Node node-0" in body and "Phase Pending" in body
    first, second = (cycle_number(scenario, "default/urgent", n) for n in (1, 2))
    assert f'href="{cycle_url(scenario, first)}"' in html
    assert f'href="{cycle_url(scenario, second)}"' in html
    assert body.index(f"cycle {first} · attempt 1") < body.index(f"cycle {second} · attempt 2")
    assert "FailedScheduling" in body and "Scheduled" in body
    assert "priorityClassName: high" in html


def test_a_pod_without_attempts_or_row_is_not_found(client: Client, scenario: Cluster) -> None:
    url = reverse("webui:pod", args=[scenario.pk, "default", "nobody"])
    assert client.get(url).status_code == 404


def test_a_deleted_victim_keeps_its_page_while_it_has_attempts(client: Client) -> None:
    cluster = scheduled_cluster(SCENARIO)
    services.pod_delete(cluster=cluster, namespace="default", name="claims")
    url = reverse("webui:pod", args=[cluster.pk, "default", "claims"])
    body = text_of(client.get(url).content.decode())
    assert "no longer exists" in body and "Unschedulable" in body


# ---------------------------------------------------------------------------------------------
# The profiles page


def profiles_url(cluster: Cluster) -> str:
    return reverse("webui:profiles", args=[cluster.pk])


def _form_data(client: Client, cluster: Cluster) -> dict[str, Any]:
    """What the browser would post for profile 0 unchanged."""
    html = client.get(profiles_url(cluster)).content.decode()
    form = html[html.index('id="profile-0"') : html.index('id="yaml"')]
    enabled = re.findall(r'name="enabled" value="([^"]+)" checked', form)
    weights = dict(re.findall(r'name="(weight-[A-Za-z]+)" min="1" max="100" value="(\d*)"', form))
    return {"action": "profile", "profile": "0", "enabled": enabled, "percentage": "", **weights}


def test_the_default_profile_is_shown_after_multipoint_expansion(client: Client) -> None:
    cluster = services.cluster_create(name="p")
    response = client.get(profiles_url(cluster))
    assert response.status_code == 200
    html = response.content.decode()
    assert 'value="filter:TaintToleration" checked' in html
    assert 'name="weight-TaintToleration" min="1" max="100" value="3"' in html
    assert 'value="queueSort:PrioritySort" checked' in html
    assert "hardPodAffinityWeight" in html  # the args, defaults included
    assert "kind: KubeSchedulerConfiguration" in html


def test_the_form_disables_a_plugin_and_changes_a_weight(client: Client) -> None:
    cluster = services.cluster_create(name="p")
    data = _form_data(client, cluster)
    data["enabled"].remove("filter:TaintToleration")
    data["weight-NodeAffinity"] = "7"
    data["percentage"] = "40"
    response = client.post(profiles_url(cluster), data)
    assert response.status_code == 302
    config = selectors.scheduler_configuration(cluster=cluster)
    profile = config.profiles[0]
    assert profile.percentage_of_nodes_to_score == 40
    assert [p.name for p in profile.plugins.filter.disabled] == ["TaintToleration"]
    assert {p.name: p.weight for p in profile.plugins.multi_point.enabled}["NodeAffinity"] == 7
    html = client.get(profiles_url(cluster)).content.decode()
    assert 'value="filter:TaintToleration" checked' not in html
    assert 'value="score:TaintToleration" checked' in html
    assert 'name="weight-NodeAffinity" min="1" max="100" value="7"' in html
    assert "scheduler configuration configured" in html


def test_the_form_enables_a_plugin_again(client: Client) -> None:
    cluster = services.cluster_create(name="p")
    data = _form_data(client, cluster)
    data["enabled"].remove("score:ImageLocality")
    assert client.post(profiles_url(cluster), data).status_code == 302
    data = _form_data(client, cluster)
    assert "score:ImageLocality" not in data["enabled"]
    data["enabled"].append("score:ImageLocality")
    assert client.post(profiles_url(cluster), data).status_code == 302
    html = client.get(profiles_url(cluster)).content.decode()
    assert 'value="score:ImageLocality" checked' in html


def test_the_form_shows_the_decoders_errors_and_saves_nothing(client: Client) -> None:
    cluster = services.cluster_create(name="p")
    data = _form_data(client, cluster)
    data["percentage"] = "150"
    data["enabled"].remove("filter:TaintToleration")
    response = client.post(profiles_url(cluster), data)
    assert response.status_code == 400
    body = text_of(response.content.decode())
    assert "Nothing was saved" in body
    assert "profiles[0].percentageOfNodesToScore" in body
    assert not Profile.objects.filter(cluster=cluster).exists()
    data["weight-NodeAffinity"] = "heavy"
    response = client.post(profiles_url(cluster), data)
    assert response.status_code == 400
    assert "is not an integer" in response.content.decode()


def test_yaml_saves_a_configuration(client: Client) -> None:
    cluster = services.cluster_create(name="p")
    text = yaml.safe_dump(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [
                {"schedulerName": "default-scheduler"},
                {
                    "schedulerName": "packer",
                    "pluginConfig": [
                        {
                            "name": "NodeResourcesFit",
                            "args": {"scoringStrategy": {"type": "MostAllocated"}},
                        }
                    ],
                },
            ],
        }
    )
    response = client.post(profiles_url(cluster), {"action": "yaml", "configuration": text})
    assert response.status_code == 302
    assert list(
        Profile.objects.filter(cluster=cluster).values_list("scheduler_name", flat=True)
    ) == [
        "default-scheduler",
        "packer",
    ]
    html = client.get(profiles_url(cluster)).content.decode()
    assert 'id="profile-1"' in html and "MostAllocated" in html


def test_yaml_errors_show_the_field_path_and_nothing_is_saved(client: Client) -> None:
    cluster = services.cluster_create(name="p")
    text = (
        "apiVersion: kubescheduler.config.k8s.io/v1\n"
        "kind: KubeSchedulerConfiguration\n"
        "profiles:\n"
        "- schedulerName: default-scheduler\n"
        "  plugins:\n"
        "    score:\n"
        "      enabled: [{name: NoSuchPlugin, weight: 1}]\n"
    )
    response = client.post(profiles_url(cluster), {"action": "yaml", "configuration": text})
    assert response.status_code == 400
    html = response.content.decode()
    assert "profiles[0]" in html and "NoSuchPlugin" in html
    assert "NoSuchPlugin, weight: 1" in html  # the text kept in the textarea
    assert not Profile.objects.filter(cluster=cluster).exists()


def test_yaml_with_other_objects_is_refused(client: Client) -> None:
    cluster = services.cluster_create(name="p")
    text = "apiVersion: v1\nkind: Namespace\nmetadata: {name: x}\n"
    response = client.post(profiles_url(cluster), {"action": "yaml", "configuration": text})
    assert response.status_code == 400
    assert "only a KubeSchedulerConfiguration" in response.content.decode()


def test_a_hostile_profile_name_renders_as_text(client: Client) -> None:
    cluster = services.cluster_create(name="p")
    text = (
        "apiVersion: kubescheduler.config.k8s.io/v1\n"
        "kind: KubeSchedulerConfiguration\n"
        f"profiles: [{{schedulerName: '{HOSTILE}'}}]\n"
    )
    response = client.post(
        profiles_url(cluster), {"action": "yaml", "configuration": text}, follow=True
    )
    html = response.content.decode()
    assert Profile.objects.get(cluster=cluster).scheduler_name == HOSTILE
    assert "<script>alert" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_a_configuration_the_scheduler_cannot_build_is_refused_before_saving(
    client: Client,
) -> None:
    cluster = services.cluster_create(name="p")
    text = (
        "apiVersion: kubescheduler.config.k8s.io/v1\n"
        "kind: KubeSchedulerConfiguration\n"
        "profiles:\n"
        "- plugins:\n"
        "    score:\n"
        "      enabled: [{name: NodeName, weight: 1}]\n"
    )
    response = client.post(profiles_url(cluster), {"action": "yaml", "configuration": text})
    assert response.status_code == 400
    assert "does not extend ScorePlugin" in response.content.decode()
    assert not Profile.objects.filter(cluster=cluster).exists()


def test_extender_verdicts_and_requests_are_shown(client: Client) -> None:
    cluster = services.cluster_create(name="x")
    prefix = "http://127.0.0.1:8888/scheduler"
    trace = _handmade_trace(
        filter={
            "a": [{"plugin": "NodeResourcesFit", "code": "Success"}],
            "b": [
                {"plugin": "NodeResourcesFit", "code": "Success"},
                {
                    "plugin": prefix,
                    "code": "Unschedulable",
                    "reasons": ["no GPU left"],
                    "stage": "Extender",
                },
            ],
        },
        points=[{"point": "Filter", "plugin": "NodeResourcesFit", "code": "Success"}],
        extenders=[
            {
                "extender": prefix,
                "verb": "filter",
                "request": {"pod": "default/p", "nodeNames": ["a", "b"], "sent": "NodeNames"},
                "response": {"nodeNames": ["a"], "failedNodes": {"b": "no GPU left"}},
                "error": None,
                "durationMs": 1.9,
            }
        ],
    )
    services.cycles_create(cluster=cluster, traces=[trace])
    body = text_of(client.get(cycle_url(cluster, 1)).content.decode())
    assert f"rejected by extender {prefix}: no GPU left" in body
    assert "2 node(s) sent, 1 kept, 1 rejected" in body
