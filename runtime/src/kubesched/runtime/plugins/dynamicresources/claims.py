"""The plugin's cycle state (kube-scheduler v1.36.3 ``claims.go`` claimStore and the
``stateData``, ``informationForClaim`` and ``nodeAllocation`` of ``dynamicresources.go``).

The claim store keeps Go's slot for the special claim of extended resources backed by DRA
(DRAExtendedResource, ``extended.py``): it comes last, after the user's claims."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubesched.sdk import NodeSelector, StateData

__all__ = ["ClaimStore", "DraState", "InformationForClaim", "NodeAllocation"]

Claim = Mapping[str, Any]


def _allocation(claim: Claim) -> Any:
    return (claim.get("status") or {}).get("allocation")


class ClaimStore:
    """claimStore: the pod's claims, then the optional extended-resource claim."""

    __slots__ = ("claims", "initial_extended_resource_claim_uid", "num_user_owned")

    def __init__(self, claims: Sequence[Claim] | None = None, extended_resource_claim: Claim | None = None) -> None:
        self.claims: list[Claim] = list(claims or ())
        self.num_user_owned = len(self.claims)
        self.initial_extended_resource_claim_uid = ""
        if extended_resource_claim is not None:
            self.claims.append(extended_resource_claim)
            self.initial_extended_resource_claim_uid = (extended_resource_claim.get("metadata") or {}).get("uid") or ""

    def empty(self) -> bool:
        return not self.claims

    def __len__(self) -> int:
        return len(self.claims)

    def all(self) -> Iterator[tuple[int, Claim]]:
        return enumerate(list(self.claims))

    def all_user_claims(self) -> Iterator[tuple[int, Claim]]:
        return enumerate(self.claims[: self.num_user_owned])

    def to_allocate(self) -> Iterator[tuple[int, Claim]]:
        """Claims without an allocation, with their index in the store."""
        return ((i, c) for i, c in enumerate(list(self.claims)) if _allocation(c) is None)

    def extended_resource_claim(self) -> Claim | None:
        if self.num_user_owned == len(self.claims):
            return None
        return self.claims[self.num_user_owned]

    def no_user_claim(self) -> bool:
        return self.num_user_owned == 0

    def get(self, i: int) -> Claim:
        return self.claims[i]

    def set(self, i: int, claim: Claim) -> None:
        self.claims[i] = claim

    def get_binding(self, i: int, pod_name: str, pod_uid: str) -> dict[str, Any]:
        """The consumer reference the claim gets in ``status.reservedFor``: the pod (PodGroup
        claims are alpha and off)."""
        return {"resource": "pods", "name": pod_name, "uid": pod_uid}

    def update_extended_resource_claim(self, claim: Claim) -> None:
        if self.num_user_owned == len(self.claims):
            raise ValueError("no extended resource claim")
        self.claims[self.num_user_owned] = claim


@dataclass
class InformationForClaim:
    #: the allocated claim's node selector (None: any node)
    available_on_nodes: NodeSelector | None = None
    #: set by Reserve, published by PreBind
    allocation: Mapping[str, Any] | None = None


@dataclass
class NodeAllocation:
    """What Filter found for a node: one allocation per claim to allocate (in the order of
    ``ClaimStore.to_allocate``), then the pending ones, and the node's extended-resource claim."""

    allocation_results: list[Mapping[str, Any]] = field(default_factory=list)
    extended_resource_claim: Claim | None = None
    #: the container -> extended resource -> device request mappings (DRAExtendedResource)
    container_resource_request_mappings: list[Any] = field(default_factory=list)


class DraState(StateData):
    """stateData. Its Clone returns itself, as Go's (the pointer is shared)."""

    def __init__(self) -> None:
        self.claims = ClaimStore()
        #: data for extended resources backed by DRA (DRAExtendedResource, ``extended.py``)
        self.dra_extended_resource: Any = None
        self.allocator: Any = None
        self.lock = threading.Lock()
        #: indices of allocated claims that were not available on at least one node
        self.unavailable_claims: set[int] = set()
        self.informations_for_claim: list[InformationForClaim] = []
        #: Filter's allocations by node name
        self.node_allocations: dict[str, NodeAllocation] = {}
        #: the allocator's explanation per node where nothing fit (kubesched's explain)
        self.why_not: dict[str, str] = {}

    def clone(self) -> DraState:
        return self
