"""VolumeZone: kube-scheduler's volume zone plugin, ported.

Followed: ``pkg/scheduler/framework/plugins/volumezone/volume_zone.go`` of kubernetes/kubernetes
at v1.34 (stored copy with ``fwk.*`` types, ``isSchedulableAfterStorageClassAdded`` and
``isSchedulableAfterPersistentVolumeChange``), whose behaviour v1.36.3 keeps (v1.36 only adds
``SignPod``, not ported: kubesched's ``sign_pod`` covers results that depend on the node alone,
and this plugin reads PVCs, PVs and StorageClasses), and ``k8s.io/cloud-provider/volume/helpers``
``LabelZonesToSet`` for multi-zone label values (``zone-a__zone-b``).

The bound PVs of the pod's claims carry topology labels (``topology.kubernetes.io/zone|region``
or the legacy ``failure-domain.beta.kubernetes.io/zone|region``); a node that has any of these
labels must match every one of them (a beta PV label also matches the node's GA label), else
``node(s) had no available volume zone`` (UnschedulableAndUnresolvable). Unbound claims of a
``WaitForFirstConsumer`` class are skipped (VolumeBinding handles them).
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
    ObjectNotFound,
    Pod,
    QueueingHint,
    StateData,
    Status,
    hookimpl,
)

from .helper import SKIP
from .volumebinding.storage_helpers import (
    PV_API,
    ObjectCache,
    as_pod,
    get_pvc_class,
    labels_of,
    meta,
    not_found_message,
    raw,
)

__all__ = ["ERR_REASON_CONFLICT", "VolumeZone"]

NAME = "VolumeZone"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
ERR_REASON_CONFLICT = "node(s) had no available volume zone"

LABEL_FAILURE_DOMAIN_BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
LABEL_FAILURE_DOMAIN_BETA_REGION = "failure-domain.beta.kubernetes.io/region"
LABEL_TOPOLOGY_ZONE = "topology.kubernetes.io/zone"
LABEL_TOPOLOGY_REGION = "topology.kubernetes.io/region"

TOPOLOGY_LABELS = (
    LABEL_FAILURE_DOMAIN_BETA_ZONE,
    LABEL_FAILURE_DOMAIN_BETA_REGION,
    LABEL_TOPOLOGY_ZONE,
    LABEL_TOPOLOGY_REGION,
)
_TO_GA = {
    LABEL_FAILURE_DOMAIN_BETA_REGION: LABEL_TOPOLOGY_REGION,
    LABEL_FAILURE_DOMAIN_BETA_ZONE: LABEL_TOPOLOGY_ZONE,
}
#: cloudvolume.LabelMultiZoneDelimiter
MULTI_ZONE_DELIMITER = "__"

#: (pv name, label key, allowed values)
PVTopology = tuple[str, str, frozenset[str]]


def label_zones_to_set(value: str) -> frozenset[str] | None:
    """LabelZonesToSet; None when the list has an empty element (the label is ignored)."""
    out = set()
    for zone in value.split(MULTI_ZONE_DELIMITER):
        z = zone.strip()
        if not z:
            return None
        out.add(z)
    return frozenset(out)


def get_pv_topologies(pv: Mapping[str, Any]) -> list[PVTopology]:
    name = str(meta(pv).get("name") or "")
    labels = labels_of(pv)
    out: list[PVTopology] = []
    for key in TOPOLOGY_LABELS:
        if key in labels:
            values = label_zones_to_set(str(labels[key]))
            if values is None:
                continue
            out.append((name, key, values))
    return out


class _StateData(StateData):
    __slots__ = ("pod_pv_topologies",)

    def __init__(self, topologies: list[PVTopology]) -> None:
        self.pod_pv_topologies = topologies

    def clone(self) -> _StateData:
        return self


class VolumeZone:
    """Checks that the zones of the pod's bound PersistentVolumes match the node's."""

    name = NAME

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        self._handle = handle

    # EnqueueExtensions -------------------------------------------------------------------------
    @hookimpl
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            # A new WaitForFirstConsumer class may make the pod schedulable; the binding mode
            # is immutable, so updates are ignored.
            ClusterEventWithHint(
                ClusterEvent(EventResource.STORAGE_CLASS.value, ActionType.ADD), self.is_schedulable_after_storage_class_added
            ),
            # Queueing hints are always on in kubesched: Add | UpdateNodeLabel (no UpdateNodeTaint).
            ClusterEventWithHint(ClusterEvent(EventResource.NODE.value, ActionType.ADD | ActionType.UPDATE_NODE_LABEL)),
            ClusterEventWithHint(
                ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM.value, ActionType.ADD | ActionType.UPDATE),
                self.is_schedulable_after_persistent_volume_claim_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.PERSISTENT_VOLUME.value, ActionType.ADD | ActionType.UPDATE),
                self.is_schedulable_after_persistent_volume_change,
            ),
        ]

    @staticmethod
    def is_schedulable_after_persistent_volume_claim_change(pod: Any, old_obj: Any, new_obj: Any) -> QueueingHint:
        pvc = raw(new_obj)
        if not isinstance(pvc, Mapping):
            return QueueingHint.QUEUE
        pod = as_pod(pod)
        md = meta(pvc)
        if pod.namespace != (md.get("namespace") or "default"):
            return QueueingHint.SKIP
        for name in _claim_names(pod):
            if name == md.get("name"):
                return QueueingHint.QUEUE
        return QueueingHint.SKIP

    @staticmethod
    def is_schedulable_after_storage_class_added(pod: Any, old_obj: Any, new_obj: Any) -> QueueingHint:
        sc = raw(new_obj)
        if not isinstance(sc, Mapping):
            return QueueingHint.QUEUE
        if sc.get("volumeBindingMode") != "WaitForFirstConsumer":
            return QueueingHint.SKIP
        return QueueingHint.QUEUE

    @staticmethod
    def is_schedulable_after_persistent_volume_change(pod: Any, old_obj: Any, new_obj: Any) -> QueueingHint:
        new = raw(new_obj)
        if not isinstance(new, Mapping):
            return QueueingHint.QUEUE
        if old_obj is None:
            return QueueingHint.QUEUE
        old = raw(old_obj)
        if not isinstance(old, Mapping):
            return QueueingHint.QUEUE
        if get_pv_topologies(old) != get_pv_topologies(new):
            return QueueingHint.QUEUE
        return QueueingHint.SKIP

    # PreFilter -----------------------------------------------------------------------------------
    def _get_pv_by_pod(self, pod: Pod) -> tuple[list[PVTopology], Status | None]:
        """getPVbyPod."""
        out: list[PVTopology] = []
        cache = ObjectCache(self._handle.objects)
        for pvc_name in _claim_names(pod):
            if not pvc_name:
                return [], Status.unresolvable("PersistentVolumeClaim had no name")
            pvc = cache.pvc(pod.namespace, pvc_name)
            if pvc is None:
                return [], Status.unresolvable(not_found_message("PersistentVolumeClaim", pvc_name))
            pv_name = str((pvc.get("spec") or {}).get("volumeName") or "")
            if not pv_name:
                sc_name = get_pvc_class(pvc)
                if not sc_name:
                    return [], Status.unresolvable("PersistentVolumeClaim had no pv name and storageClass name")
                sc = cache.storage_class(sc_name)
                if sc is None:
                    return [], Status.unresolvable(not_found_message("StorageClass", sc_name))
                mode = sc.get("volumeBindingMode")
                if mode is None:
                    return [], Status.unresolvable(f'VolumeBindingMode not set for StorageClass "{sc_name}"')
                if mode == "WaitForFirstConsumer":
                    # Skip unbound volumes
                    continue
                return [], Status.unresolvable("PersistentVolume had no name")
            try:
                pv = self._handle.objects.get(PV_API, "PersistentVolume", pv_name)
            except ObjectNotFound:
                return [], Status.unresolvable(not_found_message("PersistentVolume", pv_name))
            out.extend(get_pv_topologies(pv))
        return out, None

    @hookimpl
    def pre_filter(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Any:
        topologies, status = self._get_pv_by_pod(pod)
        if status is not None:
            return status
        if not topologies:
            return SKIP
        state.write(PRE_FILTER_STATE_KEY, _StateData(topologies))
        return None

    # Filter --------------------------------------------------------------------------------------
    @hookimpl
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if not pod.volumes:
            return None
        s = state.get(PRE_FILTER_STATE_KEY)
        if isinstance(s, _StateData):
            topologies = s.pod_pv_topologies
        else:
            # Fallback to calculate the PV list here, as kube-scheduler does.
            topologies, status = self._get_pv_by_pod(pod)
            if status is not None:
                return status
        node = node_info.node
        labels = node.labels if node is not None else {}
        if not any(k in labels for k in TOPOLOGY_LABELS):
            # Single-zone clusters: a node without topology labels fits.
            return None
        for _pv_name, key, values in topologies:
            v = labels.get(key)
            if v is None:
                # A PV beta label also matches the node's GA label.
                v = labels.get(_TO_GA.get(key, key))
            if v is None or v not in values:
                return Status.unresolvable(ERR_REASON_CONFLICT)
        return None


def _claim_names(pod: Pod) -> list[str]:
    """getPersistentVolumeClaimNameFromPod (persistentVolumeClaim volumes only)."""
    return [str(v["persistentVolumeClaim"].get("claimName") or "") for v in pod.volumes if v.get("persistentVolumeClaim") is not None]


