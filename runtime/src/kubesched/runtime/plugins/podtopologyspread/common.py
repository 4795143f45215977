"""What PreFilter/Filter and PreScore/Score share (kube-scheduler's ``podtopologyspread/common.go``
and ``framework/plugins/helper/spread.go``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from kubesched.sdk import (
    InvalidObjectError,
    LabelSelector,
    Node,
    ObjectNotFound,
    Pod,
    Requirement,
    find_untolerated_taint,
)

__all__ = [
    "HONOR",
    "IGNORE",
    "LABEL_HOSTNAME",
    "LABEL_TOPOLOGY_ZONE",
    "TopologySpreadConstraint",
    "count_pods_match_selector",
    "default_selector",
    "filter_topology_spread_constraints",
    "get_pod_services",
    "merge_label_set_with_selector",
    "node_affinity_matcher",
    "node_labels_match_spread_constraints",
    "pod_labels_match_spread_constraints",
]

LABEL_HOSTNAME = "kubernetes.io/hostname"
LABEL_TOPOLOGY_ZONE = "topology.kubernetes.io/zone"

#: v1.NodeInclusionPolicy values.
HONOR = "Honor"
IGNORE = "Ignore"

#: helper.DoNotScheduleTaintsFilterFunc: taints with these effects keep pods off a node.
DO_NOT_SCHEDULE_TAINT_EFFECTS = ("NoSchedule", "NoExecute")


class TopologySpreadConstraint:
    """The internal version of a v1.TopologySpreadConstraint, with the selector parsed."""

    __slots__ = (
        "max_skew",
        "min_domains",
        "node_affinity_policy",
        "node_taints_policy",
        "selector",
        "topology_key",
    )

    def __init__(
        self,
        max_skew: int,
        topology_key: str,
        selector: LabelSelector,
        min_domains: int = 1,
        node_affinity_policy: str = HONOR,
        node_taints_policy: str = IGNORE,
    ) -> None:
        self.max_skew = max_skew
        self.topology_key = topology_key
        self.selector = selector
        self.min_domains = min_domains
        self.node_affinity_policy = node_affinity_policy
        self.node_taints_policy = node_taints_policy

    def copy_with_selector(self, selector: LabelSelector) -> TopologySpreadConstraint:
        return TopologySpreadConstraint(
            self.max_skew,
            self.topology_key,
            selector,
            self.min_domains,
            self.node_affinity_policy,
            self.node_taints_policy,
        )

    def __repr__(self) -> str:
        return (
            f"TopologySpreadConstraint(max_skew={self.max_skew}, topology_key={self.topology_key!r}, "
            f"selector={self.selector!r}, min_domains={self.min_domains}, "
            f"node_affinity_policy={self.node_affinity_policy!r}, node_taints_policy={self.node_taints_policy!r})"
        )


def merge_label_set_with_selector(
    match_labels: Mapping[str, str], s: LabelSelector
) -> LabelSelector:
    """mergeLabelSetWithSelector: ``match_labels`` ANDed with ``s``; a match-nothing selector
    stays match-nothing (its Requirements() are not ok)."""
    if s.is_nothing():
        return s
    reqs = [Requirement(k, "In", [v]) for k, v in sorted(match_labels.items())]
    reqs.extend(s.requirements)
    return LabelSelector(reqs)


def filter_topology_spread_constraints(
    constraints: Iterable[Mapping[str, Any]],
    pod_labels: Mapping[str, str],
    action: str,
    *,
    enable_match_label_keys: bool = True,
    enable_node_inclusion_policy: bool = True,
    field: str = "spec.topologySpreadConstraints",
) -> list[TopologySpreadConstraint]:
    """filterTopologySpreadConstraints: the constraints whose ``whenUnsatisfiable`` is
    ``action``, parsed. Raises :class:`InvalidObjectError` for an invalid label selector."""
    result: list[TopologySpreadConstraint] = []
    for i, c in enumerate(constraints):
        if c.get("whenUnsatisfiable") != action:
            continue
        selector = LabelSelector.parse(c.get("labelSelector"), f"{field}[{i}].labelSelector")
        match_label_keys = c.get("matchLabelKeys") or ()
        if enable_match_label_keys and match_label_keys:
            match_labels = {k: pod_labels[k] for k in match_label_keys if k in pod_labels}
            if match_labels:
                selector = merge_label_set_with_selector(match_labels, selector)
        min_domains = c.get("minDomains")
        tsc = TopologySpreadConstraint(
            max_skew=int(c.get("maxSkew") or 0),
            topology_key=str(c.get("topologyKey") or ""),
            selector=selector,
            # If MinDomains is nil, we treat MinDomains as 1.
            min_domains=1 if min_domains is None else int(min_domains),
            # nil NodeAffinityPolicy means Honor; nil NodeTaintsPolicy means Ignore.
            node_affinity_policy=HONOR,
            node_taints_policy=IGNORE,
        )
        if enable_node_inclusion_policy:
            if c.get("nodeAffinityPolicy") is not None:
                tsc.node_affinity_policy = c["nodeAffinityPolicy"]
            if c.get("nodeTaintsPolicy") is not None:
                tsc.node_taints_policy = c["nodeTaintsPolicy"]
        result.append(tsc)
    return result


def node_labels_match_spread_constraints(
    node_labels: Mapping[str, str], constraints: Sequence[TopologySpreadConstraint]
) -> bool:
    """nodeLabelsMatchSpreadConstraints: ALL topology keys are present in the node labels."""
    for c in constraints:
        if c.topology_key not in node_labels:
            return False
    return True


def pod_labels_match_spread_constraints(
    constraints: Sequence[TopologySpreadConstraint], labels: Mapping[str, str]
) -> bool:
    """podLabelsMatchSpreadConstraints: the labels match the selector of ANY constraint."""
    for c in constraints:
        if c.selector.matches(labels):
            return True
    return False


def count_pods_match_selector(pods: Iterable[Pod], selector: LabelSelector, ns: str) -> int:
    """countPodsMatchSelector: pods in ``ns``, not terminating, that ``selector`` matches.

    As kube-scheduler v1.34 through v1.36.3 does, an *empty* selector (``labelSelector: {}``,
    which matches every pod) counts nothing: the early return was meant for the null selector
    (kubernetes#116607) and was only fixed on master after v1.36 (kubernetes#141339).
    """
    if selector.is_empty():
        return 0
    count = 0
    for p in pods:
        # Bypass terminating Pod (see kubernetes#87621).
        if p.namespace != ns or p.deletion_timestamp is not None:
            continue
        if selector.matches(p.labels):
            count += 1
    return count


def node_affinity_matcher(pod: Pod) -> Callable[[Node], bool]:
    """``nodeaffinity.GetRequiredNodeAffinity(pod).Match``, ignoring parse errors (an
    unparsable term matches nothing), as kube-scheduler does here "for backwards compatibility"."""
    try:
        node_selector = pod.node_selector
        required = pod.required_node_affinity
    except InvalidObjectError:

        def never(node: Node) -> bool:
            return False

        return never
    if not node_selector and required is None:

        def always(node: Node) -> bool:
            return True

        return always

    def match(node: Node) -> bool:
        labels = node.labels
        for k, v in node_selector.items():
            if labels.get(k) != v:
                return False
        return required is None or required.matches(labels, node.name)

    return match


def match_node_inclusion_policies(
    c: TopologySpreadConstraint, pod: Pod, node: Node, affinity_match: Callable[[Node], bool]
) -> bool:
    """topologySpreadConstraint.matchNodeInclusionPolicies."""
    if c.node_affinity_policy == HONOR and not affinity_match(node):
        return False
    if c.node_taints_policy == HONOR:
        if (
            find_untolerated_taint(node.taints, pod.tolerations, DO_NOT_SCHEDULE_TAINT_EFFECTS)
            is not None
        ):
            return False
    return True


# --- helper.DefaultSelector --------------------------------------------------------------------------

_RC = ("v1", "ReplicationController")
_RS = ("apps/v1", "ReplicaSet")
_SS = ("apps/v1", "StatefulSet")


def _set_as_requirements(label_set: Mapping[str, str]) -> list[Requirement]:
    return [Requirement(k, "In", [v]) for k, v in sorted(label_set.items())]


def get_pod_services(objects: Any, pod: Pod) -> list[dict[str, Any]]:
    """helper.GetPodServices: the Services in the pod's namespace whose selector matches it."""
    pod_labels = pod.labels
    out = []
    for svc in objects.list("v1", "Service", pod.namespace):
        sel = (svc.get("spec") or {}).get("selector")
        if sel is None:
            # services with nil selectors match nothing, not everything.
            continue
        if all(k in pod_labels and pod_labels[k] == v for k, v in sel.items()):
            out.append(svc)
    return out


def default_selector(pod: Pod, objects: Any) -> LabelSelector:
    """helper.DefaultSelector: a selector deduced from the Services, ReplicationControllers,
    ReplicaSets and StatefulSets that match the pod (objects read through ``handle.objects``)."""
    label_set: dict[str, str] = {}
    # Since services, RCs, RSs and SSs match the pod, they won't have conflicting labels.
    try:
        services = get_pod_services(objects, pod)
    except Exception:  # the lister failed: GetPodServices' error is ignored
        services = []
    for svc in services:
        label_set.update(svc["spec"]["selector"])
    requirements = _set_as_requirements(label_set) if label_set else []

    owner = pod.controller_ref
    if owner is None:
        return LabelSelector(requirements)
    gvk = (str(owner.get("apiVersion") or ""), str(owner.get("kind") or ""))
    name = str(owner.get("name") or "")
    if gvk == _RC:
        try:
            rc = objects.get("v1", "ReplicationController", name, pod.namespace)
        except ObjectNotFound:
            return LabelSelector(requirements)
        label_set.update((rc.get("spec") or {}).get("selector") or {})
        requirements = _set_as_requirements(label_set)
    elif gvk in (_RS, _SS):
        try:
            obj = objects.get(gvk[0], gvk[1], name, pod.namespace)
        except ObjectNotFound:
            return LabelSelector(requirements)
        try:
            other = LabelSelector.parse((obj.get("spec") or {}).get("selector"), "spec.selector")
        except InvalidObjectError:
            return LabelSelector(requirements)
        if not other.is_nothing():
            requirements = requirements + list(other.requirements)
    # else: not owned by a supported controller.
    return LabelSelector(requirements)
