"""kube-scheduler's ``noderesources`` plugins: NodeResourcesFit and NodeResourcesBalancedAllocation.

Ported from kubernetes/kubernetes ``pkg/scheduler/framework/plugins/noderesources/`` with v1.34
semantics, reading the stored copies of the search index (the repository's own history):

* ``fit.go`` — the v1.34 revision (``fwk.CycleState``/``fwk.NodeInfo`` framework, the alpha
  DRAExtendedResource hooks, ``InsufficientResource.Unresolvable``, no v1.35 ``SignPod``);
* ``resource_allocation.go`` — the revision whose ``score(ctx, pod, nodeInfo, podRequests)`` matches
  that fit.go; ``least_allocated.go`` / ``most_allocated.go`` / ``requested_to_capacity_ratio.go``
  with the v1.34 ``[]int64`` scorers (``requested * maxUtilization / capacity``, ``math.Round``);
* ``balanced_allocation.go`` — the standard-deviation scorer with PreScore Skip for best-effort pods
  (v1.33+; the v1.35 "improvement with the pod" formula is not v1.34);
* ``helper/shape_score.go``; ``apis/config/validation/validation_pluginargs.go`` and
  ``apis/config/v1/defaults.go`` for the args;
* ``k8s.io/component-helpers/resource`` ``PodRequests`` (with pod-level hugepages, v1.33+).

Not ported: the DRAExtendedResource paths (alpha, off by default in v1.34: extended resources backed
by DeviceClasses, the DeviceClass event and its hint) — the plugins behave as Go does with the gate
off. The feature gates that matter are in :mod:`.features`.
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
