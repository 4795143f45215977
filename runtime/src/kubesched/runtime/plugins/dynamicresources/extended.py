"""Extended resources backed by DRA (DRAExtendedResource, beta and on in kube-scheduler v1.36.3).

A port of ``pkg/scheduler/framework/plugins/dynamicresources/extendeddynamicresources.go``: a pod
that requests an extended resource served by a DeviceClass (see
:mod:`kubesched.runtime.dra.deviceclasses`) gets one "special" ResourceClaim for all such
resources, made by the scheduler:

* PreFilter (:func:`pre_filter_extended_resources`): the pod's claim from an earlier cycle (the
  annotation ``resource.kubernetes.io/extended-resource-claim: "true"`` and the pod as controller
  owner), or an in-memory claim named ``<extended-resources>`` with no requests and a temporary UID.
* Filter (:func:`filter_extended_resources`): a claim from an earlier cycle that has requests is
  stale (UnschedulableAndUnresolvable ``cannot schedule extended resource claim``, PostFilter
  deletes it); a resource the node neither lists in its allocatable nor gets from a DeviceClass is
  ``cannot fit resource``; the resources the node does not list (allocatable 0) become the
  requests of a per-node copy of the claim (:func:`create_requests_and_mappings`: one request per
  container and resource, ``container-<i>-request-<j>``, init containers reusing the requests of
  the containers after them, plus the container -> request mappings for the pod status).
* PreBind: :func:`create_extended_resource_claim_in_api` (``generateName: <pod>-extended-resources-``)
  and, once the claim is allocated and reserved, :func:`patch_pod_extended_resource_claim_status`.
* PostFilter / Unreserve: :func:`delete_claim` (finalizer removed first), and
  :func:`unreserve_extended_resource_claim`.

The functions take the pieces they need (the pod, the claim, the resolver, ``handle.objects``),
so the plugin calls them where Go's plugin calls its methods. Messages are Go's.
"""

from __future__ import annotations

import copy
import logging
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from kubesched.sdk import Code, ObjectConflict, Pod, Status
from kubesched.sdk.quantity import QuantityError, parse_quantity

from ...dra.deviceclasses import is_dra_extended_resource_name

__all__ = [
    "ASSUME_EXTENDED_RESOURCE_TIMEOUT_DEFAULT_SECONDS",
    "EXTENDED_RESOURCE_CLAIM_ANNOTATION",
    "RESOURCE_CLAIM_FINALIZER",
    "SPECIAL_CLAIM_IN_MEM_NAME",
    "ExtendedResources",
    "NodeExtendedClaim",
    "create_extended_resource_claim_in_api",
    "create_requests_and_mappings",
    "create_resource_request_and_mappings",
    "delete_claim",
    "filter_extended_resources",
    "find_extended_resource_claim",
    "has_device_class_mapped_extended_resource",
    "is_special_claim_name",
    "partition_container_indices",
    "patch_pod_extended_resource_claim_status",
    "pre_filter_extended_resources",
    "unreserve_extended_resource_claim",
]

log = logging.getLogger(__name__)

#: specialClaimInMemName: not a valid object name, so it never clashes with a real claim
SPECIAL_CLAIM_IN_MEM_NAME = "<extended-resources>"
#: resourceapi.ExtendedResourceClaimAnnotation
EXTENDED_RESOURCE_CLAIM_ANNOTATION = "resource.kubernetes.io/extended-resource-claim"
#: resourceapi.Finalizer
RESOURCE_CLAIM_FINALIZER = "resource.kubernetes.io/delete-protection"
#: Go polls its assume cache this long for the created claim; KubeObjects.create puts the
#: created object in the informer cache at once, so kubesched does not wait
ASSUME_EXTENDED_RESOURCE_TIMEOUT_DEFAULT_SECONDS = 120

_API = "resource.k8s.io/v1"
_KIND = "ResourceClaim"
#: retry.DefaultRetry's Steps
_RETRY_STEPS = 5

Resolver = Any  # has get_device_class(name) -> DeviceClass dict | None


@dataclass(slots=True)
class ExtendedResources:
    """What PreFilter keeps for Filter: the special claim and draExtendedResource.podScalarResources."""

    claim: dict[str, Any]
    pod_scalar_resources: Mapping[str, int]


@dataclass(slots=True)
class NodeExtendedClaim:
    """Filter's result for one node: the node's copy of the claim with its requests, and the
    container -> request mappings (``v1.ContainerExtendedResourceRequest`` dicts)."""

    claim: dict[str, Any]
    mappings: list[dict[str, str]]


def _md(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def _kobj(obj: Mapping[str, Any]) -> str:
    """klog.KObj: ``namespace/name`` (just ``name`` without a namespace)."""
    md = _md(obj)
    ns = md.get("namespace") or ""
    return f"{ns}/{md.get('name') or ''}" if ns else str(md.get("name") or "")


def has_device_class_mapped_extended_resource(reqs: Mapping[str, Any], resolver: Resolver) -> bool:
    """hasDeviceClassMappedExtendedResource: a non-zero request of a DRA extended resource
    name that some DeviceClass serves."""
    for name, value in reqs.items():
        if not value:
            continue
        if is_dra_extended_resource_name(name) and resolver.get_device_class(name) is not None:
            return True
    return False


def find_extended_resource_claim(pod: Pod, claims: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """findExtendedResourceClaim: the claim annotated as the pod's extended resource claim whose
    controller owner is the pod (name and UID)."""
    for c in claims:
        if (_md(c).get("annotations") or {}).get(EXTENDED_RESOURCE_CLAIM_ANNOTATION) == "true":
            for ref in _md(c).get("ownerReferences") or ():
                if ref.get("name") == pod.name and ref.get("controller") is True and ref.get("uid") == pod.uid:
                    return c
    return None


def pre_filter_extended_resources(
    pod: Pod,
    resolver: Resolver,
    list_claims: Callable[[], Sequence[Mapping[str, Any]]],
    *,
    new_uid: Callable[[], str] = lambda: str(uuid.uuid4()),
) -> tuple[ExtendedResources | None, Status | None]:
    """preFilterExtendedResources (the feature is on). ``(None, None)`` when no extended
    resource of the pod is served by a DeviceClass; an Error status when listing claims fails."""
    scalars = pod.requests.scalar
    if not scalars or not has_device_class_mapped_extended_resource(scalars, resolver):
        return None, None
    pod_scalar_resources = dict(scalars)
    try:
        claims = list_claims()
    except Exception as e:  # statusError: AsStatus(err)
        return None, Status(Code.ERROR, str(e) or type(e).__name__, error=e)
    found = find_extended_resource_claim(pod, claims)
    if found is not None:
        return ExtendedResources(dict(found), pod_scalar_resources), None
    claim: dict[str, Any] = {
        "apiVersion": _API,
        "kind": _KIND,
        "metadata": {
            "namespace": pod.namespace,
            "name": SPECIAL_CLAIM_IN_MEM_NAME,
            # fake temporary UID for SignalClaimPendingAllocation
            "uid": new_uid(),
            "generateName": pod.name + "-extended-resources-",
            "ownerReferences": [
                {"apiVersion": "v1", "kind": "Pod", "name": pod.name, "uid": pod.uid, "controller": True}
            ],
            "annotations": {EXTENDED_RESOURCE_CLAIM_ANNOTATION: "true"},
        },
        "spec": {},
    }
    return ExtendedResources(claim, pod_scalar_resources), None


def _requests_of(claim: Mapping[str, Any]) -> Any:
    return ((claim.get("spec") or {}).get("devices") or {}).get("requests")


def filter_extended_resources(
    ext: ExtendedResources | None,
    no_user_claim: bool,
    pod: Pod,
    node_allocatable_scalars: Mapping[str, int],
    resolver: Resolver,
) -> tuple[NodeExtendedClaim | None, Status | None]:
    """filterExtendedResources for one node (``node_allocatable_scalars``: the node's
    ``allocatable.scalar``). ``(None, None)``: nothing to allocate through DRA on this node."""
    if ext is None:
        return None, None
    claim = ext.claim
    if _requests_of(claim) is not None:
        # from an earlier cycle: PostFilter deletes it and the pod is tried anew
        return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "cannot schedule extended resource claim")
    extended: dict[str, int] = {}
    for name, q in ext.pod_scalar_resources.items():
        if not is_dra_extended_resource_name(name) or q == 0:
            continue
        allocatable = node_allocatable_scalars.get(name)
        backed = resolver.get_device_class(name) is not None
        if backed and not allocatable:
            extended[name] = q  # the node must provide it through DRA
        elif allocatable is None:
            # neither a device plugin's resource on this node nor backed by DRA
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "cannot fit resource")
    if no_user_claim and not extended:
        return None, None
    if (claim.get("status") or {}).get("allocation") is not None:
        return None, None
    node_claim = copy.deepcopy(claim)
    reqs, mappings = create_requests_and_mappings(pod, extended, resolver)
    spec = node_claim.setdefault("spec", {})
    devices = spec.setdefault("devices", {})
    devices["requests"] = reqs or None
    if devices["requests"] is None:
        del devices["requests"]
    return NodeExtendedClaim(node_claim, mappings), None


def is_special_claim_name(name: str) -> bool:
    """isSpecialClaimName."""
    return name == SPECIAL_CLAIM_IN_MEM_NAME


def partition_container_indices(containers: Sequence[Mapping[str, Any]], num_init: int) -> tuple[list[int], list[int]]:
    """partitionContainerIndices: (long-lived: sidecars and regular containers, short-lived:
    init containers that are not sidecars), as indices into init containers + containers."""
    long_lived: list[int] = []
    short_lived: list[int] = []
    for i, c in enumerate(containers):
        if i < num_init and c.get("restartPolicy") != "Always":
            short_lived.append(i)
        else:
            long_lived.append(i)
    return long_lived, short_lived


def _as_int64(v: Any) -> int | None:
    """Quantity.AsInt64: the value when it is a whole number in int64, else None."""
    try:
        f = parse_quantity(v)
    except (QuantityError, TypeError, ValueError):
        return None
    if not isinstance(f, Fraction) or f.denominator != 1 or not -(2**63) <= f.numerator < 2**63:
        return None
    return int(f.numerator)


def create_resource_request_and_mappings(
    container_index: int,
    container: Mapping[str, Any],
    resource_name: str,
    class_name: str,
    reusable_requests: Sequence[dict[str, Any] | None],
) -> tuple[dict[str, Any] | None, list[dict[str, str]]]:
    """createResourceRequestAndMappings: the container's DeviceRequest for the resource (None
    when it needs no new one: no request, or the reusable requests cover it) and its mappings."""
    mappings: list[dict[str, str]] = []
    creqs = (container.get("resources") or {}).get("requests")
    if not creqs or resource_name not in creqs:
        return None, []
    crq = _as_int64(creqs[resource_name])
    if crq is None or crq == 0:
        return None, []
    cname = str(container.get("name") or "")
    total = 0
    for r in reusable_requests:
        if r is not None:
            total += r["exactly"]["count"]
            mappings.append({"containerName": cname, "resourceName": resource_name, "requestName": r["name"]})
            if total >= crq:
                return None, mappings
    keys = sorted(creqs)
    ridx = keys.index(resource_name)
    req_name = f"container-{container_index}-request-{ridx}"
    request = {
        "name": req_name,
        "exactly": {"deviceClassName": class_name, "allocationMode": "ExactCount", "count": crq - total},
    }
    mappings.append({"containerName": cname, "resourceName": resource_name, "requestName": req_name})
    return request, mappings


def create_requests_and_mappings(
    pod: Pod, extended_resources: Mapping[str, int], resolver: Resolver
) -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
    """createRequestsAndMappings: the claim's DeviceRequests (sorted by name) and the
    container -> request mappings, resource by resource in name order."""
    init = list(pod.init_containers)
    containers = init + list(pod.containers)
    long_lived, short_lived = partition_container_indices(containers, len(init))
    requests: list[dict[str, Any]] = []
    mappings: list[dict[str, str]] = []
    for resource in sorted(extended_resources):
        cls = resolver.get_device_class(resource)
        if cls is None:
            continue
        class_name = str((cls.get("metadata") or {}).get("name") or "")
        short_mappings: list[dict[str, str]] = []
        long_mappings: list[dict[str, str]] = []
        long_requests: list[dict[str, Any] | None] = [None] * len(containers)
        for i in long_lived:
            req, m = create_resource_request_and_mappings(i, containers[i], resource, class_name, ())
            long_requests[i] = req
            long_mappings.extend(m)
        max_short: dict[str, Any] | None = None
        short_names: set[str] = set()
        for i in short_lived:
            req, m = create_resource_request_and_mappings(i, containers[i], resource, class_name, long_requests[i:])
            if req is not None:
                short_names.add(req["name"])
                if max_short is None or max_short["exactly"]["count"] < req["exactly"]["count"]:
                    max_short = req
            short_mappings.extend(m)
        # the init containers run one after another: they share the largest request
        if max_short is not None and len(short_names) > 1:
            short_names.discard(max_short["name"])
            for sm in short_mappings:
                if sm["requestName"] in short_names:
                    sm["requestName"] = max_short["name"]
        if max_short is not None:
            requests.append(max_short)
        requests.extend(r for r in long_requests if r is not None)
        mappings.extend(long_mappings)
        mappings.extend(short_mappings)
    requests.sort(key=lambda r: r["name"])
    return requests, mappings


def delete_claim(objects: Any, claim: Mapping[str, Any]) -> None:
    """deleteClaim: remove the ``resource.kubernetes.io/delete-protection`` finalizer (reading
    the claim again after a conflict, up to 5 tries), then delete the claim. Raises Go's errors:
    ``get resourceclaim <ns>/<name>: ...`` / ``update resourceclaim <ns>/<name>: ...``."""
    md = _md(claim)
    ns, name = str(md.get("namespace") or ""), str(md.get("name") or "")
    current: Mapping[str, Any] = claim
    for step in range(_RETRY_STEPS):
        if step:
            try:
                current = objects.get(_API, _KIND, name, ns)
            except Exception as e:
                raise RuntimeError(f"get resourceclaim {ns}/{name}: {e}") from e
        finalizers = list(_md(current).get("finalizers") or ())
        if RESOURCE_CLAIM_FINALIZER in finalizers:
            finalizers.remove(RESOURCE_CLAIM_FINALIZER)
        try:
            objects.patch(
                _API, _KIND, name, {"metadata": {"finalizers": finalizers or None}}, ns,
                resource_version=_md(current).get("resourceVersion"),
            )
            break
        except ObjectConflict as e:
            if step == _RETRY_STEPS - 1:
                raise RuntimeError(f"update resourceclaim {ns}/{name}: {e}") from e
        except Exception as e:
            raise RuntimeError(f"update resourceclaim {ns}/{name}: {e}") from e
    objects.delete(_API, _KIND, name, ns)


def create_extended_resource_claim_in_api(
    objects: Any, node_name: str, node_claim: NodeExtendedClaim | None
) -> dict[str, Any]:
    """createExtendedResourceClaimInAPI: create the node's claim (Filter's
    ``NodeExtendedClaim`` for ``node_name``) with a generated name. Raises with Go's texts
    ``extended resource claim not found for node <n>`` /
    ``create claim for extended resources <ns>/: <error>``."""
    if node_claim is None:
        raise RuntimeError(f"extended resource claim not found for node {node_name}")
    claim = copy.deepcopy(node_claim.claim)
    # fields which must or can not be set on creation
    (claim.get("status") or {}).pop("allocation", None)
    if not claim.get("status"):
        claim.pop("status", None)
    md = claim.setdefault("metadata", {})
    md["name"] = ""
    md.pop("uid", None)
    try:
        return dict(objects.create(claim))
    except Exception as e:
        raise RuntimeError(f"create claim for extended resources {_kobj(claim)}: {e}") from e


def patch_pod_extended_resource_claim_status(
    objects: Any, pod: Pod, claim_name: str, mappings: Sequence[Mapping[str, str]] | None
) -> None:
    """patchPodExtendedResourceClaimStatus: ``status.extendedResourceClaimStatus`` of the pod
    (the mappings and the created claim's name). Raises with Go's texts."""
    if not mappings:
        raise RuntimeError(
            f"nil or empty request mappings, no update of pod {pod.namespace}/{pod.name} ExtendedResourceClaimStatus"
        )
    patch = {
        "status": {
            "extendedResourceClaimStatus": {
                "requestMappings": [dict(m) for m in mappings],
                "resourceClaimName": claim_name,
            }
        }
    }
    try:
        objects.patch("v1", "Pod", pod.name, patch, pod.namespace, subresource="status")
    except Exception as e:
        raise RuntimeError(f"update pod {pod.namespace}/{pod.name} ExtendedResourceClaimStatus: {e}") from e


def unreserve_extended_resource_claim(
    objects: Any,
    claim: Mapping[str, Any] | None,
    remove_pending_allocation: Callable[[], bool],
    restore_assumed: Callable[[], None],
) -> None:
    """unreserveExtendedResourceClaim: drop the in-flight allocation of the claim's initial UID
    (``remove_pending_allocation()``: the manager's MaybeRemoveClaimPendingAllocation(uid, False))
    and restore the assumed claim when it was there; delete the claim when it was written to the
    API server (failures are logged, as Go does)."""
    if claim is None:
        return
    if remove_pending_allocation():
        restore_assumed()
    if is_special_claim_name(str(_md(claim).get("name") or "")):
        return  # only in memory
    try:
        delete_claim(objects, claim)
    except Exception as e:
        log.error("delete resourceclaim %s: %s", _kobj(claim), e)
