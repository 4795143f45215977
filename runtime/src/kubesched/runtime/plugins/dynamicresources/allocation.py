"""The structured allocator in the plugin (kube-scheduler v1.36.3 ``dynamicresources.go``):
PreFilter's checks of the claims, their requests and device classes and the allocator it builds
once per pod, and Filter's call of ``Allocate`` for one node with Go's statuses."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from kubesched.runtime.dra.allocator.types import AllocatorError, AllocatorTimeout, FailedOnNode
from kubesched.sdk import NodeSelector, Pod, Status
from kubesched.sdk.selectors import InvalidObjectError

from .claims import ClaimStore, DraState, InformationForClaim
from .common import allocation_of, error, uid_of, unschedulable
from .extended import NodeExtendedClaim
from .features import allocator_features
from .resourceclaim import can_be_reserved, is_reserved_for_pod, kobj

if TYPE_CHECKING:
    from .plugin import DynamicResources

__all__ = ["allocate_on_node", "check_claims", "new_allocator", "validate_device_class", "validate_requests"]

Claim = Mapping[str, Any]


def validate_requests(pl: DynamicResources, claim: Claim) -> Status | None:
    for request in ((claim.get("spec") or {}).get("devices") or {}).get("requests") or ():
        req_name = request.get("name") or ""
        exactly = request.get("exactly")
        first_available = request.get("firstAvailable")
        if exactly is not None:
            st = validate_device_class(pl, exactly.get("deviceClassName") or "", req_name)
        elif first_available:
            if not pl.features.dra_prioritized_list:
                return unschedulable(
                    f"resource claim {kobj(claim)}, request {req_name}: has subrequests, but the DRAPrioritizedList feature is disabled"
                )
            st = None
            for sub in first_available:
                st = validate_device_class(pl, sub.get("deviceClassName") or "", f"{req_name}/{sub.get('name') or ''}")
                if st is not None:
                    break
        else:
            return unschedulable(f"resource claim {kobj(claim)}, request {req_name}: unknown request type")
        if st is not None:
            return st
    return None


def validate_device_class(pl: DynamicResources, class_name: str, request_name: str) -> Status | None:
    if not class_name:
        return error(f"request {request_name}: unsupported request type")
    if pl.manager.get_device_class(class_name) is None:
        return unschedulable(f"request {request_name}: device class {class_name} does not exist")
    return None


def new_allocator(pl: DynamicResources) -> Any:
    """The structured allocator for this pod: allocated and in-flight devices, every slice
    (DRADeviceTaintRules is off: the slices as they are), the classes by name."""
    from kubesched.runtime.dra.allocator import Allocator, Features
    from kubesched.runtime.dra.cel import Cache

    if pl.features.dra_consumable_capacity:
        allocated = pl.manager.gather_allocated_state(True)
    else:
        allocated = pl.manager.gather_allocated_state(False)
    if pl._cel_cache is None:
        pl._cel_cache = Cache(10)
    return Allocator(
        Features(**allocator_features(pl.features)), allocated, pl.manager.get_device_class,
        pl.manager.list_slices(), pl._cel_cache,
    )


def check_claims(pl: DynamicResources, s: DraState, pod: Pod, claims: ClaimStore) -> Status | None:
    """PreFilter's pass over the claims: an allocated claim must be reservable for the pod (its
    node selector kept for Filter); one to allocate must not be in flight, and its requests'
    device classes must exist (the special claim of extended resources is left to Filter).
    Builds the allocator when anything is left to allocate."""
    s.informations_for_claim = [InformationForClaim() for _ in range(len(claims))]
    num_to_allocate = 0
    extended = claims.extended_resource_claim()
    for index, claim in claims.all():
        allocation = allocation_of(claim)
        if allocation is not None and not can_be_reserved(claim) and not is_reserved_for_pod(pod.uid, claim):
            return unschedulable("resourceclaim in use")
        if allocation is not None:
            raw_selector = allocation.get("nodeSelector")
            if raw_selector is not None:
                try:
                    s.informations_for_claim[index].available_on_nodes = NodeSelector.parse(raw_selector)
                except InvalidObjectError as e:
                    return error(e)
            continue
        num_to_allocate += 1
        if pl.manager.get_pending_allocation(uid_of(claim)) is not None:
            return unschedulable(f"resource claim {kobj(claim)} is in the process of being allocated")
        if claim is extended:
            continue
        st = validate_requests(pl, claim)
        if st is not None:
            return st

    if num_to_allocate > 0:
        try:
            s.allocator = new_allocator(pl)
        except Exception as e:
            return error(e)
        s.node_allocations = {}
    return None


def allocate_on_node(
    pl: DynamicResources, s: DraState, node: Mapping[str, Any], node_name: str, node_claim: NodeExtendedClaim | None
) -> list[Mapping[str, Any]] | Status:
    """The allocations of the pod's claims to allocate on the node (the special claim replaced
    by the node's variant), then the pending ones; or the status that rejects the node."""
    claims_to_allocate: list[Claim] = []
    pending: list[Mapping[str, Any]] = []
    extended = s.claims.extended_resource_claim()
    for index, claim in s.claims.to_allocate():
        if claim is extended and node_claim is not None:
            claim = node_claim.claim
        info = s.informations_for_claim[index]
        if info.allocation is not None:
            pending.append(info.allocation)
            continue
        claims_to_allocate.append(claim)
    deadline = None
    if pl.features.dra_scheduler_filter_timeout and pl.filter_timeout > 0:
        deadline = time.monotonic() + pl.filter_timeout
    try:
        result = s.allocator.allocate(node, claims_to_allocate, deadline=deadline)
    except AllocatorTimeout:
        # potentially transient: Error, so the pod retries through backoff
        return error(f"node {node_name}: timed out trying to allocate devices")
    except FailedOnNode as e:
        return unschedulable(str(e))
    except AllocatorError as e:
        # a broken claim or class (e.g. a CEL error): abort scheduling the pod
        return error(e)
    if result is None or len(result) != len(claims_to_allocate):
        why = getattr(s.allocator, "why_not", None)
        if why:
            with s.lock:
                s.why_not[node_name] = why
        return unschedulable("cannot allocate all claims")
    return [*result, *pending]
