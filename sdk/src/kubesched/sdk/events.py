"""Cluster events that move unschedulable pods back into the queue, and queueing hints."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum, IntFlag
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .objects import Pod

__all__ = [
    "ActionType",
    "ClusterEvent",
    "ClusterEventWithHint",
    "EventResource",
    "QueueingHint",
    "QueueingHintFn",
]


class ActionType(IntFlag):
    """What happened to an object; the values are kube-scheduler's."""

    ADD = 1 << 0
    DELETE = 1 << 1
    UPDATE_NODE_ALLOCATABLE = 1 << 2
    UPDATE_NODE_LABEL = 1 << 3
    UPDATE_NODE_TAINT = 1 << 4
    UPDATE_NODE_CONDITION = 1 << 5
    UPDATE_NODE_ANNOTATION = 1 << 6
    UPDATE_POD_LABEL = 1 << 7
    UPDATE_POD_SCALE_DOWN = 1 << 8
    UPDATE_POD_TOLERATION = 1 << 9
    UPDATE_POD_SCHEDULING_GATES_ELIMINATED = 1 << 10
    UPDATE_POD_GENERATED_RESOURCE_CLAIM = 1 << 11
    #: Any other update (or an update that is none of the specific ones).
    UPDATE_OTHER = 1 << 12
    #: A change of a node's ``status.declaredFeatures`` (kube-scheduler 1.36's
    #: UpdateNodeDeclaredFeature; its bit here follows kubesched's older ones).
    UPDATE_NODE_DECLARED_FEATURE = 1 << 13

    UPDATE = (
        UPDATE_NODE_ALLOCATABLE
        | UPDATE_NODE_LABEL
        | UPDATE_NODE_TAINT
        | UPDATE_NODE_CONDITION
        | UPDATE_NODE_ANNOTATION
        | UPDATE_NODE_DECLARED_FEATURE
        | UPDATE_POD_LABEL
        | UPDATE_POD_SCALE_DOWN
        | UPDATE_POD_TOLERATION
        | UPDATE_POD_SCHEDULING_GATES_ELIMINATED
        | UPDATE_POD_GENERATED_RESOURCE_CLAIM
        | UPDATE_OTHER
    )
    ALL = ADD | DELETE | UPDATE


class EventResource(str, Enum):
    """Resources whose events the scheduler watches. Plugins may also name any other kind by its
    ``kind`` (e.g. ``ClusterEvent("PodGroup", ActionType.ADD)``): the runtime then watches that
    kind (on Kubernetes, found through API discovery) and delivers its events."""

    POD = "Pod"
    #: internal: an assigned pod (matched by POD)
    ASSIGNED_POD = "AssignedPod"
    #: internal: an unschedulable pod (matched by POD)
    UNSCHEDULABLE_POD = "UnschedulablePod"
    NODE = "Node"
    PERSISTENT_VOLUME = "PersistentVolume"
    PERSISTENT_VOLUME_CLAIM = "PersistentVolumeClaim"
    CSI_NODE = "CSINode"
    CSI_DRIVER = "CSIDriver"
    CSI_STORAGE_CAPACITY = "CSIStorageCapacity"
    STORAGE_CLASS = "StorageClass"
    VOLUME_ATTACHMENT = "VolumeAttachment"
    NAMESPACE = "Namespace"
    POD_DISRUPTION_BUDGET = "PodDisruptionBudget"
    #: resource.k8s.io (dynamic resource allocation)
    RESOURCE_CLAIM = "ResourceClaim"
    RESOURCE_CLAIM_TEMPLATE = "ResourceClaimTemplate"
    RESOURCE_SLICE = "ResourceSlice"
    DEVICE_CLASS = "DeviceClass"
    WILDCARD = "*"


class QueueingHint(Enum):
    """Returned by a queueing hint function: should this event move the pod back to the queue?"""

    SKIP = 0
    QUEUE = 1


#: ``hint(pod, old_obj, new_obj) -> QueueingHint``: ``pod`` is the waiting pod (a
#: :class:`~kubesched.sdk.Pod` view); ``old_obj``/``new_obj`` are the changed object as a typed
#: view for Pod and Node events (:class:`~kubesched.sdk.Pod`, :class:`~kubesched.sdk.Node`) and
#: as its API mapping for any other kind (``old_obj`` is ``None`` on add, ``new_obj`` is ``None``
#: on delete). Raising counts as QUEUE.
QueueingHintFn = Callable[["Pod", Any, Any], QueueingHint]


@dataclass(frozen=True)
class ClusterEvent:
    """A kind of change in the cluster: a resource and the actions on it."""

    resource: str
    action: ActionType = ActionType.ALL
    label: str = ""

    def is_wildcard(self) -> bool:
        return self.resource == EventResource.WILDCARD.value and self.action == ActionType.ALL

    def matches(self, incoming: ClusterEvent) -> bool:
        """True when ``incoming`` is the same or a more specific event than this one
        (kube-scheduler's MatchClusterEvents)."""
        if self.is_wildcard():
            return True
        r = str(self.resource)
        ir = str(incoming.resource)
        res_ok = (
            r == EventResource.WILDCARD.value
            or r == ir
            or (
                r == EventResource.POD.value
                and ir in (EventResource.ASSIGNED_POD.value, EventResource.UNSCHEDULABLE_POD.value)
            )
        )
        return (
            res_ok
            and bool(self.action & incoming.action)
            and int(incoming.action) <= int(self.action)
        )

    def __str__(self) -> str:
        return self.label or f"{self.resource}{_action_label(self.action)}"


def _action_label(a: ActionType) -> str:
    if a == ActionType.ALL:
        return "All"
    if a == ActionType.UPDATE:
        return "Update"
    names = []
    for m in ActionType.__members__.values():
        v = int(m)
        if v & (v - 1) == 0 and int(a) & v:
            names.append("".join(w.capitalize() for w in (m.name or "").split("_")))
    return "|".join(names)


@dataclass(frozen=True)
class ClusterEventWithHint:
    """A ClusterEvent a plugin registers, with an optional hint that filters out events which
    cannot make the pod schedulable. Without a hint, every matching event requeues the pod."""

    event: ClusterEvent
    hint: QueueingHintFn | None = None
