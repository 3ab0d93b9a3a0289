"""One variant of a comparison: the workload scheduled in virtual time by one configuration.

No upstream file: this drives the engine of ``manage.py simulate``
(``schedviz.simulation.simulator``) with full traces on, in chunks of cycles so that progress can
be reported, and boils the traces down to what the comparison needs (``results.py``): where
each pod landed, each score plugin's weighted score on the chosen node, how often it was tried,
and every node's requested and allocatable cpu, memory and pods at the end. No Django import.

A profile variant schedules every pending pod with that one profile (their ``schedulerName`` is
rewritten to it); a configuration variant keeps the pods' ``schedulerName`` and serves them with
its own profiles.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from schedviz.kube.decode import decode_object
from schedviz.kube.errors import go_quote
from schedviz.kube.load import SCHEDULER_CONFIG_API_VERSION, SCHEDULER_CONFIG_KIND, Manifests
from schedviz.kube.objects import (
    POD_FAILED,
    POD_SUCCEEDED,
    RESOURCE_CPU,
    RESOURCE_MEMORY,
    RESOURCE_PODS,
    KubeObject,
    Node,
    Pod,
)
from schedviz.kube.resources import pod_requests, to_int
from schedviz.outoftree.registry import new_registry
from schedviz.scheduler.apis.config.types import KubeSchedulerConfiguration
from schedviz.scheduler.apis.config.v1 import decode_configuration
from schedviz.scheduler.trace import RESULT_WAITING, CycleTrace
from schedviz.simulation.simulator import new_simulation

RESOURCES = (RESOURCE_CPU, RESOURCE_MEMORY, RESOURCE_PODS)
# Cycles run between two looks at the clock for a progress report.
CHUNK_CYCLES = 25
# Wall seconds between two progress reports.
PROGRESS_INTERVAL = 0.5

# The result of a pending pod whose schedulerName no profile of the variant serves: like
# kube-scheduler, the variant never tries it.
RESULT_NO_PROFILE = "NoProfile"

Progress = Callable[[int, int], None]


def default_configuration_document() -> dict[str, Any]:
    """The v1 document that decodes to the v1 defaults (one profile, default-scheduler)."""
    return {"apiVersion": SCHEDULER_CONFIG_API_VERSION, "kind": SCHEDULER_CONFIG_KIND}


def known_plugins() -> set[str]:
    return set(new_registry())


def decode(document: Mapping[str, Any]) -> KubeSchedulerConfiguration:
    """The configuration (raises ConfigError with every problem)."""
    return decode_configuration(document, known_plugins=known_plugins())


def profile_names(document: Mapping[str, Any]) -> list[str]:
    """The schedulerNames of the document's profiles after defaulting, in order."""
    return [profile.scheduler_name for profile in decode(document).profiles]


def profile_configuration(document: Mapping[str, Any], scheduler_name: str) -> dict[str, Any]:
    """The document with only the named profile (its other settings kept); ValueError when no
    profile has that name."""
    index = profile_names(document).index(scheduler_name)
    single = copy.deepcopy(dict(document))
    profiles = single.get("profiles") or []
    if profiles:
        single["profiles"] = [profiles[index]]
    return single


def pending_pod(pod: Pod) -> bool:
    return not pod.node_name and pod.phase not in (POD_SUCCEEDED, POD_FAILED)


def _decoded(manifests: Iterable[Mapping[str, Any]]) -> list[KubeObject]:
    return [decode_object(dict(manifest)) for manifest in manifests]


def _with_scheduler_name(manifest: Mapping[str, Any], scheduler_name: str) -> dict[str, Any]:
    rewritten = copy.deepcopy(dict(manifest))
    rewritten.setdefault("spec", {})["schedulerName"] = scheduler_name
    return rewritten


def workload_objects(
    manifests: Iterable[Mapping[str, Any]], *, scheduler_name: str = ""
) -> list[KubeObject]:
    """The workload's objects; with ``scheduler_name``, every pending pod is given to it."""
    objects: list[KubeObject] = []
    for manifest, obj in zip(manifests, _decoded(manifests), strict=True):
        if scheduler_name and isinstance(obj, Pod) and pending_pod(obj):
            obj = decode_object(_with_scheduler_name(manifest, scheduler_name))
        objects.append(obj)
    return objects


def unserved_pods(objects: Iterable[KubeObject], served: Iterable[str]) -> dict[str, int]:
    """schedulerName -> number of pending pods that name a scheduler no profile serves."""
    names = set(served)
    counts: dict[str, int] = {}
    for obj in objects:
        if isinstance(obj, Pod) and pending_pod(obj) and obj.scheduler_name not in names:
            counts[obj.scheduler_name] = counts.get(obj.scheduler_name, 0) + 1
    return counts


@dataclass
class _PodRecord:
    node: str | None = None
    result: str = ""
    attempts: int = 0
    message: str = ""
    scores: dict[str, int] = field(default_factory=dict)
    total: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "node": self.node,
            "result": self.result,
            "attempts": self.attempts,
            "message": self.message,
            "scores": self.scores,
            "total": self.total,
        }


def _chosen_node_scores(trace: CycleTrace) -> tuple[dict[str, int], int | None]:
    """Each score plugin's weighted score on the selected node, and the node's total."""
    if not trace.selected_node or trace.selected_node not in trace.score_nodes:
        return {}, None
    index = trace.score_nodes.index(trace.selected_node)
    scores = {
        plugin: trace.normalized_scores[column][index] * weight
        for column, (plugin, weight) in enumerate(trace.score_plugins)
    }
    return scores, trace.totals[index]


class _Digest:
    """Reads the cycles as they come, keeping per pod only its last finished attempt."""

    def __init__(self, pods: Iterable[str]) -> None:
        self.pods: dict[str, _PodRecord] = {key: _PodRecord() for key in pods}
        self.cycles = 0
        self._waiting: list[CycleTrace] = []

    @property
    def done(self) -> int:
        return sum(1 for record in self.pods.values() if record.attempts)

    def not_served(self) -> int:
        return sum(1 for record in self.pods.values() if record.result == RESULT_NO_PROFILE)

    def take(self, traces: list[CycleTrace]) -> None:
        """Digests new traces; a cycle held at Permit is kept until it resolves."""
        fresh, self._waiting = self._waiting + traces, []
        for trace in fresh:
            if trace.result == RESULT_WAITING:
                self._waiting.append(trace)
                continue
            self.cycles += 1
            record = self.pods.get(trace.pod)
            if record is None:
                continue  # a pod the workload did not ask to schedule
            record.attempts += 1
            record.result = trace.result
            record.message = trace.message
            record.scores, record.total = _chosen_node_scores(trace)


def _amounts(resources: Mapping[str, Any]) -> dict[str, int]:
    return {name: to_int(name, quantity.amount) for name, quantity in resources.items()}


def node_usage(objects: Iterable[KubeObject]) -> dict[str, dict[str, dict[str, int]]]:
    """Per node: allocatable and requested cpu (millicores), memory (bytes) and pods, counting
    the bound pods that have not terminated, as the scheduler's cache does."""
    nodes = [obj for obj in objects if isinstance(obj, Node)]
    pods = [obj for obj in objects if isinstance(obj, Pod)]
    usage: dict[str, dict[str, dict[str, int]]] = {}
    for node in sorted(nodes, key=lambda n: n.name):
        allocatable = _amounts(node.allocatable)
        usage[node.name] = {
            "allocatable": {name: allocatable.get(name, 0) for name in RESOURCES},
            "requested": dict.fromkeys(RESOURCES, 0),
        }
    for pod in pods:
        entry = usage.get(pod.node_name)
        if entry is None or pod.phase in (POD_SUCCEEDED, POD_FAILED):
            continue
        requested = entry["requested"]
        requested[RESOURCE_PODS] += 1
        for name, amount in pod_requests(pod, use_status_resources=True).items():
            if name in (RESOURCE_CPU, RESOURCE_MEMORY):
                requested[name] += to_int(name, amount)
    return usage


def run_variant(
    manifests: list[dict[str, Any]],
    configuration: Mapping[str, Any],
    *,
    scheduler_name: str = "",
    seed: int = 0,
    progress: Progress | None = None,
    extender_allowed_hosts: frozenset[str] | None = None,
    max_cycles: int = 1_000_000,
) -> dict[str, Any]:
    """Schedules the workload until idle; returns the variant's result (see results.py).

    ``progress(done, total)`` is called now and then with the pending pods tried at least once
    out of those a profile serves, and once at the end with every pod done.
    """
    started = time.monotonic()
    registry = new_registry()
    config = decode_configuration(configuration, known_plugins=set(registry))
    objects = workload_objects(manifests, scheduler_name=scheduler_name)
    pending = [obj.key for obj in objects if isinstance(obj, Pod) and pending_pod(obj)]
    simulation = new_simulation(
        Manifests(objects=objects),
        seed=seed,
        registry=registry,
        config=config,
        capture_queue=True,
        extender_allowed_hosts=extender_allowed_hosts,
    )
    digest = _Digest(pending)
    served = {profile.scheduler_name for profile in config.profiles}
    for obj in objects:
        if isinstance(obj, Pod) and obj.key in digest.pods and obj.scheduler_name not in served:
            digest.pods[obj.key].result = RESULT_NO_PROFILE
            digest.pods[
                obj.key
            ].message = f"no profile serves schedulerName {go_quote(obj.scheduler_name)}"
    total = sum(1 for record in digest.pods.values() if not record.result)
    if progress is not None:
        progress(0, total)
    reported = time.monotonic()
    ran = 0
    while ran < max_cycles:
        chunk = simulation.run(min(CHUNK_CYCLES, max_cycles - ran))
        ran += chunk
        # The traces are digested and dropped: a long run keeps only its summary in memory.
        digest.take(list(simulation.traces))
        simulation.traces.clear()
        if chunk < CHUNK_CYCLES:
            break
        if progress is not None and time.monotonic() - reported >= PROGRESS_INTERVAL:
            progress(digest.done, total)
            reported = time.monotonic()
    final_objects: list[KubeObject] = [*simulation.store.list_objects("Node")]
    final_objects += simulation.store.pods()
    placed = {pod.key: pod.node_name for pod in simulation.store.pods()}
    for key, record in digest.pods.items():
        record.node = placed.get(key) or None
    workload_pods = {obj.key for obj in objects if isinstance(obj, Pod)}
    if progress is not None:
        progress(total, total)
    return {
        "cycles": digest.cycles,
        "virtualSeconds": round(simulation.clock.now(), 6),
        "wallSeconds": round(time.monotonic() - started, 3),
        "pods": {key: record.to_json() for key, record in digest.pods.items()},
        "preempted": sorted(workload_pods - set(placed)),
        "nodes": node_usage(final_objects),
    }
