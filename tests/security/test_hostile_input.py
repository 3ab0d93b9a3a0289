"""Hostile input through the JSON API and the websocket: oversized, deeply nested and alias-bomb
documents, absurd quantities, control characters, malformed bodies, garbage frames. Each is
refused (or accepted) cleanly with a message that says why, nothing is half-saved, and the
server answers the next request as usual."""

from __future__ import annotations

import json
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import AnonymousUser
from django.test import Client

from schedviz.cluster import services
from schedviz.cluster.live import group_name
from schedviz.cluster.models import Change, Cluster, Cycle, Namespace, Node, Pod, Profile
from schedviz.scheduler.trace import SCHEMA_VERSION
from webui.routing import websocket_urlpatterns


@pytest.fixture(autouse=True)
def _quiet(settings: Any) -> None:
    settings.SCHEDVIZ_START_RUNNERS = False
    settings.SCHEDVIZ_WRITE_RATE_PER_MINUTE = 0  # these tests send many writes on purpose


@pytest.fixture
def auth(db: None) -> dict[str, Any]:
    token = services.api_token_create(username="mallory")
    return {"HTTP_AUTHORIZATION": f"Token {token.key}", "user": token.user}


@pytest.fixture
def cluster(auth: dict[str, Any]) -> Cluster:
    return services.cluster_create(name="target", owner=auth.pop("user"))


def apply_url(cluster: Cluster) -> str:
    return f"/api/clusters/{cluster.pk}/apply"


def stored_counts() -> dict[str, int]:
    return {
        model.__name__: model.objects.count()
        for model in (Cluster, Node, Pod, Namespace, Change, Profile, Cycle)
    }


def node(name: str, cpu: str = "4", **metadata: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, **metadata},
        "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}},
    }


def post(client: Client, url: str, body: str | bytes, auth: dict[str, Any], kind: str) -> Any:
    return client.post(url, data=body, content_type=kind, **auth)


def assert_refused_whole(response: Any, before: dict[str, int], *fragments: str) -> list[str]:
    assert response.status_code == 400, response.content
    errors = response.json()["errors"]
    assert errors and all(isinstance(e, str) and e for e in errors)
    for fragment in fragments:
        assert any(fragment in e for e in errors), errors
    assert stored_counts() == before
    return list(errors)


def assert_server_unharmed(client: Client, cluster: Cluster, auth: dict[str, Any]) -> None:
    """The next requests, a read and a write, are served as usual."""
    assert client.get("/api/clusters", **auth).status_code == 200
    text = json.dumps(node("healthy"))
    response = post(client, apply_url(cluster), text, auth, "application/json")
    assert response.status_code == 200, response.content
    assert Node.objects.filter(cluster=cluster, name="healthy").exists()


# --- size, depth, aliases ---------------------------------------------------------------------


@pytest.mark.django_db
def test_a_body_over_the_upload_limit_is_413_and_nothing_is_saved(
    client: Client, auth: dict[str, Any], cluster: Cluster, settings: Any
) -> None:
    settings.SCHEDVIZ_MAX_UPLOAD_BYTES = 2000
    text = "\n---\n".join(json.dumps(node(f"n{i}")) for i in range(40))
    assert len(text.encode()) > 2000
    before = stored_counts()
    response = post(client, apply_url(cluster), text, auth, "application/yaml")
    assert response.status_code == 413
    assert response.json() == {"errors": ["request body larger than 2000 bytes"]}
    assert stored_counts() == before
    assert_server_unharmed(client, cluster, auth)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("metadata: " + "[" * 100_000 + "]" * 100_000, "exceeded max depth of 100"),
        ("[" * 100_000 + "]" * 100_000, "exceeded max depth of 100"),
        ("a:\n" + "".join(" " * i + "- \n" for i in range(1, 400)), "exceeded max depth of 100"),
        (
            'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
            + "".join(
                f"{n}: &{n} [" + ", ".join([f"*{p}"] * 9) + "]\n"
                for p, n in zip("abcdefgh", "bcdefghi", strict=True)
            ),
            "excessive aliasing",
        ),
        ("a: &a [*a]\n", "refers to itself"),
        ("a: " + "".join(f"&x{i} [" for i in range(2000)) + "]" * 2000, "max depth of 100"),
    ],
    ids=["deep-flow-mapping", "deep-json", "deep-block", "billion-laughs", "self-alias", "anchors"],
)
def test_deep_and_alias_bomb_yaml_is_refused_with_its_reason(
    client: Client, auth: dict[str, Any], cluster: Cluster, text: str, reason: str
) -> None:
    before = stored_counts()
    response = post(client, apply_url(cluster), text, auth, "application/yaml")
    assert_refused_whole(response, before, reason)
    assert_server_unharmed(client, cluster, auth)


@pytest.mark.django_db
def test_an_alias_bomb_after_valid_documents_saves_none_of_them(
    client: Client, auth: dict[str, Any], cluster: Cluster
) -> None:
    bomb = "a: &a [1,2,3,4,5,6,7,8,9]\n" + "".join(
        f"{n}: &{n} [" + ", ".join([f"*{p}"] * 9) + "]\n"
        for p, n in zip("abcdefgh", "bcdefghi", strict=True)
    )
    text = json.dumps(node("n1")) + "\n---\n" + json.dumps(node("n2")) + "\n---\n" + bomb
    before = stored_counts()
    response = post(client, apply_url(cluster), text, auth, "application/yaml")
    assert_refused_whole(response, before, "document 3 of <input>: document contains excessive")


# --- quantities -------------------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("cpu", ["1e999999999", "99999999999999999999999Ei", "1e308"])
def test_absurdly_large_quantities_are_refused_whole_naming_the_field(
    client: Client, auth: dict[str, Any], cluster: Cluster, cpu: str
) -> None:
    before = stored_counts()
    response = post(client, apply_url(cluster), json.dumps(node("big", cpu)), auth, "text/json")
    assert_refused_whole(
        response,
        before,
        f'Node "big" is invalid: status.allocatable.cpu: Invalid value: "{cpu}": must be between',
    )


@pytest.mark.django_db
def test_an_absurdly_small_quantity_is_accepted_as_upstream_rounds_it_up(
    client: Client, auth: dict[str, Any], cluster: Cluster
) -> None:
    cpu = "1e-999999999"
    response = post(client, apply_url(cluster), json.dumps(node("tiny", cpu)), auth, "text/json")
    assert response.status_code == 200, response.content
    stored = Node.objects.get(cluster=cluster, name="tiny").manifest["status"]["allocatable"]
    assert stored["cpu"] == cpu
    export = client.get(f"/api/clusters/{cluster.pk}/export", **auth)
    assert export.status_code == 200 and cpu in b"".join(export).decode()


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("cpu", "reason"),
    [
        ("9" * 5000, "quantities must have at most 1000 digits"),
        ("0." + "1" * 5000, "quantities must have at most 1000 digits"),
        ("1e99999999999", "unable to parse quantity's suffix"),
        ("1.5.3", "quantities must match the regular expression"),
    ],
    ids=["5000-digits", "5000-decimals", "exponent-past-int32", "two-points"],
)
def test_unreadable_quantities_are_refused_naming_the_field(
    client: Client, auth: dict[str, Any], cluster: Cluster, cpu: str, reason: str
) -> None:
    before = stored_counts()
    response = post(client, apply_url(cluster), json.dumps(node("big", cpu)), auth, "text/json")
    (error,) = assert_refused_whole(response, before, reason)
    assert 'Node "big" is invalid: status.allocatable.cpu: Invalid value: ' in error
    assert_server_unharmed(client, cluster, auth)


# --- unicode and control characters -----------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("metadata", "reason"),
    [
        ({"name": "n\u0000"}, "metadata.name: Invalid value: strings may not contain NUL"),
        ({"name": "n1", "labels": {"te\u0007am": "x"}}, "metadata.labels: Invalid value"),
        ({"name": "n1", "labels": {"team": "\u2028x"}}, "metadata.labels: Invalid value"),
        ({"name": "n1", "labels": {"team": "🚀"}}, "metadata.labels: Invalid value"),
        ({"name": "n1", "annotations": {"\u0000": "x"}}, "metadata.annotations.\x00: Invalid"),
        ({"name": "n1", "annotations": {"a": "x\u0000"}}, "metadata.annotations.a: Invalid"),
        ({"name": "n1", "annotations": {"a": "\ud800"}}, "unpaired surrogates"),
        ({"name": "n1", "annotations": {"\udfff": "a"}}, "unpaired surrogates"),
    ],
    ids=[
        "nul-name",
        "bell-label-key",
        "line-separator-label-value",
        "emoji-label-value",
        "nul-annotation-key",
        "nul-annotation-value",
        "surrogate-annotation-value",
        "surrogate-annotation-key",
    ],
)
def test_unstorable_or_invalid_characters_are_refused_naming_the_field(
    client: Client, auth: dict[str, Any], cluster: Cluster, metadata: dict[str, Any], reason: str
) -> None:
    """NUL and lone surrogates cannot be stored (PostgreSQL refuses NUL in text and jsonb), so
    they are refused wherever they are; labels are held to upstream's syntax."""
    text = json.dumps([node("fine"), {**node("x"), "metadata": metadata}])
    before = stored_counts()
    response = post(client, apply_url(cluster), text, auth, "application/json")
    assert_refused_whole(response, before, reason)
    assert_server_unharmed(client, cluster, auth)


@pytest.mark.django_db
@pytest.mark.parametrize("name", ["nöde", "n\u202e1", "nodeA", "n\u0007", "a/b", "<img src=x>"])
def test_node_names_are_held_to_the_api_servers_dns_1123_subdomains(
    client: Client, auth: dict[str, Any], cluster: Cluster, name: str
) -> None:
    """ValidateNodeName (NameIsDNSSubdomain): no upper case, no markup, nothing but [a-z0-9.-]."""
    before = stored_counts()
    response = post(client, apply_url(cluster), json.dumps(node(name)), auth, "application/json")
    assert_refused_whole(response, before, "a lowercase RFC 1123 subdomain must consist of")


@pytest.mark.django_db
def test_annotation_values_keep_any_printable_unicode(
    client: Client, auth: dict[str, Any], cluster: Cluster
) -> None:
    annotations = {"note": "Ωmega 🚀 \u202e reversed", "multi": "line\nbreak\ttab"}
    text = json.dumps(node("n1", annotations=annotations))
    response = post(client, apply_url(cluster), text, auth, "application/json")
    assert response.status_code == 200, response.content
    stored = Node.objects.get(cluster=cluster, name="n1").manifest["metadata"]["annotations"]
    assert stored == annotations


@pytest.mark.django_db
def test_control_characters_in_yaml_are_refused_with_where_they_are(
    client: Client, auth: dict[str, Any], cluster: Cluster
) -> None:
    text = 'apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n  annotations: {a: "x\x07"}\n'
    before = stored_counts()
    response = post(client, apply_url(cluster), text, auth, "application/yaml")
    assert_refused_whole(response, before, "control characters are not allowed")


# --- malformed bodies -------------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ("{not json", "request body is not JSON"),
        ("[1, 2]", "request body must be a JSON object"),
        ('"a name"', "request body must be a JSON object"),
        ("42", "request body must be a JSON object"),
        ("null", "request body must be a JSON object"),
        (b"\xff\xfe\x00garbage", "request body is not UTF-8 text"),
        ('{"name": ["a"]}', "name: Required value"),
        ('{"name": "c", "speed": "fast"}', "speed: Invalid value"),
        ('{"name": "c", "seed": true}', "seed: Invalid value"),
        ('{"name": "c", "speed": 1e999}', "speed"),
        # Python refuses to convert integers of more than 4300 digits.
        ('{"name": "c", "seed": %s}' % ("9" * 10_000), "seed: Invalid value"),
        ('{"name": "c", "speed": %s}' % ("9" * 10_000), "speed: Invalid value"),
        (f'{{"name": "c", "seed": {10**30}}}', "seed: Invalid value: must be between 0 and"),
        (f'{{"name": "c", "seed": {2**63}}}', "seed: Invalid value: must be between 0 and"),
        ('{"name": "c", "seed": -1}', "seed: Invalid value: must be between 0 and"),
        ('{"name": "c\\u0000x"}', "name: Invalid value: must not contain NUL characters"),
        ('{"name": "c", "speed": 1e9}', "speed: Invalid value: 1000000000.0: must be between"),
        ('{"name": "c", "speed": 0.001}', "speed: Invalid value: 0.001: must be between"),
    ],
)
def test_malformed_cluster_bodies_are_400_with_the_reason(
    client: Client, auth: dict[str, Any], cluster: Cluster, body: str | bytes, reason: str
) -> None:
    before = stored_counts()
    response = post(client, "/api/clusters", body, auth, "application/json")
    assert_refused_whole(response, before, reason)
    assert_server_unharmed(client, cluster, auth)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ('{"apiVersion": "v1", "kind": "Node"', "json: line 1"),
        ("42", "expected an object, got number"),
        ('"text"', "expected an object, got string"),
        ("[1, [2]]", "expected an object, got number"),
        ("key: [unclosed", "yaml: line"),
        ("\t- tab indented", "yaml: line 1"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "request body is not UTF-8 text"),
        ("\x00\x01\x02", "control characters are not allowed"),
        ('{"apiVersion": "v1", "kind": "Node", "metadata": 7}', "metadata"),
        ('{"apiVersion": 7, "kind": ["Node"]}', "Object 'Kind' is missing"),
        ('{"apiVersion": "v1", "kind": "List", "items": {"a": 1}}', "items: expected an array"),
        (
            "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
            "spec: {priority: %s, containers: [{name: c, image: x}]}\n" % ("7" * 10_000),
            "spec.priority: Invalid value: an integer of 10000 digits: at most 4300 digits",
        ),
        (
            '{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": '
            '{"priority": %s, "containers": [{"name": "c", "image": "x"}]}}' % ("7" * 10_000),
            "spec.priority: Invalid value: an integer of 10000 digits",
        ),
        (
            "apiVersion: v1\nkind: Node\nmetadata: {name: n}\n"
            "status: {allocatable: {cpu: %s}}\n" % ("7" * 10_000),
            "status.allocatable.cpu: Invalid value: an integer of 10000 digits",
        ),
    ],
)
def test_malformed_manifest_bodies_are_400_with_the_reason(
    client: Client, auth: dict[str, Any], cluster: Cluster, body: str | bytes, reason: str
) -> None:
    before = stored_counts()
    response = post(client, apply_url(cluster), body, auth, "application/yaml")
    assert_refused_whole(response, before, reason)
    assert_server_unharmed(client, cluster, auth)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("method", "path", "field"),
    [
        ("delete", "/pods/default/a%00b", "name"),
        ("delete", "/pods/a%00b/p", "namespace"),
        ("get", "/pods?namespace=a%00b", "namespace"),
        ("get", "/cycles?pod=default/a%00b", "pod"),
        ("get", "/pods/default/a%00b/diagnosis", "name"),
    ],
)
def test_a_nul_in_a_path_or_query_parameter_is_400_naming_it(
    client: Client, auth: dict[str, Any], cluster: Cluster, method: str, path: str, field: str
) -> None:
    """PostgreSQL's text cannot hold NUL: such a parameter never reaches a query."""
    response = getattr(client, method)(f"/api/clusters/{cluster.pk}{path}", **auth)
    assert response.status_code == 400
    assert response.json() == {
        "errors": [f"{field}: Invalid value: must not contain NUL characters"]
    }
    assert_server_unharmed(client, cluster, auth)


def _trace_lines(**cycle: Any) -> str:
    header = {"kind": "schedviz-trace", "schemaVersion": SCHEMA_VERSION, "cluster": "x"}
    trace = {"cycle": 1, "pod": "default/p", "result": "Scheduled", **cycle}
    return json.dumps(header) + "\n" + json.dumps(trace) + "\n"


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (_trace_lines(cycle=2**40), "line 2: cycle: Invalid value: must be between 0 and"),
        (_trace_lines(attempt=-3), "line 2: attempt: Invalid value: must be between 0 and"),
        (
            _trace_lines().replace('"cycle": 1', '"cycle": ' + "1" * 10_000),
            "line 2: cycle: Invalid value: an integer of 10000 digits",
        ),
        (_trace_lines(message="a\x00b"), "line 2: message: Invalid value: strings may not"),
        ("{}\n", "expected a schedviz trace"),
        ('{"items": [%s]}' % ("1" * 10_000), "expected a schedviz trace"),
    ],
)
def test_hostile_trace_imports_are_400_naming_the_field(
    client: Client, auth: dict[str, Any], cluster: Cluster, body: str, reason: str
) -> None:
    before = stored_counts()
    response = post(client, "/api/clusters/import", body, auth, "application/x-ndjson")
    assert_refused_whole(response, before, reason)
    response = post(client, "/api/clusters/import?name=a%00b", body, auth, "application/json")
    assert response.json() == {"errors": ["name: Invalid value: must not contain NUL characters"]}
    assert_server_unharmed(client, cluster, auth)


# --- the websocket ----------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
async def test_a_thousand_garbage_frames_are_answered_and_group_messages_still_arrive() -> None:
    cluster = await sync_to_async(Cluster.objects.create)(name="c")
    communicator = WebsocketCommunicator(
        URLRouter(websocket_urlpatterns), f"/ws/clusters/{cluster.pk}/?format=json"
    )
    communicator.scope["user"] = AnonymousUser()
    connected, _ = await communicator.connect()
    assert connected
    # hello, then the state: status, queue, cycles.
    for _ in range(4):
        await communicator.receive_from()
    garbage: list[dict[str, Any]] = [
        {"text_data": "{not json"},
        {"bytes_data": b"\x00\xff" * 512},
        {"text_data": json.dumps({"type": "cluster.cycles", "cycles": "x" * 1000})},
        {"text_data": "\u0000\u202e" * 100},
        {"bytes_data": b"\x00"},
    ]
    for i in range(1000):
        await communicator.send_to(**garbage[i % len(garbage)])
    for _ in range(1000):
        assert json.loads(await communicator.receive_from(timeout=10))["type"] == "error"
    message = {"type": "cluster.status", "runner": "idle"}
    await get_channel_layer().group_send(group_name(cluster.pk), message)
    assert json.loads(await communicator.receive_from(timeout=10)) == message
    await communicator.disconnect()
