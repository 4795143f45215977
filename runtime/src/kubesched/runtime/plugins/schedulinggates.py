"""SchedulingGates: keep a pod out of the active queue while it has ``spec.schedulingGates``.

Ported from kube-scheduler ``pkg/scheduler/framework/plugins/schedulinggates/scheduling_gates.go``
at Kubernetes v1.36.3 (Go module ``k8s.io/kubernetes@v1.36.3``), with SchedulerQueueingHints GA
and locked on; v1.36 changed no behaviour here since v1.34.
"""

from __future__ import annotations

from typing import Any

from kubesched.sdk import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    EventResource,
    Pod,
    QueueingHint,
    Status,
    hookimpl,
)

from .helper import as_views

__all__ = ["SchedulingGates"]


class SchedulingGates:
    """PreEnqueue: a pod that carries scheduling gates is gated (UnschedulableAndUnresolvable)."""

    name = "SchedulingGates"

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        self.handle = handle

    @hookimpl
    def pre_enqueue(self, pod: Pod) -> Status | None:
        gates = pod.scheduling_gates
        if not gates:
            return None
        # Go formats the []string with %v: "[foo bar]".
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, f"waiting for scheduling gates: [{' '.join(gates)}]")

    @hookimpl
    def events_to_register(self) -> list[ClusterEventWithHint]:
        # Pods can be more schedulable once their gates are removed.
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.POD.value, ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED),
                self.is_schedulable_after_update_pod_scheduling_gates_eliminated,
            )
        ]

    def is_schedulable_after_update_pod_scheduling_gates_eliminated(
        self, pod: Any, old_obj: Any, new_obj: Any
    ) -> QueueingHint:
        try:
            _, modified = as_views(Pod, old_obj, new_obj)
        except TypeError:
            return QueueingHint.QUEUE  # Go: (Queue, err)
        if modified is None:
            return QueueingHint.QUEUE
        if modified.uid != _as_pod(pod).uid:
            # An update of another pod cannot make the target pod schedulable.
            return QueueingHint.SKIP
        return QueueingHint.QUEUE


def _as_pod(pod: Any) -> Pod:
    return pod if isinstance(pod, Pod) else Pod(pod)


