"""The volume binder: kube-scheduler's ``SchedulerVolumeBinder`` (``volumebinding/binder.go``,
v1.36), over API dicts read through ``handle.objects``. v1.36 replaced the assume caches by
``passive_assume_cache.go``: assuming an object whose resourceVersion is not the stored one
fails with ``"<key>" is out of sync (stored: X, assume: Y)``, a missing object is
``persistentvolumes "<name>" not found`` / ``persistentvolumeclaims "<ns>/<name>" not found``
(the messages of ``error getting PVC``, ``failed to check binding`` and ``failed to check
provisioning pvc``), and restoring drops only the assumed version that was given back.

kube-scheduler keeps assume caches of PVs and PVCs fed by informers: Reserve *assumes* a PV
pre-bound to its claim (and a claim annotated with the selected node) so that the next pods
do not pick the same PV while the binding cycle is still running. ``AssumeCache`` below does
the same over the object client: an assumed object hides the stored one until it is restored
(Unreserve) or the stored object changes (the API update arrived).

Simplifications, each kept conservative:

* in-tree PV -> CSI translation (``tryTranslatePVToCSI``) is not done: PV node affinity is
  checked as written on the PV;
* ``BindPodVolumes`` completes the static bindings itself (see ``bind_api_update``) and does
  not wait for an external provisioner to provision dynamically provisioned claims; it checks
  the bindings at once instead of after the first 1 s poll interval, and polls (1 s) no longer
  than ``bindTimeoutSeconds`` for what is still pending.
"""

from __future__ import annotations

import copy
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kubesched.sdk import InvalidObjectError, LabelSelector, Node, ObjectNotFound, Pod

from .storage_helpers import (
    ANN_BIND_COMPLETED,
    ANN_BOUND_BY_CONTROLLER,
    ANN_SELECTED_NODE,
    NOT_SUPPORTED_PROVISIONER,
    PV_API,
    ObjectCache,
    check_access_modes,
    check_node_affinity,
    check_volume_mode_mismatches,
    claim_key,
    get_pv_class,
    get_pvc_class,
    is_volume_bound_to_claim,
    labels_of,
    match_topology_selector_terms,
    meta,
    not_found_message,
    pvc_name_of_volume,
    quantity,
    storage_request,
    volume_is_for_pod,
)

__all__ = [
    "ERR_REASON_BIND_CONFLICT",
    "ERR_REASON_NODE_CONFLICT",
    "ERR_REASON_NOT_ENOUGH_SPACE",
    "ERR_REASON_PV_NOT_EXIST",
    "AssumeCache",
    "BinderError",
    "BindingInfo",
    "DynamicProvision",
    "PodVolumeClaims",
    "PodVolumes",
    "VolumeBinder",
]

ERR_REASON_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
ERR_REASON_NODE_CONFLICT = "node(s) didn't match PersistentVolume's node affinity"
ERR_REASON_NOT_ENOUGH_SPACE = "node(s) did not have enough free storage"
ERR_REASON_PV_NOT_EXIST = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"


class BinderError(Exception):
    """An error of the binder; its message becomes the Status message (framework.AsStatus)."""


@dataclass
class BindingInfo:
    """A PVC and the PV proposed for it."""

    pvc: dict[str, Any]
    pv: dict[str, Any]

    def storage_class_name(self) -> str:
        return str((self.pv.get("spec") or {}).get("storageClassName") or "")

    def storage_resource(self) -> tuple[int, int]:
        """(requested, capacity) in bytes (Quantity.Value() rounds up)."""
        req = storage_request(self.pvc)
        cap = quantity(((self.pv.get("spec") or {}).get("capacity") or {}).get("storage"))
        return _value(req), _value(cap)


@dataclass
class DynamicProvision:
    """A PVC to provision, with the CSIStorageCapacity found for it on the node (if any)."""

    pvc: dict[str, Any]
    node_capacity: dict[str, Any] | None = None


@dataclass
class PodVolumes:
    static_bindings: list[BindingInfo] = field(default_factory=list)
    dynamic_provisions: list[DynamicProvision] = field(default_factory=list)


@dataclass
class PodVolumeClaims:
    bound_claims: list[dict[str, Any]] = field(default_factory=list)
    unbound_claims_delay_binding: list[dict[str, Any]] = field(default_factory=list)
    unbound_claims_immediate: list[dict[str, Any]] = field(default_factory=list)
    #: storage class name -> the PVs of that class (for the delay-binding claims)
    unbound_volumes_delay_binding: dict[str, list[dict[str, Any]]] = field(default_factory=dict)


def _value(q: Any) -> int:
    """resource.Quantity.Value(): rounded up to an integer."""
    return -((-q.numerator) // q.denominator)


def _rv(obj: dict[str, Any] | None) -> str:
    return str(meta(obj).get("resourceVersion") or "")


class AssumeCache:
    """Assumed versions of one kind of object, over the object client (v1.36
    ``passive_assume_cache.go``: an assumed object has the stored object's resourceVersion and
    hides it until the stored object changes)."""

    def __init__(self, get: Callable[[str], dict[str, Any] | None], resource: str) -> None:
        self._get = get
        #: the API resource, for NotFound messages (``persistentvolumes "x" not found``)
        self.resource = resource
        self._assumed: dict[str, tuple[dict[str, Any], str]] = {}
        self._lock = threading.Lock()

    def not_found(self, key: str) -> str:
        """apierrors.NewNotFound(gr, key) as the assume cache builds it."""
        return f'{self.resource} "{key}" not found'

    def assume(self, key: str, obj: dict[str, Any]) -> None:
        """Hide the stored object behind ``obj`` until :meth:`restore` or until it changes."""
        base = self._get(key)
        if base is None:
            raise BinderError(self.not_found(key))
        if _rv(base) != _rv(obj):
            raise BinderError(f'"{key}" is out of sync (stored: {_rv(base)}, assume: {_rv(obj)})')
        with self._lock:
            self._assumed[key] = (obj, _rv(base))

    def restore(self, key: str, obj: dict[str, Any]) -> None:
        """Drop the assumed version of ``key`` if it is ``obj``'s (same resourceVersion)."""
        with self._lock:
            entry = self._assumed.get(key)
            if entry is not None and _rv(entry[0]) == _rv(obj):
                del self._assumed[key]

    def overlay(self, key: str, api_obj: dict[str, Any] | None) -> dict[str, Any] | None:
        """The assumed version of ``api_obj`` (the stored object), if it is still current."""
        with self._lock:
            entry = self._assumed.get(key)
            if entry is None:
                return api_obj
            obj, base_rv = entry
            if api_obj is None or _rv(api_obj) != base_rv:
                # The informer would have delivered a newer object: it replaces the assumed one.
                del self._assumed[key]
                return api_obj
            return obj

    def __len__(self) -> int:
        return len(self._assumed)


class VolumeBinder:
    """kube-scheduler's volumeBinder."""

    def __init__(self, handle: Any, bind_timeout_seconds: float) -> None:
        self._handle = handle
        self._objects = handle.objects
        self.bind_timeout = float(bind_timeout_seconds)
        self.pv_cache = AssumeCache(self._api_pv, "persistentvolumes")
        self.pvc_cache = AssumeCache(self._api_pvc_by_key, "persistentvolumeclaims")
        #: seconds between two checks of the bindings at PreBind (Go polls every second)
        self.poll_interval = 1.0

    # API access ---------------------------------------------------------------------------
    def _api_pv(self, name: str) -> dict[str, Any] | None:
        try:
            return self._objects.get(PV_API, "PersistentVolume", name)
        except ObjectNotFound:
            return None

    def _api_pvc_by_key(self, key: str) -> dict[str, Any] | None:
        ns, _, name = key.partition("/")
        try:
            return self._objects.get(PV_API, "PersistentVolumeClaim", name, ns)
        except ObjectNotFound:
            return None

    def get_pv(self, name: str, all_pvs: dict[str, dict[str, Any]] | None = None) -> dict[str, Any] | None:
        api = all_pvs.get(name) if all_pvs is not None else self._api_pv(name)
        return self.pv_cache.overlay(name, api)

    def get_pvc(self, namespace: str, name: str, cache: ObjectCache | None = None) -> dict[str, Any] | None:
        key = f"{namespace}/{name}"
        api = cache.pvc(namespace, name) if cache is not None else self._api_pvc_by_key(key)
        return self.pvc_cache.overlay(key, api)

    def list_pvs(self) -> dict[str, dict[str, Any]]:
        """All PVs by name, assumed versions applied."""
        out: dict[str, dict[str, Any]] = {}
        for pv in self._objects.list(PV_API, "PersistentVolume"):
            name = str(meta(pv).get("name") or "")
            ov = self.pv_cache.overlay(name, pv)
            if ov is not None:
                out[name] = ov
        return out

    # GetPodVolumeClaims ---------------------------------------------------------------------
    @staticmethod
    def is_pvc_fully_bound(pvc: dict[str, Any]) -> bool:
        return bool((pvc.get("spec") or {}).get("volumeName")) and ANN_BIND_COMPLETED in (
            meta(pvc).get("annotations") or {}
        )

    def is_volume_bound(
        self, pod: Pod, vol: Mapping[str, Any], cache: ObjectCache | None = None
    ) -> tuple[bool, dict[str, Any] | None]:
        """isVolumeBound: (fully bound, the claim); a volume without a claim is bound.
        Raises BinderError."""
        pvc_name, is_ephemeral = pvc_name_of_volume(pod, vol)
        if pvc_name is None:
            return True, None
        pvc = self.get_pvc(pod.namespace, pvc_name, cache)
        if pvc is None:
            key = f"{pod.namespace}/{pvc_name}"
            raise BinderError(f'error getting PVC "{key}": {self.pvc_cache.not_found(key)}')
        if is_ephemeral:
            err = volume_is_for_pod(pod, pvc)
            if err:
                raise BinderError(err)
        return self.is_pvc_fully_bound(pvc), pvc

    def are_pod_volumes_bound(self, pod: Pod) -> bool:
        for vol in pod.volumes:
            try:
                bound, _ = self.is_volume_bound(pod, vol)
            except BinderError:
                return False
            if not bound:
                return False
        return True

    def is_delay_binding_mode(self, pvc: dict[str, Any], cache: ObjectCache) -> bool:
        """volume.IsDelayBindingMode."""
        class_name = get_pvc_class(pvc)
        if not class_name:
            return False
        sc = cache.storage_class(class_name)
        if sc is None:
            return False
        mode = sc.get("volumeBindingMode")
        if mode is None:
            raise BinderError(f'VolumeBindingMode not set for StorageClass "{class_name}"')
        return mode == "WaitForFirstConsumer"

    def get_pod_volume_claims(self, pod: Pod, cache: ObjectCache) -> PodVolumeClaims:
        claims = PodVolumeClaims()
        for vol in pod.volumes:
            bound, pvc = self.is_volume_bound(pod, vol, cache)
            if pvc is None:
                continue
            if bound:
                claims.bound_claims.append(pvc)
                continue
            delay = self.is_delay_binding_mode(pvc, cache)
            if delay and not (pvc.get("spec") or {}).get("volumeName"):
                claims.unbound_claims_delay_binding.append(pvc)
            else:
                # Prebound PVCs are treated as unbound immediate binding.
                claims.unbound_claims_immediate.append(pvc)
        if claims.unbound_claims_delay_binding:
            all_pvs = self.list_pvs()
            for pvc in claims.unbound_claims_delay_binding:
                cls = get_pvc_class(pvc)
                claims.unbound_volumes_delay_binding[cls] = [pv for pv in all_pvs.values() if get_pv_class(pv) == cls]
        return claims

    # FindPodVolumes ---------------------------------------------------------------------------
    def find_pod_volumes(
        self, pod: Pod, claims: PodVolumeClaims, node: Node, pvs: Callable[[], dict[str, dict[str, Any]]], cache: Any
    ) -> tuple[PodVolumes, list[str]]:
        """(pod volumes, conflict reasons); raises BinderError."""
        unbound_satisfied = True
        bound_satisfied = True
        sufficient_storage = True
        bound_pvs_found = True
        static: list[BindingInfo] = []
        dynamic: list[DynamicProvision] = []

        def result() -> tuple[PodVolumes, list[str]]:
            reasons = []
            if not bound_satisfied:
                reasons.append(ERR_REASON_NODE_CONFLICT)
            if not unbound_satisfied:
                reasons.append(ERR_REASON_BIND_CONFLICT)
            if not sufficient_storage:
                reasons.append(ERR_REASON_NOT_ENOUGH_SPACE)
            if not bound_pvs_found:
                reasons.append(ERR_REASON_PV_NOT_EXIST)
            return PodVolumes(static, dynamic), reasons

        if claims.bound_claims:
            bound_satisfied, bound_pvs_found = self.check_bound_claims(claims.bound_claims, node, pvs())

        if claims.unbound_claims_delay_binding:
            to_match: list[dict[str, Any]] = []
            to_provision: list[dict[str, Any]] = []
            for claim in claims.unbound_claims_delay_binding:
                ann = meta(claim).get("annotations") or {}
                if ANN_SELECTED_NODE in ann:
                    if ann[ANN_SELECTED_NODE] != node.name:
                        # Fast path, skip unmatched node.
                        unbound_satisfied = False
                        return result()
                    to_provision.append(claim)
                else:
                    to_match.append(claim)
            if to_match:
                unbound_satisfied, static, unbound = self.find_matching_volumes(
                    to_match, claims.unbound_volumes_delay_binding, node
                )
                to_provision.extend(unbound)
            if to_provision:
                unbound_satisfied, sufficient_storage, dynamic = self.check_volume_provisions(to_provision, node, cache)
        return result()

    def check_bound_claims(
        self, claims: Iterable[dict[str, Any]], node: Node, pvs: dict[str, dict[str, Any]]
    ) -> tuple[bool, bool]:
        """(node affinity satisfied, all PVs found)."""
        labels = node.labels
        for pvc in claims:
            pv_name = str((pvc.get("spec") or {}).get("volumeName") or "")
            pv = self.get_pv(pv_name, pvs)
            if pv is None:
                return True, False
            if not check_node_affinity(pv, labels):
                return False, True
        return True, True

    def find_matching_volumes(
        self, claims: list[dict[str, Any]], pvs_by_class: dict[str, list[dict[str, Any]]], node: Node
    ) -> tuple[bool, list[BindingInfo], list[dict[str, Any]]]:
        """(all matched, bindings, claims left for provisioning). Claims are taken smallest
        request first so that each gets the smallest PV that fits."""
        chosen: set[str] = set()
        bindings: list[BindingInfo] = []
        unbound: list[dict[str, Any]] = []
        found = True
        for pvc in sorted(claims, key=storage_request):
            pv = find_matching_volume(pvc, pvs_by_class.get(get_pvc_class(pvc), []), node, chosen, True)
            if pv is None:
                unbound.append(pvc)
                found = False
                continue
            chosen.add(str(meta(pv).get("name") or ""))
            bindings.append(BindingInfo(pvc=pvc, pv=pv))
        return found, bindings, unbound

    def check_volume_provisions(
        self, claims: list[dict[str, Any]], node: Node, cache: Any
    ) -> tuple[bool, bool, list[DynamicProvision]]:
        """(provisioning possible, enough storage, the claims to provision)."""
        out: list[DynamicProvision] = []
        for claim in claims:
            class_name = get_pvc_class(claim)
            if not class_name:
                raise BinderError(f'no class for claim "{claim_key(claim)}"')
            sc = cache.storage_class(class_name)
            if sc is None:
                raise BinderError(f'failed to find storage class "{class_name}"')
            provisioner = str(sc.get("provisioner") or "")
            if not provisioner or provisioner == NOT_SUPPORTED_PROVISIONER:
                return False, True, []
            if not match_topology_selector_terms(sc.get("allowedTopologies"), node.labels):
                return False, True, []
            sufficient, capacity = self.has_enough_capacity(provisioner, claim, sc, node, cache)
            if not sufficient:
                return True, False, []
            out.append(DynamicProvision(pvc=claim, node_capacity=capacity))
        return True, True, out

    def has_enough_capacity(
        self, provisioner: str, claim: dict[str, Any], sc: dict[str, Any], node: Node, cache: Any
    ) -> tuple[bool, dict[str, Any] | None]:
        requests = ((claim.get("spec") or {}).get("resources") or {}).get("requests") or {}
        if "storage" not in requests:
            return True, None
        driver = cache.csi_driver(provisioner)
        if driver is None:
            # Not a CSI driver, or one that does not opt into capacity tracking.
            return True, None
        if not (driver.get("spec") or {}).get("storageCapacity"):
            return True, None
        size = _value(quantity(requests["storage"]))
        sc_name = str(meta(sc).get("name") or "")
        for cap in cache.csi_storage_capacities():
            if (
                cap.get("storageClassName") == sc_name
                and capacity_sufficient(cap, size)
                and node_has_access(node, cap)
            ):
                return True, cap
        return False, None

    # AssumePodVolumes / Revert ------------------------------------------------------------------
    def assume_pod_volumes(self, pod: Pod, node_name: str, pod_volumes: PodVolumes) -> bool:
        """Assume the bindings and provisions; True when every volume is already bound."""
        if self.are_pod_volumes_bound(pod):
            return True
        new_bindings: list[BindingInfo] = []
        for b in pod_volumes.static_bindings:
            new_pv, dirty = get_bind_volume_to_claim(b.pv, b.pvc)
            if dirty:
                try:
                    self.pv_cache.assume(str(meta(new_pv).get("name")), new_pv)
                except BinderError:
                    self.revert_pvs(new_bindings)
                    raise
            new_bindings.append(BindingInfo(pvc=b.pvc, pv=new_pv))
        new_provisions: list[DynamicProvision] = []
        for p in pod_volumes.dynamic_provisions:
            clone = copy.deepcopy(p.pvc)
            clone.setdefault("metadata", {}).setdefault("annotations", {})[ANN_SELECTED_NODE] = node_name
            try:
                self.pvc_cache.assume(claim_key(clone), clone)
            except BinderError:
                self.revert_pvs(new_bindings)
                self.revert_pvcs(new_provisions)
                raise
            new_provisions.append(DynamicProvision(pvc=clone, node_capacity=p.node_capacity))
        pod_volumes.static_bindings = new_bindings
        pod_volumes.dynamic_provisions = new_provisions
        return False

    def revert_pvs(self, bindings: Iterable[BindingInfo]) -> None:
        for b in bindings:
            self.pv_cache.restore(str(meta(b.pv).get("name") or ""), b.pv)

    def revert_pvcs(self, provisions: Iterable[DynamicProvision]) -> None:
        for p in provisions:
            self.pvc_cache.restore(claim_key(p.pvc), p.pvc)

    def revert_assumed_pod_volumes(self, pod_volumes: PodVolumes) -> None:
        self.revert_pvs(pod_volumes.static_bindings)
        self.revert_pvcs(pod_volumes.dynamic_provisions)

    # BindPodVolumes ------------------------------------------------------------------------------
    def bind_pod_volumes(self, pod: Pod, node_name: str, pod_volumes: PodVolumes) -> None:
        """Make the API updates, then wait (at most bindTimeoutSeconds) until the bindings
        are complete. Raises BinderError."""
        bindings = pod_volumes.static_bindings
        provisions = pod_volumes.dynamic_provisions
        self.bind_api_update(pod, bindings, provisions)
        deadline = time.monotonic() + self.bind_timeout
        while True:
            try:
                done = self.check_bindings(pod, node_name, bindings, provisions)
            except BinderError as e:
                raise BinderError(f"binding volumes: {e}") from None
            if done:
                return
            if time.monotonic() >= deadline:
                raise BinderError("binding volumes: context deadline exceeded")
            time.sleep(min(self.poll_interval, max(0.0, deadline - time.monotonic())))

    def bind_api_update(self, pod: Pod, bindings: list[BindingInfo], provisions: list[DynamicProvision]) -> None:
        """Prebind the PVs and trigger provisioning, as bindAPIUpdate does.

        kube-scheduler only writes ``spec.claimRef`` on the PV and lets the PV controller bind
        the claim. kubesched also runs on a simulated cluster where no PV controller exists, so
        it completes the binding the way the PV controller would: the PV gets the claimRef
        and phase Bound, the PVC gets ``spec.volumeName``, the bind-completed and
        bound-by-controller annotations, phase Bound, and the PV's capacity and access modes
        in its status. On a real cluster the PV controller sees a consistent binding and
        keeps it. Dynamically provisioned claims get the selected-node annotation; the
        external provisioner does the rest.
        """
        done_bindings = 0
        done_provisions = 0
        try:
            for b in bindings:
                pv_name = str(meta(b.pv).get("name") or "")
                claim_ref = (b.pv.get("spec") or {}).get("claimRef")
                pv_ann = meta(b.pv).get("annotations") or {}
                pv_patch: dict[str, Any] = {"spec": {"claimRef": claim_ref}, "status": {"phase": "Bound"}}
                if ANN_BOUND_BY_CONTROLLER in pv_ann:
                    pv_patch["metadata"] = {"annotations": {ANN_BOUND_BY_CONTROLLER: pv_ann[ANN_BOUND_BY_CONTROLLER]}}
                try:
                    new_pv = self._objects.patch(PV_API, "PersistentVolume", pv_name, pv_patch)
                except ObjectNotFound:
                    raise BinderError(not_found_message("PersistentVolume", pv_name)) from None
                pvc_md = meta(b.pvc)
                pv_spec = new_pv.get("spec") or {}
                pvc_status: dict[str, Any] = {"phase": "Bound"}
                if pv_spec.get("accessModes"):
                    pvc_status["accessModes"] = list(pv_spec["accessModes"])
                if pv_spec.get("capacity"):
                    pvc_status["capacity"] = dict(pv_spec["capacity"])
                pvc_patch = {
                    "metadata": {"annotations": {ANN_BIND_COMPLETED: "yes", ANN_BOUND_BY_CONTROLLER: "yes"}},
                    "spec": {"volumeName": pv_name},
                    "status": pvc_status,
                }
                try:
                    self._objects.patch(
                        PV_API, "PersistentVolumeClaim", str(pvc_md.get("name")), pvc_patch, pvc_md.get("namespace") or "default"
                    )
                except ObjectNotFound:
                    raise BinderError(not_found_message("PersistentVolumeClaim", str(pvc_md.get("name")))) from None
                b.pv = new_pv
                done_bindings += 1
            for i, p in enumerate(provisions):
                md = meta(p.pvc)
                node = (md.get("annotations") or {}).get(ANN_SELECTED_NODE, "")
                try:
                    new_claim = self._objects.patch(
                        PV_API,
                        "PersistentVolumeClaim",
                        str(md.get("name")),
                        {"metadata": {"annotations": {ANN_SELECTED_NODE: node}}},
                        md.get("namespace") or "default",
                    )
                except ObjectNotFound:
                    raise BinderError(not_found_message("PersistentVolumeClaim", str(md.get("name")))) from None
                provisions[i] = DynamicProvision(pvc=new_claim, node_capacity=p.node_capacity)
                done_provisions += 1
        finally:
            # Only revert the assumed objects that were not written.
            self.revert_pvs(bindings[done_bindings:])
            self.revert_pvcs(provisions[done_provisions:])

    def check_bindings(
        self, pod: Pod, node_name: str, bindings: list[BindingInfo], provisions: list[DynamicProvision]
    ) -> bool:
        """checkBindings over the stored objects: True when done; BinderError when the
        binding must be retried by scheduling the pod again."""
        node_labels = self._node_labels(node_name)
        try:
            self._objects.get("v1", "Pod", pod.name, pod.namespace)
        except ObjectNotFound:
            raise BinderError(
                f'pod does not exist any more: pod "{pod.name}" not found'
            ) from None
        for b in bindings:
            pv_name = str(meta(b.pv).get("name") or "")
            pv = self._api_pv(pv_name)
            if pv is None:
                raise BinderError(f"failed to check binding: {self.pv_cache.not_found(pv_name)}")
            pvc = self._api_pvc_by_key(claim_key(b.pvc))
            if pvc is None:
                raise BinderError(f"failed to check binding: {self.pvc_cache.not_found(claim_key(b.pvc))}")
            if not check_node_affinity(pv, node_labels):
                raise BinderError(f'pv "{pv_name}" node affinity doesn\'t match node "{node_name}": no matching NodeSelectorTerms')
            ref = (pv.get("spec") or {}).get("claimRef")
            if not ref or not ref.get("uid"):
                raise BinderError(f'ClaimRef got reset for pv "{pv_name}"')
            if not self.is_pvc_fully_bound(pvc):
                return False
        for p in provisions:
            pvc = self._api_pvc_by_key(claim_key(p.pvc))
            name = str(meta(p.pvc).get("name"))
            if pvc is None:
                raise BinderError(f"failed to check provisioning pvc: {self.pvc_cache.not_found(claim_key(p.pvc))}")
            ann = meta(pvc).get("annotations")
            if ann is None:
                raise BinderError(f'selectedNode annotation reset for PVC "{name}"')
            if ann.get(ANN_SELECTED_NODE, "") != node_name:
                raise BinderError(f'provisioning failed for PVC "{name}"')
            vol = (pvc.get("spec") or {}).get("volumeName")
            if vol:
                pv = self._api_pv(str(vol))
                if pv is None:
                    return False
                if not check_node_affinity(pv, node_labels):
                    raise BinderError(f'pv "{vol}" node affinity doesn\'t match node "{node_name}": no matching NodeSelectorTerms')
            # kube-scheduler waits here until the external provisioner has bound the claim;
            # kubesched does not (a simulated cluster has no provisioner): the selected-node
            # annotation is the hand-off.
        return True

    def _node_labels(self, node_name: str) -> dict[str, str]:
        try:
            ni = self._handle.snapshot().get(node_name)
            if ni.node is not None:
                return dict(ni.node.labels)
        except KeyError:
            pass
        try:
            return dict(labels_of(self._objects.get("v1", "Node", node_name)))
        except ObjectNotFound:
            raise BinderError(f'failed to get node "{node_name}": node "{node_name}" not found') from None


# helpers from component-helpers/storage/volume --------------------------------------------------


def get_bind_volume_to_claim(pv: dict[str, Any], pvc: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """GetBindVolumeToClaim: a copy of the PV bound to the claim, and whether it changed."""
    dirty = False
    should_set_bound_by_controller = not is_volume_bound_to_claim(pv, pvc)
    clone = copy.deepcopy(pv)
    spec = clone.setdefault("spec", {})
    ref = spec.get("claimRef") or None
    md = meta(pvc)
    if (
        ref is None
        or ref.get("name") != md.get("name")
        or (ref.get("namespace") or "default") != (md.get("namespace") or "default")
        or str(ref.get("uid") or "") != str(md.get("uid") or "")
    ):
        spec["claimRef"] = {
            "kind": "PersistentVolumeClaim",
            "namespace": md.get("namespace") or "default",
            "name": md.get("name"),
            "uid": md.get("uid") or "",
            "apiVersion": "v1",
            "resourceVersion": str(md.get("resourceVersion") or ""),
        }
        dirty = True
    ann = clone.setdefault("metadata", {}).setdefault("annotations", {})
    if should_set_bound_by_controller and ANN_BOUND_BY_CONTROLLER not in ann:
        ann[ANN_BOUND_BY_CONTROLLER] = "yes"
        dirty = True
    return clone, dirty


def find_matching_volume(
    pvc: dict[str, Any],
    volumes: Iterable[dict[str, Any]],
    node: Node | None,
    excluded: set[str],
    delay_binding: bool,
) -> dict[str, Any] | None:
    """volume.FindMatchingVolume (VolumeAttributesClass is GA in v1.34, so always on): a PV
    pre-bound to the claim, else the smallest available PV that fits. Raises BinderError for
    an invalid claim selector."""
    spec = pvc.get("spec") or {}
    requested = storage_request(pvc)
    requested_class = get_pvc_class(pvc)
    selector = None
    if spec.get("selector") is not None:
        try:
            selector = LabelSelector.parse(spec["selector"], "spec.selector")
        except InvalidObjectError as e:
            raise BinderError(f"error creating internal label selector for claim: {claim_key(pvc)}: {e}") from None
    claim_vac = str(spec.get("volumeAttributesClassName") or "")
    smallest = None
    smallest_qty = None
    for pv in volumes:
        pv_md = meta(pv)
        if str(pv_md.get("name") or "") in excluded:
            continue
        pv_spec = pv.get("spec") or {}
        if pv_spec.get("claimRef") and not is_volume_bound_to_claim(pv, pvc):
            continue
        pv_qty = quantity((pv_spec.get("capacity") or {}).get("storage"))
        if pv_qty < requested:
            continue
        if check_volume_mode_mismatches(pvc, pv):
            continue
        if claim_vac != str(pv_spec.get("volumeAttributesClassName") or ""):
            continue
        if pv_md.get("deletionTimestamp"):
            continue
        affinity_ok = True
        if node is not None:
            affinity_ok = check_node_affinity(pv, node.labels)
        if is_volume_bound_to_claim(pv, pvc):
            return pv if affinity_ok else None
        if node is None and delay_binding:
            continue
        if ((pv.get("status") or {}).get("phase") or "") != "Available":
            continue
        if selector is not None and not selector.matches(labels_of(pv)):
            continue
        if get_pv_class(pv) != requested_class:
            continue
        if not affinity_ok:
            continue
        if node is not None and not check_access_modes(pvc, pv):
            continue
        if smallest is None or smallest_qty is None or smallest_qty > pv_qty:
            smallest = pv
            smallest_qty = pv_qty
    return smallest


def volume_limit(capacity: dict[str, Any] | None) -> Any:
    """volumeLimit: maximumVolumeSize if set (more precise), else capacity; None if neither."""
    if capacity is None:
        return None
    if capacity.get("maximumVolumeSize") is not None:
        return quantity(capacity["maximumVolumeSize"])
    if capacity.get("capacity") is not None:
        return quantity(capacity["capacity"])
    return None


def capacity_sufficient(capacity: dict[str, Any], size_in_bytes: int) -> bool:
    limit = volume_limit(capacity)
    return limit is not None and _value(limit) >= size_in_bytes


def node_has_access(node: Node, capacity: dict[str, Any]) -> bool:
    topology = capacity.get("nodeTopology")
    if topology is None:
        return False
    try:
        return LabelSelector.parse(topology, "nodeTopology").matches(node.labels)
    except InvalidObjectError:
        return False
