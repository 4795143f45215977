"""The structured allocator for DynamicResources: a port of kube-scheduler v1.36.3's incubating
allocator (dynamic-resource-allocation v0.36.3). See :class:`Allocator`."""

from .allocator import Allocator
from .state import add_allocated_claim
from .types import (
    DEFAULT_FEATURES,
    AllocatedState,
    AllocatorError,
    AllocatorTimeout,
    DeviceID,
    FailedOnNode,
    Features,
    SharedDeviceID,
    device_id_str,
)

__all__ = [
    "DEFAULT_FEATURES",
    "AllocatedState",
    "Allocator",
    "AllocatorError",
    "AllocatorTimeout",
    "DeviceID",
    "FailedOnNode",
    "Features",
    "SharedDeviceID",
    "add_allocated_claim",
    "device_id_str",
]
