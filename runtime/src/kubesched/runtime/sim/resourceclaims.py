"""The resourceclaim controller of the simulated cluster (docs/simulator.md, "Dynamic resource
allocation"): what kube-controller-manager's ``pkg/controller/resourceclaim/controller.go``
(v1.36.3) does for pods, so that pods with ResourceClaims run in ``kubesched simulate`` as on a
real cluster.

* A pod's ``spec.resourceClaims`` entry with ``resourceClaimTemplateName`` gets a ResourceClaim
  made from the template (``handleClaim``): named ``<pod>-<podClaimName>-`` (both parts cut in
  proportion when that is longer than 57 characters, as Go cuts them) plus a deterministic
  5-character suffix, in the pod's namespace, controlled by the pod (``ownerReferences``), with
  the template's labels and annotations, the annotation ``resource.kubernetes.io/pod-claim-name``
  and the template's spec; the pod's ``status.resourceClaimStatuses`` then names it (the
  scheduler waits for that: PreEnqueue's ``ResourceClaim not created yet``). A missing template
  is a Warning event ``FailedResourceClaimCreation`` on the pod; the claim is made when the
  template arrives.
* A bound pod whose claim is allocated but not reserved for it gets the reservation
  (``syncPod``).
* When a pod is deleted or done (phase Succeeded or Failed), it is removed from its claims'
  ``status.reservedFor`` (``syncClaim``); a claim no pod reserves any more is deallocated when
  it carries the scheduler's finalizer ``resource.kubernetes.io/delete-protection`` (allocation
  and finalizer removed), and a claim made for a pod that is gone or done is deleted (by the
  controller, or by the garbage collector when the pod is deleted).

Every claim the run saw is remembered (:meth:`ResourceClaimController.rows`): ``kubesched
simulate`` reports each one's allocation (node, and driver/pool/device per request) and status
(Allocated, Pending, Deallocated or Deleted, the last two with the allocation they had).

The file's pods are created after its other objects: a claim of the file reserved for, or owned
by, a pod not in the cluster yet keeps its reservation and is not deleted (Go's controller asks
the API server; here only a deletion the run saw counts).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from kubesched.sdk import ObjectConflict, ObjectNotFound
from kubesched.sdk._text import cut

from ..kinds import RESOURCE_API_VERSION
from ..objectstore import ObjectInvalid
from .controllers import _suffix

__all__ = [
    "POD_CLAIM_NAME_ANNOTATION",
    "ResourceClaimController",
    "claim_row",
    "generate_name",
    "uses_claims",
    "validate_claim_status_update",
]

#: resourceapi.PodResourceClaimAnnotation
POD_CLAIM_NAME_ANNOTATION = "resource.kubernetes.io/pod-claim-name"
#: resourceapi.Finalizer: the delete protection the scheduler adds with an allocation
FINALIZER = "resource.kubernetes.io/delete-protection"
#: Go's maxBaseLen: room for 5 random characters in a name of 63
MAX_BASE_LEN = 57
#: resource.ResourceClaimReservedForMaxSize
RESERVED_FOR_MAX_SIZE = 256

_CLAIM = "ResourceClaim"
_TEMPLATE = "ResourceClaimTemplate"


def generate_name(pod_name: str, pod_claim_name: str) -> str:
    """The claim's ``generateName`` as ``handleClaim`` makes it: ``<pod>-<podClaim>-``, or, when
    that is longer than 57 bytes, both names cut in proportion (Go's integer arithmetic) and
    joined by one hyphen."""
    gen = f"{pod_name}-{pod_claim_name}-"
    n = len(gen.encode())
    if n <= MAX_BASE_LEN:
        return gen
    pod_b, claim_b = pod_name.encode(), pod_claim_name.encode()
    return (pod_b[: len(pod_b) * MAX_BASE_LEN // n] + b"-" + claim_b[: len(claim_b) * MAX_BASE_LEN // n]).decode(errors="ignore")


def uses_claims(objects: Iterable[Any]) -> bool:
    """Whether a cluster file needs the controller: it has resource.k8s.io objects, or a pod (or
    a workload's pod template) with ``spec.resourceClaims``."""
    for obj in objects:
        if not isinstance(obj, Mapping):
            continue
        if str(obj.get("apiVersion") or "").startswith("resource.k8s.io/"):
            return True
        spec = obj.get("spec")
        if not isinstance(spec, Mapping):
            continue
        if obj.get("kind") == "Pod" and spec.get("resourceClaims"):
            return True
        tmpl = spec.get("template")
        tspec = tmpl.get("spec") if isinstance(tmpl, Mapping) else None
        if isinstance(tspec, Mapping) and tspec.get("resourceClaims"):
            return True
    return False


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return _map(obj.get("metadata"))


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _pod_claims(pod: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    spec = pod.get("spec")
    claims = spec.get("resourceClaims") if isinstance(spec, Mapping) else None
    return [c for c in claims if isinstance(c, Mapping)] if isinstance(claims, list) else []


def _extended_claim(pod: Mapping[str, Any]) -> str | None:
    """The claim the scheduler made for the pod's extended resources a DeviceClass serves
    (``status.extendedResourceClaimStatus.resourceClaimName``, DRAExtendedResource)."""
    status = pod.get("status")
    ext = status.get("extendedResourceClaimStatus") if isinstance(status, Mapping) else None
    name = ext.get("resourceClaimName") if isinstance(ext, Mapping) else None
    return str(name) if name else None


def _claim_statuses(pod: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    status = pod.get("status")
    got = status.get("resourceClaimStatuses") if isinstance(status, Mapping) else None
    return [s for s in got if isinstance(s, Mapping)] if isinstance(got, list) else []


def _is_done(pod: Mapping[str, Any]) -> bool:
    """``isPodDone``: a terminal phase, or deleted before it was scheduled."""
    status = pod.get("status")
    phase = status.get("phase") if isinstance(status, Mapping) else None
    if phase in ("Succeeded", "Failed"):
        return True
    spec = pod.get("spec")
    return bool(_meta(pod).get("deletionTimestamp")) and not (isinstance(spec, Mapping) and spec.get("nodeName"))


def _owning_pod(claim: Mapping[str, Any]) -> tuple[str, str] | None:
    """``owningPod``: (name, uid) of the pod controlling the claim, or None."""
    for ref in _meta(claim).get("ownerReferences") or ():
        if isinstance(ref, Mapping) and ref.get("controller") and ref.get("apiVersion") == "v1" and ref.get("kind") == "Pod":
            return str(ref.get("name")), str(ref.get("uid"))
    return None


def _owned_by(claim: Mapping[str, Any], pod_uid: str) -> bool:
    return any(isinstance(ref, Mapping) and ref.get("controller") and ref.get("uid") == pod_uid for ref in _meta(claim).get("ownerReferences") or ())


def _claim_name(pod: Mapping[str, Any], pod_claim: Mapping[str, Any]) -> tuple[str | None, bool, bool]:
    """``resourceclaim.Name``: (claim name or None, whether the pod must own it, whether the
    name is known). A template claim the controller has not made yet is (None, True, False);
    an entry of neither kind (None, False, False)."""
    name = pod_claim.get("resourceClaimName")
    if isinstance(name, str):
        return name, False, True
    if pod_claim.get("resourceClaimTemplateName") is not None:
        for st in _claim_statuses(pod):
            if st.get("name") == pod_claim.get("name"):
                got = st.get("resourceClaimName")
                return (got if isinstance(got, str) else None), True, True
        return None, True, False
    return None, False, False


class ResourceClaimController:
    """The resourceclaim controller over the simulated cluster's ObjectStore; subscribe
    :meth:`on_event` to the store after the scheduler. ``now()`` gives the claims' creation
    time; ``event(regarding, type, reason, action, note)`` records an event (the cluster's)."""

    def __init__(self, store: Any, *, now: Callable[[], str] | None = None, event: Callable[..., None] | None = None) -> None:
        self.store = store
        self._now = now
        self._event = event
        #: (namespace, template name) -> pods (namespace, name) waiting for that template
        self._waiting: dict[tuple[str, str], dict[tuple[str, str], None]] = {}
        #: (namespace, name) of every claim seen -> its report row (see :func:`claim_row`)
        self._rows: dict[tuple[str, str], dict[str, Any]] = {}
        #: uids of the pods with claims the run deleted
        self._deleted: set[str] = set()
        store.add_validator(RESOURCE_API_VERSION, _CLAIM, validate_claim_status_update)

    # the store's events ------------------------------------------------------------------------
    def on_event(self, etype: str, kind: str, old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> None:
        if kind == "Pod":
            if etype == "DELETED":
                assert old is not None
                if _pod_claims(old) or _extended_claim(old):
                    self._deleted.add(str(_meta(old).get("uid")))
                    self._release(old)
                return
            assert new is not None
            if not _pod_claims(new):
                # Go's enqueuePod: the extended resources' claim is cleaned up as well
                if _extended_claim(new) and _is_done(new):
                    self._release(new)
                return
            if _is_done(new):
                self._release(new)
            elif not _meta(new).get("deletionTimestamp"):
                self._sync_pod(new)
        elif kind == _CLAIM:
            self._note_claim(etype, old, new)
            if new is not None:
                self._sync_claim(new)
        elif kind == _TEMPLATE and etype == "ADDED" and new is not None:
            md = _meta(new)
            waiting = self._waiting.pop((str(md.get("namespace") or "default"), str(md.get("name"))), {})
            for ns, name in waiting:
                pod = self.store.peek("v1", "Pod", name, ns)
                if pod is not None and not _is_done(pod) and not _meta(pod).get("deletionTimestamp"):
                    self._sync_pod(pod)

    # syncPod / handleClaim -----------------------------------------------------------------------
    def _sync_pod(self, pod: Mapping[str, Any]) -> None:
        md = _meta(pod)
        ns, name = str(md.get("namespace") or "default"), str(md.get("name"))
        new: dict[str, str] = {}
        for pc in _pod_claims(pod):
            try:
                created = self._handle_claim(pod, pc)
            except _Failed as e:
                if self._event is not None:
                    self._event(pod, "Warning", "FailedResourceClaimCreation", "", f"PodResourceClaim {cut(pc.get('name'))}: {e}")
                return  # Go's syncPod stops at the first claim that fails
            if created is not None:
                new[str(pc.get("name"))] = created
        if new:
            statuses = [dict(s) for s in _claim_statuses(pod) if s.get("name") not in new]
            statuses += [{"name": k, "resourceClaimName": v} for k, v in new.items()]
            pod = self.store.apply_patch("v1", "Pod", name, {"status": {"resourceClaimStatuses": statuses}}, ns)
        if not (pod.get("spec") or {}).get("nodeName"):
            return  # the scheduler reserves the claims
        uid = str(_meta(pod).get("uid"))
        for pc in _pod_claims(pod):
            cname, check_owner, known = _claim_name(pod, pc)
            if cname is None:
                continue
            claim = self.store.peek(RESOURCE_API_VERSION, _CLAIM, cname, ns)
            if claim is None or (check_owner and not _owned_by(claim, uid)):
                continue
            status = claim.get("status") or {}
            reserved = status.get("reservedFor") or []
            if status.get("allocation") and not any(r.get("uid") == uid for r in reserved):
                ref = {"resource": "pods", "name": name, "uid": uid}
                try:
                    self.store.apply_patch(RESOURCE_API_VERSION, _CLAIM, cname, {"status": {"reservedFor": [*reserved, ref]}}, ns)
                except ObjectInvalid:
                    continue  # Go's syncPod returns the API server's error (and tries again later)

    def _handle_claim(self, pod: Mapping[str, Any], pc: Mapping[str, Any]) -> str | None:
        """The claim made (or found orphaned) for a template entry of the pod, None when there is
        nothing to record; raises _Failed as Go's handleClaim errors."""
        template = pc.get("resourceClaimTemplateName")
        if template is None:
            return None
        md = _meta(pod)
        ns, pod_name, uid = str(md.get("namespace") or "default"), str(md.get("name")), str(md.get("uid"))
        cname, _check, known = _claim_name(pod, pc)
        if known:
            if cname is None:
                return None  # not needed
            claim = self.store.peek(RESOURCE_API_VERSION, _CLAIM, cname, ns)
            if claim is not None and _owned_by(claim, uid):
                return None  # already made
        claim_name = str(pc.get("name"))
        # an orphan: made for this pod and entry, not recorded in its status yet
        for c in self.store.peek_all(RESOURCE_API_VERSION, _CLAIM):
            cmd = _meta(c)
            if (cmd.get("namespace") or "default") == ns and (cmd.get("annotations") or {}).get(POD_CLAIM_NAME_ANNOTATION) == claim_name and _owned_by(c, uid):
                return str(cmd.get("name"))
        tmpl = self.store.peek(RESOURCE_API_VERSION, _TEMPLATE, str(template), ns)
        if tmpl is None:
            self._waiting.setdefault((ns, str(template)), {})[(ns, pod_name)] = None
            raise _Failed(f"resource claim template {_go_quote(str(template))}: resourceclaimtemplates.resource.k8s.io {_go_quote(str(template))} not found")
        tspec = _map(tmpl.get("spec"))
        tmd = _map(tspec.get("metadata"))
        annotations = {**(tmd.get("annotations") or {}), POD_CLAIM_NAME_ANNOTATION: claim_name}
        base = generate_name(pod_name, claim_name)
        meta: dict[str, Any] = {
            "namespace": ns,
            "generateName": base,
            "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": pod_name, "uid": uid, "controller": True}],
            "annotations": annotations,
        }
        if tmd.get("labels"):
            meta["labels"] = dict(tmd["labels"])
        if self._now is not None:
            meta["creationTimestamp"] = self._now()
        obj = {"apiVersion": RESOURCE_API_VERSION, "kind": _CLAIM, "metadata": meta, "spec": tspec.get("spec") or {}}
        for attempt in range(100):  # the API server's generated names, drawn again on a clash
            meta["name"] = base + _suffix(f"{uid}/{claim_name}/{attempt}")
            try:
                return str(self.store.create(obj)["metadata"]["name"])
            except ObjectConflict:
                continue
        raise _Failed(f"create ResourceClaim {base}: no free generated name")

    # syncClaim ------------------------------------------------------------------------------------
    def _release(self, pod: Mapping[str, Any]) -> None:
        """A pod that was deleted or is done: its claims, and the claim made for its extended
        resources, drop the reservation (syncClaim)."""
        md = _meta(pod)
        ns = str(md.get("namespace") or "default")
        names = [_claim_name(pod, pc)[0] for pc in _pod_claims(pod)] + [_extended_claim(pod)]
        for cname in names:
            if cname is not None:
                claim = self.store.peek(RESOURCE_API_VERSION, _CLAIM, cname, ns)
                if claim is not None:
                    self._sync_claim(claim)

    def _sync_claim(self, claim: Mapping[str, Any]) -> None:
        """``syncClaim``: reservations of pods that are gone, replaced or done are removed; a
        claim no pod reserves any more is deallocated (with the scheduler's finalizer); a claim
        being deleted (``deletionTimestamp``) that no pod reserves is deallocated and loses the
        finalizer, and goes when no finalizer is left; a claim made for a pod that is gone or
        done is deleted."""
        md = _meta(claim)
        ns, name = str(md.get("namespace") or "default"), str(md.get("name"))
        status = _map(claim.get("status"))
        reserved = [r for r in status.get("reservedFor") or () if isinstance(r, Mapping)]
        remaining = [r for r in reserved if not self._pod_gone(r, ns)]
        finalizers = list(md.get("finalizers") or ())
        patch: dict[str, Any] = {}
        if len(remaining) < len(reserved):
            patch["status"] = {"reservedFor": remaining or None}
            if not remaining and FINALIZER in finalizers:
                patch["status"]["allocation"] = None
                patch["metadata"] = {"finalizers": [f for f in finalizers if f != FINALIZER] or None}
        elif FINALIZER in finalizers and md.get("deletionTimestamp") and not remaining:
            # Go's second branch: a claim being deleted that nobody uses loses its allocation
            # (if it still has one) and the finalizer that blocks its removal
            patch["metadata"] = {"finalizers": [f for f in finalizers if f != FINALIZER] or None}
            if status.get("allocation") is not None:
                patch["status"] = {"allocation": None}
        if patch:
            try:
                claim = self.store.apply_patch(RESOURCE_API_VERSION, _CLAIM, name, patch, ns)
            except ObjectNotFound:
                return
            if _meta(claim).get("deletionTimestamp") and not _meta(claim).get("finalizers"):
                # the API server removes an object being deleted once it has no finalizer left
                self._try_delete(name, ns)
                return
        if remaining:
            return
        owner = _owning_pod(claim)
        if owner is None:
            return
        pod = self.store.peek("v1", "Pod", owner[0], ns)
        # the controller deletes the claim of a pod replaced or done; the garbage collector
        # that of a pod deleted (a pod not in the cluster yet, one of the file still to come,
        # is not taken for a deleted one)
        if (pod is None and owner[1] in self._deleted) or (pod is not None and (str(_meta(pod).get("uid")) != owner[1] or _is_done(pod))):
            self._try_delete(name, ns)

    def _try_delete(self, name: str, ns: str) -> None:
        try:
            self.store.delete(RESOURCE_API_VERSION, _CLAIM, name, ns)
        except ObjectNotFound:
            pass

    def _pod_gone(self, ref: Mapping[str, Any], ns: str) -> bool:
        if ref.get("apiGroup") or ref.get("resource") != "pods":
            return False  # not a pod: kept
        uid = str(ref.get("uid"))
        if uid in self._deleted:
            return True
        pod = self.store.peek("v1", "Pod", str(ref.get("name")), ns)
        # a pod not in the cluster (yet: the file's pods come after its other objects) keeps
        # its reservation
        return pod is not None and (str(_meta(pod).get("uid")) != uid or _is_done(pod))

    # the report ------------------------------------------------------------------------------------
    def _note_claim(self, etype: str, old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> None:
        obj = new if new is not None else old
        assert obj is not None
        md = _meta(obj)
        key = (str(md.get("namespace") or "default"), str(md.get("name")))
        row = claim_row(obj)
        prev = self._rows.get(key)
        if row["status"] == "Pending" and prev is not None and prev["status"] != "Pending":
            # released: the row keeps the allocation it had (and the pods it was reserved for)
            row.update(status="Deallocated", node=prev["node"], devices=prev["devices"], pods=row["pods"] or prev["pods"])
        if etype == "DELETED":
            row["status"] = "Deleted"
        self._rows[key] = row

    def rows(self) -> list[dict[str, Any]]:
        """Every claim the run saw, in the order they appeared, as :func:`claim_row` has it at
        the end of the run. Deallocated (no pod reserves it any more) and Deleted claims keep
        the allocation they had last."""
        return [dict(r) for r in self._rows.values()]


_REF_KEYS = ("apiGroup", "resource", "name", "uid")


def validate_claim_status_update(old: Mapping[str, Any], new: Mapping[str, Any]) -> None:
    """The API server's check of a ResourceClaim's status write (Go's
    ``validateResourceClaimStatusUpdate``, v1.36.3): ``status.reservedFor`` has at most 256
    entries, each with resource, name and uid, no uid twice, none without an allocation and no
    new one while the claim is being deleted; a set ``status.allocation`` does not change.
    Raises :class:`ObjectInvalid` with the API server's message."""
    status, old_status = _map(new.get("status")), _map(old.get("status"))
    if status == old_status:
        return
    errs: list[str] = []
    path = "status.reservedFor"
    reserved = status.get("reservedFor") or []
    reserved = reserved if isinstance(reserved, list) else []
    if len(reserved) > RESERVED_FOR_MAX_SIZE:
        errs.append(f"{path}: Too many: {len(reserved)}: must have at most {RESERVED_FOR_MAX_SIZE} items")
    else:
        for i, ref in enumerate(reserved):
            ref = _map(ref)
            errs += [f"{path}[{i}].{k}: Required value" for k in ("resource", "name", "uid") if not ref.get(k)]
        seen: set[str] = set()
        for i, ref in enumerate(reserved):
            uid = str(_map(ref).get("uid") or "")
            if uid in seen:
                errs.append(f"{path}[{i}]: Duplicate value: {json.dumps(uid)}")
            seen.add(uid)
    allocation, old_allocation = status.get("allocation"), old_status.get("allocation")
    if reserved:
        if allocation is None:
            errs.append(f"{path}: Forbidden: may not be specified when `allocated` is not set")
        elif _meta(new).get("deletionTimestamp"):
            before = {tuple(str(_map(r).get(k) or "") for k in _REF_KEYS) for r in old_status.get("reservedFor") or ()}
            if any(tuple(str(_map(r).get(k) or "") for k in _REF_KEYS) not in before for r in reserved):
                errs.append(f"{path}: Forbidden: new entries may not be added while `deallocationRequested` or `deletionTimestamp` are set")
    if old_allocation is not None and allocation is not None and allocation != old_allocation:
        errs.append(f"status.allocation: Invalid value: {cut(json.dumps(allocation, separators=(',', ':')))}: field is immutable")
    if errs:
        md = _meta(new)
        text = errs[0] if len(errs) == 1 else "[" + ", ".join(errs) + "]"
        raise ObjectInvalid(f"{_CLAIM}.resource.k8s.io {_go_quote(cut(md.get('name')))} is invalid: {text}")


class _Failed(Exception):
    """handleClaim's error (the text of Go's)."""


def _go_quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def claim_row(claim: Mapping[str, Any]) -> dict[str, Any]:
    """A claim's row of ``kubesched simulate``'s report: ``namespace``, ``name``, ``pods`` (the
    pods it is reserved for), ``node`` (the node its allocation is for; None when it is not
    allocated, or allocated for more than one node), ``devices`` (``request``, ``driver``,
    ``pool``, ``device`` of each allocated device) and ``status``: Allocated or Pending."""
    md = _meta(claim)
    status = _map(claim.get("status"))
    alloc = status.get("allocation")
    alloc = alloc if isinstance(alloc, Mapping) else None
    pods = [str(r.get("name")) for r in status.get("reservedFor") or () if isinstance(r, Mapping) and r.get("resource") == "pods"]
    row: dict[str, Any] = {
        "namespace": str(md.get("namespace") or "default"),
        "name": str(md.get("name")),
        "pods": pods,
        "node": None,
        "devices": [],
        "status": "Allocated" if alloc is not None else "Pending",
    }
    if alloc is not None:
        row["node"] = _node_of(alloc.get("nodeSelector"))
        devices = _map(alloc.get("devices"))
        row["devices"] = [
            {k: str(r.get(k)) for k in ("request", "driver", "pool", "device")}
            for r in devices.get("results") or ()
            if isinstance(r, Mapping)
        ]
    return row


def _node_of(selector: Any) -> str | None:
    """The node of an allocation's ``nodeSelector`` when it selects one node by name (the
    allocator's ``metadata.name In [node]``), else None."""
    if not isinstance(selector, Mapping):
        return None
    terms = selector.get("nodeSelectorTerms")
    if not isinstance(terms, list) or len(terms) != 1 or not isinstance(terms[0], Mapping):
        return None
    term = terms[0]
    fields = term.get("matchFields")
    if term.get("matchExpressions") or not isinstance(fields, list) or len(fields) != 1 or not isinstance(fields[0], Mapping):
        return None
    f = fields[0]
    values = f.get("values")
    if f.get("key") == "metadata.name" and f.get("operator") == "In" and isinstance(values, list) and len(values) == 1:
        return str(values[0])
    return None
