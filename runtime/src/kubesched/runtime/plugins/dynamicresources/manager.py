"""The shared DRA manager (kube-scheduler v1.36.3 ``dra_manager.go``): the claim tracker with
the in-flight allocations, the allocated state, and the listers of claims, device classes and
resource slices.

Go has one ``SharedDRAManager`` per scheduler, shared by its profiles. kubesched keeps one per
object client (``handle.objects``) in a :class:`weakref.WeakKeyDictionary` (:func:`manager_for`),
so the profiles of one scheduler share it and the SDK needs no new handle member.

Objects come from ``handle.objects``: on the simulated cluster the object store (the source of
truth, written synchronously), on Kubernetes the informer cache, into which every write the
plugin makes is put at once (Go's assume cache: ``AssumeClaimAfterAPICall``). The allocated
devices are gathered from the claim list at each PreFilter that needs them (Go keeps them
incrementally through informer handlers; the result is the same).
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kubesched.runtime.dra.allocator.state import insert_capacity
from kubesched.sdk import ObjectNotFound

from .allocateddevices import AllocatedDevices, foreach_allocated_device
from .resourceclaim import API_VERSION, ClaimError

__all__ = ["DraManager", "InFlightAllocation", "manager_for"]


@dataclass
class InFlightAllocation:
    claim: Mapping[str, Any] | None
    sharers: int


class DraManager:
    """DefaultDRAManager + claimTracker for one object client."""

    def __init__(self, objects: Any) -> None:
        self.objects = objects
        self._lock = threading.Lock()
        #: claim UID -> the claim with the allocation made in Reserve, until PreBind wrote it
        self.in_flight: dict[str, InFlightAllocation] = {}

    # listers ----------------------------------------------------------------------------------
    def get_claim(self, namespace: str, claim_name: str) -> dict[str, Any]:
        """The claim; raises :class:`ClaimError` with the lister's NotFound text."""
        try:
            return self.objects.get(API_VERSION, "ResourceClaim", claim_name, namespace)
        except ObjectNotFound:
            raise ClaimError(f'could not find ResourceClaim "{namespace}/{claim_name}"') from None

    def _list(self, kind: str) -> list[Any]:
        """Every object of a kind, read only: the stored objects themselves where the client
        offers them (the object store's ``peek_all``: no copies, and the allocator's CEL results
        stay memoised per device object across pods), else ``list``."""
        peek_all = getattr(self.objects, "peek_all", None)
        if peek_all is not None:
            return list(peek_all(API_VERSION, kind))
        return self.objects.list(API_VERSION, kind)

    def list_claims(self) -> list[Any]:
        return self._list("ResourceClaim")

    def get_device_class(self, class_name: str) -> dict[str, Any] | None:
        try:
            return self.objects.get(API_VERSION, "DeviceClass", class_name)
        except ObjectNotFound:
            return None

    def list_slices(self) -> list[Any]:
        """ResourceSlices().ListWithDeviceTaintRules(): DRADeviceTaintRules is off in 1.36, so
        the slices as they are."""
        return self._list("ResourceSlice")

    # in-flight allocations --------------------------------------------------------------------
    def get_pending_allocation(self, claim_uid: str) -> Mapping[str, Any] | None:
        with self._lock:
            f = self.in_flight.get(claim_uid)
        if f is None or f.claim is None:
            return None
        return (f.claim.get("status") or {}).get("allocation")

    def signal_claim_pending_allocation(self, claim_uid: str, allocated_claim: Mapping[str, Any]) -> None:
        with self._lock:
            f = self.in_flight.get(claim_uid)
            if f is not None:
                f.sharers += 1
                return
            self.in_flight[claim_uid] = InFlightAllocation(allocated_claim, 1)

    def maybe_remove_claim_pending_allocation(self, claim_uid: str, force_remove: bool) -> bool:
        """True when the in-flight allocation was removed (the last sharer, or forced)."""
        with self._lock:
            f = self.in_flight.get(claim_uid)
            if f is None:
                return False
            if force_remove or f.sharers == 1:
                del self.in_flight[claim_uid]
                return True
            f.sharers -= 1
            return False

    def in_flight_claims(self) -> list[Mapping[str, Any]]:
        with self._lock:
            return [f.claim for f in self.in_flight.values() if f.claim is not None]

    # allocated state --------------------------------------------------------------------------
    def gather_allocated_state(self, consumable_capacity: bool = True, claims: Any = None) -> Any:
        """GatherAllocatedState: the devices of allocated claims plus the in-flight ones. With
        consumable capacity off, shared devices count as dedicated and no capacity is kept.
        ``claims`` (default: the listed claims) is the informer's view."""
        from kubesched.runtime.dra.allocator.types import AllocatedState

        # in-flight first: a claim that leaves in-flight for the store meanwhile is then seen
        # at least once (Go retries on a revision change for the same race)
        in_flight = self.in_flight_claims()
        if claims is None:
            claims = self.list_claims()
        devices = AllocatedDevices.from_claims(claims, consumable_capacity)
        allocated = devices.ids
        shared = devices.share_ids
        capacity = devices.capacities
        for claim in in_flight:
            foreach_allocated_device(
                claim, allocated.add, consumable_capacity, shared.add, lambda c: insert_capacity(capacity, *c)
            )
        return AllocatedState(allocated, shared, capacity)

    def list_all_allocated_devices(self) -> set[tuple[str, str, str]]:
        """ListAllAllocatedDevices (used when DRAConsumableCapacity is off)."""
        return self.gather_allocated_state(False).allocated_devices


_MANAGERS: weakref.WeakKeyDictionary[Any, DraManager] = weakref.WeakKeyDictionary()
_MANAGERS_LOCK = threading.Lock()


def manager_for(objects: Any) -> DraManager:
    """The one manager of an object client (every profile's plugin gets the same)."""
    with _MANAGERS_LOCK:
        m = _MANAGERS.get(objects)
        if m is None:
            m = DraManager(objects)
            _MANAGERS[objects] = m
        return m
