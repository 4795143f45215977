"""The allocator's shared types, as Go's ``structured/internal`` and ``schedulerapi`` packages
(dynamic-resource-allocation v0.36.3): features, device IDs, the allocated state, the errors,
and quantities (:mod:`.quantity`, re-exported here)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from .quantity import Quantity, format_quantity

__all__ = [
    "DEFAULT_FEATURES",
    "AllocatedState",
    "AllocatorError",
    "AllocatorTimeout",
    "DeviceID",
    "FailedOnNode",
    "Features",
    "Quantity",
    "SharedDeviceID",
    "device_id_str",
    "format_quantity",
    "kobj",
]

#: (driver, pool, device); Go prints it as "driver/pool/device" (:func:`device_id_str`)
DeviceID = tuple[str, str, str]
#: (driver, pool, device, shareID); shareID "" when the allocation has none
SharedDeviceID = tuple[str, str, str, str]

#: resourceapi.AllocationResultsMaxSize
ALLOCATION_RESULTS_MAX_SIZE = 32


def device_id_str(d: DeviceID) -> str:
    return f"{d[0]}/{d[1]}/{d[2]}"


def kobj(obj: Mapping[str, Any]) -> str:
    """klog.KObj: ``namespace/name``, or ``name`` without a namespace."""
    meta = obj.get("metadata") or {}
    ns = meta.get("namespace") or ""
    name = meta.get("name") or ""
    return f"{ns}/{name}" if ns else name


@dataclass(frozen=True)
class Features:
    """Go's ``internal.Features`` without ListTypeAttributes (alpha, off in 1.36)."""

    admin_access: bool = False
    prioritized_list: bool = False
    partitionable_devices: bool = False
    device_taints: bool = False
    device_binding_and_status: bool = False
    consumable_capacity: bool = False


#: what kube-scheduler v1.36.3 passes with its default feature gates (AllocatorFeatures())
DEFAULT_FEATURES = Features(True, True, True, True, True, True)


@dataclass
class AllocatedState:
    """schedulerapi.AllocatedState: devices in use by allocated (or in-flight) claims."""

    allocated_devices: set[DeviceID] = field(default_factory=set)
    allocated_shared_device_ids: set[SharedDeviceID] = field(default_factory=set)
    aggregated_capacity: dict[DeviceID, dict[str, Fraction]] = field(default_factory=dict)

    def is_device_allocated(self, d: DeviceID) -> bool:
        """internal.IsDeviceAllocated."""
        if d in self.allocated_devices or d in self.aggregated_capacity:
            return True
        return any(s[:3] == d for s in self.allocated_shared_device_ids)


class AllocatorError(Exception):
    """An error that stops allocation for the pod; ``str()`` is Go's text."""


class FailedOnNode(AllocatorError):
    """Go's ``ErrFailedAllocationOnNode``: allocation failed on this node only (other nodes may
    still work), e.g. ``invalid resource pools were encountered``."""


class AllocatorTimeout(AllocatorError):
    """The deadline given to ``allocate()`` passed (Go: ``filter operation aborted: context
    deadline exceeded``)."""
