"""NodeUnschedulable: filter out nodes with ``spec.unschedulable`` unless the pod tolerates the
``node.kubernetes.io/unschedulable:NoSchedule`` taint.

Ported from kube-scheduler ``pkg/scheduler/framework/plugins/nodeunschedulable/node_unschedulable.go``
at Kubernetes v1.36.3 (Go module ``k8s.io/kubernetes@v1.36.3``): SchedulerQueueingHints is GA
(locked on), and the TaintTolerationComparisonOperators gate (alpha, off by default) is off, so a
``Gt``/``Lt`` toleration tolerates nothing, the unschedulable taint included.

v1.36's SignPod signs the pod's tolerations (``TolerationsSigner``); ``sign_pod`` here signs the one
thing Filter reads of them: whether they tolerate the unschedulable taint.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from kubesched.sdk import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    EventResource,
    InvalidObjectError,
    Node,
    NodeColumns,
    NodeInfo,
    Pod,
    QueueingHint,
    Status,
    Taint,
    hookimpl,
)

from .helper import as_views

__all__ = ["ERR_REASON_UNKNOWN_CONDITION", "ERR_REASON_UNSCHEDULABLE", "NodeUnschedulable"]

#: Go still exports this reason for NodeUnknownCondition, but Filter no longer returns it.
ERR_REASON_UNKNOWN_CONDITION = "node(s) had unknown conditions"
#: Used for the NodeUnschedulable predicate error.
ERR_REASON_UNSCHEDULABLE = "node(s) were unschedulable"

#: v1.TaintNodeUnschedulable with effect NoSchedule.
_UNSCHEDULABLE_TAINT = Taint("node.kubernetes.io/unschedulable", "", "NoSchedule")


def _tolerates_unschedulable(pod: Pod) -> bool:
    for tol in pod.tolerations:
        if tol.tolerates(_UNSCHEDULABLE_TAINT):
            return True
    return False


class NodeUnschedulable:
    """Filter: nodes that set ``spec.unschedulable`` are UnschedulableAndUnresolvable."""

    name = "NodeUnschedulable"

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        self.handle = handle

    @hookimpl
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            # With queueing hints there is no preCheck, so UpdateNodeLabel is not needed.
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE.value, ActionType.ADD | ActionType.UPDATE_NODE_TAINT),
                self.is_schedulable_after_node_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.POD.value, ActionType.UPDATE_POD_TOLERATION),
                self.is_schedulable_after_pod_toleration_change,
            ),
        ]

    def is_schedulable_after_pod_toleration_change(self, pod: Any, old_obj: Any, new_obj: Any) -> QueueingHint:
        try:
            _, modified = as_views(Pod, old_obj, new_obj)
            if modified is None:
                return QueueingHint.QUEUE
            target = pod if isinstance(pod, Pod) else Pod(pod)
            if target.uid == modified.uid:
                # Tolerations can be added but not modified nor removed, and the pod was rejected by
                # this plugin, so only the new tolerations matter.
                if _tolerates_unschedulable(modified):
                    return QueueingHint.QUEUE
                return QueueingHint.SKIP
        except (TypeError, InvalidObjectError):
            return QueueingHint.QUEUE  # Go: (Queue, err)
        # An update of another pod does not change this plugin's decision.
        return QueueingHint.SKIP

    def is_schedulable_after_node_change(self, pod: Any, old_obj: Any, new_obj: Any) -> QueueingHint:
        try:
            original, modified = as_views(Node, old_obj, new_obj)
        except TypeError:
            return QueueingHint.QUEUE  # Go: (Queue, err)
        if modified is None:
            return QueueingHint.QUEUE
        # Queue when the node went from unschedulable to schedulable, or was added schedulable.
        if (original is not None and original.unschedulable and not modified.unschedulable) or (
            original is None and not modified.unschedulable
        ):
            return QueueingHint.QUEUE
        return QueueingHint.SKIP

    @hookimpl
    def sign_pod(self, pod: Pod) -> bool:
        # Filter reads only whether the pod tolerates the unschedulable taint.
        return _tolerates_unschedulable(pod)

    @hookimpl
    def filter_batch(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> list[Status | None]:
        tolerates: bool | None = None
        out: list[Status | None] = []
        for ni in nodes:
            if not ni.node.unschedulable:
                out.append(None)
                continue
            if tolerates is None:
                tolerates = _tolerates_unschedulable(pod)
            out.append(None if tolerates else Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_UNSCHEDULABLE))
        return out

    @hookimpl
    def filter_columns(self, pod: Pod, columns: NodeColumns) -> tuple[Any, list[Status | None]]:
        # code 1 on the unschedulable nodes (a bool column seen as int8: no copy)
        unschedulable = columns.unschedulable
        if _tolerates_unschedulable(pod):
            return np.zeros(columns.n, np.int8), [None]
        return unschedulable.view(np.int8), [None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_UNSCHEDULABLE)]

    @hookimpl
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if not node_info.node.unschedulable:
            return None
        # A pod that tolerates the unschedulable taint also tolerates spec.unschedulable.
        if not _tolerates_unschedulable(pod):
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_UNSCHEDULABLE)
        return None


