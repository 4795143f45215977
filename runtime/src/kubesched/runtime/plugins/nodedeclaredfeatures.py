"""NodeDeclaredFeatures: a pod that needs a node feature fits only nodes that declare it in
``status.declaredFeatures``.

Ported from kube-scheduler ``pkg/scheduler/framework/plugins/nodedeclaredfeatures/nodedeclaredfeatures.go``
at Kubernetes v1.36.3 (Go module ``k8s.io/kubernetes@v1.36.3``; the NodeDeclaredFeatures gate is
beta and on by default there, so the plugin is in the default profile), and the parts of
``k8s.io/component-helpers@v0.36.3/nodedeclaredfeatures`` it uses: the ``Framework`` (a registry
sorted by name, ``InferForPodScheduling``, ``TryMap``) and every feature registered in
``features.AllFeatures``:

* ``RestartAllContainersOnContainerExits``: required when a container or init container has a
  ``restartPolicyRules`` entry with action ``RestartAllContainers``.
* ``UserNamespacesHostNetworkSupport``: required when ``hostNetwork`` is true and ``hostUsers``
  is false.
* ``ExtendWebSocketsToKubelet``, ``InPlacePodLevelResourcesVerticalScaling``,
  ``InPlacePodVerticalScalingInitContainers``: never required for scheduling (they matter to pod
  updates only).

None of them has a MaxVersion. Left out: ``Discover`` (the kubelet's side) and
``InferForUpdate`` (the API server's side); the scheduler calls neither.

The pod's requirements are inferred from its spec at PreFilter (Skip when there are none, so a
pod requiring no feature passes every node without a per-node call); Filter checks that they are
a subset of the node's declared features, as ``TryMap`` reads them: names the registry does not
know are ignored, and the list is walked as sorted (the kubelet publishes it sorted).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from kubesched.sdk import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    EventResource,
    Node,
    NodeColumns,
    NodeInfo,
    Pod,
    QueueingHint,
    StateData,
    Status,
    hookimpl,
)

from .helper import SKIP, as_views

__all__ = [
    "COMPONENT_VERSION",
    "DEFAULT_FRAMEWORK",
    "ERR_REASON_UNSATISFIED_REQUIREMENTS",
    "Feature",
    "FeatureFramework",
    "NodeDeclaredFeatures",
    "parse_version",
]

NAME = "NodeDeclaredFeatures"
#: CycleState key of the pod's feature requirements.
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
#: The Filter reason when a node's declared features lack one the pod requires.
ERR_REASON_UNSATISFIED_REQUIREMENTS = "node(s) didn't match Pod's required features"

Version = tuple[int, int, int]


def parse_version(text: str) -> Version:
    """``major.minor.patch`` (a leading ``v`` and a pre-release or build suffix are dropped)."""
    core = text.strip().removeprefix("v").split("-", 1)[0].split("+", 1)[0]
    parts = core.split(".")
    if len(parts) != 3 or not all(p.isdigit() for p in parts):
        raise ValueError(f"could not parse {text!r} as version")
    return int(parts[0]), int(parts[1]), int(parts[2])


#: The kube-scheduler version whose behaviour kubesched follows (Go: ``version.Get()``).
COMPONENT_VERSION: Version = parse_version("1.36.3")


@dataclass(frozen=True)
class Feature:
    """A declared feature (component-helpers' ``types.Feature``, the scheduling half)."""

    name: str
    #: ``InferForScheduling``: whether scheduling the pod (its spec) requires the feature.
    infer_for_scheduling: Callable[[Mapping[str, Any]], bool]
    #: The last version for which the feature is a scheduling factor; None = no bound.
    max_version: Version | None = None


def _requires_restart_all_containers(spec: Mapping[str, Any]) -> bool:
    for key in ("containers", "initContainers"):
        for c in spec.get(key) or ():
            for rule in c.get("restartPolicyRules") or ():
                if rule.get("action") == "RestartAllContainers":
                    return True
    return False


def _requires_user_namespaces_host_network(spec: Mapping[str, Any]) -> bool:
    return spec.get("hostNetwork") is True and spec.get("hostUsers") is False


def _never(spec: Mapping[str, Any]) -> bool:
    return False


#: component-helpers ``features.AllFeatures`` at v0.36.3.
ALL_FEATURES: tuple[Feature, ...] = (
    Feature("RestartAllContainersOnContainerExits", _requires_restart_all_containers),
    Feature("InPlacePodLevelResourcesVerticalScaling", _never),
    Feature("ExtendWebSocketsToKubelet", _never),
    Feature("InPlacePodVerticalScalingInitContainers", _never),
    Feature("UserNamespacesHostNetworkSupport", _requires_user_namespaces_host_network),
)


class FeatureFramework:
    """component-helpers' ``nodedeclaredfeatures.Framework``: a registry sorted by name. A
    feature set is the frozenset of the registered names it holds."""

    def __init__(self, registry: Iterable[Feature]) -> None:
        self.registry = tuple(sorted(registry, key=lambda f: f.name))
        self.names = tuple(f.name for f in self.registry)

    def infer_for_pod_scheduling(self, spec: Mapping[str, Any], target_version: Version | None) -> frozenset[str]:
        """The features scheduling a pod with ``spec`` requires at ``target_version``."""
        if target_version is None:
            raise ValueError("target version cannot be nil")
        out = []
        for f in self.registry:
            if f.max_version is not None and target_version > f.max_version:
                continue  # past the feature's max version it need not be required
            if f.infer_for_scheduling(spec):
                out.append(f.name)
        return frozenset(out)

    def try_map(self, sorted_features: Sequence[str]) -> frozenset[str]:
        """``TryMap``: the registered names in a sorted list, unknown names ignored (the list
        is walked as sorted, as in Go)."""
        names = self.names
        out = []
        i = j = 0
        while i < len(sorted_features) and j < len(names):
            a, b = sorted_features[i], names[j]
            if a == b:
                out.append(b)
                i += 1
                j += 1
            elif a < b:
                i += 1
            else:
                j += 1
        return frozenset(out)


#: ``ndf.DefaultFramework``.
DEFAULT_FRAMEWORK = FeatureFramework(ALL_FEATURES)


def _declared_features(node: Node) -> Sequence[str]:
    declared = node.status.get("declaredFeatures")
    return declared if isinstance(declared, Sequence) and not isinstance(declared, str) else ()


class _PreFilterState(StateData):
    __slots__ = ("reqs",)

    def __init__(self, reqs: frozenset[str]) -> None:
        self.reqs = reqs

    def clone(self) -> _PreFilterState:
        return self  # not affected by adding or removing pods


class NodeDeclaredFeatures:
    """PreFilter (infer the pod's required features) and Filter (the node declares them)."""

    name = NAME

    def __init__(
        self,
        args: Any = None,
        handle: Any = None,
        *,
        enabled: bool = True,
        framework: FeatureFramework = DEFAULT_FRAMEWORK,
        version: Version | None = COMPONENT_VERSION,
    ) -> None:
        self.handle = handle
        #: The NodeDeclaredFeatures feature gate (beta, on by default in v1.36).
        self.enabled = enabled
        self.framework = framework
        self.version = version

    def _infer(self, pod: Pod) -> frozenset[str]:
        return self.framework.infer_for_pod_scheduling(pod.spec, self.version)

    @hookimpl
    def pre_filter(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        if not self.enabled:
            return SKIP
        try:
            reqs = self._infer(pod)
        except ValueError as e:
            return Status(Code.ERROR, str(e))
        if not reqs:
            return SKIP
        state.write(PRE_FILTER_STATE_KEY, _PreFilterState(reqs))
        return None

    @hookimpl
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if not self.enabled:
            return None
        s = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(s, _PreFilterState):
            if s is None:
                msg = f'error reading "{PRE_FILTER_STATE_KEY}" from cycle-state: not found'
            else:
                msg = f"invalid PreFilter state, got type {type(s).__name__}, expected *nodedeclaredfeatures.preFilterState"
            return Status(Code.ERROR, msg)
        # Don't compute the missing features: the message does not name them.
        if s.reqs <= self.framework.try_map(_declared_features(node_info.node)):
            return None
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_UNSATISFIED_REQUIREMENTS)

    @hookimpl
    def filter_columns(self, state: CycleState, columns: NodeColumns) -> tuple[Any, list[Status | None]] | None:
        if not self.enabled:
            return np.zeros(columns.n, np.int8), [None]
        s = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(s, _PreFilterState):
            return None  # the per-node form reports the error
        # a node's declared features are the Node object's: one column per distinct requirement
        reqs = s.reqs
        fw = self.framework
        ok = columns.by_node((NAME, id(fw), reqs), lambda node: reqs <= fw.try_map(_declared_features(node)), bool)
        return (~ok).view(np.int8), [None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_UNSATISFIED_REQUIREMENTS)]

    @hookimpl
    def sign_pod(self, pod: Pod) -> Hashable | None:
        # Go signs fs.String() under FeaturesSignerName; Filter reads only the inferred set.
        try:
            return tuple(sorted(self._infer(pod)))
        except ValueError:
            return None

    @hookimpl
    def events_to_register(self) -> list[ClusterEventWithHint]:
        if not self.enabled:
            return []
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE.value, ActionType.ADD | ActionType.UPDATE_NODE_DECLARED_FEATURE),
                self.is_schedulable_after_node_change,
            ),
            ClusterEventWithHint(ClusterEvent(EventResource.POD.value, ActionType.UPDATE), self.is_schedulable_after_pod_update),
        ]

    def is_schedulable_after_pod_update(self, pod: Any, old_obj: Any, new_obj: Any) -> QueueingHint:
        try:
            old, new = as_views(Pod, old_obj, new_obj)
        except TypeError:
            return QueueingHint.QUEUE  # Go: (Queue, err)
        if new is None or old is None:
            return QueueingHint.QUEUE
        target = pod if isinstance(pod, Pod) else Pod(pod)
        if target.uid != new.uid:
            # An update of another pod does not change this pod's requirements.
            return QueueingHint.SKIP
        try:
            old_reqs = self._infer(old)
            new_reqs = self._infer(new)
        except ValueError:
            return QueueingHint.QUEUE  # Go: (Queue, err)
        return QueueingHint.SKIP if new_reqs == old_reqs else QueueingHint.QUEUE

    def is_schedulable_after_node_change(self, pod: Any, old_obj: Any, new_obj: Any) -> QueueingHint:
        try:
            old, new = as_views(Node, old_obj, new_obj)
        except TypeError:
            return QueueingHint.QUEUE  # Go: (Queue, err)
        if new is None:
            return QueueingHint.QUEUE
        if old is not None and list(_declared_features(old)) == list(_declared_features(new)):
            return QueueingHint.SKIP
        return QueueingHint.QUEUE
