"""The allocated state's arithmetic: Go's ``ConsumedCapacity`` Add/Sub/Empty and
``ConsumedCapacityCollection`` Insert/Remove (schedulerapi/types.go v0.36.3), and
:func:`add_allocated_claim` (the scheduler plugin's ``foreachAllocatedDevice``,
allocateddevices.go v1.36.3) to build an :class:`AllocatedState` from allocated claims."""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from .types import AllocatedState, DeviceID, Quantity

__all__ = ["add_allocated_claim", "add_capacity", "capacity_empty", "insert_capacity", "remove_capacity", "sub_capacity"]


def add_capacity(into: dict[str, Fraction], added: Mapping[str, Fraction]) -> None:
    """ConsumedCapacity.Add."""
    for name, v in added.items():
        into[name] = into.get(name, 0) + v


def sub_capacity(into: dict[str, Fraction], subtracted: Mapping[str, Fraction]) -> None:
    """ConsumedCapacity.Sub (names that are not there are ignored)."""
    for name, v in subtracted.items():
        if name in into:
            into[name] -= v


def capacity_empty(c: Mapping[str, Fraction]) -> bool:
    """ConsumedCapacity.Empty: every amount is zero."""
    return all(v == 0 for v in c.values())


def insert_capacity(collection: dict[DeviceID, dict[str, Fraction]], device_id: DeviceID, consumed: Mapping[str, Fraction]) -> None:
    """ConsumedCapacityCollection.Insert."""
    have = collection.get(device_id)
    if have is None:
        collection[device_id] = dict(consumed)
    else:
        add_capacity(have, consumed)


def remove_capacity(collection: dict[DeviceID, dict[str, Fraction]], device_id: DeviceID, consumed: Mapping[str, Fraction]) -> None:
    """ConsumedCapacityCollection.Remove: the entry goes when it is empty."""
    have = collection.get(device_id)
    if have is not None:
        sub_capacity(have, consumed)
        if capacity_empty(have):
            del collection[device_id]


def add_allocated_claim(state: AllocatedState, claim: Mapping[str, Any], consumable_capacity: bool = True) -> None:
    """Add the devices of an allocated claim (``status.allocation``) to ``state`` as Go's
    foreachAllocatedDevice does: adminAccess results are not in use; with consumable capacity
    a result with a shareID is a shared device with its consumed capacity; any other result
    is a dedicated device."""
    allocation = (claim.get("status") or {}).get("allocation")
    if not allocation:
        return
    for r in (allocation.get("devices") or {}).get("results") or ():
        if r.get("adminAccess"):
            continue
        device_id = (r.get("driver", ""), r.get("pool", ""), r.get("device", ""))
        share_id = r.get("shareID")
        if consumable_capacity and share_id is not None:
            state.allocated_shared_device_ids.add((*device_id, share_id))
            consumed = r.get("consumedCapacity")
            if consumed is not None:
                insert_capacity(state.aggregated_capacity, device_id, {k: Quantity.parse(v).value for k, v in consumed.items()})
            continue
        state.allocated_devices.add(device_id)
