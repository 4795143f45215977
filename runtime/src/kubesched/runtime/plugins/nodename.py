"""NodeName: a pod with ``spec.nodeName`` fits only the node of that name.

Ported from kube-scheduler ``pkg/scheduler/framework/plugins/nodename/node_name.go`` at Kubernetes
v1.36.3 (Go module ``k8s.io/kubernetes@v1.36.3``); SchedulerQueueingHints is GA, so only Node/Add
is registered. ``sign_pod`` is v1.36's SignPod: ``spec.nodeName`` (``NodeNameSignerName``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kubesched.sdk import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    EventResource,
    NodeColumns,
    NodeInfo,
    Pod,
    Status,
    hookimpl,
)

__all__ = ["ERR_REASON", "NodeName", "fits"]

#: Returned when the node name doesn't match.
ERR_REASON = "node(s) didn't match the requested node name"


def fits(pod: Pod, node_info: NodeInfo) -> bool:
    """Whether the pod fits the node (Go's ``nodename.Fits``)."""
    node_name = pod.node_name
    return not node_name or node_name == node_info.node.name


class NodeName:
    """Filter: the node's name must be the pod's ``spec.nodeName`` when that is set."""

    name = "NodeName"

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        self.handle = handle

    @hookimpl
    def events_to_register(self) -> list[ClusterEventWithHint]:
        # No hint: the pod is always retried (with backoff) when a node is added.
        return [ClusterEventWithHint(ClusterEvent(EventResource.NODE.value, ActionType.ADD))]

    @hookimpl
    def sign_pod(self, pod: Pod) -> str:
        return pod.node_name

    @hookimpl
    def filter_columns(self, pod: Pod, columns: NodeColumns) -> tuple[Any, list[Status | None]]:
        node_name = pod.node_name
        if not node_name:
            return np.zeros(columns.n, np.int8), [None]
        # code 1 everywhere but on the node of that name (if there is one)
        codes = np.ones(columns.n, np.int8)
        i = columns.index.get(node_name)
        if i is not None:
            codes[i] = 0
        return codes, [None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON)]

    @hookimpl
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        node_name = pod.node_name
        if node_name and node_name != node_info.node.name:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON)
        return None
