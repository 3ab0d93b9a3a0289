"""Scheduler extenders over real HTTP, ported from upstream's pkg/scheduler/extender_test.go.

TestSchedulerWithExtenders (its eleven cases), TestIsInterested and TestConvertToMetaVictims, with
upstream's fake extender (pkg/scheduler/testing/framework/fake_extender.go: predicates and
prioritizers over node names) served by ``http.server`` on 127.0.0.1. Then what upstream tests
elsewhere or not at all: node-cache-capable payloads, FailedAndUnresolvableNodes, binding and
preemption through an extender, ignoredByScheduler resources, the trace, and the allow-list.
"""

from __future__ import annotations

import dataclasses
import io
import json
import shutil
import socket
import ssl
import subprocess
import threading
from collections.abc import Callable, Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

from schedviz.kube.objects import Container, Node, Pod
from schedviz.scheduler.apis.config.types import Extender, ExtenderManagedResource
from schedviz.scheduler.apis.config.v1 import decode_configuration
from schedviz.scheduler.clock import VirtualClock
from schedviz.scheduler.extender import (
    NO_ANSWER,
    ExtenderConfigError,
    HTTPExtender,
    convert_to_meta_victims,
)
from schedviz.scheduler.framework.cycle_state import CycleState
from schedviz.scheduler.framework.interface import Code, Status
from schedviz.scheduler.framework.plugins.registry import new_in_tree_registry
from schedviz.scheduler.framework.runtime.registry import PluginFactory, Registry
from schedviz.scheduler.framework.types import NodeInfo
from schedviz.scheduler.preemption import Victims
from schedviz.scheduler.schedule_one import ScheduleResult
from schedviz.scheduler.scheduler import Scheduler
from schedviz.scheduler.store import ClusterStore
from schedviz.scheduler.testing.wrappers import make_node, make_pod, resource_list
from schedviz.scheduler.trace import CycleTrace

# ---------------------------------------------------------------------------------------------
# Upstream's fake extender, behind HTTP

Predicate = Callable[[str], Status | None]
Prioritizer = Callable[[str], int]


class ExtenderFailure(Exception):
    """What upstream's ErrorPredicateExtender / ErrorPrioritizerExtender return."""


def true_predicate(node: str) -> Status | None:
    return None


def false_predicate(node: str) -> Status | None:
    return Status(Code.Unschedulable, (f'node "{node}" is not allowed',))


def error_predicate(node: str) -> Status | None:
    raise ExtenderFailure("some error")


def only(name: str, code: Code = Code.Unschedulable) -> Predicate:
    def predicate(node: str) -> Status | None:
        return None if node == name else Status(code, (f'node "{node}" is not allowed',))

    return predicate


def error_prioritizer(node: str) -> int:
    raise ExtenderFailure("some error")


def prefer(name: str) -> Prioritizer:
    """Node1PrioritizerExtender and friends: 10 for the node, 1 for the others."""
    return lambda node: 10 if node == name else 1


@dataclasses.dataclass
class FakeExtender:
    """Upstream's FakeExtender: every predicate must pass; scores are weighted sums."""

    predicates: Sequence[Predicate] = ()
    prioritizers: Sequence[tuple[Prioritizer, int]] = ()
    node_cache_capable: bool = False
    bind_error: str = ""
    # Preempt: the victims the extender keeps, from the ones it was sent (default: all of them).
    preempt: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    status: int = 200
    requests: list[tuple[str, dict[str, Any]]] = dataclasses.field(default_factory=list)

    def answer(self, verb: str, args: dict[str, Any]) -> Any:
        self.requests.append((verb, args))
        if verb == "filter":
            return self.filter(args)
        if verb == "prioritize":
            return self.prioritize(args)
        if verb == "bind":
            return {"Error": self.bind_error}
        if verb == "preempt":
            meta = args["NodeNameToMetaVictims"] or {
                node: {
                    "Pods": [{"UID": pod["metadata"]["uid"]} for pod in victims["Pods"]],
                    "NumPDBViolations": victims["NumPDBViolations"],
                }
                for node, victims in args["NodeNameToVictims"].items()
            }
            return {"NodeNameToMetaVictims": self.preempt(meta) if self.preempt else meta}
        raise AssertionError(verb)

    def filter(self, args: dict[str, Any]) -> dict[str, Any]:
        nodes = node_names_of(args)
        kept: list[str] = []
        failed: dict[str, str] = {}
        unresolvable: dict[str, str] = {}
        try:
            for node in nodes:
                status = next((s for p in self.predicates if (s := p(node)) is not None), None)
                if status is None:
                    kept.append(node)
                elif status.code == Code.UnschedulableAndUnresolvable:
                    unresolvable[node] = status.message()
                else:
                    failed[node] = status.message()
        except ExtenderFailure as error:
            return {"Error": str(error)}
        answer: dict[str, Any] = {"FailedNodes": failed, "FailedAndUnresolvableNodes": unresolvable}
        if self.node_cache_capable:
            answer["NodeNames"] = kept
        else:
            items = [n for n in args["Nodes"]["items"] if n["metadata"]["name"] in kept]
            answer["Nodes"] = {"items": items}
        return answer

    def prioritize(self, args: dict[str, Any]) -> Any:
        scores = {node: 0 for node in node_names_of(args)}
        for prioritizer, weight in self.prioritizers:
            for node in scores:
                scores[node] += prioritizer(node) * weight
        return [{"Host": node, "Score": score} for node, score in scores.items()]


def node_names_of(args: dict[str, Any]) -> list[str]:
    if args["NodeNames"] is not None:
        return list(args["NodeNames"])
    return [node["metadata"]["name"] for node in args["Nodes"]["items"]]


class _Handler(BaseHTTPRequestHandler):
    server: _ExtenderServer

    def do_POST(self) -> None:
        length = int(self.headers["Content-Length"])
        args = json.loads(self.rfile.read(length))
        fake = self.server.fake
        verb = self.path.rsplit("/", 1)[-1]
        status = fake.status
        try:
            answer = fake.answer(verb, args)
        except ExtenderFailure:
            answer, status = None, 500
        body = json.dumps(answer).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        return


class _ExtenderServer(ThreadingHTTPServer):
    def __init__(self, fake: FakeExtender, tls: ssl.SSLContext | None = None) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.fake = fake
        self.scheme = "http"
        if tls is not None:
            self.socket = tls.wrap_socket(self.socket, server_side=True)
            self.scheme = "https"

    @property
    def url(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self.server_address[1]}/scheduler"


def _start(server: _ExtenderServer, servers: list[_ExtenderServer]) -> str:
    threading.Thread(target=server.serve_forever, daemon=True).start()
    servers.append(server)
    return server.url


@pytest.fixture
def serve(settings: Any) -> Iterator[Callable[[FakeExtender], str]]:
    """Starts a fake extender on an ephemeral port, allows its host:port (for the services and
    commands that read SCHEDVIZ_EXTENDER_ALLOWED_HOSTS), and returns its URL prefix."""
    servers: list[_ExtenderServer] = []

    def start(fake: FakeExtender) -> str:
        url = _start(_ExtenderServer(fake), servers)
        settings.SCHEDVIZ_EXTENDER_ALLOWED_HOSTS = settings.SCHEDVIZ_EXTENDER_ALLOWED_HOSTS | {
            f"127.0.0.1:{servers[-1].server_address[1]}"
        }
        return url

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def extender_config(url: str, fake: FakeExtender, **fields: Any) -> dict[str, Any]:
    """The v1 YAML of an extender for ``fake``: the verbs it implements."""
    config: dict[str, Any] = {"urlPrefix": url, "filterVerb": "filter"}
    if fake.prioritizers:
        config.update(prioritizeVerb="prioritize", weight=1)
    if fake.node_cache_capable:
        config["nodeCacheCapable"] = True
    config.update(fields)
    return config


# ---------------------------------------------------------------------------------------------
# Upstream's fake plugins, and a scheduler over an in-memory cluster


class TrueFilter:
    def name(self) -> str:
        return "TrueFilter"

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        return None


class NodeScorer:
    """EqualPrioritizerPlugin (1 everywhere) and Node2PrioritizerPlugin (100 on node2, 10)."""

    def __init__(self, plugin_name: str, score: Callable[[str], int]) -> None:
        self._name, self._score = plugin_name, score

    def name(self) -> str:
        return self._name

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        return self._score(node_info.name), None

    def score_extensions(self) -> None:
        return None


FAKE_PLUGINS: dict[str, Callable[[], object]] = {
    "TrueFilter": TrueFilter,
    "EqualPrioritizerPlugin": lambda: NodeScorer("EqualPrioritizerPlugin", lambda node: 1),
    "Node2Prioritizer": lambda: NodeScorer(
        "Node2Prioritizer", lambda node: 100 if node == "node2" else 10
    ),
}


def _factory(make: Callable[[], object]) -> PluginFactory:
    return lambda args, handle: make()


def registry() -> Registry:
    return new_in_tree_registry().merge(
        Registry({name: _factory(make) for name, make in FAKE_PLUGINS.items()})
    )


def new_scheduler(
    extenders: list[dict[str, Any]],
    *,
    objects: Sequence[Node | Pod] = (),
    filters: Sequence[str] = (),
    scores: Sequence[tuple[str, int]] = (),
    default_plugins: bool = False,
    allowed_hosts: frozenset[str] | None = None,
) -> Scheduler:
    """A one-profile scheduler: the given plugins (with PrioritySort and DefaultBinder), or the
    default profile, and the extenders as configured in v1 YAML."""
    profile: dict[str, Any] = {"schedulerName": "default-scheduler"}
    if not default_plugins:
        profile["plugins"] = {
            "multiPoint": {"disabled": [{"name": "*"}]},
            "queueSort": {"enabled": [{"name": "PrioritySort"}]},
            "bind": {"enabled": [{"name": "DefaultBinder"}]},
            "filter": {"enabled": [{"name": name} for name in filters]},
            "score": {"enabled": [{"name": name, "weight": weight} for name, weight in scores]},
        }
    plugins = registry()
    document = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [profile],
        "extenders": extenders,
    }
    config = decode_configuration(document, known_plugins=set(plugins))
    clock = VirtualClock()
    store = ClusterStore(objects, now=clock.now)
    return Scheduler(
        config, plugins, store, clock, extender_allowed_hosts=allowed_hosts, capture_queue=False
    )


def nodes(*names: str) -> list[Node]:
    return [make_node().name(name).obj() for name in names]


def schedule_pod(sched: Scheduler, pod: Pod) -> tuple[ScheduleResult, CycleTrace]:
    framework = sched.profiles["default-scheduler"]
    trace = CycleTrace(cycle=1, pod=pod.key, profile="", attempt=1, time=0.0, wall_time=0.0)
    sched._trace_into(framework, trace)
    try:
        return sched.schedule_pod(framework, CycleState(), pod, trace), trace
    finally:
        sched._trace_into(framework, None)


def run_one_cycle(sched: Scheduler) -> dict[str, Any]:
    trace = sched.schedule_one()
    assert trace is not None
    return trace.to_json()


POD = make_pod().name("pod").uid("pod-uid").obj()

# ---------------------------------------------------------------------------------------------
# TestSchedulerWithExtenders


@dataclasses.dataclass
class Case:
    name: str
    extenders: list[tuple[FakeExtender, dict[str, Any]]]
    nodes: tuple[str, ...] = ("node1", "node2")
    filters: tuple[str, ...] = ("TrueFilter",)
    scores: tuple[tuple[str, int], ...] = ()
    expected: ScheduleResult | None = None  # None: an error is expected


UPSTREAM_CASES = [
    Case(
        "test 1",
        [(FakeExtender([true_predicate]), {}), (FakeExtender([error_predicate]), {})],
    ),
    Case(
        "test 2",
        [(FakeExtender([true_predicate]), {}), (FakeExtender([false_predicate]), {})],
    ),
    Case(
        "test 3",
        [(FakeExtender([true_predicate]), {}), (FakeExtender([only("node1")]), {})],
        scores=(("EqualPrioritizerPlugin", 1),),
        expected=ScheduleResult("node1", 2, 1),
    ),
    Case(
        "test 4",
        [(FakeExtender([only("node2")]), {}), (FakeExtender([only("node1")]), {})],
    ),
    Case(
        "test 5",
        [(FakeExtender([true_predicate], [(error_prioritizer, 10)]), {"weight": 1})],
        nodes=("node1",),
        expected=ScheduleResult("node1", 1, 1),
    ),
    Case(
        "test 6",
        [
            (FakeExtender([true_predicate], [(prefer("node1"), 10)]), {"weight": 1}),
            (FakeExtender([true_predicate], [(prefer("node2"), 10)]), {"weight": 5}),
        ],
        expected=ScheduleResult("node2", 2, 2),
    ),
    Case(
        "test 7",
        [(FakeExtender([true_predicate], [(prefer("node1"), 10)]), {"weight": 1})],
        scores=(("Node2Prioritizer", 20),),
        expected=ScheduleResult("node2", 2, 2),
    ),
    Case(
        "test 8 - an uninterested extender is never called",
        [
            (
                FakeExtender([error_predicate], [(error_prioritizer, 10)]),
                {"managedResources": [{"name": "example.com/gpu"}]},
            )
        ],
        scores=(("Node2Prioritizer", 1),),
        expected=ScheduleResult("node2", 2, 2),
    ),
    Case(
        "test 9 - an ignorable extender's error is skipped",
        [
            (FakeExtender([error_predicate]), {"ignorable": True}),
            (FakeExtender([only("node1")]), {}),
        ],
        scores=(("EqualPrioritizerPlugin", 1),),
        expected=ScheduleResult("node1", 2, 1),
    ),
    Case(
        "test 10 - no scoring, extender filters configured, multiple feasible nodes are evaluated",
        [(FakeExtender([true_predicate]), {}), (FakeExtender([only("node1")]), {})],
        expected=ScheduleResult("node1", 2, 1),
    ),
    Case(
        "test 11 - no scoring, no extender filters, a single feasible node is evaluated",
        [(FakeExtender(), {"filterVerb": "", "bindVerb": "bind"})],
        filters=(),
        expected=ScheduleResult("node1", 1, 1),
    ),
]


@pytest.mark.parametrize("case", UPSTREAM_CASES, ids=lambda case: case.name)
def test_scheduler_with_extenders(case: Case, serve: Callable[[FakeExtender], str]) -> None:
    configs = [extender_config(serve(fake), fake, **fields) for fake, fields in case.extenders]
    sched = new_scheduler(
        configs, objects=nodes(*case.nodes), filters=case.filters, scores=case.scores
    )
    if case.expected is None:
        with pytest.raises(Exception):  # noqa: B017 - upstream only asks for an error
            schedule_pod(sched, POD)
        return
    result, _ = schedule_pod(sched, POD)
    assert result == case.expected
    for fake, fields in case.extenders:
        if "managedResources" in fields:
            assert fake.requests == []


# ---------------------------------------------------------------------------------------------
# TestIsInterested, TestConvertToMetaVictims


MANAGES_MEMORY = Extender(
    url_prefix="http://127.0.0.1/", managed_resources=[ExtenderManagedResource("memory")]
)


@pytest.mark.parametrize(
    ("label", "extender", "pod", "want"),
    [
        ("Empty managed resources", Extender(url_prefix="http://127.0.0.1/"), make_pod(), True),
        ("Managed memory, empty resources", MANAGES_MEMORY, make_pod().container("app"), False),
        (
            "Managed memory, container memory with Requests",
            MANAGES_MEMORY,
            make_pod().req({"memory": "0"}),
            True,
        ),
        (
            "Managed memory, init container memory",
            MANAGES_MEMORY,
            make_pod().container("app").init_req({"memory": "0"}),
            True,
        ),
    ],
)
def test_is_interested(label: str, extender: Extender, pod: Any, want: bool) -> None:
    assert HTTPExtender(extender).is_interested(pod.obj()) is want


def test_it_is_interested_in_a_managed_resource_among_the_limits() -> None:
    container = Container(name="app", limits=resource_list({"memory": "0"}))
    pod = dataclasses.replace(make_pod().obj(), containers=(container,))
    assert HTTPExtender(MANAGES_MEMORY).is_interested(pod)


def test_convert_to_meta_victims_keeps_pdb_violations() -> None:
    def victims(*uids: str, violations: int) -> Victims:
        return Victims([make_pod().name(u).uid(u).obj() for u in uids], violations)

    meta = convert_to_meta_victims(
        {
            "node1": victims("uid1", "uid3", violations=1),
            "node2": victims("uid2", "uid4", violations=2),
        }
    )
    assert meta == {
        "node1": {"Pods": [{"UID": "uid1"}, {"UID": "uid3"}], "NumPDBViolations": 1},
        "node2": {"Pods": [{"UID": "uid2"}, {"UID": "uid4"}], "NumPDBViolations": 2},
    }


# ---------------------------------------------------------------------------------------------
# Payloads, statuses, the trace


def test_a_node_cache_capable_extender_gets_node_names_and_others_get_nodes(
    serve: Callable[[FakeExtender], str],
) -> None:
    names_only = FakeExtender([true_predicate], [(prefer("node1"), 1)], node_cache_capable=True)
    full = FakeExtender([true_predicate], [(prefer("node1"), 1)])
    sched = new_scheduler(
        [
            extender_config(serve(names_only), names_only),
            extender_config(serve(full), full),
        ],
        objects=nodes("node1", "node2"),
        filters=("TrueFilter",),
    )
    schedule_pod(sched, POD)
    for verb, args in names_only.requests:
        assert args["NodeNames"] == ["node1", "node2"] and args["Nodes"] is None, verb
        assert args["Pod"]["metadata"] == {"name": "pod", "namespace": "default", "uid": "pod-uid"}
    for verb, args in full.requests:
        assert args["NodeNames"] is None, verb
        assert [n["metadata"]["name"] for n in args["Nodes"]["items"]] == ["node1", "node2"]
        assert args["Nodes"]["items"][0]["kind"] == "Node"
    assert [verb for verb, _ in full.requests] == ["filter", "prioritize"]


def test_extender_rejections_are_in_the_fit_error_and_the_trace(
    serve: Callable[[FakeExtender], str],
) -> None:
    def full_or_gone(node: str) -> Status:
        if node == "node2":
            return Status(Code.UnschedulableAndUnresolvable, ("gone",))
        return Status(Code.Unschedulable, ("full",))

    fake = FakeExtender([full_or_gone], node_cache_capable=True)
    url = serve(fake)
    sched = new_scheduler(
        [extender_config(url, fake)],
        objects=[*nodes("node1", "node2"), make_pod().name("p").obj()],
        filters=("TrueFilter",),
    )
    cycle = run_one_cycle(sched)
    assert cycle["result"] == "Unschedulable"
    assert cycle["message"] == "0/2 nodes are available: 1 full, 1 gone."
    assert cycle["filter"]["node1"] == [
        {"plugin": "TrueFilter", "code": "Success"},
        {"plugin": url, "code": "Unschedulable", "reasons": ["full"], "stage": "Extender"},
    ]
    assert cycle["filter"]["node2"][-1]["code"] == "UnschedulableAndUnresolvable"
    [call] = cycle["extenders"]
    assert call["extender"] == url and call["verb"] == "filter" and call["error"] is None
    assert call["request"] == {
        "pod": "default/p",
        "nodeNames": ["node1", "node2"],
        "sent": "NodeNames",
    }
    assert call["response"] == {
        "nodeNames": [],
        "failedNodes": {"node1": "full"},
        "failedAndUnresolvableNodes": {"node2": "gone"},
        "error": None,
    }
    assert call["durationMs"] >= 0
    # Extenders register no events: the pod waits for any of them, under upstream's name.
    queued = sched.queue.unschedulable_pods.get("default/p")
    assert queued is not None and queued.unschedulable_plugins == {"Extender"}


def test_failed_and_unresolvable_takes_precedence_over_failed(
    serve: Callable[[FakeExtender], str],
) -> None:
    fake = FakeExtender()

    def both(args: dict[str, Any]) -> dict[str, Any]:
        return {
            "NodeNames": [],
            "FailedNodes": {"node1": "try later"},
            "failedAndUnresolvableNodes": {"node1": "never"},  # keys match regardless of case
        }

    fake.filter = both  # type: ignore[method-assign]
    sched = new_scheduler(
        [extender_config(serve(fake), fake, nodeCacheCapable=True)],
        objects=[*nodes("node1"), make_pod().name("p").obj()],
    )
    cycle = run_one_cycle(sched)
    assert cycle["message"] == "0/1 nodes are available: 1 never."
    assert cycle["filter"]["node1"][-1]["code"] == "UnschedulableAndUnresolvable"


def test_a_failing_extender_makes_the_cycle_an_error_unless_ignorable(
    serve: Callable[[FakeExtender], str],
) -> None:
    broken = FakeExtender([true_predicate], status=500)
    url = serve(broken)
    sched = new_scheduler(
        [extender_config(url, broken)],
        objects=[*nodes("node1"), make_pod().name("p").obj()],
        filters=("TrueFilter",),
    )
    cycle = run_one_cycle(sched)
    assert cycle["result"] == "Error"
    expected = f"failed filter with extender at URL {url}/filter, code 500"
    assert cycle["message"] == expected
    assert cycle["extenders"][0]["error"] == expected
    assert "ignored" not in cycle["extenders"][0]

    # Nothing listens on a closed server's port: an ignorable extender there is skipped.
    closed = _ExtenderServer(FakeExtender())
    closed.server_close()
    sched = new_scheduler(
        [extender_config(closed.url, FakeExtender(), ignorable=True)],
        objects=[*nodes("node1"), make_pod().name("p").obj()],
        filters=("TrueFilter",),
    )
    cycle = run_one_cycle(sched)
    assert cycle["result"] == "Scheduled"
    [call] = cycle["extenders"]
    assert call["ignored"] is True and call["error"] == f'Post "{closed.url}/filter": {NO_ANSWER}'


def test_prioritizer_scores_are_weighted_and_traced(serve: Callable[[FakeExtender], str]) -> None:
    fake = FakeExtender([true_predicate], [(prefer("node1"), 1)])
    url = serve(fake)
    sched = new_scheduler(
        [extender_config(url, fake, weight=3)],
        objects=[*nodes("node1", "node2"), make_pod().name("p").obj()],
        filters=("TrueFilter",),
        scores=(("Node2Prioritizer", 1),),
    )
    cycle = run_one_cycle(sched)
    # node1: 10 (plugin) + 10 * 3 * 10; node2: 100 + 1 * 3 * 10.
    assert cycle["totals"] == {"node1": 310, "node2": 130}
    assert cycle["scores"]["node1"][url] == {
        "raw": 10,
        "normalized": 100,
        "weight": 3,
        "weighted": 300,
    }
    assert cycle["node"] == "node1"
    assert [c["verb"] for c in cycle["extenders"]] == ["filter", "prioritize"]
    assert cycle["extenders"][1]["response"] == {"scores": {"node1": 10, "node2": 1}, "weight": 3}


def test_a_binder_extender_binds_instead_of_the_bind_plugins(
    serve: Callable[[FakeExtender], str],
) -> None:
    fake = FakeExtender()
    url = serve(fake)
    sched = new_scheduler(
        [{"urlPrefix": url, "bindVerb": "bind"}],
        objects=[*nodes("node1"), make_pod().name("p").uid("p-uid").obj()],
    )
    cycle = run_one_cycle(sched)
    assert cycle["result"] == "Scheduled"
    assert fake.requests == [
        (
            "bind",
            {"PodName": "p", "PodNamespace": "default", "PodUID": "p-uid", "Node": "node1"},
        )
    ]
    assert [p.node_name for p in sched.store.pods()] == ["node1"]
    assert not [point for point in cycle["points"] if point["point"] == "Bind"]
    assert cycle["extenders"][0]["verb"] == "bind"

    refusing = FakeExtender(bind_error="no room at the inn")
    sched = new_scheduler(
        [{"urlPrefix": serve(refusing), "bindVerb": "bind"}],
        objects=[*nodes("node1"), make_pod().name("p").obj()],
    )
    cycle = run_one_cycle(sched)
    assert cycle["result"] == "Error"
    assert cycle["message"] == "no room at the inn"
    assert [p.node_name for p in sched.store.pods()] == [""]


def _preemption_cluster() -> list[Node | Pod]:
    node = make_node().name("node1").capacity({"cpu": "1", "pods": 10}).obj()
    low = make_pod().name("low").uid("low-uid").priority(0).req({"cpu": "1"}).node("node1").obj()
    high = make_pod().name("high").uid("high-uid").priority(100).req({"cpu": "1"}).obj()
    return [node, low, high]


@pytest.mark.parametrize("node_cache_capable", [True, False])
def test_a_preempting_extender_confirms_the_victims(
    node_cache_capable: bool, serve: Callable[[FakeExtender], str]
) -> None:
    fake = FakeExtender(node_cache_capable=node_cache_capable)
    sched = new_scheduler(
        [
            {
                "urlPrefix": serve(fake),
                "preemptVerb": "preempt",
                "nodeCacheCapable": node_cache_capable,
            }
        ],
        objects=_preemption_cluster(),
        default_plugins=True,
    )
    cycle = run_one_cycle(sched)
    assert cycle["nominatedNode"] == "node1"
    assert cycle["preemption"]["victims"] == ["default/low"]
    [(verb, args)] = fake.requests
    assert verb == "preempt" and args["Pod"]["metadata"]["name"] == "high"
    if node_cache_capable:
        assert args["NodeNameToVictims"] is None
        assert args["NodeNameToMetaVictims"] == {
            "node1": {"Pods": [{"UID": "low-uid"}], "NumPDBViolations": 0}
        }
    else:
        assert args["NodeNameToMetaVictims"] is None
        assert args["NodeNameToVictims"]["node1"]["Pods"][0]["metadata"]["uid"] == "low-uid"
    call = cycle["extenders"][0]
    assert call["request"]["nodeNameToVictims"] == {
        "node1": {"pods": ["default/low"], "numPDBViolations": 0}
    }
    sent = "NodeNameToMetaVictims" if node_cache_capable else "NodeNameToVictims"
    assert call["request"]["sent"] == sent
    assert call["response"] == {
        "nodeNameToMetaVictims": {"node1": {"uids": ["low-uid"], "numPDBViolations": 0}}
    }


def test_a_preempting_extender_that_keeps_no_candidate_stops_preemption(
    serve: Callable[[FakeExtender], str],
) -> None:
    fake = FakeExtender(preempt=lambda meta: {})
    sched = new_scheduler(
        [{"urlPrefix": serve(fake), "preemptVerb": "preempt"}],
        objects=_preemption_cluster(),
        default_plugins=True,
    )
    cycle = run_one_cycle(sched)
    assert cycle["nominatedNode"] is None
    assert cycle["message"].endswith("preemption: no candidate node for preemption")
    assert {p.key: p.node_name for p in sched.store.pods()}["default/low"] == "node1"


def test_a_preempting_extender_naming_an_unknown_pod_is_an_error(
    serve: Callable[[FakeExtender], str],
) -> None:
    fake = FakeExtender(
        preempt=lambda meta: {"node1": {"Pods": [{"UID": "nope"}], "NumPDBViolations": 0}}
    )
    url = serve(fake)
    sched = new_scheduler(
        [{"urlPrefix": url, "preemptVerb": "preempt"}],
        objects=_preemption_cluster(),
        default_plugins=True,
    )
    cycle = run_one_cycle(sched)
    message = (
        f"extender: {url} claims to preempt pod (UID: &{{nope}}) on node: node1, "
        "but the pod is not found on that node"
    )
    assert cycle["extenders"][0]["error"] == message
    assert cycle["nominatedNode"] is None


def test_resources_ignored_by_the_scheduler_are_left_to_the_extender() -> None:
    pod = make_pod().name("p").req({"example.com/gpu": 1}).obj()

    def attempt(ignored: bool) -> dict[str, Any]:
        sched = new_scheduler(
            [
                {
                    "urlPrefix": "http://127.0.0.1:1/unused",
                    "managedResources": [
                        {"name": "example.com/gpu", "ignoredByScheduler": ignored}
                    ],
                }
            ],
            objects=[make_node().name("node1").capacity({"cpu": "4", "pods": 10}).obj(), pod],
            default_plugins=True,
        )
        return run_one_cycle(sched)

    assert attempt(ignored=True)["result"] == "Scheduled"
    assert "Insufficient example.com/gpu" in attempt(ignored=False)["message"]


# ---------------------------------------------------------------------------------------------
# HTTPS (makeTransport)


@pytest.fixture
def serve_tls(tmp_path: Path) -> Iterator[tuple[Callable[[FakeExtender], str], Path]]:
    """A fake extender behind TLS with a self-signed certificate for "extender.test"."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl is needed to make a certificate")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    command = "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=extender.test"
    command += " -addext subjectAltName=DNS:extender.test"
    subprocess.run(
        [*command.split(), "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True
    )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    servers: list[_ExtenderServer] = []
    yield (lambda fake: _start(_ExtenderServer(fake, context), servers)), cert
    for server in servers:
        server.shutdown()
        server.server_close()


def _tls_cycle(url: str, **fields: Any) -> dict[str, Any]:
    sched = new_scheduler(
        [{"urlPrefix": url, "filterVerb": "filter", "nodeCacheCapable": True, **fields}],
        objects=[*nodes("node1"), make_pod().name("p").obj()],
    )
    return run_one_cycle(sched)


def test_https_extenders_trust_as_upstream_configures_them(
    serve_tls: tuple[Callable[[FakeExtender], str], Path],
) -> None:
    start, cert = serve_tls
    url = start(FakeExtender([true_predicate], node_cache_capable=True))
    # enableHTTPS without a CA skips verification (makeTransport sets Insecure).
    assert _tls_cycle(url, enableHTTPS=True)["result"] == "Scheduled"
    # A CA and the name on the certificate verify it.
    trusted = {"caFile": str(cert), "serverName": "extender.test"}
    assert _tls_cycle(url, tlsConfig=trusted)["result"] == "Scheduled"
    # The system's roots do not know a self-signed certificate.
    cycle = _tls_cycle(url)
    assert cycle["result"] == "Error" and "CERTIFICATE_VERIFY_FAILED" in cycle["message"]
    # Nor does the CA vouch for another name.
    cycle = _tls_cycle(url, tlsConfig={"caFile": str(cert)})
    assert cycle["result"] == "Error" and "CERTIFICATE_VERIFY_FAILED" in cycle["message"]


# ---------------------------------------------------------------------------------------------
# The allow-list


LOOPBACK_8888 = frozenset({"127.0.0.1:8888", "localhost:8888", "[::1]:8888"})


@pytest.mark.parametrize(
    ("url", "target"),
    [
        ("http://169.254.169.254/latest", "169.254.169.254:80"),
        # The database, Redis and the site itself on the same loopback host.
        ("http://127.0.0.1:5432/x", "127.0.0.1:5432"),
        ("http://127.0.0.1:6379/x", "127.0.0.1:6379"),
        ("https://localhost/admin", "localhost:443"),
        ("http://[::1]:8000/admin/login", "[::1]:8000"),
    ],
)
def test_an_extender_outside_the_allowed_host_ports_is_refused(url: str, target: str) -> None:
    with pytest.raises(ExtenderConfigError) as refused:
        new_scheduler([{"urlPrefix": url, "filterVerb": "filter"}], allowed_hosts=LOOPBACK_8888)
    assert str(refused.value) == (
        f'extenders[0] "{url}": "{target}" is not an allowed extender host:port '
        "(SCHEDVIZ_EXTENDER_ALLOWED_HOSTS: 127.0.0.1:8888, [::1]:8888, localhost:8888)"
    )


@pytest.mark.parametrize(
    "url", ["http://[::1]:8888/x", "http://LOCALHOST:8888/", "http://127.0.0.1:8888"]
)
def test_an_extender_on_an_allowed_host_port_is_built(url: str) -> None:
    new_scheduler([{"urlPrefix": url, "filterVerb": "filter"}], allowed_hosts=LOOPBACK_8888)


def test_no_extender_is_allowed_by_an_empty_allow_list() -> None:
    with pytest.raises(ExtenderConfigError, match=r"\(SCHEDVIZ_EXTENDER_ALLOWED_HOSTS: none\)"):
        new_scheduler(
            [{"urlPrefix": "http://127.0.0.1:8888/", "filterVerb": "filter"}],
            allowed_hosts=frozenset(),
        )


def _silent_port() -> tuple[socket.socket, int]:
    """A listening socket that never accepts: connections to it wait until they time out."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    return listener, listener.getsockname()[1]


def test_an_extender_error_says_the_same_for_a_closed_a_silent_and_a_non_http_port() -> None:
    closed = _ExtenderServer(FakeExtender())
    closed.server_close()
    silent, silent_port = _silent_port()
    # A port that answers something other than HTTP, as Redis or PostgreSQL would.
    garbage = socket.socket()
    garbage.bind(("127.0.0.1", 0))
    garbage.listen(8)

    def babble() -> None:
        while True:
            try:
                connection, _ = garbage.accept()
            except OSError:
                return
            connection.sendall(b"-ERR unknown command\r\n")
            connection.close()

    threading.Thread(target=babble, daemon=True).start()
    urls = [
        closed.url,
        f"http://127.0.0.1:{silent_port}/scheduler",
        f"http://127.0.0.1:{garbage.getsockname()[1]}/scheduler",
    ]
    errors = []
    try:
        for url in urls:
            sched = new_scheduler(
                [{"urlPrefix": url, "filterVerb": "filter", "httpTimeout": "200ms"}],
                objects=[*nodes("node1"), make_pod().name("p").obj()],
                filters=("TrueFilter",),
            )
            [call] = run_one_cycle(sched)["extenders"]
            errors.append(call["error"].removeprefix(f'Post "{url}/filter": '))
    finally:
        silent.close()
        garbage.close()
    assert errors == [NO_ANSWER] * 3


@pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://127.0.0.1/", "127.0.0.1:80/x"])
def test_only_http_urls_are_accepted_even_when_every_host_is(url: str) -> None:
    with pytest.raises(ExtenderConfigError, match="must be an http or https URL"):
        new_scheduler([{"urlPrefix": url, "filterVerb": "filter"}])


# ---------------------------------------------------------------------------------------------
# manage.py simulate

SIMULATED_CLUSTER = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
extenders:
- urlPrefix: {url}
  filterVerb: filter
  prioritizeVerb: prioritize
  weight: 2
  nodeCacheCapable: true
---
apiVersion: v1
kind: Node
metadata: {{name: node-a}}
status: {{allocatable: {{cpu: "4", memory: 8Gi, pods: "10"}}}}
---
apiVersion: v1
kind: Node
metadata: {{name: node-b}}
status: {{allocatable: {{cpu: "4", memory: 8Gi, pods: "10"}}}}
---
apiVersion: v1
kind: Pod
metadata: {{name: web, namespace: default}}
spec:
  containers: [{{name: c, image: pause, resources: {{requests: {{cpu: "1"}}}}}}]
"""


def _simulate(tmp_path: Path, url: str) -> str:
    path = tmp_path / "cluster.yaml"
    path.write_text(SIMULATED_CLUSTER.format(url=url))
    out = io.StringIO()
    call_command("simulate", str(path), stdout=out)
    return out.getvalue()


def test_simulate_calls_the_configured_extender(
    tmp_path: Path, serve: Callable[[FakeExtender], str]
) -> None:
    fake = FakeExtender([only("node-b")], [(prefer("node-b"), 1)], node_cache_capable=True)
    url = serve(fake)
    [cycle] = json.loads(_simulate(tmp_path, url))["cycles"]
    assert cycle["result"] == "Scheduled" and cycle["node"] == "node-b"
    assert [call["verb"] for call in cycle["extenders"]] == ["filter"]
    assert cycle["filter"]["node-a"][-1] == {
        "plugin": url,
        "code": "Unschedulable",
        "reasons": ['node "node-a" is not allowed'],
        "stage": "Extender",
    }
    assert fake.requests[0][1]["Pod"]["spec"]["containers"][0]["name"] == "c"


def test_simulate_refuses_an_extender_outside_the_allowed_hosts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], settings: Any
) -> None:
    settings.SCHEDVIZ_EXTENDER_ALLOWED_HOSTS = frozenset({"localhost:8888"})
    with pytest.raises(SystemExit) as exited:
        _simulate(tmp_path, "http://127.0.0.1:8888/scheduler")
    assert exited.value.code == 2
    assert capsys.readouterr().err == (
        'extenders[0] "http://127.0.0.1:8888/scheduler": "127.0.0.1:8888" is not an allowed '
        "extender host:port (SCHEDVIZ_EXTENDER_ALLOWED_HOSTS: localhost:8888)\n"
    )
