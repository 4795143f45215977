"""The events DynamicResources registers and its queueing hints (kube-scheduler v1.36.3
``dynamicresources.go`` EventsToRegister, isSchedulableAfterClaimChange,
isSchedulableAfterPodChange; QHint on)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from kubesched.sdk import ActionType, ClusterEvent, ClusterEventWithHint, Pod, QueueingHint

from .common import allocation_of, uid_of
from .resourceclaim import ClaimError

if TYPE_CHECKING:
    from .plugin import DynamicResources

__all__ = ["events_to_register", "is_schedulable_after_claim_change", "is_schedulable_after_pod_change"]


def events_to_register(pl: DynamicResources) -> list[ClusterEventWithHint]:
    # QHint on: the UpdateNodeTaint workaround is not needed
    return [
        ClusterEventWithHint(ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_ALLOCATABLE)),
        ClusterEventWithHint(ClusterEvent("ResourceClaim", ActionType.ADD | ActionType.UPDATE), pl.is_schedulable_after_claim_change),
        ClusterEventWithHint(ClusterEvent("Pod", ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM), pl.is_schedulable_after_pod_change),
        ClusterEventWithHint(ClusterEvent("DeviceClass", ActionType.ADD | ActionType.UPDATE)),
        ClusterEventWithHint(ClusterEvent("ResourceSlice", ActionType.ADD | ActionType.UPDATE)),
    ]


def is_schedulable_after_claim_change(pl: DynamicResources, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
    """isSchedulableAfterClaimChange: a claim was added or updated. Queue on deallocation of
    any claim, and on creation of or a status change in one of the pod's claims. Raises
    (which queues the pod) for an object that is not a claim."""
    for o in (old_obj, new_obj):
        if o is not None and not isinstance(o, Mapping):
            raise TypeError(f"unexpected object in isSchedulableAfterClaimChange: {type(o).__name__}")
    new_uid = uid_of(new_obj) if new_obj is not None else None
    uses = False

    def see(_n: str, claim: dict[str, Any]) -> None:
        nonlocal uses
        if uid_of(claim) == new_uid:
            uses = True

    try:
        pl.foreach_pod_resource_claim(pod, see)
    except ClaimError:
        return QueueingHint.SKIP  # not schedulable yet
    if old_obj is not None and allocation_of(old_obj) is not None and new_obj is not None and allocation_of(new_obj) is None:
        return QueueingHint.QUEUE  # deallocated: its devices may fit the pod
    if not uses:
        return QueueingHint.SKIP
    if old_obj is None:
        return QueueingHint.QUEUE
    if (old_obj.get("status") or {}) == (new_obj.get("status") or {}):
        return QueueingHint.SKIP  # e.g. a finalizer added
    return QueueingHint.QUEUE


def is_schedulable_after_pod_change(pl: DynamicResources, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
    """isSchedulableAfterPodChange: the pod's own update recorded its generated claims."""
    if not isinstance(new_obj, Pod):
        raise TypeError(f"unexpected object in isSchedulableAfterClaimChange: {type(new_obj).__name__}")
    if pod.uid != new_obj.uid:
        return QueueingHint.SKIP
    try:
        pl.foreach_pod_resource_claim(new_obj, None)
    except ClaimError:
        return QueueingHint.SKIP
    return QueueingHint.QUEUE
