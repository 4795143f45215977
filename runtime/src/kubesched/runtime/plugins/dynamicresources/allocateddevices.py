"""The devices allocated claims use (kube-scheduler v1.36.3 ``allocateddevices.go``).

:func:`foreach_allocated_device` walks a claim's allocation result; :class:`AllocatedDevices`
keeps the set of dedicated devices, shared device IDs and consumed capacity of a set of claims,
updated by add/update/delete of claims as Go's informer handlers do."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from fractions import Fraction
from typing import Any

from kubesched.runtime.dra.allocator.state import insert_capacity, remove_capacity
from kubesched.sdk.quantity import parse_quantity

__all__ = ["AllocatedDevices", "ConsumedCapacity", "foreach_allocated_device"]

DeviceID = tuple[str, str, str]
SharedDeviceID = tuple[str, str, str, str]
#: (device, {capacity name: amount}) of one shared allocation
ConsumedCapacity = tuple[DeviceID, dict[str, Fraction]]


def foreach_allocated_device(
    claim: Mapping[str, Any],
    dedicated: Callable[[DeviceID], None],
    consumable_capacity: bool,
    shared: Callable[[SharedDeviceID], None],
    consumed: Callable[[ConsumedCapacity], None],
) -> None:
    """Calls ``dedicated`` for each device the claim's allocation holds exclusively; with
    consumable capacity on, a result with a shareID calls ``shared`` (and ``consumed`` when it
    consumed capacity) instead. Devices with admin access are not counted. Nothing for a
    claim without allocation."""
    allocation = (claim.get("status") or {}).get("allocation")
    if allocation is None:
        return
    for result in (allocation.get("devices") or {}).get("results") or ():
        if result.get("adminAccess"):
            continue
        device_id = (result.get("driver") or "", result.get("pool") or "", result.get("device") or "")
        if consumable_capacity and result.get("shareID") is not None:
            shared((*device_id, str(result["shareID"])))
            cap = result.get("consumedCapacity")
            if cap is not None:
                consumed((device_id, {k: parse_quantity(v) for k, v in cap.items()}))
            continue
        dedicated(device_id)


class AllocatedDevices:
    """allocatedDevices: what the allocated claims hold. Not locked: the manager builds one per
    PreFilter from the claims it lists (kubesched has no claim informer of its own)."""

    __slots__ = ("capacities", "consumable_capacity", "ids", "share_ids")

    def __init__(self, consumable_capacity: bool = True) -> None:
        self.consumable_capacity = consumable_capacity
        self.ids: set[DeviceID] = set()
        self.share_ids: set[SharedDeviceID] = set()
        #: device -> capacity name -> consumed amount (Go's ConsumedCapacityCollection)
        self.capacities: dict[DeviceID, dict[str, Fraction]] = {}

    @classmethod
    def from_claims(cls, claims: Iterable[Mapping[str, Any]], consumable_capacity: bool = True) -> AllocatedDevices:
        a = cls(consumable_capacity)
        for claim in claims:
            a.on_add(claim)
        return a

    def on_add(self, claim: Mapping[str, Any]) -> None:
        if (claim.get("status") or {}).get("allocation") is not None:
            self.add_devices(claim)

    def on_update(self, old: Mapping[str, Any], new: Mapping[str, Any]) -> None:
        old_alloc = (old.get("status") or {}).get("allocation")
        new_alloc = (new.get("status") or {}).get("allocation")
        if old_alloc is None and new_alloc is not None:
            self.add_devices(new)
        elif old_alloc is not None and new_alloc is None:
            self.remove_devices(old)
        # both set or both unset: the allocation is immutable, nothing to do

    def on_delete(self, claim: Mapping[str, Any]) -> None:
        self.remove_devices(claim)

    def add_devices(self, claim: Mapping[str, Any]) -> None:
        foreach_allocated_device(claim, self.ids.add, self.consumable_capacity, self.share_ids.add, self._insert)

    def remove_devices(self, claim: Mapping[str, Any]) -> None:
        foreach_allocated_device(claim, self.ids.discard, self.consumable_capacity, self.share_ids.discard, self._remove)

    def _insert(self, c: ConsumedCapacity) -> None:
        insert_capacity(self.capacities, *c)

    def _remove(self, c: ConsumedCapacity) -> None:
        remove_capacity(self.capacities, *c)
