"""kube-scheduler's ``noderesources`` plugins: NodeResourcesFit and NodeResourcesBalancedAllocation.

Ported from kubernetes/kubernetes ``pkg/scheduler/framework/plugins/noderesources/`` with v1.36.3
semantics and that release's default feature gates:

* ``fit.go`` — PreFilter/Filter/Score/EnqueueExtensions with the queueing hints (pod-level requests
  of a resized pod read from its status under InPlacePodLevelResourcesVerticalScaling);
* ``resource_allocation.go`` — ``calculateNodeAllocatableRequest``: the scorers get
  ``(requested, allocated, allocatable)``; ``least_allocated.go`` / ``most_allocated.go`` /
  ``requested_to_capacity_ratio.go`` (they ignore ``allocated``; ``math.Round`` for the ratio);
* ``balanced_allocation.go`` — v1.36 scores the change the pod makes to the node's balance,
  ``50 + (50 + balance with the pod - balance without it) / 2``, with PreScore Skip for
  best-effort pods;
* ``helper/shape_score.go``; ``apis/config/validation/validation_pluginargs.go`` and
  ``apis/config/v1/defaults.go`` for the args;
* ``k8s.io/component-helpers/resource`` ``PodRequests`` (the SDK's ``pod_requests``).

DRAExtendedResource (beta, on in v1.36): extended resources a DeviceClass serves
(:mod:`kubesched.runtime.dra.deviceclasses`) are left to DynamicResources by Filter on nodes that do
not list them, the DeviceClass event and its hint, SignPod's refusal for such pods (Fit and
BalancedAllocation). Not ported: scoring those resources from ResourceSlice devices
(``draPreScoreState``; it applies only when the scoring strategy names such a resource, which the
default cpu/memory strategy does not); DRANodeAllocatableResources and TopologyAwareWorkloadScheduling
(``ScorePlacement``), alpha and off. The feature gates that matter are in :mod:`.features`.
"""

from .args import (
    NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs,
    RequestedToCapacityRatioParam,
    ResourceSpec,
    ScoringStrategy,
    UtilizationShapePoint,
)
from .balanced_allocation import BalancedAllocation
from .features import Features
from .fit import Fit, InsufficientResource

__all__ = [
    "BalancedAllocation",
    "Features",
    "Fit",
    "InsufficientResource",
    "NodeResourcesBalancedAllocationArgs",
    "NodeResourcesFitArgs",
    "RequestedToCapacityRatioParam",
    "ResourceSpec",
    "ScoringStrategy",
    "UtilizationShapePoint",
]
