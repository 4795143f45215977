"""Storage helpers shared by the volume plugins (VolumeBinding, VolumeRestrictions, VolumeZone,
NodeVolumeLimits).

Ported from ``k8s.io/component-helpers/storage/volume`` (``helpers.go``, ``pv_helpers.go``),
``k8s.io/component-helpers/storage/ephemeral`` and ``pkg/apis/core/v1/helper`` of Kubernetes
v1.34. Objects are API dicts (PersistentVolumeClaim, PersistentVolume, StorageClass, ...).

Not-found messages are those of kube-scheduler's informer listers
(``persistentvolumeclaim "x" not found``), which end up in ``FailedScheduling`` events.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from kubesched.sdk import (
    InvalidObjectError,
    LabelSelector,
    NodeSelector,
    ObjectNotFound,
    Pod,
    QuantityError,
    parse_quantity,
)

__all__ = [
    "ANN_BETA_STORAGE_CLASS",
    "ANN_BIND_COMPLETED",
    "ANN_BOUND_BY_CONTROLLER",
    "ANN_MIGRATED_PLUGINS",
    "ANN_SELECTED_NODE",
    "NOT_SUPPORTED_PROVISIONER",
    "PV_API",
    "SC_API",
    "STORAGE_API",
    "ObjectCache",
    "access_modes",
    "check_access_modes",
    "check_node_affinity",
    "check_volume_mode_mismatches",
    "claim_key",
    "ephemeral_claim_name",
    "get_pv_class",
    "get_pvc_class",
    "is_controlled_by",
    "is_volume_bound_to_claim",
    "labels_of",
    "match_topology_selector_terms",
    "meta",
    "not_found_message",
    "pvc_name_of_volume",
    "quantity",
    "raw",
    "storage_request",
    "volume_is_for_pod",
]

#: apiVersions of the objects these plugins read.
PV_API = "v1"
STORAGE_API = "storage.k8s.io/v1"
SC_API = STORAGE_API

ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
ANN_BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"
ANN_BETA_STORAGE_CLASS = "volume.beta.kubernetes.io/storage-class"
ANN_MIGRATED_PLUGINS = "storage.alpha.kubernetes.io/migrated-plugins"
NOT_SUPPORTED_PROVISIONER = "kubernetes.io/no-provisioner"

# Lister resource names, as in client-go's generated listers (errors.NewNotFound(v1.Resource(x))).
_RESOURCE = {
    "PersistentVolumeClaim": "persistentvolumeclaim",
    "PersistentVolume": "persistentvolume",
    "StorageClass": "storageclass.storage.k8s.io",
    "CSINode": "csinode.storage.k8s.io",
    "CSIDriver": "csidriver.storage.k8s.io",
}


def not_found_message(kind: str, name: str) -> str:
    """``persistentvolumeclaim "x" not found`` (apierrors.NewNotFound as the listers build it)."""
    return f'{_RESOURCE.get(kind, kind.lower())} "{name}" not found'


def raw(obj: Any) -> Any:
    """The API dict behind an SDK view (``Pod``/``Node``), or the object itself."""
    return getattr(obj, "raw", obj)



def as_pod(obj: Any) -> Pod:
    """A queueing hint's pod (a Pod view, something carrying ``.pod``, or an API dict) as a
    Pod view; ``TypeError`` for anything else."""
    if isinstance(obj, Pod):
        return obj
    if hasattr(obj, "pod") and isinstance(obj.pod, Pod):
        return obj.pod
    r = raw(obj)
    if not isinstance(r, Mapping):
        raise TypeError(f"not a pod: {type(obj).__name__}")
    return Pod(r)

def meta(obj: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return (obj or {}).get("metadata") or {}


def labels_of(obj: Mapping[str, Any] | None) -> Mapping[str, str]:
    return meta(obj).get("labels") or {}


def claim_key(pvc: Mapping[str, Any]) -> str:
    md = meta(pvc)
    return f"{md.get('namespace') or 'default'}/{md.get('name') or ''}"


def quantity(v: Any) -> Fraction:
    """A quantity as an exact number; a missing or invalid one is zero (as an empty Quantity)."""
    if v is None or v == "":
        return Fraction(0)
    try:
        return parse_quantity(v)
    except QuantityError:
        return Fraction(0)


def storage_request(pvc: Mapping[str, Any]) -> Fraction:
    spec = pvc.get("spec") or {}
    return quantity(((spec.get("resources") or {}).get("requests") or {}).get("storage"))


def get_pvc_class(pvc: Mapping[str, Any]) -> str:
    """GetPersistentVolumeClaimClass: the beta annotation first, then spec.storageClassName."""
    ann = meta(pvc).get("annotations") or {}
    if ANN_BETA_STORAGE_CLASS in ann:
        return str(ann[ANN_BETA_STORAGE_CLASS])
    sc = (pvc.get("spec") or {}).get("storageClassName")
    return "" if sc is None else str(sc)


def get_pv_class(pv: Mapping[str, Any]) -> str:
    """GetPersistentVolumeClass."""
    ann = meta(pv).get("annotations") or {}
    if ANN_BETA_STORAGE_CLASS in ann:
        return str(ann[ANN_BETA_STORAGE_CLASS])
    return str((pv.get("spec") or {}).get("storageClassName") or "")


def ephemeral_claim_name(pod: Pod, volume: Mapping[str, Any]) -> str:
    """ephemeral.VolumeClaimName: ``<pod name>-<volume name>``."""
    return f"{pod.name}-{volume.get('name') or ''}"


def pvc_name_of_volume(pod: Pod, volume: Mapping[str, Any]) -> tuple[str | None, bool]:
    """(claim name, is ephemeral) of a pod volume, or (None, False) when it uses no PVC."""
    pvc = volume.get("persistentVolumeClaim")
    if pvc is not None:
        return str(pvc.get("claimName") or ""), False
    if volume.get("ephemeral") is not None:
        return ephemeral_claim_name(pod, volume), True
    return None, False


def is_controlled_by(obj: Mapping[str, Any], owner_uid: str) -> bool:
    """metav1.IsControlledBy: the controller owner reference has the owner's UID."""
    for ref in meta(obj).get("ownerReferences") or []:
        if ref.get("controller"):
            return str(ref.get("uid") or "") == owner_uid
    return False


def volume_is_for_pod(pod: Pod, pvc: Mapping[str, Any]) -> str | None:
    """ephemeral.VolumeIsForPod: an error message, or None when the pod owns the claim."""
    md = meta(pvc)
    ns = md.get("namespace") or "default"
    pod_uid = str(pod.metadata.get("uid") or "")
    if ns != pod.namespace or not is_controlled_by(pvc, pod_uid):
        return f"PVC {ns}/{md.get('name')} was not created for pod {pod.namespace}/{pod.name} (pod is not owner)"
    return None


def check_node_affinity(pv: Mapping[str, Any], node_labels: Mapping[str, str]) -> bool:
    """volume.CheckNodeAffinity: the PV's required node affinity matches a node with these
    labels. As in Go, the node it builds has only labels, so ``matchFields`` never match and
    an invalid term matches nothing."""
    na = (pv.get("spec") or {}).get("nodeAffinity")
    if not na:
        return True
    required = na.get("required")
    if required is None:
        return True
    try:
        sel = NodeSelector.parse(required, "spec.nodeAffinity.required")
    except InvalidObjectError:
        # MatchNodeSelectorTerms skips terms it cannot parse.
        return _match_valid_terms(required, node_labels)
    return sel.matches(node_labels, "")


def _match_valid_terms(required: Mapping[str, Any], node_labels: Mapping[str, str]) -> bool:
    for i, term in enumerate(required.get("nodeSelectorTerms") or []):
        try:
            sel = NodeSelector.parse({"nodeSelectorTerms": [term]}, f"nodeSelectorTerms[{i}]")
        except InvalidObjectError:
            continue
        if sel.matches(node_labels, ""):
            return True
    return False


def access_modes(obj: Mapping[str, Any]) -> list[str]:
    return [str(m) for m in (obj.get("spec") or {}).get("accessModes") or []]


def check_access_modes(pvc: Mapping[str, Any], pv: Mapping[str, Any]) -> bool:
    """CheckAccessModes: the PV has every access mode the claim asks for."""
    pv_modes = set(access_modes(pv))
    return all(m in pv_modes for m in access_modes(pvc))


def check_volume_mode_mismatches(pvc: Mapping[str, Any], pv: Mapping[str, Any]) -> bool:
    """CheckVolumeModeMismatches: True when the volume modes differ (nil is Filesystem)."""
    want = (pvc.get("spec") or {}).get("volumeMode") or "Filesystem"
    have = (pv.get("spec") or {}).get("volumeMode") or "Filesystem"
    return want != have


def is_volume_bound_to_claim(pv: Mapping[str, Any], pvc: Mapping[str, Any]) -> bool:
    """IsVolumeBoundToClaim: the PV's claimRef names the claim (and its UID, when set)."""
    ref = (pv.get("spec") or {}).get("claimRef")
    if not ref:
        return False
    md = meta(pvc)
    if str(md.get("name") or "") != str(ref.get("name") or "") or str(md.get("namespace") or "default") != str(
        ref.get("namespace") or "default"
    ):
        return False
    ref_uid = str(ref.get("uid") or "")
    return not (ref_uid and ref_uid != str(md.get("uid") or ""))


def match_topology_selector_terms(terms: Any, labels: Mapping[str, str]) -> bool:
    """v1helper.MatchTopologySelectorTerms: no terms match everything; terms are ORed, the
    label expressions of a term ANDed (key present and value among the values)."""
    if not terms:
        return True
    for term in terms:
        ok = True
        for req in (term or {}).get("matchLabelExpressions") or []:
            key = req.get("key")
            if key not in labels or labels[key] not in (req.get("values") or []):
                ok = False
                break
        if ok:
            return True
    return False


def label_selector_matches(selector: Mapping[str, Any] | None, labels: Mapping[str, str]) -> bool:
    """metav1.LabelSelectorAsSelector(sel).Matches(labels); nil selects nothing."""
    return LabelSelector.parse(selector).matches(labels)


class ObjectCache:
    """Per-cycle lookups through ``handle.objects`` (kube-scheduler reads informer caches;
    kubesched reads the object client once per object per cycle)."""

    __slots__ = ("_classes", "_objects", "_pvcs")

    def __init__(self, objects: Any) -> None:
        self._objects = objects
        self._pvcs: dict[tuple[str, str], dict[str, Any] | None] = {}
        self._classes: dict[str, dict[str, Any] | None] = {}

    def pvc(self, namespace: str, name: str) -> dict[str, Any] | None:
        key = (namespace, name)
        try:
            return self._pvcs[key]
        except KeyError:
            pass
        try:
            obj: dict[str, Any] | None = self._objects.get(PV_API, "PersistentVolumeClaim", name, namespace)
        except ObjectNotFound:
            obj = None
        self._pvcs[key] = obj
        return obj

    def storage_class(self, name: str) -> dict[str, Any] | None:
        try:
            return self._classes[name]
        except KeyError:
            pass
        try:
            obj: dict[str, Any] | None = self._objects.get(SC_API, "StorageClass", name)
        except ObjectNotFound:
            obj = None
        self._classes[name] = obj
        return obj
