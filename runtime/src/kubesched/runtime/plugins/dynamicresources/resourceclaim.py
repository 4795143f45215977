"""Helpers from k8s.io/dynamic-resource-allocation v0.36.3 ``resourceclaim/resourceclaim.go``:
which ResourceClaim a pod's ``spec.resourceClaims`` entry names, whether it belongs to the pod,
whether it is reserved for it, and the ``request/subrequest`` references. PodGroup claims
(DRAWorkloadResourceClaims, alpha and off in 1.36) are left out."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = [
    "API_VERSION",
    "FINALIZER",
    "ClaimError",
    "base_request_ref",
    "can_be_reserved",
    "create_sub_request_ref",
    "is_for_pod",
    "is_reserved_for_pod",
    "is_sub_request_ref",
    "kobj",
    "name",
]

#: resource.k8s.io/v1, the version kube-scheduler v1.36 reads
API_VERSION = "resource.k8s.io/v1"
#: resourceapi.Finalizer: the delete protection the scheduler adds with an allocation
FINALIZER = "resource.kubernetes.io/delete-protection"
#: resourceapi.ResourceClaimReservedForMaxSize
RESERVED_FOR_MAX_SIZE = 256

ERR_API_UNSUPPORTED = "none of the supported fields are set"
ERR_CLAIM_NOT_FOUND = "ResourceClaim not created yet"


class ClaimError(Exception):
    """An error of these helpers (and of the claim lookup); ``str()`` is Go's text."""


def kobj(obj: Mapping[str, Any]) -> str:
    """klog.KObj: ``namespace/name``."""
    meta = obj.get("metadata") or {}
    ns = meta.get("namespace") or ""
    n = meta.get("name") or ""
    return f"{ns}/{n}" if ns else n


def name(pod_namespace: str, pod_name: str, pod_status: Mapping[str, Any], pod_claim: Mapping[str, Any]) -> tuple[str | None, bool]:
    """``resourceclaim.Name``: the claim's name (None when it intentionally was not created)
    and whether :func:`is_for_pod` must be checked. Raises :class:`ClaimError`."""
    claim_name = pod_claim.get("resourceClaimName")
    if claim_name is not None:
        return claim_name, False
    if pod_claim.get("resourceClaimTemplateName") is not None:
        for status in pod_status.get("resourceClaimStatuses") or ():
            if status.get("name") == pod_claim.get("name"):
                return status.get("resourceClaimName"), True
        raise ClaimError(f'pod "{pod_namespace}/{pod_name}": {ERR_CLAIM_NOT_FOUND}')
    raise ClaimError(
        f'pod "{pod_namespace}/{pod_name}", spec.resourceClaim {_go_quote(str(pod_claim.get("name") or ""))}: '
        f"{ERR_API_UNSUPPORTED}"
    )


def is_for_pod(pod_namespace: str, pod_name: str, pod_uid: str, claim: Mapping[str, Any]) -> None:
    """``resourceclaim.IsForPod`` (acceptPodGroupOwner false): raises :class:`ClaimError`
    unless the claim is in the pod's namespace and controlled by the pod."""
    meta = claim.get("metadata") or {}
    ns = meta.get("namespace") or ""
    cname = meta.get("name") or ""
    if ns != pod_namespace:
        raise ClaimError(
            f"ResourceClaim {ns}/{cname} is not in the same namespace as Pod {pod_namespace}/{pod_name}"
        )
    for ref in meta.get("ownerReferences") or ():
        if ref.get("controller") and ref.get("uid") == pod_uid:
            return
    raise ClaimError(f"ResourceClaim {ns}/{cname} was not created for Pod {pod_namespace}/{pod_name} (Pod is not owner)")


def is_reserved_for_pod(pod_uid: str, claim: Mapping[str, Any]) -> bool:
    """``resourceclaim.IsReservedForPod`` (acceptPodGroupReservation false)."""
    for reserved in (claim.get("status") or {}).get("reservedFor") or ():
        if reserved.get("uid") == pod_uid:
            return True
    return False


def can_be_reserved(claim: Mapping[str, Any]) -> bool:
    """``resourceclaim.CanBeReserved``: "Currently no restrictions on sharing"."""
    return True


def base_request_ref(request_ref: str) -> str:
    return request_ref.split("/")[0]


def create_sub_request_ref(request_name: str, sub_request_name: str) -> str:
    return f"{request_name}/{sub_request_name}"


def is_sub_request_ref(request_ref: str) -> bool:
    return len(request_ref.split("/")) == 2


def _go_quote(text: str) -> str:
    """Go's %q for the plain names the API allows."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
