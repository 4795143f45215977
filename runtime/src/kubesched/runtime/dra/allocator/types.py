"""The allocator's shared types, as Go's ``structured/internal`` and ``schedulerapi`` packages
(dynamic-resource-allocation v0.36.3): features, device IDs, the allocated state, the errors,
and quantities (parsed once, kept as :class:`fractions.Fraction` with the text's format)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from kubesched.sdk.quantity import parse_quantity

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


class Quantity:
    """A quantity parsed once: its exact value and whether its text used a binary suffix (the
    format Go keeps when it writes the quantity back)."""

    __slots__ = ("binary", "value")

    def __init__(self, value: Fraction, binary: bool = True) -> None:
        self.value = value
        self.binary = binary

    @classmethod
    def parse(cls, raw: Any) -> Quantity:
        if isinstance(raw, Quantity):
            return raw
        return cls(parse_quantity(raw), isinstance(raw, str) and raw.rstrip().endswith("i"))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Quantity) and other.value == self.value

    def __hash__(self) -> int:
        return hash(self.value)

    def __repr__(self) -> str:
        return f"Quantity({self})"

    def __str__(self) -> str:
        return format_quantity(self.value, self.binary)


_BIN = (("Ei", 60), ("Pi", 50), ("Ti", 40), ("Gi", 30), ("Mi", 20), ("Ki", 10))
_DEC = (("E", 18), ("P", 15), ("T", 12), ("G", 9), ("M", 6), ("k", 3))
_SMALL = (("m", 3), ("u", 6), ("n", 9))


def format_quantity(v: Fraction, binary: bool = False) -> str:
    """Go's canonical text of a quantity (``Quantity.String()``) for the values the allocator
    writes: a binary suffix when the format is binary and the value is a whole multiple of
    1024, else a decimal suffix (``500m``, ``2k``, ``1500``)."""
    sign = "-" if v < 0 else ""
    v = abs(v)
    if v.denominator == 1:
        n = v.numerator
        if binary and n >= 1024:
            for suffix, shift in _BIN:
                if n % (1 << shift) == 0:
                    return f"{sign}{n >> shift}{suffix}"
        for suffix, exp in _DEC:
            if n % 10**exp == 0 and n >= 10**exp:
                return f"{sign}{n // 10**exp}{suffix}"
        return f"{sign}{n}"
    for suffix, exp in _SMALL:
        scaled = v * 10**exp
        if scaled.denominator == 1:
            return f"{sign}{scaled.numerator}{suffix}"
    scaled = v * 10**9
    return f"{sign}{-(-scaled.numerator // scaled.denominator)}n"
