"""The kube-scheduler feature gates the noderesources plugins read (``plugins/feature.Features``).

The defaults are the gates' defaults in Kubernetes v1.36:

* ``InPlacePodVerticalScaling`` — GA, locked on (v1.35).
* ``SidecarContainers`` — GA, locked on (v1.33).
* ``SchedulerQueueingHints`` — GA, locked on (v1.34).
* ``PodLevelResources`` — beta, on (v1.34).
* ``InPlacePodLevelResourcesVerticalScaling`` — beta, on (v1.36): with in-place resize, a pod's
  pod-level requests are read from its status (``status.resources``, ``status.allocatedResources``).
* ``DRAExtendedResource`` — beta, on in v1.36: extended resources a DeviceClass serves are left to
  DynamicResources on nodes that do not list them (see the package docstring).
* ``DRANodeAllocatableResources``, ``TopologyAwareWorkloadScheduling`` — alpha, off.

kube-scheduler's own unit tests build the plugins with ``feature.Features{}`` (every gate off) and
turn single gates on; the plugins take an optional ``features=`` keyword so the tests can do the
same. The runtime builds them with the defaults.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ALL_OFF", "DEFAULT_FEATURES", "Features"]


@dataclass(frozen=True, slots=True)
class Features:
    enable_in_place_pod_vertical_scaling: bool = True
    enable_sidecar_containers: bool = True
    enable_scheduling_queue_hint: bool = True
    enable_pod_level_resources: bool = True
    enable_in_place_pod_level_resources_vertical_scaling: bool = True
    enable_dra_extended_resource: bool = True


#: v1.36 defaults.
DEFAULT_FEATURES = Features()
#: Go's ``feature.Features{}``.
ALL_OFF = Features(False, False, False, False, False, False)
