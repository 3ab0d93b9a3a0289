"""Spread constraints as the plugin reads them, and the pod counting both halves share.

Mirrors pkg/scheduler/framework/plugins/podtopologyspread/common.go (v1.35) and, for the default
constraints' selector, pkg/scheduler/framework/plugins/helper/spread.go (``DefaultSelector``,
``GetPodServices``). Feature gates are as v1.35 ships them: NodeInclusionPolicyInPodTopologySpread
and MinDomainsInPodTopologySpread are GA, MatchLabelKeysInPodTopologySpread is on, so the plugin
merges the incoming pod's ``matchLabelKeys`` values into each selector (the API server does the same
at creation since v1.34 with MatchLabelKeysInPodTopologySpreadSelectorMerge; merging twice is
harmless), and TaintTolerationComparisonOperators (alpha) is off.

As in v1.35, counting with an empty selector (``labelSelector: {}``) counts no pod at all (upstream
#116607; changed only after v1.35 by #141340).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from schedviz.kube.labels import Requirement, Selector, as_selector, selector_from_set
from schedviz.kube.nodeaffinity import RequiredNodeAffinity
from schedviz.kube.objects import LabelSelector, Node, Pod, TopologySpreadConstraint
from schedviz.kube.taints import find_matching_untolerated_taint
from schedviz.scheduler.framework.interface import ObjectLister
from schedviz.scheduler.framework.plugins.helper.taint import do_not_schedule_taints_filter
from schedviz.scheduler.framework.types import PodInfo

# v1.UnsatisfiableConstraintAction and v1.NodeInclusionPolicy values.
DO_NOT_SCHEDULE = "DoNotSchedule"
SCHEDULE_ANYWAY = "ScheduleAnyway"
NODE_INCLUSION_POLICY_HONOR = "Honor"
NODE_INCLUSION_POLICY_IGNORE = "Ignore"


@dataclass(frozen=True, slots=True)
class SpreadConstraint:
    """A TopologySpreadConstraint with its selector parsed and its optional fields resolved.

    Upstream's internal ``topologySpreadConstraint``: minDomains defaults to 1, the node affinity
    policy to Honor, the node taints policy to Ignore.
    """

    max_skew: int
    topology_key: str
    selector: Selector
    min_domains: int = 1
    node_affinity_policy: str = NODE_INCLUSION_POLICY_HONOR
    node_taints_policy: str = NODE_INCLUSION_POLICY_IGNORE

    def match_node_inclusion_policies(
        self, pod: Pod, node: Node, required_node_affinity: RequiredNodeAffinity
    ) -> bool:
        """Whether the node takes part in this constraint's domains under its inclusion policies."""
        # Parse errors make a term never match; they are otherwise ignored, as upstream.
        if self.node_affinity_policy == NODE_INCLUSION_POLICY_HONOR and not (
            required_node_affinity.match(node)
        ):
            return False
        if self.node_taints_policy == NODE_INCLUSION_POLICY_HONOR:
            untolerated = find_matching_untolerated_taint(
                node.taints, pod.tolerations, do_not_schedule_taints_filter
            )
            if untolerated is not None:
                return False
        return True


def _sorted_by_key(requirements: Iterable[Requirement]) -> tuple[Requirement, ...]:
    # labels.Selector.Add keeps its requirements sorted by key.
    return tuple(sorted(requirements, key=lambda requirement: requirement[0]))


def merge_label_set_with_selector(match_labels: Mapping[str, str], selector: Selector) -> Selector:
    """The selector ANDed with ``key = value`` for every label; a nothing-selector stays so."""
    if selector.nothing:
        return selector
    merged = (*selector_from_set(match_labels).requirements, *selector.requirements)
    return Selector(_sorted_by_key(merged))


def filter_topology_spread_constraints(
    constraints: Iterable[TopologySpreadConstraint], pod_labels: Mapping[str, str], action: str
) -> list[SpreadConstraint]:
    """The constraints whose whenUnsatisfiable is ``action``, parsed."""
    result: list[SpreadConstraint] = []
    for constraint in constraints:
        if constraint.when_unsatisfiable != action:
            continue
        selector = as_selector(constraint.label_selector)
        if constraint.match_label_keys:
            match_labels = {
                key: pod_labels[key] for key in constraint.match_label_keys if key in pod_labels
            }
            if match_labels:
                selector = merge_label_set_with_selector(match_labels, selector)
        result.append(
            SpreadConstraint(
                max_skew=constraint.max_skew,
                topology_key=constraint.topology_key,
                selector=selector,
                min_domains=constraint.min_domains if constraint.min_domains is not None else 1,
                node_affinity_policy=constraint.node_affinity_policy or NODE_INCLUSION_POLICY_HONOR,
                node_taints_policy=constraint.node_taints_policy or NODE_INCLUSION_POLICY_IGNORE,
            )
        )
    return result


def node_labels_match_spread_constraints(
    node_labels: Mapping[str, str], constraints: Sequence[SpreadConstraint]
) -> bool:
    """Whether the node carries every constraint's topology key."""
    return all(constraint.topology_key in node_labels for constraint in constraints)


def count_pods_match_selector(
    pod_infos: Iterable[PodInfo], selector: Selector, namespace: str
) -> int:
    """Pods of ``namespace`` matching the selector; terminating pods are left out (#87621)."""
    if selector.empty:
        return 0
    count = 0
    for pod_info in pod_infos:
        pod = pod_info.pod
        if pod.deletion_timestamp is not None or pod.namespace != namespace:
            continue
        if selector.matches(pod.labels):
            count += 1
    return count


def pod_labels_match_spread_constraints(
    constraints: Sequence[SpreadConstraint], labels: Mapping[str, str]
) -> bool:
    """Whether the labels match the selector of any constraint."""
    return any(constraint.selector.matches(labels) for constraint in constraints)


# ---------------------------------------------------------------------------------------------
# Default constraints' selector (helper/spread.go)

# Controllers whose selector DefaultSelector adds, by ownerReference kind (v1 for
# ReplicationController, apps/v1 for ReplicaSet and StatefulSet).
_MAP_SELECTOR_CONTROLLERS = ("ReplicationController",)
_LABEL_SELECTOR_CONTROLLERS = ("ReplicaSet", "StatefulSet")


def _controller_of(pod: Pod) -> tuple[str, str] | None:
    """metav1.GetControllerOfNoCopy: the (kind, name) of the owner reference marked controller."""
    for owner in pod.owner_references:
        if owner.controller:
            return owner.kind, owner.name
    return None


def _get(obj: object, attribute: str) -> Any:
    return getattr(obj, attribute, None)


def _find(objects: ObjectLister, kind: str, namespace: str, name: str) -> object | None:
    for obj in objects.list_objects(kind):
        if _get(obj, "namespace") == namespace and _get(obj, "name") == name:
            return obj
    return None


def get_pod_services(objects: ObjectLister, pod: Pod) -> list[object]:
    """The Services of the pod's namespace whose selector matches the pod's labels."""
    services: list[object] = []
    for service in objects.list_objects("Service"):
        if _get(service, "namespace") != pod.namespace:
            continue
        selector = _get(service, "selector")
        if selector is None:
            # Services with nil selectors match nothing, not everything.
            continue
        if selector_from_set(selector).matches(pod.labels):
            services.append(service)
    return services


def default_selector(pod: Pod, objects: ObjectLister) -> Selector:
    """A selector deduced from the Services, ReplicationControllers, ReplicaSets and
    StatefulSets selecting the pod (helper.DefaultSelector).

    Services and ReplicationControllers carry a plain label map as selector, ReplicaSets and
    StatefulSets a LabelSelector. Since they all match the pod their labels cannot conflict, so
    merging is safe.
    """
    label_set: dict[str, str] = {}
    for service in get_pod_services(objects, pod):
        label_set.update(_get(service, "selector") or {})
    selector = selector_from_set(label_set)

    owner = _controller_of(pod)
    if owner is None:
        return selector
    kind, name = owner
    controller = _find(objects, kind, pod.namespace, name)
    if controller is None:
        return selector
    if kind in _MAP_SELECTOR_CONTROLLERS:
        label_set.update(_get(controller, "selector") or {})
        return selector_from_set(label_set)
    if kind in _LABEL_SELECTOR_CONTROLLERS:
        other = _get(controller, "selector")
        if isinstance(other, LabelSelector):
            parsed = as_selector(other)
            return Selector(_sorted_by_key((*selector.requirements, *parsed.requirements)))
    return selector


def build_default_constraints(
    pod: Pod,
    default_constraints: Sequence[TopologySpreadConstraint],
    objects: ObjectLister,
    action: str,
) -> list[SpreadConstraint]:
    """The default constraints for ``action``, all with the pod's default selector.

    None at all when nothing selects the pod: an empty default selector disables defaulting.
    """
    constraints = filter_topology_spread_constraints(default_constraints, pod.labels, action)
    if not constraints:
        return []
    selector = default_selector(pod, objects)
    if selector.empty:
        return []
    return [dataclasses.replace(constraint, selector=selector) for constraint in constraints]
