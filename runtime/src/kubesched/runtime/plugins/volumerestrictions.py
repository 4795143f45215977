"""VolumeRestrictions: kube-scheduler's volume restrictions plugin, ported.

Followed: ``pkg/scheduler/framework/plugins/volumerestrictions/volume_restrictions.go`` of
kubernetes/kubernetes (stored commit 78fc8e44, the PreFilter/ReadWriteOncePod/queueing-hint
version that v1.34 ships with the types renamed to ``fwk.*``), whose behaviour v1.36.3 keeps
(v1.36 only adds ``SignPod``, not ported: kubesched's ``sign_pod`` covers results that depend
on the node alone, and the ReadWriteOncePod check reads pods on every node).

* Disk conflicts (Filter, ``node(s) had no available disk``): the same GCE PD mounted by two
  pods unless both read-only; the same AWS EBS volume ID; the same ISCSI IQN unless both
  read-only; RBD images sharing a monitor, pool and image unless both read-only.
* ReadWriteOncePod (PreFilter + Filter, ``node(s) unavailable due to PersistentVolumeClaim
  with ReadWriteOncePod access mode already in-use by another pod``, volume_restrictions.go's
  ErrReasonReadWriteOncePodConflict since 1.27; the differential test found the older text here): the pod's RWOP claims that a scheduled pod
  already uses make every node Unschedulable; preemption may remove that pod
  (``pre_filter_remove_pod`` updates the count).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kubesched.sdk import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    CycleState,
    EventResource,
    NodeInfo,
    Pod,
    QueueingHint,
    StateData,
    Status,
    hookimpl,
)

from .helper import SKIP
from .volumebinding.storage_helpers import ObjectCache, as_pod, meta, not_found_message, raw

__all__ = [
    "ERR_REASON_DISK_CONFLICT",
    "ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT",
    "VolumeRestrictions",
]

NAME = "VolumeRestrictions"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
ERR_REASON_DISK_CONFLICT = "node(s) had no available disk"
ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT = (
    "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already in-use by another pod"
)


class _PreFilterState(StateData):
    __slots__ = ("conflicting_pvc_ref_count", "read_write_once_pod_pvcs", "restricted_volumes")

    def __init__(self, pvcs: frozenset[str], count: int, restricted: list[Mapping[str, Any]]) -> None:
        #: names of the pod's claims with the ReadWriteOncePod access mode
        self.read_write_once_pod_pvcs = pvcs
        #: references to those claims by scheduled pods
        self.conflicting_pvc_ref_count = count
        #: the pod's volumes that need the disk conflict check (precomputed for Filter)
        self.restricted_volumes = restricted

    def update_with_pod(self, pod: Pod, multiplier: int) -> None:
        self.conflicting_pvc_ref_count += multiplier * self.conflicting_pvc_ref_count_for_pod(pod)

    def conflicting_pvc_ref_count_for_pod(self, pod: Pod) -> int:
        n = 0
        for v in pod.volumes:
            pvc = v.get("persistentVolumeClaim")
            if pvc is not None and pvc.get("claimName") in self.read_write_once_pod_pvcs:
                n += 1
        return n

    def clone(self) -> _PreFilterState:
        return _PreFilterState(self.read_write_once_pod_pvcs, self.conflicting_pvc_ref_count, self.restricted_volumes)


def needs_restrictions_check(v: Mapping[str, Any]) -> bool:
    return bool(
        v.get("gcePersistentDisk") is not None
        or v.get("awsElasticBlockStore") is not None
        or v.get("rbd") is not None
        or v.get("iscsi") is not None
    )


def _have_overlap(a1: Sequence[str], a2: Sequence[str]) -> bool:
    return bool(set(a1) & set(a2))


def is_volume_conflict(volume: Mapping[str, Any], pod: Pod) -> bool:
    """isVolumeConflict: ``volume`` conflicts with a volume of ``pod``."""
    gce = volume.get("gcePersistentDisk")
    aws = volume.get("awsElasticBlockStore")
    iscsi = volume.get("iscsi")
    rbd = volume.get("rbd")
    for ev in pod.volumes:
        egce = ev.get("gcePersistentDisk")
        if gce is not None and egce is not None:
            if gce.get("pdName", "") == egce.get("pdName", "") and not (gce.get("readOnly") and egce.get("readOnly")):
                return True
        eaws = ev.get("awsElasticBlockStore")
        if aws is not None and eaws is not None:
            if aws.get("volumeID", "") == eaws.get("volumeID", ""):
                return True
        eiscsi = ev.get("iscsi")
        if iscsi is not None and eiscsi is not None:
            if iscsi.get("iqn", "") == eiscsi.get("iqn", "") and not (iscsi.get("readOnly") and eiscsi.get("readOnly")):
                return True
        erbd = ev.get("rbd")
        if rbd is not None and erbd is not None:
            # pool defaults to "rbd" in the API
            if (
                _have_overlap(rbd.get("monitors") or [], erbd.get("monitors") or [])
                and (rbd.get("pool") or "rbd") == (erbd.get("pool") or "rbd")
                and rbd.get("image", "") == erbd.get("image", "")
                and not (rbd.get("readOnly") and erbd.get("readOnly"))
            ):
                return True
    return False


def satisfy_volume_conflicts(volumes: Sequence[Mapping[str, Any]], node_info: NodeInfo) -> bool:
    """satisfyVolumeConflicts over the pod's restricted volumes."""
    for v in volumes:
        for ev in node_info.pods:
            if is_volume_conflict(v, ev):
                return False
    return True


class VolumeRestrictions:
    """Rejects nodes where the pod's disks conflict with mounted ones, and ReadWriteOncePod
    claims already in use."""

    name = NAME

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        self._handle = handle

    # EnqueueExtensions ---------------------------------------------------------------------
    @hookimpl
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            # Deleting a pod may release a conflicting volume (pod volumes are immutable).
            ClusterEventWithHint(ClusterEvent(EventResource.POD.value, ActionType.DELETE), self.is_schedulable_after_pod_deleted),
            # A new node may make the pod schedulable; kubesched always uses queueing hints,
            # so (as kube-scheduler with QHint) Node/Add alone.
            ClusterEventWithHint(ClusterEvent(EventResource.NODE.value, ActionType.ADD)),
            # The PVC must exist to check its access modes.
            ClusterEventWithHint(
                ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM.value, ActionType.ADD),
                self.is_schedulable_after_persistent_volume_claim_added,
            ),
        ]

    @staticmethod
    def is_schedulable_after_persistent_volume_claim_added(pod: Any, old_obj: Any, new_obj: Any) -> QueueingHint:
        pvc = raw(new_obj)
        if not isinstance(pvc, Mapping):
            return QueueingHint.QUEUE
        pod = as_pod(pod)
        md = meta(pvc)
        if (md.get("namespace") or "default") != pod.namespace:
            return QueueingHint.SKIP
        for v in pod.volumes:
            c = v.get("persistentVolumeClaim")
            if c is not None and c.get("claimName") == md.get("name"):
                return QueueingHint.QUEUE
        return QueueingHint.SKIP

    @staticmethod
    def is_schedulable_after_pod_deleted(pod: Any, old_obj: Any, new_obj: Any) -> QueueingHint:
        deleted = old_obj if old_obj is not None else new_obj
        if deleted is None:
            return QueueingHint.QUEUE
        try:
            deleted_pod = as_pod(deleted)
        except Exception:
            return QueueingHint.QUEUE
        pod = as_pod(pod)
        if deleted_pod.namespace != pod.namespace:
            return QueueingHint.SKIP
        ni = NodeInfo(pods=[deleted_pod])
        if not satisfy_volume_conflicts([v for v in pod.volumes if needs_restrictions_check(v)], ni):
            return QueueingHint.QUEUE
        # A deleted pod using the same PVC may have held it with ReadWriteOncePod (the access
        # mode is not fetched, as in kube-scheduler).
        claims = {v["persistentVolumeClaim"].get("claimName") for v in pod.volumes if v.get("persistentVolumeClaim")}
        for v in deleted_pod.volumes:
            c = v.get("persistentVolumeClaim")
            if c is not None and c.get("claimName") in claims:
                return QueueingHint.QUEUE
        return QueueingHint.SKIP

    # PreFilter -------------------------------------------------------------------------------
    @hookimpl
    def pre_filter(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Any:
        restricted = [v for v in pod.volumes if needs_restrictions_check(v)]
        cache = ObjectCache(self._handle.objects)
        pvcs: set[str] = set()
        for v in pod.volumes:
            c = v.get("persistentVolumeClaim")
            if c is None:
                continue
            name = str(c.get("claimName") or "")
            pvc = cache.pvc(pod.namespace, name)
            if pvc is None:
                return Status.unresolvable(not_found_message("PersistentVolumeClaim", name))
            if "ReadWriteOncePod" not in ((pvc.get("spec") or {}).get("accessModes") or []):
                continue
            pvcs.add(str(meta(pvc).get("name") or name))
        count = 0
        if pvcs:
            infos = nodes if nodes else self._handle.snapshot().list()
            for name in pvcs:
                key = f"{pod.namespace}/{name}"
                # StorageInfos().IsPVCUsedByPods: at most one pod can use a RWOP claim.
                if any(key in ni.pvc_ref_counts for ni in infos):
                    count += 1
        if not restricted and count == 0:
            return SKIP
        state.write(PRE_FILTER_STATE_KEY, _PreFilterState(frozenset(pvcs), count, restricted))
        return None

    @hookimpl
    def pre_filter_add_pod(self, state: CycleState, pod_to_schedule: Pod, pod_to_add: Pod, node_info: NodeInfo) -> Status | None:
        s = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(s, _PreFilterState):
            return Status.failed(f'cannot read "{PRE_FILTER_STATE_KEY}" from cycleState')
        s.update_with_pod(pod_to_add, 1)
        return None

    @hookimpl
    def pre_filter_remove_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_to_remove: Pod, node_info: NodeInfo
    ) -> Status | None:
        s = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(s, _PreFilterState):
            return Status.failed(f'cannot read "{PRE_FILTER_STATE_KEY}" from cycleState')
        s.update_with_pod(pod_to_remove, -1)
        return None

    # Filter ----------------------------------------------------------------------------------
    @hookimpl
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        s = state.get(PRE_FILTER_STATE_KEY)
        restricted = s.restricted_volumes if isinstance(s, _PreFilterState) else [
            v for v in pod.volumes if needs_restrictions_check(v)
        ]
        if restricted and node_info.pods and not satisfy_volume_conflicts(restricted, node_info):
            return Status.unschedulable(ERR_REASON_DISK_CONFLICT)
        if not isinstance(s, _PreFilterState):
            return Status.failed(f'cannot read "{PRE_FILTER_STATE_KEY}" from cycleState')
        if s.conflicting_pvc_ref_count > 0:
            return Status.unschedulable(ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT)
        return None


