"""Score's arithmetic (kube-scheduler v1.36.3 ``dynamicresources.go`` computeScore) and
kubesched's per-node explanation for ``explain``."""

from __future__ import annotations

from typing import Any

from kubesched.sdk import CycleState

from .claims import DraState, NodeAllocation
from .common import STATE_KEY, allocation_of
from .resourceclaim import create_sub_request_ref, is_sub_request_ref

__all__ = ["FIRST_AVAILABLE_DEVICE_REQUEST_MAX_SIZE", "compute_score", "device_unfit_reason"]

#: resourceapi.FirstAvailableDeviceRequestMaxSize
FIRST_AVAILABLE_DEVICE_REQUEST_MAX_SIZE = 8


def compute_score(claims: Any, allocations: NodeAllocation) -> int:
    """computeScore: for every allocated subrequest of a ``firstAvailable`` request,
    ``8 - its index``. Claims allocated earlier carry their allocation; the others take
    Filter's results in order. Raises ValueError when there are fewer results than claims."""
    score = 0
    unallocated_index = 0
    results = allocations.allocation_results
    for claim in claims:
        allocation = allocation_of(claim)
        if allocation is None:
            if unallocated_index >= len(results):
                raise ValueError(
                    f"number of allocations {len(results)} is smaller than number of claims needing allocation"
                )
            allocation = results[unallocated_index]
            unallocated_index += 1
        allocated_sub_requests = {
            r.get("request") or "" for r in (allocation.get("devices") or {}).get("results") or ()
            if is_sub_request_ref(r.get("request") or "")
        }
        for req in ((claim.get("spec") or {}).get("devices") or {}).get("requests") or ():
            if req.get("exactly") is not None:
                continue
            for i, sub in enumerate(req.get("firstAvailable") or ()):
                if create_sub_request_ref(req.get("name") or "", sub.get("name") or "") in allocated_sub_requests:
                    score += FIRST_AVAILABLE_DEVICE_REQUEST_MAX_SIZE - i
    return score


def device_unfit_reason(state: CycleState, node_name: str) -> str | None:
    """For ``kubesched explain``: which claim and request could not be satisfied on the node
    in this cycle and why (the allocator's ``why_not``), or None."""
    s = state.get(STATE_KEY)
    if not isinstance(s, DraState):
        return None
    return s.why_not.get(node_name)
