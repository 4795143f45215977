"""NodeVolumeLimits: kube-scheduler's CSI volume limits plugin (``CSILimits``), ported.

Followed: ``pkg/scheduler/framework/plugins/nodevolumelimits/{csi.go,utils.go,csi_manager.go}``
and ``csi_test.go`` of kubernetes v1.36.3 (v1.36 semantics).

The node's limit per CSI driver is ``CSINode.spec.drivers[].allocatable.count`` and nothing
else (``getVolumeLimits(csiNode)``): a node allocatable ``attachable-volumes-*`` resource is
not a limit, and a node without a CSINode, or whose drivers have no count, has none. Volumes
are counted per CSI driver name. Filter counts the unique volumes (``driver/volumeHandle``) of
the pods on the node plus the node's VolumeAttachments of CSI PersistentVolumes that no
existing pod uses, and the pod's new ones per driver, and rejects the node with ``node(s)
exceed max volume count`` (Unschedulable) past the limit. An unbound claim is counted through
its StorageClass' provisioner with a per-claim handle.

v1.36 changes ported: in-tree volumes of the five migrated plugins (AWS EBS, GCE PD, Azure
Disk, Cinder, Portworx) count under their CSI driver whenever the node has a CSINode (the
``migrated-plugins`` annotation is no longer read). Not ported: the alpha VolumeLimitScaling
gate (off at v1.36.3: ``<driver> CSI driver is not installed on the node`` for a CSIDriver with
``preventPodSchedulingIfMissing``), and ``SignPod`` (kubesched's ``sign_pod`` covers results
that depend on the node alone; this one reads PVCs, PVs and VolumeAttachments).

Simplification: in-tree -> CSI translation (csi-translation-lib) is reduced to what counting
needs: the volume handle the translator would produce for AWS EBS, Azure Disk, Cinder and
Portworx and a ``projects/UNSPECIFIED/zones/<zone>/disks/<pd>`` handle for GCE PD (regional
disks are not told apart).
"""

from __future__ import annotations

import secrets
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

from ..helper import SKIP
from ..volumebinding.storage_helpers import (
    PV_API,
    STORAGE_API,
    ObjectCache,
    as_pod,
    get_pvc_class,
    labels_of,
    meta,
    not_found_message,
    pvc_name_of_volume,
    raw,
    volume_is_for_pod,
)

__all__ = ["ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED", "NodeVolumeLimits"]

NAME = "NodeVolumeLimits"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED = "node(s) exceed max volume count"

# csi-translation-lib: in-tree volume source -> (in-tree plugin name, CSI driver name)
AWS_EBS = "kubernetes.io/aws-ebs"
GCE_PD = "kubernetes.io/gce-pd"
AZURE_DISK = "kubernetes.io/azure-disk"
AZURE_FILE = "kubernetes.io/azure-file"
CINDER = "kubernetes.io/cinder"
VSPHERE = "kubernetes.io/vsphere-volume"
PORTWORX = "kubernetes.io/portworx-volume"
_SOURCES = {
    "awsElasticBlockStore": AWS_EBS,
    "gcePersistentDisk": GCE_PD,
    "azureDisk": AZURE_DISK,
    "azureFile": AZURE_FILE,
    "cinder": CINDER,
    "vsphereVolume": VSPHERE,
    "portworxVolume": PORTWORX,
}
_CSI_DRIVERS = {
    AWS_EBS: "ebs.csi.aws.com",
    GCE_PD: "pd.csi.storage.gke.io",
    AZURE_DISK: "disk.csi.azure.com",
    AZURE_FILE: "file.csi.azure.com",
    CINDER: "cinder.csi.openstack.org",
    VSPHERE: "csi.vsphere.vmware.com",
    PORTWORX: "pxd.portworx.com",
}
#: utils.go isCSIMigrationOn: the plugins whose migration is on (v1.36: all five always)
_MIGRATION_ON = frozenset({AWS_EBS, GCE_PD, AZURE_DISK, CINDER, PORTWORX})


def _in_tree_source(spec: Mapping[str, Any]) -> tuple[str, Mapping[str, Any]] | None:
    for key, plugin in _SOURCES.items():
        src = spec.get(key)
        if src is not None:
            return plugin, src
    return None


def is_inline_migratable(vol: Mapping[str, Any]) -> bool:
    """translator.IsInlineMigratable."""
    return _in_tree_source(vol) is not None


def is_csi_migration_on(csi_node: Mapping[str, Any] | None, plugin: str) -> bool:
    """isCSIMigrationOn (v1.36 ``utils.go``): the node has a CSINode and the plugin is one of
    the migrated five (AWS EBS, GCE PD, Azure Disk, Cinder, Portworx). The CSINode's
    ``storage.alpha.kubernetes.io/migrated-plugins`` annotation is not read (v1.34 read it for
    Portworx; v1.36 dropped the check with the CSIMigrationPortworx gate)."""
    return csi_node is not None and plugin in _MIGRATION_ON


def _translated_handle(plugin: str, src: Mapping[str, Any], pv_labels: Mapping[str, str] | None) -> str:
    """The volume handle csi-translation-lib gives the translated volume."""
    if plugin == AWS_EBS:
        vid = str(src.get("volumeID") or "")
        if vid.startswith("aws://"):
            # KubernetesVolumeIDToEBSVolumeID: aws://<zone>/<id> -> <id>
            return vid.rsplit("/", 1)[-1]
        return vid
    if plugin == GCE_PD:
        zone = "UNSPECIFIED"
        labels = pv_labels or {}
        z = labels.get("topology.kubernetes.io/zone") or labels.get("failure-domain.beta.kubernetes.io/zone")
        if z and "__" not in z:
            zone = z
        return f"projects/UNSPECIFIED/zones/{zone}/disks/{src.get('pdName') or ''}"
    if plugin == AZURE_DISK:
        return str(src.get("diskURI") or "")
    if plugin == AZURE_FILE:
        return f"#{src.get('secretName') or ''}#{src.get('shareName') or ''}#"
    if plugin == VSPHERE:
        return str(src.get("volumePath") or "")
    return str(src.get("volumeID") or "")


class _NotFoundError(Exception):
    """A lookup of the pod's own claim failed with NotFound."""


class _State(StateData):
    """Per-cycle lookups (CSINodes, PVCs, PVs, StorageClasses, VolumeAttachments)."""

    def __init__(self, objects: Any) -> None:
        self.cache = ObjectCache(objects)
        self.objects = objects
        self.csi_nodes: dict[str, dict[str, Any] | None] = {}
        self.pvs: dict[str, dict[str, Any] | None] = {}
        self.vas: dict[str, list[dict[str, Any]]] | None = None

    def clone(self) -> _State:
        return self

    def csi_node(self, name: str) -> dict[str, Any] | None:
        try:
            return self.csi_nodes[name]
        except KeyError:
            pass
        try:
            obj: dict[str, Any] | None = self.objects.get(STORAGE_API, "CSINode", name)
        except ObjectNotFound:
            obj = None
        self.csi_nodes[name] = obj
        return obj

    def pv(self, name: str) -> dict[str, Any] | None:
        try:
            return self.pvs[name]
        except KeyError:
            pass
        try:
            obj: dict[str, Any] | None = self.objects.get(PV_API, "PersistentVolume", name)
        except ObjectNotFound:
            obj = None
        self.pvs[name] = obj
        return obj

    def volume_attachments(self, node_name: str) -> list[dict[str, Any]]:
        if self.vas is None:
            self.vas = {}
            try:
                items = self.objects.list(STORAGE_API, "VolumeAttachment")
            except Exception:  # the cluster may not serve them
                items = []
            for va in items:
                n = str((va.get("spec") or {}).get("nodeName") or "")
                self.vas.setdefault(n, []).append(va)
        return self.vas.get(node_name, [])


class NodeVolumeLimits:
    """Rejects nodes where the pod's CSI volumes would exceed the driver's attach limit."""

    name = NAME

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        self._handle = handle
        #: prefix of the handles given to unbound claims (csi.go randomVolumeIDPrefix)
        self.random_volume_id_prefix = secrets.token_hex(16)

    # EnqueueExtensions -------------------------------------------------------------------------
    @hookimpl
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            # Any new CSINode could make pods rejected for CSI volumes schedulable: no hint.
            ClusterEventWithHint(ClusterEvent(EventResource.CSI_NODE.value, ActionType.ADD)),
            ClusterEventWithHint(ClusterEvent(EventResource.POD.value, ActionType.DELETE), self.is_schedulable_after_pod_deleted),
            ClusterEventWithHint(
                ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM.value, ActionType.ADD), self.is_schedulable_after_pvc_added
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.VOLUME_ATTACHMENT.value, ActionType.DELETE),
                self.is_schedulable_after_volume_attachment_deleted,
            ),
        ]

    @staticmethod
    def is_schedulable_after_pod_deleted(pod: Any, old_obj: Any, new_obj: Any) -> QueueingHint:
        deleted = old_obj if old_obj is not None else new_obj
        try:
            dp = as_pod(deleted)
        except TypeError:
            return QueueingHint.QUEUE
        if not dp.volumes or not dp.node_name:
            return QueueingHint.SKIP
        for v in dp.volumes:
            if v.get("persistentVolumeClaim") is not None or v.get("ephemeral") is not None or is_inline_migratable(v):
                return QueueingHint.QUEUE
        return QueueingHint.SKIP

    @staticmethod
    def is_schedulable_after_pvc_added(pod: Any, old_obj: Any, new_obj: Any) -> QueueingHint:
        pvc = raw(new_obj)
        if not isinstance(pvc, Mapping):
            return QueueingHint.QUEUE
        pod = as_pod(pod)
        md = meta(pvc)
        if (md.get("namespace") or "default") != pod.namespace:
            return QueueingHint.SKIP
        for v in pod.volumes:
            name, _ = pvc_name_of_volume(pod, v)
            if name is not None and name == md.get("name"):
                return QueueingHint.QUEUE
        return QueueingHint.SKIP

    def is_schedulable_after_volume_attachment_deleted(self, pod: Any, old_obj: Any, new_obj: Any) -> QueueingHint:
        va = raw(old_obj if old_obj is not None else new_obj)
        if not isinstance(va, Mapping):
            return QueueingHint.QUEUE
        pod = as_pod(pod)
        spec = va.get("spec") or {}
        source = spec.get("source") or {}
        pv_name = source.get("persistentVolumeName")
        attacher = spec.get("attacher")
        cache = ObjectCache(self._handle.objects) if self._handle is not None else None
        for v in pod.volumes:
            name, _ = pvc_name_of_volume(pod, v)
            if name is not None:
                if pv_name and cache is not None:
                    pvc = cache.pvc(pod.namespace, name)
                    if pvc is not None and (pvc.get("spec") or {}).get("volumeName") == pv_name:
                        return QueueingHint.QUEUE
                continue
            src = _in_tree_source(v)
            if src is not None and _CSI_DRIVERS.get(src[0]) == attacher:
                return QueueingHint.QUEUE
        return QueueingHint.SKIP

    # PreFilter ---------------------------------------------------------------------------------
    @hookimpl
    def pre_filter(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Any:
        for v in pod.volumes:
            if v.get("persistentVolumeClaim") is not None or v.get("ephemeral") is not None or is_inline_migratable(v):
                state.write(PRE_FILTER_STATE_KEY, _State(self._handle.objects))
                return None
        return SKIP

    # Filter --------------------------------------------------------------------------------------
    @hookimpl
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if not pod.volumes:
            return None
        node = node_info.node
        if node is None:
            return Status.failed("node not found")
        s = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(s, _State):
            s = _State(self._handle.objects)
            state.write(PRE_FILTER_STATE_KEY, s)
        csi_node = s.csi_node(node.name)
        new_volumes: dict[str, str] = {}
        try:
            self._filter_attachable_volumes(s, pod, csi_node, True, new_volumes)
        except _NotFoundError as e:
            # This pod will never be schedulable until the PVC is created.
            return Status.unresolvable(str(e))
        except Exception as e:
            return Status.failed(str(e), e)
        if not new_volumes:
            return None
        limits = get_volume_limits(csi_node)
        if not limits:
            return None
        attached: dict[str, str] = {}
        for existing in node_info.pods:
            try:
                self._filter_attachable_volumes(s, existing, csi_node, False, attached)
            except Exception as e:
                return Status.failed(str(e), e)
        attached_count: dict[str, int] = {}
        for unique_name, key in attached.items():
            # Don't count a volume used by several pods more than once.
            new_volumes.pop(unique_name, None)
            attached_count[key] = attached_count.get(key, 0) + 1
        # getNodeVolumeAttachmentInfo: the node's VolumeAttachments of CSI PVs, each counted
        # unless an existing pod's volume is the same one.
        for unique_name, key in self._node_volume_attachments(s, node.name).items():
            if unique_name not in attached:
                attached_count[key] = attached_count.get(key, 0) + 1
        new_count: dict[str, int] = {}
        for key in new_volumes.values():
            new_count[key] = new_count.get(key, 0) + 1
        for key, count in new_count.items():
            limit = limits.get(key)
            if limit is not None and attached_count.get(key, 0) + count > limit:
                return Status.unschedulable(ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED)
        return None

    @staticmethod
    def _node_volume_attachments(s: _State, node_name: str) -> dict[str, str]:
        """getNodeVolumeAttachmentInfo: ``attacher/volumeHandle`` -> limit key for the node's
        VolumeAttachments that name an attacher and a PersistentVolume that exists and is CSI."""
        out: dict[str, str] = {}
        for va in s.volume_attachments(node_name):
            spec = va.get("spec") or {}
            attacher = str(spec.get("attacher") or "")
            if not attacher:
                continue
            pv_name = (spec.get("source") or {}).get("persistentVolumeName")
            if pv_name is None:
                continue
            pv = s.pv(str(pv_name))
            if pv is None:
                continue
            csi = (pv.get("spec") or {}).get("csi")
            if csi is None:
                continue
            out[f"{attacher}/{csi.get('volumeHandle') or ''}"] = attacher
        return out

    def _filter_attachable_volumes(
        self, s: _State, pod: Pod, csi_node: dict[str, Any] | None, new_pod: bool, result: dict[str, str]
    ) -> None:
        for vol in pod.volumes:
            pvc_name, is_ephemeral = pvc_name_of_volume(pod, vol)
            if pvc_name is None:
                self._check_attachable_inline_volume(vol, csi_node, result)
                continue
            if not pvc_name:
                raise ValueError("PersistentVolumeClaim had no name")
            pvc = s.cache.pvc(pod.namespace, pvc_name)
            if pvc is None:
                if new_pod:
                    raise _NotFoundError(
                        f"looking up PVC {pod.namespace}/{pvc_name}: {not_found_message('PersistentVolumeClaim', pvc_name)}"
                    )
                # An existing pod's missing claim is not counted.
                continue
            if is_ephemeral:
                err = volume_is_for_pod(pod, pvc)
                if err:
                    raise ValueError(err)
            driver, handle = self._get_csi_driver_info(s, csi_node, pvc)
            if not driver or not handle:
                continue
            result[f"{driver}/{handle}"] = driver

    @staticmethod
    def _check_attachable_inline_volume(vol: Mapping[str, Any], csi_node: dict[str, Any] | None, result: dict[str, str]) -> None:
        src = _in_tree_source(vol)
        if src is None:
            return
        plugin, spec = src
        if not is_csi_migration_on(csi_node, plugin):
            return
        driver = _CSI_DRIVERS[plugin]
        handle = _translated_handle(plugin, spec, None)
        result[f"{driver}/{handle}"] = driver

    def _get_csi_driver_info(self, s: _State, csi_node: dict[str, Any] | None, pvc: dict[str, Any]) -> tuple[str, str]:
        pv_name = str((pvc.get("spec") or {}).get("volumeName") or "")
        if not pv_name:
            return self._get_csi_driver_info_from_sc(s, csi_node, pvc)
        pv = s.pv(pv_name)
        if pv is None:
            # The PV may be gone, or the claim pre-bound to a PV not created yet.
            return self._get_csi_driver_info_from_sc(s, csi_node, pvc)
        spec = pv.get("spec") or {}
        csi = spec.get("csi")
        if csi is not None:
            return str(csi.get("driver") or ""), str(csi.get("volumeHandle") or "")
        src = _in_tree_source(spec)
        if src is None:
            return "", ""
        plugin, spec_src = src
        if not is_csi_migration_on(csi_node, plugin):
            return "", ""
        return _CSI_DRIVERS[plugin], _translated_handle(plugin, spec_src, labels_of(pv))

    def _get_csi_driver_info_from_sc(self, s: _State, csi_node: dict[str, Any] | None, pvc: dict[str, Any]) -> tuple[str, str]:
        md = meta(pvc)
        sc_name = get_pvc_class(pvc)
        # No class: the claim must use immediate binding, so it is bound before scheduling.
        if not sc_name:
            return "", ""
        sc = s.cache.storage_class(sc_name)
        if sc is None:
            return "", ""
        # A random prefix avoids clashing with real volume IDs; a claim bound while this runs
        # may be counted twice, as in kube-scheduler.
        handle = f"{self.random_volume_id_prefix}-{md.get('namespace') or 'default'}/{md.get('name')}"
        provisioner = str(sc.get("provisioner") or "")
        if provisioner in _CSI_DRIVERS:
            if not is_csi_migration_on(csi_node, provisioner):
                return "", ""
            return _CSI_DRIVERS[provisioner], handle
        return provisioner, handle


def get_volume_limits(csi_node: Mapping[str, Any] | None) -> dict[str, int]:
    """getVolumeLimits (v1.36.3 ``csi.go``): CSI driver name -> ``allocatable.count`` of the
    node's CSINode; the node's own allocatable is not read."""
    limits: dict[str, int] = {}
    if csi_node is not None:
        for d in (csi_node.get("spec") or {}).get("drivers") or []:
            alloc = d.get("allocatable")
            if alloc is not None and alloc.get("count") is not None:
                limits[str(d.get("name") or "")] = int(alloc["count"])
    return limits


