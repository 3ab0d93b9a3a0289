"""The cluster list, the dashboard, its forms and controls, through Django's test client."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from schedviz.cluster import services
from schedviz.cluster.models import Cluster, Cycle, Node, Pod
from worker.runner import run_cluster

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}

NODES = """
apiVersion: v1
kind: Node
metadata: {name: node-1, labels: {zone: a}}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "10"}}
---
apiVersion: v1
kind: Node
metadata: {name: node-2}
spec: {taints: [{key: dedicated, value: gpu, effect: NoSchedule}]}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "10"}}
"""


@pytest.fixture(autouse=True)
def _no_runners(settings: Any) -> None:
    settings.SCHEDVIZ_START_RUNNERS = False


@pytest.fixture
def cluster() -> Cluster:
    cluster = services.cluster_create(name="c")
    services.manifests_apply(cluster=cluster, text=NODES)
    return cluster


def _url(cluster: Cluster, rest: str = "") -> str:
    return f"/clusters/{cluster.pk}/{rest}"


# ---------------------------------------------------------------------------------------------
# Clusters


def test_the_cluster_list_shows_clusters_and_the_create_form(client: Client) -> None:
    services.cluster_create(name="first <b>")
    response = client.get("/")
    assert response.status_code == 200
    body = response.content.decode()
    assert "first &lt;b&gt;" in body
    assert 'name="name"' in body and 'name="manifests"' in body


def test_it_creates_an_empty_cluster_and_redirects_to_its_dashboard(client: Client) -> None:
    response = client.post("/", {"name": "empty", "clock_mode": "live", "source": "empty"})
    cluster = Cluster.objects.get(name="empty")
    assert response.status_code == 302
    assert response["Location"] == f"/clusters/{cluster.pk}/"


def test_it_creates_a_cluster_from_the_demo(client: Client) -> None:
    client.post("/", {"name": "demo", "clock_mode": "virtual", "source": "demo"})
    cluster = Cluster.objects.get(name="demo")
    assert cluster.clock_mode == "virtual"
    assert Node.objects.filter(cluster=cluster).count() == 5


def test_it_creates_a_cluster_from_pasted_manifests(client: Client) -> None:
    client.post(
        "/", {"name": "pasted", "clock_mode": "live", "source": "manifests", "manifests": NODES}
    )
    assert Node.objects.filter(cluster__name="pasted").count() == 2


def test_it_creates_a_cluster_from_an_uploaded_file(client: Client) -> None:
    upload = SimpleUploadedFile("nodes.yaml", NODES.encode())
    client.post("/", {"name": "up", "clock_mode": "live", "source": "manifests", "upload": upload})
    assert Node.objects.filter(cluster__name="up").count() == 2


def test_invalid_manifests_create_nothing_and_every_error_shows(client: Client) -> None:
    text = (
        NODES
        + """
---
apiVersion: v1
kind: Pod
metadata: {name: p}
spec: {containers: [{name: c, image: i, resources: {requests: {cpu: lots}}}]}
---
apiVersion: v1
kind: Node
metadata: {name: n3}
status: {allocatable: {memory: -1Gi}}
"""
    )
    response = client.post(
        "/", {"name": "bad", "clock_mode": "live", "source": "manifests", "manifests": text}
    )
    assert response.status_code == 400
    assert not Cluster.objects.filter(name="bad").exists()
    assert not Node.objects.exists()
    body = response.content.decode()
    assert "document 3: " in body and "requests[cpu]" in body
    assert "document 4: " in body and "&lt;input&gt;" not in body


def test_a_taken_name_is_an_error_on_the_name_field(client: Client, cluster: Cluster) -> None:
    response = client.post("/", {"name": "c", "clock_mode": "live", "source": "empty"})
    assert response.status_code == 400
    assert response.context["form"].errors["name"] == ['clusters "c" already exists']
    assert Cluster.objects.count() == 1


def test_manifests_are_required_when_they_are_the_source(client: Client) -> None:
    response = client.post("/", {"name": "x", "clock_mode": "live", "source": "manifests"})
    assert "manifests" in response.context["form"].errors
    assert not Cluster.objects.exists()


def test_reset_and_delete_ask_first_and_act_on_the_confirmation(
    client: Client, cluster: Cluster
) -> None:
    client.force_login(User.objects.create_user("ann"))
    for action in ("reset/", "delete/"):
        asked = client.get(_url(cluster, action))
        assert asked.status_code == 200
        body = asked.content.decode()
        assert 'name="confirm" value="yes"' in body and "cannot be undone" in body
        # A post without the confirmation (a form without script, a stray click) asks again.
        assert client.post(_url(cluster, action)).status_code == 200
    assert Node.objects.filter(cluster=cluster).exists()
    assert client.post(_url(cluster, "reset/"), {"confirm": "yes"}).status_code == 302
    assert not Node.objects.filter(cluster=cluster).exists()
    assert client.post(_url(cluster, "delete/"), {"confirm": "yes"}).status_code == 302
    assert not Cluster.objects.exists()


def test_a_visitor_signed_out_cannot_wipe_an_ownerless_cluster_made_by_someone_else(
    client: Client, cluster: Cluster
) -> None:
    for action in ("reset/", "delete/"):
        response = client.post(_url(cluster, action), {"confirm": "yes"})
        assert response.status_code == 403
        assert "Sign in to" in response.content.decode()
    assert Node.objects.filter(cluster=cluster).exists()
    # Other changes stay open to everyone: the ownerless cluster is a shared playground.
    assert client.post(_url(cluster, "control/pause/")).status_code == 302


def test_a_visitor_signed_out_may_wipe_the_cluster_they_made(client: Client) -> None:
    client.post("/", {"name": "mine", "clock_mode": "live", "source": "empty"})
    mine = Cluster.objects.get(name="mine")
    assert mine.owner is None
    assert client.post(_url(mine, "delete/"), {"confirm": "yes"}).status_code == 302
    assert not Cluster.objects.filter(name="mine").exists()


# ---------------------------------------------------------------------------------------------
# The dashboard


def test_the_dashboard_shows_node_cards_with_bars_taints_and_pods(
    client: Client, cluster: Cluster
) -> None:
    services.manifests_apply(
        cluster=cluster,
        text="""
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: shop}
spec:
  nodeName: node-1
  containers: [{name: c, image: i, resources: {requests: {cpu: 500m, memory: 1Gi}}}]
""",
    )
    response = client.get(_url(cluster))
    assert response.status_code == 200
    body = response.content.decode()
    assert 'id="node-node-1"' in body and 'id="node-node-2"' in body
    assert "500m / 2" in body and "1Gi / 4Gi" in body and "1 / 10" in body
    assert "dedicated=gpu:NoSchedule" in body
    assert f'href="/clusters/{cluster.pk}/pods/shop/web/"' in body
    assert f'ws-connect="/ws/clusters/{cluster.pk}/?colour=namespace&amp;page=1"' in body
    assert "hx-ws-2" in body


def test_the_dashboard_shows_pending_pods_with_the_schedulers_reason(
    client: Client, cluster: Cluster
) -> None:
    services.manifests_apply(
        cluster=cluster,
        text="""
apiVersion: v1
kind: Pod
metadata: {name: huge}
spec: {containers: [{name: c, image: i, resources: {requests: {cpu: "64"}}}]}
""",
    )
    message = "0/2 nodes are available: 2 Insufficient cpu."
    services.pod_update_status(
        cluster=cluster,
        namespace="default",
        name="huge",
        condition={
            "type": "PodScheduled",
            "status": "False",
            "reason": "Unschedulable",
            "message": message,
        },
        nominated_node_name=None,
    )
    body = client.get(_url(cluster)).content.decode()
    assert "default/huge" in body and message in body


def test_the_first_render_uses_the_latest_cycles_queue_and_feed(
    client: Client, cluster: Cluster
) -> None:
    trace = {
        "cycle": 7,
        "pod": "default/a",
        "result": "Unschedulable",
        "message": "0/2 nodes are available: 2 Insufficient cpu.",
        "time": 2.0,
        "queue": {
            "activeQ": [{"pod": "default/a", "attempts": 1}],
            "backoffQ": [{"pod": "default/b", "attempts": 2, "backoffExpiration": 3.5}],
            "unschedulablePods": [
                {
                    "pod": "default/c",
                    "attempts": 1,
                    "unschedulablePlugins": ["NodeResourcesFit"],
                    "pendingPlugins": [],
                    "since": 0.0,
                }
            ],
        },
    }
    services.cycles_create(cluster=cluster, traces=[trace])
    body = client.get(_url(cluster)).content.decode()
    assert "cycle 7" in body
    assert "back in 1.5 s" in body
    assert "rejected by NodeResourcesFit" in body
    assert "Node add/allocatable" in body  # the events NodeResourcesFit registered
    assert f'href="/clusters/{cluster.pk}/cycles/7/"' in body


def test_the_queue_panel_shows_which_event_moved_which_pod_by_which_hint(
    client: Client, cluster: Cluster
) -> None:
    moves = [
        {
            "event": "AssignedPodDelete",
            "pod": "default/waiter",
            "queue": "Backoff",
            "plugin": "NodeResourcesFit",
            "object": "default/<b>preemptor</b>",
        },
        {"event": "BackoffComplete", "pod": "default/b", "queue": "Active"},
        {
            "event": "ScheduleAttemptFailure",
            "pod": "default/c",
            "queue": "Backoff",
            "plugin": "NodeAffinity",
            "cause": "NodeAdd",
            "object": "node-3",
        },
    ]
    trace = {"cycle": 4, "pod": "default/waiter", "result": "Unschedulable", "time": 0.0}
    services.cycles_create(
        cluster=cluster, traces=[{**trace, "queue": {"activeQ": [], "moves": moves}}]
    )
    response = client.get(_url(cluster))
    assert [m["to"] for m in response.context["queue"]["moved"]] == [
        "backoffQ",
        "activeQ",
        "backoffQ",
    ]
    body = response.content.decode()
    assert "moved since the last pop" in body
    assert "NodeResourcesFit's hint said Queue" in body
    assert "of <bdi>default/&lt;b&gt;preemptor&lt;/b&gt;</bdi>" in body
    assert '(<span class="event">NodeAdd</span> seen in flight)' in body


def test_a_queue_recorded_before_moves_were_kept_shows_none(
    client: Client, cluster: Cluster
) -> None:
    trace = {"cycle": 1, "pod": "default/a", "result": "Unschedulable", "time": 0.0}
    services.cycles_create(cluster=cluster, traces=[{**trace, "queue": {"activeQ": []}}])
    response = client.get(_url(cluster))
    assert response.context["queue"]["moved"] == []
    assert "moved since the last pop" not in response.content.decode()


POD_REQUESTING_CPU = """
apiVersion: v1
kind: Pod
metadata: {name: %s}
spec: {containers: [{name: c, image: i, resources: {requests: {cpu: "%s"}}}]}
"""


def test_after_a_run_the_queue_is_the_one_the_last_cycle_left(
    client: Client, settings: Any
) -> None:
    settings.SCHEDVIZ_RUNNER_IDLE_SECONDS = 0
    cluster = services.cluster_create(name="ran", clock_mode=Cluster.ClockMode.VIRTUAL)
    requests = (("fits", "100m"), ("last", "100m"), ("huge", "64"))
    pods = [POD_REQUESTING_CPU % pod for pod in requests]
    services.manifests_apply(cluster=cluster, text="\n---\n".join([NODES, *pods]))
    run_cluster(cluster.pk)
    assert Pod.objects.get(cluster=cluster, name="last").node_name
    last = Cycle.objects.filter(cluster=cluster).order_by("-number").first()
    assert last is not None

    queue = client.get(_url(cluster)).context["queue"]

    # The queue the last cycle recorded is the one before its pop: "last" would still be there.
    assert queue["as_of"] == f"after cycle {last.number}"
    assert queue["active"] == []
    assert [entry["pod"] for entry in queue["unschedulable"]] == ["default/huge"]


def test_node_cards_are_paginated(client: Client) -> None:
    cluster = services.cluster_create(name="big")
    text = "\n---\n".join(
        f"apiVersion: v1\nkind: Node\nmetadata: {{name: n-{i:03d}}}\n"
        "status: {allocatable: {cpu: '1', memory: 1Gi, pods: '10'}}"
        for i in range(120)
    )
    services.manifests_apply(cluster=cluster, text=text)
    body = client.get(_url(cluster)).content.decode()
    assert body.count('class="node-card') == 48
    assert "page 1 of 3" in body
    body = client.get(_url(cluster) + "?page=3").content.decode()
    assert body.count('class="node-card') == 24 and 'id="node-n-119"' in body
    assert f'ws-connect="/ws/clusters/{cluster.pk}/?colour=namespace&amp;page=3"' in body


@pytest.mark.parametrize("target", ["nodes", "pending", "queue", "feed", "controls"])
def test_htmx_requests_get_the_fragment_they_target(
    client: Client, cluster: Cluster, target: str
) -> None:
    response = client.get(_url(cluster), HTTP_HX_TARGET=target, **HTMX)
    body = response.content.decode()
    assert body.lstrip().startswith("<section") and f'id="{target}"' in body
    assert "<html" not in body


def test_someone_elses_cluster_is_not_found(client: Client, django_user_model: Any) -> None:
    owner = django_user_model.objects.create_user("owner")
    cluster = services.cluster_create(name="private", owner=owner)
    assert client.get(_url(cluster)).status_code == 404
    assert client.post(_url(cluster, "delete/")).status_code == 404


# ---------------------------------------------------------------------------------------------
# Controls


def test_controls_answer_htmx_with_the_controls_fragment(client: Client, cluster: Cluster) -> None:
    response = client.post(_url(cluster, "control/pause/"), **HTMX)
    assert response.status_code == 200
    assert (
        'id="controls"' in response.content.decode()
        and "Step one cycle" in response.content.decode()
    )
    cluster.refresh_from_db()
    assert cluster.run_state == "paused"
    client.post(_url(cluster, "control/step/"), **HTMX)
    client.post(_url(cluster, "control/step/"), **HTMX)
    cluster.refresh_from_db()
    assert cluster.pending_steps == 2
    response = client.post(_url(cluster, "control/run/"))
    assert response.status_code == 302 and response["Location"] == _url(cluster)
    cluster.refresh_from_db()
    assert (cluster.run_state, cluster.pending_steps) == ("running", 0)


def test_speed_and_clock_mode(client: Client, cluster: Cluster) -> None:
    client.post(_url(cluster, "control/speed/"), {"speed": "5"}, **HTMX)
    client.post(_url(cluster, "control/clock/"), {"clock_mode": "virtual"}, **HTMX)
    cluster.refresh_from_db()
    assert (cluster.speed, cluster.clock_mode) == (5.0, "virtual")
    response = client.post(_url(cluster, "control/pause/"), **HTMX)
    assert "Run to idle" in response.content.decode()


@pytest.mark.parametrize(
    ("speed", "reason"),
    [
        ("-1", "speed: Invalid value: -1.0: must be between 0.01 and 10000"),
        ("1e9", "speed: Invalid value: 1000000000.0: must be between 0.01 and 10000"),
        ("0.001", "speed: Invalid value: 0.001: must be between 0.01 and 10000"),
    ],
)
def test_a_bad_speed_is_refused_and_shown_as_the_api_refuses_it(
    client: Client, cluster: Cluster, speed: str, reason: str
) -> None:
    response = client.post(_url(cluster, "control/speed/"), {"speed": speed}, **HTMX)
    assert response.status_code == 400
    assert reason in response.content.decode()
    cluster.refresh_from_db()
    assert cluster.speed == 1.0
    # The JSON API's refusal of the same value, word for word.
    token = services.api_token_create(username="speedy").key
    api = client.post(
        "/api/clusters",
        data={"name": "api", "speed": float(speed)},
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Token {token}",
    )
    assert api.status_code == 400 and api.json() == {"errors": [reason]}


def test_controls_need_the_csrf_token(cluster: Cluster) -> None:
    client = Client(enforce_csrf_checks=True)
    assert client.post(_url(cluster, "control/pause/")).status_code == 403


def test_an_unknown_control_is_not_found(client: Client, cluster: Cluster) -> None:
    assert client.post(_url(cluster, "control/explode/")).status_code == 404


# ---------------------------------------------------------------------------------------------
# Pods and nodes


POD = {
    "name": "web",
    "namespace": "default",
    "count": "3",
    "cpu": "250m",
    "memory": "64Mi",
    "node_selector": "zone=a",
    "tolerations": "dedicated=gpu:NoSchedule",
    "node_affinity": "zone In a,b",
    "topology_spread": "zone 1 DoNotSchedule",
    "scheduler_name": "",
    "priority_class": "",
}


def test_the_pod_form_creates_pods_through_the_services(client: Client, cluster: Cluster) -> None:
    response = client.post(_url(cluster, "pods/new/"), POD)
    assert response.status_code == 302
    pods = Pod.objects.filter(cluster=cluster).order_by("name")
    assert [p.name for p in pods] == ["web-1", "web-2", "web-3"]
    spec = pods[0].manifest["spec"]
    assert spec["nodeSelector"] == {"zone": "a"}
    assert spec["tolerations"] == [
        {"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}
    ]
    assert spec["containers"][0]["resources"]["requests"] == {"cpu": "250m", "memory": "64Mi"}
    assert spec["topologySpreadConstraints"][0]["labelSelector"] == {"matchLabels": {"app": "web"}}


def test_the_pod_form_over_htmx_answers_with_a_fresh_form(client: Client, cluster: Cluster) -> None:
    response = client.post(_url(cluster, "pods/new/"), {**POD, "count": "1"}, **HTMX)
    body = response.content.decode()
    assert response.status_code == 200 and body.lstrip().startswith("<form")
    assert "Created pod web." in body


def test_invalid_pod_requests_show_on_their_fields_and_save_nothing(
    client: Client, cluster: Cluster
) -> None:
    response = client.post(_url(cluster, "pods/new/"), {**POD, "cpu": "lots", "memory": "-1"})
    assert response.status_code == 400
    errors = response.context["pod_form"].errors
    assert "requests[cpu]" in errors["cpu"][0]
    assert "requests[memory]" in errors["memory"][0]
    assert not Pod.objects.exists()


def test_a_pod_that_exists_is_an_error_on_the_name_and_nothing_is_saved(
    client: Client, cluster: Cluster
) -> None:
    client.post(_url(cluster, "pods/new/"), {**POD, "count": "1", "name": "web-2"})
    response = client.post(_url(cluster, "pods/new/"), POD, **HTMX)
    assert response.status_code == 400
    assert "already exists" in response.context["pod_form"].errors["name"][0]
    assert list(Pod.objects.values_list("name", flat=True)) == ["web-2"]


def test_an_unknown_priority_class_is_an_error_on_its_field(
    client: Client, cluster: Cluster
) -> None:
    response = client.post(_url(cluster, "pods/new/"), {**POD, "priority_class": "nope"})
    assert "priority_class" in response.context["pod_form"].errors
    assert not Pod.objects.exists()


def test_the_node_form_adds_n_nodes_like_this(client: Client, cluster: Cluster) -> None:
    response = client.post(
        _url(cluster, "nodes/new/"),
        {
            "name": "w",
            "count": "3",
            "cpu": "8",
            "memory": "16Gi",
            "pods": "50",
            "labels": "zone=b",
            "taints": "spot:NoSchedule",
        },
    )
    assert response.status_code == 302
    nodes = Node.objects.filter(cluster=cluster, name__startswith="w-").order_by("name")
    assert [n.name for n in nodes] == ["w-1", "w-2", "w-3"]
    assert nodes[0].labels == {"kubernetes.io/hostname": "w-1", "zone": "b"}
    assert nodes[0].taints == [{"key": "spot", "effect": "NoSchedule"}]


def test_invalid_node_fields_show_and_nothing_is_saved(client: Client, cluster: Cluster) -> None:
    response = client.post(
        _url(cluster, "nodes/new/"),
        {"name": "w", "count": "2", "cpu": "many", "memory": "16Gi", "pods": "50"},
    )
    assert response.status_code == 400
    assert "cpu" in response.context["node_form"].errors
    assert not Node.objects.filter(name__startswith="w").exists()


def test_adding_a_node_that_exists_is_refused(client: Client, cluster: Cluster) -> None:
    response = client.post(
        _url(cluster, "nodes/new/"),
        {"name": "node-1", "count": "1", "cpu": "1", "memory": "1Gi", "pods": "5"},
    )
    assert response.context["node_form"].errors["name"] == ['nodes "node-1" already exists']
    assert (
        Node.objects.get(cluster=cluster, name="node-1").manifest["status"]["allocatable"]["cpu"]
        == "2"
    )


def test_the_yaml_editor_applies_or_shows_each_error_with_its_document(
    client: Client, cluster: Cluster
) -> None:
    response = client.post(_url(cluster, "apply/"), {"manifests": "kind: Pod\n---\n: :"}, **HTMX)
    assert response.status_code == 400
    body = response.content.decode()
    # Several documents: each error says which, without the loader's "of <input>".
    assert "document 1: " in body and "document 2: " in body
    assert "&lt;input&gt;" not in body
    # One document: no location at all, the message as the API server words it.
    single = client.post(
        _url(cluster, "apply/"), {"manifests": "apiVersion: v1\nkind: Pod\nmetadata: {}"}, **HTMX
    )
    assert single.status_code == 400
    text = single.content.decode()
    assert "metadata.name: Required value" in text
    assert "document 1" not in text and "&lt;input&gt;" not in text
    response = client.post(
        _url(cluster, "apply/"),
        {"manifests": "apiVersion: v1\nkind: Namespace\nmetadata: {name: shop}"},
        **HTMX,
    )
    assert "namespace/shop created" in response.content.decode()


def test_the_yaml_editor_names_the_objects_it_skipped(client: Client, cluster: Cluster) -> None:
    manifests = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app-config}\n---\n"
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: shop}"
    )
    response = client.post(_url(cluster, "apply/"), {"manifests": manifests}, **HTMX)
    body = response.content.decode()
    assert "namespace/shop created" in body
    assert "skipped 1 object of a kind the scheduler does not read: ConfigMap/app-config" in body


def test_the_node_page_edits_labels_taints_and_cordon(client: Client, cluster: Cluster) -> None:
    assert client.get(_url(cluster, "nodes/node-1/")).status_code == 200
    response = client.post(
        _url(cluster, "nodes/node-1/"),
        {"labels": "zone=b\ndisk=ssd", "taints": "a=b:NoExecute", "cordoned": "on"},
    )
    assert response.status_code == 302
    node = Node.objects.get(cluster=cluster, name="node-1")
    assert node.labels == {"zone": "b", "disk": "ssd"}
    assert node.taints == [{"key": "a", "value": "b", "effect": "NoExecute"}]
    assert node.unschedulable


def test_a_bad_taint_shows_on_its_field(client: Client, cluster: Cluster) -> None:
    response = client.post(_url(cluster, "nodes/node-1/"), {"labels": "", "taints": "a=b:Never"})
    assert response.status_code == 400
    assert "taints" in response.context["form"].errors
    assert Node.objects.get(cluster=cluster, name="node-1").labels == {"zone": "a"}


def test_cordon_uncordon_and_delete_a_node(client: Client, cluster: Cluster) -> None:
    client.post(_url(cluster, "nodes/node-1/cordon/"), {"cordon": "1"})
    assert Node.objects.get(cluster=cluster, name="node-1").unschedulable
    response = client.post(_url(cluster, "nodes/node-1/cordon/"), {"cordon": "0"}, **HTMX)
    assert 'id="nodes"' in response.content.decode()
    assert not Node.objects.get(cluster=cluster, name="node-1").unschedulable
    client.post(_url(cluster, "nodes/node-1/delete/"))
    assert not Node.objects.filter(cluster=cluster, name="node-1").exists()
    assert client.post(_url(cluster, "nodes/node-1/delete/")).status_code == 404


def test_user_data_is_escaped(client: Client) -> None:
    cluster = services.cluster_create(name="<script>alert(1)</script>")
    body = client.get(_url(cluster)).content.decode()
    assert "<script>alert(1)</script>" not in body
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body


def test_cycle_numbers_link_to_the_trace_page(client: Client, cluster: Cluster) -> None:
    services.cycles_create(
        cluster=cluster,
        traces=[
            {
                "cycle": 1,
                "pod": "default/a",
                "result": "Scheduled",
                "node": "node-1",
                "message": "ok",
                "time": 0.0,
            }
        ],
    )
    assert Cycle.objects.count() == 1
    body = client.get(_url(cluster), HTTP_HX_TARGET="feed", **HTMX).content.decode()
    assert f'href="/clusters/{cluster.pk}/cycles/1/"' in body and "→ <bdi>node-1</bdi>" in body


def test_a_pending_pod_can_be_deleted_from_the_dashboard(client: Client, cluster: Cluster) -> None:
    client.post(_url(cluster, "pods/new/"), {**POD, "count": "1"})
    assert 'aria-label="Delete pod default/web"' in client.get(_url(cluster)).content.decode()
    response = client.post(_url(cluster, "pods/default/web/delete/"), **HTMX)
    body = response.content.decode()
    assert 'id="nodes"' in body and 'id="pending" class="panel"' in body
    assert 'hx-swap-oob="true"' in body
    assert not Pod.objects.exists()
    assert client.post(_url(cluster, "pods/default/web/delete/")).status_code == 404


def test_pods_are_coloured_by_namespace_or_by_priority(client: Client, cluster: Cluster) -> None:
    services.manifests_apply(
        cluster=cluster,
        text="""
apiVersion: v1
kind: Pod
metadata: {name: urgent}
spec: {nodeName: node-1, priority: 2000001000, containers: [{name: c, image: i}]}
""",
    )
    body = client.get(_url(cluster)).content.decode()
    assert 'class="chip ns-' in body
    body = client.get(_url(cluster) + "?colour=priority").content.decode()
    assert 'class="chip prio-3" href="/clusters/' in body
    assert f'ws-connect="/ws/clusters/{cluster.pk}/?colour=priority&amp;page=1"' in body
    assert 'class="chip ns-' not in body
