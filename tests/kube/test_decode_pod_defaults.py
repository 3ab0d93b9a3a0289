"""decode_object on pods: defaulting and what is kept, as the API server does on create."""

from decode_helpers import (
    affinity_term,
    errors_of,
    pod,
    with_path,
)

from schedviz.kube.decode import decode_object
from schedviz.kube.objects import (
    LabelSelectorRequirement,
    Pod,
)
from schedviz.kube.quantity import Quantity

# --- Pods: defaulting. ------------------------------------------------------------------------


def test_pod_defaults() -> None:
    p = decode_object(
        pod(
            containers=[{"name": "c", "image": "x", "ports": [{"containerPort": 80}]}],
            tolerations=[{"key": "k", "value": "v"}],
        )
    )
    assert isinstance(p, Pod)
    assert p.namespace == "default"
    assert p.scheduler_name == "default-scheduler"
    assert p.containers[0].ports[0].protocol == "TCP"
    assert p.tolerations[0].operator == "Equal"
    assert p.phase == "Pending"
    assert p.priority is None
    again = decode_object(pod())
    assert isinstance(again, Pod) and p.uid and p.uid == again.uid  # deterministic


def test_requests_default_to_limits() -> None:
    p = decode_object(
        with_path(
            pod(),
            "spec.containers.0.resources",
            {"requests": {"cpu": "100m"}, "limits": {"cpu": "1", "memory": "1Gi"}},
        )
    )
    assert isinstance(p, Pod)
    assert p.containers[0].requests == {
        "cpu": Quantity.parse("100m"),
        "memory": Quantity.parse("1Gi"),
    }


def test_quantities_are_rounded_up_to_milli_precision() -> None:
    resources = {"requests": {"cpu": "1.5m", "memory": "100u"}, "limits": {"cpu": "0.0025"}}
    p = decode_object(with_path(pod(), "spec.containers.0.resources", resources))
    assert isinstance(p, Pod)
    requests, limits = p.containers[0].requests, p.containers[0].limits
    assert requests["cpu"] == Quantity.parse("2m") and requests["memory"] == Quantity.parse("1m")
    assert limits["cpu"] == Quantity.parse("3m")
    assert str(requests["cpu"]) == "2m"


def test_host_network_host_ports_default_to_container_ports() -> None:
    p = decode_object(
        pod(
            hostNetwork=True,
            containers=[{"name": "c", "image": "x", "ports": [{"containerPort": 80}]}],
        )
    )
    assert isinstance(p, Pod)
    assert p.host_network and p.containers[0].ports[0].host_port == 80


def test_pod_keeps_status_gates_volumes_owners_and_sidecars() -> None:
    doc = pod(
        schedulingGates=[{"name": "example.com/wait"}],
        volumes=[
            {"name": "data", "persistentVolumeClaim": {"claimName": "pvc-1", "readOnly": True}},
            {"name": "tmp", "emptyDir": {}},
        ],
        initContainers=[{"name": "proxy", "image": "envoy", "restartPolicy": "Always"}],
        priority=5,
    )
    doc["metadata"]["ownerReferences"] = [
        {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "name": "web",
            "uid": "u1",
            "controller": True,
        }
    ]
    doc["status"] = {
        "phase": "Running",
        "nominatedNodeName": "n2",
        "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}],
    }
    p = decode_object(doc)
    assert isinstance(p, Pod)
    assert p.scheduling_gates == ("example.com/wait",)
    assert (p.volumes[0].pvc_claim_name, p.volumes[0].pvc_read_only, p.volumes[0].source_kind) == (
        "pvc-1",
        True,
        "persistentVolumeClaim",
    )
    assert p.volumes[1].source_kind == "emptyDir" and p.volumes[1].pvc_claim_name is None
    assert p.init_containers[0].restart_policy == "Always"
    assert p.owner_references[0].kind == "ReplicaSet" and p.owner_references[0].controller
    assert (p.phase, p.nominated_node_name) == ("Running", "n2")
    assert p.conditions[0].reason == "Unschedulable"
    assert p.priority == 5
    assert p.manifest == doc


def test_match_label_keys_are_merged_into_the_selector_as_on_create() -> None:
    doc = pod(
        affinity={
            "podAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    affinity_term(
                        matchLabelKeys=["version", "missing"], mismatchLabelKeys=["tenant"]
                    )
                ]
            },
            "podAntiAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 10, "podAffinityTerm": affinity_term(matchLabelKeys=["version"])}
                ]
            },
        }
    )
    doc["metadata"]["labels"] = {"app": "web", "version": "v2", "tenant": "t1"}
    p = decode_object(doc)
    assert isinstance(p, Pod) and p.affinity is not None
    assert p.affinity.pod_affinity is not None and p.affinity.pod_anti_affinity is not None
    required = p.affinity.pod_affinity.required[0].label_selector
    assert required is not None
    assert required.match_expressions == (
        LabelSelectorRequirement("version", "In", ("v2",)),
        LabelSelectorRequirement("tenant", "NotIn", ("t1",)),
    )
    preferred = p.affinity.pod_anti_affinity.preferred[0].pod_affinity_term.label_selector
    assert preferred is not None
    assert preferred.match_expressions == (LabelSelectorRequirement("version", "In", ("v2",)),)


def test_spread_match_label_keys_are_merged_into_the_selector_as_on_create() -> None:
    spread = {
        "maxSkew": 1,
        "topologyKey": "zone",
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"app": "web"}},
        "matchLabelKeys": ["pod-template-hash", "missing"],
    }
    doc = pod(topologySpreadConstraints=[spread])
    doc["metadata"]["labels"] = {"app": "web", "pod-template-hash": "abc"}
    p = decode_object(doc)
    assert isinstance(p, Pod)
    selector = p.topology_spread_constraints[0].label_selector
    assert selector is not None
    assert selector.match_expressions == (
        LabelSelectorRequirement("pod-template-hash", "In", ("abc",)),
    )


def test_a_spread_match_label_key_also_in_the_selector_is_refused() -> None:
    spread = {
        "maxSkew": 1,
        "topologyKey": "zone",
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"app": "web"}},
        "matchLabelKeys": ["app"],
    }
    assert errors_of(pod(topologySpreadConstraints=[spread])) == [
        'spec.topologySpreadConstraints[0].matchLabelKeys[0]: Invalid value: "app": '
        "exists in both matchLabelKeys and labelSelector"
    ]


def test_a_gated_pod_gets_the_scheduling_gated_condition() -> None:
    p = decode_object(pod(schedulingGates=[{"name": "example.com/quota"}]))
    assert isinstance(p, Pod)
    assert [(c.type, c.status, c.reason, c.message) for c in p.conditions] == [
        (
            "PodScheduled",
            "False",
            "SchedulingGated",
            "Scheduling is blocked due to non-empty scheduling gates",
        )
    ]


def test_match_label_keys_without_selector_is_forbidden() -> None:
    doc = pod(
        affinity={
            "podAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"topologyKey": "zone", "matchLabelKeys": ["app"]}
                ]
            }
        }
    )
    assert errors_of(doc) == [
        "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]."
        "matchLabelKeys: Forbidden: must not be specified when labelSelector is not set"
    ]


def test_a_key_in_match_and_mismatch_label_keys_is_refused() -> None:
    doc = pod(
        affinity={
            "podAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    affinity_term(matchLabelKeys=["tier"], mismatchLabelKeys=["tier"])
                ]
            }
        }
    )
    assert errors_of(doc) == [
        "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]."
        'matchLabelKeys[0]: Invalid value: "tier": exists in both matchLabelKeys and '
        "mismatchLabelKeys"
    ]
