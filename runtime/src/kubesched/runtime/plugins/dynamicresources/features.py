"""The feature gates DynamicResources reads (kube-scheduler v1.36.3 ``feature.Features``), their
1.36 defaults, and the allocator features and implementation they select
(``AllocatorFeatures``, ``structured.NewAllocator``)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DEFAULT_FEATURES", "SchedulerFeatures", "allocator_features", "allocator_implementation"]


@dataclass(frozen=True)
class SchedulerFeatures:
    """The DRA gates of ``feature.Features``; the defaults are 1.36's (``kube_features.go``).
    DRAExtendedResource is F's (``extended.py``); the alpha gates (DRAWorkloadResourceClaims,
    DRANodeAllocatableResources, DRAListTypeAttributes, DRADeviceTaintRules) are off in 1.36 and
    not implemented."""

    dra_admin_access: bool = True  # GA
    dra_prioritized_list: bool = True  # GA
    dra_partitionable_devices: bool = True  # beta
    dra_device_taints: bool = True  # beta
    dra_device_binding_conditions: bool = True  # beta
    dra_resource_claim_device_status: bool = True  # beta
    dra_scheduler_filter_timeout: bool = True  # beta
    dra_consumable_capacity: bool = True  # beta
    dra_extended_resource: bool = True  # beta

    @classmethod
    def ga_only(cls) -> SchedulerFeatures:
        """``AllAlpha=false,AllBeta=false``: only the GA gates on."""
        return cls(True, True, False, False, False, False, False, False, False)

    @property
    def binding_conditions(self) -> bool:
        """DRADeviceBindingConditions and DRAResourceClaimDeviceStatus, as Go tests them together."""
        return self.dra_device_binding_conditions and self.dra_resource_claim_device_status


DEFAULT_FEATURES = SchedulerFeatures()

#: the features each allocator implementation supports (``SupportedFeatures``), in Go's order
_STABLE = frozenset({"admin_access", "prioritized_list", "partitionable_devices", "device_taints"})
_INCUBATING = _STABLE | {"device_binding_and_status", "consumable_capacity"}


def allocator_features(fts: SchedulerFeatures) -> dict[str, bool]:
    """AllocatorFeatures(fts): the keyword arguments of the allocator's ``Features``."""
    return {
        "admin_access": fts.dra_admin_access,
        "prioritized_list": fts.dra_prioritized_list,
        "partitionable_devices": fts.dra_partitionable_devices,
        "device_taints": fts.dra_device_taints,
        "device_binding_and_status": fts.binding_conditions,
        "consumable_capacity": fts.dra_consumable_capacity,
    }


def allocator_implementation(features: dict[str, bool]) -> str:
    """Which Go implementation ``structured.NewAllocator`` picks: the first of stable,
    incubating whose supported features cover the enabled ones. kubesched ports incubating
    (``kubesched.runtime.dra.allocator``) and runs it for every feature set. With 1.36's default
    gates Go picks incubating too; with DRAConsumableCapacity and the binding-condition gates off
    (``SchedulerFeatures.ga_only()``, not a default) Go picks stable, which does not sort: it
    visits pools in Go's random map order and a pool's slices in listing order (pools_stable.go),
    so the devices it allocates can differ from kubesched's (pools by driver and name, slices by
    name) and from one Go run to the next. Whether a pod's claims fit a node does not (the search
    is exhaustive), but what is left for later pods can."""
    enabled = {k for k, v in features.items() if v}
    if enabled <= _STABLE:
        return "stable"
    if enabled <= _INCUBATING:
        return "incubating"
    raise ValueError(f"internal error: no allocator available for feature set {features}")
